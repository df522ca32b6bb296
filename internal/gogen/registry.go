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

	f.Comment(comment(R+" holds machines by ID and answers queries over them (fsmrt.Registry).") + g.registryListing(R))
	f.Type().Id(R).Add(structLine(Qual(rt, "Registry").Types(Op("*").Id(T), Id("State"))))
	f.Line()
	f.Comment(comment("New" + R + " returns an empty registry (fsmrt.Registry.Init)."))
	f.Func().Id("New"+R).Params(Id("maxActive").Int(), Id("logger").Op("*").Qual("log/slog", "Logger")).Op("*").Id(R).Add(inline(
		Id("r").Op(":=").Op("&").Id(R).Values(),
		Id("r").Dot("Init").Call(Lit(g.m.Name), Nil(), Id("maxActive"), Id("logger")),
		Return(Id("r")),
	))
	f.Line()
	f.Comment("// Fire fires e on the machine registered under id, holding its lock.")
	f.Add(recv()).Id("Fire").Params(ctxParam(), Id("id").String(), Id("e").Id("Event"), g.in()).Params(Id("State"), Error()).Add(inline(
		Return(Qual(rt, "RegistryFire").Call(Id("ctx"), Op("&").Id("r").Dot("Registry"), Id("id"), Id("e"), Id("in"))),
	))
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
