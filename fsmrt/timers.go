package fsmrt

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Durable timers. A machine that keeps time and has a store arms, in the commit of every
// transition that enters a state, the deadlines of that state's timeout: one per level
// (reached at its percentage of the timeout in force) and, when the spec names an
// on_expiry event, the expiry. Leaving the state disarms them (the next state's replace
// them). A scheduler (FireDue, in any number of processes) claims the deadlines that fall
// due and handles each exactly once: it fires the expiry event, or records the level as an
// entry of the event log (TIMEOUT_<LEVEL>), in a commit that also removes the deadline, so
// that a deadline handled twice, or one whose state has been left, is a conflict that
// changes nothing.

// Log entry kinds that are not transitions: the machine stays where it is.
const (
	// KindTimeoutPrefix starts the kind of the entry that records a timeout level reached:
	// TIMEOUT_WARNING for a level named warning.
	KindTimeoutPrefix = "TIMEOUT_"
	// KindTimeoutExpired records an expiry whose event the machine refused.
	KindTimeoutExpired = "TIMEOUT_EXPIRED"
	// KindTimeoutChanged records a timeout changed at run time (SetTimeout).
	KindTimeoutChanged = "TIMEOUT_CHANGED"
	// KindCreated records a machine stored before its first transition (Create).
	KindCreated = "MACHINE_CREATED"
	// KindMigrated records an instance stored under an older spec, migrated to this one
	// (Migrate); its metadata "from" is the older spec's fingerprint.
	KindMigrated = "SPEC_MIGRATED"
)

// deadlineExpiry is the name of an expiry deadline; a level's is its name prefixed.
const (
	deadlineExpiry = "expiry"
	deadlineLevel  = "level:"
)

// deadlines returns the deadlines of state s entered at at, with the timeouts in force.
func (m *Machine[S, E, R, C, X]) deadlines(s S, at time.Time) []Deadline {
	if !m.timesOut(s) {
		return m.delayDeadlines(s, at, nil)
	}
	d := m.def
	sd, timeout := &d.States[s], m.timeouts[s]
	var out []Deadline
	for i, pct := range sd.Levels {
		after := percentOf(timeout, pct)
		if sd.Expires && after == timeout {
			// The expiry falls due at the same instant and records that the timeout
			// passed: a level there too would be recorded or not as schedulers happened to
			// claim the two (the expiry leaves the state, or not), the same history giving
			// different logs.
			continue
		}
		if kept := m.clocks.keptUntil; !kept.IsZero() && !at.Add(after).After(kept) {
			continue // handled, or falling due as the timeout counts on: not armed again
		}
		name := d.levelName(sd.LevelValues[i])
		out = append(out, Deadline{Name: deadlineLevel + name, At: at.Add(after), State: s.String(), Level: sd.LevelValues[i]})
	}
	if kept := m.clocks.keptUntil; sd.Expires && (kept.IsZero() || at.Add(timeout).After(kept)) {
		out = append(out, Deadline{Name: deadlineExpiry, At: at.Add(timeout), State: s.String(), Event: E(sd.Expiry).String()})
	}
	return m.delayDeadlines(s, at, out)
}

// timesOut reports whether entering state s arms deadlines: it has a timeout in force,
// with levels or an expiry.
func (m *Machine[S, E, R, C, X]) timesOut(s S) bool {
	d := m.def
	if !d.Timing || int(s) >= len(d.States) || m.timeouts[s] <= 0 {
		return false
	}
	sd := &d.States[s]
	return len(sd.Levels) > 0 || sd.Expires
}

// levelName is the name of timeout level value v (the generated TimeoutLevel).
func (d *Def[S, E, R]) levelName(v int) string {
	if v >= 1 && v <= len(d.LevelNames) {
		return d.LevelNames[v-1]
	}
	return strconv.Itoa(v)
}

