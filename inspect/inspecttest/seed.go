// Package inspecttest fills a store for the inspector's tests, on any fsmrt.Store: tasks of
// seed 004 (generated/build) in several states, some past their timeout levels, and an
// instance of a machine whose names and data are hostile markup, with effects in its
// outbox.
package inspecttest

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/fsmgen/fsmgen/fsmrt"
	"github.com/fsmgen/fsmgen/generated/build"
)

// T0 is when the seeded tasks are created; Now is when the tests look at them: two hours
// later, past every level of pending's one-hour timeout.
var (
	T0  = time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	Now = T0.Add(2 * time.Hour)
)

// clock is a clock the seeding moves.
type clock struct{ now time.Time }

func (c *clock) Now() time.Time { return c.now }

// Seeded says what SeedBuild stored, for the tests to check the pages against.
type Seeded struct {
	// Pending are the tasks in pending past every level of its timeout; Fresh the one in
	// pending past none.
	Pending []string
	Fresh   string
	// CTO is the task under CTO review (cto_intervention) after three failures of
	// planning; Planning the task in planning with two; Done the completed one.
	CTO, Planning, Done string
	// Actor and Reason are those of the CTO task's last transition.
	Actor, Reason string
}

// SeedBuild stores tasks of the build machine in store through its generated code.
func SeedBuild(ctx context.Context, store fsmrt.Store) (Seeded, error) {
	s := Seeded{Pending: []string{"task-01", "task-02", "task-03", "task-04", "task-05"}, Fresh: "task-06",
		CTO: "task-cto", Planning: "task-planning", Done: "task-done", Actor: "@solution_validator", Reason: "third rejection: the plan ignores the schema"}
	c := &clock{now: T0}
	create := func(id string, at time.Time) (*build.Task, error) {
		c.now = at
		m := build.NewTask(build.TaskNopHooks{})
		m.ID = id
		m.SetStore(store)
		m.SetClock(c)
		return m, m.Create(ctx, build.TaskInput{Actor: "user", Reason: "task created"})
	}
	fire := func(m *build.Task, e build.Event, r build.Role, reason string) error {
		c.now = c.now.Add(time.Minute)
		_, err := m.FireWith(ctx, e, build.TaskInput{Role: r, Actor: "@" + r.String(), Reason: reason, Key: fmt.Sprintf("%s-%d", m.ID, m.Seq()+1)})
		return err
	}
	for _, id := range s.Pending {
		if _, err := create(id, T0); err != nil {
			return s, err
		}
	}
	if _, err := create(s.Fresh, Now.Add(-10*time.Minute)); err != nil {
		return s, err
	}
	planning := func(id string, rejections int) error {
		m, err := create(id, T0)
		if err != nil {
			return err
		}
		if err := fire(m, build.EventPickedUp, build.RoleBuildOrchestrator, "picked up"); err != nil {
			return err
		}
		if err := fire(m, build.EventValidationStarted, build.RoleSolutionValidator, "validating"); err != nil {
			return err
		}
		for i := range rejections {
			reason := fmt.Sprintf("rejection %d", i+1)
			if i == 2 {
				reason = s.Reason
			}
			if err := fire(m, build.EventApproachRejected, build.RoleSolutionValidator, reason); err != nil {
				return err
			}
		}
		return nil
	}
	if err := planning(s.Planning, 2); err != nil {
		return s, err
	}
	if err := planning(s.CTO, 3); err != nil {
		return s, err
	}
	m, err := create(s.Done, T0)
	if err != nil {
		return s, err
	}
	for _, step := range []struct {
		e build.Event
		r build.Role
	}{
		{build.EventPickedUp, build.RoleBuildOrchestrator}, {build.EventValidationStarted, build.RoleSolutionValidator},
		{build.EventApproachApproved, build.RoleSolutionValidator}, {build.EventImplementationStarted, build.RoleFullstackDeveloper},
		{build.EventCodeComplete, build.RoleFullstackDeveloper}, {build.EventSelfChecksDone, build.RoleFullstackDeveloper},
		{build.EventGatesPassed, build.RoleQualityMonitor}, {build.EventReadyToCommit, build.RoleGitManager},
		{build.EventCommitSucceeded, build.RoleGitManager},
	} {
		if err := fire(m, step.e, step.r, "done"); err != nil {
			return s, err
		}
	}
	return s, nil
}

