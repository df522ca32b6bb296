package build_test

// Scenario tests for seed 004 (/work/shared/seeds/004_*.txt, the build workflow's "Task State
// Machine"): each block quotes the document's rule and drives the generated machine through it.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/fsmgen/fsmgen/examples/build/seedlog"
	"github.com/fsmgen/fsmgen/fsmrt"
	"github.com/fsmgen/fsmgen/generated/build"
)

// seedClock is a fake clock the tests move by hand.
type seedClock struct{ now time.Time }

func (c *seedClock) Now() time.Time                    { return c.now }
func (c *seedClock) Advance(d time.Duration) time.Time { c.now = c.now.Add(d); return c.now }

var seedT0 = time.Date(2026, 6, 1, 8, 0, 0, 0, time.UTC)

// seedHooks preserves the failure context and documents the CTO's guidance.
type seedHooks struct{ did []string }

func (h *seedHooks) RecordFailure(_ context.Context, m *build.Task, s build.TaskStep) {
	h.did = append(h.did, fmt.Sprintf("failure %d of %s -> %s", m.CountFailures(s.From)+1, s.From, s.To))
}

func (h *seedHooks) RecordCtoGuidance(_ context.Context, m *build.Task, s build.TaskStep) {
	h.did = append(h.did, fmt.Sprintf("cto guidance: back to %s", s.To))
}

// seedStep is one row of the Transition Rules tables: event, actor (role and name), reason.
type seedStep struct {
	e      build.Event
	role   build.Role
	actor  string
	reason string
	to     build.State
}

var (
	orchestrator = seedStep{role: build.RoleBuildOrchestrator, actor: "build orchestrator"}
	validator    = seedStep{role: build.RoleSolutionValidator, actor: "@agent-solution-validator"}
	developer    = seedStep{role: build.RoleFullstackDeveloper, actor: "@agent-fullstack-developer"}
	monitor      = seedStep{role: build.RoleQualityMonitor, actor: "@agent-quality-monitor"}
	gitManager   = seedStep{role: build.RoleGitManager, actor: "@agent-git-manager"}
	cto          = seedStep{role: build.RoleCto, actor: "@agent-cto"}
)

func (s seedStep) do(e build.Event, reason string, to build.State) seedStep {
	s.e, s.reason, s.to = e, reason, to
	return s
}

// The Forward Transitions table.
var seedForward = []seedStep{
	orchestrator.do(build.EventPickedUp, "Task picked up", build.StateAssigned),
	validator.do(build.EventValidationStarted, "Validation starts", build.StatePlanning),
	validator.do(build.EventApproachApproved, "Approach approved", build.StateValidated),
	developer.do(build.EventImplementationStarted, "Implementation starts", build.StateInProgress),
	developer.do(build.EventCodeComplete, "Code complete", build.StateTesting),
	developer.do(build.EventSelfChecksDone, "Self-checks done", build.StateQualityReview),
	monitor.do(build.EventGatesPassed, "Gates passed", build.StateApproved),
	gitManager.do(build.EventReadyToCommit, "Ready to commit", build.StateCommitting),
	gitManager.do(build.EventCommitSucceeded, "Commit successful", build.StateCompleted),
}

var (
	rejected        = validator.do(build.EventApproachRejected, "Approach rejected", build.StatePlanning)
	qualityFailed   = monitor.do(build.EventQualityFailed, "Quality failed", build.StateInProgress)
	precommitFailed = gitManager.do(build.EventPrecommitFailed, "Pre-commit failed", build.StateInProgress)
	implFailed      = developer.do(build.EventImplementationFailed, "Implementation failed", build.StateInProgress)
)

func seedRun(t *testing.T, m *build.Task, steps ...seedStep) {
	t.Helper()
	for _, s := range steps {
		to, err := m.FireWith(context.Background(), s.e, build.TaskInput{Role: s.role, Actor: s.actor, Reason: s.reason})
		if err != nil || to != s.to || m.State() != s.to {
			t.Fatalf("%s by %s: %v (state %s), %v; want %s", s.e, s.actor, to, m.State(), err, s.to)
		}
	}
}

// seedTo is the forward path up to (not including) the step that leaves state s.
func seedTo(s build.State) []seedStep {
	for i, f := range seedForward {
		if i == 0 && s == build.StatePending {
			return nil
		}
		if f.to == s {
			return append([]seedStep(nil), seedForward[:i+1]...)
		}
	}
	panic("no forward path to " + s.String())
}

func seedNew(c *seedClock) (*build.Task, *seedHooks) {
	h := &seedHooks{}
	m := build.NewTask(h)
	m.SetClock(c)
	return m, h
}

func seedJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestSeed004BuildWorkflow(t *testing.T) {
	ctx := context.Background()

	// "Forward Transitions" with their actors; "Transition Validation": "Cannot skip states";
	// "Terminal states cannot transition".
	t.Run("forward transitions and their actors", func(t *testing.T) {
		m, _ := seedNew(&seedClock{now: seedT0})
		for _, s := range seedForward {
			// Another agent may not fire it.
			for _, r := range []build.Role{build.RoleNone, build.RoleBuildOrchestrator, build.RoleSolutionValidator, build.RoleFullstackDeveloper, build.RoleQualityMonitor, build.RoleGitManager, build.RoleCto} {
				if r == s.role {
					continue
				}
				_, err := m.FireWith(ctx, s.e, build.TaskInput{Role: r})
				var pe *build.PermissionError
				if !errors.As(err, &pe) || pe.Role != r || pe.Event != s.e {
					t.Errorf("%s by %q: %v, want a PermissionError", s.e, r, err)
				}
			}
			// Skipping ahead is refused.
			if s.e != build.EventCommitSucceeded {
				if _, err := m.FireWith(ctx, build.EventCommitSucceeded, build.TaskInput{Role: build.RoleHuman}); !errors.Is(err, build.ErrInvalidTransition) {
					t.Errorf("commit from %s: %v", m.State(), err)
				}
			}
			seedRun(t, m, s)
		}
		for _, e := range build.Events() {
			if _, err := m.FireWith(ctx, e, build.TaskInput{Role: build.RoleHuman}); !errors.Is(err, build.ErrInvalidTransition) {
				t.Errorf("%s in completed: %v", e, err)
			}
		}
	})

	// "State Timeouts: Not hard stops (warnings)"; "Timeout Actions: Warning at 80%, Alert at
	// 100%, Escalate at 150%"; the Timeout of each state (1 hour, 15 minutes, 30 minutes, 15
	// minutes, 4 hours (configurable), 30, 30, 10, 15 minutes, None, 1 hour, None).
	t.Run("per-state timeouts", func(t *testing.T) {
		want := map[build.State]time.Duration{
			build.StatePending: time.Hour, build.StateAssigned: 15 * time.Minute, build.StatePlanning: 30 * time.Minute,
			build.StateValidated: 15 * time.Minute, build.StateInProgress: 4 * time.Hour, build.StateTesting: 30 * time.Minute,
			build.StateQualityReview: 30 * time.Minute, build.StateApproved: 10 * time.Minute, build.StateCommitting: 15 * time.Minute,
			build.StateCompleted: 0, build.StateCtoIntervention: time.Hour, build.StateHumanEscalation: 0,
		}
		c := &seedClock{now: seedT0}
		m, _ := seedNew(c)
		for _, s := range build.States() {
			if got := m.Timeout(s); got != want[s] {
				t.Errorf("timeout of %s = %v, want %v", s, got, want[s])
			}
		}
		levels := func(d time.Duration) {
			t.Helper()
			s := m.State()
			entered := m.EnteredAt()
			for _, p := range []struct {
				after time.Duration
				want  build.TimeoutLevel
			}{
				{0, build.LevelNone},
				{d*80/100 - time.Second, build.LevelNone},
				{d * 80 / 100, build.LevelWarn},
				{d - time.Second, build.LevelWarn},
				{d, build.LevelAlert},
				{d*150/100 - time.Second, build.LevelAlert},
				{d * 150 / 100, build.LevelEscalate},
				{10 * d, build.LevelEscalate},
				// Long past the timeout, the level stays escalate: the arithmetic cannot
				// overflow for any duration (a 1h timeout once read "none" after 3 years).
				{3 * 365 * 24 * time.Hour, build.LevelEscalate},
				{100 * 365 * 24 * time.Hour, build.LevelEscalate},
				{time.Duration(math.MaxInt64), build.LevelEscalate},
			} {
				if got := m.TimeoutLevel(entered.Add(p.after)); got != p.want {
					t.Errorf("%s after %v of %v: %q, want %q", s, p.after, d, got, p.want)
				}
			}
			if m.State() != s {
				t.Errorf("a timeout moved the task from %s to %s", s, m.State())
			}
		}
		for _, s := range seedForward {
			levels(want[m.State()])
			c.Advance(7 * time.Minute)
			seedRun(t, m, s)
		}
		// completed: "Timeout: None".
		if l := m.TimeoutLevel(c.now.Add(1000 * time.Hour)); l != build.LevelNone {
			t.Errorf("completed reports %q", l)
		}

		// in_progress: "4 hours (configurable)", at run time.
		m, _ = seedNew(c)
		seedRun(t, m, seedTo(build.StateInProgress)...)
		if err := m.SetTimeout(build.StateInProgress, 2*time.Hour); err != nil {
			t.Fatal(err)
		}
		levels(2 * time.Hour)
		if got := m.TimeoutLevel(m.EnteredAt().Add(96 * time.Minute)); got != build.LevelWarn {
			t.Errorf("80%% of 2h: %q", got)
		}
		if err := m.SetTimeout(build.StateInProgress, 0); err == nil {
			t.Error("a zero timeout was accepted")
		}
		if err := m.SetTimeout(build.StatePending, 2*time.Hour); err == nil || m.Timeout(build.StatePending) != time.Hour {
			t.Errorf("pending's timeout is not configurable: %v", err)
		}
		// The changed timeout is part of the snapshot.
		var snap build.TaskSnapshot
		if err := json.Unmarshal([]byte(seedJSON(t, m.Snapshot())), &snap); err != nil {
			t.Fatal(err)
		}
		r, err := build.RestoreTask(snap, &seedHooks{})
		if err != nil || r.Timeout(build.StateInProgress) != 2*time.Hour || r.TimeoutLevel(r.EnteredAt().Add(2*time.Hour)) != build.LevelAlert {
			t.Errorf("restored timeout %v, %v", r.Timeout(build.StateInProgress), err)
		}
	})

	// "Failure Counting: Failures counted per state, not globally; Reset on successful state
	// transition; Increment on return to same state; Track separately for CTO attempts";
	// "any_state → cto_intervention: 3 failures"; "cto_intervention → previous_state: CTO
	// guidance"; "cto_intervention → human_escalation: 2 CTO attempts".
	t.Run("failures per state, CTO intervention and human escalation", func(t *testing.T) {
		m, h := seedNew(&seedClock{now: seedT0})
		seedRun(t, m, seedTo(build.StatePlanning)...)
		seedRun(t, m, rejected, rejected) // "planning → planning: Approach rejected (<3)"
		if m.CountFailures(build.StatePlanning) != 2 {
			t.Fatalf("planning failures %d", m.CountFailures(build.StatePlanning))
		}
		seedRun(t, m, validator.do(build.EventApproachApproved, "Approach approved", build.StateValidated))
		if m.CountFailures(build.StatePlanning) != 0 {
			t.Errorf("planning failures after approval: %d, want 0 (reset on success)", m.CountFailures(build.StatePlanning))
		}
		seedRun(t, m, developer.do(build.EventImplementationStarted, "", build.StateInProgress))
		seedRun(t, m, implFailed) // "Simple Retry: Same state, increment counter"
		seedRun(t, m, developer.do(build.EventCodeComplete, "", build.StateTesting), developer.do(build.EventSelfChecksDone, "", build.StateQualityReview))
		if m.CountFailures(build.StateInProgress) != 0 {
			t.Errorf("in_progress failures after code complete: %d", m.CountFailures(build.StateInProgress))
		}

		// quality_review fails twice, each time back to in_progress: counted for quality_review.
		back := []seedStep{developer.do(build.EventCodeComplete, "", build.StateTesting), developer.do(build.EventSelfChecksDone, "", build.StateQualityReview)}
		for i := 1; i <= 2; i++ {
			seedRun(t, m, qualityFailed)
			if n := m.CountFailures(build.StateQualityReview); n != i {
				t.Fatalf("quality_review failures %d, want %d", n, i)
			}
			seedRun(t, m, back...)
		}
		// The 3rd failure goes to cto_intervention instead.
		seedRun(t, m, monitor.do(build.EventQualityFailed, "Quality failed 3 times", build.StateCtoIntervention))
		if r, ok := m.Remembered(build.StateCtoIntervention); !ok || r != build.StateQualityReview {
			t.Errorf("cto_intervention remembers %s, %v", r, ok)
		}
		if n := m.CountFailures(build.StateQualityReview); n != 0 {
			t.Errorf("quality_review failures after the trip: %d", n)
		}
		// Only @agent-cto (or a human) gives the guidance.
		if _, err := m.FireWith(ctx, build.EventRetry, build.TaskInput{Role: build.RoleQualityMonitor}); !errors.Is(err, build.ErrPermission) {
			t.Errorf("quality monitor retries: %v", err)
		}
		seedRun(t, m, cto.do(build.EventRetry, "Guided retry", build.StateQualityReview)) // back to the previous state
		if m.CountCtoAttempts() != 1 {
			t.Errorf("cto attempts %d", m.CountCtoAttempts())
		}
		seedRun(t, m, monitor.do(build.EventGatesPassed, "", build.StateApproved), gitManager.do(build.EventReadyToCommit, "", build.StateCommitting))

		// committing fails 3 times: cto_intervention again; the 2nd CTO attempt escalates.
		again := []seedStep{developer.do(build.EventCodeComplete, "", build.StateTesting), developer.do(build.EventSelfChecksDone, "", build.StateQualityReview),
			monitor.do(build.EventGatesPassed, "", build.StateApproved), gitManager.do(build.EventReadyToCommit, "", build.StateCommitting)}
		seedRun(t, m, precommitFailed)
		seedRun(t, m, again...)
		seedRun(t, m, precommitFailed)
		seedRun(t, m, again...)
		seedRun(t, m, gitManager.do(build.EventPrecommitFailed, "Pre-commit failed 3 times", build.StateCtoIntervention))
		if r, _ := m.Remembered(build.StateCtoIntervention); r != build.StateCommitting {
			t.Errorf("cto_intervention remembers %s", r)
		}
		seedRun(t, m, cto.do(build.EventRetry, "Second guidance", build.StateHumanEscalation))
		if !m.State().IsTerminal() {
			t.Error("human_escalation is not terminal")
		}
		retries := 0
		for _, r := range m.History() {
			if r.Event == build.EventRetry && r.From == build.StateCtoIntervention {
				retries++
			}
		}
		if retries != 2 {
			t.Errorf("%d CTO attempts in the history", retries)
		}
		want := []string{
			"failure 1 of planning -> planning", "failure 2 of planning -> planning",
			"failure 1 of in_progress -> in_progress",
			"failure 1 of quality_review -> in_progress", "failure 2 of quality_review -> in_progress", "failure 3 of quality_review -> cto_intervention",
			"cto guidance: back to quality_review",
			"failure 1 of committing -> in_progress", "failure 2 of committing -> in_progress", "failure 3 of committing -> cto_intervention",
			"cto guidance: back to human_escalation",
		}
		if !reflect.DeepEqual(h.did, want) {
			t.Errorf("failure log\n got %q\nwant %q", h.did, want)
		}
	})

	// "Recovery Patterns: 1. Simple Retry: Same state, increment counter; 2. Guided Retry:
	// @agent-cto provides guidance; 3. Rollback: Return to earlier state; 4. Skip: Move to
	// next state (@agent-cto only); 5. Abandon: Mark as failed (human only)"; "Cannot skip
	// states (except @agent-cto override)". Simple and guided retries are shown above.
	t.Run("recovery patterns", func(t *testing.T) {
		// Skip: from each state where failures are counted, @agent-cto (and only it, or a
		// human) moves the task to the next state.
		next := map[build.State]build.State{
			build.StatePlanning: build.StateValidated, build.StateInProgress: build.StateTesting,
			build.StateQualityReview: build.StateApproved, build.StateCommitting: build.StateCompleted,
		}
		for _, from := range []build.State{build.StatePlanning, build.StateInProgress, build.StateQualityReview, build.StateCommitting} {
			m, _ := seedNew(&seedClock{now: seedT0})
			seedRun(t, m, seedTo(from)...)
			for _, r := range []build.Role{build.RoleNone, build.RoleBuildOrchestrator, build.RoleSolutionValidator, build.RoleFullstackDeveloper, build.RoleQualityMonitor, build.RoleGitManager} {
				if _, err := m.FireWith(ctx, build.EventSkipped, build.TaskInput{Role: r}); !errors.Is(err, build.ErrPermission) {
					t.Errorf("%q skips %s: %v, want a permission refusal", r, from, err)
				}
			}
			seedRun(t, m, cto.do(build.EventSkipped, "@agent-cto override", next[from]))
			if rec := m.History()[len(m.History())-1]; rec.From != from || rec.Actor != "@agent-cto" || rec.Reason != "@agent-cto override" {
				t.Errorf("skip from %s recorded as %+v", from, rec)
			}
		}
		// Skipping a state that failed: the CTO's retry returns the task, then the CTO
		// skips it, which resets its failures (a successful transition).
		m, _ := seedNew(&seedClock{now: seedT0})
		seedRun(t, m, seedTo(build.StatePlanning)...)
		seedRun(t, m, rejected, rejected, validator.do(build.EventApproachRejected, "Approach rejected 3 times", build.StateCtoIntervention))
		if _, err := m.FireWith(ctx, build.EventSkipped, build.TaskInput{Role: build.RoleCto}); !errors.Is(err, build.ErrInvalidTransition) {
			t.Errorf("skip from cto_intervention: %v", err)
		}
		seedRun(t, m, cto.do(build.EventRetry, "Guided retry", build.StatePlanning))
		seedRun(t, m, rejected)
		seedRun(t, m, cto.do(build.EventSkipped, "Approach accepted by @agent-cto", build.StateValidated))
		if n := m.CountFailures(build.StatePlanning); n != 0 {
			t.Errorf("planning failures after the skip: %d", n)
		}
		// No skip elsewhere: the forward path is the only way through the other states.
		for _, s := range []build.State{build.StatePending, build.StateAssigned, build.StateValidated, build.StateTesting, build.StateApproved, build.StateCtoIntervention} {
			r, err := build.RestoreTask(build.TaskSnapshot{Version: 1, State: s}, &seedHooks{})
			if err != nil {
				t.Fatal(err)
			}
			if r.CanWith(ctx, build.EventSkipped, build.TaskInput{Role: build.RoleCto}) {
				t.Errorf("@agent-cto may skip from %s", s)
			}
		}
		// Rollback: the failure transitions that return to an earlier state.
		m, _ = seedNew(&seedClock{now: seedT0})
		seedRun(t, m, seedTo(build.StateQualityReview)...)
		seedRun(t, m, qualityFailed)
		seedRun(t, m, seedForward[4], seedForward[5], seedForward[6], seedForward[7], precommitFailed)
		if m.State() != build.StateInProgress {
			t.Errorf("rolled back to %s", m.State())
		}
		// Abandon ("mark as failed") is not modelled: no state of the document is a failed
		// state, so no event ends a task other than by completing or escalating it.
		for _, s := range build.States() {
			if s.IsTerminal() && s != build.StateCompleted && s != build.StateHumanEscalation {
				t.Errorf("unexpected terminal state %s", s)
			}
		}
	})

	// "Time Tracking: stateEnteredAt, timeInState, totalTaskTime, timeByState"; StateTransition
	// {fromState, toState, timestamp, reason, actor}; "Include transition reasons, maintain
	// accurate timestamps".
	t.Run("history, actor, reason and time tracking", func(t *testing.T) {
		c := &seedClock{now: seedT0}
		m, _ := seedNew(c)
		c.Advance(50 * time.Minute)
		seedRun(t, m, seedForward[0]) // 50 minutes in pending
		c.Advance(10 * time.Minute)
		seedRun(t, m, seedForward[1]) // 10 minutes in assigned
		c.Advance(20 * time.Minute)
		seedRun(t, m, rejected) // a self-transition: a new stay in planning
		c.Advance(12 * time.Minute)
		now := c.now

		h := m.History()
		want := []build.TaskRecord{
			{From: build.StatePending, To: build.StateAssigned, Event: build.EventPickedUp, At: seedT0.Add(50 * time.Minute), Actor: "build orchestrator", Reason: "Task picked up"},
			{From: build.StateAssigned, To: build.StatePlanning, Event: build.EventValidationStarted, At: seedT0.Add(60 * time.Minute), Actor: "@agent-solution-validator", Reason: "Validation starts"},
			{From: build.StatePlanning, To: build.StatePlanning, Event: build.EventApproachRejected, At: seedT0.Add(80 * time.Minute), Actor: "@agent-solution-validator", Reason: "Approach rejected"},
		}
		if !reflect.DeepEqual(h, want) {
			t.Errorf("history\n got %+v\nwant %+v", h, want)
		}
		if !m.CreatedAt().Equal(seedT0) || !m.EnteredAt().Equal(seedT0.Add(80*time.Minute)) {
			t.Errorf("created %v, entered %v", m.CreatedAt(), m.EnteredAt())
		}
		if got := m.TimeInState(now); got != 12*time.Minute {
			t.Errorf("time in state %v", got)
		}
		if got := m.TotalTime(now); got != 92*time.Minute {
			t.Errorf("total time %v", got)
		}
		by := m.TimeByState(now)
		wantBy := map[build.State]time.Duration{build.StatePending: 50 * time.Minute, build.StateAssigned: 10 * time.Minute, build.StatePlanning: 32 * time.Minute}
		var sum time.Duration
		for _, s := range build.States() {
			sum += by[s]
			if by[s] != wantBy[s] {
				t.Errorf("time in %s = %v, want %v", s, by[s], wantBy[s])
			}
		}
		if sum != m.TotalTime(now) {
			t.Errorf("time by state sums to %v, total %v", sum, m.TotalTime(now))
		}
	})

	// "Event Logging: Required Events: 1. Every state transition"; "Event Format" with
	// timestamp, taskId, event STATE_TRANSITION, from, to, actor, reason, metadata.
	t.Run("JSON event log", func(t *testing.T) {
		c := &seedClock{now: time.Date(2024, 1, 1, 11, 0, 0, 0, time.UTC)}
		m, _ := seedNew(c)
		m.ID = "TASK-001"
		store := fsmrt.NewMemoryStore()
		m.SetStore(store)
		seedRun(t, m, seedTo(build.StatePlanning)...)
		c.now = time.Date(2024, 1, 1, 12, 0, 0, 0, time.UTC)
		seedRun(t, m, validator.do(build.EventApproachApproved, "Approach approved", build.StateValidated))

		log, err := m.EventLog(ctx, 0)
		if err != nil || len(log) != 3 {
			t.Fatalf("log: %v, %d entries", err, len(log))
		}
		for i, e := range log {
			if e.Actor != seedForward[i].actor || e.Reason != seedForward[i].reason || e.Seq != int64(i+1) {
				t.Errorf("log[%d] by %q (%q), seq %d", i, e.Actor, e.Reason, e.Seq)
			}
		}
		var doc map[string]any
		if err := json.Unmarshal([]byte(seedJSON(t, seedlog.Of(log[2]))), &doc); err != nil {
			t.Fatal(err)
		}
		want := map[string]any{
			"timestamp": "2024-01-01T12:00:00Z", "taskId": "TASK-001", "event": "STATE_TRANSITION",
			"from": "planning", "to": "validated", "actor": "@agent-solution-validator", "reason": "Approach approved",
			"metadata": map[string]any{},
		}
		for k, v := range want {
			if !reflect.DeepEqual(doc[k], v) {
				t.Errorf("%s = %#v, want %#v", k, doc[k], v)
			}
		}
		var extra []string
		for k := range doc {
			if _, ok := want[k]; !ok {
				extra = append(extra, k)
			}
		}
		sort.Strings(extra)
		// Beyond the seed's format the entry is numbered.
		if got := strings.Join(extra, ","); got != "seq" {
			t.Errorf("keys beyond the seed's format: %s", got)
		}
	})

	// The persistence seam: this spec declares no checkpoints, so the store holds the event
	// log alone and replaying it from the start rebuilds the machine.
	t.Run("replaying the event log gives the same machine", func(t *testing.T) {
		c := &seedClock{now: seedT0}
		m, _ := seedNew(c)
		m.ID = "TASK-002"
		m.Context.Title = "Add login"
		store := fsmrt.NewMemoryStore()
		m.SetStore(store)
		seedRun(t, m, seedTo(build.StatePlanning)...)
		for _, d := range []time.Duration{3, 4} {
			c.Advance(d * time.Minute)
			seedRun(t, m, rejected)
			m.Context.AssignedAgent = fmt.Sprintf("validator-%d", d)
		}
		c.Advance(5 * time.Minute)
		seedRun(t, m, validator.do(build.EventApproachRejected, "3rd rejection", build.StateCtoIntervention))
		c.Advance(time.Minute)
		seedRun(t, m, cto.do(build.EventRetry, "Guided retry", build.StatePlanning))
		c.Advance(time.Minute)
		seedRun(t, m, rejected)

		r, err := build.ReplayTask(ctx, store, "TASK-002", &seedHooks{})
		if err != nil {
			t.Fatal(err)
		}
		if a, b := seedJSON(t, m.Snapshot()), seedJSON(t, r.Snapshot()); a != b {
			t.Errorf("replayed machine differs:\n live %s\nreplay %s", a, b)
		}
		if r.CountFailures(build.StatePlanning) != 1 || r.CountCtoAttempts() != 1 || r.State() != build.StatePlanning || len(r.History()) != int(m.Seq()) {
			t.Errorf("replayed: %s, %d failures, %d cto attempts", r.State(), r.CountFailures(build.StatePlanning), r.CountCtoAttempts())
		}
	})
}

