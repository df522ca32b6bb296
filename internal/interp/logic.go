package interp

import "github.com/fsmgen/fsmgen/internal/ir"

// logic evaluates guard expression g as the generated machine does: left to right, and
// and or asking no argument after the one that decides them. A statechart's in is answered
// by flattening already; one left is answered from the configuration.
func (x *Machine) logic(g *ir.Guard, in Inputs) bool {
	return g.Expr.Eval(func(h *ir.Guard) bool { return x.holds(h, in) }, func(n *ir.Node) bool {
		for _, a := range x.State.Config {
			if a == n || a.IsDescendant(n) {
				return true
			}
		}
		return false
	})
}
