package fsmrt

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"reflect"
	"slices"
	"strconv"
	"sync"
	"time"
)

// Machine is the engine of every generated machine: a generated machine type embeds one
// (review.Task embeds Machine[review.State, review.Event, NoRole, review.TaskContext,
// None]) and describes itself with a Def. Its methods are the machine's API for what every
// machine has (State, Fire, Can, Permitted, Snapshot, ...); what only some specs declare
// (counters, timeouts, history) the generated package wraps from this package's functions.
//
// A Machine is not safe for concurrent use: confine it to one goroutine, or guard it with
// a mutex. Different machines may be used from different goroutines. The machine does no
// I/O itself; hooks and stores do.
type Machine[S StateType, E, R EnumType, C, X any] struct {
	state S
	seq   int64 // accepted transitions so far
	// answered is seq+1 when the last firing was answered by its idempotency key (Answered).
	answered int64

	// ID names the machine in its store, its event log and a registry.
	ID string
	// Context is the machine's data. Hooks may change it; states check what they require.
	Context C

	def        *Def[S, E, R]
	moves      []uint32 // def.Moves, and the numbers of states and events, kept here for Fire
	ns, ne     uint32
	invalid    []InvalidTransitionError[S, E]
	guards     Guards[S, E, R]
	actions    Actions[S, E, R]
	requirer   Requirer[S, C]
	onEnter    ChartRequirer[C]
	inv        Invariants[C]
	policies   Policies
	checkpoint Checkpointer[S, E, R]
	payloads   Payloads[X]
	policySets PolicySets[X]
	effector   Effector[S, E, C]
	pending    []int32 // the effect actions of the transition being taken
	entered    bool    // the transition being committed entered a state: its deadlines are armed
	owner      string  // the machine as a claimer of effects and deadlines (SetOwner)
	lease      time.Duration
	extra      X
	last       S // the state the last transition left, and its event, for Resume
	lastEvent  E
	lastKnown  bool           // last and lastEvent are known (restored from a snapshot, they are not)
	counters   []int          // by counter: one slot, or one per state for a per-state counter
	limits     []int          // by counter: the limit in force (the count whose increment trips)
	changed    []CounterValue // the counters a commit changed (changedCounters), reused
	memory     []S            // by state: the state a remembering state was entered from
	remembered []bool

	store     Store
	undo      *undo[S, E, C, X] // what a transition changes, put back when its commit or an action fails
	updatedAt time.Time         // when the last persisted (or, with a clock, any) transition happened
	logger    *slog.Logger
	slow      bool // Fire cannot answer from the moves table alone: a store, a logger, or a start to run (setSlow)
	observer  Observer
	observing bool // a firing is being observed (observed)
	inTx      bool // the last commit was in a transaction of the caller's (CallersTx): checkStored

	history    Window[Record[S, E]] // the last records; the store's log has them all
	keys       KeyWindow[keyRecord[S, E]]
	keysMissed bool   // the log has entries before the machine's past that it never read the keys of
	migrated   string // the older spec Replay migrated the instance from, until a commit stores it under this one
	// expired says the stay in state expiredIn entered at expiredAt has expired (Expire).
	expired   bool
	expiredIn S
	expiredAt time.Time
	fired     firedDelays // the delays of the current stay that have fired (ExpireNext)
	clocks    chartClocks // a statechart's clocks of its states (clocks.go)
	clock     Clock
	createdAt time.Time
	enteredAt time.Time
	// since is when the current state's timeout started counting: when the state was
	// entered, or in a statechart the state whose timeout the configuration has (StateDef.Clock).
	since       time.Time
	timeByState []time.Duration // time spent in each state, the current stay excluded
	timeouts    []time.Duration

	// A statechart's history memory by slot (the value recorded, 0 for none), the memory
	// before the event being taken, the queue of events raised in a macrostep and the
	// microsteps it took; unstarted says Start has something to do.
	mem, memBefore []int32
	queue, micro   []int32
	unstarted      bool

	// What a commit to the store is built in, reused: the store keeps none of it after
	// Commit returns (Store.Commit), so one transition's buffers serve the next.
	commitBuf         Commit
	entryBuf, snapBuf []byte
	ctxBuf            bytes.Buffer
	ctxEnc            *json.Encoder // writes into ctxBuf
	// ctxLast is the context ctxBuf holds the JSON of, for a context of plain values
	// (ctxPlain 1: unknown 0, not plain 2), whose encoding a commit that did not change
	// it reuses.
	ctxLast  C
	ctxPlain uint8
	ctxValid bool
	times    timeCache

	_ [64]byte // keeps machines used by different goroutines off one cache line
}

// noMetadata is the metadata of a log entry that has none: an empty object, which nothing
// writes into (a note makes a map of its own).
var noMetadata = map[string]string{}

// keyRecord is what an idempotency key led to.
type keyRecord[S, E any] struct {
	event E
	state S
}

