// Package testgen emits the exhaustive table-driven tests of a generated machine. The
// expected outcome of every row comes from the reference interpreter, so the generated
// tests check the generated code against the language's semantics: every (state, event)
// pair, every guard outcome and choice candidate, roles allowed and denied, required fields
// present and missing, counters and limits, history, timeouts, idempotency, terminal
// states, and a shortest path from the initial state to every state.
package testgen

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/fsmgen/fsmgen/internal/interp"
	"github.com/fsmgen/fsmgen/internal/ir"
)

// preset is a change to the fixture before a row fires: a counter slot, a context field or
// a configurable limit.
type preset struct {
	counter *ir.Counter
	slot    *ir.State // for per-state counters
	n       int
	field   *ir.Field
	v       value
	limit   *ir.Counter // a configurable counter whose limit (as the spec writes it) becomes n
}

func (p preset) goStmt() string {
	if p.limit != nil {
		return fmt.Sprintf("_ = m.Set%s%s(%d)", p.limit.LimitMethod(), p.limit.GoName, p.n)
	}
	if p.counter != nil {
		slot := "0"
		if p.counter.PerState {
			slot = "State" + p.slot.GoName
		}
		return fmt.Sprintf("fsmSetCount(m, %q, %s, %d)", p.counter.Name, slot, p.n)
	}
	return fmt.Sprintf("m.Context.%s = %s", p.field.GoName, p.v.goEx)
}

// Row is one case of the transition table.
type Row struct {
	Name       string
	Line       int // spec line of the transition taken or refused, or of the state when the pair has none
	From       *ir.State
	Event      *ir.Event
	Role       *ir.Role
	Guards     []*ir.Guard // hook guards that hold; the others fail
	Empty      bool        // an empty context instead of the good one
	NoPolicies bool        // every policy off instead of on
	NoMemory   bool        // remembering states remember nothing
	Fail       *ir.Action  // an action that may fail, failing
	presets    []preset
	Want       *ir.State
	Reason     string
	Calls      []string
	Counts     []int // nil: not checked
	Errors     []interp.FieldError
	// Remembers is set when the row is accepted into a remembering state; Back is what that
	// state then remembers (nil: nothing).
	Remembers bool
	Back      *ir.State
	// Wrote is the context field a tripped limit wrote its summary into, Summary the text.
	Wrote   *ir.Field
	Summary string
	step    *interp.Step // the interpreter's step, when accepted
}

// Setup is the Go code of the row's presets.
func (r *Row) Setup() []string { return presetStmts(r.presets) }

// presetStmts is the Go code of presets, a statement each.
func presetStmts(ps []preset) []string {
	var out []string
	for _, p := range ps {
		out = append(out, p.goStmt())
	}
	return out
}

// PathStep is one firing on a path from the initial state.
type PathStep struct {
	Event *ir.Event
	Role  *ir.Role
	// Off lists the hook guards that fail at this step, in the order the machine asks
	// them; every other hook guard holds.
	Off  []*ir.Guard
	Back *ir.State // what the state the step leads to remembers, if it remembers
	// presets are the context fields set before the step fires, so that the field guards
	// that decide it hold or fail; they stay set for the steps after it.
	presets []preset
}

// Setup is the Go code of the step's presets.
func (s PathStep) Setup() []string { return presetStmts(s.presets) }

// PathNode is a node of the tree of shortest paths: one step from its parent node (-1 for
// the initial state). The tree keeps the generated tests linear in the number of states,
// where listing every path in full would not be.
type PathNode struct {
	Parent int
	Step   PathStep
}

// PathEnd is the node of the tree where the shortest path to a state ends (-1 when the state
// is the initial state: no step).
type PathEnd struct {
	To   *ir.State
	Node int
}

// PermittedRow is the expected result of PermittedWith in a state, for a role, with the
// good context or the default one.
type PermittedRow struct {
	From   *ir.State
	Role   *ir.Role
	Empty  bool
	Events []*ir.Event
}

// PayloadRow is an invalid payload and the errors it must produce.
type PayloadRow struct {
	Name    string
	Event   *ir.Event
	Field   *ir.Field
	Value   value
	Errors  []interp.FieldError
	Payload []*ir.Field
}

// Model is everything the test template needs.
type Model struct {
	M          *ir.Machine
	Rows       []*Row
	PathTree   []PathNode
	PathEnds   []PathEnd   // in state order
	Unreached  []*ir.State // states the path search did not reach, in state order
	Permitted  []PermittedRow
	Payloads   []PayloadRow
	Checkpoint *Row      // an accepted row that reaches a checkpoint
	Order      *OrderRow // a row where hooks of several kinds run, for the hook order
	Idem       *Row      // an accepted row from the initial state
	IdemOther  *ir.Event
	// Anon is, by state and event, the outcome of firing with the fixture's inputs and no
	// role (every hook guard holding, the good context and payload, every policy on).
	Anon [][]*Row
	// Walks are a statechart's runs from its start (nil for a flat machine).
	Walks []Walk
	// RegistryEvent is the first event without payload (nil: every event has one), the one
	// the registry test fires through the registry.
	RegistryEvent *ir.Event
}

