//go:build !race

// The race detector allocates for its own bookkeeping, so these counts hold only without
// it: make test runs them in a build without -race.

package cognitive_test

import (
	"context"
	"testing"

	"github.com/fsmgen/fsmgen/generated/cognitive"
	"github.com/fsmgen/fsmgen/internal/allocs"
)

// TestAllocs counts exactly what one call allocates on seed 000's machine: payloads,
// dynamic transitions, a checkpoint hook, suspend/resume memory and a transition history.
func TestAllocs(t *testing.T) {
	ctx := context.Background()
	idle := func() *cognitive.Task { return cognitive.NewTask(loopHooks{}) }
	acting := func() *cognitive.Task {
		m := cognitive.NewTask(loopHooks{})
		if _, err := m.FireTaskCreated(ctx, cognitive.TaskCreatedPayload{InputText: "x"}, cognitive.TaskInput{}); err != nil {
			t.Fatal(err)
		}
		m.Context.PlanSteps = []string{"tool_call", "respond"}
		if _, err := m.Fire(ctx, cognitive.EventReasonDone); err != nil {
			t.Fatal(err)
		}
		return m
	}
	for _, c := range []struct {
		name  string
		setup func() *cognitive.Task
		do    func(*cognitive.Task)
		want  float64
	}{
		// Each accepted firing appends a record to the history, which grows: from nothing
		// for the first transition, from 2 records to 4 for the third.
		{"valid payload Fire, first history record", idle, func(m *cognitive.Task) {
			m.FireTaskCreated(ctx, cognitive.TaskCreatedPayload{InputText: "x"}, cognitive.TaskInput{})
		}, 1},
		{"dynamic transition with checkpoint, history grows", acting, func(m *cognitive.Task) { m.Fire(ctx, cognitive.EventToolCallCompleted) }, 1},
		{"suspend (remembers acting), history grows", acting, func(m *cognitive.Task) { m.Fire(ctx, cognitive.EventTaskSuspended) }, 1},
		{"payload Fire with a checkpoint, first history record", idle, func(m *cognitive.Task) {
			m.FireTaskFailed(ctx, cognitive.TaskFailedPayload{Error: "boom"}, cognitive.TaskInput{})
		}, 1},
		{"refused Fire (no transition)", acting, func(m *cognitive.Task) { m.Fire(ctx, cognitive.EventTaskCreated) }, 0},
		// An invalid payload is refused with a ValidationError listing the field and the
		// events the state accepts: the error, its field list and the event list.
		{"refused payload (validation)", idle, func(m *cognitive.Task) {
			if _, err := m.FireTaskCreated(ctx, cognitive.TaskCreatedPayload{}, cognitive.TaskInput{}); err == nil {
				t.Error("an empty input_text was accepted")
			}
		}, 3},
	} {
		if got := allocs.Once(c.setup, c.do); got != c.want {
			t.Errorf("%s: %v allocations, want %v", c.name, got, c.want)
		}
	}
}