// Init makes m a machine of d in its initial state, calling back ops for what d says is
// code: ops implements those of Guards, Actions, Requirer (ChartRequirer), Policies and Checkpointer the
// spec needs (nil when it needs none). Generated constructors call it before setting the
// context's defaults.
func Init[S StateType, E, R EnumType, C, X any](m *Machine[S, E, R, C, X], d *Def[S, E, R], ops any) {
	d.init()
	m.def, m.state = d, d.Initial
	m.moves, m.ns, m.ne, m.invalid = d.Moves, uint32(len(d.States)), uint32(d.NumEvents), d.invalid
	m.guards, _ = ops.(Guards[S, E, R])
	m.actions, _ = ops.(Actions[S, E, R])
	m.requirer, _ = ops.(Requirer[S, C])
	m.onEnter, _ = ops.(ChartRequirer[C])
	m.inv, _ = ops.(Invariants[C])
	m.policies, _ = ops.(Policies)
	m.checkpoint, _ = ops.(Checkpointer[S, E, R])
	m.payloads, _ = ops.(Payloads[X])
	m.policySets, _ = ops.(PolicySets[X])
	m.effector, _ = ops.(Effector[S, E, C])
	if o := defaultObserver.Load(); o != nil {
		m.observer = *o
		m.setSlow()
	}
	if n := len(d.Counters); n > 0 {
		m.counters = make([]int, d.counterSlots)
		m.limits = make([]int, n)
		for i, c := range d.Counters {
			m.limits[i] = c.Limit
		}
	}
	if d.remembers {
		m.memory = make([]S, len(d.States))
		m.remembered = make([]bool, len(d.States))
	}
	if c := d.Chart; c != nil {
		m.mem = make([]int32, len(c.History))
		m.memBefore = make([]int32, len(c.History))
		m.unstarted = c.Starts
		m.setSlow()
	}
	if d.Timing {
		m.clock = SystemClock{}
		m.createdAt = m.clock.Now()
		m.enteredAt, m.since = m.createdAt, m.createdAt
		m.timeByState = make([]time.Duration, len(d.States))
		m.timeouts = make([]time.Duration, len(d.States))
		for i, s := range d.States {
			m.timeouts[i] = s.Timeout
		}
		if d.Chart != nil {
			m.clocks = newChartClocks(len(d.Chart.Clocks))
			m.clocks.reset(m.createdAt)
		}
	}
	if d.MayFail != nil || d.Chart != nil && len(d.Counters) > 0 {
		// A statechart's macrostep refused after its first microstep puts the counters
		// back too.
		m.newUndo()
	}
}

// counter returns the slot of counter c for a transition leaving s.
func (m *Machine[S, E, R, C, X]) counter(c int32, s S) *int {
	return &m.counters[m.def.slot(c, s)]
}

// State returns the current state.
func (m *Machine[S, E, R, C, X]) State() S {
	return m.state
}

// Seq returns the number of transitions accepted so far (restored with a snapshot): the
// sequence number of the last event log entry.
func (m *Machine[S, E, R, C, X]) Seq() int64 {
	return m.seq
}

// SetStore makes the machine commit every accepted transition to s (Store.Commit): its
// log entry, its idempotency key and, at a checkpoint, a snapshot, in one atomic write
// under optimistic concurrency on the machine's sequence number. When the store refuses or
// fails, Fire returns a StoreError and the machine is as it was before: reload it from the
// store and fire again when the error is a conflict (errors.Is ErrStoreConflict; Retry does
// both). Actions have run by then: an action with effects outside the machine belongs after
// the commit. An action that changes the context should assign new maps and slices rather
// than change those it holds, which the machine cannot put back.
func (m *Machine[S, E, R, C, X]) SetStore(s Store) {
	m.store = s
	m.setSlow()
	if s != nil && m.undo == nil {
		m.newUndo()
	}
}

// newUndo makes the record of what a transition changes, which the machine keeps when it
// has a store or actions that may fail.
func (m *Machine[S, E, R, C, X]) newUndo() {
	m.undo = &undo[S, E, C, X]{
		counters: make([]int, len(m.counters)), memory: make([]S, len(m.memory)),
		remembered: make([]bool, len(m.remembered)), timeByState: make([]time.Duration, len(m.timeByState)),
		mem: make([]int32, len(m.mem)), clocks: newChartClocks(len(m.clocks.start)),
		deep: sharesMemory(reflect.TypeFor[C]()),
	}
	m.undo.enc = json.NewEncoder(&m.undo.buf)
}

// undo is what a transition changes in a machine with a store, kept before it to put back
// when the commit fails. Limits, timeouts and the creation time do not change in a
// transition; the windows of history and keys take the transition only once committed.
type undo[S StateType, E any, C, X any] struct {
	state, last          S
	lastEvent            E
	lastKnown            bool
	seq                  int64
	context              C
	extra                X
	updatedAt, enteredAt time.Time
	since                time.Time
	counters             []int
	memory               []S
	remembered           []bool
	timeByState          []time.Duration
	mem                  []int32
	clocks               chartClocks
	unstarted            bool
	// A context that holds slices, maps or pointers, which actions may change in place, is
	// kept as JSON (in buf, by enc) and decoded back; encoded is whether it was.
	deep, encoded bool
	buf           bytes.Buffer
	enc           *json.Encoder
}