// OrderRow is an accepted row where hooks of several kinds run, split by the phase in which
// the documented order runs them: the guards the transition asks, the exit actions of the
// source, the transition's actions, the entry actions of the target, the checkpoints.
type OrderRow struct {
	*Row
	Guards      []string
	Exit        []string
	Do          []string
	Entry       []string
	Checkpoints []string
}

// phases is how many of the phases have a hook.
func (r *OrderRow) phases() int {
	n := 0
	for _, p := range [][]string{r.Guards, r.Exit, r.Do, r.Entry, r.Checkpoints} {
		if len(p) > 0 {
			n++
		}
	}
	return n
}

type oracle struct {
	m     *ir.Machine
	model *Model
	// remembering lists the states that remember where they were entered from and can
	// be returned to.
	remembering []*ir.State
}

func newOracle(m *ir.Machine) *oracle {
	o := &oracle{m: m, model: &Model{M: m}}
	for _, s := range m.States {
		if s.Remembers && len(s.HistoryFrom) > 0 {
			o.remembering = append(o.remembering, s)
		}
	}
	return o
}

// newMachine starts an interpreter in state s with every remembering state remembering
// its first candidate (the fixture's memory).
func (o *oracle) newMachine(s *ir.State) *interp.Machine {
	x := interp.New(o.m)
	x.State = s
	for _, h := range o.remembering {
		x.Remember(h, h.HistoryFrom[0])
	}
	return x
}

// Build computes every row with the interpreter.
func Build(m *ir.Machine) *Model {
	o := newOracle(m)
	o.exhaustive()
	o.paths()
	o.anon()
	o.permitted()
	o.payloads()
	if m.Chart != nil {
		o.walks()
	}
	return o.model
}

// run fires the row's event in the interpreter, from the fixture's inputs changed as the
// row says, and records the outcome in the row.
func (o *oracle) run(r *Row) {
	m := o.m
	x := o.newMachine(r.From)
	if r.NoMemory {
		x.Memory = nil
	}
	in := o.fixedInputs(r.Role, false, r.Event)
	if r.NoPolicies {
		clear(in.Policies)
	}
	if r.Empty {
		clear(in.Context)
	}
	on := map[*ir.Guard]bool{}
	for _, g := range r.Guards {
		on[g] = true
	}
	in.Guard = func(g *ir.Guard) bool { return on[g] }
	if r.Fail != nil {
		in.Fail = func(a *ir.Action) bool { return a == r.Fail }
	}
	for _, p := range r.presets {
		if p.limit != nil {
			if err := x.SetLimit(p.limit, p.n); err != nil {
				panic(err) // the model sets only valid limits
			}
			continue
		}
		if p.counter != nil {
			slot := 0
			if p.counter.PerState {
				slot = p.slot.Index
			}
			x.Counters[p.counter.Index][slot] = p.n
		} else {
			in.Context[p.field.Index] = p.v.json
		}
	}
	st, rej := x.Fire(r.Event, in)
	r.Want = x.State
	r.Reason, r.Line, r.Calls, r.Errors, r.step = "", 0, nil, nil, nil
	r.Remembers, r.Back = false, nil
	r.Wrote, r.Summary = nil, ""
	if rej != nil {
		r.Reason = string(rej.Reason)
		r.Errors = rej.Errors
		r.Calls = actionNames(rej.Actions)
		if ts := m.Lookup(r.From, r.Event); len(ts) > 0 {
			r.Line = ts[0].Pos.Line
		} else {
			r.Line = r.From.Pos.Line // no transition: the state that has none
		}
	} else {
		r.Line = st.Transition.Pos.Line
		r.step = st
		if st.Summary != "" {
			r.Wrote, r.Summary = st.Tripped.Summary, st.Summary
		}
		if x.State.Remembers {
			r.Remembers, r.Back = true, x.Remembered(x.State)
		}
		// Actions run during the transition, checkpoints after it, effects once it is
		// committed.
		for _, a := range st.Actions {
			if !a.Effect {
				r.Calls = append(r.Calls, a.Name)
			}
		}
		for _, c := range st.Checkpoint {
			r.Calls = append(r.Calls, "checkpoint:"+c.Name)
		}
		for _, a := range st.Actions {
			if a.Effect {
				r.Calls = append(r.Calls, a.Name)
			}
		}
	}
	if r.Counts != nil {
		r.Counts = counts(m, x)
	}
}

func goodPayload(e *ir.Event) []any {
	out := make([]any, len(e.Payload))
	for _, f := range e.Payload {
		out[f.Index] = good(f).json
	}
	return out
}

