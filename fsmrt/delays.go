package fsmrt

import (
	"context"
	"errors"
	"strings"
	"time"
)

// Delays. A state's delayed transitions that wait several delays, or a delay beside the
// state's timeout, give it a clock per delay (StateDef.Delays): each counts from when the
// state was entered (in a statechart, the state whose clock the configuration has,
// StateDef.Clock) and raises its own event once a stay when it runs out. With a store,
// each is a deadline of its own (named DelayDeadline(event)), armed when the state is
// entered, disarmed when it is left, and fired by the scheduler (FireDue) as an expiry is;
// without one, ExpireNext fires them.

// DelayDef is one delay of a state: how long it waits, and the event it raises then.
type DelayDef struct {
	After time.Duration
	Event int32
	// Clock is, in a statechart, the clock the delay counts on (a slot of Chart.Clocks,
	// from 1): its state's, started when that state was entered. 0: the configuration's.
	Clock int32
}

// deadlineDelay starts the name of a delay's deadline; the delay's event name follows.
const deadlineDelay = "after:"

// DelayDeadline is the name of the deadline of the delay that raises event, for
// Query.Deadline.
func DelayDeadline(event string) string { return deadlineDelay + event }

// isDelayDeadline reports whether name is the name of a delay's deadline.
func isDelayDeadline(name string) bool {
	return strings.HasPrefix(name, deadlineDelay) && len(name) > len(deadlineDelay)
}

// firedDelays says which delays of a stay have fired: the stay in state in (or a
// configuration sharing its clock) whose clock started at since; bit i for delay i.
type firedDelays struct {
	in    int32
	since time.Time
	bits  uint64
}

// waits reports whether state s has delays (so that entering or leaving it rearms the
// instance's deadlines).
func (m *Machine[S, E, R, C, X]) waits(s S) bool {
	d := m.def
	return d.Timing && int(s) < len(d.States) && len(d.States[s].Delays) > 0
}

// delayDeadlines appends to out the deadlines of the delays of state s, whose clock started
// at at; in a statechart, those of the delays that count on their state's clock, from it,
// but those that fired this stay of their state.
func (m *Machine[S, E, R, C, X]) delayDeadlines(s S, at time.Time, out []Deadline) []Deadline {
	if !m.waits(s) {
		return out
	}
	for i := range m.def.States[s].Delays {
		dl := &m.def.States[s].Delays[i]
		start := at
		if dl.Clock > 0 && s == m.state {
			if m.clockFired(dl) {
				continue
			}
			start = m.delayStart(dl)
		}
		ev := E(dl.Event).String()
		out = append(out, Deadline{Name: DelayDeadline(ev), At: start.Add(dl.After), State: s.String(), Event: ev})
	}
	return out
}

// delayFired reports whether delay i of the current stay has fired.
func (m *Machine[S, E, R, C, X]) delayFired(i int) bool {
	if dl := &m.def.States[m.state].Delays[i]; dl.Clock > 0 {
		return m.clockFired(dl)
	}
	f := &m.fired
	return f.bits&(1<<i) != 0 && f.since.Equal(m.since) && m.def.sameClock(S(f.in), m.state)
}

// ExpireNext fires, of the timers of the current state that have run out at now and not
// fired this stay, the one that ran out first: its timeout's on_expiry event, or the event
// of one of its delays (a delay and the expiry at the same instant: the delay first, as a
// store's scheduler claims them, by deadline and then name). It is fired at its deadline (the input's At,
// never before the machine's last transition), as a store's scheduler fires it, so that
// the state it enters counts its own timers from there; call it until it reports false to
// catch up with now. A timer fires once a stay: one whose event leaves the machine in the
// state (an internal transition, a guard that refuses it) does not fire again until the
// state is entered again. It reports whether it fired and the state the machine is in.
func ExpireNext[S StateType, E, R EnumType, C, X any](ctx context.Context, m *Machine[S, E, R, C, X], now time.Time) (bool, S, error) {
	d := m.def
	if int(m.state) >= len(d.States) {
		return false, m.state, nil
	}
	sd := &d.States[m.state]
	var at time.Time
	which := -2 // -1: the timeout's expiry; i >= 0: delay i
	if t := m.timeouts[m.state]; sd.Expires && t > 0 && !(m.expired && d.sameClock(m.expiredIn, m.state) && m.expiredAt.Equal(m.since)) {
		at, which = m.since.Add(t), -1
	}
	var start time.Time // of the delay chosen
	var order uint64
	for i := range sd.Delays {
		dl := &sd.Delays[i]
		s, o := m.delayStart(dl), m.delayOrder(dl)
		// The first due; of those due at once, the first whose state was entered (XState
		// schedules it first), then the first in order.
		if due := s.Add(dl.After); !m.delayFired(i) && (which == -2 || due.Before(at) || due.Equal(at) && (which == -1 || s.Before(start) || s.Equal(start) && o < order)) {
			at, which, start, order = due, i, s, o
		}
	}
	if which == -2 || at.After(now) {
		return false, m.state, nil
	}
	if at.Before(m.updatedAt) {
		at = m.updatedAt
	}
	from, entered := m.state, m.since
	e := E(sd.Expiry)
	if which >= 0 {
		e = E(sd.Delays[which].Event)
	}
	reason := "timeout expired"
	if which >= 0 {
		reason = "delay of " + sd.Delays[which].After.String() + " passed"
	}
	to, err := m.FireWith(ctx, e, Input[R]{At: at, Reason: reason})
	if err == nil || errors.Is(err, ErrRefused) {
		// This stay's timer has fired, whatever the event did (it may have entered the state
		// again, a new stay, whose timers start again).
		if which < 0 {
			m.expired, m.expiredIn, m.expiredAt = true, from, entered
			if coverOn {
				m.coverRecord(CoverRecord{Kind: CoverExpiry, State: from.String()})
			}
		} else if sd.Delays[which].Clock > 0 {
			if m.state == from {
				m.markFired(sd.Delays[which].Event, at)
			}
		} else {
			if f := &m.fired; !f.since.Equal(entered) || !d.sameClock(S(f.in), from) {
				*f = firedDelays{in: int32(from), since: entered}
			}
			m.fired.bits |= 1 << which
		}
	}
	return err == nil, to, err
}
