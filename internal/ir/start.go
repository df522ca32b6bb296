package ir

// Starts reports whether starting the statechart does something: entry actions of its
// initial configuration, done events they raise, or an eventless transition the initial
// configuration may take. A flat machine's start does nothing.
func (m *Machine) Starts() bool {
	c := m.Chart
	return c != nil && (len(c.StartActions) > 0 || len(c.StartRaise) > 0 || c.Always != nil && len(m.Lookup(m.Initial, c.Always)) > 0)
}
