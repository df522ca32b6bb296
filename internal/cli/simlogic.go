package cli

import "github.com/fsmgen/fsmgen/internal/ir"

// logicNamed is the declared guard expression called name, or nil.
func logicNamed(m *ir.Machine, name string) *ir.Guard {
	for _, g := range m.Logic {
		if !g.Inline && g.Name == name {
			return g
		}
	}
	return nil
}
