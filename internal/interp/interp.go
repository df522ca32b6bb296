// Package interp is the reference interpreter of the spec language: it runs events through
// a machine's IR exactly as docs/spec.md describes. `fsmgen sim` is built on it, and it is
// the oracle the generated code is tested against.
package interp

import (
	"fmt"
	"slices"
	"strings"

	"github.com/fsmgen/fsmgen/internal/ir"
)

// Reason says why an event was refused.
type Reason string

const (
	InvalidTransition Reason = "invalid_transition"
	GuardRejected     Reason = "guard"
	RoleDenied        Reason = "role"
	NoChoice          Reason = "no_choice"
	NoHistory         Reason = "no_history"
	LimitReached      Reason = "limit"
	MissingArtifacts  Reason = "artifacts"
	InvalidPayload    Reason = "payload"
	// EventlessLoop: a statechart's eventless transitions and done events went on for
	// more than MaxMicrosteps microsteps after the event; the event is refused.
	EventlessLoop Reason = "eventless_loop"
	// ActionFailed: an action marked may_fail failed while the transition was taken; the
	// event is refused and nothing changes.
	ActionFailed Reason = "action_failed"
)

// MaxMicrosteps bounds the microsteps one event may cause in a statechart.
const MaxMicrosteps = 1000

// FieldError is one failed requirement of a context field.
type FieldError struct {
	Field   string `json:"field"`
	Message string `json:"message"`
}

// Rejection explains a refused event. The machine is unchanged.
type Rejection struct {
	Reason  Reason
	State   *ir.State
	Event   *ir.Event
	Message string
	Errors  []FieldError // for MissingArtifacts and InvalidPayload
	// Actions are, for ActionFailed, the actions run before the refusal, the failed one
	// last (those before it have run; what they did to the machine is put back).
	Actions []*ir.Action
}

func (r *Rejection) Error() string { return r.Message }

// Step is an accepted event.
type Step struct {
	Event      *ir.Event
	From, To   *ir.State
	Transition *ir.Transition
	Tripped    *ir.Counter // the counter whose limit redirected the transition, if any
	// Redirected is, when a limit redirected the transition, the state it would have gone
	// to.
	Redirected *ir.State
	// Summary is what the tripped counter wrote into its summary field (Tripped.Summary),
	// or "" when it has none. The caller's context must take it: the machine wrote it.
	Summary    string
	Actions    []*ir.Action
	Checkpoint []*ir.Checkpoint
	// Micro lists, in a statechart, every microstep the event caused in order: the
	// transition of the event itself, then those of eventless transitions and done events.
	Micro []*ir.Transition
}

// Inputs are what the program would supply: who fires, hook guard values, policies and the
// context. The zero value fires anonymously with every hook guard false.
type Inputs struct {
	Role     *ir.Role
	Guard    func(g *ir.Guard) bool // hook guards; nil means all false
	Policies []bool                 // by policy index; nil means every policy's default
	Context  []any                  // by context field index, as decoded JSON; nil entries are unset
	// Payload holds the event's payload fields by index, as decoded JSON. When it is nil
	// the payload is not checked (fsmgen sim); otherwise it is validated first.
	Payload []any
	// Fail says which actions marked may_fail fail (nil: none).
	Fail func(a *ir.Action) bool
}

// failed returns, when one of the actions of a step fails, the actions run up to it (it
// last); nil when none fails.
func (in Inputs) failed(as []*ir.Action) []*ir.Action {
	if in.Fail == nil {
		return nil
	}
	for i, a := range as {
		if a.MayFail && !a.Effect && in.Fail(a) {
			var out []*ir.Action
			for _, b := range as[:i+1] {
				if !b.Effect {
					out = append(out, b)
				}
			}
			return out
		}
	}
	return nil
}

// actionFailed is the refusal of a step whose action failed (ran: the actions run, it
// last), made once the machine is back as it was.
func (x *Machine) actionFailed(e *ir.Event, ran []*ir.Action) *Rejection {
	a := ran[len(ran)-1]
	on := "on starting"
	if e != nil {
		on = "on " + e.Name
	}
	r := &Rejection{Reason: ActionFailed, State: x.State, Event: e, Actions: ran,
		Message: fmt.Sprintf("%s %s: action %s failed", x.State.Name, on, a.Name)}
	return r
}

