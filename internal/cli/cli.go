// Package cli implements the fsmgen command: its verbs, flags, output and exit codes.
// Exit codes: 0 clean, 1 findings (or a refused event, or a diff), 2 usage or I/O error.
// Warnings alone exit 0 unless --warnings-as-errors is given.
package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/fsmgen/fsmgen/internal/diag"
	"github.com/fsmgen/fsmgen/internal/ir"
	"github.com/fsmgen/fsmgen/internal/lower"
	"github.com/fsmgen/fsmgen/internal/names"
	"github.com/fsmgen/fsmgen/schema"
)

// Exit codes.
const (
	ExitOK       = 0
	ExitFindings = 1
	ExitUsage    = 2
)

// verb is one subcommand: how it runs and what its help says.
type verb struct {
	name     string
	args     string // the usage after "fsmgen NAME"; a newline starts a continuation line
	summary  string // one line for the command list
	about    string // what the verb does, for its own help
	examples []string
	run      func(c *command, args []string) int
}

// authorVerbs are the spec author's tools (the language server, the preview page), each
// added by its own file's init; the help shows them after migrate, by name.
var authorVerbs []func() verb

// verbs lists the subcommands in the order the help shows them.
func verbs() []verb {
	vs := baseVerbs()
	at := slices.IndexFunc(vs, func(v verb) bool { return v.name == "migrate" }) + 1
	var more []verb
	for _, f := range authorVerbs {
		more = append(more, f())
	}
	slices.SortFunc(more, func(a, b verb) int { return strings.Compare(a.name, b.name) })
	return slices.Insert(vs, at, more...)
}

