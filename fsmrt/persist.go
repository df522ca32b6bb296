package fsmrt

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"time"
)

// Snapshot is a machine's present, in a form that encodes to JSON by name and restores
// with Restore. Its past (the transition history, the idempotency keys used) is in the
// event log, not here, so that taking a snapshot costs the same however old the machine
// is. A generated package names it (review.TaskSnapshot).
type Snapshot[S StateType, C, X any] struct {
	// Version is the snapshot format, 1.
	Version int `json:"version"`
	// Spec is the fingerprint of the spec the machine was generated from (Spec.Fingerprint).
	Spec string `json:"spec,omitempty"`
	ID   string `json:"id"`
	// Seq is the number of transitions accepted when the snapshot was taken.
	Seq   int64 `json:"seq"`
	State S     `json:"state"`
	// UpdatedAt is when the last transition the machine persisted happened (its input's At,
	// else the clock): every transition with a store, those that reach a checkpoint without
	// one, every transition for a machine that keeps time. Zero until then.
	UpdatedAt time.Time `json:"updatedAt"`
	Context   C         `json:"context"`
	// Counters holds the counters that are not zero, by name; StateCounters the per-state
	// ones, by name and state.
	Counters      map[string]int       `json:"counters,omitempty"`
	StateCounters map[string]map[S]int `json:"stateCounters,omitempty"`
	// Limits holds the configurable limits changed at run time, by counter name, as the
	// spec writes them.
	Limits map[string]int `json:"limits,omitempty"`
	// Remembered maps each remembering state to the state it was entered from.
	Remembered map[S]S `json:"remembered,omitempty"`
	// CreatedAt, EnteredAt, TimeByState (before the current stay) and the timeouts changed
	// at run time, for a machine that keeps time.
	CreatedAt   time.Time           `json:"createdAt,omitzero"`
	EnteredAt   time.Time           `json:"enteredAt,omitzero"`
	TimeByState map[S]time.Duration `json:"timeByState,omitempty"`
	Timeouts    map[S]time.Duration `json:"timeouts,omitempty"`
	// TimeoutSince is, in a statechart, when the timeout of the state's configuration
	// started counting, when that is before EnteredAt: the state whose timeout it is was
	// entered before the configuration (StateDef.Clock). Omitted, it is EnteredAt.
	TimeoutSince time.Time `json:"timeoutSince,omitzero"`
	// Clocks are, in a statechart, when the active states with delays of their own were
	// entered, by path, those entered after the configuration's clock started (TimeoutSince,
	// else EnteredAt) only; omitted, they started with it. DelaysFired lists, by such a
	// state, the events of its delays that have fired this stay.
	Clocks      map[string]time.Time `json:"clocks,omitempty"`
	DelaysFired map[string][]string  `json:"delaysFired,omitempty"`
	// Extra is what the generated package keeps besides (payloads, policies).
	Extra X `json:"extra,omitzero"`
	// History holds, for a statechart, what each history state has recorded: the paths
	// of the states it restores, joined by ",". Unstarted says a statechart whose start
	// does something has not started.
	History   map[string]string `json:"history,omitempty"`
	Unstarted bool              `json:"unstarted,omitempty"`
}

// snapshotFields is Snapshot without its methods, for decoding.
type snapshotFields[S StateType, C, X any] Snapshot[S, C, X]

// UnmarshalJSON decodes a snapshot. It refuses with a SnapshotError a snapshot that does
// not decode, or whose version or state is missing or null (decoding would leave the
// initial state). A snapshot written under an older spec the generated package declares a
// migration from (RegisterMigrations) is migrated first.
func (s *Snapshot[S, C, X]) UnmarshalJSON(b []byte) error {
	b, err := migrateSnapshotJSON[S](b)
	if err != nil {
		return err
	}
	return DecodeSnapshot(nil, b, (*snapshotFields[S, C, X])(s))
}

// Sequence returns the snapshot's sequence number, for the store.
func (s Snapshot[S, C, X]) Sequence() int64 { return s.Seq }

// LogEntry is one entry of a machine's event log: {"seq", "timestamp", "id", "kind":
// "STATE_TRANSITION", "event", "from", "to", "actor", "reason", "metadata"}, plus what
// replaying it needs: the transition that fired and the machine's data after it. A
// generated package names it (review.TaskLogEntry).
//
// Entries written before this format (format 1) named the instance "taskId", the kind
// "event" and the event "trigger"; they decode into the same fields (UnmarshalJSON), so
// stored logs of either format load.
type LogEntry[S StateType, E, R EnumType] struct {
	// Spec is the fingerprint of the spec the machine was generated from (Spec.Fingerprint).
	Spec string `json:"spec,omitempty"`
	// Seq numbers the machine's accepted transitions from 1.
	Seq int64 `json:"seq"`
	// Timestamp is when the transition happened: the input's At, else the machine's clock.
	Timestamp time.Time `json:"timestamp"`
	// ID is the machine's ID.
	ID string `json:"id"`
	// Kind is what the entry records: KindTransition for a transition an event fired,
	// KindResumed for a machine Resume took out of a terminal state (its Transition is
	// -1), or a note that no event fired (KindCreated, KindStarted, KindMigrated, the
	// timeout notes KindTimeoutPrefix+LEVEL).
	Kind string `json:"kind"`
	// Event is the event that fired the transition. A note has none: HasEvent reports
	// false and Event is outside the machine's events (its String says so), as it is for
	// an event an older spec had and this one no longer has.
	Event E `json:"event"`
	From  S `json:"from"`
	To    S `json:"to"`
	// Transition is the index of the declared transition that fired, in spec order from 0:
	// replaying applies its bookkeeping without asking the guards.
	Transition int    `json:"transition"`
	Actor      string `json:"actor"`
	Reason     string `json:"reason"`
	EventID    string `json:"eventId,omitempty"`
	// Role is who fired it, for a machine whose transitions name roles.
	Role R `json:"role,omitzero"`
	// Key is the input's idempotency key.
	Key string `json:"idempotencyKey,omitempty"`
	// Created is when the machine was created, on its first entry (machines that keep time).
	Created time.Time `json:"created,omitzero"`
	// Context is the machine's context after the transition, as its actions left it.
	Context json.RawMessage `json:"context,omitempty"`
	// Payload is the event's payload, for events that carry one.
	Payload json.RawMessage `json:"payload,omitempty"`
	// Policies are the machine's policies after the transition, for a spec that has some.
	Policies json.RawMessage `json:"policies,omitempty"`
	// Limits are the configurable limits changed at run time, in force after it.
	Limits map[string]int `json:"limits,omitempty"`
	// Timeouts are the configurable timeouts changed at run time (SetTimeout), in force
	// after it, for a machine that keeps time.
	Timeouts map[S]time.Duration `json:"timeouts,omitempty"`
	Metadata map[string]string   `json:"metadata"`
	// Micro lists, for a statechart, the transitions taken after the event's own (or, on
	// starting, from the initial configuration): eventless transitions and done events.
	Micro []int `json:"microsteps,omitempty"`
	// History is, for a statechart, what its history states hold after the transition
	// (Snapshot.History).
	History map[string]string `json:"history,omitempty"`
	// Moved is, for an entry of an older spec whose transition none of this spec replays
	// (Migration.Moves), what the transition did: it replays as recorded. Decoding sets
	// it; the machine never writes it.
	Moved *Move `json:"moved,omitempty"`
}

