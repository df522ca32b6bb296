package lower

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/fsmgen/fsmgen/internal/ir"
	"github.com/fsmgen/fsmgen/spec"
)

// Guard expressions: and, or, not over guards, and in on a statechart's active
// configuration, written in if and unless or declared as guards of their own. An
// expression is a guard of kind Logic (ir.Machine.Logic): a condition names it as it names
// any guard, so that flattening, the interpreter and the generated tables treat it as one
// guard, evaluated left to right with and and or stopping at the argument that decides
// them. In a statechart flattening answers every in from the configuration it compiles
// (what is left is an expression of guards alone); a flat machine refuses in.

// maxLogicAtoms bounds the guards and states an expression may ask for the never-true
// check to decide it (2^n assignments).
const maxLogicAtoms = 12

// declareLogic declares guard g, an expression.
func (l *lowerer) declareLogic(g *spec.Guard) {
	gu := &ir.Guard{Index: len(l.m.Logic), Name: g.Name.Value, Doc: g.Doc.Value, Pos: g.Name.Pos, Kind: ir.Logic}
	l.m.Logic = append(l.m.Logic, gu)
	l.gu[gu.Name] = gu
}

// resolveLogic resolves the declared expressions and refuses a cycle among them.
func (l *lowerer) resolveLogic() {
	for _, g := range l.f.Guards {
		gu := l.gu[g.Name.Value]
		if g.Expr == nil || gu == nil || gu.Pos != g.Name.Pos || gu.Kind != ir.Logic {
			continue
		}
		for _, other := range []struct {
			set  bool
			pos  spec.Pos
			name string
		}{{g.Counter.Set, g.Counter.Pos, "counter"}, {g.Field.Set, g.Field.Pos, "field"}, {g.AtLeast.Set, g.AtLeast.Pos, "at_least"},
			{g.Below.Set, g.Below.Pos, "below"}, {g.Equals.Set, g.Equals.Pos, "equals"}, {g.Contains.Set, g.Contains.Pos, "contains"}} {
			if other.set {
				l.ds.Errorf(other.pos, "guard %q is an expression (%s): it cannot also have %s", gu.Name, g.Expr.Op, other.name)
			}
		}
		x, ok := l.expr(g.Expr)
		if !ok {
			x = &ir.Expr{Op: ir.ExprFalse, Pos: g.Expr.Pos}
			l.failed["guard"] = true
		}
		gu.Expr = x
	}
	// A cycle: each guard on it is given a constant, so that nothing walks it for ever.
	state := map[*ir.Guard]int{} // 1: on the path, 2: done
	var path []*ir.Guard
	var visit func(g *ir.Guard)
	var walk func(x *ir.Expr)
	walk = func(x *ir.Expr) {
		if x.Op == ir.ExprGuard && x.Guard.Kind == ir.Logic {
			visit(x.Guard)
		}
		for _, a := range x.Args {
			walk(a)
		}
	}
	visit = func(g *ir.Guard) {
		switch state[g] {
		case 1:
			i := slices.Index(path, g)
			var names []string
			for _, p := range path[i:] {
				names = append(names, p.Name)
			}
			names = append(names, g.Name)
			l.ds.Errorf(g.Pos, "guard %q is defined through itself: %s", g.Name, strings.Join(names, " -> "))
			for _, p := range path[i:] {
				p.Expr = &ir.Expr{Op: ir.ExprFalse, Pos: p.Pos}
				state[p] = 2
			}
			l.failed["guard"] = true
			return
		case 2:
			return
		}
		if g.Expr == nil {
			g.Expr = &ir.Expr{Op: ir.ExprFalse, Pos: g.Pos}
			return
		}
		state[g] = 1
		path = append(path, g)
		walk(g.Expr)
		path = path[:len(path)-1]
		state[g] = 2
	}
	for _, g := range l.m.Logic {
		visit(g)
	}
	for _, g := range l.m.Logic {
		if state[g] == 2 && g.Expr.Op != ir.ExprFalse {
			l.neverHolds(g.Expr, nil, fmt.Sprintf("guard %q", g.Name))
		}
	}
}

// expr resolves an expression as written; ok is false when part of it did not resolve.
func (l *lowerer) expr(x *spec.GuardExpr) (*ir.Expr, bool) {
	if x.Bad {
		return nil, false
	}
	switch x.Op {
	case "":
		g, ok := ref(l, "guard", l.gu, x.Name)
		if !ok {
			return nil, false
		}
		return &ir.Expr{Op: ir.ExprGuard, Guard: g, Pos: x.Pos}, true
	case "in":
		if l.cs == nil {
			l.ds.Errorf(x.Name.Pos, "in asks whether a state is active, which only a statechart can ask: a flat machine is in one state at a time; name the states in from instead")
			return nil, false
		}
		n, ok := l.nodeRef(x.Name)
		if !ok {
			return nil, false
		}
		if n.Kind == ir.NodeHistory {
			l.ds.Errorf(x.Name.Pos, "in names history state %q, which is never active: name a state", n.Path)
			return nil, false
		}
		return &ir.Expr{Op: ir.ExprIn, State: n, Pos: x.Pos}, true
	}
	out := &ir.Expr{Op: ir.ExprAnd, Pos: x.Pos}
	switch x.Op {
	case "or":
		out.Op = ir.ExprOr
	case "not":
		out.Op = ir.ExprNot
	}
	ok := true
	for _, a := range x.Args {
		y, good := l.expr(a)
		ok = ok && good
		out.Args = append(out.Args, y)
	}
	return out, ok
}