// Machine is one running instance.
type Machine struct {
	IR       *ir.Machine
	State    *ir.State
	Counters [][]int     // [counter][slot]: one slot, or one per state when per_state
	Memory   []*ir.State // by state index: the state a remembering state was entered from (nil until one is)
	// Limits are the counters' limits in force, by counter index, as ir.Counter.Limit
	// counts them (the count whose increment trips; 0: none): the spec's, unless SetLimit
	// changed a configurable one.
	Limits []int
	// Mem is a statechart's history memory, by history slot: the value recorded (an index
	// into ir.Chart.Values, plus one), 0 while nothing is.
	Mem []int
}

// New starts a machine in its initial state.
func New(m *ir.Machine) *Machine {
	x := &Machine{IR: m, State: m.Initial, Counters: make([][]int, len(m.Counters)), Limits: make([]int, len(m.Counters))}
	for i, c := range m.Counters {
		x.Limits[i] = c.Limit
		n := 1
		if c.PerState {
			n = len(m.States)
		}
		x.Counters[i] = make([]int, n)
	}
	if m.Chart != nil {
		x.Mem = make([]int, len(m.Chart.History))
	}
	return x
}

// Start runs what a statechart does once it has entered its initial configuration: the
// entry actions, then eventless transitions and done events (a flat machine does nothing).
func (x *Machine) Start(in Inputs) (*Step, *Rejection) {
	c := x.IR.Chart
	if c == nil {
		return &Step{From: x.State, To: x.State}, nil
	}
	if rej := x.startRefusal(in); rej != nil {
		return nil, rej
	}
	step := &Step{From: x.State, Actions: append([]*ir.Action(nil), c.StartActions...)}
	before := x.save()
	if rej := x.settle(step, c.StartRaise, in); rej != nil {
		x.restore(before)
		return nil, rej
	}
	if ran := in.failed(step.Actions); ran != nil {
		x.restore(before)
		return nil, x.actionFailed(nil, ran)
	}
	step.To = x.State
	return step, nil
}

// settle runs a statechart's eventless transitions and raised events until none is left,
// as XState's macrostep does: eventless transitions first (selected again only after a
// microstep that changed something), then the next raised event.
func (x *Machine) settle(step *Step, raised []*ir.Event, in Inputs) *Rejection {
	c := x.IR.Chart
	state, mem := x.State, append([]int(nil), x.Mem...)
	queue := append([]*ir.Event(nil), raised...)
	again := true
	for n := 0; !x.State.Terminal; n++ {
		if n >= MaxMicrosteps {
			x.State, x.Mem = state, mem
			return x.reject(EventlessLoop, step.Event, "%s: eventless transitions and done events went on for more than %d microsteps", state.Name, MaxMicrosteps)
		}
		var t *ir.Transition
		if again && c.Always != nil {
			t = x.first(c.Always, in)
		}
		if t != nil {
			x.take(step, t)
			queue = append(queue, t.Raise...)
			again = t.Changes
			continue
		}
		if len(queue) == 0 {
			break
		}
		e := queue[0]
		queue = queue[1:]
		if t = x.first(e, in); t != nil {
			x.take(step, t)
			queue = append(queue, t.Raise...)
		}
		again = true
	}
	step.To = x.State
	return nil
}

// first returns the first transition for e in the current configuration whose conditions
// hold, or nil.
func (x *Machine) first(e *ir.Event, in Inputs) *ir.Transition {
	for _, t := range x.IR.Lookup(x.State, e) {
		if len(x.failing(t.Conds, in)) == 0 && x.memHolds(t) {
			return t
		}
	}
	return nil
}

// memHolds reports whether the history memory has the values t needs.
func (x *Machine) memHolds(t *ir.Transition) bool {
	for _, c := range t.Mem {
		if x.Mem[c.Slot] != c.Value {
			return false
		}
	}
	return true
}

// take applies one microstep of a statechart: its actions, counters, history and
// configuration.
func (x *Machine) take(step *Step, t *ir.Transition) {
	step.Micro = append(step.Micro, t)
	step.Actions = append(step.Actions, t.Actions...)
	for _, c := range t.Increment {
		x.Counters[c.Index][0]++
	}
	for _, c := range t.Reset {
		x.Counters[c.Index][0] = 0
	}
	for _, r := range t.Record {
		x.Mem[r.Slot] = r.Value
	}
	x.State = t.Target.State
}

// settled finishes a statechart's macrostep: the counters that reset on success reset when
// it entered states, but those it incremented.
func (x *Machine) settled(step *Step) {
	moved := false
	for _, t := range step.Micro {
		moved = moved || !t.Stays()
	}
	if !moved {
		return
	}
	for _, c := range x.IR.Counters {
		inc := false
		for _, t := range step.Micro {
			inc = inc || slices.Contains(t.Increment, c)
		}
		if c.ResetOnSuccess && !inc {
			x.Counters[c.Index][0] = 0
		}
	}
}

