package cognitive_test

// Scenario tests for seed 000 (/work/shared/seeds/000_*.txt, "Task State Machine"): each
// block quotes the document's rule and drives the generated machine through it.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fsmgen/fsmgen/fsmrt"
	"github.com/fsmgen/fsmgen/fsmrt/storetest"
	"github.com/fsmgen/fsmgen/generated/cognitive"
)

var seedEpoch = time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)

// seedClock is a fake clock, safe for the concurrent tests.
type seedClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *seedClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *seedClock) Advance(d time.Duration) time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	return c.now
}

// seedSaved is one checkpoint the machine reached, with a deep copy of the machine then.
type seedSaved struct {
	Checkpoint cognitive.Checkpoint
	Event      cognitive.Event
	From, To   cognitive.State
	Snapshot   cognitive.TaskSnapshot
}

// seedAgent is the Agent around the FSM: it persists at the checkpoints the machine reaches.
// It decides no routing: the machine routes completion from the plan in the task context,
// PlanSteps (each step's actionType, in order) and PlanCompleted (Plan.currentStep's
// index), which the Agent updates as steps complete (seedStepDone).
type seedAgent struct {
	cognitive.TaskNopHooks
	mu    sync.Mutex
	saved []seedSaved
}

func (a *seedAgent) Checkpoint(_ context.Context, m *cognitive.Task, cp cognitive.Checkpoint, s cognitive.TaskStep) error {
	b, err := json.Marshal(m.Snapshot())
	if err != nil {
		return err
	}
	var snap cognitive.TaskSnapshot
	if err := json.Unmarshal(b, &snap); err != nil {
		return err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.saved = append(a.saved, seedSaved{Checkpoint: cp, Event: s.Event, From: s.From, To: s.To, Snapshot: snap})
	return nil
}

func (a *seedAgent) checkpoints() []seedSaved {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]seedSaved(nil), a.saved...)
}

func (a *seedAgent) last(t *testing.T) seedSaved {
	t.Helper()
	s := a.checkpoints()
	if len(s) == 0 {
		t.Fatal("no checkpoint was taken")
	}
	return s[len(s)-1]
}

func seedNew(c *seedClock) (*cognitive.Task, *seedAgent) {
	a := &seedAgent{}
	m := cognitive.NewTask(a)
	m.SetClock(c)
	return m, a
}

// seedCreate is fromEvent: the Agent keeps the input in the task context and fires
// TASK_CREATED with it.
func seedCreate(t *testing.T, m *cognitive.Task, text string, in cognitive.TaskInput) {
	t.Helper()
	p := cognitive.TaskCreatedPayload{InputText: text, Source: "telegram", InputMetadata: map[string]string{"chat": "42"}}
	m.Context.InputText, m.Context.Source, m.Context.InputMetadata = p.InputText, p.Source, p.InputMetadata
	if to, err := m.FireTaskCreated(context.Background(), p, in); err != nil || to != cognitive.StateReasoning {
		t.Fatalf("TASK_CREATED: %v, %v; want reasoning", to, err)
	}
}

// seedPlan is the Planner's output: a new plan (the actionType of each step), none of its
// steps done yet.
func seedPlan(m *cognitive.Task, goal string, steps ...string) {
	m.Context.PlanGoal, m.Context.PlanSteps, m.Context.PlanReasoning = goal, steps, "because "+goal
	m.Context.ActionsDone, m.Context.PlanCompleted = nil, 0
	m.Context.Iteration++
}

// seedStepDone is the Actor finishing the plan's current step: it records the result and
// moves Plan.currentStep on.
func seedStepDone(m *cognitive.Task, result string) {
	m.Context.ActionsDone = append(m.Context.ActionsDone, result)
	m.Context.PlanCompleted++
}

func seedFire(t *testing.T, m *cognitive.Task, e cognitive.Event, want cognitive.State) {
	t.Helper()
	to, err := m.Fire(context.Background(), e)
	if err != nil || to != want || m.State() != want {
		t.Fatalf("%s: got %v (state %v), %v; want %v", e, to, m.State(), err, want)
	}
}

// seedAt drives a new machine to s along the document's transitions.
func seedAt(t *testing.T, s cognitive.State) (*cognitive.Task, *seedAgent) {
	t.Helper()
	m, a := seedNew(&seedClock{now: seedEpoch})
	switch s {
	case cognitive.StateIdle:
	case cognitive.StateReasoning:
		seedCreate(t, m, "plan a trip", cognitive.TaskInput{})
	case cognitive.StateActing:
		seedCreate(t, m, "plan a trip", cognitive.TaskInput{})
		seedPlan(m, "trip", "tool_call", "respond")
		seedFire(t, m, cognitive.EventReasonDone, cognitive.StateActing)
	case cognitive.StateSuspended:
		seedCreate(t, m, "plan a trip", cognitive.TaskInput{})
		seedFire(t, m, cognitive.EventNeedMoreInfo, cognitive.StateSuspended)
	default:
		t.Fatalf("no path to %s: the document's state list changed", s)
	}
	return m, a
}

func seedJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestSeed000CognitiveLoop(t *testing.T) {
	ctx := context.Background()

	// "6 states, 2 terminal"; "Terminal states: COMPLETED or FAILED"; "Suspendable states:
	// only active states (REASONING / ACTING)".
	t.Run("states", func(t *testing.T) {
		var names, terminal, active []string
		for _, s := range cognitive.States() {
			names = append(names, s.String())
			if s.IsTerminal() {
				terminal = append(terminal, s.String())
			}
			if s.IsActive() {
				active = append(active, s.String())
			}
		}
		if got := strings.Join(names, " "); got != "idle reasoning acting suspended completed failed" {
			t.Errorf("states %q", got)
		}
		if got := strings.Join(terminal, " "); got != "completed failed" {
			t.Errorf("terminal states %q", got)
		}
		if got := strings.Join(active, " "); got != "reasoning acting" {
			t.Errorf("active states %q", got)
		}
	})

	// Static transitions: IDLE -TASK_CREATED-> REASONING, REASONING -REASON_DONE-> ACTING,
	// REASONING -NEED_MORE_INFO-> SUSPENDED, SUSPENDED -MESSAGE_RECEIVED-> REASONING.
	t.Run("static transitions", func(t *testing.T) {
		m, _ := seedAt(t, cognitive.StateIdle)
		if m.State() != cognitive.StateIdle {
			t.Fatalf("a new task is %s, want idle", m.State())
		}
		seedCreate(t, m, "book a table", cognitive.TaskInput{})
		seedFire(t, m, cognitive.EventNeedMoreInfo, cognitive.StateSuspended)
		seedFire(t, m, cognitive.EventMessageReceived, cognitive.StateReasoning)
		seedPlan(m, "table", "tool_call")
		seedFire(t, m, cognitive.EventReasonDone, cognitive.StateActing)

		// "canTransition(eventType) -> boolean: check if transition is valid (without executing)".
		if m.Can(ctx, cognitive.EventTaskCreated) || !m.Can(ctx, cognitive.EventToolCallCompleted) {
			t.Errorf("Can in acting: task_created %v, tool_call_completed %v", m.Can(ctx, cognitive.EventTaskCreated), m.Can(ctx, cognitive.EventToolCallCompleted))
		}
		if m.State() != cognitive.StateActing {
			t.Errorf("Can changed the state to %s", m.State())
		}
		// "transition(event) -> TaskState ... throws on invalid".
		_, err := m.Fire(ctx, cognitive.EventMessageReceived)
		var ite *cognitive.InvalidTransitionError
		if !errors.As(err, &ite) || ite.State != cognitive.StateActing || ite.Event != cognitive.EventMessageReceived || m.State() != cognitive.StateActing {
			t.Errorf("message_received in acting: %v, state %s", err, m.State())
		}
	})

	// Dynamic transitions: "ACTING | TOOL_CALL_COMPLETED / TOOL_CALL_FAILED / STEP_COMPLETED |
	// plan has more steps -> ACTING; otherwise -> see below". Completion routing (when all
	// plan steps are done): "Plan contains any tool_call steps -> REASONING (continue
	// cognitive loop)"; "Plan contains only respond steps -> COMPLETED (task is done)".
	t.Run("completion routing", func(t *testing.T) {
		plans := []struct {
			name  string
			steps []string
			done  int
			want  cognitive.State
		}{
			{"plan has more steps", []string{"tool_call", "respond"}, 1, cognitive.StateActing},
			{"more tool_call steps", []string{"tool_call", "tool_call", "respond"}, 1, cognitive.StateActing},
			{"more respond steps", []string{"respond", "respond"}, 1, cognitive.StateActing},
			{"more steps, none done", []string{"generate", "respond"}, 0, cognitive.StateActing},
			{"all done, plan has a tool_call", []string{"tool_call", "respond"}, 2, cognitive.StateReasoning},
			{"all done, tool_call in the middle", []string{"respond", "tool_call", "respond"}, 3, cognitive.StateReasoning},
			{"all done, only respond steps", []string{"respond"}, 1, cognitive.StateCompleted},
			{"all done, respond and generate steps", []string{"respond", "generate", "respond"}, 3, cognitive.StateCompleted},
		}
		events := []struct {
			e  cognitive.Event
			cp cognitive.Checkpoint
		}{
			{cognitive.EventToolCallCompleted, cognitive.CheckpointToolCallCompleted},
			{cognitive.EventToolCallFailed, cognitive.CheckpointToolCallFailed},
			{cognitive.EventStepCompleted, cognitive.CheckpointTaskCompleted},
		}
		for _, ev := range events {
			for _, p := range plans {
				t.Run(ev.e.String()+"/"+p.name, func(t *testing.T) {
					m, a := seedAt(t, cognitive.StateReasoning)
					seedPlan(m, "goal", p.steps...)
					seedFire(t, m, cognitive.EventReasonDone, cognitive.StateActing)
					// The Actor moves Plan.currentStep on; the machine decides the route.
					m.Context.PlanCompleted = p.done
					seedFire(t, m, ev.e, p.want)
					if s := a.last(t); s.Checkpoint != ev.cp || s.Event != ev.e || s.To != p.want || s.Snapshot.State != p.want {
						t.Errorf("checkpoint %s on %s -> %s (snapshot %s), want %s -> %s", s.Checkpoint, s.Event, s.To, s.Snapshot.State, ev.cp, p.want)
					}
					if p.want == cognitive.StateCompleted && !m.State().IsTerminal() {
						t.Errorf("completed is not terminal")
					}
				})
			}
		}
	})

	// "TASK_SUSPENDED -> SUSPENDED | current state is active (suspendable)"; "Suspendable
	// states: only active states (REASONING / ACTING) can be suspended."
	t.Run("suspend only from the active states", func(t *testing.T) {
		for _, s := range cognitive.States() {
			if s.IsTerminal() {
				continue // see "terminal states refuse everything"
			}
			m, _ := seedAt(t, s)
			before := seedJSON(t, m.Snapshot())
			to, err := m.Fire(ctx, cognitive.EventTaskSuspended)
			if s.IsActive() {
				if err != nil || to != cognitive.StateSuspended {
					t.Errorf("suspend from %s: %v, %v; want suspended", s, to, err)
				}
				continue
			}
			var ite *cognitive.InvalidTransitionError
			if !errors.As(err, &ite) || ite.Reason() != "invalid_transition" || to != s || m.State() != s {
				t.Errorf("suspend from %s: %v, %v; want an InvalidTransitionError and no change", s, to, err)
			}
			if after := seedJSON(t, m.Snapshot()); after != before {
				t.Errorf("a refused suspend changed the machine:\n%s\n%s", before, after)
			}
		}
	})

	// "SUSPENDED | TASK_RESUMED | restore to pre-suspend state"; TaskContext "suspendedState:
	// state before suspension".
	t.Run("resume restores the pre-suspend state", func(t *testing.T) {
		for _, from := range []cognitive.State{cognitive.StateReasoning, cognitive.StateActing} {
			m, _ := seedAt(t, from)
			m.Context.SuspendedState, m.Context.SuspendReason = from.String(), "waiting for the user"
			seedFire(t, m, cognitive.EventTaskSuspended, cognitive.StateSuspended)
			if r, ok := m.Remembered(cognitive.StateSuspended); !ok || r != from {
				t.Errorf("suspended remembers %v (%v), want %s", r, ok, from)
			}
			seedFire(t, m, cognitive.EventTaskResumed, from)
		}
		// NEED_MORE_INFO suspends from REASONING too; resuming returns there.
		m, _ := seedAt(t, cognitive.StateSuspended)
		seedFire(t, m, cognitive.EventTaskResumed, cognitive.StateReasoning)
	})

	// "TASK_FAILED -> FAILED | any non-terminal state"; "FAILED <- terminal state (reachable
	// from any)".
	t.Run("TASK_FAILED from every non-terminal state", func(t *testing.T) {
		n := 0
		for _, s := range cognitive.States() {
			if s.IsTerminal() {
				continue
			}
			n++
			m, a := seedAt(t, s)
			m.Context.Error = "tool crashed in " + s.String()
			to, err := m.FireTaskFailed(ctx, cognitive.TaskFailedPayload{Error: m.Context.Error}, cognitive.TaskInput{})
			if err != nil || to != cognitive.StateFailed {
				t.Errorf("TASK_FAILED from %s: %v, %v", s, to, err)
				continue
			}
			if got := m.TaskFailedPayload().Error; got != "tool crashed in "+s.String() {
				t.Errorf("payload %q", got)
			}
			if c := a.last(t); c.Checkpoint != cognitive.CheckpointTaskFailed || c.From != s || c.Snapshot.Context.Error != m.Context.Error {
				t.Errorf("TASK_FAILED from %s: checkpoint %s from %s, error %q", s, c.Checkpoint, c.From, c.Snapshot.Context.Error)
			}
		}
		if n != 4 {
			t.Errorf("%d non-terminal states, the document has 4", n)
		}
	})

	// "after reaching COMPLETED or FAILED, no further transitions are accepted; throws
	// InvalidStateTransition".
	t.Run("terminal states refuse everything", func(t *testing.T) {
		completed, _ := seedAt(t, cognitive.StateReasoning)
		seedPlan(completed, "greet", "respond")
		seedFire(t, completed, cognitive.EventReasonDone, cognitive.StateActing)
		seedStepDone(completed, "said hello")
		seedFire(t, completed, cognitive.EventStepCompleted, cognitive.StateCompleted)
		failed, _ := seedAt(t, cognitive.StateActing)
		seedFire(t, failed, cognitive.EventTaskFailed, cognitive.StateFailed)

		for _, m := range []*cognitive.Task{completed, failed} {
			s := m.State()
			before := seedJSON(t, m.Snapshot())
			for _, e := range cognitive.Events() {
				if m.Can(ctx, e) {
					t.Errorf("Can(%s) in %s", e, s)
				}
				// Events with payloads are fired with a valid one: an invalid payload is
				// refused as such (ValidationError, "payload") before the state is looked at.
				var to cognitive.State
				var err error
				switch e {
				case cognitive.EventTaskCreated:
					to, err = m.FireTaskCreated(ctx, cognitive.TaskCreatedPayload{InputText: "again"}, cognitive.TaskInput{})
				case cognitive.EventTaskFailed:
					to, err = m.FireTaskFailed(ctx, cognitive.TaskFailedPayload{Error: "again"}, cognitive.TaskInput{})
				default:
					to, err = m.Fire(ctx, e)
				}
				var ite *cognitive.InvalidTransitionError
				if !errors.As(err, &ite) || !errors.Is(err, cognitive.ErrInvalidTransition) || !errors.Is(err, cognitive.ErrRefused) {
					t.Errorf("%s in %s: %v, want an InvalidTransitionError", e, s, err)
					continue
				}
				if to != s || ite.State != s || ite.Event != e || ite.Reason() != "invalid_transition" || len(ite.Permitted()) != 0 {
					t.Errorf("%s in %s: to %s, error %+v, permitted %v", e, s, to, ite, ite.Permitted())
				}
				if want := "cognitive: " + s.String() + " is terminal: " + e.String() + " is not accepted"; err.Error() != want {
					t.Errorf("error %q, want %q", err, want)
				}
			}
			if after := seedJSON(t, m.Snapshot()); after != before {
				t.Errorf("refusals in %s changed the machine", s)
			}
		}
	})

	// "Transition history: each transition records a StateTransition (fromState, toState,
	// triggerEventType, triggerEventId, timestamp), enabling precise reconstruction of every
	// step."
	t.Run("transition history", func(t *testing.T) {
		c := &seedClock{now: seedEpoch}
		m, _ := seedNew(c)
		if !m.CreatedAt().Equal(seedEpoch) {
			t.Errorf("createdAt %v", m.CreatedAt())
		}
		c.Advance(time.Minute)
		seedCreate(t, m, "plan a trip", cognitive.TaskInput{EventID: "evt-1"})
		c.Advance(2 * time.Minute)
		seedPlan(m, "trip", "tool_call", "respond")
		if _, err := m.FireWith(ctx, cognitive.EventReasonDone, cognitive.TaskInput{EventID: "evt-2"}); err != nil {
			t.Fatal(err)
		}
		// An event that happened earlier than it is delivered keeps its own time.
		at := seedEpoch.Add(10 * time.Minute)
		c.Advance(time.Hour)
		seedStepDone(m, "found 3 flights")
		if _, err := m.FireWith(ctx, cognitive.EventToolCallCompleted, cognitive.TaskInput{EventID: "evt-3", At: at}); err != nil {
			t.Fatal(err)
		}
		// A refused event is not history.
		if _, err := m.FireWith(ctx, cognitive.EventMessageReceived, cognitive.TaskInput{EventID: "evt-4"}); err == nil {
			t.Fatal("message_received accepted in acting")
		}

		h := m.History()
		want := []cognitive.TaskRecord{
			{From: cognitive.StateIdle, To: cognitive.StateReasoning, Event: cognitive.EventTaskCreated, EventID: "evt-1", At: seedEpoch.Add(time.Minute)},
			{From: cognitive.StateReasoning, To: cognitive.StateActing, Event: cognitive.EventReasonDone, EventID: "evt-2", At: seedEpoch.Add(3 * time.Minute)},
			{From: cognitive.StateActing, To: cognitive.StateActing, Event: cognitive.EventToolCallCompleted, EventID: "evt-3", At: at},
		}
		if !reflect.DeepEqual(h, want) {
			t.Errorf("history\n got %+v\nwant %+v", h, want)
		}
		if got, want := seedJSON(t, h[0]), `{"from":"idle","to":"reasoning","event":"task_created","eventId":"evt-1","timestamp":"2026-03-01T09:01:00Z"}`; got != want {
			t.Errorf("history record JSON\n got %s\nwant %s", got, want)
		}
		// History returns a copy.
		h[0].EventID = "changed"
		if m.History()[0].EventID != "evt-1" {
			t.Error("History shares its records with the machine")
		}
		// Time bookkeeping over the same clock: acting since minute 10 (the event's own time).
		now := c.Now()
		if got := m.TimeInState(now); got != now.Sub(at) {
			t.Errorf("time in acting %v, want %v", got, now.Sub(at))
		}
		if got := m.TotalTime(now); got != now.Sub(seedEpoch) {
			t.Errorf("total time %v", got)
		}
		if got := m.TimeByState(now); got[cognitive.StateIdle] != time.Minute || got[cognitive.StateReasoning] != 2*time.Minute {
			t.Errorf("time by state %v", got)
		}
	})

	// TaskContext: "all information accumulated from task creation to completion", typed.
	t.Run("typed task context", func(t *testing.T) {
		m, _ := seedAt(t, cognitive.StateReasoning)
		var (
			reasoning map[string]string = map[string]string{"intent": "travel"}
			steps     []string          = []string{"tool_call", "respond"}
			iteration int               = 2
			priority  int               = 1
		)
		m.Context.Reasoning, m.Context.PlanSteps, m.Context.Iteration, m.Context.Priority = reasoning, steps, iteration, priority
		m.Context.Messages = []string{"user: plan a trip"}
		m.Context.SuspendedState, m.Context.SuspendReason = "reasoning", "need dates"
		m.Context.FinalResult, m.Context.Reflections = "", []string{"legacy"}

		raw := seedJSON(t, m.Snapshot())
		var doc map[string]any
		if err := json.Unmarshal([]byte(raw), &doc); err != nil {
			t.Fatal(err)
		}
		c, _ := doc["context"].(map[string]any)
		for k, want := range map[string]any{
			"input_text": "plan a trip", "source": "telegram", "iteration": 2.0, "priority": 1.0,
			"suspended_state": "reasoning", "suspend_reason": "need dates",
		} {
			if c[k] != want {
				t.Errorf("snapshot context %s = %v, want %v", k, c[k], want)
			}
		}
		if r, _ := c["reasoning"].(map[string]any); r["intent"] != "travel" {
			t.Errorf("snapshot context reasoning %v", c["reasoning"])
		}
		var snap cognitive.TaskSnapshot
		if err := json.Unmarshal([]byte(raw), &snap); err != nil {
			t.Fatal(err)
		}
		r, err := cognitive.RestoreTask(snap, &seedAgent{})
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(r.Context, m.Context) || r.State() != cognitive.StateReasoning {
			t.Errorf("restored context\n got %+v\nwant %+v", r.Context, m.Context)
		}
	})
}

