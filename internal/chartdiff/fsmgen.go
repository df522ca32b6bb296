package chartdiff

import (
	"fmt"
	"slices"
	"strings"

	"github.com/fsmgen/fsmgen/internal/interp"
	"github.com/fsmgen/fsmgen/internal/ir"
)

// RunFsmgen runs each sequence through fsmgen's interpreter on m, the compiled spec of c,
// observing as RunXState does. A path prefix strip (a state the spec wraps the chart in) is
// left out of the configurations. A sequence is cut before an event that fsmgen refuses as
// an eventless loop (XState would never return): kept holds what was run. ok is false when
// starting the machine loops.
func RunFsmgen(m *ir.Machine, c *Chart, seqs [][]string, strip string) (obs [][]Observation, kept [][]string, ok bool) {
	in := interp.Inputs{Guard: func(g *ir.Guard) bool { return c.Guards[g.Name] }}
	events := map[string]*ir.Event{}
	for _, e := range m.Events {
		if !e.Internal {
			events[e.Name] = e
		}
	}
	observe := func(s *ir.State, actions []*ir.Action) Observation {
		o := Observation{Done: s.Terminal}
		for _, n := range s.Config {
			o.Config = append(o.Config, strings.TrimPrefix(n.Path, strip))
		}
		slices.Sort(o.Config)
		for _, a := range actions {
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
		got := []Observation{observe(x.State, st.Actions)}
		clock := interp.NewTimers()
		n := len(seq)
		for i, name := range seq {
			if d, ok := waitOf(name); ok {
				var actions []*ir.Action
				for _, st := range clock.Wait(x, d, in) {
					actions = append(actions, st.Actions...)
				}
				got = append(got, observe(x.State, actions))
				continue
			}
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
			clock.Moved(st)
			got = append(got, observe(st.To, st.Actions))
		}
		obs = append(obs, got)
		kept = append(kept, seq[:n])
	}
	return obs, kept, true
}

// Disagreement is the first observation of a sequence on which two runs differ.
type Disagreement struct {
	Case, Sequence, Step int
	// Trace shows both runs from the start up to the step that differs.
	Trace string
}

// Compare compares fsmgen's observations with XState's, case by case, sequence by
// sequence; it returns the number of observations compared and the first difference of
// each sequence that has one.
func Compare(cases []Case, ours, theirs [][][]Observation) (compared int, out []Disagreement) {
	for i, c := range cases {
		for j, seq := range c.Sequences {
			for k := range ours[i][j] {
				compared++
				a, b := ours[i][j][k], theirs[i][j][k]
				if slices.Equal(a.Config, b.Config) && a.Done == b.Done && slices.Equal(a.Actions, b.Actions) {
					continue
				}
				var trace strings.Builder
				for s := 0; s <= k; s++ {
					fmt.Fprintf(&trace, "  %s:\n    fsmgen: %s\n    XState: %s\n", stepName(seq, s), ours[i][j][s], theirs[i][j][s])
				}
				out = append(out, Disagreement{Case: i, Sequence: j, Step: k, Trace: trace.String()})
				break
			}
		}
	}
	return compared, out
}

func stepName(seq []string, k int) string {
	if k == 0 {
		return "start"
	}
	return fmt.Sprintf("event %d (%s)", k-1, seq[k-1])
}

// String shows an observation in one line.
func (o Observation) String() string {
	return fmt.Sprintf("config [%s] done %t actions [%s]", strings.Join(o.Config, " "), o.Done, strings.Join(o.Actions, " "))
}
