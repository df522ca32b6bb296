package gogen

import (
	. "github.com/dave/jennifer/jen"
)

// registry emits the machine's registry: the runtime's, with the typed Fire and the
// queries the spec needs.
func (g *gen) registry(f *File) {
	T := g.T
	R := g.name("Registry")
	recv := func() *Statement { return Func().Params(Id("r").Op("*").Id(R)) }

	f.Comment("// ErrNotRegistered says no machine with that ID is registered.")
	f.Var().Id("ErrNotRegistered").Op("=").Qual(rt, "ErrNotRegistered")
	f.Line()
	f.Comment(comment(R + " holds machines by ID and answers queries over them (fsmrt.Registry). It is safe\nfor concurrent use: each machine has a lock, held while Do, Fire or a query looks at it.\nFire events on registered machines through Do or Fire, never directly from several\ngoroutines."))
	f.Type().Id(R).Struct(Qual(rt, "Registry").Types(Op("*").Id(T), Id("State")))
	f.Line()
	f.Comment(comment("New" + R + " returns an empty registry. Registering past maxActive active (non-terminal)\nmachines is not refused, but logged as a warning through logger (slog.Default() when\nnil); maxActive 0 means no limit."))
	f.Func().Id("New"+R).Params(Id("maxActive").Int(), Id("logger").Op("*").Qual("log/slog", "Logger")).Op("*").Id(R).Block(
		Id("r").Op(":=").Op("&").Id(R).Values(),
		Id("r").Dot("Init").Call(Lit(g.m.Name), Func().Params(Id("m").Op("*").Id(T)).String().Block(Return(Id("m").Dot("ID"))), Id("maxActive"), Id("logger")),
		Return(Id("r")),
	)
	f.Line()
	f.Comment("// Fire fires e on the machine registered under id, holding its lock.")
	f.Add(recv()).Id("Fire").Params(ctxParam(), Id("id").String(), Id("e").Id("Event"), g.in()).Params(Id("State"), Error()).Block(
		Var().Id("to").Id("State"),
		Err().Op(":=").Id("r").Dot("Do").Call(Id("id"), Func().Params(Id("m").Op("*").Id(T)).Error().Block(
			Var().Err().Error(),
			List(Id("to"), Err()).Op("=").Id("m").Dot("FireWith").Call(Id("ctx"), Id("e"), Id("in")),
			Return(Err()),
		)),
		Return(Id("to"), Err()),
	)
	f.Line()
	if g.timeouts {
		f.Comment("// ExceedingTimeout returns the machines whose state's timeout has reached level at at\n// now (LevelNone: any level), ordered by ID.")
		f.Add(recv()).Id("ExceedingTimeout").Params(Id("now").Qual("time", "Time"), Id("at").Id("TimeoutLevel")).Index().Op("*").Id(T).Block(
			Return(Id("r").Dot("Where").Call(Func().Params(Id("m").Op("*").Id(T)).Bool().Block(
				Id("l").Op(":=").Id("m").Dot("TimeoutLevel").Call(Id("now")),
				Return(Id("l").Op("!=").Id("LevelNone").Op("&&").Id("l").Op(">=").Id("at")),
			))),
		)
		f.Line()
	}
}
