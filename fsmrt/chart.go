package fsmrt

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"
)

// Chart describes what a statechart adds to its Def (Def.Chart; nil for a flat machine).
// A statechart is compiled into a flat machine: each configuration (set of active states)
// is a state of the Def, and each transition of the Def is one microstep of the chart, its
// Actions the exit, transition and entry actions in order. What a flat machine lacks is
// here: the events the machine raises itself (eventless transitions, done events), which
// the engine runs after each event until none is left (a macrostep), the history memory
// transitions read and record, and which chart states each configuration has active.
type Chart struct {
	// External is the number of events the program fires; the events from External on are
	// raised by the machine itself and refused from the program.
	External int
	// Always is the event eventless transitions are keyed on (-1: none).
	Always int32
	// Nodes are the chart's states, by path from the root joined by ".", in document order.
	Nodes []string
	// Active says which nodes each configuration has active: a bitset of Words uint64s per
	// state, node n at bit n%64 of word n/64.
	Active []uint64
	Words  int
	// History names the history states by slot (their paths); Values[slot][v-1] is what
	// value v restores, the paths of the nodes joined by ",".
	History []string
	Values  [][]string
	// Remember gives, by state, the history slot of the remembering state active in it
	// (-1: none; nil: the chart has no remembering state), and Recall[slot][v-1] the state
	// value v of a remembering state's slot goes back to.
	Remember []int32
	Recall   [][]int32
	// Start and StartRaise are what starting the machine does in its initial
	// configuration: the entry actions, then the done events raised; Starts says starting
	// does something (Start, or an eventless transition the initial configuration may take).
	Start, StartRaise []int32
	Starts            bool
	// Clocks are the states with delays of their own (indexes into Nodes), by slot: each
	// keeps a clock, restarted when a microstep enters the state (Transition.Enters).
	Clocks []int32
}

// Memory is a condition on, or a record into, a statechart's history memory: slot Slot
// holds value Value.
type Memory struct {
	Slot, Value int32
}

// MaxMicrosteps bounds the microsteps one event may cause (its own, the eventless
// transitions and the done events after it): past it the event is refused with an
// EventlessLoopError.
const MaxMicrosteps = 1000

// ErrEventlessLoop says eventless transitions and done events did not settle.
var ErrEventlessLoop = errors.New("fsm: eventless transitions do not settle")

// ErrNotStarted says a statechart that does something on starting has not been started.
var ErrNotStarted = errors.New("fsm: machine not started")

// EventlessLoopError says the eventless transitions and done events after an event went on
// for more than MaxMicrosteps microsteps: the event is refused, the machine is back in the
// configuration, with the history, it was in before it (actions that ran have run).
type EventlessLoopError[S StateType, E EnumType] struct {
	State S
	Event E
	// Starting says the loop happened on starting the machine (Event is not set).
	Starting bool
	spec     *Spec
}

// Error describes the refusal.
func (e *EventlessLoopError[S, E]) Error() string {
	return fmt.Sprintf("%s%s %s: eventless transitions and done events went on for more than %d microsteps", e.spec.prefix(), e.State, on(e.Starting, e.Event), MaxMicrosteps)
}

// on says what a refusal happened on: the event, or starting a statechart.
func on[E EnumType](starting bool, e E) string {
	if starting {
		return "on starting"
	}
	return "on " + e.String()
}

// Is matches ErrEventlessLoop and ErrRefused.
func (e *EventlessLoopError[S, E]) Is(target error) bool {
	return target == ErrEventlessLoop || target == ErrRefused
}

// Reason names the kind of refusal as `fsmgen sim` does: "eventless_loop".
func (e *EventlessLoopError[S, E]) Reason() string { return "eventless_loop" }

