package review_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/fsmgen/fsmgen/generated/review"
)

// Seed 003: only the transitions of the valid-transitions table are accepted; skipping a
// phase is rejected, the state stays unchanged and the caller gets a typed error.
func Example() {
	ctx := context.Background()
	m := review.NewTask()
	m.Fire(ctx, review.EventInProgress)
	m.Fire(ctx, review.EventPendingReview)

	_, err := m.Fire(ctx, review.EventCompleted) // pending_review -> completed skips phases
	var ite *review.InvalidTransitionError
	fmt.Println(errors.As(err, &ite), m.State())
	fmt.Println(err)
	fmt.Println("permitted:", ite.Permitted())
	// Output:
	// true pending_review
	// review: no transition from pending_review on completed
	// permitted: [under_review]
}

// The review step needs one review for a standard task and two for a complex one.
func Example_criticality() {
	ctx := context.Background()
	m := review.NewTask()
	m.Context.Criticality = review.CriticalityComplex
	for _, e := range []review.Event{review.EventInProgress, review.EventPendingReview, review.EventUnderReview, review.EventReviewSubmitted} {
		m.Fire(ctx, e)
	}
	_, err := m.Fire(ctx, review.EventFinalReview)
	fmt.Println(m.CountReviews(), errors.Is(err, review.ErrGuard))
	m.Fire(ctx, review.EventReviewSubmitted)
	to, err := m.Fire(ctx, review.EventFinalReview)
	fmt.Println(m.CountReviews(), to, err)
	// Output:
	// 1 true
	// 2 final_review <nil>
}
