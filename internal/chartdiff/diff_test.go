package chartdiff

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fsmgen/fsmgen/internal/interp"
	"github.com/fsmgen/fsmgen/internal/ir"
	"github.com/fsmgen/fsmgen/internal/lower"
)

// TestAgainstXState runs random statecharts (depth 3 and more, parallel regions, history,
// guards with fixed values, eventless and done transitions, unhandled events) through
// fsmgen (the spec the chart renders to, checked, compiled and run by the interpreter) and
// through the real XState, and compares the configuration, whether the machine is done and
// the actions run, after starting and after every event. FSMGEN_CHARTDIFF_MACHINES raises
// the number of machines (make fuzz does).
func TestAgainstXState(t *testing.T) {
	const dir = "testdata/xstate"
	if err := NodeReady(dir); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("XState is not installed (%v): .ci/run runs npm ci in %s", err, dir)
		}
		t.Skipf("XState is not installed (%v): run npm ci in internal/chartdiff/%s", err, dir)
	}
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
	refused, loops := 0, 0
	for len(cases) < machines {
		c := Generate(r, SpecOptions())
		jumps := addJumps(r, c)
		spec := c.SpecYAML()
		m, ds := lower.Load("diff.fsm.yaml", spec)
		if ds.HasErrors() {
			refused++
			if refused > 20*machines {
				t.Fatalf("the checker refuses nearly every random chart; the last one:\n%s\n%v", spec, ds)
			}
			continue
		}
		seqs := sequencesWith(r, c, jumps, sequences, length)
		obs, kept, ok := runOurs(m, c, seqs)
		if !ok {
			loops++
			continue
		}
		for i := range seqs {
			if len(kept[i]) < len(seqs[i]) {
				loops++
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
	disagree, compared := 0, 0
	for i, c := range cases {
		for j, seq := range c.Sequences {
			for k := range ours[i][j] {
				compared++
				a, b := ours[i][j][k], theirs[i][j][k]
				if slices.Equal(a.Config, b.Config) && a.Done == b.Done && slices.Equal(a.Actions, b.Actions) {
					continue
				}
				disagree++
				if disagree <= 5 {
					var trace strings.Builder
					for s := 0; s <= k; s++ {
						fmt.Fprintf(&trace, "  %s:\n    fsmgen: %s\n    XState: %s\n", step(seq, s), show(ours[i][j][s]), show(theirs[i][j][s]))
					}
					t.Errorf("machine %d (guards %v), sequence %v, disagree after %s:\n%sspec:\n%s", i, c.Chart.Guards, seq, step(seq, k), trace.String(), specs[i])
				}
				break
			}
		}
	}
	t.Logf("%d machines (%d random charts refused by the checker), %d sequences of %d events, %d observations compared, %d disagreements; %d sequences cut at an eventless loop",
		len(cases), refused, len(cases)*sequences, length, compared, disagree, loops)
}

func step(seq []string, k int) string {
	if k == 0 {
		return "start"
	}
	return fmt.Sprintf("event %d (%s)", k-1, seq[k-1])
}

func show(o Observation) string {
	return fmt.Sprintf("config [%s] done %t actions [%s]", strings.Join(o.Config, " "), o.Done, strings.Join(o.Actions, " "))
}

// runOurs runs each sequence through the interpreter. A sequence is cut before an event
// that fsmgen refuses as an eventless loop (XState would never return); ok is false when
// starting the machine loops.
func runOurs(m *ir.Machine, c *Chart, seqs [][]string) (obs [][]Observation, kept [][]string, ok bool) {
	in := interp.Inputs{Guard: func(g *ir.Guard) bool { return c.Guards[g.Name] }}
	events := map[string]*ir.Event{}
	for _, e := range m.Events {
		if !e.Internal {
			events[e.Name] = e
		}
	}
	for _, seq := range seqs {
		x := interp.New(m)
		st, rej := x.Start(in)
		if rej != nil {
			return nil, nil, false
		}
		got := []Observation{observe(x.State, st.Actions)}
		n := len(seq)
		for i, name := range seq {
			e := events[name]
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
		obs = append(obs, got)
		kept = append(kept, seq[:n])
	}
	return obs, kept, true
}

func observe(s *ir.State, actions []*ir.Action) Observation {
	o := Observation{Done: s.Terminal}
	for _, n := range s.Config {
		o.Config = append(o.Config, n.Path)
	}
	slices.Sort(o.Config)
	for _, a := range actions {
		o.Actions = append(o.Actions, a.Name)
	}
	return o
}

// addJumps makes every state of c reachable, so that the checker accepts it (a random
// chart leaves some unreachable, which the checker refuses): the initial top-level state
// gets a transition on an event of its own to each state. No state within it handles those
// events, so each is taken whenever the machine is in it, as it is at the start. It returns
// the events it added.
func addJumps(r *rand.Rand, c *Chart) []string {
	var top *Node
	for _, n := range c.Root.Children {
		if n.Name == c.Root.Initial {
			top = n
		}
	}
	if top == nil || top.Kind == Final {
		return nil
	}
	var jumps []string
	for _, n := range c.Nodes()[1:] {
		e := fmt.Sprintf("j%d", len(jumps))
		jumps = append(jumps, e)
		c.Events = append(c.Events, e)
		top.On = append(top.On, &Trans{Event: e, Target: n.Path(), Reenter: r.IntN(2) == 0})
	}
	return jumps
}

// sequencesWith draws n sequences of length events: mostly the chart's own events, a jump
// now and then, and an undeclared event, which nothing handles.
func sequencesWith(r *rand.Rand, c *Chart, jumps []string, n, length int) [][]string {
	own := c.Events[:len(c.Events)-len(jumps)]
	out := make([][]string, n)
	for i := range out {
		for range length {
			switch k := r.IntN(20); {
			case k == 0:
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
