package gogen

import (
	. "github.com/dave/jennifer/jen"
)

// errorAliases declares the sentinels and typed refusals of the machine as the runtime's.
func (g *gen) errorAliases(f *File) {
	validates := g.requires() || g.invariants() || g.payloads()
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
	add(g.settles(), "ErrEventlessLoop")
	add(g.mayFail(), "ErrActionFailed")
	sentinels = append(sentinels, "ErrInvalidSnapshot", "ErrInvalidLog", "ErrStoreConflict", "ErrNotRegistered")
	f.Comment("// Sentinel errors for errors.Is, the runtime's (fsmrt): every refusal matches ErrRefused\n// and its own.")
	f.Var().DefsFunc(func(d *Group) {
		for _, s := range sentinels {
			d.Id(s).Op("=").Qual(rt, s)
		}
	})
	f.Line()

	type errType struct{ name, note string }
	types := []errType{{"InvalidTransitionError", "the state has no transition on the event"}}
	if guard {
		types = append(types, errType{"GuardError", "transitions exist, but none of their guards hold"})
	}
	if noChoice {
		types = append(types, errType{"NoChoiceError", "a choice found no branch whose guards hold"})
	}
	if noHistory {
		types = append(types, errType{"NoHistoryError", "a history target remembers no state yet"})
	}
	if limit {
		types = append(types, errType{"LimitError", "a counter's limit with no `then` state"})
	}
	if validates {
		types = append(types, errType{"ValidationError", "required fields or the payload are missing or invalid"})
	}
	if g.m.Idempotent {
		types = append(types, errType{"IdempotencyConflictError", "the key was used for another event"})
	}
	if g.mayFail() {
		types = append(types, errType{"ActionError", "an action that may fail failed: nothing changed"})
	}
	if g.settles() {
		types = append(types, errType{"EventlessLoopError", "eventless transitions and done events do not settle"})
	}
	f.Comment("// The errors Fire returns, the runtime's types (fsmrt), and what each says.")
	f.Type().DefsFunc(func(d *Group) {
		for _, t := range types {
			d.Id(t.name).Op("=").Qual(rt, t.name).Types(Id("State"), Id("Event")).Comment(t.note)
		}
		if len(g.m.Roles) > 0 {
			d.Id("PermissionError").Op("=").Qual(rt, "PermissionError").Types(Id("State"), Id("Event"), Id("Role")).Comment("the role may not fire the transition")
		}
		d.Id("StoreError").Op("=").Qual(rt, "StoreError").Comment("the store failed to persist an accepted transition")
	})
	f.Line()
}
