package gogen_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/fsmgen/fsmgen/internal/dot"
	"github.com/fsmgen/fsmgen/internal/gogen"
	"github.com/fsmgen/fsmgen/internal/lower"
	"github.com/fsmgen/fsmgen/internal/markdown"
	"github.com/fsmgen/fsmgen/internal/mermaid"
	"github.com/fsmgen/fsmgen/internal/testgen"
	"golang.org/x/tools/txtar"
)

// FuzzGenerate feeds the whole generator arbitrary specs. Whatever a spec that the checker
// accepts says, every output must come out: the Go code and the generated tests (both
// formatted by go/format, so they parse; that they type-check and pass is
// TestGeneratedCompiles' part, on the fixed specs), the Mermaid diagram, the Markdown
// document and the DOT graph, with no panic and no error. A spec the checker refuses is
// FuzzLoad's.
//
// The corpus starts from the example specs, the specs under testdata and
// ../interp/testdata, and the spec of every checker case in ../lower/testdata/check.
func FuzzGenerate(f *testing.F) {
	for _, pattern := range []string{"../../examples/*/*.fsm.yaml", "testdata/*.fsm.yaml", "../interp/testdata/*.fsm.yaml"} {
		paths, err := filepath.Glob(pattern)
		if err != nil {
			f.Fatal(err)
		}
		for _, path := range paths {
			data, err := os.ReadFile(path)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(data)
		}
	}
	cases, err := filepath.Glob("../lower/testdata/check/*.txtar")
	if err != nil {
		f.Fatal(err)
	}
	for _, path := range cases {
		ar, err := txtar.ParseFile(path)
		if err != nil {
			f.Fatal(err)
		}
		for _, file := range ar.Files {
			if file.Name == "spec.fsm.yaml" {
				f.Add(file.Data)
			}
		}
	}
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
	})
}