// counts flattens every counter: one value for a global counter, one per state for a
// per-state counter.
func counts(m *ir.Machine, x *interp.Machine) []int {
	out := []int{}
	for _, c := range m.Counters {
		out = append(out, x.Counters[c.Index]...)
	}
	return out
}

// role picks who fires e in s: a role of the first transition's rules, or one that may fire
// everything, or nobody when the transitions name no roles.
func (o *oracle) role(s *ir.State, e *ir.Event) *ir.Role {
	ts := o.m.Lookup(s, e)
	if len(ts) == 0 || len(ts[0].Roles) == 0 {
		return nil
	}
	for _, r := range ts[0].Roles {
		if !r.Role.All {
			return r.Role
		}
	}
	return ts[0].Roles[0].Role
}

// roles lists who the path search fires e in s as: every role that the transitions on e
// from s name (a role that may fire everything after them), in order of first mention,
// then nobody when a transition names no role, so that a transition further down a chain
// that only another role may fire is taken too.
func (o *oracle) roles(s *ir.State, e *ir.Event) []*ir.Role {
	var out, all []*ir.Role
	open := false
	for _, t := range o.m.Lookup(s, e) {
		open = open || len(t.Roles) == 0
		for _, r := range t.Roles {
			switch {
			case r.Role.All:
				if !slices.Contains(all, r.Role) {
					all = append(all, r.Role)
				}
			case !slices.Contains(out, r.Role):
				out = append(out, r.Role)
			}
		}
	}
	out = append(out, all...)
	if open || len(out) == 0 {
		out = append(out, nil)
	}
	return out
}

func (o *oracle) hookGuards() []*ir.Guard { return hookGuards(o.m) }

// hookGuards lists the machine's hook guards, in declaration order.
func hookGuards(m *ir.Machine) []*ir.Guard {
	var out []*ir.Guard
	for _, g := range m.Guards {
		if g.Kind == ir.Hook {
			out = append(out, g)
		}
	}
	return out
}

// guardsAt lists the guards that decide (s, e), in order of first use.
func (o *oracle) guardsAt(s *ir.State, e *ir.Event) []*ir.Guard {
	var out []*ir.Guard
	seen := map[*ir.Guard]bool{}
	add := func(cs []ir.Cond) {
		for _, c := range cs {
			gs := []*ir.Guard{c.Guard}
			if c.Guard.Kind == ir.Logic {
				gs = c.Guard.Expr.Leaves() // an expression's guards decide it
			}
			for _, g := range gs {
				if !seen[g] {
					seen[g] = true
					out = append(out, g)
				}
			}
		}
	}
	for _, t := range o.m.Lookup(s, e) {
		add(t.Conds)
		for _, c := range t.Choices {
			add(c.Conds)
		}
	}
	return out
}

func (o *oracle) base(s *ir.State, e *ir.Event) *Row {
	return &Row{Name: s.Name + "/" + e.Name, From: s, Event: e, Role: o.role(s, e), Guards: o.hookGuards()}
}

func (o *oracle) add(r *Row) *Row {
	o.run(r)
	o.model.Rows = append(o.model.Rows, r)
	return r
}

// setGuard makes guard g hold or fail in row r.
func (o *oracle) setGuard(r *Row, g *ir.Guard, hold bool) {
	switch g.Kind {
	case ir.Hook:
		var keep []*ir.Guard
		for _, x := range r.Guards {
			if x != g {
				keep = append(keep, x)
			}
		}
		if hold {
			keep = append(keep, g)
		}
		r.Guards = keep
	case ir.CounterGuard:
		th := threshold(g)
		n := 0
		switch g.Op {
		case ir.AtLeast:
			if hold {
				n = int(th + 0.999999)
			}
		case ir.Below:
			if !hold {
				n = int(th + 0.999999)
			}
		case ir.Equals:
			n = int(g.Equals.Num)
			if !hold {
				n++
			}
		}
		r.presets = append(r.presets, preset{counter: g.Counter, slot: r.From, n: n})
	case ir.FieldGuard:
		f := g.Field
		var v value
		switch g.Op {
		case ir.Equals:
			v = equalsValue(f, g.Equals, hold)
		case ir.Contains:
			// As many elements as the good context has, so that a threshold by the list's
			// length decides the same way whatever this guard's outcome.
			v = collection(f, max(goodLen(f), 1), equalsValue(f, g.Equals, hold))
		default:
			th := threshold(g)
			step := 1.0
			if f.Type.Kind == ir.Duration {
				step = 1e9
			}
			n := th
			if (g.Op == ir.AtLeast) != hold {
				n = under(f, th, step)
			}
			v = scalarValue(f, n, "", false)
		}
		r.presets = append(r.presets, preset{field: f, v: v})
	}
}

// goodLen is the number of elements of a list field in the good context.
func goodLen(f *ir.Field) int {
	if list, ok := good(f).json.([]any); ok {
		return len(list)
	}
	return 0
}

