package markdown

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden documents of the statecharts (testdata/*.md)")

// chartSpecs are the statecharts (kept with the Mermaid emitter's test specs); each has
// its golden document in testdata, named like the spec with .md for .fsm.yaml.
var chartSpecs = []string{"../mermaid/testdata/studio.fsm.yaml", "../mermaid/testdata/corners.fsm.yaml"}

func golden(path string) string { return filepath.Join("testdata", name(path)+".md") }

// TestChartGolden compares the document of each statechart with its golden file, byte for
// byte (go test -update rewrites them), and renders it twice; TestMermaidCheck parses its
// diagram with the real Mermaid parser.
func TestChartGolden(t *testing.T) {
	for _, path := range chartSpecs {
		t.Run(name(path), func(t *testing.T) {
			got := document(t, path)
			if again := document(t, path); got != again {
				t.Fatal("two renderings differ")
			}
			if *update {
				if err := os.MkdirAll("testdata", 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(golden(path), []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden(path))
			if err != nil {
				t.Fatalf("%v (go test -update writes it)", err)
			}
			if !bytes.Equal([]byte(got), want) {
				t.Errorf("%s differs (go test -update rewrites it); got:\n%s", golden(path), got)
			}
		})
	}
}

// TestChartInert checks that the statecharts' documents hold no active Markdown outside
// code spans and the diagram, and that the tables keep their cells.
func TestChartInert(t *testing.T) {
	for _, path := range chartSpecs {
		checkInert(t, document(t, path))
	}
}

// TestChartCells reads back the names and docs of the studio's state and transition
// tables as GitHub-flavoured Markdown shows them.
func TestChartCells(t *testing.T) {
	doc := document(t, chartSpecs[0])
	rows := map[string][]string{} // by first cell, as read back
	for _, line := range strings.Split(doc, "\n") {
		if strings.HasPrefix(line, "| `") {
			cs := cells(line)
			rows[cellCode(t, cs[0])+" "+strings.TrimSpace(cs[1])] = cs
		}
	}
	for _, tc := range []struct {
		row  string
		cell int
		code bool
		want string
	}{
		{"standby atomic", 6, false, "Powered down; \"quiet\" | <b>off</b>\nsecond line: note right of x"},
		{"shut: down <now> {x} final", 6, false, "*/ terminal %%{init}%%"},
		{"active.edit.draft atomic", 4, true, "log -> out"},
		{"active.mix.left.off atomic", 3, true, "take | <no>"},
		{"active.mix.left compound region", 2, false, ""},
		{"active `save \"it\" --> [*]`", 5, false, "`count`, `log -> out`"},
		{"active.mix done", 6, false, "both channels set: | back to <edit>"},
		{"active.edit.review always", 2, false, "`approved` and not `busy; %% <i>`"},
		{"standby `power`", 3, false, "`active.h` (deep history)"},
		{"active.mix `tick`", 3, false, "stays"},
		{"active.edit `polish`", 4, false, "yes"},
	} {
		cs, ok := rows[tc.row]
		if !ok {
			t.Errorf("no row %q", tc.row)
			continue
		}
		got := cellText(cs[tc.cell])
		if tc.code {
			got = cellCode(t, cs[tc.cell])
		}
		if got != tc.want {
			t.Errorf("row %q cell %d reads %q, want %q", tc.row, tc.cell, got, tc.want)
		}
	}
}
