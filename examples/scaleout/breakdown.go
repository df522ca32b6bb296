package scaleout

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/fsmgen/fsmgen/examples/scaleout/order"
	"github.com/fsmgen/fsmgen/fsmrt"
)

// Breakdown is where the time of one transition goes, in one process on one database:
// the same transitions (the fresh events of a plan, fired at its orders in turn, and the
// orders' creations) committed four ways, each on a fresh database. Each field is the
// time a transition took.
type Breakdown struct {
	Transitions int
	// Floor: the entries written by hand, two statements each (DB.FloorCommit).
	Floor time.Duration
	// SameWork: the very same commits written by hand (SameWork).
	SameWork time.Duration
	// Commit: the very same commits through the store's Commit, with what the floor
	// leaves out (the checks, the effects, the deadlines, the counters).
	Commit time.Duration
	// FireNoKey: the events fired by machines kept in memory, without keys: the machine's
	// work (encoding the entry and the snapshot), the commit and the effects' completion.
	FireNoKey time.Duration
	// Fire: the same with the events' idempotency keys, which the machine looks up in the
	// store before it fires an event its window does not know.
	Fire time.Duration
}

// Decompose measures a Breakdown of the fresh events of p (all its orders, one process)
// on databases of kind that fresh creates, by name.
func Decompose(ctx context.Context, kind string, p Plan, fresh func(name string) (string, error)) (Breakdown, error) {
	p.Workers = 1
	events := freshEvents(p)
	commits, err := capture(ctx, p, events)
	if err != nil {
		return Breakdown{}, err
	}
	b := Breakdown{Transitions: len(commits)}
	steps := []struct {
		name string
		into *time.Duration
		run  func(context.Context, *DB) error
	}{
		{"floor", &b.Floor, func(ctx context.Context, db *DB) error {
			return each(commits, func(c *fsmrt.Commit) error { return db.FloorCommit(ctx, c) })
		}},
		{"samework", &b.SameWork, func(ctx context.Context, db *DB) error {
			sw, err := NewSameWork(ctx, db)
			if err != nil {
				return err
			}
			defer sw.Close()
			return each(commits, func(c *fsmrt.Commit) error { return sw.Commit(ctx, c) })
		}},
		{"commit", &b.Commit, func(ctx context.Context, db *DB) error {
			return each(commits, func(c *fsmrt.Commit) error { return db.Store.Commit(ctx, c) })
		}},
		{"nokey", &b.FireNoKey, func(ctx context.Context, db *DB) error { return fire(ctx, db.Store, p, events, false) }},
		{"key", &b.Fire, func(ctx context.Context, db *DB) error { return fire(ctx, db.Store, p, events, true) }},
	}
	for _, s := range steps {
		d, err := timeOn(ctx, kind, fresh, "breakdown_"+s.name, s.run)
		if err != nil {
			return b, fmt.Errorf("%s: %w", s.name, err)
		}
		*s.into = d / time.Duration(len(commits))
	}
	return b, nil
}

// freshEvents returns the fresh events of p, the orders' first events first, then their
// second ones, and so on.
func freshEvents(p Plan) []Item {
	byOrder := make([][]Item, p.Instances)
	for i := range byOrder {
		byOrder[i] = p.Items(i)
	}
	var out []Item
	for slot := 0; ; slot++ {
		more := false
		for _, items := range byOrder {
			if slot >= len(items) {
				continue
			}
			if more = true; items[slot].Kind == Fresh {
				out = append(out, items[slot])
			}
		}
		if !more {
			return out
		}
	}
}

// timeOn opens a fresh database of kind named name, and returns how long run took on it.
func timeOn(ctx context.Context, kind string, fresh func(name string) (string, error), name string,
	run func(context.Context, *DB) error) (time.Duration, error) {
	where, err := fresh(name)
	if err != nil {
		return 0, err
	}
	db, err := Open(ctx, kind, where)
	if err != nil {
		return 0, err
	}
	defer db.Close()
	start := time.Now()
	err = run(ctx, db)
	return time.Since(start), err
}

// each calls fn with each commit, up to the first error.
func each(commits []fsmrt.Commit, fn func(c *fsmrt.Commit) error) error {
	for i := range commits {
		if err := fn(&commits[i]); err != nil {
			return fmt.Errorf("%s %d: %w", commits[i].ID, commits[i].Entry.Seq, err)
		}
	}
	return nil
}

// capture fires events at the orders of p on a store in memory, and returns the commits
// the machines made, in order.
func capture(ctx context.Context, p Plan, events []Item) ([]fsmrt.Commit, error) {
	st := &capturing{MemoryStore: fsmrt.NewMemoryStore()}
	if err := fire(ctx, st, p, events, true); err != nil {
		return nil, err
	}
	return st.commits, nil
}

// capturing is a store in memory that keeps a copy of every commit.
type capturing struct {
	*fsmrt.MemoryStore
	commits []fsmrt.Commit
}

// Commit keeps a copy of c and commits it.
func (s *capturing) Commit(ctx context.Context, c *fsmrt.Commit) error {
	cp := *c
	cp.Entry.Data, cp.Snapshot = bytes.Clone(c.Entry.Data), bytes.Clone(c.Snapshot)
	cp.Effects, cp.Deadlines, cp.Counters = slices.Clone(c.Effects), slices.Clone(c.Deadlines), slices.Clone(c.Counters)
	cp.CountersChanged = slices.Clone(c.CountersChanged)
	s.commits = append(s.commits, cp)
	return s.MemoryStore.Commit(ctx, c)
}

// fire creates the orders of p on store and fires events at them, with their keys or
// without, each machine kept in memory; the effects' hook does nothing.
func fire(ctx context.Context, store fsmrt.Store, p Plan, events []Item, keys bool) error {
	clock := &steppingClock{at: time.Date(2026, 6, 1, 8, 0, 0, 0, time.UTC)}
	machines := map[int]*order.Order{}
	for _, it := range events {
		m := machines[it.Instance]
		if m == nil {
			m = order.NewOrder(order.OrderNopHooks{})
			m.ID = p.ID(it.Instance)
			m.SetClock(clock)
			m.SetStore(store)
			if err := m.Create(ctx, order.OrderInput{At: clock.Now()}); err != nil {
				return err
			}
			machines[it.Instance] = m
		}
		in := order.OrderInput{At: clock.Now()}
		if keys {
			in.Key = it.Key
		}
		if _, err := m.FireWith(ctx, it.Event, in); err != nil {
			return fmt.Errorf("%s: %w", m.ID, err)
		}
	}
	return nil
}

// steppingClock is a clock that moves on a millisecond every time it is read.
type steppingClock struct{ at time.Time }

// Now returns the clock's time and moves it on.
func (c *steppingClock) Now() time.Time {
	c.at = c.at.Add(time.Millisecond)
	return c.at
}
