package gogen

import (
	. "github.com/dave/jennifer/jen"
)

// errors emits the typed errors Fire returns. Invalid transitions and guard refusals are
// preallocated per (state, event) so that refusing an event allocates nothing.
func (g *gen) errors(f *File) {
	pkg := g.m.Package + ": "
	f.Comment("// FieldError is one missing or invalid field of the context or of a payload.")
	f.Type().Id("FieldError").Struct(
		Id("Field").String().Tag(map[string]string{"json": "field"}),
		Id("Message").String().Tag(map[string]string{"json": "message"}),
	)
	f.Line()

	f.Comment("// Sentinel errors for errors.Is: every refusal matches ErrRefused, and each typed error\n// also matches its own sentinel.")
	f.Var().DefsFunc(func(d *Group) {
		d.Id("ErrRefused").Op("=").Qual("errors", "New").Call(Lit(pkg + "event refused"))
		d.Id("ErrInvalidTransition").Op("=").Qual("errors", "New").Call(Lit(pkg + "invalid transition"))
		d.Id("ErrGuard").Op("=").Qual("errors", "New").Call(Lit(pkg + "guard does not hold"))
		d.Id("ErrPermission").Op("=").Qual("errors", "New").Call(Lit(pkg + "permission denied"))
		d.Id("ErrNoChoice").Op("=").Qual("errors", "New").Call(Lit(pkg + "no choice holds"))
		d.Id("ErrNoHistory").Op("=").Qual("errors", "New").Call(Lit(pkg + "nothing remembered"))
		d.Id("ErrLimit").Op("=").Qual("errors", "New").Call(Lit(pkg + "limit reached"))
		d.Id("ErrValidation").Op("=").Qual("errors", "New").Call(Lit(pkg + "validation failed"))
		if g.m.Idempotent {
			d.Id("ErrIdempotencyConflict").Op("=").Qual("errors", "New").Call(Lit(pkg + "idempotency key reused for another transition"))
		}
	})
	f.Line()

	type errType struct {
		name, doc, sentinel, reason string
		fields                      []Code
		msg                         func() []Code
	}
	stateEvent := []Code{Id("State").Id("State"), Id("Event").Id("Event")}
	types := []errType{
		{name: "InvalidTransitionError", sentinel: "ErrInvalidTransition", reason: "invalid_transition",
			doc:    "InvalidTransitionError says the event is not accepted in the state at all (every event\nis refused in a terminal state). Permitted lists what is.",
			fields: stateEvent,
			msg: func() []Code {
				return []Code{
					If(Id("e").Dot("State").Dot("IsTerminal").Call()).Block(
						Return(Qual("fmt", "Sprintf").Call(Lit(pkg+"%s is terminal: %s is not accepted"), Id("e").Dot("State"), Id("e").Dot("Event"))),
					),
					Return(Qual("fmt", "Sprintf").Call(Lit(pkg+"no transition from %s on %s"), Id("e").Dot("State"), Id("e").Dot("Event"))),
				}
			}},
		{name: "GuardError", sentinel: "ErrGuard", reason: "guard",
			doc:    "GuardError says transitions exist for the state and event, but none of their guards hold.",
			fields: stateEvent,
			msg: func() []Code {
				return []Code{Return(Qual("fmt", "Sprintf").Call(Lit(pkg+"%s on %s: no transition's guards hold"), Id("e").Dot("State"), Id("e").Dot("Event")))}
			}},
		{name: "NoChoiceError", sentinel: "ErrNoChoice", reason: "no_choice",
			doc:    "NoChoiceError says a dynamic transition found no candidate whose guards hold.",
			fields: stateEvent,
			msg: func() []Code {
				return []Code{Return(Qual("fmt", "Sprintf").Call(Lit(pkg+"%s on %s: no choice holds"), Id("e").Dot("State"), Id("e").Dot("Event")))}
			}},
		{name: "NoHistoryError", sentinel: "ErrNoHistory", reason: "no_history",
			doc:    "NoHistoryError says a history transition found no remembered state to return to.",
			fields: append(append([]Code{}, stateEvent...), Id("Remembering").Id("State")),
			msg: func() []Code {
				return []Code{Return(Qual("fmt", "Sprintf").Call(Lit(pkg+"%s on %s: %s remembers no state to return to"), Id("e").Dot("State"), Id("e").Dot("Event"), Id("e").Dot("Remembering")))}
			}},
		{name: "LimitError", sentinel: "ErrLimit", reason: "limit",
			doc:    "LimitError says the transition would trip a counter's limit that has no `then` state.",
			fields: append(append([]Code{}, stateEvent...), Id("Counter").String(), Id("Limit").Int()),
			msg: func() []Code {
				return []Code{Return(Qual("fmt", "Sprintf").Call(Lit(pkg+"%s on %s: counter %s reached its limit of %d"), Id("e").Dot("State"), Id("e").Dot("Event"), Id("e").Dot("Counter"), Id("e").Dot("Limit")))}
			}},
		{name: "ValidationError", sentinel: "ErrValidation", reason: "artifacts",
			doc: "ValidationError says required fields are missing or invalid: the context fields the target\nstate requires, or the event's payload (Payload is true). Allowed lists the events that\nwould be accepted instead.",
			fields: append(append([]Code{}, stateEvent...),
				doc("Target is the state that could not be entered."),
				Id("Target").Id("State"),
				Id("Payload").Bool(),
				Id("Errors").Index().Id("FieldError"),
				Id("Allowed").Index().Id("Event")),
			msg: func() []Code {
				return []Code{
					Id("what").Op(":=").Lit("cannot enter ").Op("+").Id("e").Dot("Target").Dot("String").Call(),
					If(Id("e").Dot("Payload")).Block(Id("what").Op("=").Lit("invalid payload for ").Op("+").Id("e").Dot("Event").Dot("String").Call()),
					Var().Id("b").Qual("strings", "Builder"),
					For(List(Id("i"), Id("fe")).Op(":=").Range().Id("e").Dot("Errors")).Block(
						If(Id("i").Op(">").Lit(0)).Block(Id("b").Dot("WriteString").Call(Lit("; "))),
						Id("b").Dot("WriteString").Call(Id("fe").Dot("Field").Op("+").Lit(": ").Op("+").Id("fe").Dot("Message")),
					),
					Return(Lit(pkg).Op("+").Id("what").Op("+").Lit(": ").Op("+").Id("b").Dot("String").Call()),
				}
			}},
	}
	if len(g.m.Roles) > 0 {
		types = append(types, errType{name: "PermissionError", sentinel: "ErrPermission", reason: "role",
			doc:    "PermissionError says the role may not fire the transition.",
			fields: append(append([]Code{}, stateEvent...), Id("Role").Id("Role")),
			msg: func() []Code {
				return []Code{Return(Qual("fmt", "Sprintf").Call(Lit(pkg+"%s on %s is not permitted to role %q"), Id("e").Dot("State"), Id("e").Dot("Event"), Id("e").Dot("Role").Dot("String").Call()))}
			}})
	}
	if g.m.Idempotent {
		types = append(types, errType{name: "IdempotencyConflictError", sentinel: "ErrIdempotencyConflict", reason: "idempotency_conflict",
			doc:    "IdempotencyConflictError says the key was already used for another event.",
			fields: append(append([]Code{}, stateEvent...), Id("Key").String(), Id("Original").Id("Event")),
			msg: func() []Code {
				return []Code{Return(Qual("fmt", "Sprintf").Call(Lit(pkg+"idempotency key %q was used for %s, not %s"), Id("e").Dot("Key"), Id("e").Dot("Original"), Id("e").Dot("Event")))}
			}})
	}
	for _, t := range types {
		f.Comment(comment(t.doc))
		f.Type().Id(t.name).Struct(t.fields...)
		f.Line()
		f.Comment("// Error describes the refusal.")
		f.Func().Params(Id("e").Op("*").Id(t.name)).Id("Error").Params().String().Block(t.msg()...)
		f.Line()
		f.Commentf("// Is matches %s and ErrRefused.", t.sentinel)
		f.Func().Params(Id("e").Op("*").Id(t.name)).Id("Is").Params(Id("target").Error()).Bool().Block(
			Return(Id("target").Op("==").Id(t.sentinel).Op("||").Id("target").Op("==").Id("ErrRefused")),
		)
		f.Line()
		f.Commentf("// Reason names the kind of refusal as `fsmgen sim` does: %q.", t.reason)
		if t.name == "ValidationError" {
			f.Comment("// An invalid payload is \"payload\".")
		}
		f.Func().Params(Id("e").Op("*").Id(t.name)).Id("Reason").Params().String().BlockFunc(func(b *Group) {
			if t.name == "ValidationError" {
				b.If(Id("e").Dot("Payload")).Block(Return(Lit("payload")))
			}
			b.Return(Lit(t.reason))
		})
		f.Line()
	}

	f.Comment("// MarshalJSON encodes the refusal the way the seed documents' API reports one:\n// {\"success\": false, \"errors\": [{\"field\", \"message\"}...], \"allowedTransitions\": [...]}.")
	f.Func().Params(Id("e").Op("*").Id("ValidationError")).Id("MarshalJSON").Params().Params(Index().Byte(), Error()).Block(
		Id("v").Op(":=").Struct(
			Id("Success").Bool().Tag(map[string]string{"json": "success"}),
			Id("Errors").Index().Id("FieldError").Tag(map[string]string{"json": "errors"}),
			Id("Allowed").Index().Id("Event").Tag(map[string]string{"json": "allowedTransitions"}),
		).Values(Dict{Id("Errors"): Append(Index().Id("FieldError").Values(), Id("e").Dot("Errors").Op("...")), Id("Allowed"): Append(Index().Id("Event").Values(), Id("e").Dot("Allowed").Op("..."))}),
		Return(Qual("encoding/json", "Marshal").Call(Id("v"))),
	)
	f.Line()
	f.Comment("// Permitted lists the events the state accepts at all (guards, roles and fields aside).")
	f.Func().Params(Id("e").Op("*").Id("InvalidTransitionError")).Id("Permitted").Params().Index().Id("Event").Block(
		Return(Id("accepted").Call(Id("e").Dot("State"), Nil())),
	)
	f.Line()

	f.Comment("// Preallocated refusals, so that refusing an event allocates nothing. Written once by init.")
	f.Var().DefsFunc(func(d *Group) {
		d.Id("invalidTransitions").Index(Id("NumStates")).Index(Id("NumEvents")).Id("InvalidTransitionError")
		d.Id("guardRefusals").Index(Id("NumStates")).Index(Id("NumEvents")).Id("GuardError")
	})
	f.Line()
	f.Func().Id("init").Params().Block(
		For(Id("s").Op(":=").Range().Id("invalidTransitions")).Block(
			For(Id("e").Op(":=").Range().Id("invalidTransitions").Index(Id("s"))).Block(
				Id("invalidTransitions").Index(Id("s")).Index(Id("e")).Op("=").Id("InvalidTransitionError").Values(Id("State").Call(Id("s")), Id("Event").Call(Id("e"))),
				Id("guardRefusals").Index(Id("s")).Index(Id("e")).Op("=").Id("GuardError").Values(Id("State").Call(Id("s")), Id("Event").Call(Id("e"))),
			),
		),
	)
	f.Line()
}