// Hostile names and data: a machine whose state, event and counter names, and an instance
// whose ID, actor, reason, key, context and effect are markup meant to run.
const (
	HostileMachine = `evil.<Machine>`
	HostileState   = `<script>alert("state")</script>`
	HostileEvent   = `"><img src=x onerror=alert("event")>`
	HostileID      = `<img src=x onerror=alert("id")>`
	HostileActor   = `"><img src=x onerror=alert(1)>`
	HostileReason  = `</td></tr></table><script>alert("reason")</script>`
	HostileKey     = `key'"><svg onload=alert("key")>`
	HostileEffect  = `<iframe src="javascript:alert('effect')">`
	HostileCounter = `<b onmouseover=alert("counter")>`
	// HostileError is the error of the effect's failed delivery.
	HostileError = `503 <img src=x onerror=alert("error")>`
)

// HostileDescription describes the hostile machine.
func HostileDescription() fsmrt.Description {
	return fsmrt.Description{
		Machine: HostileMachine, Spec: "sha256:hostile",
		States: []fsmrt.StateDescription{
			{Name: "start", Initial: true},
			{Name: HostileState, Timeout: time.Hour, Levels: []fsmrt.LevelDescription{{Name: "warn", Percent: 80}}},
		},
		Events:      []string{HostileEvent},
		Levels:      []string{"warn"},
		Transitions: []fsmrt.TransitionDescription{{From: []int{0}, Events: []int{0}, To: []int{1}}},
		Counters:    []fsmrt.CounterDescription{{Name: HostileCounter, Limit: 2}},
	}
}

// name stands for the hostile machine's enums in its log entries, which the inspector
// reads names of from the store's Entry, not from the JSON.
type name uint8

func (name) String() string   { return "" }
func (name) IsTerminal() bool { return false }

// SeedHostile commits, through the store contract alone, an instance of the hostile
// machine in its hostile state, past its warn level at Now, with an effect in its outbox
// claimed once.
func SeedHostile(ctx context.Context, store fsmrt.Store) error {
	type logEntry = fsmrt.LogEntry[name, name, name]
	data, err := json.Marshal(logEntry{Seq: 1, Timestamp: T0, Actor: HostileActor, Reason: HostileReason, Key: HostileKey,
		Context: json.RawMessage(`{"note":"</pre><script>alert('context')</script>"}`)})
	if err != nil {
		return err
	}
	c := &fsmrt.Commit{
		Machine: HostileMachine, ID: HostileID, Spec: "sha256:hostile", Version: 0, State: HostileState,
		Entry:     fsmrt.Entry{Seq: 1, Kind: fsmrt.KindTransition, Event: HostileEvent, From: "start", To: HostileState, At: T0, Key: HostileKey, Data: data},
		Effects:   []fsmrt.Effect{{Name: HostileEffect, Key: HostileKey + "/0", Data: []byte(`{}`)}},
		Rearm:     true,
		Deadlines: []fsmrt.Deadline{{Name: "level:warn", At: T0.Add(48 * time.Minute), State: HostileState, Level: 1}},
		Counters:  []fsmrt.CounterValue{{Name: HostileCounter, Value: 2}},
	}
	if err := store.Commit(ctx, c); err != nil {
		return err
	}
	// One delivery tried, and failed: the effect is pending with one attempt and its
	// error, in a store that keeps errors.
	claimed, err := store.ClaimEffects(ctx, HostileMachine, `worker-"><b>`, T0.Add(time.Minute), time.Minute, 10)
	if err != nil {
		return err
	}
	if rec, ok := store.(fsmrt.EffectErrorRecorder); ok {
		for _, e := range claimed {
			if err := rec.RecordEffectError(ctx, e.EffectID, HostileError, T0.Add(90*time.Second)); err != nil {
				return err
			}
		}
	}
	return nil
}