// In reports whether chart node n (its index in Chart.Nodes) is active in state s of d, a
// statechart's Def.
func In[S StateType, E, R EnumType](d *Def[S, E, R], s S, n int) bool {
	c := d.Chart
	if c == nil || int(s) >= len(d.States) || n < 0 || n >= len(c.Nodes) {
		return false
	}
	return c.Active[int(s)*c.Words+n/64]&(1<<(n%64)) != 0
}

// Started reports whether the machine has started: always, but for a statechart whose
// start does something (entry actions of the initial states, eventless transitions, done
// events) before Start or the first Fire.
func (m *Machine[S, E, R, C, X]) Started() bool { return !m.unstarted }

// Start starts a statechart: it runs the entry actions of its initial configuration, then
// its eventless transitions and done events, as an event's macrostep does. Fire starts a
// machine not started yet before its event. Starting a started machine, or a flat one,
// does nothing. With a store, starting is committed as a STATE_STARTED entry of the log.
// When the eventless transitions do not settle it returns an EventlessLoopError, and when
// the context breaks the constraints of its set fields a ValidationError (Invariants); the
// machine is then as before (not started).
func (m *Machine[S, E, R, C, X]) Start(ctx context.Context) error {
	return m.StartWith(ctx, Input[R]{})
}

// StartWith is Start with what the caller says about it (who, when, why).
func (m *Machine[S, E, R, C, X]) StartWith(ctx context.Context, in Input[R]) error {
	if !m.unstarted {
		return nil
	}
	if err := m.checkContext(); err != nil {
		return err
	}
	d := m.def
	c := d.Chart
	if m.undo != nil {
		m.keep()
	}
	from := m.state
	m.pending = m.pending[:0]
	m.micro = m.micro[:0]
	st := Step[S, E, R]{From: from, To: from, Role: in.Role, Starting: true}
	if d.Timing {
		st.At = m.now(&in)
	}
	err := m.acts(ctx, c.Start, &st)
	if err == nil {
		copy(m.memBefore, m.mem) // what a loop puts back
		m.clocks.save()
		err = m.settle(ctx, &st, c.StartRaise)
	}
	if err != nil {
		_, err = m.fail(st, err)
		return err
	}
	m.unstarted = false
	m.setSlow()
	st.To = m.state
	if m.store == nil {
		if len(m.pending) > 0 {
			return m.runEffects(ctx, st, &in)
		}
		return nil
	}
	m.seq++
	m.entered = true
	if !d.Timing {
		m.updatedAt = m.now(&in)
	} else {
		m.updatedAt = st.At
	}
	if err := m.commitKind(ctx, m.store, KindStarted, st, &in, -1, false); err != nil {
		m.rollback()
		m.unstarted = true
		m.setSlow()
		return err
	}
	return nil
}

// settle runs a statechart's macrostep after a microstep (st: the event's, From the
// configuration before it) that raised events raise: eventless transitions first, selected
// again only after a microstep that changed the configuration or the history, then the next
// raised event, until none is left or the machine is done. It allocates nothing once its
// queue has grown. On a loop it puts the configuration and the history back as they were
// before the event (st.From, and m.memBefore).
func (m *Machine[S, E, R, C, X]) settle(ctx context.Context, st *Step[S, E, R], raise []int32) error {
	d := m.def
	c := d.Chart
	q := append(m.queue[:0], raise...)
	head, again := 0, true
	for n := 0; !d.States[m.state].Terminal; n++ {
		if n >= MaxMicrosteps {
			m.queue = q[:0]
			m.state = st.From
			copy(m.mem, m.memBefore)
			m.clocks.restore()
			return &EventlessLoopError[S, E]{State: st.From, Event: st.Event, Starting: st.Starting, spec: d.Spec}
		}
		if again && c.Always >= 0 {
			if t := m.first(ctx, c.Always, st); t >= 0 {
				q = append(q, d.Transitions[t].Raise...)
				again = d.Transitions[t].Changes
				if err := m.microstep(ctx, t, st); err != nil {
					m.queue = q[:0]
					return err
				}
				continue
			}
		}
		if head == len(q) {
			break
		}
		e := q[head]
		head++
		if t := m.first(ctx, e, st); t >= 0 {
			q = append(q, d.Transitions[t].Raise...)
			if err := m.microstep(ctx, t, st); err != nil {
				m.queue = q[:0]
				return err
			}
		}
		again = true
	}
	m.queue = q[:0]
	return nil
}

