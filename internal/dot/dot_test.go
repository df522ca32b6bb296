package dot

import (
	"bytes"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/fsmgen/fsmgen/internal/fixture"
	"github.com/fsmgen/fsmgen/internal/ir"
	"github.com/fsmgen/fsmgen/internal/testtool"
)

func specs(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob("../../examples/*/*.fsm.yaml")
	if err != nil || len(files) != 5 {
		t.Fatalf("examples: %v %v", files, err)
	}
	// chart_clocks: timeouts and a delayed transition on compound and parallel states;
	// chart_delays_parallel: delays of states active together.
	return append(append(files, "../mermaid/testdata/door.fsm.yaml", "../mermaid/testdata/hostile.fsm.yaml", "../lower/testdata/build/chart_clocks.fsm.yaml", "../lower/testdata/build/chart_delays_parallel.fsm.yaml"), chartSpecs...)
}

func load(t *testing.T, path string) *ir.Machine { return fixture.Load(t, path) }

func name(path string) string { return strings.TrimSuffix(filepath.Base(path), ".fsm.yaml") }

func TestQuote(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"idle", `"idle"`},
		{`say "hi"`, `"say \"hi\""`},
		{`back\slash \N \l`, `"back\\slash \\N \\l"`},
		{"a\nb\r\n\tc\x00", `"a\nb\n c"`},
		{"<b>&amp;</b>", `"<b>&amp;amp;</b>"`},
		{"}; digraph x {", `"}; digraph x {"`},
		{"é ✓\u2028x", `"é ✓\nx"`},
		{"a\u202eb\ufeffc\u200bd\u0085", `"abcd"`},
	} {
		if got := Quote(tc.in); got != tc.want {
			t.Errorf("Quote(%q) = %s, want %s", tc.in, got, tc.want)
		}
	}
}

func TestDoor(t *testing.T) {
	out := Graph(load(t, "../mermaid/testdata/door.fsm.yaml"))
	lines := strings.Split(out, "\n")
	if lines[0] != Header || lines[1] != `digraph "Door" {` || !strings.HasSuffix(out, "}\n") {
		t.Errorf("bad frame:\n%s", out)
	}
	for _, w := range []string{
		`	start [shape=point, style=filled, fillcolor=black, width=0.2, label="", tooltip="initial"];`,
		`	s0 [label="closed\n«shut»", fillcolor="#e3f2fd"];`,
		`	s1 [label="open", tooltip="The door is open."];`,
		`	s4 [label="broken", peripheries=2];`,
		`	c0 [shape=diamond, style=filled, fillcolor="#ede7f6", label="", width=0.3, height=0.3, tooltip="choice of unlock from locked"];`,
		`	h3 [shape=circle, style="", label="H", width=0.35, fixedsize=true, tooltip="history of jammed: back to the state it was entered from"];`,
		`	n2 [shape=note, style=filled, fillcolor="#fff9c4", fontsize=10, label="timeout 1h30m (configurable), remind 50%"];`,
		`	start -> s0;`,
		`	s0 -> s1 [label="push [unlocked] [!alarm] / beep reset tries"];`,
		`	s0 -> s3 [label="push when tries reaches 3", style=dashed, color="#c62828", fontcolor="#c62828"];`,
		`	s2 -> s2 [label="knock (internal)"];`,
		`	c0 -> s0 [label="[unlocked]"];`,
		`	c0 -> h3 [label="else"];`,
		`	h3 -> s0 [style=dashed];`,
		`	s3 -> h3 [label="kick"];`,
		`	s4 -> final;`,
		`	{ rank=same; s0; n0; }`,
	} {
		if !contains(lines, w) {
			t.Errorf("missing line %s in:\n%s", w, out)
		}
	}
}

func contains(lines []string, s string) bool {
	for _, l := range lines {
		if l == s {
			return true
		}
	}
	return false
}

func TestDeterministic(t *testing.T) {
	for _, path := range specs(t) {
		if a, b := Graph(load(t, path)), Graph(load(t, path)); a != b {
			t.Errorf("%s: two renderings differ", path)
		}
	}
}

// TestHostileStrings checks that in the hostile graph every line has one of the shapes the
// emitter writes and every quoted string is well formed: no raw line breaks, and a
// backslash only ever escapes a quote, a backslash or starts \n.
func TestHostileStrings(t *testing.T) {
	out := Graph(load(t, "../mermaid/testdata/hostile.fsm.yaml"))
	str := `"(?:[^"\\\n]|\\["\\n])*"`
	attrs := `(?: \[(?:[a-z]+=(?:` + str + `|[\w.]+)(?:, )?)+\])?`
	id := `(?:s\d+|c\d+|h\d+|n\d+|start|final)`
	shapes := regexp.MustCompile(`^(?:` + strings.Join([]string{
		regexp.QuoteMeta(Header),
		`digraph ` + str + ` \{`,
		`\t(?:graph|node|edge)` + attrs + `;`,
		`\t` + id + attrs + `;`,
		`\t` + id + ` -> ` + id + attrs + `;`,
		`\t\{ rank=same; ` + id + `; ` + id + `; \}`,
		`\}`,
		``,
	}, "|") + `)$`)
	for _, line := range strings.Split(out, "\n") {
		if !shapes.MatchString(line) {
			t.Errorf("unexpected line %q", line)
		}
	}
}

// TestGraphviz renders every graph with the real dot (skipped when it is not installed:
// apt-get install -y graphviz).
func TestGraphviz(t *testing.T) {
	dot := needDot(t)
	for _, path := range specs(t) {
		t.Run(name(path), func(t *testing.T) {
			cmd := exec.Command(dot, "-Tsvg")
			cmd.Stdin = strings.NewReader(Graph(load(t, path)))
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Run(); err != nil || stderr.Len() > 0 {
				t.Fatalf("dot -Tsvg: %v\n%s", err, stderr.String())
			}
			svg := stdout.String()
			if !strings.Contains(svg, "<svg") {
				t.Fatalf("no SVG:\n%s", svg)
			}
			if name(path) == "hostile" {
				for _, s := range []string{"<script", "<b>", "<i>", "<img"} {
					if strings.Contains(svg, s) {
						t.Errorf("spec text became markup: %s", s)
					}
				}
				for _, s := range []string{"&lt;b&gt;bold&lt;/b&gt; &amp; &amp;amp;", "end note \\ back", "日本語 ✓ état"} {
					if !strings.Contains(svg, s) {
						t.Errorf("SVG lacks the text %q", s)
					}
				}
			}
		})
	}
}

// needDot returns the path of Graphviz's dot, skipping t when it is not installed (naming
// the command that installs it) and failing it instead under CI=true (.ci/run installs
// graphviz).
func needDot(t *testing.T) string {
	t.Helper()
	return testtool.Program(t, "dot", testtool.InstallGraphviz)
}
