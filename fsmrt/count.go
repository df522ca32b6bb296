package fsmrt

import "context"

// StateCounter is implemented by a Store that counts the instances a query selects
// without listing them: what Find(q) returns, q.After and q.Limit aside, as a number per
// state, in one statement the store backs with its indexes. An operator's page counts
// millions of instances so, where listing them would read every row. It is a separate
// interface so that a Store written before it keeps compiling: test for it with a type
// assertion. MemoryStore and the SQLite and PostgreSQL stores implement it, and
// fsmrt/storetest checks it against Find of every store that does.
type StateCounter interface {
	// CountByState returns how many instances of q.Machine meet q's conditions (States,
	// Deadline and Due, Counter and AtLeast), by state; a state with none is absent.
	CountByState(ctx context.Context, q Query) (map[string]int, error)
}

var _ StateCounter = (*MemoryStore)(nil)

// CountByState counts the instances that match q, by state (StateCounter.CountByState).
func (s *MemoryStore) CountByState(ctx context.Context, q Query) (map[string]int, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	q.After, q.Limit = "", 0
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]int{}
	for key, in := range s.instances {
		if key[0] == q.Machine && in.matches(&q) {
			out[in.state]++
		}
	}
	return out, nil
}
