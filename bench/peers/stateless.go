package peers

import (
	"context"

	"github.com/fsmgen/fsmgen/bench/specgen"
	"github.com/qmuntal/stateless"
)

// StatelessReview is seed 003 on qmuntal/stateless, in its default (queued) firing mode.
// The state lives in the wrapper (stateless's external storage), so that Reset can put a
// machine back at its start without configuring a new one; this is also how stateless
// is used with a persisted state, and it skips the mutex of its built-in storage.
type StatelessReview struct {
	counters
	state stateless.State // always a string; kept as an interface so reads don't box it
	sm    *stateless.StateMachine
}

// NewStatelessReview builds the machine in not_started.
func NewStatelessReview() *StatelessReview {
	m := &StatelessReview{state: NotStarted}
	m.sm = stateless.NewStateMachineWithExternalStorage(
		func(context.Context) (stateless.State, error) { return m.state, nil },
		func(_ context.Context, s stateless.State) error { m.state = s; return nil },
		stateless.FiringQueued)
	m.sm.Configure(NotStarted).
		Permit(InProgress, InProgress).
		Permit(Blocked, Blocked)
	m.sm.Configure(InProgress).
		Permit(PendingReview, PendingReview).
		Permit(Blocked, Blocked)
	m.sm.Configure(Blocked).
		Permit(NotStarted, NotStarted).
		Permit(InProgress, InProgress)
	m.sm.Configure(PendingReview).
		Permit(UnderReview, UnderReview)
	m.sm.Configure(UnderReview).
		OnEntry(func(context.Context, ...any) error {
			m.reviews, m.securityReviews = 0, 0
			return nil
		}).
		InternalTransition(ReviewSubmitted, func(context.Context, ...any) error {
			m.reviews++
			return nil
		}).
		InternalTransition(SecurityReviewSubmitted, func(context.Context, ...any) error {
			m.reviews++
			m.securityReviews++
			return nil
		}).
		Permit(FinalReview, FinalReview, func(context.Context, ...any) bool {
			return m.reviewsComplete()
		})
	m.sm.Configure(FinalReview).
		Permit(Completed, Completed).
		Permit(InProgress, InProgress)
	m.sm.Configure(Completed)
	return m
}

// Reset puts the machine back in not_started with its counters cleared.
func (m *StatelessReview) Reset() {
	m.state = NotStarted
	m.counters = counters{Criticality: m.Criticality}
}

// Fire fires e.
func (m *StatelessReview) Fire(ctx context.Context, e string) error { return m.sm.FireCtx(ctx, e) }

// State returns the current state.
func (m *StatelessReview) State() string { return m.state.(string) }

// Can reports whether e would be accepted now; stateless evaluates guards.
func (m *StatelessReview) Can(ctx context.Context, e string) bool {
	ok, err := m.sm.CanFireCtx(ctx, e)
	return ok && err == nil
}

// Permitted returns the events accepted now.
func (m *StatelessReview) Permitted(ctx context.Context) []any {
	t, _ := m.sm.PermittedTriggersCtx(ctx)
	return t
}

// StatelessTable is a guard-free machine from a specgen table on qmuntal/stateless.
type StatelessTable struct {
	state   stateless.State // always a string
	initial string
	sm      *stateless.StateMachine
}

// NewStatelessTable builds the machine in its initial state.
func NewStatelessTable(sm specgen.Machine) *StatelessTable {
	m := &StatelessTable{state: sm.States[0], initial: sm.States[0]}
	m.sm = stateless.NewStateMachineWithExternalStorage(
		func(context.Context) (stateless.State, error) { return m.state, nil },
		func(_ context.Context, s stateless.State) error { m.state = s; return nil },
		stateless.FiringQueued)
	for _, s := range sm.States {
		m.sm.Configure(s)
	}
	for _, t := range sm.Transitions {
		m.sm.Configure(sm.States[t.From]).Permit(sm.Events[t.Event], sm.States[t.To])
	}
	return m
}

// Reset puts the machine back in its initial state.
func (m *StatelessTable) Reset() { m.state = m.initial }

// Fire fires e.
func (m *StatelessTable) Fire(ctx context.Context, e string) error { return m.sm.FireCtx(ctx, e) }

// State returns the current state.
func (m *StatelessTable) State() string { return m.state.(string) }

// Can reports whether e would be accepted now.
func (m *StatelessTable) Can(ctx context.Context, e string) bool {
	ok, err := m.sm.CanFireCtx(ctx, e)
	return ok && err == nil
}

// Permitted returns the events accepted now.
func (m *StatelessTable) Permitted(ctx context.Context) []any {
	t, _ := m.sm.PermittedTriggersCtx(ctx)
	return t
}

// SetState puts the machine in s with its counters cleared (for tests).
func (m *StatelessReview) SetState(s string) {
	m.state = s
	m.counters = counters{Criticality: m.Criticality}
}

// SetState puts the machine in s (for tests).
func (m *StatelessTable) SetState(s string) { m.state = s }