// "Persistence Strategy: Not every step is written to disk — only at critical checkpoints"
// (the document's table, one row per event). REFLECTION_COMPLETE is produced by the async
// PostTaskReflector after completion and is no event of this FSM.
func TestSeed000PersistenceCheckpoints(t *testing.T) {
	ctx := context.Background()
	// The document's table: which event persists at which checkpoint. TASK_COMPLETED is the
	// arrival in COMPLETED (STEP_COMPLETED of the last respond step).
	table := map[cognitive.Event]cognitive.Checkpoint{
		cognitive.EventTaskCreated:       cognitive.CheckpointTaskCreated,
		cognitive.EventReasonDone:        cognitive.CheckpointReasonDone,
		cognitive.EventToolCallCompleted: cognitive.CheckpointToolCallCompleted,
		cognitive.EventToolCallFailed:    cognitive.CheckpointToolCallFailed,
		cognitive.EventNeedMoreInfo:      cognitive.CheckpointNeedMoreInfo,
		cognitive.EventTaskSuspended:     cognitive.CheckpointTaskSuspended,
		cognitive.EventTaskFailed:        cognitive.CheckpointTaskFailed,
	}
	type fired struct {
		e  cognitive.Event
		to cognitive.State
	}
	var log []fired

	store := fsmrt.NewMemoryStore()
	c := &seedClock{now: seedEpoch}
	m, a := seedNew(c)
	m.ID = "task-7"
	m.SetStore(store)
	fire := func(e cognitive.Event, want cognitive.State) {
		t.Helper()
		c.Advance(time.Minute)
		seedFire(t, m, e, want)
		log = append(log, fired{e, want})
		// The store's snapshot is the one taken at the last checkpoint; later transitions
		// are in its log.
		snap, ok, entries, err := seedStored(m)
		if err != nil || !ok {
			t.Fatalf("store after %s: %v, %v", e, ok, err)
		}
		if got := snap.Seq + int64(len(entries)); got != m.Seq() {
			t.Errorf("store after %s holds %d transitions, the machine made %d", e, got, m.Seq())
		}
	}

	c.Advance(time.Minute)
	seedCreate(t, m, "plan a trip to Lisbon", cognitive.TaskInput{EventID: "in-1"})
	log = append(log, fired{cognitive.EventTaskCreated, cognitive.StateReasoning})
	// TASK_CREATED | Input, source, metadata.
	if s := a.last(t).Snapshot; s.Context.InputText != "plan a trip to Lisbon" || s.Context.Source != "telegram" || s.Context.InputMetadata["chat"] != "42" {
		t.Errorf("task_created saved %+v", s.Context)
	}

	m.Context.Reasoning = map[string]string{"missing": "travel dates"}
	fire(cognitive.EventNeedMoreInfo, cognitive.StateSuspended)
	// NEED_MORE_INFO | Reasoning.
	if s := a.last(t).Snapshot; s.Context.Reasoning["missing"] != "travel dates" || s.State != cognitive.StateSuspended {
		t.Errorf("need_more_info saved %s %+v", s.State, s.Context.Reasoning)
	}

	m.Context.Messages = append(m.Context.Messages, "user: 3-5 May")
	fire(cognitive.EventMessageReceived, cognitive.StateReasoning)

	seedPlan(m, "trip", "tool_call", "tool_call", "respond")
	m.Context.Messages = append(m.Context.Messages, "assistant: planning")
	fire(cognitive.EventReasonDone, cognitive.StateActing)
	// REASON_DONE | Full Plan + reasoning + new messages.
	if s := a.last(t).Snapshot; s.Context.PlanGoal != "trip" || len(s.Context.PlanSteps) != 3 || s.Context.PlanReasoning != "because trip" || len(s.Context.Messages) != 2 {
		t.Errorf("reason_done saved %+v", s.Context)
	}

	seedStepDone(m, "flights: TP1234")
	m.Context.Messages = append(m.Context.Messages, "tool: TP1234 found")
	fire(cognitive.EventToolCallCompleted, cognitive.StateActing)
	// TOOL_CALL_COMPLETED | New messages (tool results).
	if s := a.last(t).Snapshot; s.Context.Messages[len(s.Context.Messages)-1] != "tool: TP1234 found" {
		t.Errorf("tool_call_completed saved %v", s.Context.Messages)
	}

	seedStepDone(m, "hotels: error")
	m.Context.Messages = append(m.Context.Messages, "tool: hotel API timed out")
	fire(cognitive.EventToolCallFailed, cognitive.StateActing)
	// TOOL_CALL_FAILED | New messages.
	if s := a.last(t).Snapshot; s.Context.Messages[len(s.Context.Messages)-1] != "tool: hotel API timed out" {
		t.Errorf("tool_call_failed saved %v", s.Context.Messages)
	}

	m.Context.SuspendedState, m.Context.SuspendReason = "acting", "user asked to wait"
	fire(cognitive.EventTaskSuspended, cognitive.StateSuspended)
	// TASK_SUSPENDED | Full TaskContext snapshot.
	if s := a.last(t).Snapshot; !reflect.DeepEqual(s.Context, m.Context) {
		t.Errorf("task_suspended saved\n%+v\nwant the full context\n%+v", s.Context, m.Context)
	}
	fire(cognitive.EventTaskResumed, cognitive.StateActing)

	seedStepDone(m, "itinerary sent")
	m.Context.FinalResult = "itinerary"
	// The plan has tool_call steps: the last step routes back to REASONING.
	fire(cognitive.EventToolCallCompleted, cognitive.StateReasoning)
	seedPlan(m, "confirm", "respond")
	fire(cognitive.EventReasonDone, cognitive.StateActing)
	seedStepDone(m, "confirmed")
	fire(cognitive.EventStepCompleted, cognitive.StateCompleted)
	// TASK_COMPLETED | Full TaskContext.
	if s := a.last(t).Snapshot; !reflect.DeepEqual(s.Context, m.Context) || s.State != cognitive.StateCompleted {
		t.Errorf("task_completed saved %s %+v", s.State, s.Context)
	}

	// TASK_FAILED | TaskContext + error (on a second task).
	f, fa := seedAt(t, cognitive.StateActing)
	f.Context.Error = "LLM quota exceeded"
	if _, err := f.FireTaskFailed(ctx, cognitive.TaskFailedPayload{Error: "LLM quota exceeded"}, cognitive.TaskInput{}); err != nil {
		t.Fatal(err)
	}
	if s := fa.last(t); s.Checkpoint != cognitive.CheckpointTaskFailed || s.Snapshot.Context.Error != "LLM quota exceeded" || s.Snapshot.Context.InputText != "plan a trip" {
		t.Errorf("task_failed saved %s %+v", s.Checkpoint, s.Snapshot.Context)
	}

	// Which checkpoint fired on which event must be the document's table, row by row.
	var want, got []string
	for _, f := range log {
		if cp, ok := table[f.e]; ok {
			want = append(want, f.e.String()+"->"+cp.String())
		} else if f.e == cognitive.EventStepCompleted && f.to == cognitive.StateCompleted {
			want = append(want, f.e.String()+"->"+cognitive.CheckpointTaskCompleted.String())
		}
	}
	for _, s := range a.checkpoints() {
		got = append(got, s.Event.String()+"->"+s.Checkpoint.String())
	}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("checkpoints\n got %v\nwant %v", got, want)
	}
	// MESSAGE_RECEIVED and TASK_RESUMED have no row: nothing persisted beyond the log.
	for _, s := range a.checkpoints() {
		if s.Event == cognitive.EventMessageReceived || s.Event == cognitive.EventTaskResumed {
			t.Errorf("checkpoint %s on %s, which the table does not persist", s.Checkpoint, s.Event)
		}
	}
	// The store holds the completed task's last checkpoint.
	snap, ok, entries, err := seedStored(m)
	if err != nil || !ok || snap.State != cognitive.StateCompleted || len(entries) != 0 || snap.Seq != m.Seq() {
		t.Errorf("store: %v %v %s seq %d, %d entries after it", err, ok, snap.State, snap.Seq, len(entries))
	}
}