// threshold is the guard's threshold in the good context (enum fields at their last value,
// lists at their good length).
func threshold(g *ir.Guard) float64 {
	if g.Threshold.Len != nil {
		return float64(goodLen(g.Threshold.Len))
	}
	if g.Threshold.By != nil {
		return g.Threshold.Values[len(g.Threshold.Values)-1]
	}
	return g.Threshold.Num
}

func equalsValue(f *ir.Field, lit ir.Literal, hold bool) value {
	switch f.Type.Kind {
	case ir.Bool:
		return scalarValue(f, 0, "", lit.Bool == hold)
	case ir.Enum:
		v := lit.Str
		if !hold {
			for _, x := range f.Values {
				if x != lit.Str {
					v = x
					break
				}
			}
		}
		return scalarValue(f, 0, v, false)
	case ir.String:
		if hold {
			return scalarValue(f, 0, lit.Str, false)
		}
		return scalarValue(f, 0, lit.Str+"-not", false)
	}
	n := lit.Num
	if !hold {
		n++
	}
	return scalarValue(f, n, "", false)
}

// combos lists guard outcome assignments to test beyond "all hold": every combination for
// up to three guards, else all failing and each one failing alone.
func combos(k int) [][]bool {
	var out [][]bool
	if k <= 3 {
		for mask := 0; mask < 1<<k; mask++ {
			if mask == 1<<k-1 {
				continue
			}
			c := make([]bool, k)
			for i := range c {
				c[i] = mask&(1<<i) != 0
			}
			out = append(out, c)
		}
		return out
	}
	out = append(out, make([]bool, k))
	for i := 0; i < k; i++ {
		c := make([]bool, k)
		for j := range c {
			c[j] = j != i
		}
		out = append(out, c)
	}
	return out
}

func (o *oracle) exhaustive() {
	m := o.m
	requiresDone := map[any]bool{}
	countersDone := map[*ir.Transition]bool{}
	resetDone := map[*ir.Counter]bool{}
	for _, s := range m.States {
		for _, e := range fireable(m) {
			b := o.add(o.base(s, e))
			ts := m.Lookup(s, e)
			if len(ts) == 0 {
				continue
			}
			// Guard outcomes and choice candidates.
			gs := o.guardsAt(s, e)
			cs := combos(len(gs))
			for _, g := range gs {
				if g.Kind != ir.Hook { // the base row does not make these hold: add "all hold"
					all := make([]bool, len(gs))
					for i := range all {
						all[i] = true
					}
					cs = append(cs, all)
					break
				}
			}
			for _, c := range cs {
				r := o.base(s, e)
				var parts []string
				for i, g := range gs {
					o.setGuard(r, g, c[i])
					parts = append(parts, fmt.Sprintf("%s=%v", g.Name, c[i]))
				}
				r.Name += "/" + strings.Join(parts, ",")
				o.add(r)
			}
			// Roles allowed and denied.
			if len(ts[0].Roles) > 0 {
				for _, ro := range append([]*ir.Role{nil}, m.Roles...) {
					if ro == b.Role {
						continue
					}
					r := o.base(s, e)
					r.Role = ro
					r.Name += "/as " + roleName(ro)
					o.add(r)
				}
				for _, rule := range ts[0].Roles {
					if rule.Policy != nil {
						r := o.base(s, e)
						r.Role, r.NoPolicies = rule.Role, true
						r.Name += "/as " + rule.Role.Name + " without " + rule.Policy.Name
						o.add(r)
					}
				}
			}
			if b.Reason != "" {
				continue
			}
			t := b.step.Transition
			// Each action that may fail, failing: refused, nothing changed.
			var failing []*ir.Action
			for _, a := range b.step.Actions {
				if a.MayFail && !a.Effect && !slices.Contains(failing, a) {
					failing = append(failing, a)
					r := o.base(s, e)
					r.Fail = a
					r.Name += "/" + a.Name + " fails"
					o.add(r)
				}
			}
			// History with nothing remembered.
			if t.Target.Kind == ir.History || anyHistoryChoice(t) {
				r := o.base(s, e)
				r.NoMemory = true
				r.Name += "/nothing remembered"
				o.add(r)
			}
			// Required fields of the target (in a statechart, of the states the event's
			// microstep enters), missing and invalid: each set of fields once.
			var key any = b.Want
			req, enters := b.Want.Requires, b.Want != s
			if m.Chart != nil {
				req, enters = t.Requires, true
				key = fieldNames(req)
			}
			if len(req) > 0 && enters {
				r := o.base(s, e)
				r.Empty = true
				r.Name += "/empty context"
				o.add(r)
			}
			if len(req) > 0 && enters && !requiresDone[key] {
				requiresDone[key] = true
				for _, f := range req {
					for _, v := range violations(f, true) {
						r := o.base(s, e)
						r.presets = append(r.presets, preset{field: f, v: v.v})
						r.Name += "/" + f.Name + " " + v.name
						o.add(r)
					}
				}
			}
			// Counters: the base case, limits tripping, resets on success.
			if len(m.Counters) > 0 && len(m.States)*len(m.Counters) <= 256 {
				if (len(t.Increment) > 0 || len(t.Reset) > 0) && !countersDone[t] {
					countersDone[t] = true
					r := o.base(s, e)
					r.Counts = []int{}
					for _, c := range append(append([]*ir.Counter{}, t.Increment...), t.Reset...) {
						r.presets = append(r.presets, preset{counter: c, slot: s, n: 1})
					}
					r.Name += "/counters"
					o.add(r)
					for _, c := range t.Increment {
						if c.Limit == 0 {
							continue
						}
						// A summary field starts empty: the limit fills it in, and entering
						// the limit's state sees it.
						var empty []preset
						if c.Summary != nil && c.Then != nil {
							empty = append(empty, preset{field: c.Summary, v: value{"", `""`}})
						}
						r := o.base(s, e)
						r.Counts = []int{}
						r.presets = append(append(r.presets, empty...), preset{counter: c, slot: s, n: c.Limit - 1})
						r.Name += fmt.Sprintf("/%s at %d of %s", c.Name, c.Limit-1, limitName(c, c.Bound()))
						o.add(r)
						if !c.Configurable {
							continue
						}
						// The limit raised by one at run time: the count that tripped it no
						// longer does, the next one does.
						for _, n := range []int{c.Limit - 1, c.Limit} {
							r := o.base(s, e)
							r.Counts = []int{}
							r.presets = append(append(r.presets, empty...), preset{limit: c, n: c.Bound() + 1}, preset{counter: c, slot: s, n: n})
							r.Name += fmt.Sprintf("/%s at %d of %s set at run time", c.Name, n, limitName(c, c.Bound()+1))
							o.add(r)
						}
					}
				}
				for _, c := range m.Counters {
					if c.ResetOnSuccess && !resetDone[c] && !slices.Contains(t.Increment, c) && t.Target.Kind != ir.Internal {
						resetDone[c] = true
						r := o.base(s, e)
						r.Counts = []int{}
						r.presets = append(r.presets, preset{counter: c, slot: s, n: 1})
						r.Name += "/" + c.Name + " reset on success"
						o.add(r)
					}
				}
			}
			if o.model.Checkpoint == nil && hasCheckpoint(b.Calls) {
				o.model.Checkpoint = b
			}
			if r := o.order(b, ts); r != nil && (o.model.Order == nil || r.phases() > o.model.Order.phases()) {
				o.model.Order = r
			}
			if o.model.Idem == nil && s == m.Initial {
				o.model.Idem = b
			}
		}
	}
	if o.model.Idem != nil {
		for _, e := range fireable(m) {
			if e != o.model.Idem.Event {
				o.model.IdemOther = e
				break
			}
		}
	}
}