// saved is what a refused macrostep puts back: the configuration, the history and the
// counters.
type saved struct {
	state    *ir.State
	mem      []int
	counters [][]int
}

func (x *Machine) save() saved {
	s := saved{state: x.State, mem: slices.Clone(x.Mem)}
	for _, c := range x.Counters {
		s.counters = append(s.counters, slices.Clone(c))
	}
	return s
}

func (x *Machine) restore(s saved) {
	x.State, x.Mem, x.Counters = s.state, s.mem, s.counters
}

// SetLimit changes a configurable counter's limit to n as the spec writes it (the max, for a
// max counter), as the generated SetLimit<Counter> and SetMax<Counter> do.
func (x *Machine) SetLimit(c *ir.Counter, n int) error {
	switch {
	case !c.Configurable || c.Limit == 0:
		return fmt.Errorf("counter %s is not configurable", c.Name)
	case c.Max && n < 0:
		return fmt.Errorf("counter %s: max %d is below 0", c.Name, n)
	case !c.Max && n < 1:
		return fmt.Errorf("counter %s: limit %d is below 1", c.Name, n)
	}
	if c.Max {
		n++
	}
	x.Limits[c.Index] = n
	return nil
}

// Bound returns the limit of c in force, as the spec writes it.
func (x *Machine) Bound(c *ir.Counter) int {
	if c.Max {
		return x.Limits[c.Index] - 1
	}
	return x.Limits[c.Index]
}

// Remembered returns the state the remembering state h was last entered from, or nil.
func (x *Machine) Remembered(h *ir.State) *ir.State {
	if x.Memory == nil {
		return nil
	}
	return x.Memory[h.Index]
}

// Remember records that the remembering state h was entered from s.
func (x *Machine) Remember(h, s *ir.State) {
	if x.Memory == nil {
		x.Memory = make([]*ir.State, len(x.IR.States))
	}
	x.Memory[h.Index] = s
}

// Count returns the counter's value as seen from state s (s's slot when per_state).
func (x *Machine) Count(c *ir.Counter, s *ir.State) int {
	if c.PerState {
		return x.Counters[c.Index][s.Index]
	}
	return x.Counters[c.Index][0]
}

func slot(c *ir.Counter, s *ir.State) int {
	if c.PerState {
		return s.Index
	}
	return 0
}

// plan is a decided transition, not yet applied.
type plan struct {
	step     Step
	internal bool
	trips    []*ir.Counter
}

// Fire runs one event. On refusal the machine is unchanged.
func (x *Machine) Fire(e *ir.Event, in Inputs) (*Step, *Rejection) {
	if e.Internal {
		return nil, x.reject(InvalidTransition, e, "%s is raised by the machine itself and cannot be fired", e.Name)
	}
	p, rej := x.decide(e, in)
	if rej != nil {
		return nil, rej
	}
	if x.IR.Chart != nil {
		before := x.save()
		p.step.Actions = nil
		x.take(&p.step, p.step.Transition)
		if rej := x.settle(&p.step, p.step.Transition.Raise, in); rej != nil {
			x.restore(before)
			return nil, rej
		}
		if ran := in.failed(p.step.Actions); ran != nil {
			x.restore(before)
			return nil, x.actionFailed(e, ran)
		}
		x.settled(&p.step)
		// A macrostep takes the first checkpoint of its microsteps, then the every-transition
		// ones.
		var first *ir.Checkpoint
		for _, t := range p.step.Micro {
			if first = t.Checkpoint; first != nil {
				break
			}
		}
		p.step.Checkpoint = p.step.Checkpoint[:0]
		if first != nil {
			p.step.Checkpoint = append(p.step.Checkpoint, first)
		}
		for _, c := range x.IR.EveryCheckpoints() {
			if c != first {
				p.step.Checkpoint = append(p.step.Checkpoint, c)
			}
		}
		return &p.step, nil
	}
	if ran := in.failed(p.step.Actions); ran != nil {
		return nil, x.actionFailed(e, ran)
	}
	x.apply(p)
	return &p.step, nil
}

// Can reports whether e would be accepted, without changing anything.
func (x *Machine) Can(e *ir.Event, in Inputs) bool {
	_, rej := x.decide(e, in)
	return rej == nil
}

