package fsmrt

import (
	"context"
	"slices"
	"strings"
	"sync"
	"time"
)

// Def describes one generated machine to the engine (Machine): its states, its transitions
// and how events dispatch to them, as data. A generated package declares one as a package
// variable and passes it to Init; it is read-only once Init has been called.
//
// Indexes: states, events, roles, counters, guards, actions, checkpoints and context
// fields are numbered in spec order from 0, as the generated constants are.
type Def[S StateType, E, R EnumType] struct {
	// Spec names the machine and its package in errors.
	Spec *Spec
	// States describes each state, in spec order.
	States []StateDef
	// NumEvents is the number of events.
	NumEvents int
	// Initial is the initial state.
	Initial S
	// Moves is the dispatch table, a row of NumEvents entries per state (flat, row-major),
	// of n = len(States). Each entry is one of:
	//   - MoveRefused(n) where the state has no transition on the event;
	//   - a state (< n), the target (the state itself for an internal transition), where
	//     Fire may move without asking the engine: the pair's only candidate is Plain,
	//     without conditions, roles, actions, counters, checkpoint or required fields, the
	//     state left has no exit actions and the state entered no entry actions and does
	//     not remember, the event carries no payload, and the machine keeps neither time
	//     nor history, has no checkpoint after every transition, no counter reset on
	//     success and no context field whose constraints every transition checks
	//     (Invariants). Fire then only sets the state and the sequence number; a machine with
	//     a store or a logger decides such pairs from Pairs all the same;
	//   - MoveStep(n) everywhere else the state accepts the event.
	Moves []uint32
	// Pairs lists every (state, event) pair whose Moves entry is not MoveRefused, with its
	// candidate transitions in the order they are tried: the plain moves too, since
	// FireWith, CanWith, and Fire on a machine with a store or a logger decide every pair
	// from here (the engine refuses a pair missing from Pairs with an
	// InvalidTransitionError, whatever Moves says).
	//
	// Left nil, Init builds it from Transitions: a pair's candidates are the transitions
	// from its state on its event, in spec order, each with its Conds, up to the first
	// without conditions (what follows it could never be taken).
	Pairs []Pair
	// Transitions are the spec's transitions, in order: a log entry's Transition indexes it.
	Transitions []Transition
	// Counters are the spec's counters, in order.
	Counters []Counter
	// AlwaysRoles are the roles that may fire every transition that names roles.
	AlwaysRoles []R
	// NumRoles is the number of role values, the zero role included (0 without roles): a
	// refusal by role of a role below it is built once, at Init.
	NumRoles int
	// EveryCheckpoint is the checkpoint taken after every transition (-1 when none).
	EveryCheckpoint int
	// Idempotent says inputs may carry idempotency keys.
	Idempotent bool
	// History says the machine keeps a window of its transition history.
	History bool
	// Timing says the machine keeps time: creation, time by state, timeouts.
	Timing bool
	// Roles says transitions name roles, so that log entries record who fired them.
	Roles bool
	// Payloads says which events carry a payload (nil when none does); such an event's
	// Moves entries are MoveStep, so that Fire validates it. Payloads are kept in the extra
	// data X, which the generated package reaches through Payloads.
	Payloads []bool
	// Policies says the extra data holds policies (PolicySets), recorded in every
	// log entry.
	Policies bool
	// LevelNames are the names of the timeout levels, by value (the generated
	// TimeoutLevel) less one: durable timers record a level reached under its name.
	LevelNames []string
	// Effects names, by action, the actions the spec marks effect: the effect's spec name,
	// "" for an action run during the transition; nil when the spec has no effect. Effects
	// run after the commit, through the Effector (see EffectCall).
	Effects []string
	// Resumable says Resume may take the machine out of a terminal state, back to the state
	// its last transition left: the spec takes a checkpoint on every transition and has
	// terminal states.
	Resumable bool
	// Chart describes a statechart (nil for a flat machine): its States are its
	// configurations and its Transitions its microsteps.
	Chart *Chart
	// MayFail names, by action, the actions the spec marks may_fail ("" for the others);
	// nil when none is. Their errors refuse the transition, and the machine keeps what a
	// transition changes to put it back (as a machine with a store does).
	MayFail []string
	// Migrations are the older specs whose stored instances the machine loads, migrated
	// (Replay, Snapshot's UnmarshalJSON), and commits under this spec.
	Migrations []Migration
	// Logic are the spec's guard expressions as programs (see LogicAnd): a condition on
	// guard g >= LogicBase is on Logic[g-LogicBase], which the engine evaluates, asking the
	// guards it names in order; nil when the spec has none.
	Logic     [][]int32
	LogicBase int32

	// Built by Init.
	pairIndex      []int32 // by state*NumEvents+event: index+1 into Pairs, 0 for none
	invalid        []InvalidTransitionError[S, E]
	guards         []GuardError[S, E]
	refusals       []refusals[S, E, R]
	plainPermitted [][]E // per state: the events accepted whatever the input, nil if Step decides some
	resetOnSuccess []int32
	counts         bool  // the machine has counters
	counterBase    []int // by counter: its first slot in Machine.counters
	counterSlots   int
	storeName      string  // Spec.Name()
	byName         []int32 // the states in the order of their names, as JSON sorts map keys
	effectIndex    map[string]int32
	byMem          []memPick // by pair, for a statechart
	delaySlot      []int32   // by event: the clock (slot+1) of the delay raising it (buildClocks)
	delayBit       []uint8   // by event: the delay's bit among its state's
	remembers      bool
	entries        bool
	exits          bool
	once           sync.Once
}

