package cli

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/fsmgen/fsmgen/internal/budget"
	"github.com/fsmgen/fsmgen/internal/diag"
	"github.com/fsmgen/fsmgen/internal/dot"
	"github.com/fsmgen/fsmgen/internal/gogen"
	"github.com/fsmgen/fsmgen/internal/ir"
	"github.com/fsmgen/fsmgen/internal/markdown"
	"github.com/fsmgen/fsmgen/internal/mermaid"
	"github.com/fsmgen/fsmgen/internal/names"
	"github.com/fsmgen/fsmgen/internal/output"
	"github.com/fsmgen/fsmgen/internal/testgen"
)

// outputKinds are what generate can write, in the order they are produced.
var outputKinds = []string{"go", "tests", "mermaid", "markdown", "dot", "svg"}

// defaultOutputs are written unless --outputs says otherwise.
const defaultOutputs = "go,tests,mermaid,markdown"

// emit renders one output of a machine whose spec is at path, with the header's source
// path src; kinds are the outputs written with it (the document shows the SVG picture
// when it is one of them).
func emit(ctx context.Context, kind string, m *ir.Machine, path, src string, kinds []string) (name string, data []byte, err error) {
	name, data, _, err = emitWarn(ctx, kind, m, path, src, kinds)
	return name, data, err
}

// emitWarn is emit, with the warnings of rendering the output (the tests' unreached states).
func emitWarn(ctx context.Context, kind string, m *ir.Machine, path, src string, kinds []string) (name string, data []byte, warnings diag.List, err error) {
	if kind == "tests" {
		data, warnings, err = testgen.Tests(m, src)
		return testgen.Filename(gogen.Base(path)), data, warnings, err
	}
	name, data, err = emitOne(ctx, kind, m, path, src, kinds)
	return name, data, nil, err
}

// emitOne renders one output but the tests.
func emitOne(ctx context.Context, kind string, m *ir.Machine, path, src string, kinds []string) (name string, data []byte, err error) {
	base := gogen.Base(path)
	switch kind {
	case "go":
		data, err = gogen.Generate(m, src)
		return gogen.Filename(path), data, err
	case "mermaid":
		name = base + ".mmd"
		return name, output.Stamp(name, mermaid.File(m), src), nil
	case "markdown":
		name = base + ".md"
		picture := ""
		if slices.Contains(kinds, "svg") {
			picture = base + ".svg"
		}
		data, err = markdown.DocumentImage(m, mermaid.StateDiagram(m), picture)
		return name, output.Stamp(name, data, src), err
	case "dot":
		name = base + ".dot"
		return name, output.Stamp(name, []byte(dot.Graph(m)), src), nil
	case "svg":
		// The DOT diagram laid out by the registered renderer, under the generated header.
		name = base + ".svg"
		pic, err := renderSVG(ctx, []byte(dot.Graph(m)))
		if err != nil {
			return "", nil, fmt.Errorf("%s: %w", path, err)
		}
		data = append([]byte(output.Header(name)+"\n"), pic...)
		return name, output.Stamp(name, data, src), nil
	}
	return "", nil, fmt.Errorf("unknown output %q (want %s)", kind, strings.Join(outputKinds, ", "))
}

