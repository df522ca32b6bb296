package gogen

import (
	"math"

	. "github.com/dave/jennifer/jen"
	"github.com/fsmgen/fsmgen/internal/ir"
)

// invariants reports whether some context field has constraints that hold whenever it is
// set (ir.Field.Invariant), which every transition then checks.
func (g *gen) invariants() bool { return len(g.m.Invariants()) > 0 }

// invariantTable emits contextBounds, the bounds and item counts of the context fields
// that hold whenever they are set, as data the runtime checks (fsmrt.Bound): a row per
// field, with a function that reads it and the messages a state that requires it reports.
func (g *gen) invariantTable(f *File) {
	fields := g.m.Invariants()
	if len(fields) == 0 {
		return
	}
	ctx := g.name("Context")
	f.Comment("// contextBounds hold whenever their fields are set; every transition checks them.")
	f.Var().Id("contextBounds").Op("=").Index(Op("...")).Qual(rt, "Bound").Types(Id(ctx)).ValuesFunc(func(v *Group) {
		for _, fd := range fields {
			v.Line().Values(g.boundRow(fd, ctx)...)
		}
		v.Line()
	})
	f.Line()
}

// boundRow is the fsmrt.Bound of field fd, a field of the context type ctx.
func (g *gen) boundRow(fd *ir.Field, ctx string) []Code {
	value := Id("c").Dot(fd.GoName)
	low, high := fd.MinProblem(), fd.MaxProblem()
	var has []string
	lo, hi := fd.Min, fd.Max
	if fd.Type.Collection() {
		value, low, high = Len(value), "", ""
		if fd.MinItems >= 0 {
			lo = ir.Literal{Set: true, Num: float64(fd.MinItems)}
		}
		if fd.MaxItems >= 0 {
			hi = ir.Literal{Set: true, Num: float64(fd.MaxItems)}
		}
	}
	if fd.Message != "" {
		low, high = fd.Message, fd.Message
	}
	read := Float64().Parens(value)
	if fd.Type.Kind == ir.Float && !fd.Type.Collection() {
		read = value
	}
	row := []Code{Id("Field").Op(":").Lit(fd.Name),
		Id("Value").Op(":").Func().Params(Id("c").Op("*").Id(ctx)).Float64().Add(inline(Return(read)))}
	if lo.Set {
		has = append(has, map[bool]string{false: "BoundMin", true: "BoundAbove"}[fd.MinExclusive])
		if lo.Num != 0 {
			row = append(row, Id("Min").Op(":").Add(boundLit(lo.Num)))
		}
	}
	if hi.Set {
		has = append(has, map[bool]string{false: "BoundMax", true: "BoundBelow"}[fd.MaxExclusive])
		if hi.Num != 0 {
			row = append(row, Id("Max").Op(":").Add(boundLit(hi.Num)))
		}
	}
	if fd.Type.Collection() {
		has = append(has, "BoundItems")
	}
	var kinds []Code
	for _, h := range has {
		kinds = append(kinds, Qual(rt, h))
	}
	row = append(row, Id("Has").Op(":").Add(joinOr(kinds)))
	if low != "" && lo.Set {
		row = append(row, Id("Low").Op(":").Lit(low))
	}
	if high != "" && hi.Set {
		row = append(row, Id("High").Op(":").Lit(high))
	}
	return row
}

// boundLit is a bound as an untyped constant: an integer where it is one.
func boundLit(v float64) *Statement {
	if v == math.Trunc(v) && math.Abs(v) < 1<<53 {
		return Lit(int(v))
	}
	return Lit(v)
}

// joinOr is a | b | ... .
func joinOr(cs []Code) *Statement {
	s := Add(cs[0])
	for _, c := range cs[1:] {
		s = s.Op("|").Add(c)
	}
	return s
}

// invariantOps emits ops.Invariants (fsmrt.Invariants), which checks contextBounds.
func (g *gen) invariantOps(f *File) {
	if !g.invariants() {
		return
	}
	f.Func().Params(Id("m").Op("*").Id("ops")).Id("Invariants").Params(Id("c").Op("*").Id(g.name("Context")), Id("errs").Index().Id("FieldError")).Index().Id("FieldError").Add(
		inline(Return(Qual(rt, "CheckBounds").Call(Id("c"), Id("contextBounds").Index(Op(":")), Id("errs")))))
	f.Line()
}
