// Package hand is the floor of the benchmarks: the seed 003 machine and the big machine as
// a careful person writes them without a library, with small integer types, a switch and
// preallocated errors. The big machine is also kept the other way a person writes it, as a
// table built at init (Big), which the benchmarks show beside the floor.
package hand

import "errors"

// Refusals. Like the generated code's, they allocate nothing.
var (
	ErrInvalidTransition = errors.New("hand: invalid transition")
	ErrGuard             = errors.New("hand: guard does not hold")
)

// State is a state of the seed 003 machine.
type State uint8

// The states, in the spec's order.
const (
	NotStarted State = iota
	InProgress
	PendingReview
	UnderReview
	FinalReview
	Completed
	Blocked
)

var stateNames = [...]string{"not_started", "in_progress", "pending_review", "under_review", "final_review", "completed", "blocked"}

func (s State) String() string {
	if int(s) < len(stateNames) {
		return stateNames[s]
	}
	return "?"
}

// Event is an event of the seed 003 machine. Events are named by their target state.
type Event uint8

// The events, in the spec's order.
const (
	ToInProgress Event = iota
	ToBlocked
	ToPendingReview
	ToNotStarted
	ToUnderReview
	ToFinalReview
	ToCompleted
	ReviewSubmitted
	SecurityReviewSubmitted
	NumEvents = 9
)

var eventNames = [...]string{"in_progress", "blocked", "pending_review", "not_started", "under_review", "final_review", "completed", "review_submitted", "security_review_submitted"}

func (e Event) String() string {
	if int(e) < len(eventNames) {
		return eventNames[e]
	}
	return "?"
}

// Criticality decides how many reviews the review step needs.
type Criticality uint8

// The criticalities.
const (
	Standard Criticality = iota
	Complex
	SecuritySensitive
)

// Review is the seed 003 machine.
type Review struct {
	state           State
	Criticality     Criticality
	reviews         int32
	securityReviews int32
}

// NewReview returns a machine in not_started.
func NewReview() Review { return Review{} }

// State returns the current state.
func (m *Review) State() State { return m.state }

// reviewsComplete is the guard of under_review -> final_review.
func (m *Review) reviewsComplete() bool {
	switch m.Criticality {
	case Complex:
		return m.reviews >= 2
	case SecuritySensitive:
		return m.reviews >= 2 && m.securityReviews >= 2
	}
	return m.reviews >= 1
}

// Fire fires e: it returns the new state, or the unchanged state and an error.
func (m *Review) Fire(e Event) (State, error) {
	switch m.state {
	case NotStarted:
		switch e {
		case ToInProgress:
			m.state = InProgress
			return m.state, nil
		case ToBlocked:
			m.state = Blocked
			return m.state, nil
		}
	case InProgress:
		switch e {
		case ToPendingReview:
			m.state = PendingReview
			return m.state, nil
		case ToBlocked:
			m.state = Blocked
			return m.state, nil
		}
	case Blocked:
		switch e {
		case ToNotStarted:
			m.state = NotStarted
			return m.state, nil
		case ToInProgress:
			m.state = InProgress
			return m.state, nil
		}
	case PendingReview:
		if e == ToUnderReview {
			m.reviews, m.securityReviews = 0, 0
			m.state = UnderReview
			return m.state, nil
		}
	case UnderReview:
		switch e {
		case ReviewSubmitted:
			m.reviews++
			return m.state, nil
		case SecurityReviewSubmitted:
			m.reviews++
			m.securityReviews++
			return m.state, nil
		case ToFinalReview:
			if !m.reviewsComplete() {
				return m.state, ErrGuard
			}
			m.state = FinalReview
			return m.state, nil
		}
	case FinalReview:
		switch e {
		case ToCompleted:
			m.state = Completed
			return m.state, nil
		case ToInProgress:
			m.state = InProgress
			return m.state, nil
		}
	}
	return m.state, ErrInvalidTransition
}

// Can reports whether e would be accepted now (guards included).
func (m *Review) Can(e Event) bool {
	switch m.state {
	case NotStarted:
		return e == ToInProgress || e == ToBlocked
	case InProgress:
		return e == ToPendingReview || e == ToBlocked
	case Blocked:
		return e == ToNotStarted || e == ToInProgress
	case PendingReview:
		return e == ToUnderReview
	case UnderReview:
		return e == ReviewSubmitted || e == SecurityReviewSubmitted || e == ToFinalReview && m.reviewsComplete()
	case FinalReview:
		return e == ToCompleted || e == ToInProgress
	}
	return false
}

// Permitted appends the events accepted now to buf, in declaration order.
func (m *Review) Permitted(buf []Event) []Event {
	for e := Event(0); e < NumEvents; e++ {
		if m.Can(e) {
			buf = append(buf, e)
		}
	}
	return buf
}

// SetState puts the machine in s with its counters cleared (for tests).
func (m *Review) SetState(s State) { *m = Review{state: s, Criticality: m.Criticality} }
