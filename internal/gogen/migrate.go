package gogen

import (
	"fmt"
	"strings"

	. "github.com/dave/jennifer/jen"
)

// migrateName is the name of the function that moves stored instances to this spec:
// Migrate<Machine>s.
func (g *gen) migrateName() string {
	if strings.HasSuffix(g.T, "s") {
		return "Migrate" + g.T + "es"
	}
	return "Migrate" + g.T + "s"
}

// migrateAll emits Migrate<Machine>s, for a spec whose code loads instances of older
// versions (it declares migrations, or its version lock records older versions).
func (g *gen) migrateAll(f *File) {
	if len(g.m.Migrations) == 0 {
		return
	}
	T := g.T
	f.Comment(comment(fmt.Sprintf("%s moves the machines stored in store under the older versions of the spec to\nthis one, a batch at a time: each is loaded as Replay%s loads it and committed under\nthis spec (Migrate), in a commit of its own, so that a run stopped at any point leaves\neach under one spec and a second run finishes the job (fsmrt.MigrateStored). With\no.DryRun it changes nothing and reports what would move.", g.migrateName(), T)))
	f.Func().Id(g.migrateName()).Params(append(append([]Code{ctxParam(), Id("store").Qual(rt, "Store")}, g.hookParams()...), Id("o").Qual(rt, "MigrateOptions"))...).Params(Qual(rt, "MigrateReport"), Error()).Block(
		Return(Qual(rt, "MigrateStored").Call(Id("ctx"), Id("store"), Id("def").Dot("Spec").Dot("Name").Call(),
			Func().Params(ctxParam(), Id("id").String()).Params(Op("*").Add(g.core()), Error()).Block(
				List(Id("m"), Err()).Op(":=").Id("Replay"+T).Call(append([]Code{Id("ctx"), Id("store"), Id("id")}, g.hookArgs()...)...),
				If(Err().Op("!=").Nil()).Block(Return(Nil(), Err())),
				Id("m").Dot("SetStore").Call(Id("store")),
				Return(self(), Nil()),
			), Id("o"))),
	)
	f.Line()
}
