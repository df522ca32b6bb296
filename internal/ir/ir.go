// Package ir is the resolved model of a machine: what every emitter and the interpreter
// consume. It holds plain structs in declaration order; names are resolved to pointers,
// wildcards are expanded, and (state, event) lookups are precomputed. Nothing here knows
// about YAML or Go code emission.
package ir

import (
	"slices"
	"strconv"
	"time"

	"github.com/fsmgen/fsmgen/internal/diag"
)

// Pos is a position in the spec.
type Pos = diag.Pos

// Machine is one resolved spec.
type Machine struct {
	Source        string // the spec path as given on the command line
	Name          string
	GoName        string
	Package       string
	Doc           string
	RecordHistory bool
	Idempotent    bool

	States      []*State
	Events      []*Event
	Groups      []*Group
	Roles       []*Role
	Policies    []*Policy
	Fields      []*Field // context fields
	Counters    []*Counter
	Guards      []*Guard
	Actions     []*Action
	Checkpoints []*Checkpoint
	Transitions []*Transition // declaration order
	Levels      []Level       // spec-wide timeout levels, by ascending percentage

	Initial *State
	// Chart is the state tree of a statechart (nil for a flat machine): States are then
	// its configurations and Transitions its compiled microsteps.
	Chart *Chart
	// Logic are the guard expressions (Guard.Kind Logic), declared ones first, then those
	// written in a transition's if or unless and those flattening specialises; a condition
	// on one indexes it after Guards (len(Guards)+i).
	Logic []*Guard

	// Migrations say how instances stored under older versions of the spec become
	// instances of this one: those the spec declares, each composed with the older spec's
	// own, so that each covers one older version all the way.
	Migrations []*Migration

	table [][]*Transition // [state*len(Events)+event], each in priority order
}

// Migration takes instances stored under an older spec (fingerprint From) to this one. A
// map holds the older names that change: to the name here, or to "" for the events,
// counters and context fields whose values are dropped.
type Migration struct {
	From string
	// Source is the older spec's file as the spec names it (for a composed migration, the
	// chain of files, the oldest last).
	Source string
	Pos    Pos
	// OldStates are the older spec's states, in its order (the generated tests load a
	// snapshot of each).
	OldStates                        []string
	States, Events, Counters, Fields map[string]string
	// Defaults are the JSON values of the context fields the older spec did not have.
	Defaults map[string]string
	// Transitions gives, by the older spec's index, the transition here that replays its
	// log entries (-1: none does).
	Transitions []int
	// Moves says, by the older spec's index, what each transition without a counterpart
	// did to the counters here: its entries replay as recorded.
	Moves map[int]*Move
}

// Move is what an older transition did to the counters, by this spec's counters.
type Move struct {
	Increment, Reset []*Counter
	Internal         bool
}

// Lookup returns the transitions for (s, e) in priority order: the first whose guards hold
// is taken. It is empty when e is not accepted in s.
func (m *Machine) Lookup(s *State, e *Event) []*Transition {
	return m.table[s.Index*len(m.Events)+e.Index]
}

// SetTable installs the lookup table; lower calls it once.
func (m *Machine) SetTable(t [][]*Transition) { m.table = t }

// EveryCheckpoints lists the checkpoints taken on every transition.
func (m *Machine) EveryCheckpoints() []*Checkpoint {
	var out []*Checkpoint
	for _, c := range m.Checkpoints {
		if c.EveryTransition {
			out = append(out, c)
		}
	}
	return out
}

// State is a declared state.
type State struct {
	Index     int
	Name      string
	GoName    string
	Doc       string
	Pos       Pos
	Initial   bool
	Terminal  bool
	Remembers bool
	Groups    []*Group
	Requires  []*Field
	Entry     []*Action
	Exit      []*Action
	Timeout   *Timeout // nil when the state has none
	// Delays are the state's delays (Delay) beyond the timeout its one delay would be:
	// set when its delayed transitions wait several delays, or wait beside its timeout.
	Delays []*Delay
	// HistoryFrom lists, for a state that remembers, the states it can be entered from
	// (the candidates of a history target), in state order.
	HistoryFrom []*State
	// Config lists, in a statechart, the configuration's active atomic states in document
	// order (nil in a flat machine).
	Config []*Node
	// Clock is, in a statechart, the active state whose timeout the configuration has (nil:
	// none): the configurations it is active in share its timeout, which counts from when
	// it was entered, not the configuration.
	Clock *Node
}

