package fsmrt

import (
	"context"
	"encoding/json"
	"time"
)

// Description is a machine type as a reader of its store sees it: its states in spec
// order, its events, its transitions, its timeouts and its counters, by spec name. An
// inspector draws and queries stored instances from it. A program gets one from any
// machine of the generated type (m.Describe()); fsmgen builds the same from the spec.
type Description struct {
	// Machine is the machine's name in a store (Spec.Name: "review.Task"); Spec its
	// fingerprint.
	Machine, Spec string
	// Chart says the machine is a statechart: its States are its configurations and its
	// Transitions its microsteps.
	Chart  bool
	States []StateDescription
	Events []string
	// Levels are the timeout levels' names, by value (the generated TimeoutLevel) less one.
	Levels      []string
	Transitions []TransitionDescription
	Counters    []CounterDescription
	// Current, when not nil, reads instance id of store as the machine's own code replays
	// it (its counters, context and time in state); Machine.Describe sets it.
	Current func(ctx context.Context, store Store, id string) (Current, error)
}

// StateDescription describes one state.
type StateDescription struct {
	Name              string
	Initial, Terminal bool
	// Timeout is the spec's timeout (0: none); Levels its levels, in increasing order;
	// Expiry the event its expiry fires ("" when it only reports).
	Timeout time.Duration
	Levels  []LevelDescription
	Expiry  string
}

// LevelDescription is a level of a state's timeout: Name ("warn") is reached at Percent of
// the timeout; its deadline in a store is named "level:" + Name.
type LevelDescription struct {
	Name    string
	Percent int
}

// TransitionDescription is one declared transition, by index into the description's
// States and Events: To lists every state it can enter (its target, the states a history
// target or a choice can go to, a counter's redirect).
type TransitionDescription struct {
	From, Events, To []int
}

// CounterDescription describes one counter: Limit is the count whose increment trips it
// (0: none) and Then the state a tripped limit goes to ("": it refuses).
type CounterDescription struct {
	Name     string
	PerState bool
	Limit    int
	Then     string
}

// Current is a stored instance as its machine replays it.
type Current struct {
	State   string
	Version int64
	// Context is the machine's context in JSON.
	Context json.RawMessage
	// Counters are the counters that are not zero (State set for a per-state counter).
	Counters []CounterValue
	// CreatedAt and EnteredAt are when the instance was created and entered its state
	// (zero for a machine that keeps no time).
	CreatedAt, EnteredAt time.Time
	// Migrated names the older spec the instance is stored under, when it is.
	Migrated string
}

// Describe returns the description of m's machine type. Its Current replays an instance
// with a new machine of the same type, running no hook.
func (m *Machine[S, E, R, C, X]) Describe() Description {
	d := m.def
	out := Description{Machine: d.Spec.Name(), Spec: d.Spec.Fingerprint, Chart: d.Chart != nil, Levels: append([]string(nil), d.LevelNames...)}
	for i, s := range d.States {
		sd := StateDescription{Name: S(i).String(), Initial: S(i) == d.Initial, Terminal: s.Terminal, Timeout: s.Timeout}
		for j, p := range s.Levels {
			if v := s.LevelValues[j]; v >= 1 && v <= len(d.LevelNames) {
				sd.Levels = append(sd.Levels, LevelDescription{Name: d.LevelNames[v-1], Percent: p})
			}
		}
		if s.Expires {
			sd.Expiry = E(s.Expiry).String()
		}
		out.States = append(out.States, sd)
	}
	for i := range d.NumEvents {
		out.Events = append(out.Events, E(i).String())
	}
	ints := func(xs []int32) []int {
		o := make([]int, len(xs))
		for i, x := range xs {
			o[i] = int(x)
		}
		return o
	}
	for _, t := range d.Transitions {
		out.Transitions = append(out.Transitions, TransitionDescription{From: ints(t.From), Events: ints(t.On), To: ints(t.To)})
	}
	for _, c := range d.Counters {
		cd := CounterDescription{Name: c.Name, PerState: c.PerState, Limit: c.Limit}
		if c.Then >= 0 {
			cd.Then = S(c.Then).String()
		}
		out.Counters = append(out.Counters, cd)
	}
	out.Current = func(ctx context.Context, store Store, id string) (Current, error) {
		var n Machine[S, E, R, C, X]
		Init(&n, d, nil)
		if err := Replay(ctx, &n, store, id, nil); err != nil {
			return Current{}, err
		}
		ctxJSON, err := json.Marshal(n.Context)
		if err != nil {
			return Current{}, err
		}
		return Current{State: n.state.String(), Version: n.seq, Context: ctxJSON, Counters: n.counterValues(),
			CreatedAt: n.createdAt, EnteredAt: n.enteredAt, Migrated: n.migrated}, nil
	}
	return out
}
