package mermaid

import (
	"bytes"
	"flag"
	"os"
	"regexp"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden diagrams of the statecharts (testdata/*.mmd)")

// chartSpecs are the statecharts; each has its golden diagram beside it, the spec's name
// with .mmd for .fsm.yaml.
var chartSpecs = []string{"testdata/studio.fsm.yaml", "testdata/corners.fsm.yaml"}

func golden(path string) string { return strings.TrimSuffix(path, ".fsm.yaml") + ".mmd" }

// TestChartGolden compares the diagram of each statechart with its golden file, byte for
// byte (go test -update rewrites them), and renders it twice.
func TestChartGolden(t *testing.T) {
	for _, path := range chartSpecs {
		t.Run(name(path), func(t *testing.T) {
			got := File(load(t, path))
			if again := File(load(t, path)); !bytes.Equal(got, again) {
				t.Fatal("two renderings differ")
			}
			if *update {
				if err := os.WriteFile(golden(path), got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden(path))
			if err != nil {
				t.Fatalf("%v (go test -update writes it)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%s differs (go test -update rewrites it); got:\n%s", golden(path), got)
			}
		})
	}
}

// TestChartLines checks every line of the statecharts' diagrams against the only shapes of
// line the chart emitter writes, the nesting of their blocks, and that labels, with our own
// <br> and the entities removed, hold none of the characters or words that mean something
// to Mermaid.
func TestChartLines(t *testing.T) {
	id := `s(?:_[A-Za-z0-9]+)*_?`
	end := `(?:` + id + `|\[\*\])`
	shapes := []*regexp.Regexp{
		regexp.MustCompile(`^( *)state "([^"]*)" as ` + id + `$`),
		regexp.MustCompile(`^( *)state "([^"]*)" as ` + id + ` \{$`),
		regexp.MustCompile(`^( *)\}$`),
		regexp.MustCompile(`^( *)--$`),
		regexp.MustCompile(`^( *)` + id + ` : (no transitions of its own)$`),
		regexp.MustCompile(`^( *)` + end + ` --> ` + end + `(?: : (.+))?$`),
	}
	entity := regexp.MustCompile(`#\d+;`)
	bad := regexp.MustCompile(`(?i)["#;:%{}<>&\x60*\\]|direction|\r|_\W|\W_|^_|_$`)
	for _, path := range chartSpecs {
		out := StateDiagram(load(t, path))
		lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
		if lines[0] != "stateDiagram-v2" {
			t.Errorf("%s: first line %q", path, lines[0])
		}
		depth := 1
		for _, line := range lines[1:] {
			matched := false
			for i, re := range shapes {
				m := re.FindStringSubmatch(line)
				if m == nil {
					continue
				}
				matched = true
				if i == 2 { // a block ends
					depth--
				}
				if want := strings.Repeat("    ", depth); m[1] != want {
					t.Errorf("%s: %q is indented %d, want %d", path, line, len(m[1]), len(want))
				}
				if i == 1 { // a block starts
					depth++
				}
				if len(m) > 2 && m[2] != "" {
					text := entity.ReplaceAllString(strings.ReplaceAll(m[2], "<br>", " "), "")
					if loc := bad.FindStringIndex(text); loc != nil {
						t.Errorf("%s: unescaped %q in %q", path, text[loc[0]:loc[1]], line)
					}
				}
				break
			}
			if !matched {
				t.Errorf("%s: unexpected line %q", path, line)
			}
		}
		if depth != 1 {
			t.Errorf("%s: blocks left open: %d", path, depth-1)
		}
	}
}
