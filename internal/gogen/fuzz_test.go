package gogen_test

import (
	"os"
	"testing"

	"github.com/fsmgen/fsmgen/internal/dot"
	"github.com/fsmgen/fsmgen/internal/fixture"
	"github.com/fsmgen/fsmgen/internal/gogen"
	"github.com/fsmgen/fsmgen/internal/gogen/gocheck"
	"github.com/fsmgen/fsmgen/internal/lower"
	"github.com/fsmgen/fsmgen/internal/markdown"
	"github.com/fsmgen/fsmgen/internal/mermaid"
	"github.com/fsmgen/fsmgen/internal/testgen"
)

// FuzzGenerate feeds the whole generator arbitrary specs. Whatever a spec that the checker
// accepts says, every output must come out: the Go code and the generated tests (both
// formatted by go/format, so they parse), the Mermaid diagram, the Markdown document and
// the DOT graph, with no panic and no error. Under fuzzing, a sample of the accepted specs
// is also built and tested (gocheck.Sampler): gofmt-clean, go vet clean, and its generated
// tests pass, as TestGeneratedCompiles does for the fixed specs. A spec the checker refuses
// is FuzzLoad's.
//
// The corpus starts from fixture.Specs and fixture.CheckCases.
func FuzzGenerate(f *testing.F) {
	for _, path := range fixture.Specs(f, "../..") {
		data, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	for _, spec := range fixture.CheckCases(f, "../..") {
		f.Add(spec)
	}
	build := gocheck.Sampler("../..")
	f.Fuzz(func(t *testing.T, data []byte) {
		m, ds := lower.Load("spec.fsm.yaml", data)
		if ds.HasErrors() {
			return
		}
		if _, err := gogen.Generate(m, "spec.fsm.yaml"); err != nil {
			t.Fatalf("Go code: %v", err)
		}
		if _, err := testgen.Generate(m, "spec.fsm.yaml"); err != nil {
			t.Fatalf("tests: %v", err)
		}
		if _, err := markdown.Document(m, mermaid.StateDiagram(m)); err != nil {
			t.Fatalf("Markdown: %v", err)
		}
		_ = mermaid.File(m)
		_ = dot.Graph(m)
		build(t, data)
	})
}