// Sequence returns the entry's sequence number, for the store.
func (e LogEntry[S, E, R]) Sequence() int64 { return e.Seq }

// HasEvent reports whether an event fired the entry's transition: false for a note
// (MACHINE_CREATED, TIMEOUT_*, ...), whose Event is none of the machine's events.
func (e LogEntry[S, E, R]) HasEvent() bool { return !isNote(e.Kind) }

// eventText names event e in a message: its name, or what it is when it is none of the
// machine's events.
func (m *Machine[S, E, R, C, X]) eventText(e E) string {
	if int(e) < m.def.NumEvents {
		return e.String()
	}
	return "no event of this spec"
}

// noEvent is the Event of an entry no event fired: the largest value of E, none of a
// machine's events.
func noEvent[E EnumType]() E {
	var e E
	return ^e
}

// logEntryFields is LogEntry without its methods, for decoding its fields.
type logEntryFields[S StateType, E, R EnumType] LogEntry[S, E, R]

// UnmarshalJSON decodes an entry of either format: this one ("id", "kind", "event", the
// event absent from a note) or format 1 ("taskId", "event" for the kind, "trigger" for
// the event), told apart by the "taskId" key only format 1 has. An entry without an
// event decodes with the Event no event has (HasEvent).
func (e *LogEntry[S, E, R]) UnmarshalJSON(b []byte) error {
	*e = LogEntry[S, E, R]{}
	in := struct {
		*logEntryFields[S, E, R]
		Event   json.RawMessage `json:"event"`
		TaskID  *string         `json:"taskId"`
		Trigger *E              `json:"trigger"`
	}{logEntryFields: (*logEntryFields[S, E, R])(e)}
	if err := json.Unmarshal(b, &in); err != nil {
		return err
	}
	e.Event = noEvent[E]()
	if in.TaskID != nil {
		// Format 1.
		e.ID = *in.TaskID
		if err := json.Unmarshal(orNull(in.Event), &e.Kind); err != nil {
			return fmt.Errorf("the entry's kind (format 1's \"event\"): %w", err)
		}
		if in.Trigger != nil {
			e.Event = *in.Trigger
		}
		return nil
	}
	if len(in.Event) > 0 && string(in.Event) != "null" {
		return json.Unmarshal(in.Event, &e.Event)
	}
	return nil
}

// orNull returns b, or JSON's null for nothing.
func orNull(b json.RawMessage) json.RawMessage {
	if len(b) == 0 {
		return json.RawMessage("null")
	}
	return b
}

// IdempotencyKey returns the entry's idempotency key, for the store.
func (e LogEntry[S, E, R]) IdempotencyKey() string { return e.Key }

// Snapshot returns the machine's state, context and bookkeeping. It shares nothing with the
// machine except the slices and maps of the context and extra data.
func (m *Machine[S, E, R, C, X]) Snapshot() Snapshot[S, C, X] {
	d := m.def
	s := Snapshot[S, C, X]{Version: 1, Spec: d.Spec.Fingerprint, ID: m.ID, Seq: m.seq, State: m.state, UpdatedAt: m.updatedAt, Context: m.Context, Extra: m.extra}
	for i, c := range d.Counters {
		if !c.PerState {
			if n := *m.counter(int32(i), 0); n != 0 {
				if s.Counters == nil {
					s.Counters = map[string]int{}
				}
				s.Counters[c.Name] = n
			}
			continue
		}
		for st := range d.States {
			if n := *m.counter(int32(i), S(st)); n != 0 {
				if s.StateCounters == nil {
					s.StateCounters = map[string]map[S]int{}
				}
				if s.StateCounters[c.Name] == nil {
					s.StateCounters[c.Name] = map[S]int{}
				}
				s.StateCounters[c.Name][S(st)] = n
			}
		}
	}
	s.Limits = m.changedLimits()
	s.History, s.Unstarted = m.historyValues(), m.unstarted
	for st, ok := range m.remembered {
		if ok {
			if s.Remembered == nil {
				s.Remembered = map[S]S{}
			}
			s.Remembered[S(st)] = m.memory[st]
		}
	}
	if d.Timing {
		s.CreatedAt, s.EnteredAt = m.createdAt, m.enteredAt
		if !m.since.Equal(m.enteredAt) {
			s.TimeoutSince = m.since
		}
		s.Clocks, s.DelaysFired = m.snapshotClocks()
		for st, t := range m.timeByState {
			if t != 0 {
				if s.TimeByState == nil {
					s.TimeByState = map[S]time.Duration{}
				}
				s.TimeByState[S(st)] = t
			}
		}
		s.Timeouts = m.changedTimeouts()
	}
	return s
}

