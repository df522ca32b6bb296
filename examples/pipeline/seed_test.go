package pipeline_test

// Scenario tests for seed 002 (/work/shared/seeds/002_*.txt, "Task State Machine": classify,
// route, execute with retries, escalation and a circuit breaker, verify): each block quotes
// the document's rule and drives the generated machine through it.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/fsmgen/fsmgen/fsmrt"
	"github.com/fsmgen/fsmgen/fsmrt/storetest"
	"github.com/fsmgen/fsmgen/generated/pipeline"
)

// seedCheckpoint is the checkpoint file as the hook wrote it at one transition.
type seedCheckpoint struct {
	Snapshot pipeline.TaskSnapshot
	JSON     string
	Event    pipeline.Event
}

// seedRunner is the program around the machine: it answers the hook guards from its
// configuration and the task context, performs the document's actions and writes the
// checkpoint file on every transition.
type seedRunner struct {
	pipeline.TaskNopHooks
	now         time.Time // the time the program passes with each event (Input.At)
	phases      []string
	maxAttempts int     // retries remain while fewer attempts than this have failed
	budgetUSD   float64 // the budget allows another attempt while the cost is below it
	did         []string
	saved       []seedCheckpoint
}

func seedNewRunner(phases ...string) *seedRunner {
	return &seedRunner{now: time.Date(2026, 5, 4, 8, 0, 0, 0, time.UTC), phases: phases, maxAttempts: 10, budgetUSD: 100}
}

func (r *seedRunner) phaseIndex(m *pipeline.Task) int {
	for i, p := range r.phases {
		if p == m.Context.CurrentPhase {
			return i
		}
	}
	return -1
}

func (r *seedRunner) HasMorePhases(_ context.Context, m *pipeline.Task, _ pipeline.TaskStep) bool {
	return r.phaseIndex(m) < len(r.phases)-1
}

func (r *seedRunner) RetriesRemaining(_ context.Context, m *pipeline.Task, _ pipeline.TaskStep) bool {
	return m.CountAttempts() < r.maxAttempts
}

func (r *seedRunner) BudgetAvailable(_ context.Context, m *pipeline.Task, _ pipeline.TaskStep) bool {
	return m.Context.CostTotalUsd < r.budgetUSD
}

func (r *seedRunner) AtHighestTier(_ context.Context, m *pipeline.Task, _ pipeline.TaskStep) bool {
	return m.Context.ModelTier == "opus"
}

