package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/fsmgen/fsmgen/internal/cover"
	"github.com/fsmgen/fsmgen/internal/diag"
)

// coverDirEnv is where a build with the tag fsmcover writes its records (fsmrt.CoverDirEnv,
// which only that build declares).
const coverDirEnv = "FSMGEN_COVERDIR"

func coverVerb() verb {
	return verb{
		name:    "cover",
		args:    "[--dir DIR] [--format text|json|github-actions] [--fail-under PCT]\n[--markdown FILE] [--diagram mermaid|dot -o DIR] FILE...",
		summary: "report what the application's own tests never exercised of each machine",
		about: `Cover reads what the application's tests fired, recorded by a test run built with the
tag fsmcover (go test -tags fsmcover, with FSMGEN_COVERDIR naming a directory; several
runs and packages add up), and reports for each spec what they never exercised: states (a
statechart's configurations), transitions, guard outcomes (each guard holding and
failing), refusals (each kind a state can refuse with) and timeouts (each level and each
expiry), each at its position in the spec, with totals. Records written by code of
another version of a spec are not counted (the report says how many). --fail-under PCT
exits 1 when a spec's total is below PCT percent; --markdown writes a report a CI job can
publish; --diagram writes each spec's diagram with what was never exercised marked.`,
		examples: []string{
			"FSMGEN_COVERDIR=$PWD/.cover go test -tags fsmcover ./...",
			"fsmgen cover --dir .cover examples/*/*.fsm.yaml",
			"fsmgen cover --dir .cover --fail-under 80 --format github-actions task.fsm.yaml   # CI",
			"fsmgen cover --dir .cover --markdown cover.md --diagram mermaid -o cover task.fsm.yaml",
		},
		run: (*command).cover,
	}
}

func (c *command) cover(args []string) int {
	fs := c.flags("cover")
	dir := fs.String("dir", os.Getenv(coverDirEnv), "the `directory` of the coverage records (default $"+coverDirEnv+")")
	format := fs.String("format", "text", "output `format`: text, json or github-actions")
	failUnder := fs.String("fail-under", "", "exit 1 when a spec's coverage is below `PCT` percent")
	markdown := fs.String("markdown", "", "write a Markdown report to `FILE`")
	diagram := fs.String("diagram", "", "write each spec's diagram with what was never exercised marked: `mermaid` or dot")
	out := fs.String("o", "", "the `directory` --diagram writes <name>.cover.mmd or <name>.cover.dot to")
	files, err := parse(fs, args)
	if err != nil {
		return ExitUsage
	}
	f, err := diag.ParseFormat(*format)
	if err != nil {
		return c.usageErr("%v", err)
	}
	if len(files) == 0 {
		return c.usageErr("cover needs at least one spec file")
	}
	if *dir == "" {
		return c.usageErr("cover needs the directory of the records: --dir DIR or $%s", coverDirEnv)
	}
	threshold := -1.0
	if *failUnder != "" {
		v, err := strconv.ParseFloat(strings.TrimSuffix(*failUnder, "%"), 64)
		if err != nil || v < 0 || v > 100 {
			return c.usageErr("--fail-under %q: want a percentage from 0 to 100", *failUnder)
		}
		threshold = v
	}
	switch *diagram {
	case "", "mermaid", "dot":
	default:
		return c.usageErr("--diagram %q: want mermaid or dot", *diagram)
	}
	if (*diagram == "") != (*out == "") {
		return c.usageErr("--diagram and -o go together")
	}
	recs, err := cover.Read(*dir)
	if err != nil {
		fmt.Fprintf(c.stderr, "fsmgen: %v\n", err)
		return ExitUsage
	}
	var reports []*cover.Report
	for _, path := range files {
		m, ds, err := loadFile(path)
		if err != nil {
			fmt.Fprintf(c.stderr, "fsmgen: %v\n", unwrapPath(err))
			return ExitUsage
		}
		if m == nil {
			diag.Write(c.stderr, ds.Sorted(), diag.FormatText)
			return ExitFindings
		}
		r := cover.Of(path, m, recs)
		reports = append(reports, r)
		if *diagram != "" {
			name, data := cover.Diagram(*diagram, m, r)
			if err := os.MkdirAll(*out, 0o755); err != nil {
				fmt.Fprintf(c.stderr, "fsmgen: %v\n", err)
				return ExitUsage
			}
			if err := os.WriteFile(filepath.Join(*out, name), data, 0o644); err != nil {
				fmt.Fprintf(c.stderr, "fsmgen: %v\n", err)
				return ExitUsage
			}
		}
	}
	switch f {
	case diag.FormatJSON:
		writeCoverJSON(c.stdout, reports)
	case diag.FormatGitHubActions:
		writeCoverActions(c.stdout, reports)
	default:
		writeCoverText(c.stdout, reports)
	}
	if *markdown != "" {
		if err := os.WriteFile(*markdown, cover.Markdown(reports), 0o644); err != nil {
			fmt.Fprintf(c.stderr, "fsmgen: %v\n", err)
			return ExitUsage
		}
	}
	code := ExitOK
	for _, r := range reports {
		if _, all := r.Totals(); threshold >= 0 && all.Percent() < threshold {
			fmt.Fprintf(c.stderr, "fsmgen: %s: %.1f%% covered, below %s%%\n", r.Spec, all.Percent(), strconv.FormatFloat(threshold, 'f', -1, 64))
			code = ExitFindings
		}
	}
	return code
}

