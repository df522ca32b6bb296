package cli

import (
	"fmt"
	"runtime/debug"

	"github.com/fsmgen/fsmgen/internal/diag"
	"github.com/fsmgen/fsmgen/internal/lower"
	"github.com/fsmgen/fsmgen/internal/lsp"
)

func init() { authorVerbs = append(authorVerbs, lspVerb) }

func lspVerb() verb {
	return verb{
		name:    "lsp",
		args:    "[--stdio]",
		summary: "serve the Language Server Protocol for *.fsm.yaml specs on stdin and stdout",
		about: `Lsp is a language server (package internal/lsp) for an editor to start: it speaks the
Language Server Protocol on standard input and output (--stdio, which some clients pass,
is the default and only transport). As a spec is edited it reports every finding fsmgen
check reports, at the same positions, with the same messages (checked 50 ms after the last
of a run of changes); it completes the names valid at the cursor and the schema's keys,
goes to the definition and the references of a name (into the older specs the spec
migrates from), renames a name across the spec (with the migration entry that keeps
stored instances loading; refused when the check of the renamed spec finds a new error: a
name taken), hovers (a name's kind and doc, the transitions into and out of a state, a
guard's uses, a key's description), outlines the spec and fixes: the did-you-mean fix,
declaring a missing event, guard or action, adding the migrations entry the checker
proposes. The README's "Editor support" says how to start it from VS Code, Neovim and
Helix; docs/lsp.md says more. It runs until the editor says exit; 2 if the connection
breaks.`,
		examples: []string{
			"fsmgen lsp",
			"go tool fsmgen lsp --stdio",
		},
		run: (*command).lsp,
	}
}

func (c *command) lsp(args []string) int {
	fs := c.flags("lsp")
	fs.Bool("stdio", true, "speak the protocol on standard input and output (the only transport)")
	pos, err := parse(fs, args)
	if err != nil {
		return ExitUsage
	}
	if len(pos) > 0 {
		return c.usageErr("lsp takes no arguments: the editor opens the specs")
	}
	debug.SetGCPercent(lsp.GCPercent) // a process of its own: see GCPercent
	bi, _ := debug.ReadBuildInfo()
	srv, err := lsp.New(lsp.Options{Check: checkAsCLI, Log: c.stderr, Version: versionText(bi)})
	if err != nil {
		return c.usageErr("%v", err)
	}
	if err := srv.Serve(c.ctx, c.stdin, c.stdout); err != nil {
		fmt.Fprintf(c.stderr, "fsmgen: lsp: %v\n", err)
		return ExitUsage
	}
	return ExitOK
}

// checkAsCLI returns the findings fsmgen check reports for a spec: the checker's, and the
// refusal of a path that generate refuses.
func checkAsCLI(path string, data []byte) diag.List {
	ds := lower.Check(path, data)
	if err := checkSpecPath(path); err != nil {
		ds.Errorf(diag.Pos{File: path, Line: 1, Col: 1}, "%v", err)
	}
	return ds.Sorted()
}