// changedTimeouts returns the timeouts changed at run time, by state; nil when none is.
func (m *Machine[S, E, R, C, X]) changedTimeouts() map[S]time.Duration {
	var out map[S]time.Duration
	for st, t := range m.timeouts {
		if t != m.def.States[st].Timeout {
			if out == nil {
				out = map[S]time.Duration{}
			}
			out[S(st)] = t
		}
	}
	return out
}

// timeoutsWith returns the timeouts of a machine that keeps time: the spec's, but those
// changed names, each of which must be a positive timeout of a configurable state.
func (m *Machine[S, E, R, C, X]) timeoutsWith(changed map[S]time.Duration) ([]time.Duration, error) {
	d := m.def
	out := make([]time.Duration, len(d.States))
	for i, st := range d.States {
		out[i] = st.Timeout
	}
	for st, t := range changed {
		switch {
		case int(st) >= len(d.States) || !d.States[st].Configurable:
			return nil, fmt.Errorf("the timeout of %s is not configurable", st)
		case t <= 0:
			return nil, fmt.Errorf("%s: %v is not positive", st, t)
		}
		out[st] = t
	}
	// A statechart's configurations that share a timeout (StateDef.Clock) have what one of
	// them changed, and two that disagree are refused.
	for st, t := range changed {
		for i := range out {
			if S(i) == st || !d.sameClock(st, S(i)) {
				continue
			}
			if o, ok := changed[S(i)]; ok && o != t {
				return nil, fmt.Errorf("%s: %v, but %s, which shares its timeout, %v", st, t, S(i), o)
			}
			out[i] = t
		}
	}
	return out, nil
}

// Extra returns what the generated package keeps in m besides the engine's data.
func Extra[S StateType, E, R EnumType, C, X any](m *Machine[S, E, R, C, X]) *X { return &m.extra }

// changedLimits returns the configurable limits changed at run time, by counter name, as
// the spec writes them; nil when none is.
func (m *Machine[S, E, R, C, X]) changedLimits() map[string]int {
	var out map[string]int
	for i, c := range m.def.Counters {
		if c.Configurable && m.limits[i] != c.Limit {
			if out == nil {
				out = map[string]int{}
			}
			out[c.Name] = bound(&c, m.limits[i])
		}
	}
	return out
}

// bound is the limit as the spec writes it: the max for a max counter.
func bound(c *Counter, limit int) int {
	if c.Max {
		return limit - 1
	}
	return limit
}

// CounterLimit returns the limit of counter c in force, as the spec writes it (its max for a max
// counter).
func CounterLimit[S StateType, E, R EnumType, C, X any](m *Machine[S, E, R, C, X], c int) int {
	return bound(&m.def.Counters[c], m.limits[c])
}

// SetCounterLimit changes the limit of configurable counter c, as the spec writes it: a max
// counter may reach n (n >= 0), another trips on reaching n (n >= 1). It is kept in
// snapshots and the event log.
func SetCounterLimit[S StateType, E, R EnumType, C, X any](m *Machine[S, E, R, C, X], c int, n int) error {
	limit, err := limitOf(m.def.Spec, &m.def.Counters[c], n)
	if err != nil {
		return err
	}
	m.limits[c] = limit
	return nil
}

// limitOf returns the limit in force (the count whose increment trips) of configurable
// counter c set to n as the spec writes it.
func limitOf(sp *Spec, c *Counter, n int) (int, error) {
	low, key := 1, "limit"
	if c.Max {
		low, key = 0, "max"
	}
	switch {
	case !c.Configurable:
		return 0, fmt.Errorf("%scounter %s: the %s is not configurable", sp.prefix(), c.Name, key)
	case n < low:
		return 0, fmt.Errorf("%scounter %s: %s %d is below %d", sp.prefix(), c.Name, key, n, low)
	}
	return n + (1 - low), nil
}

// limitsWith returns the limits in force of every counter: the spec's, but those changed
// names (by counter name, as the spec writes them).
func (m *Machine[S, E, R, C, X]) limitsWith(changed map[string]int) ([]int, error) {
	d := m.def
	out := make([]int, len(d.Counters))
	for i, c := range d.Counters {
		out[i] = c.Limit
	}
	for name, n := range changed {
		i := slices.IndexFunc(d.Counters, func(c Counter) bool { return c.Name == name && c.Configurable })
		if i < 0 {
			return nil, fmt.Errorf("%sno configurable counter %q", d.Spec.prefix(), name)
		}
		limit, err := limitOf(d.Spec, &d.Counters[i], n)
		if err != nil {
			return nil, err
		}
		out[i] = limit
	}
	return out, nil
}