// order splits the hooks of an accepted base row by phase, when the phases are known from
// the spec alone: the transition taken is the first of the pair, asks only hook guards that
// must hold, and has no choice (else the generated code may ask other guards on the way).
// It returns nil for other rows and for rows where fewer than two phases have a hook.
func (o *oracle) order(b *Row, ts []*ir.Transition) *OrderRow {
	st := b.step
	if st == nil || st.Transition != ts[0] || st.Transition.Target.Kind == ir.Choice {
		return nil
	}
	t := st.Transition
	r := &OrderRow{Row: b}
	for _, c := range t.Conds {
		if c.Guard.Kind != ir.Hook || c.Negate {
			return nil
		}
		r.Guards = append(r.Guards, c.Guard.Name)
	}
	internal := t.Target.Kind == ir.Internal && st.Tripped == nil
	names := func(as []*ir.Action) []string {
		var out []string
		for _, a := range as {
			out = append(out, a.Name)
		}
		return out
	}
	if !internal {
		r.Exit, r.Entry = names(st.From.Exit), names(st.To.Entry)
	}
	r.Do = names(t.Actions)
	for _, c := range st.Checkpoint {
		r.Checkpoints = append(r.Checkpoints, c.Name)
	}
	if len(r.Exit)+len(r.Do)+len(r.Entry) != len(st.Actions) || r.phases() < 2 || slices.ContainsFunc(st.Actions, func(a *ir.Action) bool { return a.Effect }) {
		return nil
	}
	return r
}

func anyHistoryChoice(t *ir.Transition) bool {
	for _, c := range t.Choices {
		if c.Target.Kind == ir.History {
			return true
		}
	}
	return false
}

func hasCheckpoint(calls []string) bool {
	for _, c := range calls {
		if strings.HasPrefix(c, "checkpoint:") {
			return true
		}
	}
	return false
}

func roleName(r *ir.Role) string {
	if r == nil {
		return "nobody"
	}
	return r.Name
}