// seedLockedBuffer collects log output written from several goroutines.
type seedLockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (w *seedLockedBuffer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

func (w *seedLockedBuffer) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}

func seedIDs(ms []*cognitive.Task) string {
	var ids []string
	for _, m := range ms {
		ids = append(ids, m.ID)
	}
	return strings.Join(ids, ",")
}

// TaskRegistry: "Active task registry. Maintains all uncompleted tasks."
func TestSeed000Registry(t *testing.T) {
	ctx := context.Background()
	var logs seedLockedBuffer
	reg := cognitive.NewTaskRegistry(2, slog.New(slog.NewTextHandler(&logs, nil)))
	task := func(id string, s cognitive.State) *cognitive.Task {
		m, _ := seedAt(t, s)
		m.ID = id
		return m
	}

	// register(task): register new task.
	for _, m := range []*cognitive.Task{task("t1", cognitive.StateActing), task("t2", cognitive.StateReasoning)} {
		if err := reg.Register(m); err != nil {
			t.Fatal(err)
		}
	}
	if logs.String() != "" {
		t.Errorf("a warning at 2 active tasks with maxActive 2: %s", logs.String())
	}
	// "When the active task count reaches the maxActive limit, registration is not blocked
	// but a warning is logged."
	if err := reg.Register(task("t3", cognitive.StateIdle)); err != nil {
		t.Fatalf("registration past maxActive was blocked: %v", err)
	}
	out := logs.String()
	for _, want := range []string{"level=WARN", `msg="active machines past the limit"`, "machine=Task", "active=3", "max=2"} {
		if !strings.Contains(out, want) {
			t.Errorf("warning %q lacks %q", out, want)
		}
	}
	if err := reg.Register(task("t1", cognitive.StateIdle)); err == nil {
		t.Error("a second t1 was registered")
	}
	if err := reg.Register(task("", cognitive.StateIdle)); err == nil {
		t.Error("a task without an ID was registered")
	}

	// get(taskId) -> TaskFSM (throws if not found); getOrNull(taskId).
	if m, err := reg.Get("t2"); err != nil || m.ID != "t2" || m.State() != cognitive.StateReasoning {
		t.Errorf("Get(t2): %v, %v", m, err)
	}
	if m, err := reg.Get("nope"); m != nil || !errors.Is(err, cognitive.ErrNotRegistered) {
		t.Errorf("Get(nope): %v, %v", m, err)
	}
	if m := reg.GetOrNil("t3"); m == nil || m.ID != "t3" {
		t.Errorf("GetOrNil(t3) = %v", m)
	}
	if m := reg.GetOrNil("nope"); m != nil {
		t.Errorf("GetOrNil(nope) = %v", m)
	}

	// t1 completes, t3 fails: listAll keeps them, listActive and activeCount do not.
	if err := reg.Do("t1", func(m *cognitive.Task) error {
		m.Context.PlanSteps, m.Context.ActionsDone, m.Context.PlanCompleted = []string{"respond"}, []string{"done"}, 1
		_, err := m.Fire(ctx, cognitive.EventStepCompleted)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if to, err := reg.Fire(ctx, "t3", cognitive.EventTaskFailed, cognitive.TaskInput{EventID: "crash"}); err != nil || to != cognitive.StateFailed {
		t.Fatalf("Fire(t3, task_failed): %v, %v", to, err)
	}
	if _, err := reg.Fire(ctx, "nope", cognitive.EventTaskFailed, cognitive.TaskInput{}); !errors.Is(err, cognitive.ErrNotRegistered) {
		t.Errorf("Fire(nope): %v", err)
	}
	if got := seedIDs(reg.ListAll()); got != "t1,t2,t3" {
		t.Errorf("ListAll %s", got)
	}
	if got := seedIDs(reg.ListActive()); got != "t2" {
		t.Errorf("ListActive %s", got)
	}
	if n := reg.ActiveCount(); n != 1 {
		t.Errorf("ActiveCount %d", n)
	}
	if got := seedIDs(reg.ByState(cognitive.StateCompleted)); got != "t1" {
		t.Errorf("ByState(completed) %s", got)
	}

	// cleanupTerminal(): clean up terminal tasks.
	if n := reg.CleanupTerminal(); n != 2 {
		t.Errorf("CleanupTerminal removed %d, want 2", n)
	}
	if reg.GetOrNil("t1") != nil || reg.GetOrNil("t3") != nil || seedIDs(reg.ListAll()) != "t2" {
		t.Errorf("after cleanup: %s", seedIDs(reg.ListAll()))
	}
	// remove(taskId).
	if !reg.Remove("t2") || reg.Remove("t2") || reg.ActiveCount() != 0 || len(reg.ListAll()) != 0 {
		t.Error("Remove(t2)")
	}
}

// The registry is shared by the Agent's goroutines: many tasks, and many events for the same
// task, at once (run with -race).
func TestSeed000RegistryConcurrent(t *testing.T) {
	ctx := context.Background()
	const tasks, steps = 12, 8
	c := &seedClock{now: seedEpoch}
	reg := cognitive.NewTaskRegistry(tasks, slog.New(slog.NewTextHandler(io.Discard, nil)))
	agent := &seedAgent{} // one Agent for every task: its hooks run on many goroutines
	id := func(i int) string { return fmt.Sprintf("task-%02d", i) }

	var wg sync.WaitGroup
	errs := make(chan error, tasks*steps*4)
	// Register and create every task from its own goroutine.
	for i := 0; i < tasks; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			m := cognitive.NewTask(agent)
			m.SetClock(c)
			m.ID = id(i)
			if err := reg.Register(m); err != nil {
				errs <- err
				return
			}
			err := reg.Do(id(i), func(m *cognitive.Task) error {
				p := cognitive.TaskCreatedPayload{InputText: "job " + m.ID}
				m.Context.InputText = p.InputText
				if _, err := m.FireTaskCreated(ctx, p, cognitive.TaskInput{EventID: m.ID + "/created"}); err != nil {
					return err
				}
				plan := make([]string, steps)
				for k := range plan {
					plan[k] = "tool_call"
				}
				m.Context.PlanSteps = plan
				return nil
			})
			if err != nil {
				errs <- err
				return
			}
			if _, err := reg.Fire(ctx, id(i), cognitive.EventReasonDone, cognitive.TaskInput{}); err != nil {
				errs <- err
			}
		}(i)
	}
	wg.Wait()

	// Every step of every task completes on its own goroutine; queries run meanwhile.
	var mu sync.Mutex
	reasoning := map[string]int{}
	stop := make(chan struct{})
	var qg sync.WaitGroup
	qg.Add(1)
	go func() {
		defer qg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			if n := reg.ActiveCount(); n != tasks {
				errs <- fmt.Errorf("ActiveCount %d while every task is active", n)
			}
			_ = reg.ListActive()
			_ = reg.ByState(cognitive.StateReasoning)
			_ = reg.Where(func(m *cognitive.Task) bool { return len(m.Context.ActionsDone) > steps/2 })
		}
	}()
	for i := 0; i < tasks; i++ {
		for k := 0; k < steps; k++ {
			wg.Add(1)
			go func(i, k int) {
				defer wg.Done()
				var to cognitive.State
				err := reg.Do(id(i), func(m *cognitive.Task) error {
					seedStepDone(m, fmt.Sprintf("result %d", k))
					var err error
					to, err = m.FireWith(ctx, cognitive.EventToolCallCompleted, cognitive.TaskInput{EventID: fmt.Sprintf("%s/step-%d", id(i), k)})
					return err
				})
				if err != nil {
					errs <- err
					return
				}
				if to == cognitive.StateReasoning {
					mu.Lock()
					reasoning[id(i)]++
					mu.Unlock()
				}
			}(i, k)
		}
	}
	wg.Wait()
	close(stop)
	qg.Wait()

	// Then every task fails from 4 goroutines at once: exactly one TASK_FAILED is accepted.
	accepted := make([]int, tasks)
	for i := 0; i < tasks; i++ {
		for g := 0; g < 4; g++ {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				_, err := reg.Fire(ctx, id(i), cognitive.EventTaskFailed, cognitive.TaskInput{})
				var ite *cognitive.InvalidTransitionError
				switch {
				case err == nil:
					mu.Lock()
					accepted[i]++
					mu.Unlock()
				case !errors.As(err, &ite) || ite.State != cognitive.StateFailed:
					errs <- err
				}
			}(i)
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}

	for i := 0; i < tasks; i++ {
		if reasoning[id(i)] != 1 {
			t.Errorf("%s: %d goroutines saw the last step route to reasoning, want 1", id(i), reasoning[id(i)])
		}
		if accepted[i] != 1 {
			t.Errorf("%s: TASK_FAILED accepted %d times, want 1", id(i), accepted[i])
		}
		err := reg.Do(id(i), func(m *cognitive.Task) error {
			h := m.History()
			if len(h) != 2+steps+1 || m.Seq() != int64(len(h)) || len(m.Context.ActionsDone) != steps {
				return fmt.Errorf("%s: %d history records, seq %d, %d results", m.ID, len(h), m.Seq(), len(m.Context.ActionsDone))
			}
			if h[len(h)-2].To != cognitive.StateReasoning || h[len(h)-1].To != cognitive.StateFailed {
				return fmt.Errorf("%s: history ends %+v", m.ID, h[len(h)-2:])
			}
			return nil
		})
		if err != nil {
			t.Error(err)
		}
	}
	// 2 + steps + 1 checkpoints per task, every one taken.
	if n := len(agent.checkpoints()); n != tasks*(2+steps+1) {
		t.Errorf("%d checkpoints, want %d", n, tasks*(2+steps+1))
	}
	if reg.ActiveCount() != 0 || reg.CleanupTerminal() != tasks || len(reg.ListAll()) != 0 {
		t.Error("every task should be failed and cleaned up")
	}
}

