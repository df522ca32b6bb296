package gogen

import (
	. "github.com/dave/jennifer/jen"
)

// errorAliases declares the sentinels and typed refusals of the machine as the runtime's.
func (g *gen) errorAliases(f *File) {
	validates := g.requires() || g.payloads()
	if validates {
		f.Comment("// FieldError is one missing or invalid field of the context or of a payload.")
		f.Type().Id("FieldError").Op("=").Qual(rt, "FieldError")
		f.Line()
	}

	guard, noChoice, noHistory, limit := g.m.Refusals()
	sentinels := []string{"ErrRefused", "ErrInvalidTransition"}
	add := func(ok bool, name string) {
		if ok {
			sentinels = append(sentinels, name)
		}
	}
	add(guard, "ErrGuard")
	add(len(g.m.Roles) > 0, "ErrPermission")
	add(noChoice, "ErrNoChoice")
	add(noHistory, "ErrNoHistory")
	add(limit, "ErrLimit")
	add(validates, "ErrValidation")
	add(g.m.Idempotent, "ErrIdempotencyConflict")
	sentinels = append(sentinels, "ErrInvalidSnapshot", "ErrInvalidLog")
	f.Comment("// Sentinel errors for errors.Is (the runtime's): every refusal matches ErrRefused and its\n// own; ErrInvalidSnapshot and ErrInvalidLog refuse what a store holds (Restore, Replay).")
	f.Var().DefsFunc(func(d *Group) {
		for _, s := range sentinels {
			d.Id(s).Op("=").Qual(rt, s)
		}
	})
	f.Line()

	type errType struct{ name, doc string }
	types := []errType{
		{"InvalidTransitionError", "InvalidTransitionError says the event is not accepted in the state at all (every event\nis refused in a terminal state). Permitted lists what is."},
	}
	if guard {
		types = append(types, errType{"GuardError", "GuardError says transitions exist for the state and event, but none of their guards hold."})
	}
	if noChoice {
		types = append(types, errType{"NoChoiceError", "NoChoiceError says a dynamic transition found no candidate whose guards hold."})
	}
	if noHistory {
		types = append(types, errType{"NoHistoryError", "NoHistoryError says a history transition found no remembered state to return to."})
	}
	if limit {
		types = append(types, errType{"LimitError", "LimitError says the transition would trip a counter's limit that has no `then` state."})
	}
	if validates {
		types = append(types, errType{"ValidationError", "ValidationError says required fields are missing or invalid: the context fields the target\nstate requires, or the event's payload (Payload is true). Allowed lists the events that\nwould be accepted instead."})
	}
	if g.m.Idempotent {
		types = append(types, errType{"IdempotencyConflictError", "IdempotencyConflictError says the key was already used for another event."})
	}
	for _, t := range types {
		f.Comment(comment(t.doc))
		f.Type().Id(t.name).Op("=").Qual(rt, t.name).Types(Id("State"), Id("Event"))
		f.Line()
	}
	if len(g.m.Roles) > 0 {
		f.Comment("// PermissionError says the role may not fire the transition.")
		f.Type().Id("PermissionError").Op("=").Qual(rt, "PermissionError").Types(Id("State"), Id("Event"), Id("Role"))
		f.Line()
	}
}
