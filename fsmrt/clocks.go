package fsmrt

import (
	"fmt"
	"slices"
	"time"
)

// A statechart's clocks. Each chart state with delays of its own has a clock (a slot of
// Chart.Clocks), restarted when a microstep enters the state (Transition.Enters), which its
// delays count on (DelayDef.Clock) whatever the other states do: two regions of a parallel
// state wait each their own delays, and a transition of one restarts none of the other's.
// Each delay fires once a stay of its state: which fired is kept by slot, for the stay that
// began at firedAt.

// chartClocks are a statechart's clocks, by slot (nil slices for a machine without).
type chartClocks struct {
	start, firedAt []time.Time
	fired          []uint64
	// order says in which order the states were entered, for delays due at the same
	// instant of states entered at the same instant (XState schedules the first entered
	// first): the microstep that entered each, counted by entered (0: on starting, or
	// before the snapshot the machine was restored from).
	order   []uint64
	entered uint64
	// before are the starts and orders before the macrostep being taken, which an eventless
	// loop puts back (save, restore).
	before      []time.Time
	orderBefore []uint64
	// keptUntil is, after a macrostep that left the configuration's timeout counting on
	// (Transition.KeepsClock) but changed the clocks, when it happened: the timeout's
	// deadlines due by then are not armed again (zero otherwise).
	keptUntil time.Time
}

func newChartClocks(n int) chartClocks {
	if n == 0 {
		return chartClocks{}
	}
	return chartClocks{start: make([]time.Time, n), firedAt: make([]time.Time, n), fired: make([]uint64, n), order: make([]uint64, n),
		before: make([]time.Time, n), orderBefore: make([]uint64, n)}
}

// save keeps the starts before a macrostep.
func (c *chartClocks) save() {
	copy(c.before, c.start)
	copy(c.orderBefore, c.order)
}

// restore puts back the starts save kept.
func (c *chartClocks) restore() {
	copy(c.start, c.before)
	copy(c.order, c.orderBefore)
}

// copyFrom copies o's values into c's slices (which have o's lengths).
func (c *chartClocks) copyFrom(o *chartClocks) {
	copy(c.start, o.start)
	copy(c.firedAt, o.firedAt)
	copy(c.fired, o.fired)
	copy(c.order, o.order)
	c.entered, c.keptUntil = o.entered, o.keptUntil
}

// reset starts every clock at at, none fired.
func (c *chartClocks) reset(at time.Time) {
	for i := range c.start {
		c.start[i], c.firedAt[i], c.fired[i], c.order[i] = at, time.Time{}, 0, 0
	}
	c.entered, c.keptUntil = 0, time.Time{}
}

// enter restarts at at the clocks of the states transition t enters.
func (c *chartClocks) enter(t *Transition, at time.Time) {
	if len(t.Enters) == 0 {
		return
	}
	c.entered++
	for _, s := range t.Enters {
		c.start[s], c.order[s] = at, c.entered
	}
}

// delayOrder returns the order delay dl's state was entered in (0 for a delay on the
// configuration's clock).
func (m *Machine[S, E, R, C, X]) delayOrder(dl *DelayDef) uint64 {
	if dl.Clock > 0 && int(dl.Clock) <= len(m.clocks.order) {
		return m.clocks.order[dl.Clock-1]
	}
	return 0
}

// delayStart returns when delay dl of the current configuration started counting: its
// state's clock, or the configuration's (since).
func (m *Machine[S, E, R, C, X]) delayStart(dl *DelayDef) time.Time {
	if dl.Clock > 0 && int(dl.Clock) <= len(m.clocks.start) {
		return m.clocks.start[dl.Clock-1]
	}
	return m.since
}

// clockFired reports whether delay dl, which counts on a state's clock, has fired this stay
// of its state.
func (m *Machine[S, E, R, C, X]) clockFired(dl *DelayDef) bool {
	c := &m.clocks
	s := dl.Clock - 1
	return c.fired[s]&(1<<m.def.delayBit[dl.Event]) != 0 && c.firedAt[s].Equal(c.start[s])
}

// markFired records that the delay raising event e (when it is one that counts on a state's
// clock) fired at at, unless its state was entered again at at, a new stay.
func (m *Machine[S, E, R, C, X]) markFired(e int32, at time.Time) {
	d := m.def
	if m.clocks.start == nil || int(e) >= len(d.delaySlot) || d.delaySlot[e] == 0 {
		return
	}
	c := &m.clocks
	s := d.delaySlot[e] - 1
	if c.start[s].Equal(at) {
		return
	}
	if !c.firedAt[s].Equal(c.start[s]) {
		c.firedAt[s], c.fired[s] = c.start[s], 0
	}
	c.fired[s] |= 1 << d.delayBit[e]
}