// exprConds resolves a transition's or a choice's guards: its names (conds) and, when it
// has them, its expressions. An and in if, and a list in if or unless, give a condition
// per argument (each must hold; in unless, each must fail); a name alone, or not of a
// name, a plain condition. src is the source of a
// statechart's transition (nil otherwise), against which the never-true check answers
// the in that it decides.
func (l *lowerer) exprConds(ifs, unless []spec.Str, ifx, unlessx *spec.GuardExpr, src *ir.Node) ([]ir.Cond, bool) {
	out, known := l.conds(ifs, unless)
	if ifx == nil && unlessx == nil {
		return out, known
	}
	var pos spec.Pos
	for i, sx := range []*spec.GuardExpr{ifx, unlessx} {
		if sx == nil {
			continue
		}
		if pos == (spec.Pos{}) {
			pos = sx.Pos
		}
		x, ok := l.expr(sx)
		if !ok {
			known = false
			continue
		}
		if x.Op == ir.ExprAnd && (i == 0 || sx.List) {
			// Every item of a list must hold (if) or fail (unless), as names in a list.
			for _, a := range x.Args {
				out = append(out, l.cond(a, i == 1))
			}
			continue
		}
		out = append(out, l.cond(x, i == 1))
	}
	if known {
		conj := &ir.Expr{Op: ir.ExprAnd, Pos: pos}
		for _, c := range out {
			y := &ir.Expr{Op: ir.ExprGuard, Guard: c.Guard, Pos: pos}
			if c.Negate {
				y = &ir.Expr{Op: ir.ExprNot, Args: []*ir.Expr{y}, Pos: pos}
			}
			conj.Args = append(conj.Args, y)
		}
		if l.neverHolds(conj, src, "the transition's guard") {
			known = false
		}
	}
	return out, known
}

// cond is the condition that x holds (fails, negate): on a guard itself when x is one or
// the not of one, else on the expression as a guard of kind Logic.
func (l *lowerer) cond(x *ir.Expr, negate bool) ir.Cond {
	for x.Op == ir.ExprNot {
		x, negate = x.Args[0], !negate
	}
	if x.Op == ir.ExprGuard {
		return ir.Cond{Guard: x.Guard, Negate: negate}
	}
	return ir.Cond{Guard: l.logicGuard(x), Negate: negate}
}

// logicGuard is the guard of kind Logic that evaluates x: one per expression (by its
// structure: two guards' names may hold " and ", so that different expressions can read
// alike), named by its text.
func (l *lowerer) logicGuard(x *ir.Expr) *ir.Guard {
	name := "(" + x.String() + ")"
	if x.Op == ir.ExprIn {
		name = x.String()
	}
	if l.logic == nil {
		l.logic = map[string]*ir.Guard{}
	}
	key := exprKey(x)
	if g := l.logic[key]; g != nil {
		return g
	}
	g := &ir.Guard{Index: len(l.m.Logic), Name: name, Pos: x.Pos, Kind: ir.Logic, Expr: x, Inline: true}
	l.m.Logic = append(l.m.Logic, g)
	l.logic[key] = g
	return g
}

// exprKey writes x's structure: operations, and guards and states by index.
func exprKey(x *ir.Expr) string {
	switch x.Op {
	case ir.ExprGuard:
		if x.Guard.Kind == ir.Logic {
			return "l" + strconv.Itoa(x.Guard.Index)
		}
		return "g" + strconv.Itoa(x.Guard.Index)
	case ir.ExprIn:
		return "i" + strconv.Itoa(x.State.Index)
	}
	out := strconv.Itoa(int(x.Op)) + "("
	for _, a := range x.Args {
		out += exprKey(a) + ","
	}
	return out + ")"
}

