package gogen

import (
	. "github.com/dave/jennifer/jen"
)

// registry emits a registry of machines by ID, safe for concurrent use, with the queries
// the seed documents ask for.
func (g *gen) registry(f *File) {
	m := g.m
	T := g.T
	R := g.name("Registry")
	pkg := m.Package + ": "
	recv := func() *Statement { return Func().Params(Id("r").Op("*").Id(R)) }
	lockR := []Code{Id("r").Dot("mu").Dot("RLock").Call(), Defer().Id("r").Dot("mu").Dot("RUnlock").Call()}
	lockW := []Code{Id("r").Dot("mu").Dot("Lock").Call(), Defer().Id("r").Dot("mu").Dot("Unlock").Call()}

	f.Comment("// ErrNotRegistered says no machine with that ID is registered.")
	f.Var().Id("ErrNotRegistered").Op("=").Qual("errors", "New").Call(Lit(pkg + "not registered"))
	f.Line()
	f.Comment(comment(R + " holds machines by ID and answers queries over them. It is safe for concurrent\nuse: each machine has a lock, held while Do, Fire or a query looks at it. Fire events on\nregistered machines through Do or Fire, never directly from several goroutines."))
	f.Type().Id(R).Struct(
		Id("mu").Qual("sync", "RWMutex"),
		Id("tasks").Map(String()).Op("*").Id("registered"+T),
		Id("maxActive").Int(),
		Id("logger").Op("*").Qual("log/slog", "Logger"),
	)
	f.Line()
	f.Type().Id("registered"+T).Struct(Id("mu").Qual("sync", "Mutex"), Id("m").Op("*").Id(T))
	f.Line()
	f.Comment(comment("New" + R + " returns an empty registry. Registering past maxActive active (non-terminal)\nmachines is not refused, but logged as a warning through logger (slog.Default() when\nnil); maxActive 0 means no limit."))
	f.Func().Id("New"+R).Params(Id("maxActive").Int(), Id("logger").Op("*").Qual("log/slog", "Logger")).Op("*").Id(R).Block(
		If(Id("logger").Op("==").Nil()).Block(Id("logger").Op("=").Qual("log/slog", "Default").Call()),
		Return(Op("&").Id(R).Values(Dict{Id("tasks"): Map(String()).Op("*").Id("registered" + T).Values(), Id("maxActive"): Id("maxActive"), Id("logger"): Id("logger")})),
	)
	f.Line()
	f.Comment("// Register adds m under m.ID, which must be set and not yet registered.")
	f.Add(recv()).Id("Register").Params(Id("m").Op("*").Id(T)).Error().Block(
		If(Id("m").Dot("ID").Op("==").Lit("")).Block(Return(Qual("errors", "New").Call(Lit(pkg+"register: machine has no ID")))),
		Id("r").Dot("mu").Dot("Lock").Call(),
		If(List(Id("_"), Id("dup")).Op(":=").Id("r").Dot("tasks").Index(Id("m").Dot("ID")), Id("dup")).Block(
			Id("r").Dot("mu").Dot("Unlock").Call(),
			Return(Qual("fmt", "Errorf").Call(Lit(pkg+"register: %q is already registered"), Id("m").Dot("ID"))),
		),
		Id("r").Dot("tasks").Index(Id("m").Dot("ID")).Op("=").Op("&").Id("registered"+T).Values(Dict{Id("m"): Id("m")}),
		Id("r").Dot("mu").Dot("Unlock").Call(),
		If(Id("r").Dot("maxActive").Op(">").Lit(0)).Block(
			If(Id("n").Op(":=").Id("r").Dot("ActiveCount").Call(), Id("n").Op(">").Id("r").Dot("maxActive")).Block(
				Id("r").Dot("logger").Dot("Warn").Call(Lit("active machines past the limit"), Lit("machine"), Lit(m.Name), Lit("active"), Id("n"), Lit("max"), Id("r").Dot("maxActive")),
			),
		),
		Return(Nil()),
	)
	f.Line()
	f.Comment("// Get returns the machine registered under id, or ErrNotRegistered.")
	f.Add(recv()).Id("Get").Params(Id("id").String()).Params(Op("*").Id(T), Error()).Block(
		If(Id("m").Op(":=").Id("r").Dot("GetOrNil").Call(Id("id")), Id("m").Op("!=").Nil()).Block(Return(Id("m"), Nil())),
		Return(Nil(), Qual("fmt", "Errorf").Call(Lit("%w: %q"), Id("ErrNotRegistered"), Id("id"))),
	)
	f.Line()
	f.Comment("// GetOrNil returns the machine registered under id, or nil.")
	f.Add(recv()).Id("GetOrNil").Params(Id("id").String()).Op("*").Id(T).Block(append(lockR,
		If(List(Id("e"), Id("ok")).Op(":=").Id("r").Dot("tasks").Index(Id("id")), Id("ok")).Block(Return(Id("e").Dot("m"))),
		Return(Nil()),
	)...)
	f.Line()
	f.Comment("// Remove unregisters id and reports whether it was registered.")
	f.Add(recv()).Id("Remove").Params(Id("id").String()).Bool().Block(append(lockW,
		List(Id("_"), Id("ok")).Op(":=").Id("r").Dot("tasks").Index(Id("id")),
		Delete(Id("r").Dot("tasks"), Id("id")),
		Return(Id("ok")),
	)...)
	f.Line()
	f.Comment("// Do runs fn on the machine registered under id while holding its lock.")
	f.Add(recv()).Id("Do").Params(Id("id").String(), Id("fn").Func().Params(Op("*").Id(T)).Error()).Error().Block(
		Id("r").Dot("mu").Dot("RLock").Call(),
		List(Id("e"), Id("ok")).Op(":=").Id("r").Dot("tasks").Index(Id("id")),
		Id("r").Dot("mu").Dot("RUnlock").Call(),
		If(Op("!").Id("ok")).Block(Return(Qual("fmt", "Errorf").Call(Lit("%w: %q"), Id("ErrNotRegistered"), Id("id")))),
		Id("e").Dot("mu").Dot("Lock").Call(),
		Defer().Id("e").Dot("mu").Dot("Unlock").Call(),
		Return(Id("fn").Call(Id("e").Dot("m"))),
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
	f.Comment("// Where returns the machines for which keep holds (called under each machine's lock),\n// ordered by ID.")
	f.Add(recv()).Id("Where").Params(Id("keep").Func().Params(Op("*").Id(T)).Bool()).Index().Op("*").Id(T).Block(
		Id("r").Dot("mu").Dot("RLock").Call(),
		Id("ids").Op(":=").Make(Index().String(), Lit(0), Len(Id("r").Dot("tasks"))),
		For(Id("id").Op(":=").Range().Id("r").Dot("tasks")).Block(Id("ids").Op("=").Append(Id("ids"), Id("id"))),
		Id("entries").Op(":=").Make(Index().Op("*").Id("registered"+T), Lit(0), Len(Id("ids"))),
		Qual("sort", "Strings").Call(Id("ids")),
		For(List(Id("_"), Id("id")).Op(":=").Range().Id("ids")).Block(Id("entries").Op("=").Append(Id("entries"), Id("r").Dot("tasks").Index(Id("id")))),
		Id("r").Dot("mu").Dot("RUnlock").Call(),
		Var().Id("out").Index().Op("*").Id(T),
		For(List(Id("_"), Id("e")).Op(":=").Range().Id("entries")).Block(
			Id("e").Dot("mu").Dot("Lock").Call(),
			Id("ok").Op(":=").Id("keep").Call(Id("e").Dot("m")),
			Id("e").Dot("mu").Dot("Unlock").Call(),
			If(Id("ok")).Block(Id("out").Op("=").Append(Id("out"), Id("e").Dot("m"))),
		),
		Return(Id("out")),
	)
	f.Line()
	f.Comment("// ListAll returns every registered machine, ordered by ID.")
	f.Add(recv()).Id("ListAll").Params().Index().Op("*").Id(T).Block(
		Return(Id("r").Dot("Where").Call(Func().Params(Op("*").Id(T)).Bool().Block(Return(True())))),
	)
	f.Line()
	f.Comment("// ListActive returns the machines that are not in a terminal state, ordered by ID.")
	f.Add(recv()).Id("ListActive").Params().Index().Op("*").Id(T).Block(
		Return(Id("r").Dot("Where").Call(Func().Params(Id("m").Op("*").Id(T)).Bool().Block(Return(Op("!").Id("m").Dot("state").Dot("IsTerminal").Call())))),
	)
	f.Line()
	f.Comment("// ActiveCount returns the number of machines not in a terminal state.")
	f.Add(recv()).Id("ActiveCount").Params().Int().Block(Return(Len(Id("r").Dot("ListActive").Call())))
	f.Line()
	f.Comment("// ByState returns the machines in state s, ordered by ID.")
	f.Add(recv()).Id("ByState").Params(Id("s").Id("State")).Index().Op("*").Id(T).Block(
		Return(Id("r").Dot("Where").Call(Func().Params(Id("m").Op("*").Id(T)).Bool().Block(Return(Id("m").Dot("state").Op("==").Id("s"))))),
	)
	f.Line()
	f.Comment("// CleanupTerminal unregisters every machine in a terminal state and returns how many.")
	f.Add(recv()).Id("CleanupTerminal").Params().Int().Block(
		Id("done").Op(":=").Id("r").Dot("Where").Call(Func().Params(Id("m").Op("*").Id(T)).Bool().Block(Return(Id("m").Dot("state").Dot("IsTerminal").Call()))),
		For(List(Id("_"), Id("m")).Op(":=").Range().Id("done")).Block(Id("r").Dot("Remove").Call(Id("m").Dot("ID"))),
		Return(Len(Id("done"))),
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
