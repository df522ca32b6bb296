package lower_test

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/fsmgen/fsmgen/internal/fixture"
	"github.com/fsmgen/fsmgen/internal/lower"
)

// FuzzLoad feeds lower.Load arbitrary input. Whatever the input, Load must not panic or
// hang, every finding must have a position (line and column from 1) and a message, and the
// machine must be nil exactly when there is an error.
//
// The corpus starts from fixture.Specs (the examples and the test specs) and
// fixture.CheckCases (every checker case), plus testdata/fuzz/FuzzLoad.
func FuzzLoad(f *testing.F) {
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
	f.Fuzz(func(t *testing.T, data []byte) {
		m, ds := lower.Load("spec.fsm.yaml", data)
		for _, d := range ds {
			if d.Pos.Line < 1 || d.Pos.Col < 1 {
				t.Errorf("finding without a position: %s", d)
			}
			if d.Message == "" {
				t.Errorf("finding without a message at %s", d.Pos)
			}
		}
		if (m == nil) != ds.HasErrors() {
			t.Errorf("machine is nil: %v, but has errors: %v\n%v", m == nil, ds.HasErrors(), ds)
		}
	})
}

// BenchmarkCheckChain checks a chain of 20,000 states, each left by its own event: linear
// in the spec, where the machine's (state, event) table alone would have 400 million cells.
func BenchmarkCheckChain(b *testing.B) {
	const n = 20000
	var spec strings.Builder
	spec.WriteString("version: 1\nmachine: Chain\npackage: chain\nstates:\n  s0: { initial: true }\n")
	for i := 1; i < n-1; i++ {
		fmt.Fprintf(&spec, "  s%d: {}\n", i)
	}
	fmt.Fprintf(&spec, "  s%d: { terminal: true }\nevents:\n", n-1)
	for i := 0; i < n-1; i++ {
		fmt.Fprintf(&spec, "  e%d: {}\n", i)
	}
	spec.WriteString("transitions:\n")
	for i := 0; i < n-1; i++ {
		fmt.Fprintf(&spec, "  - { from: s%d, on: e%d, to: s%d }\n", i, i, i+1)
	}
	data := []byte(spec.String())
	for b.Loop() {
		if ds := lower.Check("chain.fsm.yaml", data); len(ds) > 0 {
			b.Fatal(ds)
		}
	}
}
