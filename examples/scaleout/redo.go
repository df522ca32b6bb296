package scaleout

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/fsmgen/fsmgen/examples/scaleout/order"
	"github.com/fsmgen/fsmgen/fsmrt"
)

// The same-work floor needs, for every entry a run of the workers committed, the whole
// commit they made: besides the entry and the snapshot, the effects written to the outbox,
// the deadlines armed, disarmed and handled, and the counters. The store keeps the entries
// but not the deadlines a later rearm replaced, nor the counters of each step. Redo makes
// the commits again: a machine in memory, on a store in memory, takes each entry of the
// stored log again with its inputs (the event, its time, key and actor; the deadline of a
// timer's entry), and each entry it commits must equal, byte for byte, the one the
// workers committed. The machine is deterministic, so equal entries mean equal commits.

// redoOwner owns the effects of the commits made again (the workers' owners are their
// names; the owner's length is all the floor's writes depend on).
const redoOwner = "worker-0"

// Redo returns the commits that made the log of order id in store, made again by a
// machine in memory, each checked against the stored entry. effectLease is the lease
// the workers' commits gave their effects.
func Redo(ctx context.Context, store fsmrt.Store, id string, effectLease time.Duration) ([]fsmrt.Commit, error) {
	log, err := store.Log(ctx, machineName, id, 0)
	if err != nil {
		return nil, err
	}
	mem := &redoStore{capturing: capturing{MemoryStore: fsmrt.NewMemoryStore()}}
	clock := &setClock{}
	m := order.NewOrder(&redoHooks{})
	m.ID = id
	m.SetClock(clock)
	m.SetOwner(redoOwner, effectLease)
	m.SetStore(mem)
	load := func(context.Context, string) (*fsmrt.Machine[order.State, order.Event, fsmrt.NoRole, order.OrderContext, fsmrt.None], error) {
		return &m.Machine, nil
	}
	for i := range log {
		stored := &log[i]
		var e order.OrderLogEntry
		if err := json.Unmarshal(stored.Data, &e); err != nil {
			return nil, fmt.Errorf("%s entry %d: %w", id, stored.Seq, err)
		}
		clock.at = e.Timestamp
		before := len(mem.commits)
		switch {
		case stored.Kind == fsmrt.KindCreated:
			err = m.Create(ctx, order.OrderInput{Actor: e.Actor, Reason: e.Reason, At: e.Timestamp})
		case e.Actor == "scheduler":
			err = mem.fireDue(ctx, e.Timestamp, e.Metadata, load)
		case stored.Kind == fsmrt.KindTransition:
			var ev order.Event
			if ev, err = order.ParseEvent(stored.Event); err == nil {
				_, err = m.FireWith(ctx, ev, order.OrderInput{Key: stored.Key, At: e.Timestamp, Actor: e.Actor, Reason: e.Reason})
			}
		default:
			err = fmt.Errorf("an entry of kind %s, which the workers do not write", stored.Kind)
		}
		if err == nil && len(mem.commits) != before+1 {
			err = fmt.Errorf("made again, it committed %d entries", len(mem.commits)-before)
		}
		if err == nil {
			err = sameEntry(&mem.commits[before].Entry, stored)
		}
		if err != nil {
			return nil, fmt.Errorf("%s entry %d made again: %w", id, stored.Seq, err)
		}
	}
	return mem.commits, nil
}

// sameEntry says how entry got, made again, differs from entry want, stored.
func sameEntry(got, want *fsmrt.Entry) error {
	switch {
	case got.Seq != want.Seq, got.Kind != want.Kind, got.Event != want.Event, got.From != want.From, got.To != want.To, got.Key != want.Key:
		return fmt.Errorf("%d %s %s %s->%s key %q, stored %d %s %s %s->%s key %q",
			got.Seq, got.Kind, got.Event, got.From, got.To, got.Key, want.Seq, want.Kind, want.Event, want.From, want.To, want.Key)
	case !got.At.Truncate(time.Microsecond).Equal(want.At):
		return fmt.Errorf("at %v, stored at %v", got.At, want.At)
	case !bytes.Equal(got.Data, want.Data):
		return fmt.Errorf("its data differs:\n%s\nstored:\n%s", got.Data, want.Data)
	}
	return nil
}

// redoStore is a store in memory that keeps a copy of every commit, and whose claims
// hand out only the deadline the entry being made again handled.
type redoStore struct {
	capturing
	want string // the deadline's name
}

// fireDue handles, with fsmrt.FireDue, the deadline of a timer's entry made at: a level's
// (its notes's metadata names it and its time), or else the expiry, due by then.
func (s *redoStore) fireDue(ctx context.Context, at time.Time, meta map[string]string,
	load func(context.Context, string) (*fsmrt.Machine[order.State, order.Event, fsmrt.NoRole, order.OrderContext, fsmrt.None], error)) error {
	due, want := at, fsmrt.ExpiryDeadline
	if level := meta["level"]; level != "" {
		var err error
		if due, err = time.Parse(time.RFC3339Nano, meta["deadline"]); err != nil {
			return fmt.Errorf("a level's entry without its deadline: %w", err)
		}
		want = fsmrt.LevelDeadline(level)
	}
	s.want = want
	n, err := fsmrt.FireDue(ctx, s, machineName, redoOwner, due, time.Second, 100, load)
	if err == nil && n != 1 {
		err = fmt.Errorf("deadline %s at %v: %d handled", s.want, due, n)
	}
	return err
}

// ClaimDeadlines claims the deadline named s.want, if due. The others it finds due stay
// free: their lease has run out by the time it returns.
func (s *redoStore) ClaimDeadlines(ctx context.Context, machine, owner string, now time.Time, _ time.Duration, limit int) ([]fsmrt.DueDeadline, error) {
	due, err := s.MemoryStore.ClaimDeadlines(ctx, machine, owner, now, -time.Nanosecond, limit)
	var out []fsmrt.DueDeadline
	for _, d := range due {
		if d.Name == s.want {
			out = append(out, d)
		}
	}
	return out, err
}

// redoHooks are a worker's hooks (the actions that change the context), but for the
// effects, which the machine made again delivers to no one.
type redoHooks struct{ hooks }

// Notify delivers nothing.
func (*redoHooks) Notify(context.Context, order.OrderEffect) error { return nil }

// setClock is a clock that reads the time it was set to.
type setClock struct{ at time.Time }

// Now returns the time the clock was set to.
func (c *setClock) Now() time.Time { return c.at }