// SharesClock reports whether the state's timeout belongs to a statechart state that is
// not its only active state (a compound or parallel state, or a state beside others): the
// timeout counts from when that state was entered, which may be before the configuration.
func (s *State) SharesClock() bool {
	return s.Clock != nil && (len(s.Config) > 1 || s.Config[0] != s.Clock)
}

// SharesClocks reports whether some state of m SharesClock.
func (m *Machine) SharesClocks() bool {
	return slices.ContainsFunc(m.States, (*State).SharesClock)
}

// MemoryFields are the generated machine's fields holding what a remembering state
// remembers: the state, and whether one is remembered.
func (s *State) MemoryFields() (state, set string) {
	return "prev" + s.GoName, "prev" + s.GoName + "Set"
}

// InGroup reports whether s belongs to g.
func (s *State) InGroup(g *Group) bool {
	for _, x := range s.Groups {
		if x == g {
			return true
		}
	}
	return false
}

// Group is a named set of states.
type Group struct {
	Index  int
	Name   string
	GoName string
	States []*State
}

// Event is a declared (or target-implied) event.
type Event struct {
	Index    int
	Name     string
	GoName   string
	Doc      string
	Pos      Pos
	Implicit bool // declared by a transition named by its target, or by a delayed one
	// After is, for the event of delayed transitions (after), how long they wait as written
	// ("30s"): the timeout of their source, whose expiry raises it.
	After string
	// Internal says the machine raises the event itself (a statechart's eventless and
	// done events): a program cannot fire it.
	Internal bool
	Payload  []*Field
}

// Label is how diagrams and documents show what fires a transition on the event: its
// name, or "after 30s" for the event of delayed transitions.
func (e *Event) Label() string {
	if e.After != "" {
		return "after " + e.After
	}
	return e.Name
}

// Role is a declared role.
type Role struct {
	Index  int
	Name   string
	GoName string
	Doc    string
	All    bool
}

// Policy is a named run-time switch.
type Policy struct {
	Index   int
	Name    string
	GoName  string
	Doc     string
	Default bool
}

// Kind is the scalar kind of a field type.
type Kind int

const (
	String Kind = iota
	Int
	Float
	Bool
	Duration
	Time
	Enum
)

var kindNames = [...]string{"string", "int", "float", "bool", "duration", "time", "enum"}

// String returns the spec spelling of the kind.
func (k Kind) String() string { return kindNames[k] }

// Numeric reports whether values of the kind can be compared by size.
func (k Kind) Numeric() bool { return k == Int || k == Float || k == Duration }

// Type is a field type: a scalar, a list of scalars or a map from string to scalars.
type Type struct {
	Kind Kind
	List bool
	Map  bool
}

// String returns the spec spelling ("[]string", "map[string]int", "enum").
func (t Type) String() string {
	switch {
	case t.List:
		return "[]" + t.Kind.String()
	case t.Map:
		return "map[string]" + t.Kind.String()
	}
	return t.Kind.String()
}

// Collection reports whether the type is a list or a map.
func (t Type) Collection() bool { return t.List || t.Map }

// Literal is a constant from the spec: a default, an equals value or a bound.
type Literal struct {
	Set  bool
	Str  string  // strings and enum values
	Num  float64 // int, float; durations in nanoseconds
	Bool bool
}

// Field is a typed context or payload field.
type Field struct {
	Index    int
	Name     string
	GoName   string
	Doc      string
	Pos      Pos
	Type     Type
	Required bool
	NonEmpty bool
	MinItems int // -1 when unset
	MaxItems int // -1 when unset
	Min      Literal
	Max      Literal
	// MinExclusive and MaxExclusive: the bound was written as above or below, so the bound
	// itself is out of range.
	MinExclusive bool
	MaxExclusive bool
	Values       []string // enum values
	Default      Literal
	Message      string
}