// Allowed lists the events that would be accepted now, in event order.
func (x *Machine) Allowed(in Inputs) []*ir.Event {
	var out []*ir.Event
	for _, e := range x.IR.Events {
		if !e.Internal && x.Can(e, in) {
			out = append(out, e)
		}
	}
	return out
}

func (x *Machine) reject(r Reason, e *ir.Event, format string, args ...any) *Rejection {
	return &Rejection{Reason: r, State: x.State, Event: e, Message: fmt.Sprintf(format, args...)}
}

func (x *Machine) decide(e *ir.Event, in Inputs) (*plan, *Rejection) {
	s := x.State
	// The payload is validated once the event is known to be accepted in the state at all:
	// a terminal state refuses every event as an invalid transition, payload or not.
	if in.Payload != nil && len(e.Payload) > 0 && len(x.IR.Lookup(s, e)) > 0 {
		var errs []FieldError
		for _, f := range e.Payload {
			var v any
			if f.Index < len(in.Payload) {
				v = in.Payload[f.Index]
			}
			if msg := fieldProblem(f, v, true); msg != "" {
				if f.Message != "" {
					msg = f.Message
				}
				errs = append(errs, FieldError{Field: f.Name, Message: msg})
			}
		}
		if len(errs) > 0 {
			r := x.reject(InvalidPayload, e, "invalid payload for %s: %d field%s", e.Name, len(errs), plural(len(errs), "", "s"))
			r.Errors = errs
			return nil, r
		}
	}
	ts := x.IR.Lookup(s, e)
	if len(ts) == 0 {
		if s.Terminal {
			return nil, x.reject(InvalidTransition, e, "%s is terminal: %s is not accepted", s.Name, e.Name)
		}
		return nil, x.reject(InvalidTransition, e, "no transition from %s on %s", s.Name, e.Name)
	}
	var t *ir.Transition
	var failed []string
	for _, cand := range ts {
		if bad := x.failing(cand.Conds, in); len(bad) > 0 {
			failed = append(failed, bad...)
			continue
		}
		if !x.memHolds(cand) {
			continue
		}
		t = cand
		break
	}
	if t == nil {
		return nil, x.reject(GuardRejected, e, "%s on %s: guard %s does not hold", s.Name, e.Name, strings.Join(failed, ", "))
	}
	if !x.permitted(t, in) {
		var who []string
		for _, r := range t.Roles {
			if r.Policy != nil {
				who = append(who, r.Role.Name+" (if "+r.Policy.Name+")")
			} else {
				who = append(who, r.Role.Name)
			}
		}
		as := "without a role"
		if in.Role != nil {
			as = "to role " + in.Role.Name
		}
		return nil, x.reject(RoleDenied, e, "%s on %s is not permitted %s; roles allowed: %s", s.Name, e.Name, as, strings.Join(who, ", "))
	}

	p := &plan{step: Step{Event: e, From: s, Transition: t}}
	target := t.Target
	if target.Kind == ir.Choice {
		found := false
		for _, c := range t.Choices {
			if len(x.failing(c.Conds, in)) == 0 {
				target, found = c.Target, true
				break
			}
		}
		if !found {
			return nil, x.reject(NoChoice, e, "%s on %s: no choice holds", s.Name, e.Name)
		}
	}
	switch target.Kind {
	case ir.Fixed:
		p.step.To = target.State
	case ir.Internal:
		p.step.To, p.internal = s, true
	case ir.History:
		h := target.State
		mem := x.Remembered(h)
		if mem == nil {
			return nil, x.reject(NoHistory, e, "%s on %s: %s remembers no state to return to", s.Name, e.Name, h.Name)
		}
		p.step.To = mem
	}
	for _, c := range t.Increment {
		if limit := x.Limits[c.Index]; limit > 0 && x.Counters[c.Index][slot(c, s)]+1 >= limit {
			p.trips = append(p.trips, c)
			if p.step.Tripped != nil {
				continue
			}
			if c.Then == nil {
				word := "limit"
				if c.Max {
					word = "maximum" // max: N trips at N+1: say N, as the spec writes it
				}
				return nil, x.reject(LimitReached, e, "%s on %s: counter %s reached its %s of %d", s.Name, e.Name, c.Name, word, x.Bound(c))
			}
			if c.Summary != nil {
				// Written before the target's requirements are checked, so that they see it.
				p.step.Summary = c.SummaryText(x.Bound(c), s.Name, p.step.To.Name)
				ctx := make([]any, len(x.IR.Fields))
				copy(ctx, in.Context)
				ctx[c.Summary.Index] = p.step.Summary
				in.Context = ctx
			}
			p.step.Tripped, p.step.Redirected, p.step.To, p.internal = c, p.step.To, c.Then, false
		}
	}
	{
		// The fields the states entered require, then the constraints of the fields set
		// (invariant.go), which every transition checks.
		var required []*ir.Field
		if !p.internal {
			required = t.Required(p.step.To)
		}
		if errs := x.invariants(x.requirements(required, in), required, in); len(errs) > 0 {
			r := x.reject(MissingArtifacts, e, "cannot enter %s: %d required field%s missing or invalid", p.step.To.Name, len(errs), plural(len(errs), " is", "s are"))
			r.Errors = errs
			return nil, r
		}
	}
	if !p.internal {
		p.step.Actions = append(p.step.Actions, s.Exit...)
	}
	p.step.Actions = append(p.step.Actions, t.Actions...)
	if !p.internal {
		p.step.Actions = append(p.step.Actions, p.step.To.Entry...)
	}
	if t.Checkpoint != nil {
		p.step.Checkpoint = append(p.step.Checkpoint, t.Checkpoint)
	}
	for _, c := range x.IR.EveryCheckpoints() {
		if c != t.Checkpoint {
			p.step.Checkpoint = append(p.step.Checkpoint, c)
		}
	}
	return p, nil
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// apply commits a decided transition: counters, state and memory.
func (x *Machine) apply(p *plan) {
	t, s := p.step.Transition, p.step.From
	for _, c := range t.Increment {
		x.Counters[c.Index][slot(c, s)]++
	}
	for _, c := range p.trips {
		x.Counters[c.Index][slot(c, s)] = 0
	}
	for _, c := range t.Reset {
		x.Counters[c.Index][slot(c, s)] = 0
	}
	if t.Target.Kind != ir.Internal || p.step.Tripped != nil {
		for _, c := range x.IR.Counters {
			if c.ResetOnSuccess && !slices.Contains(t.Increment, c) {
				x.Counters[c.Index][slot(c, s)] = 0
			}
		}
	}
	to := p.step.To
	if !p.internal && to != s && to.Remembers {
		x.Remember(to, s)
	}
	x.State = to
}

func (x *Machine) permitted(t *ir.Transition, in Inputs) bool {
	if len(t.Roles) == 0 {
		return true
	}
	if in.Role == nil {
		return false
	}
	if in.Role.All {
		return true
	}
	for _, r := range t.Roles {
		if r.Role == in.Role && (r.Policy == nil || policy(in, r.Policy)) {
			return true
		}
	}
	return false
}

func policy(in Inputs, p *ir.Policy) bool {
	if in.Policies == nil {
		return p.Default
	}
	return in.Policies[p.Index]
}

// failing returns the conditions that do not hold, as written ("g" or "not g").
func (x *Machine) failing(conds []ir.Cond, in Inputs) []string {
	var out []string
	for _, c := range conds {
		if x.holds(c.Guard, in) == c.Negate {
			if c.Negate {
				out = append(out, "not "+c.Guard.Name)
			} else {
				out = append(out, c.Guard.Name)
			}
		}
	}
	return out
}

func (x *Machine) holds(g *ir.Guard, in Inputs) bool {
	switch g.Kind {
	case ir.CounterGuard:
		v := float64(x.Count(g.Counter, x.State))
		if g.Op == ir.Equals {
			return v == g.Equals.Num
		}
		return compare(v, g.Op, threshold(g.Threshold, in))
	case ir.FieldGuard:
		v := fieldValue(g.Field, in)
		switch g.Op {
		case ir.Equals:
			return equal(g.Field, v, g.Equals)
		case ir.Contains:
			return contains(g.Field, v, g.Equals)
		}
		n, ok := number(g.Field, v)
		if !ok {
			return false
		}
		return compare(n, g.Op, threshold(g.Threshold, in))
	case ir.Logic:
		return x.logic(g, in)
	}
	return in.Guard != nil && in.Guard(g)
}

func compare(v float64, op ir.Op, th float64) bool {
	if op == ir.AtLeast {
		return v >= th
	}
	return v < th
}

func threshold(t ir.Threshold, in Inputs) float64 {
	if t.Len != nil {
		return float64(length(fieldValue(t.Len, in)))
	}
	if t.By == nil {
		return t.Num
	}
	s, _ := fieldValue(t.By, in).(string)
	if i := t.By.EnumIndex(s); i >= 0 {
		return t.Values[i]
	}
	return t.Values[0]
}
