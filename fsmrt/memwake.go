package fsmrt

import (
	"context"
	"time"
)

// CommitWakes reports whether commit c gives those watching its machine new work (Waker):
// it arms deadlines, or writes effects that nobody holds. A store's watches are woken
// after such a commit.
func CommitWakes(c *Commit) bool {
	return c.Rearm && len(c.Deadlines) > 0 || len(c.Effects) > 0 && c.Owner == ""
}

var _ Waker = (*MemoryStore)(nil)

// WatchWork returns a watch on the work of machine (Waker): a commit to the store that
// arms deadlines of machine or writes effects of it nobody holds wakes it.
func (s *MemoryStore) WatchWork(machine string) WorkWatch { return s.hub.Watch(machine) }

// NextWork returns when a claim of machine may next find work (Waker): a deadline not
// handled falls due, or its lease runs out; an effect not delivered is free (its commit's
// time) or its lease runs out. Claims take what was leased until before their now, so a
// lease gives its end and a microsecond.
func (s *MemoryStore) NextWork(ctx context.Context, machine string) (time.Time, bool, error) {
	if err := ctx.Err(); err != nil {
		return time.Time{}, false, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var next time.Time
	found := false
	earliest := func(t time.Time) {
		if !found || t.Before(next) {
			next, found = t, true
		}
	}
	for key, in := range s.instances {
		if key[0] != machine {
			continue
		}
		for _, d := range in.deadlines {
			switch {
			case d.handled:
			case d.owner == "" || d.leased.Before(d.At):
				earliest(d.At)
			default:
				earliest(d.leased.Add(time.Microsecond))
			}
		}
		for _, e := range in.effects {
			switch {
			case !e.delivered.IsZero():
			case e.owner == "":
				earliest(in.log[e.Seq-1].At)
			default:
				earliest(e.leased.Add(time.Microsecond))
			}
		}
	}
	return next, found, nil
}
