package chartdiff

import (
	"context"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fsmgen/fsmgen/internal/lower"
)

// TestAgainstXState runs random statecharts (depth 3 and more, parallel regions, history,
// guards with fixed values, eventless and done transitions, unhandled events) through
// fsmgen (the spec the chart renders to, checked, compiled and run by the interpreter) and
// through the real XState, and compares the configuration, whether the machine is done and
// the actions run, after starting and after every event. FSMGEN_CHARTDIFF_MACHINES raises
// the number of machines (make fuzz does).
func TestAgainstXState(t *testing.T) {
	needXState(t)
	const dir = xstateDir
	machines, sequences, length := 300, 30, 10
	if s := os.Getenv("FSMGEN_CHARTDIFF_MACHINES"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			t.Fatalf("FSMGEN_CHARTDIFF_MACHINES=%q: want a positive number", s)
		}
		machines = n
	}
	r := rand.New(rand.NewPCG(1, 2))
	var cases []Case
	var ours [][][]Observation
	var specs [][]byte
	refused, loops, multi, parHistory, wildcards, raising, logic, delayed := 0, 0, 0, 0, 0, 0, 0, 0
	delayedPar := 0 // delayed transitions of states within regions of parallel states
	together := 0   // pairs of states with delays that can be active together, each on its own clock
	for len(cases) < machines {
		c := Generate(r, SpecOptions())
		jumps := AddJumps(r, c)
		spec := c.SpecYAML()
		m, ds := lower.Load("diff.fsm.yaml", spec)
		if ds.HasErrors() {
			refused++
			if refused > 20*machines {
				t.Fatalf("the checker refuses nearly every random chart; the last one:\n%s\n%v", spec, ds)
			}
			continue
		}
		// fsmgen has no undeclared events: "*" takes what XState's takes of those it
		// declares, so a chart with "*" is sent none.
		seqs := sequencesWith(r, c, jumps, sequences, length, !c.Wildcard())
		obs, kept, ok := RunFsmgen(m, c, seqs, "")
		if !ok {
			loops++
			continue
		}
		for i := range seqs {
			if len(kept[i]) < len(seqs[i]) {
				loops++
			}
		}
		multi += c.count(func(t *Trans) bool { return len(t.More) > 0 })
		wildcards += c.count(func(t *Trans) bool { return strings.HasSuffix(t.Event, "*") })
		raising += c.count(func(t *Trans) bool { return len(t.Raise) > 0 })
		logic += c.count(func(t *Trans) bool { return t.Expr != nil })
		delayed += c.count(func(t *Trans) bool { return t.Delay > 0 })
		for _, n := range c.Nodes() {
			for p := n.Parent; p != nil && len(n.On) > 0 && n.On[len(n.On)-1].Delay > 0; p = p.Parent {
				if p.Kind == Parallel {
					delayedPar++
					break
				}
			}
		}
		var owners []*Node
		for _, n := range c.Nodes() {
			if slices.ContainsFunc(n.On, func(t *Trans) bool { return t.Delay > 0 }) {
				for _, o := range owners {
					if o == n || isDescendant(o, n) || isDescendant(n, o) || lca(o, n).Kind == Parallel {
						together++
					}
				}
				owners = append(owners, n)
			}
		}
		for _, n := range c.Nodes() {
			if n.Kind.IsHistory() && n.Parent.Kind == Parallel {
				parHistory++
			}
		}
		cases = append(cases, Case{Chart: c, Sequences: kept})
		ours = append(ours, obs)
		specs = append(specs, spec)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	theirs, err := RunXState(ctx, dir, cases)
	if err != nil {
		t.Fatal(err)
	}
	compared, diffs := Compare(cases, ours, theirs)
	for _, d := range diffs[:min(len(diffs), 5)] {
		c := cases[d.Case]
		seq := c.Sequences[d.Sequence]
		t.Errorf("machine %d (guards %v), sequence %v, disagree after %s:\n%sspec:\n%s", d.Case, c.Chart.Guards, seq, stepName(seq, d.Step), d.Trace, specs[d.Case])
	}
	disagree := len(diffs)
	t.Logf("%d machines (%d random charts refused by the checker), %d sequences of %d events, %d observations compared, %d disagreements; %d sequences cut at an eventless loop; %d transitions with several targets, %d history states of parallel states, %d transitions on wildcards, %d transitions that raise an event, %d guard expressions, %d delayed transitions (states with delays within regions of parallel states: %d; pairs of states with delays active together: %d)",
		len(cases), refused, len(cases)*sequences, length, compared, disagree, loops, multi, parHistory, wildcards, raising, logic, delayed, delayedPar, together)
	if multi == 0 || parHistory == 0 || wildcards == 0 || raising == 0 || logic == 0 || delayed == 0 || delayedPar == 0 || together == 0 {
		t.Error("no chart has a transition with several targets, a history state of a parallel state, a transition on a wildcard, one that raises an event, a guard expression, or a delayed transition (in a region of a parallel state)")
	}
}

// sequencesWith draws n sequences of length events: mostly the chart's own events, a jump
// now and then, and an undeclared event, which nothing handles.
func sequencesWith(r *rand.Rand, c *Chart, jumps []string, n, length int, undeclared bool) [][]string {
	own := c.Events[:len(c.Events)-len(jumps)]
	out := make([][]string, n)
	for i := range out {
		for range length {
			switch k := r.IntN(20); {
			case k >= 16 && c.HasDelays():
				out[i] = append(out[i], waitStep(r))
			case k == 0 && undeclared:
				out[i] = append(out[i], "zz")
			case k < 5 && len(jumps) > 0:
				out[i] = append(out[i], jumps[r.IntN(len(jumps))])
			default:
				out[i] = append(out[i], own[r.IntN(len(own))])
			}
		}
	}
	return out
}