// paths finds, for every state, a shortest event path from the initial state with the
// fixture's inputs (hook guards all holding or all failing), searching over the
// interpreter's whole state (counters and memories included).
func (o *oracle) paths() {
	m := o.m
	// A node is an interpreter state reached by the search; its path is the chain of
	// parents, kept as indices so that no node copies its path.
	type node struct {
		x      *interp.Machine
		ctx    []any // the context, as the steps so far left it
		cid    int   // ctxIDs[fmt.Sprint(ctx)]
		parent int   // index in nodes; -1 for the start
		step   PathStep
	}
	ctxIDs := map[string]int{}
	ctxID := func(ctx []any) int {
		k := fmt.Sprint(ctx...)
		id, ok := ctxIDs[k]
		if !ok {
			id = len(ctxIDs)
			ctxIDs[k] = id
		}
		return id
	}
	var buf []byte
	key := func(x *interp.Machine, cid int) string {
		buf = strconv.AppendInt(buf[:0], int64(x.State.Index), 10)
		buf = strconv.AppendInt(append(buf, ' ', 'c'), int64(cid), 10)
		for _, c := range x.Counters {
			buf = append(buf, '|')
			for _, v := range c {
				buf = strconv.AppendInt(append(buf, ' '), int64(v), 10)
			}
		}
		// A statechart's history memory: what its history states would restore.
		for _, v := range x.Mem {
			buf = strconv.AppendInt(append(buf, ' ', 'h'), int64(v), 10)
		}
		for _, h := range o.remembering {
			if r := x.Remembered(h); r != nil {
				buf = strconv.AppendInt(append(buf, ' ', 'm'), int64(r.Index), 10)
			} else {
				buf = append(buf, ' ', '-')
			}
		}
		return string(buf)
	}
	start := interp.New(m)
	startCtx := o.fixedInputs(nil, true, nil).Context
	nodes := []node{{x: start, ctx: startCtx, cid: ctxID(startCtx), parent: -1}}
	seen := map[string]bool{key(start, nodes[0].cid): true}
	found := map[*ir.State]int{m.Initial: 0}
	const limit = 20000
	for head := 0; head < len(nodes) && len(seen) < limit && len(found) < len(m.States); head++ {
		n := nodes[head]
		for _, e := range fireable(m) {
			ts := m.Lookup(n.x.State, e)
			if len(ts) == 0 {
				continue
			}
			for _, r := range o.roles(n.x.State, e) {
				for _, ps := range o.fieldVariants(n.x.State, e) {
					ctx := n.ctx
					if len(ps) > 0 {
						ctx = slices.Clone(n.ctx)
						for _, p := range ps {
							ctx[p.field.Index] = p.v.json
						}
					}
					in := o.fixedInputs(r, true, e)
					in.Context = ctx
					for _, off := range hookOutcomes(n.x, e, in, func(y *interp.Machine) string { return key(y, n.cid) }) {
						y := clone(n.x)
						in.Guard = failing(off)
						st, rej := y.Fire(e, in)
						if rej != nil {
							continue
						}
						yctx := ctx
						if st.Summary != "" { // the machine writes the summary into its context
							yctx = slices.Clone(ctx)
							yctx[st.Tripped.Summary.Index] = st.Summary
						}
						cid := ctxID(yctx)
						k := key(y, cid)
						if seen[k] {
							continue
						}
						seen[k] = true
						if _, ok := found[y.State]; !ok {
							found[y.State] = len(nodes)
						}
						step := PathStep{Event: e, Role: r, Off: off, presets: ps}
						if y.State.Remembers {
							step.Back = y.Remembered(y.State)
						}
						nodes = append(nodes, node{x: y, ctx: yctx, cid: cid, parent: head, step: step})
					}
				}
			}
		}
	}
	// Keep the nodes on some state's path, numbered in search order (parents first).
	keep := make([]int, len(nodes))
	for i := range keep {
		keep[i] = -1
	}
	for _, i := range found {
		for ; i > 0 && keep[i] < 0; i = nodes[i].parent {
			keep[i] = 0
		}
	}
	for i := 1; i < len(nodes); i++ {
		if keep[i] < 0 {
			continue
		}
		keep[i] = len(o.model.PathTree)
		parent := -1
		if p := nodes[i].parent; p > 0 {
			parent = keep[p]
		}
		o.model.PathTree = append(o.model.PathTree, PathNode{Parent: parent, Step: nodes[i].step})
	}
	for _, s := range m.States {
		if i, ok := found[s]; ok {
			end := -1
			if i > 0 {
				end = keep[i]
			}
			o.model.PathEnds = append(o.model.PathEnds, PathEnd{To: s, Node: end})
		} else {
			o.model.Unreached = append(o.model.Unreached, s)
		}
	}
}

// maxFieldCombos bounds the combinations of field values fieldVariants lists.
const maxFieldCombos = 256