// first returns the first candidate transition on the raised event e in the current
// configuration whose conditions hold, or -1.
func (m *Machine[S, E, R, C, X]) first(ctx context.Context, e int32, st *Step[S, E, R]) int32 {
	d := m.def
	p := d.pairIndex[int(m.state)*d.NumEvents+int(e)]
	if p == 0 {
		return -1
	}
	return m.pick(ctx, p-1, st, m.state)
}

// pick returns the first candidate of pair p (of state from) whose conditions hold, or -1:
// from the history memory alone when the candidates differ only by the value of one
// history state (a history target), else in order, the guards seeing st from from.
func (m *Machine[S, E, R, C, X]) pick(ctx context.Context, p int32, st *Step[S, E, R], from S) int32 {
	d := m.def
	if byMem := d.byMem[p]; byMem.cands != nil {
		if v := int(m.mem[byMem.slot]); v < len(byMem.cands) {
			return byMem.cands[v]
		}
		return -1
	}
	for i, c := range d.Pairs[p].Cands {
		if len(c.Mem) > 0 && !m.remembers(c.Mem) {
			continue
		}
		if len(c.Conds) == 0 {
			return c.T
		}
		return m.guarded(ctx, d.Pairs[p].Cands[i:], *st, from)
	}
	return -1
}

// guarded is pick from the first candidate that asks guards on: st seen from from.
func (m *Machine[S, E, R, C, X]) guarded(ctx context.Context, cands []Cand, st Step[S, E, R], from S) int32 {
	st.From, st.To = from, from
	for _, c := range cands {
		if m.remembers(c.Mem) && m.holds(ctx, c.Conds, &st) {
			return c.T
		}
	}
	return -1
}

// memPick is how a statechart picks among candidates that differ only by the value of one
// history state's memory: cands[v] is the transition taken when it holds v (-1: none).
type memPick struct {
	slot  int32
	cands []int32
}

// buildByMem finds the pairs whose candidates all have no guard and one condition on the
// same history slot, each value once (Def.byMem).
func (d *Def[S, E, R]) buildByMem() {
	d.byMem = make([]memPick, len(d.Pairs))
	for i, p := range d.Pairs {
		if len(p.Cands) < 2 {
			continue
		}
		slot, top := p.Cands[0].Mem, int32(0)
		ok := len(slot) == 1
		for _, c := range p.Cands {
			ok = ok && len(c.Conds) == 0 && len(c.Mem) == 1 && c.Mem[0].Slot == slot[0].Slot && c.Mem[0].Value >= 0
			if ok {
				top = max(top, c.Mem[0].Value)
			}
		}
		if !ok {
			continue
		}
		pick := memPick{slot: slot[0].Slot, cands: make([]int32, top+1)}
		for v := range pick.cands {
			pick.cands[v] = -1
		}
		for _, c := range p.Cands {
			if v := c.Mem[0].Value; pick.cands[v] < 0 {
				pick.cands[v] = c.T
			}
		}
		d.byMem[i] = pick
	}
}

