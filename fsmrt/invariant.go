package fsmrt

import "strconv"

// Invariants checks the constraints of context fields that hold whenever a field is set
// (not its zero value): bounds on numbers and durations, item counts of lists and maps,
// whether or not a state requires the field. A generated package whose spec has such
// fields implements it on its ops, and every transition the machine commits (Fire,
// FireWith, a timeout's expiry, a statechart's start and macrosteps, Create) checks them
// on the context as its required fields are checked, with them: a field that breaks its
// constraints refuses the transition with a ValidationError listing {field, message}, and
// nothing changes. Its Moves entries are then all MoveStep, so that Fire asks.
type Invariants[C any] interface {
	// Invariants appends to errs what the set fields of c break, in field order, each
	// field's first problem, as the field's requirement would report it.
	Invariants(c *C, errs []FieldError) []FieldError
}

// invariants appends to errs, the failures of the fields the states entered require (if
// any), what the set fields of c break of their constraints, leaving out the fields errs
// lists already: a field the states entered require reports its constraints there. It
// allocates nothing when c meets them.
func (m *Machine[S, E, R, C, X]) invariants(c *C, errs []FieldError) []FieldError {
	n := len(errs)
	errs = m.inv.Invariants(c, errs)
	if n == 0 || len(errs) == n {
		return errs
	}
	out := errs[:n]
	for _, fe := range errs[n:] {
		listed := false
		for _, r := range errs[:n] {
			listed = listed || r.Field == fe.Field
		}
		if !listed {
			out = append(out, fe)
		}
	}
	return out
}

// validate returns what c breaks of the fields state to requires (when require) and of the
// constraints of its set fields, or nil.
func (m *Machine[S, E, R, C, X]) validate(to S, c *C, require bool) []FieldError {
	var errs []FieldError
	if require {
		errs = m.requirer.Require(to, c)
	}
	if m.inv != nil {
		errs = m.invariants(c, errs)
	}
	return errs
}

// checkContext refuses a commit that enters no state through a transition (a statechart's
// start, Create) when the context breaks the constraints of its set fields: a
// ValidationError for the current state, on the zero event, with no event allowed instead.
func (m *Machine[S, E, R, C, X]) checkContext() error {
	if m.inv == nil {
		return nil
	}
	if errs := m.invariants(&m.Context, nil); errs != nil {
		var e E
		return Validation(m.def.Spec, m.state, e, m.state, false, errs, nil)
	}
	return nil
}

// validateOn is validate for microstep t of a statechart: the fields the states it enters
// require (when require), and the constraints of the context's set fields.
func (m *Machine[S, E, R, C, X]) validateOn(t int32, require bool) []FieldError {
	var errs []FieldError
	if require {
		errs = m.onEnter.RequireOn(t, &m.Context)
	}
	if m.inv != nil {
		errs = m.invariants(&m.Context, errs)
	}
	return errs
}

// checkCreate refuses to create a machine without a store (ErrNoStore), or whose context
// breaks the constraints of its set fields (checkContext).
func (m *Machine[S, E, R, C, X]) checkCreate() error {
	if m.store == nil {
		return ErrNoStore
	}
	return m.checkContext()
}

// Bound is the constraint of one context field that holds whenever the field is set (not
// its zero value): bounds on a number or a duration, or item counts of a list or a map. A
// generated package lists its fields' in a table, in field order, which its Invariants
// checks with CheckBounds.
type Bound[C any] struct {
	// Field is the field's name in the spec.
	Field string
	// Value reads the field of c: its number (a duration's nanoseconds), or with
	// BoundItems the number of its items; 0 is unset, which meets every bound.
	Value func(c *C) float64
	// Min and Max are the bounds, which Has says apply, and how.
	Min, Max float64
	Has      BoundKind
	// Low and High are the messages of a value below Min and above Max: the spec's
	// message of the field, or the generated one. "" with BoundItems says "<field> must
	// have at least|most <n> items (has <count>)".
	Low, High string
}

// BoundKind says which bounds of a Bound apply.
type BoundKind uint8

// The bounds of a Bound.
const (
	BoundMin   BoundKind = 1 << iota // min: a value below Min breaks it
	BoundAbove                       // above: Min too
	BoundMax                         // max: a value above Max breaks it
	BoundBelow                       // below: Max too
	BoundItems                       // Value counts items: Min is min_items, Max max_items
)

// CheckBounds appends to errs what the set fields of c break of bounds, each field's first
// problem, in order, as {field, message}. It allocates nothing when c meets them.
func CheckBounds[C any](c *C, bounds []Bound[C], errs []FieldError) []FieldError {
	for i := range bounds {
		b := &bounds[i]
		v := b.Value(c)
		if v == 0 {
			continue
		}
		var msg string
		switch {
		case b.Has&(BoundMin|BoundAbove) != 0 && (v < b.Min || b.Has&BoundAbove != 0 && v == b.Min):
			msg = b.items(b.Low, "least", b.Min, v)
		case b.Has&(BoundMax|BoundBelow) != 0 && (v > b.Max || b.Has&BoundBelow != 0 && v == b.Max):
			msg = b.items(b.High, "most", b.Max, v)
		default:
			continue
		}
		errs = append(errs, FieldError{Field: b.Field, Message: msg})
	}
	return errs
}

// items returns msg, or when it is "" the message of a count of items n past bound.
func (b *Bound[C]) items(msg, most string, bound, n float64) string {
	if msg != "" {
		return msg
	}
	return b.Field + " must have at " + most + " " + strconv.Itoa(int(bound)) + " items (has " + strconv.Itoa(int(n)) + ")"
}
