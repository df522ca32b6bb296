package fsmrt

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// Sentinel errors for errors.Is. Every refusal matches ErrRefused, and each typed refusal
// also matches its own sentinel. Generated packages re-export the ones their machine can
// return (review.ErrGuard is ErrGuard).
var (
	ErrRefused             = errors.New("fsm: event refused")
	ErrInvalidTransition   = errors.New("fsm: invalid transition")
	ErrGuard               = errors.New("fsm: guard does not hold")
	ErrPermission          = errors.New("fsm: permission denied")
	ErrNoChoice            = errors.New("fsm: no choice holds")
	ErrNoHistory           = errors.New("fsm: nothing remembered")
	ErrLimit               = errors.New("fsm: limit reached")
	ErrValidation          = errors.New("fsm: validation failed")
	ErrIdempotencyConflict = errors.New("fsm: idempotency key reused for another transition")
	ErrActionFailed        = errors.New("fsm: action failed")
	// ErrNotRegistered says no machine with that ID is in a Registry.
	ErrNotRegistered = errors.New("fsm: not registered")
)

// StateType is what the runtime needs of a generated State type.
type StateType interface {
	~uint8 | ~uint16 | ~uint32
	String() string
	IsTerminal() bool
}

// EnumType is what the runtime needs of a generated Event or Role type.
type EnumType interface {
	~uint8 | ~uint16 | ~uint32
	String() string
}

// Spec describes a generated machine to the runtime: what its errors say and what a
// refused event could have been instead. A generated package declares one, and passes
// it to the constructors below.
type Spec struct {
	// Package prefixes error messages, as the generated package's name.
	Package string
	// Machine is the machine's name in the spec ("Task").
	Machine string
	// Accepts lists, for each state, the events it has a transition on, whatever the
	// guards, in declaration order.
	Accepts [][]int
	// Fingerprint identifies the spec's meaning (fsmgen's ir.Fingerprint): every snapshot,
	// log entry and stored instance carries it.
	Fingerprint string
}

// Name is the machine's name in a store: its package and machine ("review.Task").
func (sp *Spec) Name() string { return sp.Package + "." + sp.Machine }

// prefix is what every message of the machine starts with.
func (sp *Spec) prefix() string {
	if sp == nil || sp.Package == "" {
		return "fsm: "
	}
	return sp.Package + ": "
}

// FieldError is one missing or invalid field of the context or of a payload.
type FieldError struct {
	Field   string `json:"field"`
	Message string `json:"message"`
}

// InvalidTransitionError says the event is not accepted in the state at all (every event
// is refused in a terminal state). Permitted lists what is.
type InvalidTransitionError[S StateType, E EnumType] struct {
	State S
	Event E
	spec  *Spec
}

// InvalidTransition returns the refusal of e in s.
func InvalidTransition[S StateType, E EnumType](sp *Spec, s S, e E) InvalidTransitionError[S, E] {
	return InvalidTransitionError[S, E]{State: s, Event: e, spec: sp}
}

// Error describes the refusal.
func (e *InvalidTransitionError[S, E]) Error() string {
	if e.State.IsTerminal() {
		return fmt.Sprintf("%s%s is terminal: %s is not accepted", e.spec.prefix(), e.State, e.Event)
	}
	return fmt.Sprintf("%sno transition from %s on %s", e.spec.prefix(), e.State, e.Event)
}

// Is matches ErrInvalidTransition and ErrRefused.
func (e *InvalidTransitionError[S, E]) Is(target error) bool {
	return target == ErrInvalidTransition || target == ErrRefused
}

// Reason names the kind of refusal as `fsmgen sim` does: "invalid_transition".
func (e *InvalidTransitionError[S, E]) Reason() string { return "invalid_transition" }

// Permitted lists the events the state accepts at all (guards, roles and fields aside).
func (e *InvalidTransitionError[S, E]) Permitted() []E {
	var out []E
	if e.spec != nil && int(e.State) < len(e.spec.Accepts) {
		for _, x := range e.spec.Accepts[e.State] {
			out = append(out, E(x))
		}
	}
	return out
}

// GuardError says transitions exist for the state and event, but none of their guards
// hold.
type GuardError[S StateType, E EnumType] struct {
	State S
	Event E
	spec  *Spec
}

// Guard returns the refusal of e in s by its guards.
func Guard[S StateType, E EnumType](sp *Spec, s S, e E) GuardError[S, E] {
	return GuardError[S, E]{State: s, Event: e, spec: sp}
}

// Error describes the refusal.
func (e *GuardError[S, E]) Error() string {
	return fmt.Sprintf("%s%s on %s: no transition's guards hold", e.spec.prefix(), e.State, e.Event)
}

// Is matches ErrGuard and ErrRefused.
func (e *GuardError[S, E]) Is(target error) bool { return target == ErrGuard || target == ErrRefused }