func (c *command) generate(args []string) int {
	fs := c.flags("generate")
	out := fs.String("o", "", "output `directory` for a single spec (default: the spec's directory)")
	root := fs.String("root", "", "write each spec into `dir`/<spec name>/ (for several specs)")
	check := fs.Bool("check", false, "write nothing; exit 1 with a diff when the files on disk differ")
	format := fs.String("format", "text", "findings `format`: text, json or github-actions")
	outputs := fs.String("outputs", defaultOutputs, "comma-separated `kinds` to write: "+strings.Join(outputKinds, ", "))
	noTests := fs.Bool("no-tests", false, "leave out the exhaustive tests (<name>_fsm_test.go)")
	strict := fs.Bool("warnings-as-errors", false, "treat warnings as errors: exit 1 and write nothing")
	limit := budget.Default
	fs.Var(&limit, budget.Flag, "refuse a spec whose outputs would exceed this `size` (64MB, 1GB; 0: no limit)")
	files, err := parse(fs, args)
	if err != nil {
		return ExitUsage
	}
	df, err := diag.ParseFormat(*format)
	if err != nil {
		return c.usageErr("%v", err)
	}
	if len(files) == 0 {
		return c.usageErr("generate needs at least one spec file")
	}
	if *out != "" && *root != "" {
		return c.usageErr("-o and --root are exclusive")
	}
	for _, d := range []string{*out, *root} {
		if bad := unprintable(d); bad != "" {
			return c.usageErr("output directory %q holds %s", d, bad)
		}
	}
	if *out != "" && len(files) > 1 {
		return c.usageErr("-o takes one spec (each spec is its own Go package); use --root DIR for several")
	}

	var kinds []string
	for _, k := range strings.Split(*outputs, ",") {
		if k = strings.TrimSpace(k); k == "" || (k == "tests" && *noTests) {
			continue
		}
		if !slices.Contains(outputKinds, k) {
			return c.usageErr("--outputs: unknown kind %q (want %s)", k, strings.Join(outputKinds, ", "))
		}
		kinds = append(kinds, k)
	}
	if len(kinds) == 0 {
		return c.usageErr("--outputs: nothing to write")
	}
	if slices.Contains(kinds, "svg") && svgRender == nil {
		return c.noSVG("--outputs svg", "generate --outputs "+strings.Join(kinds, ",")+" FILE...")
	}

	var plan output.Plan
	var locks []*lockUpdate
	var all diag.List
	failed := false
	for _, path := range files {
		m, ds, err := loadFile(path)
		if err != nil {
			fmt.Fprintf(c.stderr, "fsmgen: %v\n", unwrapPath(err))
			return ExitUsage
		}
		all = append(all, ds...)
		if m == nil {
			failed = true
			continue
		}
		if err := checkSpecPath(path); err != nil {
			fmt.Fprintf(c.stderr, "fsmgen: %v\n", err)
			return ExitUsage
		}
		// What the outputs would weigh, before any is built: a spec past the budget costs
		// its load and nothing more.
		if err := budget.Check(budget.Of(m, kinds), limit); err != nil {
			fmt.Fprintf(c.stderr, "fsmgen: %v\n", err)
			failed = true
			continue
		}
		dir := filepath.Dir(path)
		switch {
		case *out != "":
			dir = *out
		case *root != "":
			dir = filepath.Join(*root, gogen.Base(path))
		}
		src, err := relSource(dir, path)
		if err != nil {
			fmt.Fprintf(c.stderr, "fsmgen: %v\n", err)
			return ExitUsage
		}
		for _, kind := range kinds {
			name, data, warnings, err := emitWarn(c.ctx, kind, m, path, src, kinds)
			all = append(all, warnings...)
			if err != nil {
				fmt.Fprintf(c.stderr, "fsmgen: %v\n", err)
				failed = true
				continue
			}
			plan.Files = append(plan.Files, output.File{Path: filepath.Join(dir, name), Data: data, Spec: path})
		}
		plan.Dirs = append(plan.Dirs, dir)
		if slices.Contains(kinds, "go") {
			// The code reads instances of this version from now on: the lock keeps it.
			u, err := lockFor(path, m)
			if err != nil {
				fmt.Fprintf(c.stderr, "fsmgen: %v\n", err)
				failed = true
				continue
			}
			locks = append(locks, u)
		}
	}
	if *root != "" {
		plan.Roots = append(plan.Roots, *root)
	}
	all = all.Sorted()
	if len(all) > 0 {
		diag.Write(c.stderr, all, df)
	}
	if failed || *strict && len(all) > 0 {
		fmt.Fprintln(c.stderr, "fsmgen: nothing written")
		return ExitFindings
	}
	if *check {
		changes, err := output.Diff(plan)
		if err != nil {
			fmt.Fprintf(c.stderr, "fsmgen: %v\n", err)
			return ExitUsage
		}
		for _, ch := range changes {
			switch ch.Kind {
			case output.Update:
				fmt.Fprint(c.stdout, ch.Diff)
			case output.Create:
				fmt.Fprintf(c.stdout, "missing: %s\n", ch.Path)
			case output.Remove:
				fmt.Fprintf(c.stdout, "stale: %s (%s no longer produces it)\n", ch.Path, ch.Source)
			case output.Orphan:
				fmt.Fprintf(c.stdout, "stale: %s (generated from %s, which no longer exists)\n", ch.Path, ch.Source)
			case output.Interrupted:
				fmt.Fprintf(c.stdout, "interrupted: %s (a run was killed while writing; the next generate finishes it)\n", ch.Path)
			}
		}
		stale := len(changes)
		for _, u := range locks {
			if u.stale() {
				fmt.Fprintln(c.stdout, u.why())
				stale++
			}
		}
		if stale > 0 {
			fmt.Fprintf(c.stderr, "fsmgen: %d generated file(s) out of date; run fsmgen generate\n", stale)
			return ExitFindings
		}
		return ExitOK
	}
	changes, err := output.Write(plan)
	if err != nil {
		fmt.Fprintf(c.stderr, "fsmgen: %v\n", err)
		return ExitUsage
	}
	// The lock last: code that reads a version is on disk before the lock records it.
	for _, u := range locks {
		if !u.stale() {
			continue
		}
		if err := u.write(); err != nil {
			fmt.Fprintf(c.stderr, "fsmgen: %v\n", err)
			return ExitUsage
		}
	}
	for _, ch := range changes {
		switch ch.Kind {
		case output.Remove:
			fmt.Fprintf(c.stdout, "removed %s (%s no longer produces it)\n", ch.Path, ch.Source)
		case output.Orphan:
			fmt.Fprintf(c.stderr, "fsmgen: kept %s: it was generated from %s, which no longer exists; delete it if it is not needed\n", ch.Path, ch.Source)
		}
	}
	return ExitOK
}

