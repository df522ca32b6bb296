package fsmrt

import (
	"bytes"
	"cmp"
	"context"
	"slices"
	"time"
)

// PendingReader is implemented by a Store that says, without claiming or changing
// anything, what it still owes: the effects of its outbox not delivered yet and the
// deadlines not handled yet, with who holds each and until when. A store's Claim methods
// answer the same question but lease what they return; these only read. It is a separate
// interface so that a Store written before it keeps compiling: test for it with a type
// assertion. MemoryStore and the SQLite and PostgreSQL stores implement it, and
// fsmrt/storetest checks it of every store that does.
type PendingReader interface {
	// PendingEffects returns the effects of q.Machine (of instance q.ID, or of every
	// instance when it is "") not delivered, oldest commit first (the order a claim takes
	// them), at most q.Limit (0: all), leased or not.
	PendingEffects(ctx context.Context, q PendingQuery) ([]OwedEffect, error)
	// PendingDeadlines returns the deadlines of q.Machine (of instance q.ID, or of every
	// instance when it is "") not handled, due or not, earliest first, then by instance
	// and name (the order a claim takes them), at most q.Limit (0: all), leased or not.
	PendingDeadlines(ctx context.Context, q PendingQuery) ([]OwedDeadline, error)
}

// PendingQuery selects what PendingReader reads: the effects or deadlines of one machine,
// of one instance or of all of them, at most Limit (0: all).
type PendingQuery struct {
	Machine string
	ID      string
	Limit   int
}

// OwedEffect is an effect of the outbox not delivered yet, as PendingEffects reads it:
// Attempts counts the deliveries tried so far (0: never claimed); Owner, when not empty, is
// the last claimer and LeaseUntil the end of its lease, on the claimer's clock (an effect
// leased until before a claimer's now is due again).
type OwedEffect struct {
	PendingEffect
	Owner      string
	LeaseUntil time.Time
	// LastError is the error of its last failed delivery and FailedAt when it failed, on
	// the deliverer's clock, in a store that keeps them (EffectErrorRecorder); empty when
	// none failed, or the store keeps none.
	LastError string
	FailedAt  time.Time
}

// OwedDeadline is a deadline not handled yet, as PendingDeadlines reads it: Owner, when not
// empty, is the last claimer and LeaseUntil the end of its lease, on the claimer's clock.
type OwedDeadline struct {
	DueDeadline
	Owner      string
	LeaseUntil time.Time
}

var _ PendingReader = (*MemoryStore)(nil)

// PendingEffects returns the effects not delivered (PendingReader.PendingEffects).
func (s *MemoryStore) PendingEffects(ctx context.Context, q PendingQuery) ([]OwedEffect, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var owed []*memEffect
	for key, in := range s.instances {
		if key[0] != q.Machine || q.ID != "" && key[1] != q.ID {
			continue
		}
		for _, e := range in.effects {
			if e.delivered.IsZero() {
				owed = append(owed, e)
			}
		}
	}
	slices.SortFunc(owed, func(a, b *memEffect) int {
		return cmp.Or(s.entryAt(a).Compare(s.entryAt(b)), cmp.Compare(a.ID, b.ID), cmp.Compare(a.Seq, b.Seq), cmp.Compare(a.Index, b.Index))
	})
	if q.Limit > 0 && len(owed) > q.Limit {
		owed = owed[:q.Limit]
	}
	out := make([]OwedEffect, 0, len(owed))
	for _, e := range owed {
		o := OwedEffect{PendingEffect: e.PendingEffect, Owner: e.owner, LastError: e.lastError, FailedAt: e.failedAt}
		if e.owner != "" {
			o.LeaseUntil = e.leased.Truncate(time.Microsecond)
		}
		o.Data = bytes.Clone(o.Data)
		out = append(out, o)
	}
	return out, nil
}

// PendingDeadlines returns the deadlines not handled (PendingReader.PendingDeadlines).
func (s *MemoryStore) PendingDeadlines(ctx context.Context, q PendingQuery) ([]OwedDeadline, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []OwedDeadline
	for key, in := range s.instances {
		if key[0] != q.Machine || q.ID != "" && key[1] != q.ID {
			continue
		}
		for _, d := range in.deadlines {
			if d.handled {
				continue
			}
			o := OwedDeadline{DueDeadline: DueDeadline{Machine: q.Machine, ID: key[1], Deadline: d.Deadline}, Owner: d.owner}
			if d.owner != "" {
				o.LeaseUntil = d.leased.Truncate(time.Microsecond)
			}
			out = append(out, o)
		}
	}
	slices.SortFunc(out, func(a, b OwedDeadline) int {
		return cmp.Or(a.At.Compare(b.At), cmp.Compare(a.ID, b.ID), cmp.Compare(a.Name, b.Name))
	})
	if q.Limit > 0 && len(out) > q.Limit {
		out = out[:q.Limit]
	}
	return out, nil
}
