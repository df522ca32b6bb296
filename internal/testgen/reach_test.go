package testgen_test

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/fsmgen/fsmgen/internal/chartdiff"
	"github.com/fsmgen/fsmgen/internal/diag"
	"github.com/fsmgen/fsmgen/internal/fixture"
	"github.com/fsmgen/fsmgen/internal/gogen/gocheck"
	"github.com/fsmgen/fsmgen/internal/interp"
	"github.com/fsmgen/fsmgen/internal/ir"
	"github.com/fsmgen/fsmgen/internal/lower"
	"github.com/fsmgen/fsmgen/internal/randspec"
	"github.com/fsmgen/fsmgen/internal/testgen"
)

// payChain is the payment-style guard chain whose generated tests reached only its first
// and last branches while all hook guards of a step were scripted to one outcome.
const payChain = `version: 1
machine: Pay
package: chain
guards: { declined: {}, needs_auth: {}, manual: {} }
states:
  ready: { initial: true }
  failed: {}
  auth: {}
  held: { timeout: { after: 24h, on_expiry: expire } }
  done: { terminal: true }
events: { confirm: {}, expire: {}, retry: {} }
transitions:
  - { from: ready, on: confirm, to: failed, if: declined }
  - { from: ready, on: confirm, to: auth, if: needs_auth }
  - { from: ready, on: confirm, to: held, if: manual }
  - { from: ready, on: confirm, to: done }
  - { from: failed, on: retry, to: ready }
  - { from: auth, on: retry, to: ready }
  - { from: held, on: expire, to: done }
`

// TestGuardChainReachesEveryState: each link of the chain is reached with the guards
// before it failing and its own holding.
func TestGuardChainReachesEveryState(t *testing.T) {
	m, ds := lower.Load("pay.fsm.yaml", []byte(payChain))
	if m == nil || ds.HasErrors() {
		t.Fatal(ds)
	}
	model := testgen.Build(m)
	if len(model.Unreached) != 0 || len(model.PathEnds) != len(m.States) {
		t.Fatalf("%d of %d states reached, unreached %v", len(model.PathEnds), len(m.States), names(model.Unreached))
	}
	want := map[string][]string{"done": {"declined", "needs_auth", "manual"}, "failed": nil, "auth": {"declined"}, "held": {"declined", "needs_auth"}}
	for _, end := range model.PathEnds {
		w, ok := want[end.To.Name]
		if !ok {
			continue
		}
		step := model.PathTree[end.Node].Step
		var off []string
		for _, g := range step.Off {
			off = append(off, g.Name)
		}
		if !slices.Equal(off, w) {
			t.Errorf("path to %s: guards off %v, want %v", end.To.Name, off, w)
		}
	}
	if _, warnings, err := testgen.Tests(m, "pay.fsm.yaml"); err != nil || len(warnings) != 0 {
		t.Errorf("warnings %v, error %v", warnings, err)
	}
}

