package hand

// ReviewTable is the seed 003 machine written the fastest way a person writes it: a table
// of targets indexed by state and event, with code only for the transitions that count
// reviews or are guarded. It is the floor of every benchmark row of the review machine; the
// switch (Review) is the second reference.
type ReviewTable struct {
	state           State
	Criticality     Criticality
	reviews         int32
	securityReviews int32
}

// NumStates is the number of states of the seed 003 machine.
const NumStates = 7

// Marks in reviewMoves besides target states.
const (
	tableRefused = 0xFF // no transition
	tableCode    = 0xFE // counted or guarded: decided in code
)

// reviewMoves[s][e] is the target of e in s, tableRefused or tableCode.
var reviewMoves = func() (t [NumStates][NumEvents]uint8) {
	for s := range t {
		for e := range t[s] {
			t[s][e] = tableRefused
		}
	}
	t[NotStarted][ToInProgress], t[NotStarted][ToBlocked] = uint8(InProgress), uint8(Blocked)
	t[InProgress][ToPendingReview], t[InProgress][ToBlocked] = uint8(PendingReview), uint8(Blocked)
	t[Blocked][ToNotStarted], t[Blocked][ToInProgress] = uint8(NotStarted), uint8(InProgress)
	t[PendingReview][ToUnderReview] = tableCode
	t[UnderReview][ReviewSubmitted], t[UnderReview][SecurityReviewSubmitted], t[UnderReview][ToFinalReview] = tableCode, tableCode, tableCode
	t[FinalReview][ToCompleted], t[FinalReview][ToInProgress] = uint8(Completed), uint8(InProgress)
	return t
}()

// NewReviewTable returns a machine in not_started.
func NewReviewTable() ReviewTable { return ReviewTable{} }

// State returns the current state.
func (m *ReviewTable) State() State { return m.state }

// Fire fires e: it returns the new state, or the unchanged state and an error.
func (m *ReviewTable) Fire(e Event) (State, error) {
	if int(m.state) < NumStates && int(e) < NumEvents {
		switch to := reviewMoves[m.state][e]; to {
		case tableRefused:
		case tableCode:
			return m.code(e)
		default:
			m.state = State(to)
			return m.state, nil
		}
	}
	return m.state, ErrInvalidTransition
}

// code applies the transitions that count or are guarded.
func (m *ReviewTable) code(e Event) (State, error) {
	switch e {
	case ToUnderReview:
		m.reviews, m.securityReviews = 0, 0
		m.state = UnderReview
	case ReviewSubmitted:
		m.reviews++
	case SecurityReviewSubmitted:
		m.reviews++
		m.securityReviews++
	case ToFinalReview:
		if !m.reviewsComplete() {
			return m.state, ErrGuard
		}
		m.state = FinalReview
	}
	return m.state, nil
}

func (m *ReviewTable) reviewsComplete() bool {
	switch m.Criticality {
	case Complex:
		return m.reviews >= 2
	case SecuritySensitive:
		return m.reviews >= 2 && m.securityReviews >= 2
	}
	return m.reviews >= 1
}

// Can reports whether e would be accepted now (guards included).
func (m *ReviewTable) Can(e Event) bool {
	if int(m.state) >= NumStates || int(e) >= NumEvents {
		return false
	}
	switch reviewMoves[m.state][e] {
	case tableRefused:
		return false
	case tableCode:
		return e != ToFinalReview || m.reviewsComplete()
	}
	return true
}

// Permitted appends the events accepted now to buf, in declaration order.
func (m *ReviewTable) Permitted(buf []Event) []Event {
	if int(m.state) >= NumStates {
		return buf
	}
	for e, to := range &reviewMoves[m.state] {
		if to != tableRefused && (to != tableCode || m.Can(Event(e))) {
			buf = append(buf, Event(e))
		}
	}
	return buf
}

// SetState puts the machine in s with its counters cleared (for tests).
func (m *ReviewTable) SetState(s State) { *m = ReviewTable{state: s, Criticality: m.Criticality} }
