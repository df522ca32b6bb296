package interp

import (
	"slices"

	"github.com/fsmgen/fsmgen/internal/ir"
)

// invariants appends to errs what the context's set fields break of the constraints that
// hold whenever they are set (ir.Field.Invariant), in field order, leaving out the fields
// in required: the states entered require them, and their requirement reports them.
func (x *Machine) invariants(errs []FieldError, required []*ir.Field, in Inputs) []FieldError {
	for _, f := range x.IR.Fields {
		if !f.Invariant() || slices.Contains(required, f) {
			continue
		}
		if msg := InvariantProblem(f, fieldValue(f, in)); msg != "" {
			errs = append(errs, FieldError{Field: f.Name, Message: msg})
		}
	}
	return errs
}

// InvariantProblem describes how v, a value of the context field f that fits its type
// (CheckValue), breaks the constraints that hold whenever the field is set, with the
// field's message when it has one; it returns "" when v meets them or is unset (absent, or
// the zero value of the field's type), as every transition checks them.
func InvariantProblem(f *ir.Field, v any) string {
	if !f.Invariant() || zero(f, v) {
		return ""
	}
	msg := fieldProblem(f, v, false)
	if msg != "" && f.Message != "" {
		msg = f.Message
	}
	return msg
}

// invariantRefusal is the refusal of e, or of starting when e is nil, when the context
// breaks the constraints of its set fields; nil when it does not.
func (x *Machine) invariantRefusal(e *ir.Event, in Inputs) *Rejection {
	errs := x.invariants(nil, nil, in)
	if len(errs) == 0 {
		return nil
	}
	r := x.reject(MissingArtifacts, e, "cannot enter %s: %d field%s invalid", x.State.Name, len(errs), plural(len(errs), " is", "s are"))
	r.Errors = errs
	return r
}

// startRefusal is the refusal of starting a statechart whose start does something (it is
// then committed as a transition is) when the context breaks the constraints of its set
// fields; nil otherwise.
func (x *Machine) startRefusal(in Inputs) *Rejection {
	if !x.IR.Starts() {
		return nil
	}
	return x.invariantRefusal(nil, in)
}