func baseVerbs() []verb {
	return []verb{
		{
			name:    "generate",
			args:    "[-o DIR | --root DIR] [--check] [--outputs go,tests,mermaid,markdown,dot,svg]\n[--no-tests] [--format text|json|github-actions] [--warnings-as-errors]\n[--max-output-size SIZE] FILE...",
			summary: "write Go code, tests, Mermaid and Markdown for each spec",
			about: `Generate checks each spec and writes its outputs: by default <name>_fsm.go,
<name>_fsm_test.go, <name>.mmd and <name>.md beside the spec (-o DIR for one spec,
--root DIR for several: each goes to DIR/<name>/). Findings are printed on stderr. A spec
with errors makes the run write nothing and exit 1; warnings are printed and the files
are written, unless --warnings-as-errors is given. --check writes nothing and exits 1,
with a diff, when the files on disk differ from what would be written. fsmgen replaces or
removes only files generated from the specs it is given, prints each file it removes, and
refuses a spec whose outputs would exceed --max-output-size (128MB by default) before
building any of them. --outputs ...,svg writes <name>.svg, the DOT diagram drawn by
Graphviz run as WebAssembly, beside the Markdown, which then shows it; it needs the fsmgen
of module github.com/fsmgen/fsmgen/svg (go run github.com/fsmgen/fsmgen/svg/cmd/fsmgen),
which links Graphviz so that this one need not.`,
			examples: []string{
				"fsmgen generate task.fsm.yaml                  # writes task_fsm.go and the rest next to the spec",
				"fsmgen generate --root generated examples/*/*.fsm.yaml",
				"fsmgen generate --check --root generated examples/*/*.fsm.yaml   # CI: exit 1 on drift",
				"fsmgen generate --outputs go task.fsm.yaml     # only the Go code",
				"fsmgen generate --outputs go,tests,mermaid,markdown,svg task.fsm.yaml   # the svg module's fsmgen",
			},
			run: (*command).generate,
		},
		{
			name:    "diagram",
			args:    "[--format mermaid|dot|markdown|svg] FILE",
			summary: "print one machine's diagram: Mermaid, DOT, Markdown or SVG",
			about: `Diagram prints the diagram of one spec on stdout. A spec with errors prints its
findings on stderr and exits 1. --format svg prints the DOT diagram drawn by Graphviz run
as WebAssembly, with nothing installed; it needs the fsmgen of module
github.com/fsmgen/fsmgen/svg (go run github.com/fsmgen/fsmgen/svg/cmd/fsmgen), which
links Graphviz so that this one need not: this one refuses it, saying so.`,
			examples: []string{
				"fsmgen diagram examples/review/review.fsm.yaml",
				"fsmgen diagram --format dot examples/build/build.fsm.yaml | dot -Tsvg > build.svg",
				"fsmgen diagram --format svg examples/build/build.fsm.yaml > build.svg   # the svg module's fsmgen",
			},
			run: (*command).diagram,
		},
		{
			name:    "check",
			args:    "[--format text|json|github-actions] [--warnings-as-errors] FILE...",
			summary: "report every finding in the specs",
			about: `Check reports every finding of each spec, sorted and deduplicated, on stdout: as
path:line:col: error|warning: message, as a JSON array, or as GitHub Actions annotations.
It exits 1 when there is an error; warnings alone exit 0 unless --warnings-as-errors is
given.`,
			examples: []string{
				"fsmgen check examples/*/*.fsm.yaml",
				"fsmgen check --format json examples/review/review.fsm.yaml",
				"fsmgen check --warnings-as-errors --format github-actions specs/*.fsm.yaml   # CI",
			},
			run: (*command).check,
		},
		{
			name:    "sim",
			args:    "FILE [--events a,b,c] [--event NAME]... [--guard g=true] [--guard g@2=false]\n[--as ROLE] [--policy NAME]... [--set field=JSON]... [--fail ACTION]... [--json]",
			summary: "run events through a machine without writing Go",
			about: `Sim runs the events in order through the reference interpreter, from the initial
state, and prints the state after each, or the first refused event with its index
(0-based) and the reason. Without events it prints the initial state. Hook guards not
given are false; --guard g@2=false sets one for the event of that index only. --fail
makes an action marked may_fail fail whenever it runs. --set refuses a value that breaks
the field's bounds (min, max, above, below, min_items, max_items) before any event, as
every transition would; a zero value leaves the field unset; a field a state requires is
refused by the first transition instead, with the {field, message} list. A step that a
counter's limit redirected says so under it. Exit status: 0 all events accepted, 1 an
event was refused, 2 usage or spec error.`,
			examples: []string{
				"fsmgen sim examples/review/review.fsm.yaml --events in_progress,pending_review,completed",
				"fsmgen sim examples/approval/approval.fsm.yaml --as human --events ASSIGNED \\\n    --set 'assignee_ids=[\"ana\"]'",
				"fsmgen sim examples/review/review.fsm.yaml --json          # the initial state, as JSON",
			},
			run: (*command).sim,
		},
		importVerb(),
		diffVerb(),
		inspectVerb(),
		coverVerb(),
		migrateVerb(),
		{
			name:    "schema",
			summary: "print the JSON Schema of the spec language",
			about: `Schema prints the JSON Schema that specs follow, for editors: point a spec at it with
a first line such as # yaml-language-server: $schema=fsm.v1.schema.json`,
			examples: []string{
				"fsmgen schema > fsm.v1.schema.json",
			},
			run: (*command).schema,
		},
		{
			name:    "version",
			summary: "print fsmgen's version and the revision it was built from",
			about: `Version prints the module version and the version-control revision fsmgen was built
from, with +dirty when the working tree had changes. A build without that information
says (devel) and unknown revision.`,
			examples: []string{
				"fsmgen version",
				"fsmgen --version",
			},
			run: (*command).version,
		},
		{
			name:    "help",
			args:    "[COMMAND]",
			summary: "print this help, or a command's flags and examples",
			about:   `Help prints the list of commands, or the help of one command.`,
			examples: []string{
				"fsmgen help sim",
				"fsmgen sim --help",
			},
			run: (*command).help,
		},
	}
}

func findVerb(name string) (verb, bool) {
	for _, v := range verbs() {
		if v.name == name {
			return v, true
		}
	}
	return verb{}, false
}

func verbNames() []string {
	var out []string
	for _, v := range verbs() {
		out = append(out, v.name)
	}
	return out
}

// usageLine is "fsmgen NAME ARGS", continuation lines indented under the first argument,
// each line after the first starting with indent.
func (v verb) usageLine(indent string) string {
	head := "fsmgen " + v.name
	if v.args == "" {
		return head
	}
	pad := strings.Repeat(" ", len(head)+1)
	return head + " " + strings.ReplaceAll(v.args, "\n", "\n"+indent+pad)
}