// Restore sets m, a new machine, to snapshot s. It refuses, with a SnapshotError (errors.Is
// ErrInvalidSnapshot), a snapshot the machine could never have taken: of another format
// version, with values that are not states of this machine, negative counters or counters
// past their limit, a remembered state its state cannot remember, timeouts of states whose
// timeout is not configurable, a payload (but a zero one, of an event never fired) that
// breaks its constraints; check refuses what else the generated package checks of the
// extra data (nil: nothing). A refused snapshot leaves m as it was: Restore checks
// everything before it writes anything.
func Restore[S StateType, E, R EnumType, C, X any](m *Machine[S, E, R, C, X], s Snapshot[S, C, X], check func(*X) error) error {
	d := m.def
	bad := func(field, format string, args ...any) error {
		return InvalidSnapshot(d.Spec, field, fmt.Sprintf(format, args...))
	}
	ns := len(d.States)
	switch {
	case s.Spec != "" && s.Spec != d.Spec.Fingerprint:
		return &SpecMismatchError{Machine: d.Spec.Name(), ID: s.ID, Stored: s.Spec, Spec: d.Spec.Fingerprint}
	case s.Version != 1:
		return bad("version", "unsupported snapshot version %d", s.Version)
	case int(s.State) >= ns:
		return bad("state", "%d is not a state", s.State)
	case s.Seq < 0:
		return bad("seq", "%d is negative", s.Seq)
	}
	if err := checkSnapshotBounds(d.Spec, s.ID, s.Seq); err != nil {
		return err
	}
	var limits []int
	if len(d.Counters) > 0 {
		var err error
		if limits, err = m.limitsWith(s.Limits); err != nil {
			return bad("limits", "%v", err)
		}
	} else if len(s.Limits) > 0 {
		return bad("limits", "the machine has no counters")
	}
	counters := make([]int, d.counterSlots)
	counter := func(name string, perState bool) (int32, error) {
		i := slices.IndexFunc(d.Counters, func(c Counter) bool { return c.Name == name && c.PerState == perState })
		if i < 0 {
			return 0, bad("counters", "%q is not a counter%s", name, map[bool]string{true: " per state", false: ""}[perState])
		}
		return int32(i), nil
	}
	set := func(c int32, st S, n int) error {
		field, in := "counters."+d.Counters[c].Name, ""
		if d.Counters[c].PerState {
			in = " in " + st.String()
		}
		switch limit := limits[c]; {
		case n < 0:
			return bad(field, "%d%s is negative", n, in)
		case d.Counters[c].Limit > 0 && n >= limit:
			return bad(field, "%d%s is past the limit of %d", n, in, limit)
		}
		counters[d.slot(c, st)] = n
		return nil
	}
	for name, n := range s.Counters {
		c, err := counter(name, false)
		if err == nil {
			err = set(c, 0, n)
		}
		if err != nil {
			return err
		}
	}
	for name, byState := range s.StateCounters {
		c, err := counter(name, true)
		if err != nil {
			return err
		}
		for st, n := range byState {
			if int(st) >= ns {
				return bad("stateCounters."+name, "%d is not a state", st)
			}
			if err := set(c, st, n); err != nil {
				return err
			}
		}
	}
	var memory []S
	var remembered []bool
	if d.remembers {
		memory, remembered = make([]S, ns), make([]bool, ns)
	}
	for st, from := range s.Remembered {
		switch {
		case int(st) >= ns || !d.States[st].Remembers:
			return bad("remembered", "%s does not remember", st)
		case int(from) >= ns:
			return bad("remembered", "%d is not a state", from)
		case !slices.Contains(d.States[st].From, int32(from)):
			return bad("remembered", "%s cannot remember %s", st, from)
		}
		memory[st], remembered[st] = from, true
	}
	mem, err := d.memoryOf(s.History)
	if err != nil {
		return bad("history", "%v", err)
	}
	if s.Unstarted && (d.Chart == nil || !d.Chart.Starts || s.Seq > 0 || s.State != d.Initial) {
		return bad("unstarted", "the machine cannot be unstarted")
	}
	var timeByState, timeouts []time.Duration
	if d.Timing {
		timeByState = make([]time.Duration, ns)
		for st, t := range s.TimeByState {
			switch {
			case int(st) >= ns:
				return bad("timeByState", "%d is not a state", st)
			case t < 0:
				return bad("timeByState", "%s: %v is negative", st, t)
			}
			timeByState[st] = t
		}
		var err error
		if timeouts, err = m.timeoutsWith(s.Timeouts); err != nil {
			return bad("timeouts", "%v", err)
		}
		if !s.TimeoutSince.IsZero() {
			switch {
			case d.States[s.State].Clock == 0:
				return bad("timeoutSince", "%s shares no timeout with the states around it: it counts from enteredAt", s.State)
			case s.TimeoutSince.After(s.EnteredAt):
				return bad("timeoutSince", "%v is after enteredAt %v: a state around the configuration was entered before it", s.TimeoutSince, s.EnteredAt)
			case s.TimeoutSince.Before(s.CreatedAt):
				return bad("timeoutSince", "%v is before createdAt %v", s.TimeoutSince, s.CreatedAt)
			}
		}
	} else if !s.CreatedAt.IsZero() || !s.EnteredAt.IsZero() || !s.TimeoutSince.IsZero() || len(s.TimeByState) > 0 || len(s.Timeouts) > 0 {
		return bad("timeouts", "the machine keeps no time")
	}
	since := s.EnteredAt
	if !s.TimeoutSince.IsZero() {
		since = s.TimeoutSince
	}
	clocks, err := m.restoreClocks(s.State, since, s.CreatedAt, s.Clocks, s.DelaysFired)
	if err != nil {
		return bad("clocks", "%v", err)
	}
	for e, carries := range d.Payloads {
		if !carries {
			continue
		}
		p := m.payloads.Payload(&s.Extra, e, false)
		if errs := p.Validate(); errs != nil && !reflect.ValueOf(p).Elem().IsZero() {
			return bad("extra.payloads."+E(e).String(), "%s: %s", errs[0].Field, errs[0].Message)
		}
	}
	if check != nil {
		if err := check(&s.Extra); err != nil {
			return err
		}
	}
	// Every check passed: write.
	copy(m.limits, limits)
	copy(m.counters, counters)
	copy(m.memory, memory)
	copy(m.remembered, remembered)
	copy(m.mem, mem)
	if d.Chart != nil {
		m.unstarted = s.Unstarted
		m.setSlow()
	}
	m.state = s.State
	m.ID, m.seq = s.ID, s.Seq
	m.Context, m.updatedAt, m.extra = s.Context, s.UpdatedAt, s.Extra
	m.keysMissed = s.Seq > 0 // a snapshot holds no keys: the log before it does
	if d.Timing {
		copy(m.timeByState, timeByState)
		copy(m.timeouts, timeouts)
		m.createdAt, m.enteredAt, m.since = s.CreatedAt, s.EnteredAt, s.EnteredAt
		if !s.TimeoutSince.IsZero() {
			m.since = s.TimeoutSince
		}
		if m.clocks.start != nil {
			m.clocks.copyFrom(&clocks)
		}
	}
	return nil
}

