package chartdiff

import (
	"fmt"
	"strings"
)

// Expr is a guard expression of a transition (Trans.Expr): a guard of Chart.Guards
// (Op ""), the and, or or not of others, or in of a state (State, its path).
type Expr struct {
	Op    string // "", "and", "or", "not", "in"
	Guard string
	State string
	Args  []*Expr
}

// Spec is the expression as a spec writes it, in YAML's flow style.
func (x *Expr) Spec() string {
	switch x.Op {
	case "":
		return fmt.Sprintf("%q", x.Guard)
	case "in":
		return fmt.Sprintf("{ in: %q }", x.State)
	case "not":
		return "{ not: " + x.Args[0].Spec() + " }"
	}
	args := make([]string, len(x.Args))
	for i, a := range x.Args {
		args[i] = a.Spec()
	}
	return "{ " + x.Op + ": [" + strings.Join(args, ", ") + "] }"
}

// xstate is the expression in the XState config, as the runner reads it: a guard's name,
// {"type": "xstate.and" or "xstate.or", "guards": [...]}, {"type": "xstate.not", "guards":
// [g]} and {"type": "xstate.stateIn", "stateValue": "#id"}, the properties XState's own
// and, or, not and stateIn guards carry (the runner makes them those).
func (c *Chart) xstateGuard(x *Expr) any {
	switch x.Op {
	case "":
		return x.Guard
	case "in":
		return object{{"type", "xstate.stateIn"}, {"stateValue", c.ref(x.State)}}
	}
	guards := make([]any, len(x.Args))
	for i, a := range x.Args {
		guards[i] = c.xstateGuard(a)
	}
	return object{{"type", "xstate." + x.Op}, {"guards", guards}}
}

// check reports a guard or state the expression names that the chart does not have.
func (c *Chart) checkExpr(x *Expr) error {
	switch x.Op {
	case "":
		if _, ok := c.Guards[x.Guard]; !ok {
			return fmt.Errorf("guard %q is not declared", x.Guard)
		}
	case "in":
		if n := c.Lookup(x.State); n == nil || n.Kind.IsHistory() || n.Parent == nil {
			return fmt.Errorf("in: state %q not found", x.State)
		}
	case "and", "or", "not":
		if len(x.Args) == 0 || x.Op == "not" && len(x.Args) != 1 {
			return fmt.Errorf("%s of %d expressions", x.Op, len(x.Args))
		}
		for _, a := range x.Args {
			if err := c.checkExpr(a); err != nil {
				return err
			}
		}
	default:
		return fmt.Errorf("unknown operation %q", x.Op)
	}
	return nil
}

// logic makes guard expressions of some of the chart's guards: half the guarded
// transitions and a few unguarded ones on an event get an and, or or not over guards and
// in of states. Each guard and state appears once in an expression, and a state of in is
// one that may be active or not while the source is (in another region, or within the
// source), so that no expression is decided never to hold (which the checker refuses).
// An eventless transition's expression asks no in.
func (g *gen) logic(c *Chart) {
	r := g.r
	var guards []string
	for i := range g.opt.Guards {
		guards = append(guards, fmt.Sprintf("g%d", i))
	}
	nodes := c.Nodes()
	for _, n := range nodes {
		var states []string // the states whose in is open while n is active
		for _, m := range nodes[1:] {
			if m.Kind.IsHistory() || m == n || isDescendant(n, m) {
				continue
			}
			if isDescendant(m, n) || lca(n, m).Kind == Parallel {
				states = append(states, m.Path())
			}
		}
		for _, t := range n.On {
			switch {
			case t.Guard != "" && r.IntN(2) == 0:
			case t.Guard == "" && t.Event != "" && r.IntN(8) == 0:
			default:
				continue
			}
			gs := append([]string(nil), guards...)
			ss := append([]string(nil), states...)
			if t.Always {
				// XState selects eventless transitions in the order the active states
				// were entered, fsmgen in document order: they differ when two regions'
				// transitions conflict and one became enabled by in while its source
				// stayed active (docs/spec.md, Guard expressions).
				ss = nil
			}
			var atom func() *Expr
			atom = func() *Expr {
				if len(ss) > 0 && (len(gs) == 0 || r.IntN(3) == 0) {
					i := r.IntN(len(ss))
					x := &Expr{Op: "in", State: ss[i]}
					ss = append(ss[:i], ss[i+1:]...)
					return x
				}
				i := r.IntN(len(gs))
				x := &Expr{Guard: gs[i]}
				gs = append(gs[:i], gs[i+1:]...)
				return x
			}
			var expr func(depth int) *Expr
			expr = func(depth int) *Expr {
				if depth == 0 || len(gs)+len(ss) < 2 || r.IntN(3) == 0 {
					x := atom()
					if r.IntN(3) == 0 {
						x = &Expr{Op: "not", Args: []*Expr{x}}
					}
					return x
				}
				x := &Expr{Op: []string{"and", "or"}[r.IntN(2)]}
				for k := 2 + r.IntN(2); k > 0 && len(gs)+len(ss) > 0; k-- {
					x.Args = append(x.Args, expr(depth-1))
				}
				if len(x.Args) == 1 {
					return x.Args[0]
				}
				if r.IntN(5) == 0 {
					x = &Expr{Op: "not", Args: []*Expr{x}}
				}
				return x
			}
			x := expr(2)
			if x.Op == "" {
				continue // a guard alone: what the transition had
			}
			t.Guard, t.Expr = "", x
		}
	}
}