// percentOf returns pct percent of d, rounded up to the nanosecond at which Reached first
// holds, without overflow for any duration.
func percentOf(d time.Duration, pct int) time.Duration {
	lo, hi := time.Duration(0), time.Duration(1<<63-1)
	for lo < hi { // the least elapsed time that reaches pct percent of d
		mid := lo + (hi-lo)/2
		if Reached(mid, d, pct) {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return lo
}

// note commits an entry of the event log that is not a transition (kind, on the state the
// machine is in), handling the deadline fired (when not empty) and rearming the current
// state's deadlines when rearm. Nothing changes when the commit fails.
func (m *Machine[S, E, R, C, X]) note(ctx context.Context, kind string, in *Input[R], meta map[string]string, rearm bool) error {
	d := m.def
	if m.store == nil {
		return ErrNoStore
	}
	st := Step[S, E, R]{From: m.state, To: m.state, Role: in.Role, At: m.now(in)}
	m.keep()
	m.pending = m.pending[:0]
	m.seq++
	m.updatedAt = st.At
	e, err := m.logEntry(kind, st, in, -1)
	c := m.newCommit(in)
	if err == nil {
		e.Metadata = make(map[string]string, len(meta))
		for k, v := range meta {
			e.Metadata[k] = v
		}
		c.Entry = Entry{Seq: m.seq, Kind: kind, From: st.From.String(), To: st.To.String(), At: e.Timestamp}
		c.Entry.Data, err = m.encodeEntry(&e)
	}
	if rearm {
		c.Rearm, c.Deadlines = true, m.deadlines(m.state, m.since)
	}
	if kind == KindCreated && err == nil {
		c.Snapshot, err = m.encodeSnapshot(e.Context)
	}
	if err == nil {
		err = m.migrating(&c, e.Context)
	}
	if err == nil {
		err = m.store.Commit(ctx, &c)
	}
	if err != nil {
		m.rollback()
		return StoreFailed(d.Spec, "commit", m.seq+1, err)
	}
	m.migrated, m.inTx = "", inCallersTx(m.store)
	return nil
}

// applyNote replays an entry that is not a transition: the machine stays where it is.
func (m *Machine[S, E, R, C, X]) applyNote(e *LogEntry[S, E, R]) error {
	if e.From != m.state || e.To != m.state || e.Transition != -1 || e.Kind == KindCreated && e.Seq != 1 {
		return fmt.Errorf("%s %s -> %s (transition %d) in %s at %d", e.Kind, e.From, e.To, e.Transition, m.state, e.Seq)
	}
	if ev := e.Metadata["delay"]; ev != "" && e.Kind == KindTimeoutExpired && m.clocks.start != nil {
		if x, ok := named[E](m.def.NumEvents, ev); ok {
			m.markFired(int32(x), e.Timestamp)
		}
	}
	m.seq, m.updatedAt = e.Seq, e.Timestamp
	return nil
}

// isNote reports whether kind is the kind of an entry that is not a transition.
func isNote(kind string) bool {
	return kind == KindCreated || kind == KindStarted || kind == KindMigrated || strings.HasPrefix(kind, KindTimeoutPrefix) && len(kind) > len(KindTimeoutPrefix)
}

// Create stores the machine as it is, before its first transition, so that the timeout
// of the state it starts in runs (its deadlines are armed) and other processes can load
// it: a MACHINE_CREATED entry of the event log, with a snapshot, committed as the
// instance's first. It fails with a ConflictError when the store already has the instance
// (create it once), with ErrNoStore without a store, when the machine has already
// committed transitions, and with a ValidationError when its context breaks the
// constraints of its set fields (Invariants). in says who creates it, when (in.At, else
// the machine's clock) and why. A machine that keeps time is created then: its creation time and the time it
// entered its first state are the entry's, and the first state's deadlines count from it,
// whenever the machine was built.
func (m *Machine[S, E, R, C, X]) Create(ctx context.Context, in Input[R]) error {
	if m.store != nil && m.seq != 0 {
		return fmt.Errorf("%smachine %s has made %d transitions: it exists", m.def.Spec.prefix(), m.ID, m.seq)
	}
	if err := m.checkCreate(); err != nil {
		return err
	}
	if m.store == nil || !m.def.Timing {
		return m.note(ctx, KindCreated, &in, nil, true)
	}
	in.At = m.now(&in)
	created, entered, since := m.createdAt, m.enteredAt, m.since
	m.createdAt, m.enteredAt, m.since = in.At, in.At, in.At
	clocks := slices.Clone(m.clocks.start)
	m.clocks.reset(in.At)
	if err := m.note(ctx, KindCreated, &in, nil, true); err != nil {
		m.createdAt, m.enteredAt, m.since = created, entered, since
		copy(m.clocks.start, clocks)
		return err
	}
	return nil
}

// FireDue claims from store up to limit deadlines of machines named machine (a Spec.Name)
// that are due at now, leased to owner (this process when "") until now+lease
// (DefaultLease when 0), and handles each once: load builds the instance with the given ID
// from the store (the generated Replay function), with store set; an expiry fires the
// state's on_expiry event (actor "scheduler"), or, when the machine refuses it, is
// recorded as a TIMEOUT_EXPIRED entry; a level is recorded as a TIMEOUT_<LEVEL> entry.
// Each is stamped at its deadline, however late the scheduler (or at the machine's last
// entry, when that is later: time in the log never goes back), so that the state an expiry
// enters counts its own timeout from the deadline. Each commit removes the deadline it
// handles: a deadline already handled, or whose state the machine has left, is a conflict
// and is skipped. load may return a machine the caller keeps in memory: when that machine
// turns out out of date (its commit conflicts, or it has left the deadline's state), FireDue
// asks load again with a context for which FreshLoad reports true, and load must then read
// the store. It returns how many deadlines it handled and the first error other than a
// conflict. Any number of schedulers may run at once, in any number of processes.
//
// The machines load gives claim the effects of the transitions they fire with their own
// clock, owner and lease (SetClock, SetOwner): load sets them, as now is on the caller's
// clock. FireDueWith sets them for it.
func FireDue[S StateType, E, R EnumType, C, X any](ctx context.Context, store Store, machine, owner string, now time.Time, lease time.Duration, limit int,
	load func(ctx context.Context, id string) (*Machine[S, E, R, C, X], error)) (int, error) {
	if lease <= 0 {
		lease = DefaultLease
	}
	if owner == "" {
		owner = processOwner
	}
	due, err := store.ClaimDeadlines(ctx, machine, owner, now, lease, limit)
	if err != nil {
		return 0, err
	}
	n := 0
	var first error
	for _, dl := range due {
		err := handleDue(ctx, dl, load)
		switch {
		case err == nil:
			n++
		case errors.Is(err, ErrStoreConflict):
		case first == nil:
			first = err
		}
	}
	return n, first
}

// freshKey marks the context of a load that must read the store (FreshLoad).
type freshKey struct{}

// FreshLoad reports whether FireDue asks its load function for a machine read from the
// store now, not one kept in memory: the one it got before was out of date.
func FreshLoad(ctx context.Context) bool {
	fresh, _ := ctx.Value(freshKey{}).(bool)
	return fresh
}

// handleDue handles one due deadline (FireDue), once more with a machine loaded fresh when
// the one load gave was out of date.
func handleDue[S StateType, E, R EnumType, C, X any](ctx context.Context, dl DueDeadline,
	load func(ctx context.Context, id string) (*Machine[S, E, R, C, X], error)) error {
	err := handleDueOnce(ctx, dl, load)
	if errors.Is(err, ErrStoreConflict) && !FreshLoad(ctx) {
		err = handleDueOnce(context.WithValue(ctx, freshKey{}, true), dl, load)
	}
	return err
}

// handleDueOnce handles one due deadline with the machine load gives.
func handleDueOnce[S StateType, E, R EnumType, C, X any](ctx context.Context, dl DueDeadline,
	load func(ctx context.Context, id string) (*Machine[S, E, R, C, X], error)) (err error) {
	m, err := load(ctx, dl.ID)
	if err != nil {
		return err
	}
	if m.observer != nil {
		defer func() {
			m.observer.Timer(ctx, &TimerInfo{Machine: m.def.storeName, ID: dl.ID, Name: dl.Name, Due: dl.At, Handled: m.clockNow(), Err: err})
		}()
	}
	if !m.armed(dl) {
		// Left since (and maybe entered again, with new deadlines): this claim is stale.
		return &ConflictError{Machine: dl.Machine, ID: dl.ID, Version: m.seq, Stored: m.seq, Deadline: dl.Name}
	}
	// At the deadline, not when the scheduler got to it: a chain of timeouts keeps to its
	// schedule and the log does not depend on the scheduler's lag; never before the last
	// entry (a transition of the state since, a changed timeout), so that time in the log
	// does not go back.
	in := Input[R]{Actor: "scheduler", At: dl.At, fired: dl.Name}
	if in.At.Before(m.updatedAt) {
		in.At = m.updatedAt
	}
	meta := map[string]string{"deadline": dl.At.UTC().Format(time.RFC3339Nano), "timeout": m.timeouts[m.state].String()}
	from := m.state
	if dl.Name == deadlineExpiry || isDelayDeadline(dl.Name) {
		e, ok := named[E](m.def.NumEvents, dl.Event)
		if ok {
			in.Reason = "timeout expired"
			if _, err = m.FireWith(ctx, e, in); err == nil || errors.Is(err, ErrStoreConflict) || !errors.Is(err, ErrRefused) {
				if coverOn && err == nil && dl.Name == deadlineExpiry {
					m.coverRecord(CoverRecord{Kind: CoverExpiry, State: from.String()})
				}
				return err
			}
		} else {
			err = fmt.Errorf("%q is not an event", dl.Event)
		}
		in.Reason = err.Error()
		if ok && m.clocks.start != nil && isDelayDeadline(dl.Name) {
			// Its stay's delay has fired: a replay knows it by the entry's event.
			meta["delay"] = dl.Event
			m.markFired(int32(e), in.At)
		}
		err = m.note(ctx, KindTimeoutExpired, &in, meta, false)
		if coverOn && err == nil && dl.Name == deadlineExpiry {
			m.coverRecord(CoverRecord{Kind: CoverExpiry, State: from.String()})
		}
		return err
	}
	level := strings.TrimPrefix(dl.Name, deadlineLevel)
	in.Reason = "timeout level " + level + " reached"
	meta["level"] = level
	err = m.note(ctx, KindTimeoutPrefix+strings.ToUpper(level), &in, meta, false)
	if coverOn && err == nil {
		m.coverRecord(CoverRecord{Kind: CoverLevel, State: from.String(), Level: level})
	}
	return err
}

// armed reports whether dl is one of the deadlines the machine has armed now: its state's
// (or, in a statechart, armed in a configuration that shares the current one's timeout),
// of the same name, at the same time (to the microsecond, as stores keep it). A claim that
// outlived its lease may be of an earlier stay in the state.
func (m *Machine[S, E, R, C, X]) armed(dl DueDeadline) bool {
	if m.state.String() != dl.State && (m.clocks.start == nil || !isDelayDeadline(dl.Name)) {
		// A delay that counts on its state's clock is armed in every configuration that
		// state is active in: its name and time say which stay it is of.
		if s, ok := named[S](len(m.def.States), dl.State); !ok || !m.def.sameClock(m.state, s) {
			return false
		}
	}
	for _, d := range m.deadlines(m.state, m.since) {
		if d.Name == dl.Name {
			return d.At.Truncate(time.Microsecond).Equal(dl.At.Truncate(time.Microsecond))
		}
	}
	return false
}

// named returns the value of T among the first n (states, events) whose name is name.
func named[T EnumType](n int, name string) (T, bool) {
	for v := range n {
		if T(v).String() == name {
			return T(v), true
		}
	}
	return 0, false
}

// LevelDeadline is the name of the deadline of timeout level name, for Query.Deadline: a
// machine found by it has been in its state longer than that level of its timeout.
func LevelDeadline(name string) string { return deadlineLevel + name }

// ExpiryDeadline is the name of the deadline of a timeout's expiry, for Query.Deadline.
const ExpiryDeadline = deadlineExpiry