// Built returns m, or the zero M (nil) with err when err is not nil: what the generated
// Restore, Replay and Resume functions return of the machine they built.
func Built[M any](m M, err error) (M, error) {
	if err != nil {
		var zero M
		return zero, err
	}
	return m, nil
}

// Replay sets m, a new machine, to machine id of store: the last snapshot (Restore, with
// check), then every later log entry applied as it was recorded: the transition's
// counters, memory, history and idempotency key, and the state and context after it. No
// hook runs: guards are not asked again, and actions and checkpoints, done when the
// transitions happened, are not repeated. An instance stored under an older spec that
// the Def migrates from (Def.Migrations) is loaded migrated: its snapshot and entries as
// this spec writes them, and m.Migrated() names the older spec until a commit stores it
// under this one. It fails with a SpecMismatchError (naming both fingerprints) if the
// instance was stored under another spec, with a LogError (errors.Is ErrInvalidLog) if the
// log has a gap or an entry does not decode or is not a transition of this machine from
// the state the log has reached, and with a SnapshotError naming the instance if the
// snapshot is not one the machine could have taken (integrity.go says what else either
// refuses). An ID the store has never seen fails with a NotFoundError (errors.Is
// ErrNotFound), leaving m as it was: make a new machine to create one. m gets no store:
// set one to fire on.
func Replay[S StateType, E, R EnumType, C, X any](ctx context.Context, m *Machine[S, E, R, C, X], store Store, id string, check func(*X) error) error {
	d := m.def
	l, err := store.Load(ctx, d.Spec.Name(), id)
	if err != nil {
		return err
	}
	if l.Version == 0 && l.Snapshot == nil && len(l.Entries) == 0 {
		return &NotFoundError{Machine: d.Spec.Name(), ID: id}
	}
	migrated := ""
	if l.Version > 0 && l.Spec != d.Spec.Fingerprint {
		if d.migration(l.Spec) == nil {
			return &SpecMismatchError{Machine: d.Spec.Name(), ID: id, Stored: l.Spec, Spec: d.Spec.Fingerprint}
		}
		migrated = l.Spec
	}
	m.ID = id
	if l.Snapshot != nil {
		b, err := d.migrateSnapshot(l.Snapshot)
		if err != nil {
			return namedSnapshotError(d.Spec, id, err)
		}
		var s Snapshot[S, C, X]
		if err := json.Unmarshal(b, &s); err != nil {
			return namedSnapshotError(d.Spec, id, err)
		}
		switch {
		case s.Spec != d.Spec.Fingerprint:
			return &SpecMismatchError{Machine: d.Spec.Name(), ID: id, Stored: s.Spec, Spec: d.Spec.Fingerprint}
		case s.Seq != l.SnapshotSeq || s.ID != id:
			return namedSnapshotError(d.Spec, id, InvalidSnapshot(d.Spec, "seq", fmt.Sprintf("the snapshot of %s at %d says it is of %.200q at %d", id, l.SnapshotSeq, s.ID, s.Seq)))
		}
		if err := Restore(m, s, check); err != nil {
			return namedSnapshotError(d.Spec, id, err)
		}
		if n := m.window(); n > 0 && s.Seq > 0 {
			// The snapshot holds the present; the last of the past is in the log before it.
			past, err := store.Log(ctx, d.Spec.Name(), id, max(0, s.Seq-int64(n)))
			if err != nil {
				return err
			}
			for i := range past {
				if past[i].Seq > s.Seq {
					break
				}
				e, err := m.decodeEntry(&past[i])
				if err != nil {
					return InvalidLog(d.Spec, id, past[i].Seq, err)
				}
				m.recallEntry(&e)
				if e.Seq == s.Seq {
					m.passed(e.From, e.Event)
				}
			}
			// Read back from its start, the log held every key before the snapshot.
			m.keysMissed = s.Seq > int64(n)
		}
	}
	if err := m.applyLog(l.Entries); err != nil {
		return err
	}
	if m.seq != l.Version {
		return InvalidLog(d.Spec, id, l.Version, fmt.Errorf("the instance is at version %d, its log at %d", l.Version, m.seq))
	}
	if st := m.state.String(); migrated == "" && l.State != "" && l.State != st {
		// The store's copy of the state (what Find reads) says otherwise than the log.
		return InvalidLog(d.Spec, id, l.Version, fmt.Errorf("the store says the instance is in %.200s, its snapshot and log in %s", l.State, st))
	}
	m.migrated = migrated
	return nil
}