// StateDef describes one state.
type StateDef struct {
	Terminal bool
	// Entry and Exit are the actions run on entering and leaving the state.
	Entry, Exit []int32
	// Remembers says the state remembers the state it was entered from (for history
	// targets); From lists the states it can be entered from.
	Remembers bool
	From      []int32
	// Timeout is the spec's timeout of the state (0: none); Configurable says it may be
	// changed at run time; Levels are the percentages of it at which the timeout levels
	// LevelValues (the generated TimeoutLevel values) are reached, in increasing order.
	Timeout      time.Duration
	Configurable bool
	Levels       []int
	LevelValues  []int
	// Expires says the timeout fires event Expiry when it runs out (on_expiry).
	Expires bool
	Expiry  int32
	// Clock identifies, in a statechart, the state whose timeout the configuration has: its
	// place in the spec's document order, from 1 (0: none). The configurations with the
	// same Clock share its timeout, which counts from when that state was entered
	// (Transition.KeepsClock).
	Clock int32
	// Delays are the state's delays (its delayed transitions' clocks beside its timeout), in
	// the order the spec first writes them.
	Delays []DelayDef
}

// Pair is a (state, event) pair whose transitions the engine decides.
type Pair struct {
	State, Event int32
	// Cands are the transitions in the order they are tried: the first whose conditions
	// hold is taken; when none holds the event is refused with a GuardError.
	Cands []Cand
}

// Cand is a candidate transition and the conditions it needs.
type Cand struct {
	T int32
	// Conds are guards that must all hold: g for guard g, ^g (-g-1) for its negation.
	Conds []int32
	// Mem are the values a statechart's history memory must hold (Transition.Mem).
	Mem []Memory
}

// TargetKind says how a transition's target is found.
type TargetKind uint8

// Target kinds.
const (
	// TargetFixed: Target is the state entered.
	TargetFixed TargetKind = iota
	// TargetInternal: the state does not change; no exit or entry actions run.
	TargetInternal
	// TargetHistory: the state Target remembers is entered (NoHistoryError when none is).
	TargetHistory
	// TargetChoice: the first of Choices whose conditions hold.
	TargetChoice
)