// sharesMemory reports whether a value of type t shares memory with its copies: whether it
// holds slices, maps, pointers, interfaces, channels or functions.
func sharesMemory(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Array:
		return sharesMemory(t.Elem())
	case reflect.Struct:
		for i := range t.NumField() {
			if sharesMemory(t.Field(i).Type) {
				return true
			}
		}
		return false
	case reflect.Slice, reflect.Map, reflect.Pointer, reflect.Interface, reflect.Chan, reflect.Func, reflect.UnsafePointer:
		return true
	}
	return false
}

// keep records in m.undo what a transition may change.
func (m *Machine[S, E, R, C, X]) keep() {
	u := m.undo
	u.state, u.last, u.lastEvent, u.lastKnown, u.seq = m.state, m.last, m.lastEvent, m.lastKnown, m.seq
	u.context, u.extra, u.updatedAt, u.enteredAt, u.since = m.Context, m.extra, m.updatedAt, m.enteredAt, m.since
	if u.deep {
		u.buf.Reset()
		u.encoded = u.enc.Encode(&m.Context) == nil
	}
	copy(u.counters, m.counters)
	copy(u.memory, m.memory)
	copy(u.remembered, m.remembered)
	copy(u.timeByState, m.timeByState)
	copy(u.mem, m.mem)
	u.clocks.copyFrom(&m.clocks)
	u.unstarted = m.unstarted
}

// rollback puts back what keep recorded.
func (m *Machine[S, E, R, C, X]) rollback() {
	u := m.undo
	m.state, m.last, m.lastEvent, m.lastKnown, m.seq = u.state, u.last, u.lastEvent, u.lastKnown, u.seq
	m.Context, m.extra, m.updatedAt, m.enteredAt, m.since = u.context, u.extra, u.updatedAt, u.enteredAt, u.since
	if u.encoded {
		// Decoded into a new value: what actions changed in place stays with the old one.
		var c C
		if json.Unmarshal(u.buf.Bytes(), &c) == nil {
			m.Context = c
		}
	}
	copy(m.counters, u.counters)
	copy(m.memory, u.memory)
	copy(m.remembered, u.remembered)
	copy(m.timeByState, u.timeByState)
	copy(m.mem, u.mem)
	m.clocks.copyFrom(&u.clocks)
	m.unstarted = u.unstarted
	m.setSlow()
}

// SetLogger makes the machine log every refused event (at Warn) through l.
func (m *Machine[S, E, R, C, X]) SetLogger(l *slog.Logger) {
	m.logger = l
	m.setSlow()
}

// Fire fires e and returns the new state. When e is refused it returns the unchanged state
// and one of the typed errors (InvalidTransitionError, GuardError, ...), and nothing
// changes. Accepting allocates nothing unless the spec asks for history or idempotency
// keys, and neither does refusing, except with a ValidationError (it lists the fields and
// the events allowed), a PermissionError for a role past Def.NumRoles or a LimitError at a
// limit changed at run time (one allocation each). The errors returned without allocating are
// shared by every machine of the Def: do not change them.
func (m *Machine[S, E, R, C, X]) Fire(ctx context.Context, e E) (S, error) {
	if coverOn {
		// The coverage build records what the whole path decides.
		var in Input[R]
		return m.fire(ctx, e, &in)
	}
	if from := m.state; !m.slow && uint32(from) < m.ns && uint32(e) < m.ne {
		i := uint32(from)*m.ne + uint32(e)
		if i < uint32(len(m.moves)) {
			switch to := m.moves[i]; {
			case to < m.ns:
				m.state = S(to)
				m.seq++
				return S(to), nil
			case to == m.ns && i < uint32(len(m.invalid)):
				return from, &m.invalid[i]
			}
		}
		if m.def.Payloads == nil {
			var in Input[R]
			return m.step(ctx, e, &in, false)
		}
	}
	var in Input[R]
	return m.fire(ctx, e, &in)
}

// FireWith fires e with what the caller says about it (who fires it, when, why, ...).
func (m *Machine[S, E, R, C, X]) FireWith(ctx context.Context, e E, in Input[R]) (S, error) {
	return m.fire(ctx, e, &in)
}

// FirePayload fires e, an event that carries a payload, with the payload the generated
// Fire<Event> method has just written into the extra data (Extra), prev being the extra
// data before. A payload that breaks its constraints is refused with a ValidationError
// (Payload set) as soon as the state is known to accept e; a refused event leaves the
// previous payload.
func FirePayload[S StateType, E, R EnumType, C, X any](ctx context.Context, m *Machine[S, E, R, C, X], e E, in Input[R], prev X) (S, error) {
	return m.fireLoaded(ctx, e, &in, &prev)
}

// fire fires e: with a zero payload if e carries one (Fire and FireWith), else through
// idempotency keys, logging a refusal when the machine has a logger.
func (m *Machine[S, E, R, C, X]) fire(ctx context.Context, e E, in *Input[R]) (S, error) {
	if m.observer != nil && !m.observing {
		return m.observed(ctx, e, in)
	}
	if m.inTx {
		if err := m.checkStored(ctx); err != nil {
			return m.state, err
		}
	}
	if p := m.def.Payloads; p != nil && int(e) < len(p) && p[e] {
		prev := m.extra
		m.payloads.Payload(&m.extra, int(e), true)
		return m.fireLoaded(ctx, e, in, &prev)
	}
	return m.fireOnce(ctx, e, in)
}