// usage is the help of fsmgen as a whole.
func usage() string {
	var b strings.Builder
	b.WriteString("fsmgen turns YAML state-machine specs into Go code, tests, diagrams and docs.\n\nUsage:\n")
	for _, v := range verbs() {
		fmt.Fprintf(&b, "  %s\n", v.usageLine("  "))
	}
	b.WriteString("\nCommands:\n")
	for _, v := range verbs() {
		fmt.Fprintf(&b, "  %-9s %s\n", v.name, v.summary)
	}
	b.WriteString(`
Examples:
  fsmgen generate task.fsm.yaml                  # writes task_fsm.go next to the spec
  fsmgen generate --check --root generated examples/*/*.fsm.yaml   # CI: exit 1 on drift
  fsmgen check examples/*/*.fsm.yaml
  fsmgen sim examples/review/review.fsm.yaml --events in_progress,pending_review,completed
  fsmgen diagram --format dot examples/build/build.fsm.yaml | dot -Tsvg > build.svg
  fsmgen import --from xstate machine.json -o machine.fsm.yaml
  fsmgen schema > fsm.v1.schema.json

Run 'fsmgen help COMMAND' or 'fsmgen COMMAND --help' for a command's flags and examples.

Exit status: 0 clean, 1 findings (errors, or warnings with --warnings-as-errors), a diff
or a refused event, 2 usage or I/O error.
`)
	return b.String()
}

// Run runs the command line args (without the program name) and returns the exit code.
func Run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage())
		return ExitUsage
	}
	name := args[0]
	switch name {
	case "-h", "-help", "--help":
		name = "help"
	case "-version", "--version":
		name = "version"
	}
	v, ok := findVerb(name)
	if !ok {
		fmt.Fprintf(stderr, "fsmgen: unknown command %q%s\n\n%s", name, names.DidYouMean(name, verbNames()), usage())
		return ExitUsage
	}
	c := &command{ctx: ctx, stdin: stdin, stdout: stdout, stderr: stderr}
	code := v.run(c, args[1:])
	if c.helped {
		return ExitOK
	}
	return code
}

type command struct {
	ctx    context.Context
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer
	// helped is set when a verb was asked for its help (-h, --help) and printed it.
	helped bool
}

func (c *command) help(args []string) int {
	fs := c.flags("help")
	pos, err := parse(fs, args)
	if err != nil {
		return ExitUsage
	}
	switch len(pos) {
	case 0:
		fmt.Fprint(c.stdout, usage())
		return ExitOK
	case 1:
		v, ok := findVerb(pos[0])
		if !ok {
			return c.usageErr("help: unknown command %q%s (commands: %s)", pos[0],
				names.DidYouMean(pos[0], verbNames()), strings.Join(verbNames(), ", "))
		}
		return v.run(c, []string{"--help"})
	}
	return c.usageErr("help takes one command name")
}

func (c *command) schema(args []string) int {
	fs := c.flags("schema")
	pos, err := parse(fs, args)
	if err != nil {
		return ExitUsage
	}
	if len(pos) > 0 {
		return c.usageErr("schema takes no arguments")
	}
	fmt.Fprint(c.stdout, schema.V1)
	return ExitOK
}

func (c *command) version(args []string) int {
	fs := c.flags("version")
	pos, err := parse(fs, args)
	if err != nil {
		return ExitUsage
	}
	if len(pos) > 0 {
		return c.usageErr("version takes no arguments")
	}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		bi = nil
	}
	fmt.Fprintln(c.stdout, "fsmgen", versionText(bi))
	return ExitOK
}

// versionText is "VERSION, revision REV" (REV+dirty for a modified tree), or
// "VERSION, unknown revision"; VERSION is (devel) when the build does not record one.
func versionText(bi *debug.BuildInfo) string {
	v, rev, dirty := "", "", false
	if bi != nil {
		v = bi.Main.Version
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.modified":
				dirty = s.Value == "true"
			}
		}
	}
	if v == "" {
		v = "(devel)"
	}
	v = escapeUnsafe(v)
	if rev == "" {
		return v + ", unknown revision"
	}
	rev = "revision " + escapeUnsafe(rev)
	if dirty {
		rev += "+dirty"
	}
	return v + ", " + rev
}

