package fsmrt

import (
	"context"
	"sync"
	"time"
)

// CompletionGroup is the queue of a store that groups the completions of delivered
// effects (CompleteEffects) with its next commit, instead of spending a transaction on
// each: the store's CompleteEffects adds them (Add), its next commit takes them (Take) and
// stores them in its own transaction, giving them back (GiveBack) when that transaction
// does not commit. When no commit takes them within the group's delay, the group stores
// them by itself, through the function it was made with; Close stores those left.
//
// A completion queued is not stored: a crash loses it, and its effect is delivered again
// once its lease runs out, as if the crash had come between the delivery and its
// completion. Delivery stays at least once. The methods of a nil group do nothing (Add
// reports false: store the completions at once).
type CompletionGroup struct {
	within time.Duration
	store  func(ctx context.Context, ids []EffectID, at []time.Time) error
	mu     sync.Mutex
	ids    []EffectID
	at     []time.Time
	timer  *time.Timer // stores them if no commit does first; nil when none runs
	closed bool        // completions are stored at once from then on
}

// NewCompletionGroup returns a group whose completions are stored at the latest within
// after they were queued, by store when no commit took them: store records each effect
// ids[i] delivered at at[i].
func NewCompletionGroup(within time.Duration, store func(ctx context.Context, ids []EffectID, at []time.Time) error) *CompletionGroup {
	return &CompletionGroup{within: within, store: store}
}

// completionStoreTimeout bounds the group's storing the completions by itself.
const completionStoreTimeout = 30 * time.Second

// Add queues ids, delivered at now, and reports whether it did: not once closed.
func (g *CompletionGroup) Add(ids []EffectID, now time.Time) bool {
	if g == nil {
		return false
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return false
	}
	g.ids = append(g.ids, ids...)
	for range ids {
		g.at = append(g.at, now)
	}
	g.arm()
	return true
}

// arm starts the timer that stores the completions queued unless one runs. The caller
// holds g.mu.
func (g *CompletionGroup) arm() {
	if g.timer == nil && !g.closed && len(g.ids) > 0 {
		g.timer = time.AfterFunc(g.within, func() { _ = g.flush(context.Background()) })
	}
}

// Take returns the completions queued, leaving none: the caller stores them in its
// transaction, and gives them back if it does not commit.
func (g *CompletionGroup) Take() ([]EffectID, []time.Time) {
	if g == nil {
		return nil, nil
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	ids, at := g.ids, g.at
	g.ids, g.at = nil, nil
	return ids, at
}

// GiveBack queues again completions that Take gave and a transaction did not store.
// Giving back some that were stored after all (a commit whose outcome is unknown) is
// harmless: an effect is recorded delivered once.
func (g *CompletionGroup) GiveBack(ids []EffectID, at []time.Time) {
	if g == nil || len(ids) == 0 {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.ids, g.at = append(ids, g.ids...), append(at, g.at...)
	g.arm()
}

// flush stores the completions queued by themselves; those it fails to store are queued
// again.
func (g *CompletionGroup) flush(ctx context.Context) error {
	g.mu.Lock()
	g.timer = nil
	g.mu.Unlock()
	ids, at := g.Take()
	if len(ids) == 0 {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, completionStoreTimeout)
	defer cancel()
	err := g.store(ctx, ids, at)
	if err != nil {
		g.GiveBack(ids, at)
	}
	return err
}

// Close stores the completions still queued, and makes Add refuse from then on. Those it
// cannot store are lost: their effects are delivered again once their leases run out.
func (g *CompletionGroup) Close() error {
	if g == nil {
		return nil
	}
	g.mu.Lock()
	g.closed = true
	if g.timer != nil {
		g.timer.Stop()
		g.timer = nil
	}
	g.mu.Unlock()
	return g.flush(context.Background())
}