// fireLoaded fires e with its payload in the extra data, prev being the extra data before
// it, which a refusal restores.
func (m *Machine[S, E, R, C, X]) fireLoaded(ctx context.Context, e E, in *Input[R], prev *X) (S, error) {
	// step validates the payload, once an idempotency key has had its say.
	seq := m.seq
	to, err := m.fireOnce(ctx, e, in)
	if m.seq == seq {
		// Refused, or answered by an idempotency key without firing: the payload recorded
		// is the last one a transition took.
		m.extra = *prev
	}
	return to, err
}

// fireOnce applies idempotency keys around step and logs a refusal when the machine has a
// logger.
func (m *Machine[S, E, R, C, X]) fireOnce(ctx context.Context, e E, in *Input[R]) (S, error) {
	seq, from := m.seq, m.state
	to, err := m.once(ctx, e, in)
	if coverOn && err != nil && m.seq == seq {
		m.coverRefused(from, e, err)
	}
	if err != nil && m.logger != nil {
		level, msg := slog.LevelWarn, "event refused"
		switch {
		case m.seq != seq:
			// Accepted, but a checkpoint failed after the transition (no store).
			level, msg = slog.LevelError, "transition not persisted"
		case m.store != nil && !errors.Is(err, ErrRefused):
			// Accepted, but a checkpoint or the commit failed: the machine is as before.
			level, msg = slog.LevelError, "transition not committed"
		}
		m.logger.LogAttrs(ctx, level, msg, slog.String("machine", m.def.Spec.Machine), slog.String("id", m.ID),
			slog.String("state", m.state.String()), slog.String("event", e.String()), slog.String("error", err.Error()))
	}
	return to, err
}

// once starts a statechart not started yet and honours idempotency keys around step.
func (m *Machine[S, E, R, C, X]) once(ctx context.Context, e E, in *Input[R]) (S, error) {
	if m.unstarted {
		if err := m.StartWith(ctx, *in); err != nil {
			return m.state, err
		}
	}
	if !m.def.Idempotent || in.Key == "" {
		return m.step(ctx, e, in, false)
	}
	r, ok := m.keys.Get(in.Key)
	if !ok && m.store != nil && (m.keysMissed || m.keys.MayHaveForgotten(in.Key)) {
		// A key the window may have forgotten, or never read, may be in the store's log.
		// One it neither holds nor may have forgotten, when the machine read its log from
		// the start (or began it), needs no look-up before the commit: a key another writer
		// used came with a version the commit's check refuses, and a retry replays the
		// machine with that key.
		var err error
		if r, ok, err = m.findKey(ctx, in.Key); err != nil {
			return m.state, StoreFailed(m.def.Spec, "find key", m.seq, err)
		}
	}
	if ok {
		return m.used(e, in.Key, r)
	}
	seq := m.seq
	to, err := m.step(ctx, e, in, false)
	if m.seq != seq {
		// Accepted, even if a checkpoint failed after it: firing again with the key must
		// not repeat the transition. (A failed commit leaves m.seq as it was.)
		m.keys.Put(in.Key, keyRecord[S, E]{event: e, state: to})
	}
	return to, err
}

// used returns the result of firing e with an idempotency key already used for r: r's
// state when r was e, else an IdempotencyConflictError.
func (m *Machine[S, E, R, C, X]) used(e E, key string, r keyRecord[S, E]) (S, error) {
	if r.event != e {
		return m.state, IdempotencyConflict(m.def.Spec, m.state, e, key, r.event)
	}
	m.answered = m.seq + 1
	return r.state, nil
}

// Can reports whether e would be accepted now, without firing it. Guards are evaluated.
func (m *Machine[S, E, R, C, X]) Can(ctx context.Context, e E) bool {
	// The table cached at Init, as Fire reads it.
	if from := uint32(m.state); from < m.ns && uint32(e) < m.ne {
		if i := from*m.ne + uint32(e); i < uint32(len(m.moves)) {
			switch to := m.moves[i]; {
			case to < m.ns:
				return true
			case to == m.ns:
				return false
			}
		}
	}
	return m.CanWith(ctx, e, Input[R]{})
}

// CanWith is Can for a given input.
func (m *Machine[S, E, R, C, X]) CanWith(ctx context.Context, e E, in Input[R]) bool {
	_, err := m.step(ctx, e, &in, true)
	return err == nil
}

// Permitted appends to buf the events that would be accepted now, in declaration order,
// and returns it. It allocates nothing when buf has room.
func (m *Machine[S, E, R, C, X]) Permitted(ctx context.Context, buf []E) []E {
	return m.PermittedWith(ctx, Input[R]{}, buf)
}

// PermittedWith is Permitted for a given input.
func (m *Machine[S, E, R, C, X]) PermittedWith(ctx context.Context, in Input[R], buf []E) []E {
	d := m.def
	if int(m.state) >= len(d.States) {
		return buf
	}
	if p := d.plainPermitted[m.state]; p != nil {
		return append(buf, p...)
	}
	row := d.Moves[int(m.state)*d.NumEvents:][:d.NumEvents]
	if c := d.Chart; c != nil {
		row = row[:c.External]
	}
	for i, to := range row {
		e := E(i)
		switch to {
		case MoveRefused(len(d.States)):
			continue
		case MoveStep(len(d.States)):
			if _, err := m.step(ctx, e, &in, true); err != nil {
				continue
			}
		}
		buf = append(buf, e)
	}
	return buf
}