// CatchUp brings m, a machine of instance m.ID that Replay (or Resume) built from store and
// that has committed only through store since, up to the instance's latest version: it
// applies, as Replay does, the log entries other processes committed after m's own, and
// reads nothing else (no snapshot, no window before it). A worker that keeps machines in
// memory calls it after a ConflictError, where it would otherwise replay the instance
// whole. When it fails (the instance has been stored under another spec, an entry does not
// apply), m is left part way: replay the instance into a new machine.
func CatchUp[S StateType, E, R EnumType, C, X any](ctx context.Context, m *Machine[S, E, R, C, X], store Store) error {
	d := m.def
	if m.migrated != "" {
		return fmt.Errorf("%smachine %s was loaded from spec %s: replay it", d.Spec.prefix(), m.ID, m.migrated)
	}
	entries, err := store.Log(ctx, d.Spec.Name(), m.ID, m.seq)
	if err != nil {
		return err
	}
	return m.applyLog(entries)
}

// applyLog replays the entries of the log after the machine's version (Replay, CatchUp).
// A machine at version 0 (no snapshot, nothing applied) takes its creation time from the
// first entry.
func (m *Machine[S, E, R, C, X]) applyLog(entries []Entry) error {
	d := m.def
	var keys map[string]struct{}
	for i := range entries {
		e, err := m.decodeEntry(&entries[i])
		if err == nil {
			err = m.keySeen(&keys, e.Key)
		}
		if err == nil {
			if m.seq == 0 && d.Timing {
				m.createdAt, m.enteredAt, m.since = e.Created, e.Created, e.Created
				m.clocks.reset(e.Created)
			}
			err = m.apply(&e)
		}
		if err != nil {
			return InvalidLog(d.Spec, m.ID, entries[i].Seq, err)
		}
	}
	return nil
}

// decodeEntry decodes the log entry a store keeps, which must be of this spec and agree
// with the store's copy of its fields.
func (m *Machine[S, E, R, C, X]) decodeEntry(se *Entry) (LogEntry[S, E, R], error) {
	var e LogEntry[S, E, R]
	data, dropped := se.Data, false
	if len(m.def.Migrations) > 0 {
		var err error
		if data, dropped, err = m.def.migrateEntry(data); err != nil {
			return e, err
		}
	}
	if err := json.Unmarshal(data, &e); err != nil {
		return e, err
	}
	if dropped {
		// An event this spec no longer has is none of its events: no key or history
		// record of it matches a firing.
		e.Event = noEvent[E]()
	}
	switch {
	case e.Spec != m.def.Spec.Fingerprint:
		return e, &SpecMismatchError{Machine: m.def.Spec.Name(), ID: m.ID, Stored: e.Spec, Spec: m.def.Spec.Fingerprint}
	case e.Seq != se.Seq || e.Kind != se.Kind || e.Key != se.Key:
		return e, fmt.Errorf("the entry says seq %d, kind %q, key %q; the store %d, %q, %q", e.Seq, e.Kind, e.Key, se.Seq, se.Kind, se.Key)
	}
	if rewritten := len(data) != len(se.Data) || len(data) > 0 && &data[0] != &se.Data[0]; !rewritten {
		// Not migrated: the store's copy of the fields names them as the entry does.
		if err := m.agrees(se, &e); err != nil {
			return e, err
		}
	}
	return e, nil
}

// window is how many entries before a snapshot Replay reads back: the history and key
// windows, and the last transition of a resumable machine.
func (m *Machine[S, E, R, C, X]) window() int {
	n := 0
	if m.def.History {
		n = m.history.Size()
	}
	if m.def.Idempotent {
		n = max(n, m.keys.Size())
	}
	if m.def.Resumable {
		n = max(n, 1)
	}
	return n
}