// takeChart takes transition t of a statechart, the event's microstep (st: its step; ref:
// the refusals of its pair), then the macrostep after it, and commits, at the first
// checkpoint of its microsteps. Each microstep counts as it is taken; a limit is checked on
// the event's microstep only (the checker allows no limited counter elsewhere), and the
// counters that reset on success reset once, when the macrostep entered states; the roles
// that may fire it are the event's microstep's, and so are the fields it requires (those of
// the states it enters: the checker allows no eventless or done transition to enter a
// state that requires fields). A statechart's configurations have no entry or exit actions
// of their own (the transition's actions are the microstep's): take's work less that.
func (m *Machine[S, E, R, C, X]) takeChart(ctx context.Context, st *Step[S, E, R], in *Input[R], dry bool, t int32, ref *refusals[S, E, R]) (S, error) {
	d := m.def
	tr := &d.Transitions[t]
	st.To = S(tr.Target)
	if err := m.denied(tr, st.From, st.Event, in.Role, ref); err != nil {
		return st.From, err
	}
	if d.counts && !tr.Plain {
		for _, c := range tr.Inc {
			if cd := &d.Counters[c]; cd.Limit != 0 && *m.counter(c, st.From)+1 >= m.limits[c] {
				if m.limits[c] == cd.Limit {
					return st.From, &ref.limit[c]
				}
				return st.From, limitRefusal(d.Spec, st.From, st.Event, cd, m.limits[c])
			}
		}
	}
	if tr.Require || m.inv != nil {
		if errs := m.validateOn(t, tr.Require); errs != nil {
			if dry {
				return st.From, ErrValidation
			}
			return st.From, Validation(d.Spec, st.From, st.Event, st.To, false, errs, m.PermittedWith(ctx, *in, nil))
		}
	}
	if dry {
		return st.To, nil
	}
	if m.undo != nil {
		m.keep()
	}
	m.pending = m.pending[:0]
	if d.Timing {
		st.At = m.now(in)
	}
	if len(tr.Actions) > 0 {
		if err := m.acts(ctx, tr.Actions, st); err != nil {
			return m.fail(*st, err)
		}
	}
	m.micro = m.micro[:0]
	if d.counts {
		m.countChart(tr)
	}
	if m.clocks.start != nil {
		m.clocks.save()
		m.clocks.enter(tr, st.At)
	}
	switch {
	case tr.Settled:
		m.record(tr)
		m.state = st.To
		for _, x := range tr.Then {
			if err := m.microstep(ctx, x, st); err != nil {
				return m.fail(*st, err)
			}
		}
		st.To = m.state
	case len(tr.Raise) > 0 || d.Chart.Always >= 0 && d.pairIndex[int(st.To)*d.NumEvents+int(d.Chart.Always)] != 0:
		copy(m.memBefore, m.mem)
		m.record(tr)
		m.state = st.To
		if err := m.settle(ctx, st, tr.Raise); err != nil {
			return m.fail(*st, err)
		}
		st.To = m.state
	default:
		m.record(tr)
		m.state = st.To
	}
	// The macrostep's checkpoint is its first microstep's that has one; it enters states
	// unless none of its microsteps has a target.
	// The timeout counts on when no microstep entered its state again.
	cp, moved, keep := tr.Checkpoint, tr.Kind != TargetInternal || st.To != st.From, tr.KeepsClock
	for _, x := range m.micro {
		xt := &d.Transitions[x]
		if cp < 0 {
			cp = xt.Checkpoint
		}
		moved = moved || xt.Kind != TargetInternal
		keep = keep && xt.KeepsClock
	}
	m.entered = moved && !keep // its deadlines stay armed when the timeout counts on
	if m.clocks.start != nil {
		// The delays of the states a macrostep did not enter count on; one of them that
		// fired (this event) does not fire again this stay.
		m.markFired(int32(st.Event), st.At)
		m.clocks.keptUntil = time.Time{}
		if moved && keep && m.clocksMoved(tr, st.From, st.To) {
			m.entered, m.clocks.keptUntil = true, st.At
		}
	}
	if moved && len(d.resetOnSuccess) > 0 {
		m.resetChart(tr)
	}
	if d.Timing && moved {
		m.moveClock(st.From, st.At, keep)
	}
	if err := m.commit(ctx, st, in, int(t), cp); err != nil {
		if m.store != nil {
			m.rollback()
			return st.From, err
		}
		return st.To, err
	}
	if len(m.pending) > 0 && m.store == nil {
		return st.To, m.runEffects(ctx, *st, in)
	}
	return st.To, nil
}

