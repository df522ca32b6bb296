package testgen

import (
	"hash/fnv"
	"math/rand/v2"

	"github.com/fsmgen/fsmgen/internal/interp"
	"github.com/fsmgen/fsmgen/internal/ir"
)

// A statechart's rows start from a configuration with nothing recorded in its history
// states; its walks run what single steps cannot: the start, and events one after another,
// so that history recorded is read back, eventless transitions and done events follow one
// another, and the history survives the store.

// Walk is a run of a statechart from its start: the guards off for the whole run (the
// others hold), what starting did, then each event's outcome.
type Walk struct {
	Off        []string
	Start      *ir.State
	StartCalls []string
	Steps      []WalkStep
}

// WalkStep is one event of a walk and its outcome: the configuration after it, the refusal
// ("" when accepted) and the actions run.
type WalkStep struct {
	Event  *ir.Event
	Want   *ir.State
	Reason string
	Calls  []string
}

// numWalks, walkLen: how many walks a statechart gets, and how many events each fires.
const numWalks, walkLen = 6, 40

// walks runs a statechart's walks in the interpreter: from its start, events drawn at random
// (mostly among those accepted), seeded by the machine's fingerprint so that the tests are
// the same on every run. Walk i has guards off at random, none in the first.
func (o *oracle) walks() {
	m := o.m
	h := fnv.New64a()
	h.Write([]byte(ir.Fingerprint(m)))
	rng := rand.New(rand.NewPCG(h.Sum64(), 1))
	events := fireable(m)
	hooks := hookGuards(m)
	for i := range numWalks {
		off := map[*ir.Guard]bool{}
		var w Walk
		for _, g := range hooks {
			if i > 0 && rng.IntN(3) == 0 {
				off[g] = true
				w.Off = append(w.Off, g.Name)
			}
		}
		in := interp.Inputs{Guard: func(g *ir.Guard) bool { return !off[g] }}
		x := interp.New(m)
		st, rej := x.Start(in)
		if rej != nil {
			continue // the start does not settle: no walk (the rows say so)
		}
		w.Start, w.StartCalls = st.To, actionNames(st.Actions)
		for range walkLen {
			if x.State.Terminal {
				break
			}
			e := events[rng.IntN(len(events))]
			if ok := x.Allowed(in); len(ok) > 0 && rng.IntN(5) > 0 {
				e = ok[rng.IntN(len(ok))]
			}
			s := WalkStep{Event: e}
			ein := in
			ein.Payload = goodPayload(e) // as the tests fire it
			st, rej := x.Fire(e, ein)
			if rej != nil {
				s.Reason = string(rej.Reason)
			} else {
				s.Calls = actionNames(st.Actions)
				for _, c := range st.Checkpoint {
					s.Calls = append(s.Calls, "checkpoint:"+c.Name)
				}
			}
			s.Want = x.State
			w.Steps = append(w.Steps, s)
		}
		o.model.Walks = append(o.model.Walks, w)
	}
}

// Active lists, by state of a statechart, the paths of the chart states active in it: its
// atomic states and their ancestors (the root and history states aside).
func (v view) Active() [][]string {
	out := make([][]string, len(v.M.States))
	for _, s := range v.M.States {
		seen := map[*ir.Node]bool{}
		for _, a := range s.Config {
			for n := a; n != nil && n.Parent != nil && !seen[n]; n = n.Parent {
				seen[n] = true
				out[s.Index] = append(out[s.Index], n.Path)
			}
		}
	}
	return out
}

// actionNames lists the actions of a step as the hooks see them run: the effects after
// the others, once the step is committed.
func actionNames(as []*ir.Action) []string {
	var out []string
	for _, effects := range []bool{false, true} {
		for _, a := range as {
			if a.Effect == effects {
				out = append(out, a.Name)
			}
		}
	}
	return out
}