// neverHolds reports (and says so, of what) an expression that no answer of its guards
// makes hold, its in answered where the source src decides them: a state around src, or
// src itself, is active; a state of the same compound state as src, or of one around it,
// but neither src nor around it nor within it, is not. Guards are taken as independent of
// one another; an expression asking more than maxLogicAtoms of them is not decided.
func (l *lowerer) neverHolds(x *ir.Expr, src *ir.Node, what string) bool {
	var guards []*ir.Guard
	var nodes []*ir.Node
	var collect func(x *ir.Expr)
	collect = func(x *ir.Expr) {
		switch x.Op {
		case ir.ExprGuard:
			if x.Guard.Kind == ir.Logic {
				collect(x.Guard.Expr)
			} else if !slices.Contains(guards, x.Guard) {
				guards = append(guards, x.Guard)
			}
		case ir.ExprIn:
			if src == nil || inDecided(x.State, src) == 0 {
				if !slices.Contains(nodes, x.State) {
					nodes = append(nodes, x.State)
				}
			}
		}
		for _, a := range x.Args {
			collect(a)
		}
	}
	collect(x)
	n := len(guards) + len(nodes)
	if n > maxLogicAtoms {
		return false
	}
	for bits := 0; bits < 1<<n; bits++ {
		leaf := func(g *ir.Guard) bool { return bits&(1<<slices.Index(guards, g)) != 0 }
		active := func(s *ir.Node) bool {
			if src != nil {
				if d := inDecided(s, src); d != 0 {
					return d > 0
				}
			}
			return bits&(1<<(len(guards)+slices.Index(nodes, s))) != 0
		}
		if x.Eval(leaf, active) {
			return false
		}
	}
	while := ""
	if src != nil && x.HasIn() {
		while = fmt.Sprintf(" while its source %q is active", src.Path)
	}
	l.ds.Errorf(x.Pos, "%s can never hold%s: %s", what, while, x.String())
	return true
}

// inDecided says whether state s is active whenever src is (1), never when src is (-1),
// or either (0).
func inDecided(s, src *ir.Node) int {
	if s == src || src.IsDescendant(s) || s.Parent == nil {
		return 1
	}
	if s.IsDescendant(src) {
		return 0
	}
	// The nearest state around both: a parallel state has both active at once, a compound
	// state only one of its children.
	for a := src.Parent; a != nil; a = a.Parent {
		if s.IsDescendant(a) {
			if a.Kind == ir.NodeParallel {
				return 0
			}
			return -1
		}
	}
	return 0
}

// resolveIn specialises conditions cs for configuration active: the in of their
// expressions answered. ok is false when they can never hold there.
func (l *lowerer) resolveIn(cs []ir.Cond, active func(*ir.Node) bool) ([]ir.Cond, bool) {
	var out []ir.Cond
	changed := false
	for _, c := range cs {
		if c.Guard.Kind != ir.Logic || !c.Guard.Expr.HasIn() {
			out = append(out, c)
			continue
		}
		changed = true
		r := c.Guard.Expr.Resolve(active)
		switch r.Op {
		case ir.ExprTrue:
			if c.Negate {
				return nil, false
			}
			continue
		case ir.ExprFalse:
			if !c.Negate {
				return nil, false
			}
			continue
		}
		out = append(out, l.cond(r, c.Negate))
	}
	if !changed {
		return cs, true
	}
	return andConds(nil, out)
}

// pruneLogic keeps, once a statechart is flattened, the declared expressions and those its
// transitions use (those written in transitions that ask in are answered in each), and
// numbers them.
func (l *lowerer) pruneLogic() {
	if len(l.m.Logic) == 0 {
		return
	}
	used := map[*ir.Guard]bool{}
	var mark func(g *ir.Guard)
	mark = func(g *ir.Guard) {
		if g.Kind != ir.Logic || used[g] {
			return
		}
		used[g] = true
		var walk func(x *ir.Expr)
		walk = func(x *ir.Expr) {
			if x.Op == ir.ExprGuard {
				mark(x.Guard)
			}
			for _, a := range x.Args {
				walk(a)
			}
		}
		walk(g.Expr)
	}
	for _, t := range l.m.Transitions {
		for _, c := range t.Conds {
			mark(c.Guard)
		}
		for _, ch := range t.Choices {
			for _, c := range ch.Conds {
				mark(c.Guard)
			}
		}
	}
	var keep []*ir.Guard
	for _, g := range l.m.Logic {
		if used[g] || !g.Inline {
			g.Index = len(keep)
			keep = append(keep, g)
		}
	}
	l.m.Logic = keep
}

// isActive answers in for configuration c.
func (f *flattener) isActive(c config) func(*ir.Node) bool {
	return func(n *ir.Node) bool { return c[n.Index] }
}

// entryOrderNote is what a warning that eventless transition t1 is preempted by t2 adds
// when in decides one of them: XState selects eventless transitions in the order their
// sources were entered, not in document order, and in can enable one whose source stayed
// active while the other's was just entered.
func entryOrderNote(t1, t2 *ir.ChartTransition) string {
	if !t1.Always || !t2.Always {
		return ""
	}
	for _, t := range []*ir.ChartTransition{t1, t2} {
		for _, c := range t.Conds {
			if c.Guard.Kind == ir.Logic && c.Guard.Expr.HasIn() {
				return " (XState selects eventless transitions in the order their sources were entered: where in enables one while its source stays active and the other's was just entered, it takes the one entered first)"
			}
		}
	}
	return ""
}

// inClause is what the warning that transition t is never taken adds when its guard asks
// in: that may be why.
func inClause(t *ir.ChartTransition) string {
	for _, c := range t.Conds {
		if c.Guard.Kind == ir.Logic && c.Guard.Expr.HasIn() {
			return "; or its guard's in never holds in a configuration its source is active in"
		}
	}
	return ""
}
