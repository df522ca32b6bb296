// Package peers implements the benchmark machines with the runtime libraries fsmgen is
// compared with, github.com/looplab/fsm and github.com/qmuntal/stateless, the way their
// documentation shows: states and events are strings, guards and counters are callbacks
// that close over the user's own struct. Each wrapper adds one method call around the
// library and nothing that allocates.
package peers

import (
	"context"

	"github.com/fsmgen/fsmgen/bench/specgen"
	"github.com/looplab/fsm"
)

// Seed 003's names: events are named by their target state.
const (
	NotStarted              = "not_started"
	InProgress              = "in_progress"
	PendingReview           = "pending_review"
	UnderReview             = "under_review"
	FinalReview             = "final_review"
	Completed               = "completed"
	Blocked                 = "blocked"
	ReviewSubmitted         = "review_submitted"
	SecurityReviewSubmitted = "security_review_submitted"
)

// Criticalities of seed 003.
const (
	Standard = iota
	Complex
	SecuritySensitive
)

// counters is what the seed 003 machine keeps besides its state.
type counters struct {
	Criticality     int
	reviews         int
	securityReviews int
}

func (c *counters) reviewsComplete() bool {
	switch c.Criticality {
	case Complex:
		return c.reviews >= 2
	case SecuritySensitive:
		return c.reviews >= 2 && c.securityReviews >= 2
	}
	return c.reviews >= 1
}

// LooplabReview is seed 003 on looplab/fsm.
type LooplabReview struct {
	counters
	f *fsm.FSM
}

// NewLooplabReview builds the machine in not_started.
func NewLooplabReview() *LooplabReview {
	m := &LooplabReview{}
	m.f = fsm.NewFSM(NotStarted,
		fsm.Events{
			{Name: InProgress, Src: []string{NotStarted, Blocked, FinalReview}, Dst: InProgress},
			{Name: Blocked, Src: []string{NotStarted, InProgress}, Dst: Blocked},
			{Name: PendingReview, Src: []string{InProgress}, Dst: PendingReview},
			{Name: NotStarted, Src: []string{Blocked}, Dst: NotStarted},
			{Name: UnderReview, Src: []string{PendingReview}, Dst: UnderReview},
			{Name: FinalReview, Src: []string{UnderReview}, Dst: FinalReview},
			{Name: Completed, Src: []string{FinalReview}, Dst: Completed},
			// Internal transitions: looplab runs the before_/after_ callbacks and
			// reports fsm.NoTransitionError, which Fire treats as success.
			{Name: ReviewSubmitted, Src: []string{UnderReview}, Dst: UnderReview},
			{Name: SecurityReviewSubmitted, Src: []string{UnderReview}, Dst: UnderReview},
		},
		fsm.Callbacks{
			"enter_" + UnderReview: func(context.Context, *fsm.Event) {
				m.reviews, m.securityReviews = 0, 0
			},
			"after_" + ReviewSubmitted: func(context.Context, *fsm.Event) {
				m.reviews++
			},
			"after_" + SecurityReviewSubmitted: func(context.Context, *fsm.Event) {
				m.reviews++
				m.securityReviews++
			},
			"before_" + FinalReview: func(_ context.Context, e *fsm.Event) {
				if !m.reviewsComplete() {
					e.Cancel()
				}
			},
		},
	)
	return m
}

// Reset puts the machine back in not_started with its counters cleared.
func (m *LooplabReview) Reset() {
	m.f.SetState(NotStarted)
	m.counters = counters{Criticality: m.Criticality}
}

// Fire fires e; an internal transition (fsm.NoTransitionError) is a success.
func (m *LooplabReview) Fire(ctx context.Context, e string) error {
	return looplabFire(ctx, m.f, e)
}

// State returns the current state.
func (m *LooplabReview) State() string { return m.f.Current() }

// Can reports whether e has a transition from the current state. looplab does not run
// guards (before_ callbacks) here, so Can(final_review) holds in under_review whatever
// the counters say; the benchmarks query unguarded events only.
func (m *LooplabReview) Can(e string) bool { return m.f.Can(e) }

// Permitted returns the events with a transition from the current state, in no order.
func (m *LooplabReview) Permitted() []string { return m.f.AvailableTransitions() }

func looplabFire(ctx context.Context, f *fsm.FSM, e string) error {
	err := f.Event(ctx, e)
	if err != nil {
		if nt, ok := err.(fsm.NoTransitionError); ok && nt.Err == nil {
			return nil
		}
	}
	return err
}

// LooplabTable is a guard-free machine from a specgen table on looplab/fsm.
type LooplabTable struct {
	f       *fsm.FSM
	initial string
}

// NewLooplabTable builds the machine in its initial state: one event description per
// transition.
func NewLooplabTable(sm specgen.Machine) *LooplabTable {
	events := make(fsm.Events, 0, len(sm.Transitions))
	for _, t := range sm.Transitions {
		events = append(events, fsm.EventDesc{Name: sm.Events[t.Event], Src: []string{sm.States[t.From]}, Dst: sm.States[t.To]})
	}
	return &LooplabTable{f: fsm.NewFSM(sm.States[0], events, nil), initial: sm.States[0]}
}

// Reset puts the machine back in its initial state.
func (m *LooplabTable) Reset() { m.f.SetState(m.initial) }

// Fire fires e.
func (m *LooplabTable) Fire(ctx context.Context, e string) error { return looplabFire(ctx, m.f, e) }

// State returns the current state.
func (m *LooplabTable) State() string { return m.f.Current() }

// Can reports whether e has a transition from the current state.
func (m *LooplabTable) Can(e string) bool { return m.f.Can(e) }

// Permitted returns the events with a transition from the current state, in no order.
func (m *LooplabTable) Permitted() []string { return m.f.AvailableTransitions() }

// SetState puts the machine in s with its counters cleared (for tests).
func (m *LooplabReview) SetState(s string) {
	m.f.SetState(s)
	m.counters = counters{Criticality: m.Criticality}
}

// SetState puts the machine in s (for tests).
func (m *LooplabTable) SetState(s string) { m.f.SetState(s) }
