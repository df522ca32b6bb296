package cover_test

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fsmgen/fsmgen/fsmrt"
	"github.com/fsmgen/fsmgen/internal/cover"
	"github.com/fsmgen/fsmgen/internal/fixture"
	"github.com/fsmgen/fsmgen/internal/ir"
	"github.com/fsmgen/fsmgen/internal/testtool"
)

// TestDiagramsParse draws every spec the generators are tested on (flat machines and
// statecharts, names that need escaping among them) with everything marked never
// exercised, and with half of it exercised, and runs each diagram through the real Mermaid
// parser and dot.
func TestDiagramsParse(t *testing.T) {
	check := testtool.MermaidCheck(t)
	dotBin := testtool.Program(t, "dot", testtool.InstallGraphviz)
	tmp := t.TempDir()
	var mmd []string
	for _, path := range fixture.Specs(t, "../..") {
		m := fixture.Load(t, path)
		var some []fsmrt.CoverRecord
		for i, tr := range m.Transitions {
			if i%2 == 0 && len(tr.From) > 0 {
				some = append(some, fsmrt.CoverRecord{Machine: m.Package + "." + m.Name, Spec: ir.Fingerprint(m), Kind: fsmrt.CoverTransition, State: tr.From[0].Name, Transition: tr.Index})
			}
		}
		for j, recs := range [][]fsmrt.CoverRecord{nil, some} {
			r := cover.Of(path, m, recs)
			for _, kind := range []string{"mermaid", "dot"} {
				name, data := cover.Diagram(kind, m, r)
				f := filepath.Join(tmp, strings.Repeat("x", j)+filepath.Base(filepath.Dir(path))+"-"+name)
				if err := os.WriteFile(f, data, 0o644); err != nil {
					t.Fatal(err)
				}
				if kind == "mermaid" {
					mmd = append(mmd, f)
					continue
				}
				if out, err := exec.Command(dotBin, "-Tsvg", "-o", os.DevNull, f).CombinedOutput(); err != nil {
					t.Errorf("%s: dot: %v\n%s\n%s", path, err, out, data)
				}
			}
		}
	}
	args := append([]string{check, "--strict", "--quiet", "--expect", "stateDiagram"}, mmd...)
	if out, err := exec.Command("node", args...).CombinedOutput(); err != nil {
		t.Fatalf("the Mermaid parser: %v\n%s", err, out)
	}
}

// TestReadRefuses: a coverage file that is not records is a typed error naming the file
// and line, never records read wrong.
func TestReadRefuses(t *testing.T) {
	for _, c := range []struct{ name, data, want string }{
		{"garbage", "{\"machine\":\"a.B\",\"kind\":\"transition\"}\nhello\n", ":2: not a coverage record"},
		{"unknown key", "{\"machine\":\"a.B\",\"nope\":1}\n", ":1: not a coverage record"},
		{"two objects", "{\"machine\":\"a.B\"} {}\n", "more after the object"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			os.WriteFile(filepath.Join(dir, "x.jsonl"), []byte(c.data), 0o644)
			_, err := cover.Read(dir)
			var re *cover.ReadError
			if !errors.As(err, &re) || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "x.jsonl") {
				t.Errorf("%v, want a ReadError saying %q", err, c.want)
			}
		})
	}
	if _, err := cover.Read(filepath.Join(t.TempDir(), "none")); err == nil {
		t.Error("a directory that does not exist reads as no records")
	}
}

// TestStaleRecords: records of another version of the spec are counted apart, not as
// coverage.
func TestStaleRecords(t *testing.T) {
	m := fixture.Load(t, "../../examples/review/review.fsm.yaml")
	name := m.Package + "." + m.Name
	recs := []fsmrt.CoverRecord{
		{Machine: name, Spec: "sha256:00", Kind: fsmrt.CoverTransition, State: m.States[0].Name, Transition: 0},
		{Machine: "other.Machine", Spec: ir.Fingerprint(m), Kind: fsmrt.CoverTransition, Transition: 0},
	}
	r := cover.Of("review.fsm.yaml", m, recs)
	if _, all := r.Totals(); r.Stale != 1 || r.Records != 0 || all.Covered != 0 {
		t.Errorf("stale %d, records %d, covered %d", r.Stale, r.Records, all.Covered)
	}
}
