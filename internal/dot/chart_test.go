package dot

import (
	"bytes"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden graphs of the statecharts (testdata/*.dot)")

// chartSpecs are the statecharts (kept with the Mermaid emitter's test specs); each has
// its golden graph in testdata, named like the spec with .dot for .fsm.yaml.
var chartSpecs = []string{"../mermaid/testdata/studio.fsm.yaml", "../mermaid/testdata/corners.fsm.yaml"}

func golden(path string) string { return filepath.Join("testdata", name(path)+".dot") }

// TestChartGolden compares the graph of each statechart with its golden file, byte for
// byte (go test -update rewrites them), and renders it twice. TestGraphviz runs dot on it.
func TestChartGolden(t *testing.T) {
	for _, path := range chartSpecs {
		t.Run(name(path), func(t *testing.T) {
			got := Graph(load(t, path))
			if again := Graph(load(t, path)); got != again {
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

// TestChartLines checks that in the statecharts' graphs every line has one of the shapes
// the emitter writes, every quoted string is well formed, clusters nest and close, and
// every lhead and ltail names a cluster of the graph.
func TestChartLines(t *testing.T) {
	str := `"(?:[^"\\\n]|\\["\\n])*"`
	attrs := `(?: \[(?:[a-z]+=(?:` + str + `|[\w.]+)(?:, )?)+\])?`
	id := `(?:s(?:_[A-Za-z0-9]+)*_?|i_s(?:_[A-Za-z0-9]+)*_?|start)`
	shapes := regexp.MustCompile(`^(?:` + strings.Join([]string{
		regexp.QuoteMeta(Header),
		`digraph ` + str + ` \{`,
		`\t(?:graph|node|edge)` + attrs + `;`,
		`\t+(?:graph)` + attrs + `;`,
		`\t+` + id + attrs + `;`,
		`\t` + id + ` -> ` + id + attrs + `;`,
		`\t+subgraph cluster_` + id + ` \{`,
		`\t*\}`,
		``,
	}, "|") + `)$`)
	open := regexp.MustCompile(`^(\t*)subgraph (cluster_\S+) \{$`)
	clip := regexp.MustCompile(`l(?:head|tail)=(cluster_[\w]+)`)
	for _, path := range chartSpecs {
		out := Graph(load(t, path))
		clusters := map[string]bool{}
		depth := 0
		for _, line := range strings.Split(out, "\n") {
			if !shapes.MatchString(line) {
				t.Errorf("%s: unexpected line %q", path, line)
			}
			if m := open.FindStringSubmatch(line); m != nil {
				if len(m[1]) != depth+1 {
					t.Errorf("%s: %q is indented %d, want %d", path, line, len(m[1]), depth+1)
				}
				clusters[m[2]] = true
				depth++
			}
			if strings.HasSuffix(line, "}") && strings.Trim(line, "\t}") == "" {
				depth--
			}
		}
		if depth != -1 { // the digraph's own brace
			t.Errorf("%s: unbalanced braces: %d", path, depth)
		}
		for _, m := range clip.FindAllStringSubmatch(out, -1) {
			if !clusters[m[1]] {
				t.Errorf("%s: %s names no cluster", path, m[0])
			}
		}
		if !strings.Contains(out, "compound=true") {
			t.Errorf("%s: no compound=true", path)
		}
	}
}

// TestChartGraphvizText renders the studio with the real dot and checks that its hostile
// names come out as text (skipped without dot, as TestGraphviz is).
func TestChartGraphvizText(t *testing.T) {
	cmd := exec.Command(needDot(t), "-Tsvg")
	cmd.Stdin = strings.NewReader(Graph(load(t, chartSpecs[0])))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil || stderr.Len() > 0 {
		t.Fatalf("dot -Tsvg: %v\n%s", err, stderr.String())
	}
	svg := stdout.String()
	for _, s := range []string{"<now>", "<b>", "<i>"} {
		if strings.Contains(svg, s) {
			t.Errorf("spec text became markup: %s", s)
		}
	}
	for _, s := range []string{"shut: down &lt;now&gt; {x}", "lock [!busy; %% &lt;i&gt;]", "H*", "polish (reenter)"} {
		if !strings.Contains(svg, s) {
			t.Errorf("SVG lacks the text %q", s)
		}
	}
}
