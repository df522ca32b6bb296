package fsmrt

import "context"

// A guard expression's program (Def.Logic) is its tree in prefix order, one int32 a node:
// a guard's index (>= 0: a guard the Guards hook answers, or another expression), or one
// of these operations followed by its arguments.
const (
	// LogicNot: the expression that follows fails.
	LogicNot int32 = -1
	// LogicAnd, then a count n: the n expressions that follow all hold. They are evaluated
	// in order, and none after the first that fails.
	LogicAnd int32 = -2
	// LogicOr, then a count n: one of the n expressions that follow holds. They are
	// evaluated in order, and none after the first that holds.
	LogicOr int32 = -3
)

// guard evaluates guard g: an expression of Def.Logic, or the Guards hook.
func (m *Machine[S, E, R, C, X]) guard(ctx context.Context, g int32, st *Step[S, E, R]) bool {
	if m.def.Logic != nil && g >= m.def.LogicBase {
		ok, _ := m.logic(ctx, m.def.Logic[g-m.def.LogicBase], 0, false, st)
		return ok
	}
	held := m.guards.Guard(ctx, int(g), *st)
	if coverOn {
		m.coverGuard(g, st, held)
	}
	return held
}

// logic evaluates the expression of program p at i and returns the index after it; with
// skip it asks no guard (an argument after the one that decided an and or an or).
func (m *Machine[S, E, R, C, X]) logic(ctx context.Context, p []int32, i int, skip bool, st *Step[S, E, R]) (bool, int) {
	switch op := p[i]; {
	case op >= 0:
		if skip {
			return false, i + 1
		}
		return m.guard(ctx, op, st), i + 1
	case op == LogicNot:
		ok, next := m.logic(ctx, p, i+1, skip, st)
		return !ok, next
	default:
		and := op == LogicAnd
		result, n, next := and, int(p[i+1]), i+2
		for range n {
			var ok bool
			ok, next = m.logic(ctx, p, next, skip, st)
			if !skip && ok != and {
				result, skip = ok, true
			}
		}
		return result, next
	}
}
