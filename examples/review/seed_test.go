package review_test

// Scenario tests for seed 003 (/work/shared/seeds/003_*.txt, "Task State Machine" of the
// multi-agent orchestration system): each block quotes the document's rule and drives the
// generated machine through it.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/fsmgen/fsmgen/generated/review"
)

// The document's implementation, state_validation.go.
var seedValidTransitions = map[string][]string{
	"not_started":    {"in_progress", "blocked"},
	"in_progress":    {"pending_review", "blocked"},
	"blocked":        {"in_progress", "not_started"},
	"pending_review": {"under_review"},
	"under_review":   {"final_review"},
	"final_review":   {"completed", "in_progress"},
	"completed":      {},
}

func seedFire(t *testing.T, m *review.Task, e review.Event, want review.State) {
	t.Helper()
	to, err := m.Fire(context.Background(), e)
	if err != nil || to != want || m.State() != want {
		t.Fatalf("%s: %v (state %s), %v; want %s", e, to, m.State(), err, want)
	}
}

func seedJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// seedIn restores a task in state s; under review it has enough reviews for its criticality.
func seedIn(t *testing.T, s review.State) *review.Task {
	t.Helper()
	snap := review.TaskSnapshot{Version: 1, ID: "task-9", State: s}
	if s == review.StateUnderReview {
		snap.Counters = map[string]int{"reviews": 1}
	}
	m, err := review.RestoreTask(snap)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestSeed003ReviewPipeline(t *testing.T) {
	ctx := context.Background()

	// "Valid Transitions" (and the state diagram), walked end to end: worker starts, is
	// blocked and resumes, completes, a review agent audits, all reviews are submitted, fixes
	// are needed, the second round passes and the final report is produced.
	t.Run("valid transitions", func(t *testing.T) {
		m := review.NewTask()
		if m.State() != review.StateNotStarted {
			t.Fatalf("a new task is %s", m.State())
		}
		seedFire(t, m, review.EventBlocked, review.StateBlocked)             // dependency not satisfied
		seedFire(t, m, review.EventNotStarted, review.StateNotStarted)       // blocker resolved (reset)
		seedFire(t, m, review.EventInProgress, review.StateInProgress)       // worker starts task
		seedFire(t, m, review.EventBlocked, review.StateBlocked)             // worker encounters blocker
		seedFire(t, m, review.EventInProgress, review.StateInProgress)       // blocker resolved (resume)
		seedFire(t, m, review.EventPendingReview, review.StatePendingReview) // worker completes task
		seedFire(t, m, review.EventUnderReview, review.StateUnderReview)     // review agent starts auditing
		seedFire(t, m, review.EventReviewSubmitted, review.StateUnderReview)
		seedFire(t, m, review.EventFinalReview, review.StateFinalReview) // all required reviews submitted
		seedFire(t, m, review.EventInProgress, review.StateInProgress)   // fixes needed based on review
		seedFire(t, m, review.EventPendingReview, review.StatePendingReview)
		seedFire(t, m, review.EventUnderReview, review.StateUnderReview)
		if m.CountReviews() != 0 {
			t.Errorf("a new review round starts with %d reviews", m.CountReviews())
		}
		seedFire(t, m, review.EventReviewSubmitted, review.StateUnderReview)
		seedFire(t, m, review.EventFinalReview, review.StateFinalReview)
		seedFire(t, m, review.EventCompleted, review.StateCompleted) // final report produced
		if !m.State().IsTerminal() || m.Seq() != 15 {
			t.Errorf("terminal %v, %d transitions", m.State().IsTerminal(), m.Seq())
		}
	})

	// "The following transitions are rejected by the state validator: Skipping phases;
	// Going backwards; Any transition not in the valid transitions table." Every From -> To
	// pair is compared with ValidTransitions.
	t.Run("exactly the ValidTransitions map", func(t *testing.T) {
		for _, from := range review.States() {
			valid := map[string]bool{}
			for _, to := range seedValidTransitions[from.String()] {
				valid[to] = true
			}
			if _, ok := seedValidTransitions[from.String()]; !ok && from != review.StateCompleted {
				t.Errorf("%s is not in the document's map", from)
			}
			for _, to := range review.States() {
				e, err := review.ParseEvent(to.String()) // transitions are named by their target
				if err != nil {
					t.Fatal(err)
				}
				m := seedIn(t, from)
				before := seedJSON(t, m.Snapshot())
				got, err := m.Fire(ctx, e)
				if valid[to.String()] {
					if err != nil || got != to {
						t.Errorf("%s -> %s: %v, %v; the document allows it", from, to, got, err)
					}
					continue
				}
				var ite *review.InvalidTransitionError
				if !errors.As(err, &ite) || got != from || m.State() != from || seedJSON(t, m.Snapshot()) != before {
					t.Errorf("%s -> %s: %v, %v; the document rejects it, state unchanged", from, to, got, err)
				}
			}
		}
	})

	// "Error Handling: When an invalid transition is attempted: 1. The transition is
	// rejected 2. An error is logged with details 3. The task status remains unchanged 4. The
	// caller receives an error response."
	t.Run("invalid transitions are rejected, logged and change nothing", func(t *testing.T) {
		cases := []struct {
			name     string
			from     review.State
			event    review.Event
			terminal bool
		}{
			{"skipping phases", review.StatePendingReview, review.EventCompleted, false},
			{"going backwards", review.StateCompleted, review.EventUnderReview, true},
			{"not in the table", review.StateUnderReview, review.EventInProgress, false},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				var logs bytes.Buffer
				m := seedIn(t, c.from)
				m.SetLogger(slog.New(slog.NewTextHandler(&logs, nil)))
				before := seedJSON(t, m.Snapshot())
				to, err := m.Fire(ctx, c.event) // 1, 4: rejected, the caller gets the error
				var ite *review.InvalidTransitionError
				if !errors.As(err, &ite) || ite.State != c.from || ite.Event != c.event || ite.Reason() != "invalid_transition" {
					t.Fatalf("%s on %s: %v", c.from, c.event, err)
				}
				if to != c.from || m.State() != c.from || seedJSON(t, m.Snapshot()) != before { // 3
					t.Errorf("the status changed to %s", m.State())
				}
				line := logs.String() // 2: logged with details
				for _, want := range []string{"level=WARN", `msg="event refused"`, "machine=Task", "id=task-9", "state=" + c.from.String(), "event=" + c.event.String(), "error=" + `"` + err.Error() + `"`} {
					if !strings.Contains(line, want) {
						t.Errorf("log line %q lacks %q", line, want)
					}
				}
				if strings.Count(line, "\n") != 1 {
					t.Errorf("%d log lines, want 1", strings.Count(line, "\n"))
				}
				if c.terminal != strings.Contains(err.Error(), "is terminal") {
					t.Errorf("error text %q", err)
				}
			})
		}
		// An accepted event logs nothing.
		var logs bytes.Buffer
		m := seedIn(t, review.StatePendingReview)
		m.SetLogger(slog.New(slog.NewTextHandler(&logs, nil)))
		seedFire(t, m, review.EventUnderReview, review.StateUnderReview)
		if logs.Len() != 0 {
			t.Errorf("an accepted event was logged: %s", logs.String())
		}
	})

	// "Criticality Levels: Task criticality affects the review process: standard: Exactly 1
	// Review Agent; complex: ≥2 Review Agents in parallel; security-sensitive: ≥2 Review
	// Agents with security focus."
	t.Run("criticality sets the reviews needed", func(t *testing.T) {
		if m := review.NewTask(); m.Context.Criticality != review.CriticalityStandard {
			t.Errorf("default criticality %s", m.Context.Criticality)
		}
		cases := []struct {
			level   string
			reviews []review.Event // submitted before each attempt to finish the review
			ready   []bool         // whether final_review is accepted after each one
		}{
			{"standard", []review.Event{review.EventReviewSubmitted}, []bool{true}},
			{"complex", []review.Event{review.EventReviewSubmitted, review.EventReviewSubmitted}, []bool{false, true}},
			{"complex", []review.Event{review.EventSecurityReviewSubmitted, review.EventReviewSubmitted}, []bool{false, true}},
			{"security-sensitive", []review.Event{review.EventReviewSubmitted, review.EventSecurityReviewSubmitted, review.EventSecurityReviewSubmitted}, []bool{false, false, true}},
			{"security-sensitive", []review.Event{review.EventSecurityReviewSubmitted, review.EventSecurityReviewSubmitted}, []bool{false, true}},
		}
		for _, c := range cases {
			crit, err := review.ParseCriticality(c.level)
			if err != nil {
				t.Fatal(err)
			}
			m := review.NewTask()
			m.Context.Criticality = crit
			seedFire(t, m, review.EventInProgress, review.StateInProgress)
			seedFire(t, m, review.EventPendingReview, review.StatePendingReview)
			seedFire(t, m, review.EventUnderReview, review.StateUnderReview)
			// No review yet: the step is not complete at any level.
			if _, err := m.Fire(ctx, review.EventFinalReview); !errors.Is(err, review.ErrGuard) {
				t.Errorf("%s with no review: %v", c.level, err)
			}
			for i, e := range c.reviews {
				seedFire(t, m, e, review.StateUnderReview)
				to, err := m.Fire(ctx, review.EventFinalReview)
				if c.ready[i] {
					if err != nil || to != review.StateFinalReview {
						t.Errorf("%s after %v: %v, %v; want final_review", c.level, c.reviews[:i+1], to, err)
					}
					continue
				}
				var ge *review.GuardError
				if !errors.As(err, &ge) || ge.Reason() != "guard" || to != review.StateUnderReview {
					t.Errorf("%s after %v: %v, %v; want a GuardError", c.level, c.reviews[:i+1], to, err)
				}
			}
			sec := 0
			for _, e := range c.reviews {
				if e == review.EventSecurityReviewSubmitted {
					sec++
				}
			}
			if m.CountReviews() != len(c.reviews) || m.CountSecurityReviews() != sec {
				t.Errorf("%s: %d reviews, %d security reviews", c.level, m.CountReviews(), m.CountSecurityReviews())
			}
		}
	})
}
