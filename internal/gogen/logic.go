package gogen

import (
	"slices"

	. "github.com/dave/jennifer/jen"

	"github.com/fsmgen/fsmgen/internal/ir"
)

// guardIndex is the index of guard g in the engine's tables: its place among the spec's
// guards, or after them, for an expression (fsmrt.Def.LogicBase).
func guardIndex(m *ir.Machine, g *ir.Guard) int {
	if g.Kind == ir.Logic {
		return len(m.Guards) + g.Index
	}
	return slices.Index(m.Guards, g)
}

// logicDef adds the guard expressions to def, each as its program (fsmrt.Def.Logic): a
// row of int32 per expression, however large the spec.
func logicDef(m *ir.Machine, d *fields) {
	if len(m.Logic) == 0 {
		return
	}
	d.add("Logic", Index().Index().Int32().ValuesFunc(func(rows *Group) {
		for _, g := range m.Logic {
			rows.Line().ValuesFunc(func(v *Group) {
				for _, x := range logicProgram(m, g.Expr, nil) {
					v.Lit(x)
				}
			})
		}
		rows.Line()
	}))
	d.add("LogicBase", Lit(len(m.Guards)))
}

// logicProgram appends expression x to program p in prefix order (fsmrt.LogicAnd).
func logicProgram(m *ir.Machine, x *ir.Expr, p []int) []int {
	switch x.Op {
	case ir.ExprGuard:
		return append(p, guardIndex(m, x.Guard))
	case ir.ExprNot:
		return logicProgram(m, x.Args[0], append(p, -1))
	case ir.ExprAnd, ir.ExprTrue:
		p = append(p, -2, len(x.Args))
	case ir.ExprIn:
		// Flattening answers every in: a declared expression that asks one is kept for the
		// documents, and no transition asks it.
		return append(p, -3, 0)
	default: // ExprOr, ExprFalse (an or of nothing)
		p = append(p, -3, len(x.Args))
	}
	for _, a := range x.Args {
		p = logicProgram(m, a, p)
	}
	return p
}
