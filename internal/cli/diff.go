package cli

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/fsmgen/fsmgen/internal/diag"
	"github.com/fsmgen/fsmgen/internal/ir"
	"github.com/fsmgen/fsmgen/internal/lower"
	"github.com/fsmgen/fsmgen/internal/specdiff"
)

func diffVerb() verb {
	return verb{
		name:    "diff",
		args:    "[--format text|json|github-actions] [--fail-on breaking|behaviour|none] [--store DSN]\n(OLD NEW | --base REV FILE)",
		summary: "classify every change between two versions of a spec",
		about: `Diff compares two versions of a spec, OLD and NEW, or FILE with itself at the git
revision REV (--base), and prints every change with its position (in NEW, or in OLD for
what NEW removes, with where it was in OLD), classified by what it does to machines stored
and running under OLD: compatible (a state, event, transition or field added; docs),
behaviour (a target, guards and their order, roles, actions, a limit, a timeout, the
initial state changed) or breaking (a state, event, role, counter or context field
removed or renamed, a field's type changed, a payload changed incompatibly, the machine
renamed), then the verdict, the highest class. A statechart's states are compared as its
configurations, the states its instances are stored in. The fingerprint changing is
breaking unless NEW declares a migration from OLD, which then says what becomes of the
states, events, counters and fields it renames or drops. With --store, each change to a
state or a counter says how many instances stored in DSN it concerns (the fsmgen of a
store's module opens it: store/postgres/cmd/fsmgen for postgres:// DSNs,
store/sqlite/cmd/fsmgen for SQLite files). It exits 1 when a change reaches
--fail-on (breaking by default; none never fails), 2 on a usage error, an unreadable
file or a spec with errors.`,
		examples: []string{
			"fsmgen diff v1/task.fsm.yaml task.fsm.yaml",
			"fsmgen diff --base origin/main --fail-on breaking task.fsm.yaml   # CI gate",
			"fsmgen diff --format github-actions --base HEAD~1 task.fsm.yaml",
			"fsmgen diff --store postgres://app@db/app v1/task.fsm.yaml task.fsm.yaml",
		},
		run: (*command).diff,
	}
}

func (c *command) diff(args []string) int {
	fs := c.flags("diff")
	format := fs.String("format", "text", "output `format`: text, json or github-actions")
	failOn := fs.String("fail-on", "breaking", "exit 1 when a change is at least this `class`: breaking, behaviour or none")
	base := fs.String("base", "", "compare FILE with itself at git revision `REV`")
	storeDSN := fs.String("store", "", "count the instances each change concerns in the store `DSN`")
	files, err := parse(fs, args)
	if err != nil {
		return ExitUsage
	}
	f, err := diag.ParseFormat(*format)
	if err != nil {
		return c.usageErr("%v", err)
	}
	fail, never := specdiff.Breaking, *failOn == "none"
	if !never {
		if fail, err = specdiff.ParseClass(*failOn); err != nil || fail == specdiff.Compatible {
			return c.usageErr("--fail-on %q: want breaking, behaviour or none", *failOn)
		}
	}
	var oldPath, newPath string
	var oldData, newData []byte
	switch {
	case *base != "" && len(files) == 1:
		newPath = files[0]
		if newData, err = os.ReadFile(newPath); err != nil {
			return c.usageErr("%v", unwrapPath(err))
		}
		if oldData, err = atRevision(*base, newPath); err != nil {
			return c.usageErr("%v", err)
		}
		oldPath = *base + ":" + filepath.ToSlash(newPath)
	case *base == "" && len(files) == 2:
		oldPath, newPath = files[0], files[1]
		if oldData, err = os.ReadFile(oldPath); err != nil {
			return c.usageErr("%v", unwrapPath(err))
		}
		if newData, err = os.ReadFile(newPath); err != nil {
			return c.usageErr("%v", unwrapPath(err))
		}
	default:
		return c.usageErr("diff needs OLD and NEW, or --base REV and one FILE")
	}
	old, ok := c.loadForDiff(oldPath, oldData, lower.LoadOlder)
	neu, ok2 := c.loadForDiff(newPath, newData, lower.Load)
	if !ok || !ok2 {
		return ExitUsage
	}
	changes := specdiff.Compare(old, neu)
	if *storeDSN != "" {
		if err := c.countStored(*storeDSN, old, changes); err != nil {
			return c.usageErr("--store: %v", err)
		}
	}
	if *base != "" && f == diag.FormatGitHubActions {
		// GitHub annotates files of the checkout: what the revision alone holds (what the
		// change removes) is annotated on the spec's first line, with where it was.
		for i, ch := range changes {
			if ch.Pos.File == oldPath {
				changes[i].Message += " (" + ch.Pos.String() + ")"
				changes[i].Pos = diag.Pos{File: newPath, Line: 1, Col: 1}
			}
		}
	}
	if err := specdiff.Write(c.stdout, changes, f); err != nil {
		return ExitUsage
	}
	if p := specdiff.Proposal(old, changes); p != "" && f == diag.FormatText {
		fmt.Fprint(c.stdout, p)
	}
	if !never && len(changes) > 0 && specdiff.Verdict(changes) >= fail {
		return ExitFindings
	}
	return ExitOK
}

// countStored counts, in the store dsn names, the instances each change concerns.
func (c *command) countStored(dsn string, old *ir.Machine, changes []specdiff.Change) error {
	o, ok := storeFor(dsn)
	if !ok {
		return fmt.Errorf("this fsmgen opens no store; the fsmgen of a store's module does: go run github.com/fsmgen/fsmgen/store/postgres/cmd/fsmgen (postgres:// DSNs) or github.com/fsmgen/fsmgen/store/sqlite/cmd/fsmgen (SQLite files)")
	}
	store, closeStore, err := o.Open(c.ctx, dsn)
	if err != nil {
		return fmt.Errorf("%s: %w", o.Name, err)
	}
	defer closeStore()
	return specdiff.Count(c.ctx, old, changes, store.Find)
}

// loadForDiff lowers one version of the spec; a version with errors cannot be compared,
// and its findings go to stderr.
func (c *command) loadForDiff(path string, data []byte, load func(string, []byte) (*ir.Machine, diag.List)) (*ir.Machine, bool) {
	m, ds := load(path, data)
	if ds.HasErrors() {
		diag.Write(c.stderr, ds.Sorted(), diag.FormatText)
		fmt.Fprintf(c.stderr, "fsmgen: %s has errors: fix them to compare it\n", escapeUnsafe(path))
		return nil, false
	}
	return m, true
}

// atRevision returns the content of path at git revision rev, run in path's directory.
func atRevision(rev, path string) ([]byte, error) {
	if strings.HasPrefix(rev, "-") {
		return nil, fmt.Errorf("--base %q: a revision does not start with -", rev)
	}
	dir, name := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	cmd := exec.Command("git", "-C", dir, "show", rev+":./"+name)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		msg := strings.TrimSpace(stderr.String())
		if msg == "" {
			msg = err.Error()
		}
		return nil, fmt.Errorf("%s at %s: %s", path, rev, msg)
	}
	return out, nil
}