// parse parses flags that may come before, between or after positional arguments. When
// the flags ask for help (-h, --help), the verb's help is printed on stdout and the
// command exits 0; other flag errors print the verb's usage line on stderr.
func parse(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if out, ok := fs.Output().(*flagOutput); ok {
				out.c.flagError(out.verb, fs, err)
			}
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

// flagOutput is where a verb's flag set writes its errors (the command's stderr); it
// carries what parse needs to answer -h and --help with the verb's help.
type flagOutput struct {
	io.Writer
	c    *command
	verb string
}

func (c *command) flags(name string) *flag.FlagSet {
	fs := flag.NewFlagSet("fsmgen "+name, flag.ContinueOnError)
	fs.SetOutput(&flagOutput{Writer: c.stderr, c: c, verb: name})
	fs.Usage = func() {} // parse prints the help or the usage line
	return fs
}

// flagError answers a flag error of the verb name: the verb's help on stdout when it was
// asked for, its usage line on stderr (after the flag package's message) otherwise.
func (c *command) flagError(name string, fs *flag.FlagSet, err error) {
	v, ok := findVerb(name)
	if !ok {
		return
	}
	if errors.Is(err, flag.ErrHelp) {
		io.WriteString(c.stdout, verbHelp(v, fs))
		c.helped = true
		return
	}
	fmt.Fprintf(c.stderr, "usage: %s\nRun 'fsmgen help %s' for details.\n", v.usageLine("       "), v.name)
}

// verbHelp is the help of one verb: its usage, what it does, its flags and examples.
func verbHelp(v verb, fs *flag.FlagSet) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Usage:\n  %s\n\n%s\n", v.usageLine("  "), v.about)
	n := 0
	fs.VisitAll(func(*flag.Flag) { n++ })
	if n > 0 {
		b.WriteString("\nFlags:\n")
		fs.VisitAll(func(f *flag.Flag) {
			dashes := "--"
			if len(f.Name) == 1 {
				dashes = "-"
			}
			arg, text := flag.UnquoteUsage(f)
			fmt.Fprintf(&b, "  %s%s", dashes, f.Name)
			if arg != "" {
				fmt.Fprintf(&b, " %s", arg)
			}
			fmt.Fprintf(&b, "\n        %s", text)
			if f.DefValue != "" && f.DefValue != "false" {
				fmt.Fprintf(&b, " (default %s)", f.DefValue)
			}
			b.WriteByte('\n')
		})
	}
	if len(v.examples) > 0 {
		b.WriteString("\nExamples:\n")
		for _, e := range v.examples {
			fmt.Fprintf(&b, "  %s\n", strings.ReplaceAll(e, "\n", "\n  "))
		}
	}
	return b.String()
}

func (c *command) usageErr(format string, args ...any) int {
	fmt.Fprintf(c.stderr, "fsmgen: %s\n", escapeUnsafe(fmt.Sprintf(format, args...)))
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
	strict := fs.Bool("warnings-as-errors", false, "exit 1 on warnings too, not only on errors")
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
			fmt.Fprintf(c.stderr, "fsmgen: %s\n", escapeUnsafe(unwrapPath(err).Error()))
			code = ExitUsage
			continue
		}
		ds := lower.Check(path, data)
		// A path that generate refuses is refused here too, in generate's words, at the
		// start of the file; a name a terminal must not print is printed escaped.
		if err := checkSpecPath(path); err != nil {
			ds.Errorf(diag.Pos{File: path, Line: 1, Col: 1}, "%v", err)
		}
		if shown := escapeUnsafe(path); shown != path {
			for i := range ds {
				ds[i].Pos.File = shown
			}
		}
		all = append(all, ds...)
	}
	all = all.Sorted()
	if err := diag.Write(c.stdout, all, f); err != nil {
		return ExitUsage
	}
	if code == ExitOK && (all.HasErrors() || *strict && len(all) > 0) {
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

// unsafeRune reports whether r must not be printed as itself: what a spec name may not
// hold (names.Unprintable: control and format characters such as bidi overrides and
// zero-width characters, the byte-order mark, line separators, noncharacters). Printed
// raw, these can rewrite a terminal line or make text read differently from what it is.
func unsafeRune(r rune) bool { return names.Unprintable(r) }

// escapeUnsafe writes each unsafe rune of s as a Go escape (\n, \x1b, \u202e), and each
// byte that is not UTF-8 as \xNN; every other character, ASCII or not, is left as it is.
func escapeUnsafe(s string) string {
	clean := true
	for _, r := range s {
		if r == utf8.RuneError || unsafeRune(r) {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case unsafeRune(r):
			q := strconv.QuoteRune(r)
			b.WriteString(q[1 : len(q)-1])
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}
