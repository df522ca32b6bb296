package gogen

import (
	"fmt"
	"strings"

	. "github.com/dave/jennifer/jen"
	"github.com/fsmgen/fsmgen/internal/ir"
)

func ctxParam() Code { return Id("ctx").Qual("context", "Context") }

// literal is a constant of the field's type.
func (g *gen) literal(fd *ir.Field, lit ir.Literal) *Statement {
	switch fd.Type.Kind {
	case ir.Enum:
		for _, v := range fd.Values {
			if v == lit.Str {
				return Id(g.enumType(fd) + goNameOf(v))
			}
		}
		return Lit(0)
	case ir.String:
		return Lit(lit.Str)
	case ir.Bool:
		return Lit(lit.Bool)
	case ir.Int:
		return Lit(int(lit.Num))
	case ir.Duration:
		return Qual("time", "Duration").Call(Lit(int64(lit.Num)))
	}
	return Lit(lit.Num)
}

var _ = strings.Join

// hooksIface emits the hooks interface and its no-op base.
func (g *gen) hooksIface(f *File) {
	m, T := g.m, g.T
	if g.hooks {
		var methods, nops []Code
		for _, gu := range m.Guards {
			if gu.Kind != ir.Hook {
				continue
			}
			methods = append(methods, Comment(comment(fmt.Sprintf("%s is the guard %s.%s", gu.GoName, quoted(gu.Name), docSuffix(gu.Doc)))),
				Id(gu.GoName).Params(ctxParam(), Id("m").Op("*").Id(T), Id("s").Id(g.name("Step"))).Bool())
			nops = append(nops, Func().Params(Id(g.name("NopHooks"))).Id(gu.GoName).Params(Qual("context", "Context"), Op("*").Id(T), Id(g.name("Step"))).Bool().Block(Return(False())))
		}
		for _, a := range m.Actions {
			if a.Effect {
				methods = append(methods, Comment(comment(fmt.Sprintf("%s is the effect %s, called once the transition is committed; an error\nmeans not delivered, and the call is made again (with a store).%s", a.GoName, quoted(a.Name), docSuffix(a.Doc)))),
					Id(a.GoName).Params(ctxParam(), Id("e").Id(g.name("Effect"))).Error())
				nops = append(nops, Func().Params(Id(g.name("NopHooks"))).Id(a.GoName).Params(Qual("context", "Context"), Id(g.name("Effect"))).Error().Block(Return(Nil())))
				continue
			}
			if a.MayFail {
				methods = append(methods, Comment(comment(fmt.Sprintf("%s is the action %s, which may fail: an error refuses the transition\n(an ActionError wrapping it) and puts the machine back as it was.%s", a.GoName, quoted(a.Name), docSuffix(a.Doc)))),
					Id(a.GoName).Params(ctxParam(), Id("m").Op("*").Id(T), Id("s").Id(g.name("Step"))).Error())
				nops = append(nops, Func().Params(Id(g.name("NopHooks"))).Id(a.GoName).Params(Qual("context", "Context"), Op("*").Id(T), Id(g.name("Step"))).Error().Block(Return(Nil())))
				continue
			}
			methods = append(methods, Comment(comment(fmt.Sprintf("%s is the action %s.%s", a.GoName, quoted(a.Name), docSuffix(a.Doc)))),
				Id(a.GoName).Params(ctxParam(), Id("m").Op("*").Id(T), Id("s").Id(g.name("Step"))))
			nops = append(nops, Func().Params(Id(g.name("NopHooks"))).Id(a.GoName).Params(Qual("context", "Context"), Op("*").Id(T), Id(g.name("Step"))).Block())
		}
		if len(m.Checkpoints) > 0 {
			methods = append(methods, doc("Checkpoint is called at each checkpoint the transition reaches, after the state\nchanged and entry actions ran. An error is returned from Fire wrapped in a\nCheckpointError. Without a store the transition has happened but was not saved;\nwith one it was taken back and nothing changed."),
				Id("Checkpoint").Params(ctxParam(), Id("m").Op("*").Id(T), Id("cp").Id("Checkpoint"), Id("s").Id(g.name("Step"))).Error())
			nops = append(nops, Func().Params(Id(g.name("NopHooks"))).Id("Checkpoint").Params(Qual("context", "Context"), Op("*").Id(T), Id("Checkpoint"), Id(g.name("Step"))).Error().Block(Return(Nil())))
		}
		order := "guards, exit actions of the old state, the\ntransition's actions, entry actions of the new state, checkpoints"
		if g.effects() {
			order += "; then, once the\ntransition is committed, its effects (fsmrt.EffectCall)"
		}
		f.Comment(comment(g.name("Hooks") + " is what the program implements: guards, actions and checkpoints. Fire calls\nthem synchronously, in this order: " + order + ". A hook must not fire\nevents on the same machine."))
		f.Type().Id(g.name("Hooks")).Interface(methods...)
		f.Line()
		f.Comment(comment(g.name("NopHooks") + " implements " + g.name("Hooks") + " with guards that never hold and actions that do\nnothing. Embed it to implement only some hooks."))
		f.Type().Id(g.name("NopHooks")).Struct()
		f.Line()
		for _, n := range nops {
			f.Add(n)
			f.Line()
		}
		f.Var().Id("_").Id(g.name("Hooks")).Op("=").Id(g.name("NopHooks")).Values()
		f.Line()
	}

}