// buildClocks indexes the delays that count on a state's clock by event: their slot (from
// 1) and their bit among the delays of their state.
func (d *Def[S, E, R]) buildClocks() {
	if d.Chart == nil || len(d.Chart.Clocks) == 0 {
		return
	}
	d.delaySlot = make([]int32, d.NumEvents)
	d.delayBit = make([]uint8, d.NumEvents)
	for _, st := range d.States {
		for i, dl := range st.Delays {
			if dl.Clock == 0 || d.delaySlot[dl.Event] != 0 {
				continue
			}
			bit := 0
			for j := i - 1; j >= 0 && st.Delays[j].Clock == dl.Clock; j-- {
				bit++
			}
			d.delaySlot[dl.Event], d.delayBit[dl.Event] = dl.Clock, uint8(bit)
		}
	}
}

// clocksMoved reports whether a macrostep from configuration from to to (t: the event's
// microstep, m.micro the others) changed the chart's clocks: entered a state with a clock,
// or changed the delays armed.
func (m *Machine[S, E, R, C, X]) clocksMoved(t *Transition, from, to S) bool {
	d := m.def
	if len(t.Enters) > 0 || !slices.Equal(d.States[from].Delays, d.States[to].Delays) {
		return true
	}
	for _, x := range m.micro {
		if len(d.Transitions[x].Enters) > 0 {
			return true
		}
	}
	return false
}

// snapshotClocks returns the clocks a snapshot keeps: by state path, the start of each
// clock of the configuration that did not start with the configuration's own (since), and
// the events of the delays that fired this stay.
func (m *Machine[S, E, R, C, X]) snapshotClocks() (starts map[string]time.Time, fired map[string][]string) {
	c := m.def.Chart
	if c == nil || m.clocks.start == nil {
		return nil, nil
	}
	for s, n := range c.Clocks {
		if !In(m.def, m.state, int(n)) {
			continue
		}
		path := c.Nodes[n]
		if !m.clocks.start[s].Equal(m.since) {
			if starts == nil {
				starts = map[string]time.Time{}
			}
			starts[path] = m.clocks.start[s]
		}
		if m.clocks.fired[s] != 0 && m.clocks.firedAt[s].Equal(m.clocks.start[s]) {
			var evs []string
			for e, slot := range m.def.delaySlot {
				if slot == int32(s+1) && m.clocks.fired[s]&(1<<m.def.delayBit[e]) != 0 {
					evs = append(evs, E(e).String())
				}
			}
			if fired == nil {
				fired = map[string][]string{}
			}
			fired[path] = evs
		}
	}
	return starts, fired
}

// restoreClocks checks and decodes the clocks of a snapshot of configuration s, whose
// clocks start at since but those starts names; it returns the clocks to install.
func (m *Machine[S, E, R, C, X]) restoreClocks(s S, since, created time.Time, starts map[string]time.Time, fired map[string][]string) (chartClocks, error) {
	d := m.def
	c := d.Chart
	if c == nil || len(c.Clocks) == 0 || !d.Timing {
		if len(starts) > 0 || len(fired) > 0 {
			return chartClocks{}, fmt.Errorf("the machine has no clocks of its states")
		}
		return chartClocks{}, nil
	}
	out := newChartClocks(len(c.Clocks))
	out.reset(since)
	slot := func(path string) (int, error) {
		for i, n := range c.Clocks {
			if c.Nodes[n] == path {
				if !In(d, s, int(n)) {
					return 0, fmt.Errorf("%s is not active in %s", path, s)
				}
				return i, nil
			}
		}
		return 0, fmt.Errorf("%q is not a state with delays", path)
	}
	for path, at := range starts {
		i, err := slot(path)
		if err != nil {
			return out, err
		}
		if at.Before(created) {
			return out, fmt.Errorf("%s: %v is before createdAt %v", path, at, created)
		}
		out.start[i] = at
	}
	for path, evs := range fired {
		i, err := slot(path)
		if err != nil {
			return out, err
		}
		out.firedAt[i] = out.start[i]
		for _, name := range evs {
			e, ok := named[E](d.NumEvents, name)
			if !ok || d.delaySlot[e] != int32(i+1) {
				return out, fmt.Errorf("%s: %q is not one of its delays' events", path, name)
			}
			out.fired[i] |= 1 << d.delayBit[e]
		}
	}
	return out, nil
}