// fieldVariants lists the context changes to try when firing e in s: none (the good
// context), then every combination of the values that make each field guard deciding the
// pair hold or fail, a value (or none) for each field, fewest changes first, so that a
// transition that needs one guard on a field to hold and a guard on another to fail is
// taken too. Past maxFieldCombos combinations, it lists each value alone, and all the
// guards holding and all failing.
func (o *oracle) fieldVariants(s *ir.State, e *ir.Event) [][]preset {
	out := [][]preset{nil}
	var fgs []*ir.Guard
	var fields []*ir.Field
	values := map[*ir.Field][]preset{}
	for _, g := range o.guardsAt(s, e) {
		if g.Kind != ir.FieldGuard {
			continue
		}
		fgs = append(fgs, g)
		for _, hold := range []bool{true, false} {
			p := o.fieldPreset(g, hold)
			if !slices.ContainsFunc(values[g.Field], func(q preset) bool { return q.v.goEx == p.v.goEx }) {
				if len(values[g.Field]) == 0 {
					fields = append(fields, g.Field)
				}
				values[g.Field] = append(values[g.Field], p)
			}
		}
	}
	total := 1
	for _, f := range fields {
		total *= len(values[f]) + 1
		if total > maxFieldCombos {
			break
		}
	}
	if total <= maxFieldCombos {
		// Mixed radix: digit i picks field i's value (0: left as it is).
		var combos [][]preset
		for c := 1; c < total; c++ {
			var ps []preset
			for i, rest := 0, c; i < len(fields); i++ {
				n := len(values[fields[i]]) + 1
				if d := rest % n; d > 0 {
					ps = append(ps, values[fields[i]][d-1])
				}
				rest /= n
			}
			combos = append(combos, ps)
		}
		slices.SortStableFunc(combos, func(a, b []preset) int { return len(a) - len(b) })
		return append(out, combos...)
	}
	for _, g := range fgs {
		for _, hold := range []bool{true, false} {
			out = append(out, []preset{o.fieldPreset(g, hold)})
		}
	}
	for _, hold := range []bool{true, false} {
		var ps []preset
		for _, g := range fgs {
			ps = append(ps, o.fieldPreset(g, hold))
		}
		out = append(out, ps)
	}
	return out
}

// fieldPreset is a context value that makes field guard g hold or fail, within the
// field's bounds where a float field allows it.
func (o *oracle) fieldPreset(g *ir.Guard, hold bool) preset {
	r := &Row{}
	o.setGuard(r, g, hold)
	p := r.presets[0]
	f := g.Field
	if f.Type.Kind == ir.Float && g.Op != ir.Equals && g.Threshold.By == nil {
		n, _ := strconv.ParseFloat(fmt.Sprint(p.v.json), 64)
		th := threshold(g)
		switch {
		case f.BelowMin(n) && th > f.Min.Num:
			p.v = scalarValue(f, (f.Min.Num+th)/2, "", false)
		case f.AboveMax(n) && th < f.Max.Num:
			p.v = scalarValue(f, (f.Max.Num+th)/2, "", false)
		}
	}
	return p
}

// maxHookOutcomes bounds the hook-guard outcomes tried for one firing, and maxHookRuns the
// firings tried to find them.
const (
	maxHookOutcomes = 64
	maxHookRuns     = 1024
)

// hookOutcomes lists the distinct ways the hook guards can decide firing e from x with the
// inputs in (whose Guard it replaces): for each, the guards that fail, in the order they
// are asked (the others hold). It explores the interpreter's decisions as a tree, each
// guard asked for the first time in a firing a branch point (holding first, then failing),
// so that a chain of n guarded transitions gives its n+1 outcomes, where scripting one
// outcome for all the guards of a step reaches only the first and the last. An outcome
// is kept when it leads somewhere no earlier one led (effect names where; every refusal is
// one): a guard expression that fails in several ways (and: [a, b] when a fails, or a
// holds and b fails) would otherwise give each way of failing again for every guard asked
// after it, and fill the bound before the outcomes that take the later transitions.
func hookOutcomes(x *interp.Machine, e *ir.Event, in interp.Inputs, effect func(*interp.Machine) string) [][]*ir.Guard {
	type decision struct {
		g    *ir.Guard
		hold bool
	}
	var out [][]*ir.Guard
	seen := map[string]bool{}
	runs := 0
	// The tree is explored breadth first: every way with one guard failing that the first
	// run's guards held, then every way with two, and so on. Depth first, the bound on runs
	// could be spent on the ways the later guards decide (a long and or or after the first
	// transition's guard) before any way the first guards decide otherwise.
	queue := [][]decision{nil}
	explore := func(forced []decision) {
		runs++
		asked := slices.Clone(forced)
		val := make(map[*ir.Guard]bool, len(forced))
		for _, d := range forced {
			val[d.g] = d.hold
		}
		in.Guard = func(g *ir.Guard) bool {
			if v, ok := val[g]; ok {
				return v
			}
			val[g] = true
			asked = append(asked, decision{g, true})
			return true
		}
		y := clone(x)
		where := "refused"
		if _, rej := y.Fire(e, in); rej == nil {
			where = effect(y)
		}
		var off []*ir.Guard
		for _, d := range asked {
			if !d.hold {
				off = append(off, d.g)
			}
		}
		if !seen[where] {
			seen[where] = true
			out = append(out, off)
		}
		// The guards first asked in this run held: each may fail instead, the ones before
		// it deciding as they did.
		for i := len(forced); i < len(asked); i++ {
			queue = append(queue, append(slices.Clone(asked[:i]), decision{asked[i].g, false}))
		}
	}
	for len(queue) > 0 && len(out) < maxHookOutcomes && runs < maxHookRuns {
		forced := queue[0]
		queue = queue[1:]
		explore(forced)
	}
	return out
}