// remembers reports whether the history memory holds every value of mem.
func (m *Machine[S, E, R, C, X]) remembers(mem []Memory) bool {
	for _, x := range mem {
		if m.mem[x.Slot] != x.Value {
			return false
		}
	}
	return true
}

// microstep takes transition t of a statechart raised in the macrostep of st: its actions,
// the history it records and the configuration it enters. An action that fails stops it
// (the caller puts the machine back).
func (m *Machine[S, E, R, C, X]) microstep(ctx context.Context, t int32, st *Step[S, E, R]) error {
	tr := &m.def.Transitions[t]
	if len(tr.Actions) > 0 {
		micro := *st
		micro.From, micro.To = m.state, S(tr.Target)
		if err := m.acts(ctx, tr.Actions, &micro); err != nil {
			return err
		}
	}
	if m.def.counts {
		m.countChart(tr)
	}
	if m.clocks.start != nil {
		m.clocks.enter(tr, st.At)
	}
	m.record(tr)
	m.state = S(tr.Target)
	m.micro = append(m.micro, t)
	return nil
}

// countChart applies the counter effects of a statechart's microstep t: its increments,
// then its resets.
func (m *Machine[S, E, R, C, X]) countChart(t *Transition) {
	for _, c := range t.Inc {
		*m.counter(c, 0)++
	}
	for _, c := range t.Reset {
		*m.counter(c, 0) = 0
	}
}

// resetChart resets the counters that reset on success, after a macrostep (t: the event's
// microstep, m.micro the others) that entered states, but those it incremented.
func (m *Machine[S, E, R, C, X]) resetChart(t *Transition) {
	d := m.def
	for _, c := range d.resetOnSuccess {
		inc := slices.Contains(t.Inc, c)
		for _, x := range m.micro {
			inc = inc || slices.Contains(d.Transitions[x].Inc, c)
		}
		if !inc {
			*m.counter(c, 0) = 0
		}
	}
}

// record writes the history t records.
func (m *Machine[S, E, R, C, X]) record(t *Transition) {
	for _, x := range t.Record {
		m.mem[x.Slot] = x.Value
	}
}

// setSlow says whether Fire must leave the moves table to the engine: with a store or a
// logger, and before a statechart that does something on starting has started.
func (m *Machine[S, E, R, C, X]) setSlow() {
	m.slow = m.store != nil || m.logger != nil || m.unstarted || m.observer != nil
}

// historyValues returns the history memory as a snapshot keeps it: by history state, what
// it restores.
func (m *Machine[S, E, R, C, X]) historyValues() map[string]string {
	c := m.def.Chart
	if c == nil {
		return nil
	}
	var out map[string]string
	for slot, v := range m.mem {
		if v > 0 {
			if out == nil {
				out = map[string]string{}
			}
			out[c.History[slot]] = c.Values[slot][v-1]
		}
	}
	return out
}

// memoryOf decodes a snapshot's history memory.
func (d *Def[S, E, R]) memoryOf(h map[string]string) ([]int32, error) {
	c := d.Chart
	if c == nil {
		if len(h) > 0 {
			return nil, errors.New("the machine has no history states")
		}
		return nil, nil
	}
	mem := make([]int32, len(c.History))
	for k, v := range h {
		slot := slices.Index(c.History, k)
		if slot < 0 {
			return nil, fmt.Errorf("%q is neither a history state nor a remembering state", k)
		}
		i := slices.Index(c.Values[slot], v)
		if i < 0 {
			return nil, fmt.Errorf("%s cannot hold %q", k, v)
		}
		mem[slot] = int32(i + 1)
	}
	return mem, nil
}

