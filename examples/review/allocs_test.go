//go:build !race

// The race detector allocates for its own bookkeeping, so these counts hold only without
// it: make test runs them in a build without -race.

package review_test

import (
	"context"
	"testing"

	"github.com/fsmgen/fsmgen/generated/review"
	"github.com/fsmgen/fsmgen/internal/allocs"
)

// TestAllocs counts exactly what one call allocates on seed 003's machine, which declares a
// context, counters and counter guards but no history, payloads or idempotency keys: none
// of its firings allocates.
func TestAllocs(t *testing.T) {
	ctx := context.Background()
	fresh := func() *review.Task { return review.NewTask() }
	underReview := func() *review.Task {
		m := review.NewTask()
		for _, e := range []review.Event{review.EventInProgress, review.EventPendingReview, review.EventUnderReview} {
			if _, err := m.Fire(ctx, e); err != nil {
				t.Fatal(err)
			}
		}
		return m
	}
	var buf [review.NumEvents]review.Event
	for _, c := range []struct {
		name  string
		setup func() *review.Task
		do    func(*review.Task)
		want  float64
	}{
		{"valid Fire from the table", fresh, func(m *review.Task) { m.Fire(ctx, review.EventInProgress) }, 0},
		{"refused Fire (no transition)", fresh, func(m *review.Task) { m.Fire(ctx, review.EventCompleted) }, 0},
		{"refused Fire (guard)", underReview, func(m *review.Task) { m.Fire(ctx, review.EventFinalReview) }, 0},
		{"counting Fire (step)", underReview, func(m *review.Task) { m.Fire(ctx, review.EventReviewSubmitted) }, 0},
		{"FireWith", fresh, func(m *review.Task) { m.FireWith(ctx, review.EventInProgress, review.TaskInput{Actor: "worker"}) }, 0},
		{"Can", underReview, func(m *review.Task) { m.Can(ctx, review.EventFinalReview) }, 0},
		{"Permitted", underReview, func(m *review.Task) { m.Permitted(ctx, buf[:0]) }, 0},
	} {
		if got := allocs.Once(c.setup, c.do); got != c.want {
			t.Errorf("%s: %v allocations, want %v", c.name, got, c.want)
		}
	}
}
