package postgres

import (
	"context"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/fsmgen/fsmgen/fsmrt"
)

// Grouped completions (WithGroupedCompletions). A program that delivers effects at
// commit (a machine with an owner) records each delivery with CompleteEffects: a round
// trip of its own after every transition that had effects. A store made
// WithGroupedCompletions queues the completions instead, and its next commit stores them
// in its own transaction and round trip; when no commit comes within the delay the option
// gives, they are stored by themselves then, and Close stores those still queued.
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

// completionGroup is the completions queued and not stored yet.
type completionGroup struct {
	within time.Duration
	mu     sync.Mutex
	ids    []fsmrt.EffectID
	at     []time.Time
	timer  *time.Timer // stores them if no commit does first; nil when none runs
	closed bool        // Close stored the last ones: completions are stored at once
}

// add queues ids, delivered at now, and reports whether it did (not once closed).
func (g *completionGroup) add(s *Store, ids []fsmrt.EffectID, now time.Time) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return false
	}
	g.ids = append(g.ids, ids...)
	for range ids {
		g.at = append(g.at, now)
	}
	if g.timer == nil {
		g.timer = time.AfterFunc(g.within, func() { s.storeGroup(context.Background()) })
	}
	return true
}

// take returns the completions queued, leaving none.
func (g *completionGroup) take() ([]fsmrt.EffectID, []time.Time) {
	g.mu.Lock()
	defer g.mu.Unlock()
	ids, at := g.ids, g.at
	g.ids, g.at = nil, nil
	return ids, at
}

// giveBack queues again completions a commit or a store did not store.
func (g *completionGroup) giveBack(s *Store, ids []fsmrt.EffectID, at []time.Time) {
	if g == nil || len(ids) == 0 {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.ids, g.at = append(ids, g.ids...), append(at, g.at...)
	if g.timer == nil && !g.closed {
		g.timer = time.AfterFunc(g.within, func() { s.storeGroup(context.Background()) })
	}
}

// queueGroup queues in b, a commit's batch, the statement storing the completions
// queued, and returns them: the caller gives them back (giveBack) unless the commit is
// known to be stored.
func (s *Store) queueGroup(b *pgx.Batch) ([]fsmrt.EffectID, []time.Time) {
	if s.group == nil {
		return nil, nil
	}
	ids, at := s.group.take()
	if len(ids) > 0 {
		b.Queue(s.sql.completeEffects, completionArgs(ids, func(i int) time.Time { return at[i] })...)
	}
	return ids, at
}

// storeGroup stores the completions queued, by themselves; those it fails to store are
// queued again, for the next commit or the next try.
func (s *Store) storeGroup(ctx context.Context) error {
	g := s.group
	g.mu.Lock()
	g.timer = nil
	g.mu.Unlock()
	ids, at := g.take()
	if len(ids) == 0 {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, groupStoreTimeout)
	defer cancel()
	err := s.complete(ctx, completionArgs(ids, func(i int) time.Time { return at[i] }))
	if err != nil {
		g.giveBack(s, ids, at)
	}
	return err
}

// groupStoreTimeout bounds a store of the completions queued by themselves.
const groupStoreTimeout = 30 * time.Second

// closeGroup stores the completions still queued and stops queueing.
func (s *Store) closeGroup() error {
	if s.group == nil {
		return nil
	}
	s.group.mu.Lock()
	s.group.closed = true
	if s.group.timer != nil {
		s.group.timer.Stop()
		s.group.timer = nil
	}
	s.group.mu.Unlock()
	return s.storeGroup(context.Background())
}
