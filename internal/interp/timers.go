package interp

import (
	"slices"
	"time"

	"github.com/fsmgen/fsmgen/internal/ir"
)

// Timers keeps time for a Machine as the runtime does (fsmrt.ExpireNext): a statechart
// state's delays count from when that state was entered (a microstep that enters it,
// Transition.Enters, starts its clock again), whatever the other states do; the
// configuration's timeout counts from when its state was entered (a macrostep whose
// microsteps all keep that state active, KeepsClock, keeps it; in a flat machine, an
// internal transition). Each timer fires once a stay of its state; of those due, the first
// due fires first, and of those due at once a delay before the timeout, then the one whose
// state was entered first (at an earlier time, or by an earlier microstep), then the first
// in document order. Time starts at 0, when the machine starts.
type Timers struct {
	now, since time.Duration
	fired      map[*ir.Event]bool // the timeout's and a flat state's delays, this stay
	starts     map[*ir.Node]time.Duration
	order      map[*ir.Node]int // the microstep that entered each state, counted by entered
	entered    int
	firedAt    map[*ir.Event]time.Duration // a chart state's delay: the start of the stay it fired in
}

// NewTimers returns the timers of a machine started at time 0.
func NewTimers() *Timers {
	return &Timers{fired: map[*ir.Event]bool{}, starts: map[*ir.Node]time.Duration{}, order: map[*ir.Node]int{}, firedAt: map[*ir.Event]time.Duration{}}
}

// Now is the time the timers are at.
func (k *Timers) Now() time.Duration { return k.now }

// Moved accounts for step st, taken now: the states it entered start their clocks again,
// the timeout's stay goes on when every microstep keeps its clock, and a delay's event
// counts as fired unless its state was entered again.
func (k *Timers) Moved(st *Step) {
	keep := len(st.Micro) > 0 || st.Transition != nil && st.Transition.Target.Kind == ir.Internal
	for _, t := range st.Micro {
		keep = keep && t.KeepsClock
		if len(t.Enters) > 0 {
			k.entered++
		}
		for _, n := range t.Enters {
			k.starts[n], k.order[n] = k.now, k.entered
		}
	}
	if !keep {
		k.since, k.fired = k.now, map[*ir.Event]bool{}
	}
	k.mark(st.From, st.Event)
}

// mark records that the delay of a chart state in s whose event is e fired now, unless
// its state was entered again.
func (k *Timers) mark(s *ir.State, e *ir.Event) {
	for _, dl := range s.Delays {
		if dl.Event == e && dl.Node != nil && k.starts[dl.Node] != k.now {
			k.firedAt[e] = k.starts[dl.Node]
		}
	}
}

// start returns when timer dl of the current state started counting, and whether it fired
// this stay.
func (k *Timers) start(dl *ir.Delay) (time.Duration, bool) {
	if dl.Node == nil {
		return k.since, k.fired[dl.Event]
	}
	s := k.starts[dl.Node]
	at, ok := k.firedAt[dl.Event]
	return s, ok && at == s
}

// Wait lets d pass on x, firing the timers that fall due, in order, each at its deadline,
// with inputs in; it returns the steps taken (a timer whose event the machine refuses has
// fired all the same, and takes none).
func (k *Timers) Wait(x *Machine, d time.Duration, in Inputs) []*Step {
	end := k.now + d
	var steps []*Step
	for {
		var next *ir.Delay
		var due, from time.Duration
		order := 0
		for _, dl := range timersOf(x.State) {
			s, fired := k.start(dl)
			at := s + dl.After
			if fired || at > end {
				continue
			}
			o := 0
			if dl.Node != nil {
				o = k.order[dl.Node]
			}
			if next == nil || at < due || at == due && dl.Node != nil && (next.Node == nil || s < from || s == from && o < order) {
				next, due, from, order = dl, at, s, o
			}
		}
		if next == nil {
			break
		}
		k.now = due
		if next.Node == nil {
			k.fired[next.Event] = true
		} else {
			k.firedAt[next.Event] = from
		}
		if st, rej := x.Fire(next.Event, in); rej == nil {
			steps = append(steps, st)
			k.Moved(st)
		}
	}
	k.now = end
	return steps
}

// timersOf are the timers of state s: its delays, and its timeout's expiry (last, so that a
// delay due at the same instant fires first; a timeout without on_expiry fires nothing).
func timersOf(s *ir.State) []*ir.Delay {
	out := s.Delays
	if t := s.Timeout; t != nil && t.OnExpiry != nil {
		out = append(slices.Clip(out), &ir.Delay{After: t.After, Event: t.OnExpiry})
	}
	return out
}