// Transition is one declared transition.
type Transition struct {
	// From, On and To are the states it leaves, its events and every state it can enter
	// (replaying checks log entries against them).
	From, On, To []int32
	// Conds are the guards the transition needs (as Cand.Conds), for the Pairs Init builds.
	Conds   []int32
	Kind    TargetKind
	Target  int32
	Choices []ChoiceDef
	// Roles may fire it, each maybe under a policy (an empty list: anyone).
	Roles []RoleRule
	// Actions run, in order, after the exit actions and before the state changes.
	Actions []int32
	// Inc and Reset are the counters it increments and resets.
	Inc, Reset []int32
	// Checkpoint is the checkpoint it takes (-1: none).
	Checkpoint int32
	// Require says a state it may enter requires context fields (in a statechart, a state
	// its microstep enters).
	Require bool
	// Plain says it does nothing but move (or stay, internal) and count without limits.
	Plain bool
	// In a statechart, a transition is one microstep (Target is the configuration it
	// enters): Mem are the values the history memory must hold for it to be taken, Record
	// the values its exits record, Raise the done events its entries raise, in order, and
	// Changes says it changes the configuration or the history (eventless transitions are
	// selected again only then).
	Mem, Record []Memory
	Raise       []int32
	Changes     bool
	// Settled says the tables decide what follows the microstep: Then are the eventless
	// transitions and done events the macrostep takes after it (none: nothing follows),
	// each always taken, which the engine takes without selecting them.
	Settled bool
	Then    []int32
	// KeepsClock says the microstep enters a configuration whose timeout's state (its
	// Clock) was active before it and is not entered again: the timeout counts on.
	KeepsClock bool
	// Enters are the clocks (Chart.Clocks slots) of the states the microstep enters: they
	// start over.
	Enters []int32
}

// ChoiceDef is one branch of a choice: entered when Conds hold (no Conds: otherwise).
type ChoiceDef struct {
	Conds  []int32
	Kind   TargetKind // TargetFixed or TargetHistory
	Target int32
}

// RoleRule lets Role fire a transition, when Policy (>= 0) holds.
type RoleRule struct {
	Role   int32
	Policy int32
}

// Counter describes a counter.
type Counter struct {
	// Name is the counter's name in the spec (snapshots key it by name).
	Name string
	// PerState counts separately in each state the transition leaves.
	PerState bool
	// Limit is the count whose increment trips the counter (0: no limit). Max says the
	// spec writes it as a max (Limit-1, the count the counter may reach).
	Limit int
	Max   bool
	// Configurable says the program may change the limit at run time.
	Configurable bool
	// Then is where a tripped limit redirects the transition (-1: it refuses instead with
	// a LimitError); Summary is the context field the redirect writes its summary into
	// (-1: none).
	Then, Summary int32
	// ResetOnSuccess resets the counter on every transition that changes the state and does
	// not increment it.
	ResetOnSuccess bool
}

// The engine calls back into the generated package for what is code, not data: guards,
// actions, required fields, policies and checkpoints. A generated package implements the
// interfaces its spec needs on an unexported type sharing its machine's memory, and passes
// it to Init.

// Guards evaluates guard g.
type Guards[S StateType, E, R EnumType] interface {
	Guard(ctx context.Context, g int, st Step[S, E, R]) bool
}

// Actions runs action a (a transition's, or a state's entry or exit action). An error,
// from an action the spec marks may_fail, refuses the transition (ActionError).
type Actions[S StateType, E, R EnumType] interface {
	Act(ctx context.Context, a int, st Step[S, E, R]) error
}

// Requirer returns what c lacks of the fields state s requires (nil when nothing), and
// writes text into context field f of c (a tripped limit's summary).
type Requirer[S StateType, C any] interface {
	Require(s S, c *C) []FieldError
	SetField(c *C, f int, text string)
}

// ChartRequirer returns what c lacks of the fields the states microstep t of a statechart
// (a transition's index) enters require (nil when nothing).
type ChartRequirer[C any] interface {
	RequireOn(t int32, c *C) []FieldError
}

// Policies reports whether policy p holds.
type Policies interface {
	Policy(p int) bool
}

// Payload is what the engine needs of an event's payload: a pointer to it in the extra
// data, which encodes to JSON and validates its constraints.
type Payload interface {
	Validate() []FieldError
}

// Payloads reaches into X, a machine's extra data, for the payload of event e: a pointer
// to its place in x, zeroed first when clear is set (the engine asks only for events that
// carry one).
type Payloads[X any] interface {
	Payload(x *X, e int, clear bool) Payload
}

// PolicySets reaches into X, a machine's extra data, for its policies: a pointer to their
// place in x, zeroed first when clear is set.
type PolicySets[X any] interface {
	PolicySet(x *X, clear bool) any
}

