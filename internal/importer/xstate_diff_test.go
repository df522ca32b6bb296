package importer

import (
	"context"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fsmgen/fsmgen/internal/chartdiff"
	"github.com/fsmgen/fsmgen/internal/interp"
	"github.com/fsmgen/fsmgen/internal/ir"
	"github.com/fsmgen/fsmgen/internal/lower"
)

// TestAgainstXState runs imported random charts (chartdiff's default options: the machine
// itself has transitions of its own, and may be parallel, so that the import wraps it in a
// state) in the interpreter and in the real XState (package chartdiff's runner, when node
// and xstate are installed), and compares the configurations (the wrapping state's name
// left out), whether the machine is done, and the actions run, after the start and after
// every event.
func TestAgainstXState(t *testing.T) {
	const dir = "../chartdiff/testdata/xstate"
	if err := chartdiff.NodeReady(dir); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("XState is not installed (%v): .ci/run runs npm ci in internal/chartdiff/testdata/xstate", err)
		}
		t.Skipf("XState is not installed (%v): run npm ci in internal/chartdiff/testdata/xstate", err)
	}
	r := rand.New(rand.NewPCG(9, 10))
	var cases []chartdiff.Case
	var ours [][][]chartdiff.Observation
	var specs [][]byte
	for tries := 0; len(cases) < 100; tries++ {
		c := chartdiff.Generate(r, chartdiff.DefaultOptions())
		prepare(c, r, c.Root)
		cfg, err := c.XStateConfig()
		if err != nil {
			t.Fatal(err)
		}
		spec, ds := Import(XState, "random.json", cfg, Options{})
		if spec == nil {
			continue // the checker refuses the chart (TestRandomCharts counts those)
		}
		m, ds := lower.Load("random.fsm.yaml", spec)
		if ds.HasErrors() {
			t.Fatal(text(ds))
		}
		seqs := chartdiff.RandomSequences(r, c, 20, 10)
		obs, kept, ok := observeAll(m, c, seqs)
		if !ok {
			continue // starting loops: XState would not return
		}
		cases = append(cases, chartdiff.Case{Chart: c, Sequences: kept})
		ours = append(ours, obs)
		specs = append(specs, spec)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	theirs, err := chartdiff.RunXState(ctx, dir, cases)
	if err != nil {
		t.Fatal(err)
	}
	disagree, compared := 0, 0
	for i, cs := range cases {
		for j, seq := range cs.Sequences {
			for k := range ours[i][j] {
				compared++
				a, b := ours[i][j][k], theirs[i][j][k]
				if slices.Equal(a.Config, b.Config) && a.Done == b.Done && slices.Equal(a.Actions, b.Actions) {
					continue
				}
				disagree++
				if disagree <= 3 {
					t.Errorf("chart %d, events %v, after %d: fsmgen %v, XState %v\nspec:\n%s", i, seq, k, a, b, specs[i])
				}
				break
			}
		}
	}
	t.Logf("%d charts, %d observations compared, %d disagreements", len(cases), compared, disagree)
}

// observeAll runs each sequence, cutting it before an event the interpreter refuses as an
// eventless loop (XState would not return); ok is false when starting the machine loops.
func observeAll(m *ir.Machine, c *chartdiff.Chart, seqs [][]string) (obs [][]chartdiff.Observation, kept [][]string, ok bool) {
	in := interp.Inputs{Guard: func(g *ir.Guard) bool { return c.Guards[g.Name] }}
	wrap := ""
	if m.Chart != nil && len(m.Chart.Nodes) > 1 && m.Chart.Nodes[1].Name == "machine" {
		wrap = "machine."
	}
	observe := func(s *ir.State, as []*ir.Action) chartdiff.Observation {
		o := chartdiff.Observation{Done: s.Terminal}
		for _, n := range s.Config {
			o.Config = append(o.Config, strings.TrimPrefix(n.Path, wrap))
		}
		slices.Sort(o.Config)
		for _, a := range as {
			o.Actions = append(o.Actions, a.Name)
		}
		return o
	}
	for _, seq := range seqs {
		x := interp.New(m)
		st, rej := x.Start(in)
		if rej != nil {
			return nil, nil, false
		}
		got := []chartdiff.Observation{observe(x.State, st.Actions)}
		n := len(seq)
		for i, name := range seq {
			var e *ir.Event
			for _, ev := range m.Events {
				if ev.Name == name && !ev.Internal {
					e = ev
				}
			}
			if e == nil {
				got = append(got, observe(x.State, nil))
				continue
			}
			st, rej := x.Fire(e, in)
			if rej != nil {
				if rej.Reason == interp.EventlessLoop {
					n = i
					break
				}
				got = append(got, observe(x.State, nil))
				continue
			}
			got = append(got, observe(st.To, st.Actions))
		}
		obs, kept = append(obs, got), append(kept, seq[:n])
	}
	return obs, kept, true
}