// checkSpecPath refuses spec paths whose output names would be ignored by Go, hidden, or
// outside the output directory, and paths no header line can record.
func checkSpecPath(path string) error {
	if bad := unprintable(path); bad != "" {
		return fmt.Errorf("spec path %q holds %s; rename the file", path, bad)
	}
	base := gogen.Base(path)
	switch {
	case base == "":
		return fmt.Errorf("spec %s has no name before its extension, so its files would be named %q (which Go ignores); name it <name>.fsm.yaml", path, gogen.Filename(path))
	case base == "." || base == "..":
		return fmt.Errorf("spec %s is named %q, which names a directory, not files; name it <name>.fsm.yaml", path, base)
	case strings.HasPrefix(base, ".") || strings.HasPrefix(base, "_"):
		return fmt.Errorf("spec %s would generate %s, which Go ignores (a file name starting with %q); rename the spec", path, gogen.Filename(path), base[:1])
	case strings.ContainsAny(base, `/\:`):
		return fmt.Errorf("spec %s: its name %q holds a path separator", path, base)
	}
	return nil
}

// unprintable describes the first character of s that a file name should not hold (a
// control, format or line-separator character), or returns "".
func unprintable(s string) string {
	for _, r := range s {
		if r == utf8.RuneError || names.Unprintable(r) {
			return fmt.Sprintf("the unprintable character U+%04X", r)
		}
	}
	return ""
}

// relSource is the spec path as the generated header records it: relative to the output
// directory, with forward slashes, so that it is the same on every machine.
func relSource(dir, spec string) (string, error) {
	ad, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	as, err := filepath.Abs(spec)
	if err != nil {
		return "", err
	}
	rel, err := filepath.Rel(ad, as)
	if err != nil {
		return "", err
	}
	return filepath.ToSlash(rel), nil
}

// diagram prints one machine's diagram.
func (c *command) diagram(args []string) int {
	fs := c.flags("diagram")
	format := fs.String("format", "mermaid", "`format`: mermaid, dot, markdown or svg")
	files, err := parse(fs, args)
	if err != nil {
		return ExitUsage
	}
	if len(files) != 1 {
		return c.usageErr("diagram needs exactly one spec file")
	}
	kind := *format
	if kind != "mermaid" && kind != "dot" && kind != "markdown" && kind != "svg" {
		return c.usageErr("--format: unknown format %q (want mermaid, dot, markdown or svg)", kind)
	}
	if kind == "svg" && svgRender == nil {
		return c.noSVG("--format svg", "diagram --format svg FILE")
	}
	m, ds, err := loadFile(files[0])
	if err != nil {
		return c.usageErr("%v", unwrapPath(err))
	}
	if ds.HasErrors() {
		diag.Write(c.stderr, ds, diag.FormatText)
		return ExitFindings
	}
	_, data, err := emit(c.ctx, kind, m, files[0], files[0], nil)
	if err != nil {
		fmt.Fprintf(c.stderr, "fsmgen: %v\n", err)
		return ExitFindings
	}
	c.stdout.Write(data)
	return ExitOK
}