// step decides e in the current state and, unless dry, applies it.
func (m *Machine[S, E, R, C, X]) step(ctx context.Context, e E, in *Input[R], dry bool) (S, error) {
	d := m.def
	from := m.state
	if int(from) >= len(d.States) || int(e) >= d.NumEvents || !d.external(int(e)) {
		refusal := InvalidTransition(d.Spec, from, e)
		return from, &refusal
	}
	i := int(from)*d.NumEvents + int(e)
	p := d.pairIndex[i]
	if p == 0 {
		return from, &d.invalid[i]
	}
	if pl := d.Payloads; !dry && pl != nil && pl[e] {
		// The state accepts e: its payload (in the extra data) must meet its constraints.
		if errs := m.payloads.Payload(&m.extra, int(e), false).Validate(); errs != nil {
			return from, Validation(d.Spec, from, e, from, true, errs, m.PermittedWith(ctx, *in, nil))
		}
	}
	st := Step[S, E, R]{From: from, To: from, Event: e, Role: in.Role}
	if d.Chart != nil {
		if t := m.pick(ctx, p-1, &st, from); t >= 0 {
			return m.takeChart(ctx, &st, in, dry, t, &d.refusals[p-1])
		}
		return from, &d.guards[i]
	}
	for _, c := range d.Pairs[p-1].Cands {
		if m.holds(ctx, c.Conds, &st) {
			return m.take(ctx, st, in, dry, int(c.T), &d.refusals[p-1])
		}
	}
	return from, &d.guards[i]
}

// holds reports whether every condition holds.
func (m *Machine[S, E, R, C, X]) holds(ctx context.Context, conds []int32, st *Step[S, E, R]) bool {
	for _, g := range conds {
		negate := g < 0
		if negate {
			g = ^g
		}
		if m.guard(ctx, g, st) == negate {
			return false
		}
	}
	return true
}

// permits reports whether role r may fire t.
func (m *Machine[S, E, R, C, X]) permits(t *Transition, r R) bool {
	if slices.Contains(m.def.AlwaysRoles, r) {
		return true
	}
	for _, rr := range t.Roles {
		if R(rr.Role) == r && (rr.Policy < 0 || m.policies.Policy(int(rr.Policy))) {
			return true
		}
	}
	return false
}

// denied returns the refusal of transition t (of step st; ref: the refusals of its pair)
// to role r, or nil when r may fire it.
func (m *Machine[S, E, R, C, X]) denied(t *Transition, from S, e E, r R, ref *refusals[S, E, R]) error {
	if len(t.Roles) == 0 || m.permits(t, r) {
		return nil
	}
	if int(r) < len(ref.permission) {
		return &ref.permission[r]
	}
	return Permission(m.def.Spec, from, e, r)
}

// recall returns the state h remembers (ref: the refusals of the pair).
func (m *Machine[S, E, R, C, X]) recall(st Step[S, E, R], h S, ref *refusals[S, E, R]) (S, error) {
	if !m.remembered[h] {
		return st.From, &ref.noHistory[h]
	}
	return m.memory[h], nil
}

