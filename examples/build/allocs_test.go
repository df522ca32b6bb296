//go:build !race

// The race detector allocates for its own bookkeeping, so these counts hold only without
// it: make test runs them in a build without -race.

package build_test

import (
	"context"
	"testing"
	"time"

	"github.com/fsmgen/fsmgen/generated/build"
	"github.com/fsmgen/fsmgen/internal/allocs"
)

// TestAllocs counts exactly what one call allocates on seed 004's machine: roles, per-state
// counters, timeouts (a clock) and a transition history.
func TestAllocs(t *testing.T) {
	ctx := context.Background()
	validator := build.TaskInput{Role: build.RoleSolutionValidator}
	planning := func() *build.Task {
		m := build.NewTask(build.TaskNopHooks{})
		m.SetClock(fixedClock{time.Unix(0, 0)})
		for _, f := range []struct {
			e  build.Event
			in build.TaskInput
		}{{build.EventPickedUp, build.TaskInput{Role: build.RoleBuildOrchestrator}}, {build.EventValidationStarted, validator}} {
			if _, err := m.FireWith(ctx, f.e, f.in); err != nil {
				t.Fatal(err)
			}
		}
		return m
	}
	for _, c := range []struct {
		name string
		do   func(*build.Task)
		want float64
	}{
		// The third record of the history: the slice grows from 2 to 4 records.
		{"valid FireWith, history grows", func(m *build.Task) { m.FireWith(ctx, build.EventApproachRejected, validator) }, 1},
		{"refused FireWith (no transition)", func(m *build.Task) { m.FireWith(ctx, build.EventPickedUp, validator) }, 0},
		// The PermissionError of each role is built once, at init.
		{"refused FireWith (role)", func(m *build.Task) {
			m.FireWith(ctx, build.EventApproachRejected, build.TaskInput{Role: build.RoleCto})
		}, 0},
		{"TimeoutLevel", func(m *build.Task) { m.TimeoutLevel(time.Unix(3600, 0)) }, 0},
	} {
		if got := allocs.Once(planning, c.do); got != c.want {
			t.Errorf("%s: %v allocations, want %v", c.name, got, c.want)
		}
	}
}
