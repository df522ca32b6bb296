package sqlite

import (
	"context"
	"time"

	"github.com/fsmgen/fsmgen/fsmrt"
)

// Grouped completions (WithGroupedCompletions). A program that delivers effects at
// commit (a machine with an owner) records each delivery with CompleteEffects: a write
// transaction of its own, with its COMMIT, after every transition that had effects. A
// store opened WithGroupedCompletions queues the completions instead
// (fsmrt.CompletionGroup), and its next commit stores them in its own transaction; when
// no commit comes within the delay the option gives, they are stored by themselves then,
// and Close stores those still queued.
//
// A completion queued is not stored yet: a crash loses those queued, and their effects are
// delivered again once their leases run out, as if the crash had come between the
// delivery and its completion. Delivery stays at least once; give the effects a lease
// longer than the delay (SetOwner).

// WithGroupedCompletions makes CompleteEffects queue the completions for the store's next
// commit, stored at the latest within after they were queued (see group.go). A within of
// zero or less stores each completion at once, as without the option.
func WithGroupedCompletions(within time.Duration) Option {
	return func(c *config) { c.groupWithin = within }
}

// newGroup returns the store's group of completions, or nil for none.
func (s *Store) newGroup(within time.Duration) *fsmrt.CompletionGroup {
	if within <= 0 {
		return nil
	}
	return fsmrt.NewCompletionGroup(within, func(ctx context.Context, ids []fsmrt.EffectID, at []time.Time) error {
		return s.writeTx(ctx, true, func(t *tx) error { return completeEach(ctx, t, ids, at) })
	})
}

// completeEach marks each effect ids[i] delivered at at[i], inside the caller's
// transaction holding the write lock.
func completeEach(ctx context.Context, t *tx, ids []fsmrt.EffectID, at []time.Time) error {
	for i := range ids {
		if err := completeEffects(ctx, t, ids[i:i+1], at[i]); err != nil {
			return err
		}
	}
	return nil
}