// Reason names the kind of refusal as `fsmgen sim` does: "guard".
func (e *GuardError[S, E]) Reason() string { return "guard" }

// NoChoiceError says a dynamic transition found no candidate whose guards hold.
type NoChoiceError[S StateType, E EnumType] struct {
	State S
	Event E
	spec  *Spec
}

// NoChoice returns the refusal of e in s by a dynamic transition with no candidate.
func NoChoice[S StateType, E EnumType](sp *Spec, s S, e E) *NoChoiceError[S, E] {
	return &NoChoiceError[S, E]{State: s, Event: e, spec: sp}
}

// Error describes the refusal.
func (e *NoChoiceError[S, E]) Error() string {
	return fmt.Sprintf("%s%s on %s: no choice holds", e.spec.prefix(), e.State, e.Event)
}

// Is matches ErrNoChoice and ErrRefused.
func (e *NoChoiceError[S, E]) Is(target error) bool {
	return target == ErrNoChoice || target == ErrRefused
}

// Reason names the kind of refusal as `fsmgen sim` does: "no_choice".
func (e *NoChoiceError[S, E]) Reason() string { return "no_choice" }

// NoHistoryError says a history transition found no remembered state to return to.
type NoHistoryError[S StateType, E EnumType] struct {
	State       S
	Event       E
	Remembering S
	spec        *Spec
}

// NoHistory returns the refusal of e in s because remembering remembers nothing.
func NoHistory[S StateType, E EnumType](sp *Spec, s S, e E, remembering S) *NoHistoryError[S, E] {
	return &NoHistoryError[S, E]{State: s, Event: e, Remembering: remembering, spec: sp}
}

// Error describes the refusal.
func (e *NoHistoryError[S, E]) Error() string {
	return fmt.Sprintf("%s%s on %s: %s remembers no state to return to", e.spec.prefix(), e.State, e.Event, e.Remembering)
}

// Is matches ErrNoHistory and ErrRefused.
func (e *NoHistoryError[S, E]) Is(target error) bool {
	return target == ErrNoHistory || target == ErrRefused
}

// Reason names the kind of refusal as `fsmgen sim` does: "no_history".
func (e *NoHistoryError[S, E]) Reason() string { return "no_history" }

// LimitError says the transition would trip a counter's limit that has no `then` state.
// Limit is the count the refused increment would have reached; Max says the spec writes
// the limit as `max: N` (N is Limit-1, the count the counter may reach), and the message
// says so.
type LimitError[S StateType, E EnumType] struct {
	State   S
	Event   E
	Counter string
	Limit   int
	Max     bool
	spec    *Spec
}

// Limit returns the refusal of e in s because counter would pass its limit.
func Limit[S StateType, E EnumType](sp *Spec, s S, e E, counter string, limit int) *LimitError[S, E] {
	return &LimitError[S, E]{State: s, Event: e, Counter: counter, Limit: limit, spec: sp}
}

// limitRefusal returns the refusal of e in s because counter c would reach limit.
func limitRefusal[S StateType, E EnumType](sp *Spec, s S, e E, c *Counter, limit int) *LimitError[S, E] {
	r := Limit(sp, s, e, c.Name, limit)
	r.Max = c.Max
	return r
}

// Error describes the refusal in the spec's terms: "reached its limit of 3" for `limit:
// 3`, "reached its maximum of 2" for `max: 2` (the same Limit).
func (e *LimitError[S, E]) Error() string {
	word, bound := "limit", e.Limit
	if e.Max {
		word, bound = "maximum", e.Limit-1
	}
	return fmt.Sprintf("%s%s on %s: counter %s reached its %s of %d", e.spec.prefix(), e.State, e.Event, e.Counter, word, bound)
}

// Is matches ErrLimit and ErrRefused.
func (e *LimitError[S, E]) Is(target error) bool { return target == ErrLimit || target == ErrRefused }

// Reason names the kind of refusal as `fsmgen sim` does: "limit".
func (e *LimitError[S, E]) Reason() string { return "limit" }

// ValidationError says required fields are missing or invalid: the context fields the
// target state requires, or the event's payload (Payload is true). Allowed lists the events
// that would be accepted instead.
type ValidationError[S StateType, E EnumType] struct {
	State S
	Event E
	// Target is the state that could not be entered.
	Target  S
	Payload bool
	Errors  []FieldError
	Allowed []E
	spec    *Spec
}

// Validation returns the refusal of e in s for the fields in errs: of the payload when
// payload is set, else of the context that target requires.
func Validation[S StateType, E EnumType](sp *Spec, s S, e E, target S, payload bool, errs []FieldError, allowed []E) *ValidationError[S, E] {
	return &ValidationError[S, E]{State: s, Event: e, Target: target, Payload: payload, Errors: errs, Allowed: allowed, spec: sp}
}