func (r *seedRunner) GenerateTaskId(_ context.Context, m *pipeline.Task, _ pipeline.TaskStep) {
	m.Context.TaskId = "T-0001"
	r.did = append(r.did, "generate task id")
}
func (r *seedRunner) ReadConfigs(context.Context, *pipeline.Task, pipeline.TaskStep) {
	r.did = append(r.did, "read configs")
}
func (r *seedRunner) CreateCheckpoint(context.Context, *pipeline.Task, pipeline.TaskStep) {
	r.did = append(r.did, "create checkpoint")
}
func (r *seedRunner) RecordIntent(_ context.Context, m *pipeline.Task, _ pipeline.TaskStep) {
	r.did = append(r.did, "record intent "+m.Context.Intent)
}
func (r *seedRunner) PresentClarificationQuestions(_ context.Context, m *pipeline.Task, _ pipeline.TaskStep) {
	r.did = append(r.did, fmt.Sprintf("ask for clarification (confidence %.2f)", m.Context.Confidence))
}
func (r *seedRunner) ReclassifyWithContext(context.Context, *pipeline.Task, pipeline.TaskStep) {
	r.did = append(r.did, "re-classify")
}
func (r *seedRunner) SelectPipeline(_ context.Context, m *pipeline.Task, _ pipeline.TaskStep) {
	m.Context.Pipeline, m.Context.CurrentPhase, m.Context.ModelTier = "feature", r.phases[0], "sonnet"
	r.did = append(r.did, "select pipeline")
}
func (r *seedRunner) AssignAgents(_ context.Context, m *pipeline.Task, _ pipeline.TaskStep) {
	m.Context.Agents = []string{"planner", "coder"}
	r.did = append(r.did, "assign agents")
}
func (r *seedRunner) RecordRouting(context.Context, *pipeline.Task, pipeline.TaskStep) {
	r.did = append(r.did, "record routing")
}
func (r *seedRunner) RecordPhaseOutput(_ context.Context, m *pipeline.Task, _ pipeline.TaskStep) {
	r.did = append(r.did, "output of "+m.Context.CurrentPhase)
}
func (r *seedRunner) AdvancePhase(_ context.Context, m *pipeline.Task, _ pipeline.TaskStep) {
	m.Context.CurrentPhase = r.phases[r.phaseIndex(m)+1]
	r.did = append(r.did, "advance to "+m.Context.CurrentPhase)
}
func (r *seedRunner) LogFailure(_ context.Context, m *pipeline.Task, _ pipeline.TaskStep) {
	r.did = append(r.did, "log failure of "+m.Context.CurrentPhase)
}
func (r *seedRunner) DetermineRetryStrategy(context.Context, *pipeline.Task, pipeline.TaskStep) {
	r.did = append(r.did, "retry strategy")
}
func (r *seedRunner) SaveForResume(context.Context, *pipeline.Task, pipeline.TaskStep) {
	r.did = append(r.did, "save for resume")
}
func (r *seedRunner) AdjustStrategy(context.Context, *pipeline.Task, pipeline.TaskStep) {
	r.did = append(r.did, "adjust strategy")
}
func (r *seedRunner) RerunPhase(_ context.Context, m *pipeline.Task, _ pipeline.TaskStep) {
	r.did = append(r.did, "re-run "+m.Context.CurrentPhase+" on "+m.Context.ModelTier)
}
func (r *seedRunner) SelectHigherTier(_ context.Context, m *pipeline.Task, _ pipeline.TaskStep) {
	m.Context.ModelTier = "opus"
	r.did = append(r.did, "select opus")
}
func (r *seedRunner) ReportFullDiagnostics(_ context.Context, m *pipeline.Task, _ pipeline.TaskStep) {
	r.did = append(r.did, fmt.Sprintf("diagnostics: phase=%s attempts=%d consecutive_failures=%d tier=%s cost=$%.2f",
		m.Context.CurrentPhase, m.CountAttempts(), m.CountConsecutiveFailures(), m.Context.ModelTier, m.Context.CostTotalUsd))
}
func (r *seedRunner) RerunWithUpgradedModel(_ context.Context, m *pipeline.Task, _ pipeline.TaskStep) {
	r.did = append(r.did, "re-run "+m.Context.CurrentPhase+" on "+m.Context.ModelTier)
}
func (r *seedRunner) ReportFailure(_ context.Context, m *pipeline.Task, _ pipeline.TaskStep) {
	r.did = append(r.did, "report failure of "+m.Context.CurrentPhase)
}
func (r *seedRunner) MoveCheckpointToCompleted(context.Context, *pipeline.Task, pipeline.TaskStep) {
	r.did = append(r.did, "checkpoint to completed")
}
func (r *seedRunner) EvaluateEvolution(context.Context, *pipeline.Task, pipeline.TaskStep) {
	r.did = append(r.did, "evaluate evolution")
}
func (r *seedRunner) SaveMemory(context.Context, *pipeline.Task, pipeline.TaskStep) {
	r.did = append(r.did, "save memory")
}
func (r *seedRunner) FeedVerificationResults(context.Context, *pipeline.Task, pipeline.TaskStep) {
	r.did = append(r.did, "feed verification results")
}
func (r *seedRunner) RecordPhaseInProgress(_ context.Context, m *pipeline.Task, _ pipeline.TaskStep) {
	r.did = append(r.did, "in progress: "+m.Context.CurrentPhase)
}
func (r *seedRunner) ReportCancelSummary(_ context.Context, m *pipeline.Task, _ pipeline.TaskStep) {
	done := r.phases[:max(r.phaseIndex(m), 0)]
	r.did = append(r.did, fmt.Sprintf("cancelled: completed %v, in progress %s, cost so far $%.2f", done, m.Context.CurrentPhase, m.Context.CostTotalUsd))
}