// Unset reports whether the field is an enum with a value that stands for no value: a
// required scalar enum. Its zero value is then that unset value, distinct from every
// declared value; otherwise an enum's zero value is its first value.
func (f *Field) Unset() bool {
	return f.Type.Kind == Enum && !f.Type.Collection() && f.Required
}

// BelowMin reports whether num breaks the field's lower bound (min or above).
func (f *Field) BelowMin(num float64) bool {
	return f.Min.Set && (num < f.Min.Num || f.MinExclusive && num == f.Min.Num)
}

// AboveMax reports whether num breaks the field's upper bound (max or below).
func (f *Field) AboveMax(num float64) bool {
	return f.Max.Set && (num > f.Max.Num || f.MaxExclusive && num == f.Max.Num)
}

// MinProblem and MaxProblem are the messages of a broken bound, as generated code and the
// interpreter report them.
func (f *Field) MinProblem() string {
	if f.MinExclusive {
		return f.Name + " must be above " + f.Min.Str
	}
	return f.Name + " must be at least " + f.Min.Str
}

// MaxProblem: see MinProblem.
func (f *Field) MaxProblem() string {
	if f.MaxExclusive {
		return f.Name + " must be below " + f.Max.Str
	}
	return f.Name + " must be at most " + f.Max.Str
}

// EnumIndex returns the index of v among the enum values, or -1.
func (f *Field) EnumIndex(v string) int {
	for i, x := range f.Values {
		if x == v {
			return i
		}
	}
	return -1
}

// Counter is an integer counter with an optional limit.
type Counter struct {
	Index          int
	Name           string
	GoName         string
	Doc            string
	Pos            Pos
	PerState       bool
	ResetOnSuccess bool
	// Limit is the count whose increment trips the counter (0: no limit). A limit written
	// as max: N (the counter may reach N) is N+1.
	Limit int
	Max   bool   // the limit was written as max
	Then  *State // where a tripped limit goes; nil: the transition is refused
	// Summary is the string context field a redirecting limit writes its summary into
	// (nil: none).
	Summary *Field
	// Configurable lets the program change the limit at run time.
	Configurable bool
}

// Bound is the limit as the spec writes it: the max for a max counter, else the limit.
func (c *Counter) Bound() int {
	if c.Max {
		return c.Limit - 1
	}
	return c.Limit
}

// CountField is the generated machine's field holding the counter.
func (c *Counter) CountField() string { return "n" + c.GoName }

// LimitField is the generated machine's field holding a configurable counter's limit,
// counted as Limit counts it (the count whose increment trips).
func (c *Counter) LimitField() string { return "limit" + c.GoName }

// LimitMethod is the word of the generated accessors of a configurable limit:
// Max<Counter> and SetMax<Counter> for a max counter, Limit<Counter> and
// SetLimit<Counter> otherwise.
func (c *Counter) LimitMethod() string {
	if c.Max {
		return "Max"
	}
	return "Limit"
}

// BoundKey is the spec key of the limit: "max" or "limit".
func (c *Counter) BoundKey() string {
	if c.Max {
		return "max"
	}
	return "limit"
}

// SummaryText is the summary a tripped limit writes: bound is the limit in force (as the
// spec writes it), from and to the transition it redirected, as it would have gone.
// Generated code builds the same text from the same parts (SummaryParts).
func (c *Counter) SummaryText(bound int, from, to string) string {
	a, b, d := c.SummaryParts()
	return a + strconv.Itoa(bound) + b + from + " -> " + to + d
}

// SummaryParts are the constant parts of the summary: before the bound, between the bound
// and the source state, and after the target.
func (c *Counter) SummaryParts() (beforeBound, afterBound, end string) {
	word := "limit"
	if c.Max {
		word = "maximum"
	}
	then := ""
	if c.Then != nil {
		then = c.Then.Name
	}
	return c.Name + " reached its " + word + " of ", ": ", " went to " + then + " instead"
}

// GuardKind says how a guard is evaluated.
type GuardKind int