// coverSummary is a report's totals in one line.
func coverSummary(r *cover.Report) string {
	by, all := r.Totals()
	var parts []string
	for _, k := range cover.Kinds {
		t, ok := by[k]
		if !ok {
			continue
		}
		name := k
		if k == cover.States && r.Chart {
			name = "configurations"
		}
		parts = append(parts, fmt.Sprintf("%s %d/%d", name, t.Covered, t.All))
	}
	s := fmt.Sprintf("%s: %s: %.1f%% of %d (%s)", r.Spec, r.Machine, all.Percent(), all.All, strings.Join(parts, ", "))
	if r.Records == 0 {
		s += "; no records of this machine"
	}
	if r.Stale > 0 {
		s += fmt.Sprintf("; %d records of another version of the spec not counted (run the tests again)", r.Stale)
	}
	return s
}

func writeCoverText(w io.Writer, reports []*cover.Report) {
	for _, r := range reports {
		fmt.Fprintln(w, coverSummary(r))
		for _, it := range r.Uncovered() {
			fmt.Fprintf(w, "%s: %s\n", it.Pos, it.What)
		}
	}
}

func writeCoverActions(w io.Writer, reports []*cover.Report) {
	for _, r := range reports {
		fmt.Fprintf(w, "::notice file=%s::%s\n", actionsEscape(r.Spec, true), actionsEscape(coverSummary(r), false))
		for _, it := range r.Uncovered() {
			fmt.Fprintf(w, "::warning file=%s,line=%d,col=%d,title=fsmgen cover::%s\n", actionsEscape(it.Pos.File, true), it.Pos.Line, it.Pos.Col, actionsEscape(it.What, false))
		}
	}
}

// actionsEscape escapes a GitHub Actions workflow command's value (property: also , and :).
func actionsEscape(s string, property bool) string {
	r := strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A")
	s = r.Replace(s)
	if property {
		s = strings.NewReplacer(",", "%2C", ":", "%3A").Replace(s)
	}
	return s
}

func writeCoverJSON(w io.Writer, reports []*cover.Report) {
	type total struct {
		Covered int     `json:"covered"`
		All     int     `json:"all"`
		Percent float64 `json:"percent"`
	}
	type spec struct {
		*cover.Report
		Percent   float64          `json:"percent"`
		Totals    map[string]total `json:"totals"`
		Uncovered []cover.Item     `json:"uncovered"`
	}
	out := struct {
		Specs []spec `json:"specs"`
	}{Specs: []spec{}}
	for _, r := range reports {
		by, all := r.Totals()
		s := spec{Report: r, Percent: all.Percent(), Totals: map[string]total{}, Uncovered: r.Uncovered()}
		if s.Uncovered == nil {
			s.Uncovered = []cover.Item{}
		}
		for k, t := range by {
			s.Totals[k] = total{t.Covered, t.All, t.Percent()}
		}
		out.Specs = append(out.Specs, s)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.Encode(out)
}
