package ir

import "slices"

// HasDelays reports whether some state of m has delays of its own (State.Delays).
func (m *Machine) HasDelays() bool {
	return slices.ContainsFunc(m.States, func(s *State) bool { return len(s.Delays) > 0 })
}