// applyChart replays log entry e of a statechart: the event's transition (e.Transition,
// -1 for a STATE_STARTED entry) and the microsteps after it (e.Micro), each from the
// configuration the one before left, ending where e says, with the history e holds. A
// machine started before it had a store has no STATE_STARTED entry: its first transition
// starts from the configuration it says.
func (m *Machine[S, E, R, C, X]) applyChart(e *LogEntry[S, E, R]) error {
	d := m.def
	c := d.Chart
	started := e.Kind == KindStarted
	switch {
	case started && !m.unstarted:
		return errors.New("started twice")
	case int(e.From) >= len(d.States) || int(e.To) >= len(d.States):
		return fmt.Errorf("%d -> %d are not states", e.From, e.To)
	case e.From != m.state && (started || !m.unstarted || m.seq != 0):
		// Only the first transition of a machine started before it had a store may start
		// elsewhere: where its start's eventless transitions left it.
		return fmt.Errorf("from %s in %s", e.From, m.state)
	case !started && int(e.Event) >= c.External:
		return fmt.Errorf("%d is not an event the program fires", e.Event)
	}
	mem, err := d.memoryOf(e.History)
	if err != nil {
		return fmt.Errorf("history: %w", err)
	}
	state, moved, keep := e.From, false, true
	step := func(ti int, on int32, raised []int32) ([]int32, error) {
		if ti < 0 || ti >= len(d.Transitions) {
			return nil, fmt.Errorf("%d is not a transition", ti)
		}
		t := &d.Transitions[ti]
		if !slices.Contains(t.From, int32(state)) || !slices.Contains(t.On, on) {
			return nil, fmt.Errorf("transition %d is not taken from %s on %s", ti, state, E(on))
		}
		state = S(t.Target)
		moved = moved || t.Kind != TargetInternal
		keep = keep && t.KeepsClock
		m.countChart(t)
		if m.clocks.start != nil && d.Timing {
			m.clocks.enter(t, e.Timestamp)
		}
		return append(raised, t.Raise...), nil
	}
	var raised []int32
	if started {
		raised = slices.Clone(c.StartRaise)
		if e.Transition != -1 {
			return fmt.Errorf("a start has transition %d", e.Transition)
		}
	} else if raised, err = step(e.Transition, int32(e.Event), nil); err != nil {
		return err
	}
	for _, ti := range e.Micro {
		if ti < 0 || ti >= len(d.Transitions) || len(d.Transitions[ti].On) != 1 {
			return fmt.Errorf("%d is not a transition", ti)
		}
		on := d.Transitions[ti].On[0]
		if on != c.Always {
			// A done event, raised before: those raised before it were taken by none.
			i := slices.Index(raised, on)
			if i < 0 {
				return fmt.Errorf("transition %d on %s, which was not raised", ti, E(on))
			}
			raised = raised[i+1:]
		}
		if raised, err = step(ti, on, raised); err != nil {
			return err
		}
	}
	if state != e.To {
		return fmt.Errorf("the microsteps end in %s, not %s", state, e.To)
	}
	if moved && !started && len(d.resetOnSuccess) > 0 {
		m.micro = m.micro[:0]
		for _, x := range e.Micro {
			m.micro = append(m.micro, int32(x))
		}
		m.resetChart(&d.Transitions[e.Transition])
	}
	from := m.state
	m.state = state
	copy(m.mem, mem)
	m.unstarted = false
	m.setSlow()
	if d.Timing && (state != from || moved) {
		m.moveClock(from, e.Timestamp, keep)
	}
	if !started && m.clocks.start != nil {
		m.markFired(int32(e.Event), e.Timestamp)
	}
	m.recallEntry(e)
	m.seq, m.updatedAt = e.Seq, e.Timestamp
	if !started {
		m.passed(e.From, e.Event)
	}
	return nil
}

// external reports whether the program may fire event e (a statechart raises some events
// itself).
func (d *Def[S, E, R]) external(e int) bool {
	return d.Chart == nil || e < d.Chart.External
}