// take decides and applies transition ti (ref: the refusals of its pair): roles, target,
// limits, required fields, then exit actions, its actions, counters, memory, state, clock,
// entry actions and commit.
func (m *Machine[S, E, R, C, X]) take(ctx context.Context, st Step[S, E, R], in *Input[R], dry bool, ti int, ref *refusals[S, E, R]) (S, error) {
	d := m.def
	t := &d.Transitions[ti]
	if err := m.denied(t, st.From, st.Event, in.Role, ref); err != nil {
		return st.From, err
	}
	to, internal := st.From, false
	switch t.Kind {
	case TargetFixed:
		to = S(t.Target)
	case TargetInternal:
		internal = true
	case TargetHistory:
		var err error
		if to, err = m.recall(st, S(t.Target), ref); err != nil {
			return st.From, err
		}
	case TargetChoice:
		chosen := false
		for _, c := range t.Choices {
			if !m.holds(ctx, c.Conds, &st) {
				continue
			}
			if c.Kind == TargetHistory {
				var err error
				if to, err = m.recall(st, S(c.Target), ref); err != nil {
					return st.From, err
				}
			} else {
				to = S(c.Target)
			}
			chosen = true
			break
		}
		if !chosen {
			return st.From, &ref.noChoice
		}
	}
	// Limits: an increment that reaches a counter's limit trips it, which refuses the
	// transition or redirects it (the first redirect wins).
	redirected, trips := false, uint64(0)
	summaryField, summary := int32(-1), ""
	if !t.Plain {
		for k, c := range t.Inc {
			cd := &d.Counters[c]
			if cd.Limit == 0 || *m.counter(c, st.From)+1 < m.limits[c] {
				continue
			}
			trips |= 1 << k
			if redirected {
				continue
			}
			if cd.Then < 0 {
				if m.limits[c] == cd.Limit {
					return st.From, &ref.limit[c]
				}
				return st.From, limitRefusal(d.Spec, st.From, st.Event, cd, m.limits[c])
			}
			if cd.Summary >= 0 {
				summaryField, summary = cd.Summary, summaryText(cd, m.limits[c], st.From.String(), to.String(), S(cd.Then).String())
			}
			to, redirected = S(cd.Then), true
		}
	}
	moved := !internal || redirected
	m.entered = moved
	if t.Require && moved || m.inv != nil {
		c := &m.Context
		if summaryField >= 0 {
			after := m.Context
			m.requirer.SetField(&after, int(summaryField), summary)
			c = &after
		}
		if errs := m.validate(to, c, t.Require && moved); errs != nil {
			if dry {
				return st.From, ErrValidation
			}
			return st.From, Validation(d.Spec, st.From, st.Event, to, false, errs, m.PermittedWith(ctx, *in, nil))
		}
	}
	if dry {
		return to, nil
	}
	if m.undo != nil {
		m.keep()
	}
	m.pending = m.pending[:0]
	st.To = to
	if d.Timing {
		st.At = m.now(in)
	}
	if summaryField >= 0 {
		m.requirer.SetField(&m.Context, int(summaryField), summary)
	}
	if moved && d.exits {
		if err := m.acts(ctx, d.States[st.From].Exit, &st); err != nil {
			return m.fail(st, err)
		}
	}
	if err := m.acts(ctx, t.Actions, &st); err != nil {
		return m.fail(st, err)
	}
	m.count(t, st.From, trips, moved)
	if moved && d.remembers && to != st.From && d.States[to].Remembers {
		m.memory[to], m.remembered[to] = st.From, true
	}
	m.state = to
	if moved && d.Timing {
		m.moveClock(st.From, st.At, false)
	}
	if moved && d.entries {
		if err := m.acts(ctx, d.States[to].Entry, &st); err != nil {
			return m.fail(st, err)
		}
	}
	if err := m.commit(ctx, &st, in, ti, t.Checkpoint); err != nil {
		if m.store != nil {
			m.rollback()
			return st.From, err
		}
		return to, err
	}
	if len(m.pending) > 0 && m.store == nil {
		return to, m.runEffects(ctx, st, in)
	}
	return to, nil
}

// fail refuses the step st whose action failed (or whose eventless transitions did not
// settle): the machine is put back as it was before it, and the error says so.
func (m *Machine[S, E, R, C, X]) fail(st Step[S, E, R], err error) (S, error) {
	if m.undo != nil {
		m.rollback()
	}
	m.pending = m.pending[:0]
	if ae, ok := err.(*ActionError[S, E]); ok {
		ae.State, ae.Event, ae.Starting = st.From, st.Event, st.Starting
	}
	return st.From, err
}

// count applies t's counter effects for a transition leaving from: increments (a tripped
// counter restarts from 0), resets, and the resets on success of a transition that moved.
func (m *Machine[S, E, R, C, X]) count(t *Transition, from S, trips uint64, moved bool) {
	for k, c := range t.Inc {
		if p := m.counter(c, from); trips&(1<<k) != 0 {
			*p = 0
		} else {
			*p++
		}
	}
	for _, c := range t.Reset {
		*m.counter(c, from) = 0
	}
	if moved {
		for _, c := range m.def.resetOnSuccess {
			if !slices.Contains(t.Inc, c) {
				*m.counter(c, from) = 0
			}
		}
	}
}

// summaryText is the summary a tripped limit writes (as the spec's checker describes it).
func summaryText(c *Counter, limit int, from, to, then string) string {
	word, bound := "limit", limit
	if c.Max {
		word, bound = "maximum", limit-1
	}
	return c.Name + " reached its " + word + " of " + strconv.Itoa(bound) + ": " + from + " -> " + to + " went to " + then + " instead"
}

// passed records the transition from `from` on e as the last one, where Resume goes back to.
func (m *Machine[S, E, R, C, X]) passed(from S, e E) {
	if m.def.Resumable {
		m.last, m.lastEvent, m.lastKnown = from, e, true
	}
}

// now is the time of a transition: the input's, else the clock's.
func (m *Machine[S, E, R, C, X]) now(in *Input[R]) time.Time {
	switch {
	case !in.At.IsZero():
		return in.At
	case m.def.Timing:
		return m.clock.Now()
	}
	return time.Now() // a machine that keeps no time has no clock
}

// moveClock accounts for leaving from and entering the current state at at, where the
// current state's timeout starts counting unless keep (a statechart's state around both,
// whose timeout it is, stays active). A stay never counts negative: a transition timed
// before the state was entered (an input's At in the past, a clock set back) adds nothing.
func (m *Machine[S, E, R, C, X]) moveClock(from S, at time.Time, keep bool) {
	if int(from) < len(m.timeByState) {
		m.timeByState[from] += max(at.Sub(m.enteredAt), 0)
	}
	m.enteredAt = at
	if !keep {
		m.since = at
	}
}

