package lower_test

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fsmgen/fsmgen/internal/chartdiff"
	"github.com/fsmgen/fsmgen/internal/fixture"
	"github.com/fsmgen/fsmgen/internal/gogen/gocheck"
	"github.com/fsmgen/fsmgen/internal/lower"
	"golang.org/x/tools/txtar"
)

// FuzzLoad feeds lower.Load arbitrary input. Whatever the input, Load must not panic or
// hang, every finding must have a position (line and column from 1) and a message, and the
// machine must be nil exactly when there is an error.
//
// Under fuzzing (-fuzz), a sample of the specs the checker accepts (gocheck.Sampler) is
// also held to the bar of every accepted spec: every output generates, the Go is
// gofmt-clean, go vet and the generated tests pass. TestAcceptedSpecsBuild does the same
// for a fixed corpus in every run, the inputs saved in testdata/fuzz/FuzzLoad included.
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
	build := gocheck.Sampler("../..")
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
		if m != nil {
			build(t, data)
		}
	})
}

// TestAcceptedSpecsBuild holds a fixed corpus of specs the checker accepts to the bar of
// every accepted spec, in one module (gocheck): testdata/build (docs with a byte-order
// mark or bidirectional controls, names with pipes, backslashes and backticks, hooks named
// like standard methods), the generator's specs of names that start with a digit or a
// letter without case, every checker case that the checker accepts, the inputs the fuzzer
// saved (here and in the generator's testdata/fuzz/FuzzGenerate) that it accepts, two
// examples, and random statecharts (3; FSMGEN_CHARTDIFF_CODE sets how many).
func TestAcceptedSpecsBuild(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a module")
	}
	mod := gocheck.New(t, "../..")
	add := func(name string, data []byte, mustAccept bool) {
		t.Helper()
		ok, err := mod.Add(name, data)
		switch {
		case err != nil:
			t.Error(err)
		case !ok && mustAccept:
			_, ds := lower.Load("spec.fsm.yaml", data)
			t.Errorf("%s: the checker refuses it:\n%v", name, ds)
		}
	}
	read := func(path string) []byte {
		t.Helper()
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return data
	}
	builds, _ := filepath.Glob("testdata/build/*.fsm.yaml")
	if len(builds) == 0 {
		t.Fatal("no specs in testdata/build")
	}
	for _, path := range builds {
		add(path, read(path), true)
	}
	cases, _ := filepath.Glob("testdata/check/*.txtar")
	for _, path := range cases {
		ar, err := txtar.ParseFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range ar.Files {
			if f.Name == "spec.fsm.yaml" {
				add(path, f.Data, false)
			}
		}
	}
	// What the fuzzers saved, this package's and the generator's.
	for _, dir := range []string{"testdata/fuzz/FuzzLoad", "../gogen/testdata/fuzz/FuzzGenerate"} {
		for _, in := range gocheck.Corpus(t, dir) {
			add(in.Path, in.Data, false)
		}
	}
	for _, path := range []string{
		// The generator's corner cases for names that start with a digit or a letter
		// without case (its own tests run them against the interpreter too).
		"../gogen/testdata/digits.fsm.yaml", "../gogen/testdata/caseless.fsm.yaml",
		"../../examples/review/review.fsm.yaml", "../../examples/approval/approval.fsm.yaml",
	} {
		add(path, read(path), true)
	}
	// Random statecharts (the charts chartdiff runs against XState, with jump events so that
	// every state is reachable): their generated tests check every configuration and event
	// against the interpreter, and walk them from the start through history, eventless
	// transitions and done events, replayed from a store. FSMGEN_CHARTDIFF_CODE sets how many
	// (make fuzz runs 200).
	charts := fixture.Count(t, "FSMGEN_CHARTDIFF_CODE", 3)
	r := rand.New(rand.NewPCG(3, 4))
	for added, tries := 0, 0; added < charts; tries++ {
		if tries > 50*charts {
			t.Fatal("the checker refuses nearly every random chart")
		}
		c := chartdiff.Generate(r, chartdiff.SpecOptions())
		chartdiff.AddJumps(r, c)
		spec := c.SpecYAML()
		ok, err := mod.Add(fmt.Sprintf("random chart %d:\n%s", tries, spec), spec)
		if err != nil {
			t.Fatal(err)
		}
		if ok {
			added++
		}
	}
	mod.Check(t)
	t.Logf("%d specs built and tested", mod.Len())
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
