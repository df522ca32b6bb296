package gogen

import (
	"fmt"

	. "github.com/dave/jennifer/jen"
	"github.com/fsmgen/fsmgen/internal/ir"
)

// tripLimit is the limit a transition compares a counter with: the constant, or the field
// of a configurable counter.
func tripLimit(c *ir.Counter) *Statement {
	if c.Configurable {
		return Id("m").Dot(c.LimitField())
	}
	return Lit(c.Limit)
}

// bound is the limit in force as the spec writes it (the max for a max counter).
func bound(c *ir.Counter) *Statement {
	if !c.Configurable {
		return Lit(c.Bound())
	}
	if c.Max {
		return Id("m").Dot(c.LimitField()).Op("-").Lit(1)
	}
	return Id("m").Dot(c.LimitField())
}

// summaryExpr builds the summary a tripped limit writes, as ir.Counter.SummaryText does:
// to is the state the transition would have entered.
func summaryExpr(c *ir.Counter, to Code) *Statement {
	before, after, end := c.SummaryParts()
	var e *Statement
	if c.Configurable {
		e = Lit(before).Op("+").Qual("strconv", "Itoa").Call(bound(c))
	} else {
		e = Lit(before + fmt.Sprint(c.Bound()))
	}
	return e.Op("+").Lit(after).Op("+").Id("st").Dot("From").Dot("String").Call().Op("+").Lit(" -> ").Op("+").Add(to).Dot("String").Call().Op("+").Lit(end)
}

// limits emits the accessors of configurable limits, and what snapshots, the event log and
// replaying use to keep them.
func (g *gen) limits(f *File) {
	cs := g.configurables
	if len(cs) == 0 {
		return
	}
	T := g.T
	recv := func() *Statement { return Func().Params(Id("m").Op("*").Id(T)) }
	for _, c := range cs {
		key, get, set := c.BoundKey(), c.LimitMethod()+c.GoName, "Set"+c.LimitMethod()+c.GoName
		f.Comment(comment(fmt.Sprintf("%s returns the %s of counter %s in force: %d unless %s changed it.", get, key, quoted(c.Name), c.Bound(), set)))
		f.Add(recv()).Id(get).Params().Int().Block(Return(bound(c)))
		f.Line()
		var what, check string
		low := 1
		if c.Max {
			low = 0
			what = "the counter may reach n; the increment that would take it past n trips it"
		} else {
			what = "the increment that makes the counter reach n trips it"
		}
		check = fmt.Sprintf("%s %%d is below %d", key, low)
		f.Comment(comment(fmt.Sprintf("%s changes the %s of counter %s (%s) and is kept in snapshots and the\nevent log. It refuses n below %d.", set, key, quoted(c.Name), what, low)))
		f.Add(recv()).Id(set).Params(Id("n").Int()).Error().Block(
			If(Id("n").Op("<").Lit(low)).Block(Return(Qual("fmt", "Errorf").Call(Lit(g.m.Package+": counter %s: "+check), Lit(c.Name), Id("n")))),
			Id("m").Dot(c.LimitField()).Op("=").Add(func() *Statement {
				if c.Max {
					return Id("n").Op("+").Lit(1)
				}
				return Id("n")
			}()),
			Return(Nil()),
		)
		f.Line()
	}

	f.Comment("// changedLimits returns the configurable limits changed at run time, by counter name, as\n// the spec writes them; nil when none is.")
	f.Add(recv()).Id("changedLimits").Params().Map(String()).Int().BlockFunc(func(b *Group) {
		b.Var().Id("out").Map(String()).Int()
		for _, c := range cs {
			b.If(Id("m").Dot(c.LimitField()).Op("!=").Lit(c.Limit)).Block(
				If(Id("out").Op("==").Nil()).Block(Id("out").Op("=").Map(String()).Int().Values()),
				Id("out").Index(Lit(c.Name)).Op("=").Id("m").Dot(c.LimitMethod()+c.GoName).Call(),
			)
		}
		b.Return(Id("out"))
	})
	f.Line()

	f.Comment("// setLimits sets every configurable limit: the spec's, unless changed names it.")
	f.Add(recv()).Id("setLimits").Params(Id("changed").Map(String()).Int()).Error().BlockFunc(func(b *Group) {
		for _, c := range cs {
			b.Id("m").Dot(c.LimitField()).Op("=").Lit(c.Limit)
		}
		var cases []Code
		for _, c := range cs {
			cases = append(cases, Case(Lit(c.Name)).Block(Err().Op("=").Id("m").Dot("Set"+c.LimitMethod()+c.GoName).Call(Id("n"))))
		}
		cases = append(cases, Default().Block(Err().Op("=").Qual("fmt", "Errorf").Call(Lit(g.m.Package+": no configurable counter %q"), Id("name"))))
		b.For(List(Id("name"), Id("n")).Op(":=").Range().Id("changed")).Block(
			Var().Err().Error(),
			Switch(Id("name")).Block(cases...),
			If(Err().Op("!=").Nil()).Block(Return(Err())),
		)
		b.Return(Nil())
	})
	f.Line()
}