// commit finishes an accepted transition (t is its index in the spec, cp its checkpoint):
// the sequence number, the checkpoints and the store's commit (persist, which a machine
// without a store or checkpoints skips), then the history.
func (m *Machine[S, E, R, C, X]) commit(ctx context.Context, st *Step[S, E, R], in *Input[R], t int, cp int32) error {
	d := m.def
	m.seq++
	m.passed(st.From, st.Event)
	if d.Timing {
		m.updatedAt = st.At
	}
	var err error
	if m.store != nil || cp >= 0 || d.EveryCheckpoint >= 0 {
		err = m.persist(ctx, *st, in, t, cp)
	}
	if d.History && (err == nil || m.store == nil) {
		m.history.Add(Record[S, E]{From: st.From, To: st.To, Event: st.Event, EventID: in.EventID, At: st.At, Actor: in.Actor, Reason: in.Reason})
	}
	if coverOn && (err == nil || m.store == nil) {
		m.coverTaken(st, t)
	}
	return err
}

// persist takes the checkpoints (the hooks) and commits the transition to the store, with
// a snapshot if it took a checkpoint. It is the only place a machine that keeps no time
// reads the clock, for the time of the transition.
func (m *Machine[S, E, R, C, X]) persist(ctx context.Context, st Step[S, E, R], in *Input[R], t int, cp int32) error {
	d := m.def
	if !d.Timing {
		m.updatedAt = m.now(in)
	}
	snap := false
	for i, c := range [2]int32{cp, int32(d.EveryCheckpoint)} {
		if c < 0 || i > 0 && c == cp {
			continue
		}
		if err := m.checkpoint.Checkpoint(ctx, int(c), st); err != nil {
			return err
		}
		snap = true
	}
	if m.store == nil {
		return nil
	}
	return m.commitTo(ctx, m.store, st, in, t, snap)
}

// commitTo commits the transition just taken (t: its index, -1 for a resumption) to
// store, with a snapshot when snap.
func (m *Machine[S, E, R, C, X]) commitTo(ctx context.Context, store Store, st Step[S, E, R], in *Input[R], t int, snap bool) error {
	kind := KindTransition
	if t < 0 {
		kind = KindResumed
	}
	return m.commitKind(ctx, store, kind, st, in, t, snap)
}

// commitKind commits an entry of kind (a transition, a resumption or a start; t: the
// transition's index, -1 for none) to store, with a snapshot when snap.
func (m *Machine[S, E, R, C, X]) commitKind(ctx context.Context, store Store, kind string, st Step[S, E, R], in *Input[R], t int, snap bool) error {
	d := m.def
	e, err := m.logEntry(kind, st, in, t)
	c := &m.commitBuf
	*c = m.newCommit(in)
	if m.entered && d.Timing {
		// A state entered rearms the instance's deadlines, unless it has none and the state
		// left had none either: there is nothing to disarm.
		if dls := m.deadlines(m.state, m.since); len(dls) > 0 || m.timesOut(st.From) || m.waits(st.From) {
			c.Rearm, c.Deadlines = true, dls
		}
	}
	if err == nil {
		c.Entry = Entry{Seq: m.seq, Kind: e.Kind, Event: eventName(e.Kind, st.Event), From: st.From.String(), To: st.To.String(), At: e.Timestamp, Key: e.Key}
		c.Entry.Data, err = m.encodeEntry(&e)
	}
	if err == nil && snap {
		c.Snapshot, err = m.encodeSnapshot(e.Context)
	}
	var calls []EffectCall[S, E, C]
	if err == nil && len(m.pending) > 0 {
		c.Effects, calls, err = m.effects(st, in, e.Timestamp)
		if inCallersTx(store) {
			// Delivered once the caller's transaction is committed (CallersTx).
			calls = nil
		} else {
			var lease time.Duration
			c.Owner, lease = m.claimer()
			c.LeaseUntil = m.clockNow().Add(lease)
		}
	}
	if err == nil {
		err = m.migrating(c, e.Context)
	}
	if err == nil {
		if m.observer != nil {
			start := time.Now()
			err = store.Commit(ctx, c)
			m.observeCommit(ctx, start, err)
		} else {
			err = store.Commit(ctx, c)
		}
	}
	*c = Commit{} // nothing of it is kept: the store copies what it keeps
	if err != nil {
		return StoreFailed(d.Spec, "commit", m.seq, err)
	}
	m.migrated, m.inTx = "", inCallersTx(store)
	if len(calls) > 0 {
		m.deliver(ctx, calls, m.pending)
	}
	return nil
}

// newCommit returns the commit of the entry the machine has just numbered (m.seq), with
// what every commit carries: the instance, its spec and version, the state, the deadline a
// scheduler's firing handles, the counters and whether the transition changed them.
func (m *Machine[S, E, R, C, X]) newCommit(in *Input[R]) Commit {
	d := m.def
	c := Commit{Machine: d.storeName, ID: m.ID, Spec: d.Spec.Fingerprint, Version: m.seq - 1, State: m.state.String(), Fired: in.fired, Counters: m.counterValues()}
	// keep recorded the counters before this transition when it recorded its version.
	if m.undo != nil && m.undo.seq == c.Version {
		c.CountersKept = slices.Equal(m.undo.counters, m.counters)
		if !c.CountersKept {
			c.CountersDelta, c.CountersChanged = true, m.changedCounters()
		}
	}
	return c
}