// Checkpoint writes the checkpoint file: the machine's snapshot, taken after the transition.
func (r *seedRunner) Checkpoint(_ context.Context, m *pipeline.Task, cp pipeline.Checkpoint, s pipeline.TaskStep) error {
	if cp != pipeline.CheckpointProgress {
		return fmt.Errorf("unexpected checkpoint %s", cp)
	}
	b, err := json.Marshal(m.Snapshot())
	if err != nil {
		return err
	}
	var snap pipeline.TaskSnapshot
	if err := json.Unmarshal(b, &snap); err != nil {
		return err
	}
	r.saved = append(r.saved, seedCheckpoint{Snapshot: snap, JSON: string(b), Event: s.Event})
	return nil
}

// tick is the time of the next event: a minute later.
func (r *seedRunner) tick() time.Time {
	r.now = r.now.Add(time.Minute)
	return r.now
}

func (r *seedRunner) last(t *testing.T) seedCheckpoint {
	t.Helper()
	if len(r.saved) == 0 {
		t.Fatal("no checkpoint")
	}
	return r.saved[len(r.saved)-1]
}

func (r *seedRunner) reset() { r.did = nil }

func seedFire(t *testing.T, m *pipeline.Task, e pipeline.Event, want pipeline.State) {
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

// seedExecuting starts a task, classifies it confidently and routes it: the first phase runs.
func seedExecuting(t *testing.T, r *seedRunner) *pipeline.Task {
	t.Helper()
	m := pipeline.NewTask(r)
	seedFire(t, m, pipeline.EventStart, pipeline.StateClassifying)
	m.Context.Confidence, m.Context.Intent = 0.9, "add a feature"
	seedFire(t, m, pipeline.EventClassified, pipeline.StateRouting)
	seedFire(t, m, pipeline.EventRouted, pipeline.StateExecuting)
	return m
}

func TestSeed002PipelineRetries(t *testing.T) {
	// "created → classifying: Action: Generate task ID, read configs, create checkpoint";
	// "classifying → routing: Condition: confidence >= 0.6; Action: Record intent in
	// checkpoint"; "classifying → awaiting_clarification: Condition: confidence < 0.6;
	// Action: Present clarification questions to user"; "awaiting_clarification →
	// classifying: Condition: User provides more info; Action: Re-classify with additional
	// context".
	t.Run("confidence routes or asks for clarification", func(t *testing.T) {
		r := seedNewRunner("build")
		m := pipeline.NewTask(r)
		seedFire(t, m, pipeline.EventStart, pipeline.StateClassifying)
		if m.Context.TaskId != "T-0001" {
			t.Errorf("task id %q", m.Context.TaskId)
		}
		m.Context.Confidence = 0.59
		seedFire(t, m, pipeline.EventClassified, pipeline.StateAwaitingClarification)
		seedFire(t, m, pipeline.EventClarified, pipeline.StateClassifying)
		m.Context.Confidence, m.Context.Intent = 0.6, "fix a bug" // the boundary routes
		seedFire(t, m, pipeline.EventClassified, pipeline.StateRouting)
		want := []string{"generate task id", "read configs", "create checkpoint", "ask for clarification (confidence 0.59)", "re-classify", "record intent fix a bug"}
		if !reflect.DeepEqual(r.did, want) {
			t.Errorf("actions\n got %q\nwant %q", r.did, want)
		}
		// Confidence below the guard never routes; Can evaluates the guard without firing.
		m2 := pipeline.NewTask(seedNewRunner("build"))
		seedFire(t, m2, pipeline.EventStart, pipeline.StateClassifying)
		for _, c := range []float64{0, 0.3, 0.5999} {
			m2.Context.Confidence = c
			if to, err := m2.Fire(context.Background(), pipeline.EventClassified); err != nil || to != pipeline.StateAwaitingClarification {
				t.Errorf("confidence %v: %v, %v", c, to, err)
			}
			seedFire(t, m2, pipeline.EventClarified, pipeline.StateClassifying)
		}
	})

	// "routing → executing: Action: Select pipeline, assign agents, record in checkpoint";
	// "executing → verifying: Condition: Current phase completed successfully; Action: Record
	// phase output, advance to next phase or verify"; "verifying → completed: Condition: All
	// checks pass; Action: Move checkpoint to completed, evaluate evolution, save memory".
	t.Run("phases and verification", func(t *testing.T) {
		r := seedNewRunner("plan", "implement", "test")
		m := seedExecuting(t, r)
		if m.Context.Pipeline != "feature" || m.Context.CurrentPhase != "plan" || len(m.Context.Agents) != 2 {
			t.Fatalf("routing recorded %+v", m.Context)
		}
		r.reset()
		seedFire(t, m, pipeline.EventPhaseSucceeded, pipeline.StateExecuting)
		seedFire(t, m, pipeline.EventPhaseSucceeded, pipeline.StateExecuting)
		if m.Context.CurrentPhase != "test" {
			t.Fatalf("phase %q", m.Context.CurrentPhase)
		}
		seedFire(t, m, pipeline.EventPhaseSucceeded, pipeline.StateVerifying)
		seedFire(t, m, pipeline.EventVerificationPassed, pipeline.StateCompleted)
		want := []string{"output of plan", "advance to implement", "output of implement", "advance to test", "output of test", "checkpoint to completed", "evaluate evolution", "save memory"}
		if !reflect.DeepEqual(r.did, want) {
			t.Errorf("actions\n got %q\nwant %q", r.did, want)
		}
		if !m.State().IsTerminal() {
			t.Error("completed is not terminal")
		}
	})

	// "executing → retrying: Condition: Phase failed, retries remaining, budget available;
	// Action: Log failure, determine retry strategy"; "retrying → executing: Condition: Same
	// model tier retry (attempts 1-2); Action: Adjust strategy, re-run phase"; "retrying →
	// escalating: Condition: Attempts >= escalation threshold; Action: Select higher model
	// tier"; "escalating → executing: Action: Re-run phase with upgraded model".
	t.Run("escalation threshold on attempts", func(t *testing.T) {
		r := seedNewRunner("implement", "test")
		m := seedExecuting(t, r)
		r.reset()
		seedFire(t, m, pipeline.EventPhaseFailed, pipeline.StateRetrying)
		if m.CountAttempts() != 1 || m.CountConsecutiveFailures() != 1 {
			t.Fatalf("after 1 failure: attempts %d, consecutive %d", m.CountAttempts(), m.CountConsecutiveFailures())
		}
		seedFire(t, m, pipeline.EventRetry, pipeline.StateExecuting) // attempt 1: same tier
		seedFire(t, m, pipeline.EventPhaseFailed, pipeline.StateRetrying)
		if m.CountAttempts() != 2 {
			t.Fatalf("after 2 failures: attempts %d", m.CountAttempts())
		}
		seedFire(t, m, pipeline.EventRetry, pipeline.StateEscalating) // attempts >= 2: escalate
		seedFire(t, m, pipeline.EventEscalated, pipeline.StateExecuting)
		want := []string{
			"log failure of implement", "retry strategy", "adjust strategy", "re-run implement on sonnet",
			"log failure of implement", "retry strategy", "select opus", "re-run implement on opus",
		}
		if !reflect.DeepEqual(r.did, want) {
			t.Errorf("actions\n got %q\nwant %q", r.did, want)
		}
		// The phase then succeeds: the next phase starts with fresh counters.
		seedFire(t, m, pipeline.EventPhaseSucceeded, pipeline.StateExecuting)
		if m.Context.CurrentPhase != "test" || m.CountAttempts() != 0 || m.CountConsecutiveFailures() != 0 {
			t.Errorf("next phase %q: attempts %d, consecutive %d", m.Context.CurrentPhase, m.CountAttempts(), m.CountConsecutiveFailures())
		}
		seedFire(t, m, pipeline.EventPhaseFailed, pipeline.StateRetrying)
		seedFire(t, m, pipeline.EventRetry, pipeline.StateExecuting) // the threshold counts again from 1
	})

	// "retrying → stopped: Condition: Circuit breaker tripped (3 consecutive failures);
	// Action: Report full diagnostics, save checkpoint".
	t.Run("circuit breaker", func(t *testing.T) {
		r := seedNewRunner("implement")
		m := seedExecuting(t, r)
		for i, cost := range []float64{0.5, 1.25, 2} {
			m.Context.CostTotalUsd = cost
			seedFire(t, m, pipeline.EventPhaseFailed, pipeline.StateRetrying)
			if i == 2 {
				break
			}
			to, err := m.Fire(context.Background(), pipeline.EventRetry)
			if err != nil || to == pipeline.StateStopped {
				t.Fatalf("retry after %d failures: %v, %v", i+1, to, err)
			}
			if to == pipeline.StateEscalating {
				seedFire(t, m, pipeline.EventEscalated, pipeline.StateExecuting)
			}
		}
		r.reset()
		seedFire(t, m, pipeline.EventRetry, pipeline.StateStopped)
		if want := []string{"diagnostics: phase=implement attempts=3 consecutive_failures=3 tier=opus cost=$2.00"}; !reflect.DeepEqual(r.did, want) {
			t.Errorf("actions\n got %q\nwant %q", r.did, want)
		}
		// "save checkpoint": the last checkpoint is the stopped task.
		if c := r.last(t); c.Snapshot.State != pipeline.StateStopped || c.Snapshot.Counters["consecutive_failures"] != 3 || c.Snapshot.Context.CostTotalUsd != 2 {
			t.Errorf("checkpoint %s", c.JSON)
		}
		if _, err := m.Fire(context.Background(), pipeline.EventRetry); !errors.Is(err, pipeline.ErrInvalidTransition) {
			t.Errorf("stopped accepts retry: %v", err)
		}

		// Verification failures of the last phase are consecutive failures too.
		r = seedNewRunner("only")
		m = seedExecuting(t, r)
		seedFire(t, m, pipeline.EventPhaseSucceeded, pipeline.StateVerifying)
		seedFire(t, m, pipeline.EventVerificationFailed, pipeline.StateRetrying) // 1
		seedFire(t, m, pipeline.EventRetry, pipeline.StateExecuting)
		seedFire(t, m, pipeline.EventPhaseSucceeded, pipeline.StateVerifying)
		seedFire(t, m, pipeline.EventVerificationFailed, pipeline.StateRetrying) // 2
		seedFire(t, m, pipeline.EventRetry, pipeline.StateEscalating)
		seedFire(t, m, pipeline.EventEscalated, pipeline.StateExecuting)
		seedFire(t, m, pipeline.EventPhaseFailed, pipeline.StateRetrying) // 3
		seedFire(t, m, pipeline.EventRetry, pipeline.StateStopped)
	})

	// "escalating → stopped: Condition: Already at highest tier (Opus) and max retries
	// reached; Action: Report failure, save checkpoint for manual intervention".
	t.Run("highest tier and max retries", func(t *testing.T) {
		r := seedNewRunner("implement")
		r.maxAttempts = 2
		m := seedExecuting(t, r)
		m.Context.ModelTier = "opus"
		seedFire(t, m, pipeline.EventPhaseFailed, pipeline.StateRetrying)
		seedFire(t, m, pipeline.EventRetry, pipeline.StateExecuting)
		seedFire(t, m, pipeline.EventPhaseFailed, pipeline.StateRetrying)
		seedFire(t, m, pipeline.EventRetry, pipeline.StateEscalating)
		r.reset()
		seedFire(t, m, pipeline.EventEscalated, pipeline.StateStopped)
		if want := []string{"report failure of implement"}; !reflect.DeepEqual(r.did, want) {
			t.Errorf("actions %q", r.did)
		}
		if c := r.last(t); c.Snapshot.State != pipeline.StateStopped || c.Snapshot.Counters["attempts"] != 2 {
			t.Errorf("checkpoint for manual intervention %s", c.JSON)
		}
	})

	// "executing → retrying: Condition: Phase failed, retries remaining, budget available";
	// failed: "Max retries exceeded"; "executing → stopped: Condition: Budget exceeded or
	// user cancelled; Action: Save state for possible /resume".
	t.Run("no retries or no budget", func(t *testing.T) {
		r := seedNewRunner("implement")
		r.maxAttempts = 0
		m := seedExecuting(t, r)
		r.reset()
		seedFire(t, m, pipeline.EventPhaseFailed, pipeline.StateFailed)
		if want := []string{"log failure of implement", "report failure of implement"}; !reflect.DeepEqual(r.did, want) {
			t.Errorf("no retries: %q", r.did)
		}

		r = seedNewRunner("implement")
		m = seedExecuting(t, r)
		m.Context.CostTotalUsd = 100 // the budget is spent
		r.reset()
		seedFire(t, m, pipeline.EventPhaseFailed, pipeline.StateStopped)
		if want := []string{"log failure of implement", "save for resume"}; !reflect.DeepEqual(r.did, want) {
			t.Errorf("no budget: %q", r.did)
		}

		r = seedNewRunner("implement")
		m = seedExecuting(t, r)
		seedFire(t, m, pipeline.EventBudgetExceeded, pipeline.StateStopped)
	})
}

// "Checkpoint Updates: Update the checkpoint file at EVERY state transition. The checkpoint
// must always reflect the current state so /resume works from any point. Fields to update on
// each transition: state, updated_at, current_phase, attempt, cost_total_usd."
func TestSeed002CheckpointEveryTransition(t *testing.T) {
	r := seedNewRunner("plan", "implement")
	m := pipeline.NewTask(r)
	check := func(e pipeline.Event, want pipeline.State) {
		t.Helper()
		n := len(r.saved)
		at := r.tick()
		if to, err := m.FireWith(context.Background(), e, pipeline.TaskInput{At: at}); err != nil || to != want {
			t.Fatalf("%s: %s, %v; want %s", e, to, err, want)
		}
		if len(r.saved) != n+1 {
			t.Fatalf("%s: %d checkpoints, want one more than %d", e, len(r.saved), n)
		}
		c := r.last(t)
		if c.JSON != seedJSON(t, m.Snapshot()) {
			t.Errorf("%s: the checkpoint is not the machine:\n%s\n%s", e, c.JSON, seedJSON(t, m.Snapshot()))
		}
		s := c.Snapshot
		if s.State != want || s.Context.CurrentPhase != m.Context.CurrentPhase || s.Counters["attempts"] != m.CountAttempts() || s.Context.CostTotalUsd != m.Context.CostTotalUsd || s.Seq != m.Seq() || c.Event != e {
			t.Errorf("%s: checkpoint state %s phase %q attempt %d cost %v seq %d", e, s.State, s.Context.CurrentPhase, s.Counters["attempts"], s.Context.CostTotalUsd, s.Seq)
		}
		// updated_at is the time of the transition: the event's own time, passed by the program.
		if !s.UpdatedAt.Equal(at) {
			t.Errorf("%s: checkpoint updated_at %v, want %v", e, s.UpdatedAt, at)
		}
		if n > 0 && !s.UpdatedAt.After(r.saved[n-1].Snapshot.UpdatedAt) {
			t.Errorf("%s: updated_at did not move", e)
		}
	}
	check(pipeline.EventStart, pipeline.StateClassifying)
	m.Context.Confidence = 0.2
	check(pipeline.EventClassified, pipeline.StateAwaitingClarification)
	check(pipeline.EventClarified, pipeline.StateClassifying)
	m.Context.Confidence = 0.8
	check(pipeline.EventClassified, pipeline.StateRouting)
	check(pipeline.EventRouted, pipeline.StateExecuting)
	m.Context.CostTotalUsd += 0.4
	check(pipeline.EventPhaseFailed, pipeline.StateRetrying)
	if s := r.last(t).Snapshot; s.Counters["attempts"] != 1 || s.Context.CurrentPhase != "plan" || s.Context.CostTotalUsd != 0.4 {
		t.Errorf("after the failure: %+v", s)
	}
	check(pipeline.EventRetry, pipeline.StateExecuting)
	m.Context.CostTotalUsd += 0.6
	// Advancing to the next phase does not change the state, but is a transition: the
	// checkpoint records the new phase and the reset attempt.
	check(pipeline.EventPhaseSucceeded, pipeline.StateExecuting)
	if s := r.last(t).Snapshot; s.Context.CurrentPhase != "implement" || s.Counters["attempts"] != 0 || s.Context.CostTotalUsd != 1 {
		t.Errorf("after advancing: %+v", s)
	}
	check(pipeline.EventPhaseSucceeded, pipeline.StateVerifying)
	check(pipeline.EventVerificationPassed, pipeline.StateCompleted)
	if int64(len(r.saved)) != m.Seq() {
		t.Errorf("%d checkpoints for %d transitions", len(r.saved), m.Seq())
	}
	// A refused event is no transition: no checkpoint.
	n := len(r.saved)
	if _, err := m.Fire(context.Background(), pipeline.EventCancel); err == nil || len(r.saved) != n {
		t.Errorf("cancel in completed: %v, %d checkpoints", err, len(r.saved)-n)
	}

	// Without a time from the program, updated_at is read from the clock, on this path only
	// (the machine has no other use for time).
	m2 := pipeline.NewTask(seedNewRunner("plan"))
	before := time.Now()
	seedFire(t, m2, pipeline.EventStart, pipeline.StateClassifying)
	if at := m2.Snapshot().UpdatedAt; at.Before(before) || at.After(time.Now()) {
		t.Errorf("updated_at %v is not the time of the transition", at)
	}
}

// "Cancel Handling: When user runs /cancel during execution: 1. Set state to stopped 2. Record
// which phase was in progress 3. Save checkpoint (do NOT delete it) 4. Report: what was
// completed, what was in progress, estimated cost so far"; and "/resume works from any
// point": ResumeTask resumes the task from the store alone.
func TestSeed002CancelAndResume(t *testing.T) {
	ctx := context.Background()
	store := fsmrt.NewMemoryStore()
	r := seedNewRunner("plan", "implement", "test")
	m := pipeline.NewTask(r)
	m.ID = "T-0001"
	m.SetStore(store)
	fire := func(m *pipeline.Task, e pipeline.Event, want pipeline.State) {
		t.Helper()
		if to, err := m.FireWith(ctx, e, pipeline.TaskInput{Actor: "runner", At: r.tick()}); err != nil || to != want {
			t.Fatalf("%s: %s, %v; want %s", e, to, err, want)
		}
	}
	fire(m, pipeline.EventStart, pipeline.StateClassifying)
	m.Context.Confidence = 0.95
	fire(m, pipeline.EventClassified, pipeline.StateRouting)
	fire(m, pipeline.EventRouted, pipeline.StateExecuting)
	m.Context.CostTotalUsd = 0.75
	fire(m, pipeline.EventPhaseSucceeded, pipeline.StateExecuting)
	m.Context.CostTotalUsd = 1.5
	fire(m, pipeline.EventPhaseFailed, pipeline.StateRetrying)
	fire(m, pipeline.EventRetry, pipeline.StateExecuting)
	m.Context.CostTotalUsd = 2.25 // spent while the phase runs

	r.reset()
	cancelAt := r.tick()
	if to, err := m.FireWith(ctx, pipeline.EventCancel, pipeline.TaskInput{Actor: "user", Reason: "/cancel", At: cancelAt}); err != nil || to != pipeline.StateStopped {
		t.Fatalf("cancel: %s, %v", to, err)
	}
	if want := []string{"in progress: implement", "cancelled: completed [plan], in progress implement, cost so far $2.25"}; !reflect.DeepEqual(r.did, want) {
		t.Errorf("cancel\n got %q\nwant %q", r.did, want)
	}
	cancelled := m.Seq()
	// The checkpoint is saved, not deleted: stopped, updated at the cancel, with the phase in
	// progress, the attempt and the cost so far; where the task was stopped from is in the log.
	snap, ok, err := m.StoredSnapshot(ctx)
	if l, lerr := store.Load(ctx, m.StoreName(), "T-0001"); err != nil || lerr != nil || !ok || len(l.Entries) != 0 {
		t.Fatalf("store: %v, %v, %v, %d log entries after the snapshot", err, lerr, ok, len(l.Entries))
	}
	if snap.State != pipeline.StateStopped || !snap.UpdatedAt.Equal(cancelAt) || snap.Context.CurrentPhase != "implement" || snap.Counters["attempts"] != 1 || snap.Context.CostTotalUsd != 2.25 || snap.Seq != cancelled {
		t.Errorf("stored checkpoint %s", seedJSON(t, snap))
	}
	// The event log is kept whole although a checkpoint was saved at every transition.
	log, err := m.EventLog(ctx, 0)
	if err != nil || int64(len(log)) != cancelled || log[0].Seq != 1 {
		t.Fatalf("log: %d entries for %d transitions, %v", len(log), cancelled, err)
	}
	if e := log[len(log)-1]; e.Event != pipeline.EventCancel || e.From != pipeline.StateExecuting || e.To != pipeline.StateStopped || e.Actor != "user" || e.Reason != "/cancel" {
		t.Errorf("cancel entry %+v", e)
	}

	// /resume, from the store alone, in a new process: back to executing the phase that was in
	// progress, with the attempt and the cost so far. No hook runs: nothing is done again.
	r2 := seedNewRunner("plan", "implement", "test")
	r2.now = r.now
	resumeAt := r2.tick()
	resumed, err := pipeline.ResumeTask(ctx, store, "T-0001", r2, pipeline.TaskInput{Actor: "user", Reason: "/resume", At: resumeAt})
	if err != nil {
		t.Fatal(err)
	}
	if resumed.State() != pipeline.StateExecuting || resumed.Context.CurrentPhase != "implement" || resumed.CountAttempts() != 1 || resumed.Context.CostTotalUsd != 2.25 || resumed.Seq() != cancelled+1 {
		t.Errorf("resumed %s %q attempt %d cost %v seq %d", resumed.State(), resumed.Context.CurrentPhase, resumed.CountAttempts(), resumed.Context.CostTotalUsd, resumed.Seq())
	}
	if len(r2.did) != 0 || len(r2.saved) != 0 {
		t.Errorf("resuming ran hooks: %q, %d checkpoints", r2.did, len(r2.saved))
	}
	// The resumption is in the log and in the store's checkpoint.
	if tail, err := resumed.EventLog(ctx, cancelled); err != nil || len(tail) != 1 || tail[0].Kind != "STATE_RESUMED" || tail[0].From != pipeline.StateStopped || tail[0].To != pipeline.StateExecuting || tail[0].Reason != "/resume" || !tail[0].Timestamp.Equal(resumeAt) {
		t.Errorf("log after the cancel: %+v, %v", tail, err)
	}
	if snap, _, err := resumed.StoredSnapshot(ctx); err != nil || seedJSON(t, snap) != seedJSON(t, resumed.Snapshot()) {
		t.Errorf("stored checkpoint after resuming %s, %v", seedJSON(t, snap), err)
	}

	// The work continues where it stopped, and so does the log.
	fire(resumed, pipeline.EventPhaseSucceeded, pipeline.StateExecuting)
	if resumed.Context.CurrentPhase != "test" || !strings.Contains(strings.Join(r2.did, ","), "advance to test") {
		t.Errorf("resumed work: phase %q, %q", resumed.Context.CurrentPhase, r2.did)
	}
	// "/resume works from any point": resuming a task that has not ended changes nothing.
	again, err := pipeline.ResumeTask(ctx, store, "T-0001", seedNewRunner("plan", "implement", "test"), pipeline.TaskInput{})
	if err != nil || seedJSON(t, again.Snapshot()) != seedJSON(t, resumed.Snapshot()) {
		t.Errorf("resuming a running task: %v", err)
	}
	fire(resumed, pipeline.EventPhaseSucceeded, pipeline.StateVerifying)
	fire(resumed, pipeline.EventVerificationPassed, pipeline.StateCompleted)

	// Replaying the store, and replaying the whole log from nothing, give the resumed machine.
	replayed, err := pipeline.ReplayTask(ctx, store, "T-0001", seedNewRunner())
	if err != nil || seedJSON(t, replayed.Snapshot()) != seedJSON(t, resumed.Snapshot()) {
		t.Errorf("replayed: %v\n got %s\nwant %s", err, seedJSON(t, replayed.Snapshot()), seedJSON(t, resumed.Snapshot()))
	}
	whole, err := storetest.LogOnly(ctx, store, m.StoreName(), "T-0001")
	if err != nil {
		t.Fatal(err)
	}
	replayed, err = pipeline.ReplayTask(ctx, whole, "T-0001", seedNewRunner())
	if err != nil || seedJSON(t, replayed.Snapshot()) != seedJSON(t, resumed.Snapshot()) {
		t.Errorf("replayed from the whole log: %v\n got %s\nwant %s", err, seedJSON(t, replayed.Snapshot()), seedJSON(t, resumed.Snapshot()))
	}
}