const (
	Hook         GuardKind = iota // a method the program implements
	CounterGuard                  // compares a counter
	FieldGuard                    // compares a context field
	Logic                         // an expression over guards and states (Guard.Expr)
)

// Op is a comparison.
type Op int

const (
	AtLeast  Op = iota // >=
	Below              // <
	Equals             // ==
	Contains           // a list field holds the value
)

// String returns the spec key of the comparison.
func (o Op) String() string { return [...]string{"at_least", "below", "equals", "contains"}[o] }

// Symbol returns the comparison as an operator.
func (o Op) Symbol() string { return [...]string{">=", "<", "==", "contains"}[o] }

// Threshold is the number a counter or field is compared with: a constant, or one number
// per value of an enum context field.
type Threshold struct {
	Num    float64
	By     *Field    // nil for a constant
	Values []float64 // indexed like By.Values
	Len    *Field    // the length of this list context field, when set (By is then nil)
}

// Guard is a named condition.
type Guard struct {
	Index     int
	Name      string
	GoName    string
	Doc       string
	Pos       Pos
	Kind      GuardKind
	Counter   *Counter
	Field     *Field
	Op        Op
	Threshold Threshold // for AtLeast and Below
	Equals    Literal   // for Equals and Contains (a value of the list's element type)
	Expr      *Expr     // for Logic
	Inline    bool      // for Logic: written in a transition (named by its text), not declared
}

// Cond is a guard that must hold, or must fail when Negate is set.
type Cond struct {
	Guard  *Guard
	Negate bool
}

// Action is a named side effect.
type Action struct {
	Index  int
	Name   string
	GoName string
	Doc    string
	// Effect says the action runs after the transition is committed, not during it.
	Effect bool
	// MayFail says the action's hook returns an error, which refuses the transition.
	MayFail bool
}

// Checkpoint is a named persistence point.
type Checkpoint struct {
	Index           int
	Name            string
	GoName          string
	Doc             string
	EveryTransition bool
	Save            []string // what it saves, as written
}

// Level is a timeout report level.
type Level struct {
	Name    string
	GoName  string
	Percent int
}

// Delay is one delay of a state's delayed transitions (after) that have several, or that
// wait beside the state's timeout: its own clock, counting from when the state was
// entered, which raises its own event once a stay when it runs out.
type Delay struct {
	After time.Duration
	Text  string // as the first transition waiting it writes it ("5s")
	Event *Event
	Pos   Pos
	// Node is, in a statechart, the state whose delay it is: the delay counts from when
	// that state was entered, whatever else the configuration does (nil in a flat machine).
	Node *Node
}

// Timeout is a state's timeout.
type Timeout struct {
	After        time.Duration
	Levels       []Level // ascending percentage
	Configurable bool
	OnExpiry     *Event // nil: reported only, never a hard stop
	Doc          string
}

// TargetKind says where a transition goes.
type TargetKind int

const (
	Fixed    TargetKind = iota // to State (re-entering when it is the source)
	Internal                   // stays, without exit or entry
	History                    // to the state State was entered from
	Choice                     // the first candidate of Choices whose guards hold
)

// Target is a resolved destination.
type Target struct {
	Kind  TargetKind
	State *State // Fixed: the target; History: the state whose memory is used
}

// Candidate is one option of a dynamic choice.
type Candidate struct {
	Pos    Pos
	Conds  []Cond
	Target Target // Fixed or History
	Doc    string
}

// RoleRule allows a role, optionally only while a policy is on.
type RoleRule struct {
	Role   *Role
	Policy *Policy
}

