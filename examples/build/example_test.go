package build_test

import (
	"context"
	"fmt"
	"time"

	"github.com/fsmgen/fsmgen/generated/build"
)

type clock struct{ now time.Time }

func (c *clock) Now() time.Time { return c.now }

// Seed 004: the third failure in a state sends the task to cto_intervention; the CTO's
// retry returns it to the state it came from, with its failure count reset.
func Example_ctoIntervention() {
	ctx := context.Background()
	m := build.NewTask(build.TaskNopHooks{})
	as := func(r build.Role) build.TaskInput { return build.TaskInput{Role: r} }
	m.FireWith(ctx, build.EventPickedUp, as(build.RoleBuildOrchestrator))
	m.FireWith(ctx, build.EventValidationStarted, as(build.RoleSolutionValidator))
	for i := 0; i < 3; i++ {
		to, _ := m.FireWith(ctx, build.EventApproachRejected, as(build.RoleSolutionValidator))
		fmt.Println(to, m.CountFailures(build.StatePlanning))
	}
	to, _ := m.FireWith(ctx, build.EventRetry, as(build.RoleCto))
	fmt.Println(to, m.CountCtoAttempts())
	// Output:
	// planning 1
	// planning 2
	// cto_intervention 0
	// planning 1
}

// Timeouts are reported, never enforced: 80% of planning's 30 minutes is a warning, 150%
// calls for escalation, and the task stays where it is.
func Example_timeouts() {
	ctx := context.Background()
	c := &clock{now: time.Date(2026, 1, 1, 9, 0, 0, 0, time.UTC)}
	m := build.NewTask(build.TaskNopHooks{})
	m.SetClock(c)
	m.FireWith(ctx, build.EventPickedUp, build.TaskInput{Role: build.RoleHuman})
	m.FireWith(ctx, build.EventValidationStarted, build.TaskInput{Role: build.RoleHuman})
	for _, after := range []time.Duration{10 * time.Minute, 24 * time.Minute, 30 * time.Minute, 45 * time.Minute} {
		fmt.Println(after, m.TimeoutLevel(c.now.Add(after)), m.State())
	}
	// Output:
	// 10m0s  planning
	// 24m0s warn planning
	// 30m0s alert planning
	// 45m0s escalate planning
}