// Checkpointer runs the checkpoint hook cp; an error comes back from Fire as it is.
type Checkpointer[S StateType, E, R EnumType] interface {
	Checkpoint(ctx context.Context, cp int, st Step[S, E, R]) error
}

// Step describes the transition being decided or run; hooks receive it by value.
type Step[S StateType, E, R EnumType] struct {
	// From is the state the event was fired in.
	From S
	// To is the state being entered; for guards it is not decided yet and equals From.
	To S
	// Event is the event being fired.
	Event E
	// Role is who fires it (for machines whose transitions name roles).
	Role R
	// At is when the event happened (for machines that keep time; zero for guards).
	At time.Time
	// Starting says a statechart is starting (Start): no event was fired, Event is zero.
	Starting bool
}

// Input is what the caller says about one firing.
type Input[R EnumType] struct {
	// Role is who fires the event. Transitions that name roles refuse the zero role; a
	// machine whose transitions name none ignores it.
	Role R
	// EventID identifies the triggering event in the history and the event log.
	EventID string
	// Actor and Reason say who fired the event and why; they are recorded in the history and
	// the event log.
	Actor  string
	Reason string
	// At is when the event happened; the zero time means now (the machine's clock). It is
	// recorded in the history and the event log.
	At time.Time
	// Key is the idempotency key of a machine whose spec declares idempotency ("" for
	// none): firing again with a key already used returns the first result without firing,
	// and refuses another event with an IdempotencyConflictError.
	Key string

	fired string // the deadline a scheduler's firing handles (FireDue)
}

// NoRole is the role type of a machine whose spec declares no roles.
type NoRole uint8

// String returns "".
func (NoRole) String() string { return "" }

// None is the extra snapshot data of a machine that keeps none (payloads, policies).
type None struct{}

// MoveRefused and MoveStep are the values of Def.Moves that are not states, for a machine
// of n states.
func MoveRefused(n int) uint32 { return uint32(n) }

// MoveStep: see MoveRefused.
func MoveStep(n int) uint32 { return uint32(n) + 1 }

// refusals are the errors Fire returns for the refusals of one pair, built once by Init
// so that refusing allocates nothing.
type refusals[S StateType, E, R EnumType] struct {
	noChoice NoChoiceError[S, E]
	// permission by role, for a pair whose candidates name roles (nil when none do).
	permission []PermissionError[S, E, R]
	// noHistory by state remembering, for the states the candidates recall (nil when none).
	noHistory []NoHistoryError[S, E]
	// limit by counter, at the spec's limit, for the counters a candidate may trip without
	// a redirect (nil when none).
	limit []LimitError[S, E]
}

// init builds what the engine derives from d, once.
func (d *Def[S, E, R]) init() { d.once.Do(d.build) }

func (d *Def[S, E, R]) build() {
	ns, ne := len(d.States), d.NumEvents
	d.storeName = d.Spec.Name()
	d.byName = make([]int32, ns)
	for i := range d.byName {
		d.byName[i] = int32(i)
	}
	slices.SortFunc(d.byName, func(a, b int32) int { return strings.Compare(S(a).String(), S(b).String()) })
	for a, name := range d.Effects {
		if name != "" {
			if d.effectIndex == nil {
				d.effectIndex = map[string]int32{}
			}
			d.effectIndex[name] = int32(a)
		}
	}
	if d.Pairs == nil {
		d.Pairs = d.buildPairs()
	}
	d.pairIndex = make([]int32, ns*ne)
	for i, p := range d.Pairs {
		d.pairIndex[int(p.State)*ne+int(p.Event)] = int32(i + 1)
	}
	d.invalid = make([]InvalidTransitionError[S, E], ns*ne)
	d.guards = make([]GuardError[S, E], ns*ne)
	d.plainPermitted = make([][]E, ns)
	d.Spec.Accepts = make([][]int, ns)
	for s := range ns {
		plain := true
		row := []E{}
		for e := range ne {
			d.invalid[s*ne+e] = InvalidTransition(d.Spec, S(s), E(e))
			d.guards[s*ne+e] = Guard(d.Spec, S(s), E(e))
			if !d.external(e) {
				continue // raised by the machine itself
			}
			switch d.Moves[s*ne+e] {
			case MoveRefused(ns):
				continue
			case MoveStep(ns):
				plain = false
			}
			row = append(row, E(e))
			d.Spec.Accepts[s] = append(d.Spec.Accepts[s], e)
		}
		if plain {
			d.plainPermitted[s] = row
		}
		st := &d.States[s]
		d.remembers = d.remembers || st.Remembers
		d.entries = d.entries || len(st.Entry) > 0
		d.exits = d.exits || len(st.Exit) > 0
	}
	d.buildRefusals()
	if d.Chart != nil {
		d.buildByMem()
		d.buildClocks()
	}
	d.counts = len(d.Counters) > 0
	for i, c := range d.Counters {
		d.counterBase = append(d.counterBase, d.counterSlots)
		if c.PerState {
			d.counterSlots += ns
		} else {
			d.counterSlots++
		}
		if c.ResetOnSuccess {
			d.resetOnSuccess = append(d.resetOnSuccess, int32(i))
		}
	}
}