// changedCounters lists the counters whose values differ from those keep recorded, with
// their values now, in m.changed (which it reuses).
func (m *Machine[S, E, R, C, X]) changedCounters() []CounterValue {
	m.changed = m.changed[:0]
	m.eachCounter(func(c *Counter, st S, slot int) {
		if n := m.counters[slot]; n != m.undo.counters[slot] {
			m.changed = append(m.changed, counterValue(c, st, n))
		}
	})
	return m.changed
}

// eventName is the name of the event of an entry of kind: none for a note.
func eventName[E EnumType](kind string, e E) string {
	if isNote(kind) {
		return ""
	}
	return e.String()
}

// findKey looks up in the store the entry that used idempotency key key.
func (m *Machine[S, E, R, C, X]) findKey(ctx context.Context, key string) (keyRecord[S, E], bool, error) {
	d := m.def
	e, ok, err := m.store.FindKey(ctx, d.storeName, m.ID, key)
	if err != nil || !ok {
		return keyRecord[S, E]{}, false, err
	}
	le, err := m.decodeEntry(&e)
	if err != nil {
		return keyRecord[S, E]{}, false, InvalidLog(d.Spec, m.ID, e.Seq, err)
	}
	return keyRecord[S, E]{event: le.Event, state: le.To}, true, nil
}

// logEntry describes an accepted transition (t: its index) for the event log.
func (m *Machine[S, E, R, C, X]) logEntry(kind string, st Step[S, E, R], in *Input[R], t int) (LogEntry[S, E, R], error) {
	d := m.def
	e := LogEntry[S, E, R]{
		Spec: d.Spec.Fingerprint, Seq: m.seq, Timestamp: m.updatedAt, ID: m.ID, Kind: kind, Event: st.Event,
		From: st.From, To: st.To, Transition: t, Actor: in.Actor, Reason: in.Reason, EventID: in.EventID,
		Metadata: noMetadata,
	}
	if kind != KindTransition && isNote(kind) {
		e.Event = noEvent[E]()
	}
	if d.Roles {
		e.Role = in.Role
	}
	if d.Idempotent {
		e.Key = in.Key
	}
	if d.Chart != nil {
		if len(m.micro) > 0 {
			e.Micro = make([]int, len(m.micro))
			for i, t := range m.micro {
				e.Micro[i] = int(t)
			}
		}
		e.History = m.historyValues()
	}
	if d.Timing && m.seq == 1 {
		e.Created = m.createdAt
	}
	e.Limits = m.changedLimits()
	if d.Timing {
		e.Timeouts = m.changedTimeouts()
	}
	var err error
	if p := d.Payloads; p != nil && p[st.Event] {
		e.Payload, err = json.Marshal(m.payloads.Payload(&m.extra, int(st.Event), false))
	}
	if d.Policies && err == nil {
		e.Policies, err = json.Marshal(m.policySets.PolicySet(&m.extra, false))
	}
	if err == nil {
		e.Context, err = m.encodeContext()
	}
	return e, err
}

// encodeContext returns the JSON of the machine's context as json.Marshal writes it, in a
// buffer that the next call reuses. A context of plain values (plainValues) equal to the
// one encoded last is not encoded again: most transitions leave the context as it was.
func (m *Machine[S, E, R, C, X]) encodeContext() ([]byte, error) {
	if m.ctxPlain == 0 {
		m.ctxPlain = 2
		if plainValues(reflect.TypeFor[C]()) {
			m.ctxPlain = 1
		}
	}
	if m.ctxValid && m.ctxPlain == 1 && any(m.Context) == any(m.ctxLast) {
		b := m.ctxBuf.Bytes()
		return b[:len(b)-1], nil
	}
	if m.ctxEnc == nil {
		m.ctxEnc = json.NewEncoder(&m.ctxBuf)
	}
	m.ctxBuf.Reset()
	m.ctxValid = false
	if err := m.ctxEnc.Encode(&m.Context); err != nil {
		return nil, err
	}
	if m.ctxPlain == 1 {
		m.ctxLast, m.ctxValid = m.Context, true
	}
	b := m.ctxBuf.Bytes()
	return b[:len(b)-1], nil // Encode ends with a newline
}

// plainTypes caches plainValues by type.
var plainTypes sync.Map

// plainValues reports whether values of t are made of strings, integers and booleans only
// (in structs and arrays): no pointer, slice, map, interface or method of its own to
// encode them, and no float (0 == -0, which encode apart), so that two equal values (==,
// which cannot panic on them) encode alike.
func plainValues(t reflect.Type) bool {
	if v, ok := plainTypes.Load(t); ok {
		return v.(bool)
	}
	plain := plainKind(t)
	plainTypes.Store(t, plain)
	return plain
}

func plainKind(t reflect.Type) bool {
	marshaler := reflect.TypeFor[json.Marshaler]()
	if t.Implements(marshaler) || reflect.PointerTo(t).Implements(marshaler) {
		return false // its own encoding may read anything
	}
	switch t.Kind() {
	case reflect.Bool, reflect.String,
		reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return true
	case reflect.Array:
		return plainKind(t.Elem())
	case reflect.Struct:
		for i := range t.NumField() {
			if !plainKind(t.Field(i).Type) {
				return false
			}
		}
		return true
	}
	return false
}