// The persistence seam: a snapshot at each checkpoint plus an append-only event log;
// restoring the snapshot and replaying the log gives the same machine; optimistic
// concurrency through the log's sequence numbers.
func TestSeed000PersistenceSeam(t *testing.T) {
	ctx := context.Background()
	store := fsmrt.NewMemoryStore()
	c := &seedClock{now: seedEpoch}
	live, _ := seedNew(c)
	live.ID = "task-42"
	live.SetStore(store)

	c.Advance(time.Minute)
	seedCreate(t, live, "write a haiku", cognitive.TaskInput{EventID: "e1"})
	c.Advance(time.Minute)
	seedPlan(live, "haiku", "tool_call", "respond")
	seedFire(t, live, cognitive.EventReasonDone, cognitive.StateActing)
	c.Advance(time.Minute)
	seedFire(t, live, cognitive.EventTaskSuspended, cognitive.StateSuspended) // checkpoint
	c.Advance(time.Minute)
	seedFire(t, live, cognitive.EventTaskResumed, cognitive.StateActing) // log only
	c.Advance(time.Minute)

	snap, ok, entries, err := seedStored(live)
	if err != nil || !ok || snap.State != cognitive.StateSuspended || snap.Seq != 3 || len(entries) != 1 || entries[0].Event != cognitive.EventTaskResumed || entries[0].Seq != 4 {
		t.Fatalf("store: %v %v snapshot %s seq %d, log %+v", err, ok, snap.State, snap.Seq, entries)
	}

	// Restoring the snapshot and replaying the log gives the same machine.
	replayed, err := cognitive.ReplayTask(ctx, store, "task-42", &seedAgent{})
	if err != nil {
		t.Fatal(err)
	}
	if a, b := seedJSON(t, live.Snapshot()), seedJSON(t, replayed.Snapshot()); a != b {
		t.Errorf("replayed machine differs:\n live %s\nreplay %s", a, b)
	}
	if r, _ := replayed.Remembered(cognitive.StateSuspended); r != cognitive.StateActing || !reflect.DeepEqual(replayed.History(), live.History()) {
		t.Errorf("replayed remembered %s, history %+v", r, replayed.History())
	}

	// Optimistic concurrency: two workers load the same task and both fire. The first wins;
	// the second's Fire returns a StoreError wrapping ErrStoreConflict.
	w1, err := cognitive.ReplayTask(ctx, store, "task-42", &seedAgent{})
	if err != nil {
		t.Fatal(err)
	}
	w2, err := cognitive.ReplayTask(ctx, store, "task-42", &seedAgent{})
	if err != nil {
		t.Fatal(err)
	}
	w1.SetStore(store)
	w2.SetStore(store)
	seedStepDone(w1, "theme: autumn")
	if to, err := w1.Fire(ctx, cognitive.EventToolCallCompleted); err != nil || to != cognitive.StateActing {
		t.Fatalf("first writer: %v, %v", to, err)
	}
	seedStepDone(w2, "theme: spring")
	_, err = w2.Fire(ctx, cognitive.EventToolCallCompleted)
	var se *cognitive.StoreError
	if !errors.As(err, &se) || !errors.Is(err, cognitive.ErrStoreConflict) || se.Op != "commit" || se.Seq != 5 {
		t.Fatalf("second writer: %v, want a StoreError wrapping ErrStoreConflict on the commit of seq 5", err)
	}
	// The loser is as it was before it fired: still at seq 4, acting.
	if w2.Seq() != 4 || w2.State() != cognitive.StateActing {
		t.Errorf("the second writer moved to %s at %d", w2.State(), w2.Seq())
	}
	// The store has the first writer's transition; reloading gives its machine.
	reloaded, err := cognitive.ReplayTask(ctx, store, "task-42", &seedAgent{})
	if err != nil {
		t.Fatal(err)
	}
	if a, b := seedJSON(t, w1.Snapshot()), seedJSON(t, reloaded.Snapshot()); a != b {
		t.Errorf("reloaded machine is not the first writer's:\n w1 %s\nreload %s", a, b)
	}
	if reloaded.Context.ActionsDone[0] != "theme: autumn" || reloaded.Seq() != 5 {
		t.Errorf("reloaded %v seq %d", reloaded.Context.ActionsDone, reloaded.Seq())
	}
}

