package importer

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/fsmgen/fsmgen/internal/chartdiff"
	"github.com/fsmgen/fsmgen/internal/ir"
	"github.com/fsmgen/fsmgen/internal/lower"
)

// prepare makes a random chart fit for the import and the checker: a jump from on (the
// machine itself, or its initial state) to every state, so that none is unreachable, as
// the differential test of package chartdiff does; and no reenter on a transition without
// a target, which XState ignores and the import refuses. It returns the jump events.
func prepare(c *chartdiff.Chart, r *rand.Rand, on *chartdiff.Node) []string {
	var jumps []string
	for _, n := range c.Nodes() {
		for _, t := range n.On {
			if t.Target == "" {
				t.Reenter = false
			}
		}
	}
	if on == nil {
		return nil
	}
	for _, n := range c.Nodes()[1:] {
		e := fmt.Sprintf("j%d", len(jumps))
		jumps = append(jumps, e)
		c.Events = append(c.Events, e)
		on.On = append(on.On, &chartdiff.Trans{Event: e, Target: n.Path(), Reenter: r.IntN(2) == 0})
	}
	return jumps
}

// TestRandomCharts imports random charts of package chartdiff (its default options: the
// machine itself may be parallel, and has transitions of its own, so that the import wraps
// it) from their XState configs. The import must refuse nothing, and the checker must
// accept 50 of them. The checker refuses some charts for what they are (a transition that
// would leave a parallel state without a region, say), as it refuses their spec in
// chartdiff's own differential test; those are counted, and must be few.
func TestRandomCharts(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	accepted, refused := 0, 0
	for i := 0; accepted < 50; i++ {
		c := chartdiff.Generate(r, chartdiff.DefaultOptions())
		prepare(c, r, c.Root)
		cfg, err := c.XStateConfig()
		if err != nil {
			t.Fatal(err)
		}
		spec, _, ds := convert(XState, "random.json", cfg, Options{Events: c.Events})
		if spec == nil || len(ds) > 0 {
			t.Fatalf("chart %d: refused:\n%s\nconfig:\n%s", i, text(ds), cfg)
		}
		if ds := lower.Check("random.fsm.yaml", spec); ds.HasErrors() {
			refused++
			t.Logf("chart %d: the checker refuses it:\n%s", i, text(ds))
			if refused > 25 {
				t.Fatalf("the checker refuses %d of %d imported charts; the last one:\n%s\nspec:\n%s", refused, i+1, text(ds), spec)
			}
			continue
		}
		if again, ds := Import(XState, "random.json", cfg, Options{Events: c.Events}); !slices.Equal(again, spec) || ds.HasErrors() {
			t.Fatalf("chart %d: Import differs from convert and check", i)
		}
		accepted++
	}
	t.Logf("%d charts accepted, %d refused by the checker", accepted, refused)
}

// TestRandomChartsMeanTheirSpec: for 50 random charts within what an fsmgen spec can say
// (chartdiff.SpecOptions) and that the checker accepts, the import of the chart's XState
// config runs as the spec package chartdiff writes for the same chart (Chart.SpecYAML),
// which its differential test runs against XState itself: the same configurations and
// actions after the start and after every event of random sequences.
func TestRandomChartsMeanTheirSpec(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	compared, steps := 0, 0
	for tries := 0; compared < 50; tries++ {
		if tries > 5000 {
			t.Fatalf("only %d of %d random charts were accepted by the checker", compared, tries)
		}
		c := chartdiff.Generate(r, chartdiff.SpecOptions())
		var top *chartdiff.Node
		for _, n := range c.Root.Children {
			if n.Name == c.Root.Initial {
				top = n
			}
		}
		if top == nil || top.Kind == chartdiff.Final {
			continue
		}
		prepare(c, r, top)
		ref, ds := lower.Load("diff.fsm.yaml", c.SpecYAML())
		if ds.HasErrors() {
			continue // the checker refuses the chart itself
		}
		cfg, err := c.XStateConfig()
		if err != nil {
			t.Fatal(err)
		}
		spec, ds := Import(XState, "random.json", cfg, Options{Events: c.Events})
		if spec == nil {
			t.Errorf("chart %d: refused, although the checker accepts the chart's own spec:\n%s\nconfig:\n%s", tries, text(ds), cfg)
			continue
		}
		m, ds := lower.Load("random.fsm.yaml", spec)
		if ds.HasErrors() {
			t.Fatalf("chart %d: %s", tries, text(ds))
		}
		guard := func(g *ir.Guard) bool { return c.Guards[g.Name] }
		for _, seq := range chartdiff.RandomSequences(r, c, 10, 12) {
			want, got := runMachine(t, ref, guard, seq), runMachine(t, m, guard, seq)
			steps += len(seq)
			if !slices.Equal(got, want) {
				t.Errorf("chart %d, events %v:\nimported:\n  %s\nchartdiff's spec:\n  %s\nimported spec:\n%s\nchartdiff's spec:\n%s",
					tries, seq, strings.Join(got, "\n  "), strings.Join(want, "\n  "), spec, c.SpecYAML())
				break
			}
		}
		compared++
	}
	t.Logf("%d charts, %d events compared", compared, steps)
}