// apply replays log entry e: it checks that e is the next entry and a transition of this
// machine from the current state, then applies what the transition did, without hooks.
func (m *Machine[S, E, R, C, X]) apply(e *LogEntry[S, E, R]) error {
	d := m.def
	if e.Seq != m.seq+1 {
		return fmt.Errorf("the log has a gap: seq %d follows %d", e.Seq, m.seq)
	}
	if e.Timestamp.IsZero() {
		return errors.New("the entry has no timestamp")
	}
	if err := m.permitted(e); err != nil {
		return err
	}
	if len(d.Counters) > 0 {
		limits, err := m.limitsWith(e.Limits)
		if err != nil {
			return err
		}
		copy(m.limits, limits)
	} else if len(e.Limits) > 0 {
		return errors.New("limits: the machine has no counters")
	}
	if d.Timing {
		timeouts, err := m.timeoutsWith(e.Timeouts)
		if err != nil {
			return fmt.Errorf("timeouts: %w", err)
		}
		copy(m.timeouts, timeouts)
	} else if len(e.Timeouts) > 0 {
		return errors.New("timeouts: the machine keeps no time")
	}
	if len(e.Context) > 0 {
		var c C
		if err := json.Unmarshal(e.Context, &c); err != nil {
			return err
		}
		m.Context = c
	}
	if d.Policies && len(e.Policies) > 0 {
		if err := json.Unmarshal(e.Policies, m.policySets.PolicySet(&m.extra, true)); err != nil {
			return fmt.Errorf("policies: %w", err)
		}
	}
	if p := d.Payloads; p != nil && e.Kind == KindTransition && int(e.Event) < len(p) && p[e.Event] {
		pl := m.payloads.Payload(&m.extra, int(e.Event), true)
		if err := json.Unmarshal(e.Payload, pl); err != nil {
			return fmt.Errorf("payload: %w", err)
		}
		// A payload the event was refused with cannot have been recorded.
		if errs := pl.Validate(); errs != nil {
			return fmt.Errorf("invalid payload: %s: %s", errs[0].Field, errs[0].Message)
		}
	}
	switch {
	case d.Chart != nil && (e.Kind == KindTransition || e.Kind == KindStarted):
		return m.applyChart(e)
	case e.Moved != nil && e.Kind == KindTransition:
		return m.applyMoved(e)
	case e.Kind == KindResumed:
		return m.applyResumed(e)
	case isNote(e.Kind):
		return m.applyNote(e)
	case e.Kind == KindTransition:
	default:
		return fmt.Errorf("%q is not a kind of entry", e.Kind)
	}
	ok := e.From == m.state && e.Transition >= 0 && e.Transition < len(d.Transitions)
	if ok {
		t := &d.Transitions[e.Transition]
		ok = slices.Contains(t.From, int32(e.From)) && slices.Contains(t.On, int32(e.Event)) && slices.Contains(t.To, int32(e.To))
	}
	if !ok {
		return fmt.Errorf("%s -> %s on %s is not transition %d from %s", e.From, e.To, m.eventText(e.Event), e.Transition, m.state)
	}
	t := &d.Transitions[e.Transition]
	// A tripped limit redirected the transition (the first one tripped decides; one that
	// refuses would have left nothing to log) and restarted the counter, as take does.
	var trips uint64
	then := int32(-1)
	if !t.Plain {
		for k, c := range t.Inc {
			cd := &d.Counters[c]
			if cd.Limit == 0 || *m.counter(c, e.From)+1 < m.limits[c] {
				continue
			}
			if trips == 0 {
				then = cd.Then
			}
			trips |= 1 << k
		}
	}
	switch {
	case trips != 0 && then < 0:
		return fmt.Errorf("%s -> %s on %s trips a limit that refuses it", e.From, e.To, m.eventText(e.Event))
	case trips != 0 && S(then) != e.To:
		return fmt.Errorf("%s -> %s on %s trips a limit that redirects it to %s", e.From, e.To, m.eventText(e.Event), S(then))
	}
	// A redirect leaves the state, even back to the state left by an internal transition.
	moved := t.Kind != TargetInternal || trips != 0
	m.count(t, e.From, trips, moved)
	if e.To != e.From && d.remembers && d.States[e.To].Remembers {
		m.memory[e.To], m.remembered[e.To] = e.From, true
	}
	m.state = e.To
	if moved && d.Timing {
		m.moveClock(e.From, e.Timestamp, false)
	}
	m.recallEntry(e)
	m.seq, m.updatedAt = e.Seq, e.Timestamp
	m.passed(e.From, e.Event)
	return nil
}

// applyResumed replays a STATE_RESUMED entry: out of a terminal state, back to the state
// the last transition left, and nowhere else.
func (m *Machine[S, E, R, C, X]) applyResumed(e *LogEntry[S, E, R]) error {
	d := m.def
	switch {
	case !d.Resumable:
		return errors.New("the machine cannot be resumed")
	case e.From != m.state || !e.From.IsTerminal() || int(e.To) >= len(d.States) || e.To.IsTerminal():
		return fmt.Errorf("resumed from %s to %s in %s", e.From, e.To, m.state)
	case m.seq == 0:
		return fmt.Errorf("resumed to %s before any transition", e.To)
	case !m.lastKnown:
		return fmt.Errorf("resumed to %s, but the log before it has no entry at seq %d", e.To, m.seq)
	case e.To != m.last:
		return fmt.Errorf("resumed to %s, but the last transition left %s", e.To, m.last)
	}
	m.state = e.To
	if d.Timing {
		m.moveClock(e.From, e.Timestamp, false)
	}
	m.recallEntry(e)
	m.seq, m.updatedAt = e.Seq, e.Timestamp
	m.passed(e.From, e.Event)
	return nil
}

// Log entry kinds.
const (
	KindTransition = "STATE_TRANSITION"
	KindResumed    = "STATE_RESUMED"
	// KindStarted is the entry of a statechart's start (Start) that did something.
	KindStarted = "STATE_STARTED"
)

// Resume sets m, a new machine, to machine id of store (Replay, with check) and resumes it
// if it has ended: a machine in a terminal state goes back to the state its last
// transition left, everything else (context, counters, ...) as that transition's
// checkpoint saved it. The resumption is committed to the store as a STATE_RESUMED entry,
// which replaying applies, with a snapshot of the resumed machine. A machine that has not
// ended is left as loaded. No hook runs. m gets the store, so that its log continues; in
// says who resumes it, when and why.
func Resume[S StateType, E, R EnumType, C, X any](ctx context.Context, m *Machine[S, E, R, C, X], store Store, id string, check func(*X) error, in Input[R]) error {
	if err := Replay(ctx, m, store, id, check); err != nil {
		return err
	}
	m.SetStore(store)
	if !m.state.IsTerminal() || !m.def.Resumable || m.seq == 0 {
		return nil
	}
	if !m.lastKnown {
		// The snapshot's own entry is missing from the log: where the machine was is unknown.
		return InvalidLog(m.def.Spec, id, m.seq, fmt.Errorf("no entry at seq %d, the last transition, to resume from", m.seq))
	}
	st := Step[S, E, R]{From: m.state, To: m.last, Event: m.lastEvent, Role: in.Role, At: m.now(&in)}
	m.state, m.last = st.To, st.From
	m.seq++
	m.updatedAt = st.At
	m.pending, m.entered = m.pending[:0], true
	if m.def.Timing {
		m.moveClock(st.From, st.At, false)
	}
	return m.commitTo(ctx, store, st, &in, -1, true)
}

// recallEntry puts what log entry e says of the machine's past into the windows it keeps
// in memory: the history record and the idempotency key.
func (m *Machine[S, E, R, C, X]) recallEntry(e *LogEntry[S, E, R]) {
	if m.def.History {
		m.history.Add(Record[S, E]{From: e.From, To: e.To, Event: e.Event, EventID: e.EventID, At: e.Timestamp, Actor: e.Actor, Reason: e.Reason})
	}
	if m.def.Idempotent && e.Key != "" {
		m.keys.Put(e.Key, keyRecord[S, E]{event: e.Event, state: e.To})
	}
}