// Transition is one declared transition with its sources and events expanded.
type Transition struct {
	Index      int
	Pos        Pos
	Doc        string
	From       []*State // expanded sources, in state order
	Events     []*Event
	Named      bool // named by its target (no `on`)
	Conds      []Cond
	Target     Target
	Choices    []*Candidate
	Roles      []RoleRule
	Actions    []*Action
	Increment  []*Counter
	Reset      []*Counter
	Checkpoint *Checkpoint

	// In a statechart, a transition is one microstep of the chart. Taken lists the chart
	// transitions it takes (after conflicts are resolved); Mem are conditions on history
	// memory besides the guards; Record are the history values its exits record; Raise are
	// the done events its entries raise, in order; Changes says the microstep changes the
	// configuration or the history (XState selects eventless transitions again only then);
	// Requires are the context fields the states it enters require, in document order.
	// KeepsClock says the state whose timeout the configuration entered has (its Clock) was
	// active before the microstep and is not entered again: its time runs on.
	Taken      []*ChartTransition
	Mem        []MemCond
	Record     []MemCond
	Raise      []*Event
	Changes    bool
	Requires   []*Field
	KeepsClock bool
	// Enters lists the states of Chart.Clocks the microstep enters (again): their clocks
	// start over.
	Enters []*Node
}

// RequiredBy names the states that require context field f: in a statechart the chart's
// states, by path, in document order.
func (m *Machine) RequiredBy(f *Field) []string {
	var out []string
	if m.Chart != nil {
		for _, n := range m.Chart.Nodes {
			if slices.Contains(n.Requires, f) {
				out = append(out, n.Path)
			}
		}
		return out
	}
	for _, s := range m.States {
		if slices.Contains(s.Requires, f) {
			out = append(out, s.Name)
		}
	}
	return out
}

// Required lists the context fields taking t into state to checks: in a statechart, those
// the states its microstep enters require; in a flat machine, those to requires.
func (t *Transition) Required(to *State) []*Field {
	if len(t.Taken) > 0 {
		return t.Requires
	}
	return to.Requires
}

// Stays reports whether a statechart's microstep exits and enters nothing: every chart
// transition it takes is targetless.
func (t *Transition) Stays() bool {
	for _, x := range t.Taken {
		if x.Target != nil {
			return false
		}
	}
	return len(t.Taken) > 0
}

// Guarded reports whether the transition has conditions.
func (t *Transition) Guarded() bool { return len(t.Conds) > 0 }

// Targets lists the states the transition can lead to from state s, in order: the fixed
// target, each choice candidate, the remembered candidates of history targets, and the
// `then` states of counters it increments.
func (t *Transition) Targets(s *State) []*State {
	var out []*State
	add := func(x *State) {
		for _, y := range out {
			if y == x {
				return
			}
		}
		out = append(out, x)
	}
	addTarget := func(tg Target) {
		switch tg.Kind {
		case Fixed:
			add(tg.State)
		case Internal:
			add(s)
		case History:
			for _, x := range tg.State.HistoryFrom {
				add(x)
			}
		}
	}
	addTarget(t.Target)
	for _, c := range t.Choices {
		addTarget(c.Target)
	}
	for _, c := range t.Increment {
		if c.Then != nil {
			add(c.Then)
		}
	}
	return out
}

// Refusals reports which refusals the machine can return besides an invalid transition, so
// that generated code declares only those: a guard that does not hold, a dynamic
// transition with no candidate, a history target that remembers nothing, a counter limit
// without a state to go to.
func (m *Machine) Refusals() (guard, noChoice, noHistory, limit bool) {
	for _, t := range m.Transitions {
		guard = guard || t.Guarded()
		switch t.Target.Kind {
		case Choice:
			noChoice = true
			for _, c := range t.Choices {
				noHistory = noHistory || c.Target.Kind == History
			}
		case History:
			noHistory = true
		}
		for _, c := range t.Increment {
			limit = limit || (c.Limit > 0 && c.Then == nil)
		}
	}
	return
}

// ConfigPaths lists the paths of a statechart configuration's active atomic states,
// sorted (as sim and the preview show them).
func (s *State) ConfigPaths() []string {
	out := make([]string, len(s.Config))
	for i, n := range s.Config {
		out[i] = n.Path
	}
	slices.Sort(out)
	return out
}

// ActionNames lists the names of actions, in order (nil for none).
func ActionNames(as []*Action) []string {
	var out []string
	for _, a := range as {
		out = append(out, a.Name)
	}
	return out
}

// EventNames lists the names of events, in order (empty, not nil, for none).
func EventNames(es []*Event) []string {
	out := []string{}
	for _, e := range es {
		out = append(out, e.Name)
	}
	return out
}