// "Query Interface: getTasksByState(state), getTasksExceedingTimeout(), getTasksUnderCtoReview(),
// getTasksWithMultipleFailures(), getTaskStateHistory(taskId)".
func TestSeed004QueryInterface(t *testing.T) {
	ctx := context.Background()
	now := seedT0.Add(6 * time.Hour)
	reg := build.NewTaskRegistry(0, nil)
	add := func(id string, steps []seedStep, enteredAgo time.Duration) *build.Task {
		t.Helper()
		m, _ := seedNew(&seedClock{now: seedT0})
		m.ID = id
		for i, s := range steps {
			in := build.TaskInput{Role: s.role, Actor: s.actor, Reason: s.reason, At: seedT0.Add(time.Duration(i) * time.Minute)}
			if i == len(steps)-1 {
				in.At = now.Add(-enteredAgo)
			}
			if to, err := m.FireWith(ctx, s.e, in); err != nil || to != s.to {
				t.Fatalf("%s: %s: %v, %v", id, s.e, to, err)
			}
		}
		if err := reg.Register(m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	// planning for 25 of its 30 minutes: warning.
	add("TASK-A", seedTo(build.StatePlanning), 25*time.Minute)
	// in_progress for 5 of its 4 hours: alert.
	add("TASK-B", seedTo(build.StateInProgress), 5*time.Hour)
	// rejected 3 times: under @agent-cto review for 10 minutes of 1 hour.
	add("TASK-C", append(seedTo(build.StatePlanning), rejected, rejected, validator.do(build.EventApproachRejected, "3rd rejection", build.StateCtoIntervention)), 10*time.Minute)
	// quality failed twice, back in quality_review for a minute: multiple failures.
	qr := seedTo(build.StateQualityReview)
	loop := []seedStep{qualityFailed, developer.do(build.EventCodeComplete, "", build.StateTesting), developer.do(build.EventSelfChecksDone, "", build.StateQualityReview)}
	add("TASK-D", append(append(qr, loop...), loop...), time.Minute)
	// done.
	add("TASK-E", seedForward, 3*time.Hour)

	ids := func(ms []*build.Task) string {
		var s []string
		for _, m := range ms {
			s = append(s, m.ID)
		}
		return strings.Join(s, ",")
	}
	// getTasksByState(state).
	if got := ids(reg.ByState(build.StatePlanning)); got != "TASK-A" {
		t.Errorf("ByState(planning) %s", got)
	}
	if got := ids(reg.ByState(build.StateCompleted)); got != "TASK-E" {
		t.Errorf("ByState(completed) %s", got)
	}
	// getTasksExceedingTimeout(): stuck tasks, at each level of the Timeout Actions.
	if got := ids(reg.ExceedingTimeout(now, build.LevelAlert)); got != "TASK-B" {
		t.Errorf("ExceedingTimeout(alert) %s", got)
	}
	if got := ids(reg.ExceedingTimeout(now, build.LevelWarn)); got != "TASK-A,TASK-B" {
		t.Errorf("ExceedingTimeout(warn) %s", got)
	}
	if got := ids(reg.ExceedingTimeout(now, build.LevelNone)); got != "TASK-A,TASK-B" {
		t.Errorf("ExceedingTimeout(any) %s", got)
	}
	// An hour later: A (85 of 30 minutes), B (6 of 4 hours) and D (61 of 30 minutes) call for
	// escalation; C (70 of 60 minutes) is past its alert; E (completed) has no timeout.
	if got := ids(reg.ExceedingTimeout(now.Add(time.Hour), build.LevelEscalate)); got != "TASK-A,TASK-B,TASK-D" {
		t.Errorf("ExceedingTimeout(escalate) an hour later %s", got)
	}
	if got := ids(reg.ExceedingTimeout(now.Add(time.Hour), build.LevelAlert)); got != "TASK-A,TASK-B,TASK-C,TASK-D" {
		t.Errorf("ExceedingTimeout(alert) an hour later %s", got)
	}
	// Timeouts are reported, never enforced: nobody moved.
	if got := ids(reg.ByState(build.StatePlanning)); got != "TASK-A" {
		t.Errorf("ByState(planning) after the queries %s", got)
	}
	// getTasksUnderCtoReview().
	if got := ids(reg.ByState(build.StateCtoIntervention)); got != "TASK-C" {
		t.Errorf("under CTO review %s", got)
	}
	// getTasksWithMultipleFailures().
	multiple := reg.Where(func(m *build.Task) bool {
		for _, s := range build.States() {
			if m.CountFailures(s) >= 2 {
				return true
			}
		}
		return false
	})
	if got := ids(multiple); got != "TASK-D" {
		t.Errorf("multiple failures %s", got)
	}
	// getTaskStateHistory(taskId).
	var h []build.TaskRecord
	if err := reg.Do("TASK-C", func(m *build.Task) error { h = m.History(); return nil }); err != nil {
		t.Fatal(err)
	}
	var path []string
	for _, r := range h {
		path = append(path, r.To.String())
	}
	if got := strings.Join(path, " "); got != "assigned planning planning planning cto_intervention" || h[4].Reason != "3rd rejection" || h[4].Actor != "@agent-solution-validator" {
		t.Errorf("TASK-C history %s (%+v)", got, h[len(h)-1])
	}
	if err := reg.Do("TASK-X", func(*build.Task) error { return nil }); !errors.Is(err, build.ErrNotRegistered) {
		t.Errorf("history of an unknown task: %v", err)
	}
	if got := ids(reg.ListActive()); got != "TASK-A,TASK-B,TASK-C,TASK-D" || reg.ActiveCount() != 4 {
		t.Errorf("active %s", got)
	}
}

// "Timeout Actions: 1. Warning: Log and alert at 80% timeout 2. Alert: Notify build
// orchestrator at 100% 3. Escalate: Consider intervention at 150%", "Not hard stops
// (warnings)", and "Required Events: ... 3. Timeout warnings": a stored task's timeouts are
// deadlines in its store, and a scheduler records each level in the event log, once, in the
// seed's event format, without moving the task.
func TestSeed004DurableTimeouts(t *testing.T) {
	ctx := context.Background()
	store := fsmrt.NewMemoryStore()
	c := &seedClock{now: seedT0}
	m, _ := seedNew(c)
	m.ID = "TASK-001"
	m.SetStore(store)
	// Created in pending, whose hour runs from now ("alert if not picked up").
	if err := m.Create(ctx, build.TaskInput{Actor: "user", Reason: "new task"}); err != nil {
		t.Fatal(err)
	}
	schedule := func(at time.Duration) int {
		t.Helper()
		n, err := build.FireDueTaskTimers(ctx, store, &seedHooks{}, seedT0.Add(at), 10)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	for _, c := range []struct {
		at   time.Duration
		want int
	}{{47 * time.Minute, 0}, {48 * time.Minute, 1}, {50 * time.Minute, 0}, {61 * time.Minute, 1}, {89 * time.Minute, 0}, {2 * time.Hour, 1}, {3 * time.Hour, 0}} {
		if n := schedule(c.at); n != c.want {
			t.Errorf("at %v: %d levels recorded, want %d", c.at, n, c.want)
		}
	}
	log, err := m.EventLog(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, e := range log {
		kinds = append(kinds, e.Kind)
		if e.From != build.StatePending || e.To != build.StatePending {
			t.Errorf("%s moved the task: %s -> %s", e.Kind, e.From, e.To)
		}
	}
	if want := []string{"MACHINE_CREATED", "TIMEOUT_WARN", "TIMEOUT_ALERT", "TIMEOUT_ESCALATE"}; !reflect.DeepEqual(kinds, want) {
		t.Fatalf("log kinds %v, want %v", kinds, want)
	}
	var doc map[string]any
	if err := json.Unmarshal([]byte(seedJSON(t, seedlog.Of(log[1]))), &doc); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"timestamp": "2026-06-01T08:48:00Z", "taskId": "TASK-001", "event": "TIMEOUT_WARN",
		"from": "pending", "to": "pending", "actor": "scheduler", "reason": "timeout level warn reached",
		"metadata": map[string]any{"level": "warn", "deadline": "2026-06-01T08:48:00Z", "timeout": "1h0m0s"},
	}
	for k, v := range want {
		if !reflect.DeepEqual(doc[k], v) {
			t.Errorf("%s = %#v, want %#v", k, doc[k], v)
		}
	}
	// Picked up at last: assigned's 15 minutes run from then, pending's are disarmed.
	live, err := build.ReplayTask(ctx, store, "TASK-001", &seedHooks{})
	if err != nil {
		t.Fatal(err)
	}
	live.SetStore(store)
	live.SetClock(c)
	c.now = seedT0.Add(3 * time.Hour)
	if _, err := live.FireWith(ctx, build.EventPickedUp, build.TaskInput{Role: build.RoleBuildOrchestrator, Actor: "@build-orchestrator"}); err != nil {
		t.Fatal(err)
	}
	if n := schedule(3*time.Hour + 11*time.Minute); n != 0 {
		t.Errorf("a level before 80%% of assigned's 15 minutes: %d", n)
	}
	if n := schedule(3*time.Hour + 12*time.Minute); n != 1 {
		t.Errorf("assigned's warning: %d", n)
	}
	if log, _ := live.EventLog(ctx, 5); len(log) != 1 || log[0].Kind != "TIMEOUT_WARN" || log[0].From != build.StateAssigned {
		t.Errorf("after picking up: %+v", log)
	}
}

// "@agent-plan-manager supports queries: getTasksByState, getTasksExceedingTimeout,
// getTasksUnderCtoReview, getTasksWithMultipleFailures, getTaskStateHistory": over every
// task a store holds, with FindTasks (each condition backed by an index of the database
// stores) and a task's event log.
func TestSeed004Queries(t *testing.T) {
	ctx := context.Background()
	store := fsmrt.NewMemoryStore()
	c := &seedClock{now: seedT0}
	human := build.TaskInput{Role: build.RoleHuman, Actor: "human"}
	task := func(id string, events ...build.Event) *build.Task {
		t.Helper()
		m, _ := seedNew(c)
		m.ID = id
		m.SetStore(store)
		if err := m.Create(ctx, build.TaskInput{Actor: "user"}); err != nil {
			t.Fatal(err)
		}
		for _, e := range events {
			if _, err := m.FireWith(ctx, e, human); err != nil {
				t.Fatalf("%s %s: %v", id, e, err)
			}
		}
		return m
	}
	toPlanning := []build.Event{build.EventPickedUp, build.EventValidationStarted}
	task("T1")                                                                                                               // pending
	task("T2", toPlanning...)                                                                                                // planning
	task("T3", append(toPlanning, build.EventApproachRejected, build.EventApproachRejected)...)                              // planning, 2 failures
	task("T4", append(toPlanning, build.EventApproachRejected, build.EventApproachRejected, build.EventApproachRejected)...) // the third: cto_intervention
	ids := func(q fsmrt.Query) []string {
		t.Helper()
		got, err := build.FindTasks(ctx, store, q)
		if err != nil {
			t.Fatal(err)
		}
		out := []string{}
		for _, in := range got {
			out = append(out, in.ID)
		}
		return out
	}
	// getTasksByState(planning)
	if got := ids(fsmrt.Query{States: []string{build.StatePlanning.String()}}); !reflect.DeepEqual(got, []string{"T2", "T3"}) {
		t.Errorf("in planning: %v", got)
	}
	// getTasksUnderCtoReview()
	if got := ids(fsmrt.Query{States: []string{build.StateCtoIntervention.String()}}); !reflect.DeepEqual(got, []string{"T4"}) {
		t.Errorf("under CTO review: %v", got)
	}
	// getTasksWithMultipleFailures(): two or more failures in some state.
	if got := ids(fsmrt.Query{Counter: "failures", AtLeast: 2}); !reflect.DeepEqual(got, []string{"T3"}) {
		t.Errorf("with multiple failures: %v", got)
	}
	// getTasksExceedingTimeout(): at 09:00 the hours of pending (T1) and cto_intervention
	// (T4) are over, planning's 30 minutes (T2, T3) since 08:30. By level: past the alert
	// (100 %) at 09:00, and past the warning (80 %) at 08:30.
	now := seedT0.Add(time.Hour)
	if got := ids(fsmrt.Query{Deadline: fsmrt.LevelDeadline(build.LevelAlert.String()), Due: now}); !reflect.DeepEqual(got, []string{"T1", "T2", "T3", "T4"}) {
		t.Errorf("past the alert at 09:00: %v", got)
	}
	if got := ids(fsmrt.Query{Deadline: fsmrt.LevelDeadline(build.LevelWarn.String()), Due: seedT0.Add(30 * time.Minute)}); !reflect.DeepEqual(got, []string{"T2", "T3"}) {
		t.Errorf("past the warning at 08:30: %v", got)
	}
	// The scheduler records the levels: a level recorded still counts as exceeded.
	if _, err := build.FireDueTaskTimers(ctx, store, &seedHooks{}, now, 100); err != nil {
		t.Fatal(err)
	}
	if got := ids(fsmrt.Query{Deadline: fsmrt.LevelDeadline(build.LevelAlert.String()), Due: now}); len(got) != 4 {
		t.Errorf("past the alert after the scheduler ran: %v", got)
	}
	// getTaskStateHistory(T4): its transitions, in order, from the event log.
	m, _ := seedNew(c)
	m.ID = "T4"
	m.SetStore(store)
	log, err := m.EventLog(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	var history []string
	for _, e := range log {
		if e.Kind == "STATE_TRANSITION" {
			history = append(history, e.From.String()+"->"+e.To.String())
		}
	}
	want := []string{"pending->assigned", "assigned->planning", "planning->planning", "planning->planning", "planning->cto_intervention"}
	if !reflect.DeepEqual(history, want) {
		t.Errorf("state history of T4: %v", history)
	}
}
