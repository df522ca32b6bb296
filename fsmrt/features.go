package fsmrt

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// The functions below serve the generated wrappers of what only some specs declare:
// counters, remembered states, history, idempotency keys, time. A generated package wraps
// those its spec declares as methods of its machine.

// Count returns counter c (in state s, for a per-state counter).
func Count[S StateType, E, R EnumType, C, X any](m *Machine[S, E, R, C, X], c int, s S) int {
	if m.def.Counters[c].PerState && int(s) >= len(m.def.States) {
		return 0
	}
	return *m.counter(int32(c), s)
}

// Remembered returns the state that remembering state s was last entered from; in a
// statechart, the configuration that the remembering state active in configuration s
// was last entered from.
func Remembered[S StateType, E, R EnumType, C, X any](m *Machine[S, E, R, C, X], s S) (S, bool) {
	if c := m.def.Chart; c != nil {
		if int(s) >= len(c.Remember) || c.Remember[s] < 0 {
			return 0, false
		}
		slot := c.Remember[s]
		if v := m.mem[slot]; v > 0 {
			return S(c.Recall[slot][v-1]), true
		}
		return 0, false
	}
	if int(s) >= len(m.remembered) || !m.remembered[s] {
		return 0, false
	}
	return m.memory[s], true
}

// History returns the last records of the machine's transitions, oldest first: at most the
// window's size (SetHistoryWindow); the store's event log has them all.
func History[S StateType, E, R EnumType, C, X any](m *Machine[S, E, R, C, X]) []Record[S, E] {
	return m.history.Items()
}

// SetHistoryWindow sets how many history records the machine keeps in memory
// (DefaultWindow when n <= 0).
func SetHistoryWindow[S StateType, E, R EnumType, C, X any](m *Machine[S, E, R, C, X], n int) {
	m.history.SetSize(n)
}

// SetKeyWindow sets how many idempotency keys the machine keeps in memory (DefaultWindow
// when n <= 0); a key it does not hold but may have dropped (the window keeps a filter of
// the keys it dropped) is looked up in the store (FindKey) before the machine fires with it.
func SetKeyWindow[S StateType, E, R EnumType, C, X any](m *Machine[S, E, R, C, X], n int) {
	m.keys.SetSize(n)
}

// SetClock replaces the machine's clock. A machine that has made no transition yet (new,
// not loaded) starts at the clock's time: its creation time and its time in the current
// state restart. A machine restored or replayed keeps the times it has and reads the new
// clock from then on: give it the clock after loading it, as a worker with a clock of its
// own does. The clock also times the machine's claims (the leases of the effects its
// transitions schedule, DeliverEffects), so that they run on the caller's clock.
func SetClock[S StateType, E, R EnumType, C, X any](m *Machine[S, E, R, C, X], c Clock) {
	m.clock = c
	if m.seq == 0 {
		// A new machine starts now; one restored or replayed keeps the times it has.
		m.createdAt = c.Now()
		m.enteredAt, m.since = m.createdAt, m.createdAt
		m.clocks.reset(m.createdAt)
	}
}

// CreatedAt returns when the machine was created.
func CreatedAt[S StateType, E, R EnumType, C, X any](m *Machine[S, E, R, C, X]) time.Time {
	return m.createdAt
}

// EnteredAt returns when the current state was entered.
func EnteredAt[S StateType, E, R EnumType, C, X any](m *Machine[S, E, R, C, X]) time.Time {
	return m.enteredAt
}

// TimeoutSince returns when the timeout of the current state started counting: when the
// state was entered, or, in a statechart, when the state whose timeout the configuration
// has was entered (moving within it does not restart it).
func TimeoutSince[S StateType, E, R EnumType, C, X any](m *Machine[S, E, R, C, X]) time.Time {
	return m.since
}

// TimeByState returns the time spent in each state at now, the current stay included.
func TimeByState[S StateType, E, R EnumType, C, X any](m *Machine[S, E, R, C, X], now time.Time) []time.Duration {
	t := append([]time.Duration(nil), m.timeByState...)
	if int(m.state) < len(t) {
		t[m.state] += max(now.Sub(m.enteredAt), 0)
	}
	return t
}