// ErrNoStore is what reading a machine's stored past returns for a machine without a store.
var ErrNoStore = errors.New("fsm: the machine has no store")

// StoreName is the machine's name in a store (Spec.Name): its package and machine,
// "review.Task".
func (m *Machine[S, E, R, C, X]) StoreName() string { return m.def.Spec.Name() }

// EventLog reads from the machine's store the entries of its event log (its ID's) with a
// sequence number greater than after, decoded: the machine's whole past when after is 0. An
// entry that does not decode, or was written under another spec, fails with a LogError.
func (m *Machine[S, E, R, C, X]) EventLog(ctx context.Context, after int64) ([]LogEntry[S, E, R], error) {
	if m.store == nil {
		return nil, ErrNoStore
	}
	es, err := m.store.Log(ctx, m.def.Spec.Name(), m.ID, after)
	if err != nil {
		return nil, err
	}
	out := make([]LogEntry[S, E, R], len(es))
	for i := range es {
		if out[i], err = m.decodeEntry(&es[i]); err != nil {
			return nil, InvalidLog(m.def.Spec, m.ID, es[i].Seq, err)
		}
	}
	return out, nil
}

// StoredSnapshot reads from the machine's store the last snapshot taken of it (of its ID),
// decoded; ok is false when the store holds none.
func (m *Machine[S, E, R, C, X]) StoredSnapshot(ctx context.Context) (s Snapshot[S, C, X], ok bool, err error) {
	if m.store == nil {
		return s, false, ErrNoStore
	}
	l, err := m.store.Load(ctx, m.def.Spec.Name(), m.ID)
	if err != nil || l.Snapshot == nil {
		return s, false, err
	}
	return s, true, namedSnapshotError(m.def.Spec, m.ID, json.Unmarshal(l.Snapshot, &s))
}

// counterValues returns the machine's counters that are not zero, for the store.
func (m *Machine[S, E, R, C, X]) counterValues() []CounterValue {
	var out []CounterValue
	m.eachCounter(func(c *Counter, st S, slot int) {
		if n := m.counters[slot]; n != 0 {
			out = append(out, counterValue(c, st, n))
		}
	})
	return out
}

// eachCounter calls fn for every slot of m.counters, in spec order: its counter, and the
// state of a per-state counter's slot.
func (m *Machine[S, E, R, C, X]) eachCounter(fn func(c *Counter, st S, slot int)) {
	d := m.def
	for i := range d.Counters {
		c, base := &d.Counters[i], d.counterBase[i]
		if !c.PerState {
			fn(c, 0, base)
			continue
		}
		for st := range d.States {
			fn(c, S(st), base+st)
		}
	}
}

// counterValue is counter c's value n, in state st for a per-state counter.
func counterValue[S StateType](c *Counter, st S, n int) CounterValue {
	v := CounterValue{Name: c.Name, Value: n}
	if c.PerState {
		v.State = st.String()
	}
	return v
}

// logEntryJSON is LogEntry as it encodes: the same fields, but the event left out of an
// entry that no event fired (a note: MACHINE_CREATED, TIMEOUT_*).
type logEntryJSON[S StateType, E, R EnumType] struct {
	Spec       string              `json:"spec,omitempty"`
	Seq        int64               `json:"seq"`
	Timestamp  time.Time           `json:"timestamp"`
	ID         string              `json:"id"`
	Kind       string              `json:"kind"`
	Event      *E                  `json:"event,omitempty"`
	From       S                   `json:"from"`
	To         S                   `json:"to"`
	Transition int                 `json:"transition"`
	Actor      string              `json:"actor"`
	Reason     string              `json:"reason"`
	EventID    string              `json:"eventId,omitempty"`
	Role       R                   `json:"role,omitzero"`
	Key        string              `json:"idempotencyKey,omitempty"`
	Created    time.Time           `json:"created,omitzero"`
	Context    json.RawMessage     `json:"context,omitempty"`
	Payload    json.RawMessage     `json:"payload,omitempty"`
	Policies   json.RawMessage     `json:"policies,omitempty"`
	Limits     map[string]int      `json:"limits,omitempty"`
	Timeouts   map[S]time.Duration `json:"timeouts,omitempty"`
	Metadata   map[string]string   `json:"metadata"`
	Micro      []int               `json:"microsteps,omitempty"`
	History    map[string]string   `json:"history,omitempty"`
	Moved      *Move               `json:"moved,omitempty"`
}

// MarshalJSON encodes the entry with what replaying it needs; a note (an entry no event
// fired) has no event.
func (e LogEntry[S, E, R]) MarshalJSON() ([]byte, error) { return json.Marshal(e.wire()) }

// wire returns the entry as it encodes.
func (e *LogEntry[S, E, R]) wire() *logEntryJSON[S, E, R] {
	j := &logEntryJSON[S, E, R]{
		Spec: e.Spec, Seq: e.Seq, Timestamp: e.Timestamp, ID: e.ID, Kind: e.Kind, From: e.From, To: e.To,
		Transition: e.Transition, Actor: e.Actor, Reason: e.Reason, EventID: e.EventID, Role: e.Role, Key: e.Key,
		Created: e.Created, Context: e.Context, Payload: e.Payload, Policies: e.Policies, Limits: e.Limits,
		Timeouts: e.Timeouts, Metadata: e.Metadata, Micro: e.Micro, History: e.History,
		Moved: e.Moved,
	}
	if !isNote(e.Kind) {
		j.Event = &e.Event
	}
	return j
}
