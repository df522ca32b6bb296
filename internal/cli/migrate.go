package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/fsmgen/fsmgen/internal/diag"
	"github.com/fsmgen/fsmgen/internal/gogen"
)

// storeImports are what a migrator program imports and calls to open each kind of store.
var storeImports = map[string]string{
	"sqlite":   "github.com/fsmgen/fsmgen/store/sqlite",
	"postgres": "github.com/fsmgen/fsmgen/store/postgres",
}

func migrateVerb() verb {
	return verb{
		name:    "migrate",
		args:    "--store DSN [--dry-run] [--batch N] FILE",
		summary: "move the instances stored under older versions of a spec to the current one",
		about: `Migrate moves every instance of the machine of FILE stored in the store DSN names under
an older version of the spec (one its version lock records, or a migration names) to the
current version, a batch at a time: each in a commit of its own, its deadlines armed
again, so that a run stopped at any point leaves each instance under one version and a
second run finishes the job; any number of runs may go at once. --dry-run changes
nothing and reports what would move. It prints the instances before, by older version and
state, and after, by state, and each instance that cannot move with why.

It runs the machine's own generated code: it generates it from FILE into a directory of
the Go module it is run in (which must require the store's module, as a program that
uses the store does), builds it with the go command, runs it, and removes it. The fsmgen
of a store's module has the command (go run github.com/fsmgen/fsmgen/store/sqlite/cmd/fsmgen).`,
		examples: []string{
			"fsmgen migrate --store tickets.db --dry-run ticket.fsm.yaml",
			"fsmgen migrate --store 'postgres://app@db/tickets' --batch 500 ticket.fsm.yaml",
		},
		run: (*command).migrate,
	}
}

// migrateReport is what the migrator program prints, and migrate reads.
type migrateReport struct {
	Checked, Current, Moved int
	Before                  map[string]map[string]int
	After                   map[string]int
	Refused                 []struct{ ID, Err string }
	Err                     string
}

func (c *command) migrate(args []string) int {
	fs := c.flags("migrate")
	dsn := fs.String("store", "", "the store's `DSN`: an SQLite file, or a postgres:// URL")
	dry := fs.Bool("dry-run", false, "change nothing; report what would move")
	batch := fs.Int("batch", 100, "instances read at a `time`")
	files, err := parse(fs, args)
	if err != nil {
		return ExitUsage
	}
	if len(files) != 1 || *dsn == "" {
		return c.usageErr("migrate needs --store DSN and one spec file")
	}
	o, ok := storeFor(*dsn)
	imp := storeImports[o.Name]
	if !ok || imp == "" {
		return c.usageErr("this fsmgen opens no store for %q; the fsmgen of a store's module does: go run github.com/fsmgen/fsmgen/store/sqlite/cmd/fsmgen (SQLite files) or github.com/fsmgen/fsmgen/store/postgres/cmd/fsmgen (postgres:// DSNs)", *dsn)
	}
	m, ds, err := loadFile(files[0])
	if err != nil {
		fmt.Fprintf(c.stderr, "fsmgen: %v\n", unwrapPath(err))
		return ExitUsage
	}
	if m == nil {
		diag.Write(c.stderr, ds.Sorted(), diag.FormatText)
		return ExitFindings
	}
	if len(m.Migrations) == 0 {
		fmt.Fprintf(c.stderr, "fsmgen: %s loads no older version (its version lock records none, and it declares no migration): nothing to migrate\n", files[0])
		return ExitOK
	}
	code, err := gogen.Generate(m, filepath.Base(files[0]))
	if err != nil {
		fmt.Fprintf(c.stderr, "fsmgen: %v\n", err)
		return ExitUsage
	}
	rep, out, err := c.runMigrator(code, imp, *dsn, *dry, *batch)
	if err != nil {
		fmt.Fprintf(c.stderr, "fsmgen: %v\n%s", err, out)
		return ExitUsage
	}
	verb := "moved"
	if *dry {
		verb = "would move"
	}
	for _, spec := range sortedKeys(rep.Before) {
		states := rep.Before[spec]
		var parts []string
		for _, s := range sortedKeys(states) {
			parts = append(parts, fmt.Sprintf("%s %d", s, states[s]))
		}
		fmt.Fprintf(c.stdout, "before: under %s: %s\n", spec, strings.Join(parts, ", "))
	}
	var after []string
	for _, s := range sortedKeys(rep.After) {
		after = append(after, fmt.Sprintf("%s %d", s, rep.After[s]))
	}
	if len(after) > 0 {
		fmt.Fprintf(c.stdout, "after: %s\n", strings.Join(after, ", "))
	}
	for _, r := range rep.Refused {
		fmt.Fprintf(c.stdout, "refused: %s: %s\n", r.ID, r.Err)
	}
	fmt.Fprintf(c.stdout, "%s: checked %d, already current %d, %s %d, refused %d\n", m.Package+"."+m.Name, rep.Checked, rep.Current, verb, rep.Moved, len(rep.Refused))
	if rep.Err != "" {
		fmt.Fprintf(c.stderr, "fsmgen: migrate stopped: %s (run it again to go on)\n", rep.Err)
		return ExitFindings
	}
	if len(rep.Refused) > 0 {
		return ExitFindings
	}
	return ExitOK
}