// Timeout returns the timeout of state s in force (0: none).
func Timeout[S StateType, E, R EnumType, C, X any](m *Machine[S, E, R, C, X], s S) time.Duration {
	if int(s) >= len(m.timeouts) {
		return 0
	}
	return m.timeouts[s]
}

// SetTimeout changes the timeout of a state the spec marks configurable; in a statechart,
// of the state whose timeout configuration s has, in every configuration that shares it.
// With a store it is committed at once as a TIMEOUT_CHANGED entry of the event log, with
// the deadlines of the current state armed again when it counts that timeout (nothing
// changes when the commit fails). It is kept in snapshots and the event log.
func SetTimeout[S StateType, E, R EnumType, C, X any](m *Machine[S, E, R, C, X], s S, d time.Duration) error {
	switch {
	case int(s) >= len(m.timeouts) || !m.def.States[s].Configurable:
		return fmt.Errorf("%sthe timeout of %s is not configurable", m.def.Spec.prefix(), s)
	case d <= 0:
		return fmt.Errorf("%stimeout of %s must be positive", m.def.Spec.prefix(), s)
	}
	prev := m.timeouts[s]
	m.setTimeout(s, d)
	if m.store != nil {
		// Durable at once, in the event log; the current state's deadlines follow.
		in := Input[R]{Reason: "timeout of " + s.String() + " set to " + d.String()}
		meta := map[string]string{"state": s.String(), "timeout": d.String()}
		if err := m.note(context.Background(), KindTimeoutChanged, &in, meta, m.def.sameClock(s, m.state)); err != nil {
			m.setTimeout(s, prev)
			return err
		}
	}
	return nil
}

// setTimeout sets the timeout of state s, and of the configurations that share it in a
// statechart (StateDef.Clock).
func (m *Machine[S, E, R, C, X]) setTimeout(s S, d time.Duration) {
	m.timeouts[s] = d
	if c := m.def.States[s].Clock; c != 0 {
		for i := range m.timeouts {
			if m.def.States[i].Clock == c {
				m.timeouts[i] = d
			}
		}
	}
}

// Expire fires e, the on_expiry event of the state the machine is in, when the state's
// timeout has passed at now (the input's At), and reports whether it fired. A stay expires
// once: when the expiry leaves the machine in the state (an internal transition, a guard
// that refuses it), the state does not expire again until it is entered again, as a
// durable deadline is handled once (FireDue). What it fires with is the machine's own
// Fire, with its store: the entry says "timeout expired".
func Expire[S StateType, E, R EnumType, C, X any](ctx context.Context, m *Machine[S, E, R, C, X], e E, now time.Time) (bool, S, error) {
	if int(m.state) >= len(m.timeouts) || m.timeouts[m.state] <= 0 || now.Sub(m.since) < m.timeouts[m.state] ||
		m.expired && m.def.sameClock(m.expiredIn, m.state) && m.expiredAt.Equal(m.since) {
		return false, m.state, nil
	}
	from, entered := m.state, m.since
	to, err := m.FireWith(ctx, e, Input[R]{At: now, Reason: "timeout expired"})
	if err == nil || errors.Is(err, ErrRefused) {
		// This stay has expired, whatever the event did (it may have re-entered the state,
		// a new stay, which may expire in turn).
		m.expired, m.expiredIn, m.expiredAt = true, from, entered
		if coverOn {
			m.coverRecord(CoverRecord{Kind: CoverExpiry, State: from.String()})
		}
	}
	return err == nil, to, err
}

// TimeoutLevel returns the value (StateDef.LevelValues) of the highest timeout level the
// current state has reached at now, or 0. Levels are reported, never
// enforced, and computed exactly for any duration (Reached).
func TimeoutLevel[S StateType, E, R EnumType, C, X any](m *Machine[S, E, R, C, X], now time.Time) int {
	if int(m.state) >= len(m.timeouts) {
		return 0
	}
	d := m.timeouts[m.state]
	if d <= 0 {
		return 0
	}
	st := &m.def.States[m.state]
	if i := Level(now.Sub(m.since), d, st.Levels); i >= 0 {
		if coverOn {
			// Every level up to the one reached has been passed.
			for _, v := range st.LevelValues[:i+1] {
				m.coverRecord(CoverRecord{Kind: CoverLevel, State: m.state.String(), Level: m.def.levelName(v)})
			}
		}
		return st.LevelValues[i]
	}
	return 0
}
