// Package spec reads fsmgen specs: YAML in, a positioned syntax tree out. It validates the
// document against the JSON Schema and reports every problem with its file:line:col; it
// resolves nothing (that is internal/lower's job).
package spec

import "github.com/fsmgen/fsmgen/internal/diag"

// Pos is a position in a spec file.
type Pos = diag.Pos

// Str is a string value with the position it was written at. Set is false when the key was
// absent. Bad is true when the value is malformed (an error about it has been reported):
// its Value means nothing, and lowering must not report anything about it again.
type Str struct {
	Value string
	Pos   Pos
	Set   bool
	Bad   bool
}

// Bool is a positioned boolean. A Bad boolean reads as false.
type Bool struct {
	Value bool
	Pos   Pos
	Set   bool
	Bad   bool
}

// Int is a positioned integer. A Bad integer reads as 0.
type Int struct {
	Value int64
	Pos   Pos
	Set   bool
	Bad   bool
}

// Scalar is a positioned scalar of any YAML type (string, number or boolean), kept with
// its text and kind so that lowering can check it against a field type.
type Scalar struct {
	Kind ScalarKind
	Text string // the value as written (for strings, the string)
	Num  float64
	Bool bool
	Pos  Pos
	Set  bool
	Bad  bool
}

// ScalarKind is the YAML type of a Scalar.
type ScalarKind int

const (
	ScalarString ScalarKind = iota
	ScalarNumber
	ScalarBool
)

// File is one spec.
//
// A File read from a spec with errors (LoadPartial) is partial: the parts with errors are
// marked, so that lowering can check the rest without reporting consequences of the errors
// already reported. Broken names the top-level keys whose value is unusable as a whole: it
// has the wrong shape, is missing although required, or an unknown top-level key looks
// like a misspelling of it. A declaration with Broken set had an error inside it (or was
// declared twice): what it states is as written, but what it does not state is unknown
// (a misspelt "terminal" is absent, not false).
type File struct {
	Path          string
	Broken        map[string]bool
	Version       Int
	Machine       Str
	Package       Str
	Doc           Str
	RecordHistory Bool
	Idempotent    Bool
	TimeoutLevels []*Level
	LevelsPos     Pos
	Roles         []*Role
	Policies      []*Policy
	Context       []*Field
	Counters      []*Counter
	Guards        []*Guard
	Actions       []*Action
	Checkpoints   []*Checkpoint
	States        []*State
	Events        []*Event
	Transitions   []*Transition
	Migrations    []*Migration
}

// Migration says how instances stored under an older version of the spec become
// instances of this one.
type Migration struct {
	// Pos is where the migration is written; From names the older spec's file, relative
	// to this one.
	Pos  Pos
	From Str
	// States, Events, Counters and Context rename the older spec's names: Old is the
	// older name, New the name here ("" in Context: the field is dropped).
	States, Events, Counters, Context []*Rename
	// Defaults give the context fields the older spec did not have a value for the
	// instances it stored.
	Defaults []*Default
}

// Rename maps a name of an older spec to a name of this one.
type Rename struct {
	Old, New Str
}

// Default is a value for a context field.
type Default struct {
	Field Str
	Value Scalar
}

// Level is a timeout report level: a name and a percentage.
type Level struct {
	Name    Str
	Percent Int
}

// Role is a declared role.
type Role struct {
	Name   Str
	Broken bool
	Doc    Str
	All    Bool
}

// Policy is a declared run-time switch.
type Policy struct {
	Name    Str
	Broken  bool
	Doc     Str
	Default Bool
}

// Field is a typed context or payload field.
type Field struct {
	Name     Str
	Broken   bool
	Type     Str
	Doc      Str
	Required Bool
	NonEmpty Bool
	MinItems Int
	MaxItems Int
	Min      Scalar
	Max      Scalar
	Above    Scalar
	Below    Scalar
	Values   []Str
	Default  Scalar
	Message  Str
}

// Counter is a declared counter.
type Counter struct {
	Name           Str
	Broken         bool
	Doc            Str
	PerState       Bool
	ResetOnSuccess Bool
	Limit          Int
	Max            Int
	Then           Str
	Summary        Str
	Configurable   Bool
}

// Threshold is a number, or a number chosen by an enum context field.
type Threshold struct {
	Pos    Pos
	Set    bool
	Num    Scalar
	By     Str
	Values []ThresholdValue
	Len    Str // the length of this list context field
}