// TestUnreachedStateWarned: a state that only a field value no value meets reaches (n at
// least 5 and below 3) is reported as a warning at the state, not left to a log line, and
// a state that needs one field guard to hold and another to fail is reached.
func TestUnreachedStateWarned(t *testing.T) {
	spec := `version: 1
machine: Odd
package: odd
context:
  n: { type: int }
  k: { type: int }
guards:
  big: { field: n, at_least: 5 }
  tiny: { field: n, below: 3 }
  mid: { field: n, below: 7 }
  small: { field: k, below: 5 }
states:
  a: { initial: true }
  b: {}
  c: {}
  d: { terminal: true }
events: { go: {}, on: {} }
transitions:
  - { from: a, on: go, to: b, if: [big, tiny] }
  - { from: a, on: go, to: c, if: [big, mid], unless: small }
  - { from: a, on: go, to: d }
  - { from: b, on: on, to: d }
  - { from: c, on: on, to: d }
`
	m, ds := lower.Load("odd.fsm.yaml", []byte(spec))
	if m == nil || ds.HasErrors() {
		t.Fatal(ds)
	}
	src, warnings, err := testgen.Tests(m, "odd.fsm.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(warnings) != 1 || warnings[0].Severity != diag.Warning || warnings[0].Pos.String() != "odd.fsm.yaml:14:3" ||
		!strings.Contains(warnings[0].Message, `do not reach state "b"`) {
		t.Errorf("warnings: %v", warnings)
	}
	if !bytes.Contains(src, []byte(`// No path the generator found reaches "b" with the fixture's inputs`)) {
		t.Error("the generated tests do not say which state they do not reach")
	}
}

// reachable explores the interpreter from the initial state with random events, random
// roles (nobody included) and hook guards that hold or fail at random, each guard once a
// firing, with the fixture's context: the states it visits are reachable with the
// fixture's inputs, whatever the test generator's path search does.
func reachable(m *ir.Machine, r *rand.Rand, walks, length int) map[*ir.State]bool {
	seen := map[*ir.State]bool{m.Initial: true}
	roles := append([]*ir.Role{nil}, m.Roles...)
	var events []*ir.Event
	for _, e := range m.Events {
		if !e.Internal && len(e.Payload) == 0 {
			events = append(events, e)
		}
	}
	if len(events) == 0 {
		return seen
	}
	policies := make([]bool, len(m.Policies))
	for i := range policies {
		policies[i] = true
	}
	for range walks {
		x := interp.New(m)
		for range length {
			memo := map[*ir.Guard]bool{}
			in := interp.Inputs{
				Role:     roles[r.IntN(len(roles))],
				Policies: policies,
				Context:  testgen.GoodContext(m),
				Guard: func(g *ir.Guard) bool {
					v, ok := memo[g]
					if !ok {
						v = r.IntN(2) == 0
						memo[g] = v
					}
					return v
				},
			}
			x.Fire(events[r.IntN(len(events))], in)
			seen[x.State] = true
		}
	}
	return seen
}

// reachesAll fails t for every state of want that the generated tests' paths do not
// reach.
func reachesAll(t *testing.T, name string, m *ir.Machine, spec []byte, want map[*ir.State]bool) {
	t.Helper()
	reached := map[*ir.State]bool{}
	for _, end := range testgen.Build(m).PathEnds {
		reached[end.To] = true
	}
	for s := range want {
		if !reached[s] {
			t.Errorf("%s: the interpreter reaches %s, the generated tests do not:\n%s", name, s.Name, spec)
		}
	}
}

// TestRandomSpecsReachEveryState draws random flat specs (guard chains of 2 to 6 links,
// roles, required fields, timeouts, counters with limits, checkpoints) and, for every one
// the checker accepts, requires the generated tests' paths to reach every state a random
// exploration of the interpreter reaches, and no warning of an unreached state. Of those
// specs, the first FSMGEN_RANDSPECS_BUILD (make test: 6) are generated, vetted and their
// generated tests run in one module. FSMGEN_RANDSPECS sets how many specs are drawn (make
// test: 300; make test-long: 3,000).
func TestRandomSpecsReachEveryState(t *testing.T) {
	n := fixture.Count(t, "FSMGEN_RANDSPECS", 300)
	build := fixture.Count(t, "FSMGEN_RANDSPECS_BUILD", 6)
	if testing.Short() {
		build = 0
	}
	r := rand.New(rand.NewPCG(30, 1))
	var mod *gocheck.Module
	if build > 0 {
		mod = gocheck.New(t, "../..")
	}
	accepted := 0
	for i := range n {
		spec := randspec.Flat(r, randspec.DefaultOptions())
		name := fmt.Sprintf("random spec %d", i)
		m, ds := lower.Load("rand.fsm.yaml", spec)
		if m == nil || ds.HasErrors() {
			continue
		}
		accepted++
		reachesAll(t, name, m, spec, reachable(m, r, 60, 30))
		if _, warnings, err := testgen.Tests(m, "rand.fsm.yaml"); err != nil || len(warnings) != 0 {
			t.Errorf("%s: %v %v\n%s", name, err, warnings, spec)
		}
		if mod != nil && mod.Len() < build {
			if _, err := mod.Add(name+":\n"+string(spec), spec); err != nil {
				t.Error(err)
			}
		}
	}
	if accepted < n/2 {
		t.Errorf("the checker accepts %d of %d random specs", accepted, n)
	}
	t.Logf("%d of %d random specs accepted", accepted, n)
	if mod != nil {
		mod.Check(t)
	}
}

func names(ss []*ir.State) []string {
	var out []string
	for _, s := range ss {
		out = append(out, s.Name)
	}
	return out
}

// TestRandomChartsReachEveryConfiguration is TestRandomSpecsReachEveryState for random
// statecharts (chartdiff's, with hook guards on chains of transitions of one event, jump
// events to every state, history, parallel regions, eventless transitions): the generated
// tests' paths reach every configuration that a random exploration of the interpreter
// reaches. FSMGEN_RANDCHARTS sets how many charts are drawn (make test: 100).
func TestRandomChartsReachEveryConfiguration(t *testing.T) {
	n := fixture.Count(t, "FSMGEN_RANDCHARTS", 100)
	r := rand.New(rand.NewPCG(30, 2))
	accepted := 0
	for i := 0; accepted < n; i++ {
		if i > 20*n+20 {
			t.Fatalf("the checker accepts %d of %d random charts", accepted, i)
		}
		c := chartdiff.Generate(r, chartdiff.SpecOptions())
		chartdiff.AddJumps(r, c)
		spec := c.SpecYAML()
		m, ds := lower.Load("chart.fsm.yaml", spec)
		if m == nil || ds.HasErrors() {
			continue
		}
		accepted++
		reachesAll(t, fmt.Sprintf("random chart %d", i), m, spec, reachable(m, r, 40, 30))
	}
}

// deepExpressions is random spec 1988 of a make test-long run: s4 is reached only with the
// first transition's guard expression failing in one way (g0, g1 and g3 failing) and then
// an and of six guards holding after guards of two longer expressions were asked. Depth
// first, the search of guard outcomes spent its bound on the later expressions' ways and
// never reached s4.
const deepExpressions = `version: 1
machine: Rand
package: randspec
guards:
  g0: {}
  g1: {}
  g2: {}
  g3: {}
  g4: {}
  g5: {}
  g6: {}
  g7: {}
  g8: {}
  g9: {}
  g10: {}
  g11: {}
  g12: {}
  g13: {}
  g14: {}
  g15: {}
  g16: {}
  g17: {}
  g18: {}
  g19: {}
  g20: {}
context:
  reference: { type: string, required: true }
  amount: { type: int, min: 1 }
states:
  s0: { initial: true, timeout: { after: 59m, on_expiry: expire0 } }
  s1: { requires: [reference], timeout: { after: 26m, on_expiry: expire1 } }
  s2: { timeout: { after: 3m, on_expiry: expire2 } }
  s3: {  }
  s4: { requires: [reference] }
  s5: {  }
  s6: { terminal: true }
events:
  e0: {}
  e1: {}
  e2: {}
  e3: {}
  expire0: {}
  expire1: {}
  expire2: {}
  e7: {}
  e8: {}
  e9: {}
transitions:
  - { from: s0, on: e0, to: s1, if: { or: [{ or: [g0, g1] }, { or: [{ not: g2 }, g3] }] } }
  - { from: s0, on: e0, to: s2, if: g4 }
  - { from: s0, on: e0, to: s3 }
  - { from: s2, on: e1, to: s4, if: { and: [{ not: g5 }, g6, { and: [g7, { not: g8 }, g9] }] } }
  - { from: s2, on: e1, to: s5, if: { and: [g10, { and: [g11, g12, { not: g13 }] }, { or: [g14, g15, g16] }] } }
  - { from: s2, on: e1, to: s6, if: { and: [{ and: [g17, g18] }, g19] } }
  - { from: s0, on: e2, to: s6 }
  - { from: s1, on: e3, to: s1, if: g20 }
  - { from: s0, on: expire0, to: s6 }
  - { from: s1, on: expire1, to: s6 }
  - { from: s2, on: expire2, to: s6 }
  - { from: s3, on: e7, to: s6 }
  - { from: s4, on: e8, to: s6 }
  - { from: s5, on: e9, to: s6 }
`

// TestDeepExpressionsReachEveryState: the guard outcomes are searched breadth first, so
// the bound on runs cannot be spent on later guards before the earlier ones decide
// otherwise.
func TestDeepExpressionsReachEveryState(t *testing.T) {
	m, ds := lower.Load("rand.fsm.yaml", []byte(deepExpressions))
	if m == nil || ds.HasErrors() {
		t.Fatal(ds)
	}
	if model := testgen.Build(m); len(model.Unreached) != 0 {
		t.Fatalf("unreached: %v", names(model.Unreached))
	}
}
