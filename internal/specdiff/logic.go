package specdiff

import "github.com/fsmgen/fsmgen/internal/ir"

// declaredGuards are the guards the spec declares: hooks and comparisons, then the guard
// expressions declared by name (not those written in transitions, which the transitions
// that hold them show).
func declaredGuards(m *ir.Machine) []*ir.Guard {
	out := m.Guards
	for _, g := range m.Logic {
		if !g.Inline {
			out = append(out[:len(out):len(out)], g)
		}
	}
	return out
}
