package budget

import "github.com/fsmgen/fsmgen/internal/ir"

// logicCode is the size of the guard expressions' programs in the generated def: a row per
// expression, a few bytes per node.
func logicCode(m *ir.Machine) float64 {
	var nodes func(x *ir.Expr) int
	nodes = func(x *ir.Expr) int {
		n := 1
		for _, a := range x.Args {
			n += nodes(a)
		}
		return n
	}
	var out float64
	for _, g := range m.Logic {
		out += 8 + 5*float64(nodes(g.Expr))
	}
	return out
}
