package fsmrt

// Answered reports whether the last firing that returned no error (Fire, FireWith, a
// generated Fire<Event>) was answered by its idempotency key: the key had been used with
// the same event, by this machine or by any process that shares its store, so nothing
// happened now, and the state returned is where that earlier transition went. False after
// a transition the firing made. It is the only way to tell a repeated request from a fresh
// acceptance apart from comparing Seq before and after, and costs nothing: the machine
// records it as it answers.
//
//	to, err := m.FireWith(ctx, e, in)
//	if err == nil && m.Answered() {
//		// a retry of a request already handled: do not act on it twice
//	}
func (m *Machine[S, E, R, C, X]) Answered() bool {
	return m.answered == m.seq+1
}
