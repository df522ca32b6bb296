package gogen_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fsmgen/fsmgen/internal/gogen"
)

// TestGeneratedSize holds the generated code to the sizes issue 12 set, in lines of
// <name>_fsm.go: a 3-state, 3-event machine with nothing else at most 150, seed 003
// (review) at most 500 and every seed at most 45% of what the whole-code generator wrote,
// the 300-state, 2,000-transition synthetic machine at most 5,000.
func TestGeneratedSize(t *testing.T) {
	synthetic := filepath.Join(t.TempDir(), "synthetic.fsm.yaml")
	must(t, os.WriteFile(synthetic, syntheticSpec(300, 20, 7), 0o644))
	for _, c := range []struct {
		spec   string
		before int // lines before issue 12 (0: none measured)
		max    int
	}{
		{"testdata/door.fsm.yaml", 0, 150},
		{"../../examples/review/review.fsm.yaml", 950, 500},
		{"../../examples/build/build.fsm.yaml", 1954, 0},
		{"../../examples/approval/approval.fsm.yaml", 1963, 0},
		{"../../examples/cognitive/cognitive.fsm.yaml", 1463, 0},
		{"../../examples/pipeline/pipeline.fsm.yaml", 1580, 0},
		{synthetic, 48118, 5000},
	} {
		code, err := gogen.Generate(loadSpec(t, c.spec), filepath.Base(c.spec))
		if err != nil {
			t.Fatal(err)
		}
		lines := codeLines(code)
		limit := c.max
		if c.before > 0 && (limit == 0 || c.before*45/100 < limit) {
			limit = c.before * 45 / 100
		}
		if lines > limit {
			t.Errorf("%s: %d lines, want at most %d", filepath.Base(c.spec), lines, limit)
		}
		t.Logf("%s: %d lines (limit %d, before %d)", filepath.Base(c.spec), lines, limit, c.before)
	}
}

// codeLines counts the lines of generated code, leaving out the listings in the doc
// comments of the machine and registry types of the methods they have from the runtime
// (the lines from "Besides its own methods" to the end of the comment): documentation
// that go doc shows, no code, and the same for every machine.
func codeLines(code []byte) int {
	n, listing := 0, false
	for _, line := range strings.Split(strings.TrimSuffix(string(code), "\n"), "\n") {
		switch {
		case strings.HasPrefix(line, "// Besides its own methods,"):
			listing = true
		case listing && !strings.HasPrefix(line, "//"):
			listing = false
		}
		if !listing {
			n++
		}
	}
	return n
}

// syntheticSpec is a flat machine of n states and e events, k plain transitions leaving
// every state but the last (terminal), the last event leading there from every state: the
// shape of bench/specgen's machines (n=300, e=20, k=7: 2,093 transitions).
func syntheticSpec(n, e, k int) []byte {
	var b strings.Builder
	b.WriteString("version: 1\nmachine: Synthetic\npackage: synthetic\nstates:\n")
	for i := range n {
		switch i {
		case 0:
			fmt.Fprintf(&b, "  s%d: { initial: true }\n", i)
		case n - 1:
			fmt.Fprintf(&b, "  s%d: { terminal: true }\n", i)
		default:
			fmt.Fprintf(&b, "  s%d: {}\n", i)
		}
	}
	b.WriteString("events:\n")
	for j := range e {
		fmt.Fprintf(&b, "  e%d: {}\n", j)
	}
	b.WriteString("transitions:\n")
	jumps := []int{1, -1, 7, 20, 33, 12, 41, 26}
	for i := 0; i < n-1; i++ {
		for x := 0; x < k-1; x++ {
			to := ((i+jumps[x])%(n-1) + n - 1) % (n - 1)
			if to == i {
				to = (i + 1) % (n - 1)
			}
			fmt.Fprintf(&b, "  - { from: s%d, on: e%d, to: s%d }\n", i, (i+x)%(e-1), to)
		}
		fmt.Fprintf(&b, "  - { from: s%d, on: e%d, to: s%d }\n", i, e-1, n-1)
	}
	return []byte(b.String())
}
