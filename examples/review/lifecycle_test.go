package review_test

import (
	"context"
	"errors"
	"testing"

	"github.com/fsmgen/fsmgen/generated/review"
)

// TestSeed003Lifecycle walks one task through every row of the seed's Valid Transitions
// table, as the worker and the review agents would, in one life: blocked before it starts
// and reset, started, blocked and resumed, reviewed, sent back for fixes, reviewed again
// and completed. The review step refuses to finish before its review is in.
func TestSeed003Lifecycle(t *testing.T) {
	ctx := context.Background()
	m := review.NewTask()
	walk := func(steps ...review.State) {
		t.Helper()
		for _, s := range steps {
			seedFire(t, m, mustEvent(t, s.String()), s)
		}
	}
	walk(review.StateBlocked, review.StateNotStarted, review.StateInProgress, review.StateBlocked,
		review.StateInProgress, review.StatePendingReview, review.StateUnderReview)
	var ge *review.GuardError
	if _, err := m.Fire(ctx, review.EventFinalReview); !errors.As(err, &ge) || m.State() != review.StateUnderReview {
		t.Fatalf("final review before any review: %v, in %s", err, m.State())
	}
	seedFire(t, m, review.EventReviewSubmitted, review.StateUnderReview)
	walk(review.StateFinalReview, review.StateInProgress, review.StatePendingReview, review.StateUnderReview)
	seedFire(t, m, review.EventReviewSubmitted, review.StateUnderReview)
	walk(review.StateFinalReview, review.StateCompleted)
	if _, err := m.Fire(ctx, review.EventInProgress); err == nil || m.State() != review.StateCompleted {
		t.Fatalf("a completed task accepted in_progress: now %s", m.State())
	}
}

// mustEvent is the event named like a state (each transition of the table is named by its
// target).
func mustEvent(t *testing.T, name string) review.Event {
	t.Helper()
	e, err := review.ParseEvent(name)
	if err != nil {
		t.Fatal(err)
	}
	return e
}