// Error describes the refusal.
func (e *ValidationError[S, E]) Error() string {
	what := "cannot enter " + e.Target.String()
	if e.Payload {
		what = "invalid payload for " + e.Event.String()
	}
	var b strings.Builder
	for i, fe := range e.Errors {
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(fe.Field + ": " + fe.Message)
	}
	if b.Len() == 0 {
		return e.spec.prefix() + what
	}
	return e.spec.prefix() + what + ": " + b.String()
}

// Is matches ErrValidation and ErrRefused.
func (e *ValidationError[S, E]) Is(target error) bool {
	return target == ErrValidation || target == ErrRefused
}

// Reason names the kind of refusal as `fsmgen sim` does: "artifacts", or "payload" for an
// invalid payload.
func (e *ValidationError[S, E]) Reason() string {
	if e.Payload {
		return "payload"
	}
	return "artifacts"
}

// MarshalJSON encodes the refusal the way the seed documents' API reports one:
// {"success": false, "errors": [{"field", "message"}...], "allowedTransitions": [...]}.
func (e *ValidationError[S, E]) MarshalJSON() ([]byte, error) {
	v := struct {
		Success bool         `json:"success"`
		Errors  []FieldError `json:"errors"`
		Allowed []E          `json:"allowedTransitions"`
	}{Errors: append([]FieldError{}, e.Errors...), Allowed: append([]E{}, e.Allowed...)}
	return json.Marshal(v)
}

// PermissionError says the role may not fire the transition.
type PermissionError[S StateType, E, R EnumType] struct {
	State S
	Event E
	Role  R
	spec  *Spec
}

// Permission returns the refusal of e in s to role r.
func Permission[S StateType, E, R EnumType](sp *Spec, s S, e E, r R) *PermissionError[S, E, R] {
	return &PermissionError[S, E, R]{State: s, Event: e, Role: r, spec: sp}
}

// Error describes the refusal: "... is not permitted to role "viewer"", or "... is not
// permitted without a role" when the input named none.
func (e *PermissionError[S, E, R]) Error() string {
	if r := e.Role.String(); r != "" {
		return fmt.Sprintf("%s%s on %s is not permitted to role %q", e.spec.prefix(), e.State, e.Event, r)
	}
	return fmt.Sprintf("%s%s on %s is not permitted without a role", e.spec.prefix(), e.State, e.Event)
}

// Is matches ErrPermission and ErrRefused.
func (e *PermissionError[S, E, R]) Is(target error) bool {
	return target == ErrPermission || target == ErrRefused
}

// Reason names the kind of refusal as `fsmgen sim` does: "role".
func (e *PermissionError[S, E, R]) Reason() string { return "role" }

// IdempotencyConflictError says the key was already used for another event.
type IdempotencyConflictError[S StateType, E EnumType] struct {
	State    S
	Event    E
	Key      string
	Original E
	spec     *Spec
}

// IdempotencyConflict returns the refusal of e in s because key was used for original.
func IdempotencyConflict[S StateType, E EnumType](sp *Spec, s S, e E, key string, original E) *IdempotencyConflictError[S, E] {
	return &IdempotencyConflictError[S, E]{State: s, Event: e, Key: key, Original: original, spec: sp}
}

// Error describes the refusal.
func (e *IdempotencyConflictError[S, E]) Error() string {
	return fmt.Sprintf("%sidempotency key %q was used for %s, not %s", e.spec.prefix(), e.Key, e.Original, e.Event)
}

// Is matches ErrIdempotencyConflict and ErrRefused.
func (e *IdempotencyConflictError[S, E]) Is(target error) bool {
	return target == ErrIdempotencyConflict || target == ErrRefused
}

// Reason names the kind of refusal as `fsmgen sim` does: "idempotency_conflict".
func (e *IdempotencyConflictError[S, E]) Reason() string { return "idempotency_conflict" }

// ActionError says an action the spec marks may_fail failed while the transition was
// taken: the event is refused and the machine is as it was before it (state, history,
// counters, context; nothing logged, no effect kept). Actions that ran before it have run.
// It wraps the action's error.
type ActionError[S StateType, E EnumType] struct {
	State S
	Event E
	// Starting says the action ran on starting a statechart (Start; Event is not set).
	Starting bool
	// Action is the action's name in the spec.
	Action string
	Err    error
	spec   *Spec
}

// Error describes the refusal and the action's error.
func (e *ActionError[S, E]) Error() string {
	return fmt.Sprintf("%s%s %s: action %s failed: %v", e.spec.prefix(), e.State, on(e.Starting, e.Event), e.Action, e.Err)
}

// Is matches ErrActionFailed and ErrRefused.
func (e *ActionError[S, E]) Is(target error) bool {
	return target == ErrActionFailed || target == ErrRefused
}

// Unwrap returns the action's error.
func (e *ActionError[S, E]) Unwrap() error { return e.Err }

// Reason names the kind of refusal as `fsmgen sim` does: "action_failed".
func (e *ActionError[S, E]) Reason() string { return "action_failed" }