// ThresholdValue is one entry of a Threshold's values map.
type ThresholdValue struct {
	Name  Str
	Value Scalar
}

// Guard is a declared guard.
type Guard struct {
	Name     Str
	Broken   bool
	Doc      Str
	Counter  Str
	Field    Str
	AtLeast  Threshold
	Below    Threshold
	Equals   Scalar
	Contains Scalar
	// Expr makes the guard an expression over other guards (and, or, not, in).
	Expr *GuardExpr
}

// Action is a declared action.
type Action struct {
	Name   Str
	Broken bool
	Doc    Str
	// Effect says the action runs after the transition is committed (from the outbox).
	Effect Bool
	// MayFail says the action's hook returns an error, which refuses the transition.
	MayFail Bool
}

// Checkpoint is a declared persistence point.
type Checkpoint struct {
	Name            Str
	Broken          bool
	Doc             Str
	EveryTransition Bool
	Save            []Str
}

// Timeout is a state's timeout.
type Timeout struct {
	Pos          Pos
	After        Str
	Levels       []*Level
	LevelsPos    Pos
	Configurable Bool
	OnExpiry     Str
	Doc          Str
}

// State is a declared state.
type State struct {
	Name      Str
	Broken    bool
	Doc       Str
	Initial   Bool
	Terminal  Bool
	Groups    []Str
	Remembers Bool
	Requires  []Str
	Entry     []Str
	Exit      []Str
	Timeout   *Timeout
	// A statechart's states nest: Children are the states declared under `states`
	// (StatesPos is where), regions when Parallel is set. History makes the state a history
	// pseudo-state ("shallow" or "deep") whose Default is where it leads before anything
	// is recorded.
	Children  []*State
	StatesPos Pos
	Parallel  Bool
	History   Str
	Default   Str
}

// Event is a declared event.
type Event struct {
	Name    Str
	Broken  bool
	Doc     Str
	Payload []*Field
}

// From is a transition's source.
type From struct {
	Pos    Pos
	Set    bool  // from was written (it is required: the schema reports it missing)
	Bad    bool  // from has errors: its states are not known
	States []Str // one or several states
	Group  Str   // {group: G}
	Any    bool  // {any: true}
	Except []Str
}

// Target is a transition's destination: a state, or the history of a remembering state,
// or (a statechart) several states, one in each region of a parallel state.
type Target struct {
	Pos     Pos
	Set     bool
	Bad     bool // the target has errors: where it leads is not known
	State   Str  // the target, or the first of several
	More    []Str
	History Str
}

// RoleRule is a role allowed to fire a transition, optionally only under a policy.
type RoleRule struct {
	Pos    Pos
	Role   Str
	Policy Str
}

// Choice is a candidate of a dynamic transition.
type Choice struct {
	Pos    Pos
	If     []Str
	Unless []Str
	To     Target
	Doc    Str
	// IfExpr and UnlessExpr replace If and Unless when they hold an expression.
	IfExpr, UnlessExpr *GuardExpr
}

// Transition is one entry of the transitions list.
type Transition struct {
	Pos        Pos
	Broken     bool
	From       From
	On         []Str
	OnSet      bool
	OnPos      Pos  // the value of on
	OnBad      bool // on has errors: its events are not known
	To         Target
	Internal   Bool
	Choose     []*Choice
	ChoosePos  Pos
	ChooseBad  bool // choose was written, but not as a list
	If         []Str
	Unless     []Str
	By         []RoleRule
	Do         []Str
	Increment  []Str
	Reset      []Str
	Checkpoint Str
	Doc        Str
	// Statecharts: an eventless transition (Always), one taken when its source is done
	// (Done), and whether a target within the source exits and re-enters it (Reenter).
	Always  Bool
	Done    Bool
	Reenter Bool
	// Raise lists the events the transition raises for the machine itself (statecharts):
	// processed before the next event from outside, as XState's raise.
	Raise []Str
	// After makes the transition a delayed one: taken when its source has been active for
	// that long (sugar over the source's timeout).
	After Str
	// IfExpr and UnlessExpr replace If and Unless when they hold an expression ({and: ...},
	// {or: ...}, {not: ...}, {in: state}): the list as a whole is their and.
	IfExpr, UnlessExpr *GuardExpr
}