// buildPairs lists the candidates of every accepted pair from Transitions, pairs in state
// then event order.
func (d *Def[S, E, R]) buildPairs() []Pair {
	ne := d.NumEvents
	cands := make([][]Cand, len(d.States)*ne)
	closed := make([]bool, len(cands)) // an unconditional candidate ends the pair's list
	for ti, t := range d.Transitions {
		for _, s := range t.From {
			for _, e := range t.On {
				i := int(s)*ne + int(e)
				if closed[i] {
					continue
				}
				cands[i] = append(cands[i], Cand{T: int32(ti), Conds: t.Conds, Mem: t.Mem})
				closed[i] = len(t.Conds) == 0 && len(t.Mem) == 0
			}
		}
	}
	pairs := []Pair{}
	for i, cs := range cands {
		if cs != nil {
			pairs = append(pairs, Pair{State: int32(i / ne), Event: int32(i % ne), Cands: cs})
		}
	}
	return pairs
}

// buildRefusals builds the refusals of every pair.
func (d *Def[S, E, R]) buildRefusals() {
	d.refusals = make([]refusals[S, E, R], len(d.Pairs))
	for i, p := range d.Pairs {
		s, e := S(p.State), E(p.Event)
		r := &d.refusals[i]
		r.noChoice = NoChoiceError[S, E]{State: s, Event: e, spec: d.Spec}
		recalls := func(h int32) {
			if r.noHistory == nil {
				r.noHistory = make([]NoHistoryError[S, E], len(d.States))
			}
			r.noHistory[h] = NoHistoryError[S, E]{State: s, Event: e, Remembering: S(h), spec: d.Spec}
		}
		for _, c := range p.Cands {
			t := &d.Transitions[c.T]
			if len(t.Roles) > 0 && r.permission == nil {
				r.permission = make([]PermissionError[S, E, R], d.NumRoles)
				for role := range r.permission {
					r.permission[role] = PermissionError[S, E, R]{State: s, Event: e, Role: R(role), spec: d.Spec}
				}
			}
			if t.Kind == TargetHistory {
				recalls(t.Target)
			}
			for _, ch := range t.Choices {
				if ch.Kind == TargetHistory {
					recalls(ch.Target)
				}
			}
			for _, ci := range t.Inc {
				cd := &d.Counters[ci]
				if cd.Limit == 0 || cd.Then >= 0 {
					continue
				}
				if r.limit == nil {
					r.limit = make([]LimitError[S, E], len(d.Counters))
				}
				r.limit[ci] = LimitError[S, E]{State: s, Event: e, Counter: cd.Name, Limit: cd.Limit, Max: cd.Max, spec: d.Spec}
			}
		}
	}
}

// sameClock reports whether states a and b count one timeout: they are one state, or
// configurations of a statechart that share their Clock.
func (d *Def[S, E, R]) sameClock(a, b S) bool {
	return a == b || int(a) < len(d.States) && int(b) < len(d.States) && d.States[a].Clock != 0 && d.States[a].Clock == d.States[b].Clock
}

// slot returns the index in Machine.counters of counter c for a transition leaving s.
func (d *Def[S, E, R]) slot(c int32, s S) int {
	i := d.counterBase[c]
	if d.Counters[c].PerState {
		i += int(s)
	}
	return i
}