// runMigrator writes the machine's code and a program that migrates its store into a
// directory of the module the command runs in, runs it, removes it, and returns its report.
func (c *command) runMigrator(code []byte, storeImport, dsn string, dry bool, batch int) (*migrateReport, []byte, error) {
	gomod, err := exec.Command("go", "env", "GOMOD").Output()
	mod := strings.TrimSpace(string(gomod))
	if err != nil || mod == "" || mod == os.DevNull {
		return nil, nil, fmt.Errorf("migrate runs in the Go module of the program that uses the store (go env GOMOD names none here)")
	}
	data, err := os.ReadFile(mod)
	if err != nil {
		return nil, nil, err
	}
	mp := regexp.MustCompile(`(?m)^module\s+(\S+)`).FindSubmatch(data)
	if mp == nil {
		return nil, nil, fmt.Errorf("%s names no module", mod)
	}
	pkg := regexp.MustCompile(`(?m)^package (\w+)`).FindSubmatch(code)
	T := regexp.MustCompile(`(?m)^func (Migrate\w+)\(`).FindSubmatch(code)
	if pkg == nil || T == nil {
		return nil, nil, fmt.Errorf("the generated code has no migrate function")
	}
	nop := regexp.MustCompile(`(?m)^type (\w+NopHooks) struct`).FindSubmatch(code)
	hooks := ""
	if nop != nil {
		hooks = "m." + string(nop[1]) + "{}, "
	}
	dir, err := os.MkdirTemp(filepath.Dir(mod), "fsmgen_migrate_")
	if err != nil {
		return nil, nil, err
	}
	defer os.RemoveAll(dir)
	if err := os.MkdirAll(filepath.Join(dir, "machine"), 0o755); err != nil {
		return nil, nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, "machine", "machine_fsm.go"), code, 0o644); err != nil {
		return nil, nil, err
	}
	rel, err := filepath.Rel(filepath.Dir(mod), dir)
	if err != nil {
		return nil, nil, err
	}
	importPath := string(mp[1]) + "/" + filepath.ToSlash(rel) + "/machine"
	main := fmt.Sprintf(`package main

import (
	"context"
	"encoding/json"
	"os"

	"github.com/fsmgen/fsmgen/fsmrt"
	store %q
	m %q
)

func main() {
	ctx := context.Background()
	out := json.NewEncoder(os.Stdout)
	s, err := store.Open(ctx, os.Args[1])
	if err != nil {
		out.Encode(map[string]string{"Err": err.Error()})
		return
	}
	defer s.Close()
	r, err := m.%s(ctx, s, %sfsmrt.MigrateOptions{Batch: %d, DryRun: %t})
	rep := map[string]any{"Checked": r.Checked, "Current": r.Current, "Moved": r.Moved, "Before": r.Before, "After": r.After}
	var refused []map[string]string
	for _, x := range r.Refused {
		refused = append(refused, map[string]string{"ID": x.ID, "Err": x.Err.Error()})
	}
	rep["Refused"] = refused
	if err != nil {
		rep["Err"] = err.Error()
	}
	out.Encode(rep)
}
`, storeImport, importPath, T[1], hooks, batch, dry)
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(main), 0o644); err != nil {
		return nil, nil, err
	}
	cmd := exec.Command("go", "run", "./"+filepath.ToSlash(rel), dsn)
	cmd.Dir = filepath.Dir(mod)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, stderr.Bytes(), fmt.Errorf("running the migrator: %v", err)
	}
	var rep migrateReport
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
		return nil, append(stdout.Bytes(), stderr.Bytes()...), fmt.Errorf("the migrator's report: %v", err)
	}
	return &rep, nil, nil
}

// sortedKeys returns the keys of m in order.
func sortedKeys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