// seedCountingAgent is the Agent, whose checkpoints are counted. It has no guards to answer:
// the machine routes completion from the context itself.
type seedCountingAgent struct {
	seedAgent
}

// seedSame checks that two machines are the same: snapshot, payloads and history.
func seedSame(t *testing.T, what string, got, want *cognitive.Task) {
	t.Helper()
	if a, b := seedJSON(t, got.Snapshot()), seedJSON(t, want.Snapshot()); a != b {
		t.Errorf("%s: snapshot\n got %s\nwant %s", what, a, b)
	}
	if !reflect.DeepEqual(got.TaskCreatedPayload(), want.TaskCreatedPayload()) || !reflect.DeepEqual(got.TaskFailedPayload(), want.TaskFailedPayload()) {
		t.Errorf("%s: payloads %+v, %+v; want %+v, %+v", what, got.TaskCreatedPayload(), got.TaskFailedPayload(), want.TaskCreatedPayload(), want.TaskFailedPayload())
	}
	if !reflect.DeepEqual(got.History(), want.History()) {
		t.Errorf("%s: history\n got %+v\nwant %+v", what, got.History(), want.History())
	}
}

// seedSamePresent is seedSame for a machine restored from a snapshot alone: the snapshot
// holds the present, so the history (the past, in the event log) starts empty.
func seedSamePresent(t *testing.T, what string, got, want *cognitive.Task) {
	t.Helper()
	if a, b := seedJSON(t, got.Snapshot()), seedJSON(t, want.Snapshot()); a != b {
		t.Errorf("%s: snapshot\n got %s\nwant %s", what, a, b)
	}
	if !reflect.DeepEqual(got.TaskCreatedPayload(), want.TaskCreatedPayload()) || !reflect.DeepEqual(got.TaskFailedPayload(), want.TaskFailedPayload()) {
		t.Errorf("%s: payloads %+v, %+v; want %+v, %+v", what, got.TaskCreatedPayload(), got.TaskFailedPayload(), want.TaskCreatedPayload(), want.TaskFailedPayload())
	}
	if h := got.History(); len(h) != 0 {
		t.Errorf("%s: a snapshot brought back history %+v", what, h)
	}
}

