package build_test

import (
	"context"
	"testing"
	"time"

	"github.com/fsmgen/fsmgen/fsmrt"
	"github.com/fsmgen/fsmgen/generated/build"
)

type fixedClock struct{ t time.Time }

func (c fixedClock) Now() time.Time { return c.t }

// BenchmarkFireWithHistory measures a transition of a machine that declares roles,
// per-state counters, timeouts (the clock is read) and record_history (one append).
func BenchmarkFireWithHistory(b *testing.B) {
	ctx := context.Background()
	in := build.TaskInput{Role: build.RoleSolutionValidator}
	b.ReportAllocs()
	for b.Loop() {
		b.StopTimer()
		m := build.NewTask(build.TaskNopHooks{})
		m.SetClock(fixedClock{time.Unix(0, 0)})
		m.FireWith(ctx, build.EventPickedUp, build.TaskInput{Role: build.RoleBuildOrchestrator})
		m.FireWith(ctx, build.EventValidationStarted, in)
		b.StartTimer()
		m.FireWith(ctx, build.EventApproachRejected, in) // planning -> planning, counts a failure
	}
}

// BenchmarkFireRefusedRole measures a refusal for the wrong role (the error is allocated).
func BenchmarkFireRefusedRole(b *testing.B) {
	ctx := context.Background()
	m := build.NewTask(build.TaskNopHooks{})
	in := build.TaskInput{Role: build.RoleCto}
	b.ReportAllocs()
	for b.Loop() {
		m.FireWith(ctx, build.EventPickedUp, in)
	}
}

// BenchmarkFireWithStore measures a transition with an in-memory store attached: the
// context is encoded and a log entry appended on every transition. The machine is rejected
// into the CTO's hands and back until it escalates to a human (terminal); then a new one
// starts, off the clock.
func BenchmarkFireWithStore(b *testing.B) {
	ctx := context.Background()
	in := build.TaskInput{Role: build.RoleHuman}
	start := func() *build.Task {
		m := build.NewTask(build.TaskNopHooks{})
		m.ID = "bench"
		m.SetClock(fixedClock{time.Unix(0, 0)})
		m.SetStore(fsmrt.NewMemoryStore())
		m.FireWith(ctx, build.EventPickedUp, in)
		m.FireWith(ctx, build.EventValidationStarted, in)
		return m
	}
	m := start()
	b.ReportAllocs()
	for b.Loop() {
		if m.State().IsTerminal() {
			b.StopTimer()
			m = start()
			b.StartTimer()
		}
		e := build.EventApproachRejected
		if m.State() != build.StatePlanning { // the third rejection goes to the CTO
			e = build.EventRetry
		}
		if _, err := m.FireWith(ctx, e, in); err != nil {
			b.Fatal(err)
		}
	}
}
