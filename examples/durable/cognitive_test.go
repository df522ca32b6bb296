package durable

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/fsmgen/fsmgen/fsmrt"
	"github.com/fsmgen/fsmgen/generated/cognitive"
	"github.com/fsmgen/fsmgen/store/sqlite"
)

// The two processes of seed 000: the first takes a task from its creation to its
// suspension; the second, started later on the same store, resumes it and completes it.
func runCognitive(ctx context.Context, store fsmrt.Store, args []string) error {
	at := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	in := func() cognitive.TaskInput {
		at = at.Add(time.Minute)
		return cognitive.TaskInput{At: at, Actor: "agent"}
	}
	fire := func(m *cognitive.Task, e cognitive.Event, want cognitive.State) error {
		if to, err := m.FireWith(ctx, e, in()); err != nil || to != want {
			return fmt.Errorf("%s: %s, %v; want %s", e, to, err, want)
		}
		return nil
	}
	if args[0] == "suspend" {
		m := cognitive.NewTask(cognitive.TaskNopHooks{})
		m.ID = "task-1"
		m.SetStore(store)
		p := cognitive.TaskCreatedPayload{InputText: "plan a trip to Lisbon", Source: "telegram", InputMetadata: map[string]string{"chat": "42"}}
		m.Context.InputText, m.Context.Source, m.Context.InputMetadata = p.InputText, p.Source, p.InputMetadata
		if _, err := m.FireTaskCreated(ctx, p, in()); err != nil {
			return err
		}
		m.Context.PlanGoal, m.Context.PlanSteps, m.Context.PlanReasoning = "trip", []string{"tool_call", "tool_call"}, "because trip"
		m.Context.Reasoning = map[string]string{"thought": "flights first"}
		m.Context.Iteration = 1
		if err := fire(m, cognitive.EventReasonDone, cognitive.StateActing); err != nil {
			return err
		}
		m.Context.ActionsDone, m.Context.PlanCompleted = []string{"flights: TP1234"}, 1
		m.Context.Messages = []string{"tool: TP1234 found"}
		if err := fire(m, cognitive.EventToolCallCompleted, cognitive.StateActing); err != nil {
			return err
		}
		m.Context.SuspendedState, m.Context.SuspendReason = "acting", "user asked to wait"
		return fire(m, cognitive.EventTaskSuspended, cognitive.StateSuspended)
	}
	// resume: everything the first process knew comes from the store.
	m, err := cognitive.ReplayTask(ctx, store, "task-1", cognitive.TaskNopHooks{})
	if err != nil {
		return err
	}
	m.SetStore(store)
	if m.State() != cognitive.StateSuspended || m.Context.PlanGoal != "trip" || len(m.Context.ActionsDone) != 1 {
		return fmt.Errorf("loaded %s with %+v", m.State(), m.Context)
	}
	at = m.Snapshot().UpdatedAt
	if err := fire(m, cognitive.EventTaskResumed, cognitive.StateActing); err != nil {
		return err
	}
	m.Context.ActionsDone, m.Context.PlanCompleted = append(m.Context.ActionsDone, "hotel: booked"), 2
	m.Context.FinalResult = "itinerary"
	if err := fire(m, cognitive.EventToolCallCompleted, cognitive.StateReasoning); err != nil {
		return err
	}
	m.Context.PlanGoal, m.Context.PlanSteps, m.Context.PlanReasoning = "confirm", []string{"respond"}, "because confirm"
	m.Context.ActionsDone, m.Context.PlanCompleted, m.Context.Iteration = nil, 0, 2
	if err := fire(m, cognitive.EventReasonDone, cognitive.StateActing); err != nil {
		return err
	}
	m.Context.ActionsDone, m.Context.PlanCompleted = []string{"confirmed"}, 1
	return fire(m, cognitive.EventStepCompleted, cognitive.StateCompleted)
}