// The persistence seam is exact for this machine too: payloads, the transition history, what
// SUSPENDED remembers and the time by state come back from a snapshot through JSON and from
// the event log, and replaying the log takes no checkpoint again.
func TestSeed000PersistenceExact(t *testing.T) {
	ctx := context.Background()
	store := fsmrt.NewMemoryStore()
	c := &seedClock{now: seedEpoch}
	agent := &seedCountingAgent{}
	m := cognitive.NewTask(agent)
	m.SetClock(c)
	m.ID = "task-exact"
	m.SetStore(store)
	step := func(e cognitive.Event, want cognitive.State) {
		t.Helper()
		c.Advance(time.Minute)
		if to, err := m.FireWith(ctx, e, cognitive.TaskInput{EventID: "ev-" + e.String(), Actor: "agent"}); err != nil || to != want {
			t.Fatalf("%s: %s, %v; want %s", e, to, err, want)
		}
	}
	replayed := func(s fsmrt.Store, h *seedCountingAgent) *cognitive.Task {
		t.Helper()
		r, err := cognitive.ReplayTask(ctx, s, "task-exact", h)
		if err != nil {
			t.Fatal(err)
		}
		if len(h.checkpoints()) != 0 {
			t.Errorf("replaying took %d checkpoints", len(h.checkpoints()))
		}
		return r
	}

	c.Advance(time.Minute)
	seedCreate(t, m, "book a table for two", cognitive.TaskInput{EventID: "in-1", Actor: "telegram"})
	step(cognitive.EventNeedMoreInfo, cognitive.StateSuspended)
	step(cognitive.EventMessageReceived, cognitive.StateReasoning) // no checkpoint: in the log only
	// The snapshot (taken at need_more_info) and the entry after it: the TASK_CREATED payload
	// comes from the snapshot.
	seedSame(t, "snapshot and log", replayed(store, &seedCountingAgent{}), m)

	seedPlan(m, "table", "tool_call", "respond")
	step(cognitive.EventReasonDone, cognitive.StateActing)
	seedStepDone(m, "found: Tasca")
	step(cognitive.EventToolCallCompleted, cognitive.StateActing) // the plan has more steps: acting
	step(cognitive.EventTaskSuspended, cognitive.StateSuspended)
	step(cognitive.EventTaskResumed, cognitive.StateActing) // back where it was suspended
	c.Advance(time.Minute)
	if _, err := m.FireTaskFailed(ctx, cognitive.TaskFailedPayload{Error: "restaurant closed"}, cognitive.TaskInput{EventID: "ev-fail"}); err != nil {
		t.Fatal(err)
	}
	if len(agent.checkpoints()) == 0 {
		t.Fatal("the live run took no checkpoints")
	}

	// Snapshot -> JSON -> Restore.
	var snap cognitive.TaskSnapshot
	if err := json.Unmarshal([]byte(seedJSON(t, m.Snapshot())), &snap); err != nil {
		t.Fatal(err)
	}
	if snap.Extra.Payloads.TaskCreated.InputText != "book a table for two" || snap.Extra.Payloads.TaskFailed.Error != "restaurant closed" || !snap.UpdatedAt.Equal(c.Now()) {
		t.Errorf("snapshot payloads %+v, updated at %v", snap.Extra.Payloads, snap.UpdatedAt)
	}
	restored, err := cognitive.RestoreTask(snap, &seedCountingAgent{})
	if err != nil {
		t.Fatal(err)
	}
	seedSamePresent(t, "restored", restored, m)

	// Store -> Replay: the last checkpoint (task_failed) covers the whole run.
	seedSame(t, "replayed", replayed(store, &seedCountingAgent{}), m)

	// The whole event log alone, replayed from a new machine, gives the same machine.
	log, err := m.EventLog(ctx, 0)
	if err != nil || int64(len(log)) != m.Seq() {
		t.Fatalf("log: %d entries for %d transitions, %v", len(log), m.Seq(), err)
	}
	whole, err := storetest.LogOnly(ctx, store, m.StoreName(), "task-exact")
	if err != nil {
		t.Fatal(err)
	}
	r := replayed(whole, &seedCountingAgent{})
	seedSame(t, "replayed from the whole log", r, m)
	if r.TimeByState(c.Now()) != m.TimeByState(c.Now()) || !r.CreatedAt().Equal(m.CreatedAt()) {
		t.Errorf("time by state %v, want %v", r.TimeByState(c.Now()), m.TimeByState(c.Now()))
	}
	if back, ok := r.Remembered(cognitive.StateSuspended); !ok || back != cognitive.StateActing {
		t.Errorf("suspended remembers %s, %v", back, ok)
	}
}

// seedStored reads what m's store holds of it: its last snapshot (ok false when none) and
// the log entries after it.
func seedStored(m *cognitive.Task) (cognitive.TaskSnapshot, bool, []cognitive.TaskLogEntry, error) {
	ctx := context.Background()
	snap, ok, err := m.StoredSnapshot(ctx)
	if err != nil {
		return snap, ok, nil, err
	}
	log, err := m.EventLog(ctx, snap.Seq)
	return snap, ok, log, err
}
