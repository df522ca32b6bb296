// Package cli implements the fsmgen command: its verbs, flags, output and exit codes.
// Exit codes: 0 clean, 1 findings (or a refused event, or a diff), 2 usage or I/O error.
package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strings"

	"github.com/fsmgen/fsmgen/internal/diag"
	"github.com/fsmgen/fsmgen/internal/ir"
	"github.com/fsmgen/fsmgen/internal/lower"
	"github.com/fsmgen/fsmgen/schema"
)

// Exit codes.
const (
	ExitOK       = 0
	ExitFindings = 1
	ExitUsage    = 2
)

const usage = `fsmgen turns YAML state-machine specs into Go code, tests, diagrams and docs.

Usage:
  fsmgen generate [-o DIR | --root DIR] [--check] [--outputs go,tests,mermaid,markdown,dot] FILE...
  fsmgen diagram [--format mermaid|dot|markdown] FILE
  fsmgen check [--format text|json|github-actions] FILE...
  fsmgen sim FILE --events a,b,c [--guard g=true] [--guard g@2=false] [--as ROLE]
             [--policy NAME] [--set field=JSON] [--json]
  fsmgen schema
  fsmgen version

Examples:
  fsmgen generate task.fsm.yaml                  # writes task_fsm.go next to the spec
  fsmgen generate --root generated examples/*/*.fsm.yaml
  fsmgen generate --check --root generated examples/*/*.fsm.yaml   # CI: exit 1 on drift
  fsmgen generate --outputs go task.fsm.yaml     # only the Go code
  fsmgen diagram --format dot examples/build/build.fsm.yaml | dot -Tsvg > build.svg
  fsmgen check examples/*/*.fsm.yaml
  fsmgen check --format json examples/review/review.fsm.yaml
  fsmgen sim examples/review/review.fsm.yaml --events in_progress,pending_review,completed
  fsmgen sim examples/approval/approval.fsm.yaml --as human --events ASSIGNED \
      --set 'assignee_ids=["ana"]'
  fsmgen schema > fsm.v1.schema.json

Exit status: 0 clean, 1 findings or a refused event, 2 usage or I/O error.
`

// Run runs the command line args (without the program name) and returns the exit code.
func Run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return ExitUsage
	}
	c := &command{ctx: ctx, stdin: stdin, stdout: stdout, stderr: stderr}
	switch args[0] {
	case "check":
		return c.check(args[1:])
	case "sim":
		return c.sim(args[1:])
	case "generate":
		return c.generate(args[1:])
	case "diagram":
		return c.diagram(args[1:])
	case "schema":
		fmt.Fprint(stdout, schema.V1)
		return ExitOK
	case "version":
		fmt.Fprintln(stdout, "fsmgen", version())
		return ExitOK
	case "help", "-h", "-help", "--help":
		fmt.Fprint(stdout, usage)
		return ExitOK
	}
	fmt.Fprintf(stderr, "fsmgen: unknown command %q\n\n%s", args[0], usage)
	return ExitUsage
}

type command struct {
	ctx    context.Context
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer
}

func version() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
		return bi.Main.Version
	}
	return "(devel)"
}

// parse parses flags that may come before, between or after positional arguments.
func parse(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		args = fs.Args()
		if len(args) == 0 {
			return pos, nil
		}
		if args[0] == "--" {
			return append(pos, args[1:]...), nil
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
}

func (c *command) flags(name string) *flag.FlagSet {
	fs := flag.NewFlagSet("fsmgen "+name, flag.ContinueOnError)
	fs.SetOutput(c.stderr)
	return fs
}

func (c *command) usageErr(format string, args ...any) int {
	fmt.Fprintf(c.stderr, "fsmgen: "+format+"\n", args...)
	return ExitUsage
}

// loadFile reads and lowers one spec. I/O errors come back as err.
func loadFile(path string) (*ir.Machine, diag.List, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, err
	}
	m, ds := lower.Load(path, data)
	return m, ds, nil
}

func (c *command) check(args []string) int {
	fs := c.flags("check")
	format := fs.String("format", "text", "output `format`: text, json or github-actions")
	files, err := parse(fs, args)
	if err != nil {
		return ExitUsage
	}
	f, err := diag.ParseFormat(*format)
	if err != nil {
		return c.usageErr("%v", err)
	}
	if len(files) == 0 {
		return c.usageErr("check needs at least one spec file")
	}
	var all diag.List
	code := ExitOK
	for _, path := range files {
		data, err := os.ReadFile(path)
		if err != nil {
			fmt.Fprintf(c.stderr, "fsmgen: %v\n", unwrapPath(err))
			code = ExitUsage
			continue
		}
		all = append(all, lower.Check(path, data)...)
	}
	all = all.Sorted()
	if err := diag.Write(c.stdout, all, f); err != nil {
		return ExitUsage
	}
	if code == ExitOK && len(all) > 0 {
		code = ExitFindings
	}
	return code
}

func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return fmt.Errorf("%s: %v", pe.Path, pe.Err)
	}
	return err
}

// listFlag collects a repeatable flag.
type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ",") }
func (l *listFlag) Set(s string) error { *l = append(*l, s); return nil }