// Seed 000's persistence table ("Not every step is written to disk — only at critical
// checkpoints"), across processes: each row's checkpoint leaves in the store what the row
// says it persists, and a second process picks the task up from the store alone.
func TestSeed000CheckpointsAcrossProcesses(t *testing.T) {
	ctx := context.Background()
	db := filepath.Join(t.TempDir(), "cognitive.db")
	run(t, "cognitive", db, "suspend")
	read := func() (cognitive.TaskSnapshot, []cognitive.TaskLogEntry) {
		t.Helper()
		store, err := sqlite.Open(ctx, db)
		if err != nil {
			t.Fatal(err)
		}
		defer store.Close()
		m := cognitive.NewTask(cognitive.TaskNopHooks{})
		m.ID = "task-1"
		m.SetStore(store)
		snap, ok, err := m.StoredSnapshot(ctx)
		if err != nil || !ok {
			t.Fatalf("snapshot: %v, %v", ok, err)
		}
		log, err := m.EventLog(ctx, 0)
		if err != nil {
			t.Fatal(err)
		}
		return snap, log
	}
	snap, log := read()
	// TASK_SUSPENDED | Full TaskContext snapshot: the last snapshot is the suspension's.
	if snap.State != cognitive.StateSuspended || snap.Seq != 4 || snap.Context.SuspendReason != "user asked to wait" ||
		snap.Context.InputText == "" || snap.Context.PlanGoal != "trip" || !reflect.DeepEqual(snap.Context.ActionsDone, []string{"flights: TP1234"}) {
		t.Errorf("stored at the suspension: %s at %d, %+v", snap.State, snap.Seq, snap.Context)
	}
	// Each earlier checkpoint's content is in its entry of the log.
	byEvent := map[cognitive.Event]cognitive.TaskContext{}
	for _, e := range log {
		var c cognitive.TaskContext
		if err := json.Unmarshal(e.Context, &c); err != nil {
			t.Fatal(err)
		}
		byEvent[e.Event] = c
	}
	// TASK_CREATED | Input, source, metadata.
	if c := byEvent[cognitive.EventTaskCreated]; c.InputText != "plan a trip to Lisbon" || c.Source != "telegram" || c.InputMetadata["chat"] != "42" {
		t.Errorf("TASK_CREATED persisted %+v", c)
	}
	// REASON_DONE | Full Plan + reasoning + new messages.
	if c := byEvent[cognitive.EventReasonDone]; c.PlanGoal != "trip" || len(c.PlanSteps) != 2 || c.PlanReasoning != "because trip" || c.Reasoning["thought"] != "flights first" {
		t.Errorf("REASON_DONE persisted %+v", c)
	}
	// TOOL_CALL_COMPLETED | New messages (tool results).
	if c := byEvent[cognitive.EventToolCallCompleted]; !reflect.DeepEqual(c.Messages, []string{"tool: TP1234 found"}) {
		t.Errorf("TOOL_CALL_COMPLETED persisted %+v", c)
	}

	// A second process resumes the task from the store and completes it.
	run(t, "cognitive", db, "resume")
	snap, log = read()
	// TASK_COMPLETED | Full TaskContext: what the first process stored is still there.
	if snap.State != cognitive.StateCompleted || snap.Seq != int64(len(log)) || snap.Context.InputText != "plan a trip to Lisbon" ||
		snap.Context.FinalResult != "itinerary" || snap.Context.SuspendReason != "user asked to wait" || snap.Context.PlanGoal != "confirm" {
		t.Errorf("stored at completion: %s at %d of %d, %+v", snap.State, snap.Seq, len(log), snap.Context)
	}
	var kinds []string
	for _, e := range log {
		kinds = append(kinds, e.Event.String())
	}
	want := []string{"task_created", "reason_done", "tool_call_completed", "task_suspended", "task_resumed", "tool_call_completed", "reason_done", "step_completed"}
	if !reflect.DeepEqual(kinds, want) {
		t.Errorf("log %v, want %v", kinds, want)
	}
}
