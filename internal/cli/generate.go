package cli

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/fsmgen/fsmgen/internal/diag"
	"github.com/fsmgen/fsmgen/internal/gogen"
	"github.com/fsmgen/fsmgen/internal/output"
	"github.com/fsmgen/fsmgen/internal/testgen"
)

func (c *command) generate(args []string) int {
	fs := c.flags("generate")
	out := fs.String("o", "", "output `directory` for a single spec (default: the spec's directory)")
	root := fs.String("root", "", "write each spec into `dir`/<spec name>/ (for several specs)")
	check := fs.Bool("check", false, "write nothing; exit 1 with a diff when the files on disk differ")
	format := fs.String("format", "text", "findings `format`: text, json or github-actions")
	noTests := fs.Bool("no-tests", false, "do not generate the exhaustive tests (<name>_fsm_test.go)")
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
	if *out != "" && len(files) > 1 {
		return c.usageErr("-o takes one spec (each spec is its own Go package); use --root DIR for several")
	}

	var plan output.Plan
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
		code, err := gogen.Generate(m, src)
		if err != nil {
			fmt.Fprintf(c.stderr, "fsmgen: %v\n", err)
			failed = true
			continue
		}
		plan.Files = append(plan.Files, output.File{Path: filepath.Join(dir, gogen.Filename(path)), Data: code})
		if !*noTests {
			tests, err := testgen.Generate(m, src)
			if err != nil {
				fmt.Fprintf(c.stderr, "fsmgen: %v\n", err)
				failed = true
				continue
			}
			plan.Files = append(plan.Files, output.File{Path: filepath.Join(dir, testgen.Filename(gogen.Base(path))), Data: tests})
		}
		plan.Dirs = append(plan.Dirs, dir)
	}
	if *root != "" {
		plan.Roots = append(plan.Roots, *root)
	}
	all = all.Sorted()
	if len(all) > 0 {
		diag.Write(c.stderr, all, df)
	}
	if failed {
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
			case "update":
				fmt.Fprint(c.stdout, ch.Diff)
			case "create":
				fmt.Fprintf(c.stdout, "missing: %s\n", ch.Path)
			case "remove":
				fmt.Fprintf(c.stdout, "stale: %s (no spec produces it)\n", ch.Path)
			}
		}
		if len(changes) > 0 {
			fmt.Fprintf(c.stderr, "fsmgen: %d generated file(s) out of date; run fsmgen generate\n", len(changes))
			return ExitFindings
		}
		return ExitOK
	}
	if _, err := output.Write(plan); err != nil {
		fmt.Fprintf(c.stderr, "fsmgen: %v\n", err)
		return ExitUsage
	}
	return ExitOK
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

var _ = os.Stat
