package postgres

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/fsmgen/fsmgen/fsmrt"
)

// Grouped completions (WithGroupedCompletions). A program that delivers effects at
// commit (a machine with an owner) records each delivery with CompleteEffects: a round
// trip of its own after every transition that had effects. A store made
// WithGroupedCompletions queues the completions instead (fsmrt.CompletionGroup), and its
// next commit stores them in its own transaction and round trip; when no commit comes
// within the delay the option gives, they are stored by themselves then, and Close stores
// those still queued.
//
// A completion queued is not stored yet: a crash (of the process, or of its connection to
// the server) loses those queued, and their effects are delivered again once their leases
// run out, as if the crash had come between the delivery and its completion. Delivery
// stays at least once; give the effects a lease longer than the delay (SetOwner).

// WithGroupedCompletions makes CompleteEffects queue the completions for the store's next
// commit, stored at the latest within after they were queued (see group.go). A within of
// zero or less stores each completion at once, as without the option.
func WithGroupedCompletions(within time.Duration) Option {
	return func(o *options) { o.groupWithin = within }
}

// newGroup returns the store's group of completions, or nil without the option.
func (s *Store) newGroup(within time.Duration) *fsmrt.CompletionGroup {
	if within <= 0 {
		return nil
	}
	return fsmrt.NewCompletionGroup(within, func(ctx context.Context, ids []fsmrt.EffectID, at []time.Time) error {
		return s.complete(ctx, completionArgs(ids, func(i int) time.Time { return at[i] }))
	})
}

// queueGroup queues in b, a commit's batch, the statement storing the completions
// queued, and returns them: the caller gives them back unless the commit is known to be
// stored.
func (s *Store) queueGroup(b *pgx.Batch) ([]fsmrt.EffectID, []time.Time) {
	ids, at := s.group.Take()
	if len(ids) > 0 {
		b.Queue(s.sql.completeEffects, completionArgs(ids, func(i int) time.Time { return at[i] })...)
	}
	return ids, at
}