// failing is a hook-guard oracle under which the guards in off fail and every other holds.
func failing(off []*ir.Guard) func(*ir.Guard) bool {
	return func(g *ir.Guard) bool { return !slices.Contains(off, g) }
}

// limitName is a limit as the spec writes it: "3", or "max 3".
func limitName(c *ir.Counter, n int) string {
	if c.Max {
		return fmt.Sprintf("max %d", n)
	}
	return fmt.Sprint(n)
}

// clone copies the interpreter's state, so that firing the copy leaves x as it was.
func clone(x *interp.Machine) *interp.Machine {
	y := *x
	y.Limits = slices.Clone(x.Limits)
	y.Counters = make([][]int, len(x.Counters))
	for i, c := range x.Counters {
		y.Counters[i] = append([]int(nil), c...)
	}
	if x.Memory != nil {
		y.Memory = append([]*ir.State(nil), x.Memory...)
	}
	y.Mem = slices.Clone(x.Mem)
	return &y
}

// fixedInputs are the inputs of the fixture: the good context, every policy on, hook guards
// all holding or all failing.
func (o *oracle) fixedInputs(r *ir.Role, on bool, e *ir.Event) interp.Inputs {
	m := o.m
	in := interp.Inputs{Role: r, Policies: make([]bool, len(m.Policies)), Context: make([]any, len(m.Fields))}
	for i := range in.Policies {
		in.Policies[i] = true
	}
	for _, f := range m.Fields {
		in.Context[f.Index] = good(f).json
	}
	in.Guard = func(*ir.Guard) bool { return on }
	if e != nil {
		in.Payload = goodPayload(e)
	}
	return in
}

func (o *oracle) anon() {
	m := o.m
	for _, s := range m.States {
		var rows []*Row
		for _, e := range fireable(m) {
			r := &Row{Name: s.Name + "/" + e.Name, From: s, Event: e, Guards: o.hookGuards()}
			o.run(r)
			rows = append(rows, r)
		}
		o.model.Anon = append(o.model.Anon, rows)
	}
	for _, e := range m.Events {
		if len(e.Payload) == 0 {
			o.model.RegistryEvent = e
			break
		}
	}
}

// fieldNames joins the names of fields with commas.
func fieldNames(fields []*ir.Field) string {
	names := make([]string, len(fields))
	for i, f := range fields {
		names[i] = f.Name
	}
	return strings.Join(names, ",")
}

func (o *oracle) permitted() {
	m := o.m
	roles := append([]*ir.Role{nil}, m.Roles...)
	anyRequires := false
	for _, s := range m.States {
		anyRequires = anyRequires || len(s.Requires) > 0
	}
	for _, t := range m.Transitions {
		anyRequires = anyRequires || len(t.Requires) > 0
	}
	for _, s := range m.States {
		for _, r := range roles {
			for _, empty := range []bool{false, true} {
				if empty && !anyRequires {
					continue
				}
				x := o.newMachine(s)
				in := o.fixedInputs(r, true, nil)
				if empty {
					in.Context = make([]any, len(m.Fields))
				}
				o.model.Permitted = append(o.model.Permitted, PermittedRow{From: s, Role: r, Empty: empty, Events: x.Allowed(in)})
			}
		}
	}
}

func (o *oracle) payloads() {
	m := o.m
	for _, e := range m.Events {
		for _, f := range e.Payload {
			for _, v := range violations(f, f.Required) {
				x := interp.New(m)
				in := o.fixedInputs(nil, true, e)
				in.Payload[f.Index] = v.v.json
				_, rej := x.Fire(e, in)
				if rej == nil || rej.Reason != interp.InvalidPayload {
					continue
				}
				o.model.Payloads = append(o.model.Payloads, PayloadRow{Name: e.Name + "/" + f.Name + " " + v.name, Event: e, Field: f, Value: v.v, Errors: rej.Errors, Payload: e.Payload})
			}
		}
	}
}

// fireable lists the events the program fires: a statechart raises the others itself.
func fireable(m *ir.Machine) []*ir.Event {
	var out []*ir.Event
	for _, e := range m.Events {
		if !e.Internal {
			out = append(out, e)
		}
	}
	return out
}
