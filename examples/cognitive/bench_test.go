package cognitive_test

import (
	"context"
	"testing"

	"github.com/fsmgen/fsmgen/generated/cognitive"
)

type loopHooks struct{ cognitive.TaskNopHooks }

// BenchmarkFireChoiceCheckpointHistory measures acting -> acting on tool_call_completed:
// a dynamic choice (one field guard: the plan has more steps), a checkpoint hook and a
// history record, with the clock read once.
func BenchmarkFireChoiceCheckpointHistory(b *testing.B) {
	ctx := context.Background()
	m := cognitive.NewTask(loopHooks{})
	m.FireTaskCreated(ctx, cognitive.TaskCreatedPayload{InputText: "x"}, cognitive.TaskInput{})
	m.Context.PlanSteps = []string{"tool_call", "respond"}
	m.Fire(ctx, cognitive.EventReasonDone)
	b.ReportAllocs()
	for b.Loop() {
		m.Fire(ctx, cognitive.EventToolCallCompleted)
	}
}

// BenchmarkFirePayload measures an event with a validated payload (task_failed from
// acting, on a fresh machine each time so that it is accepted).
func BenchmarkFirePayload(b *testing.B) {
	ctx := context.Background()
	p := cognitive.TaskFailedPayload{Error: "boom"}
	b.ReportAllocs()
	for b.Loop() {
		b.StopTimer()
		m := cognitive.NewTask(loopHooks{})
		b.StartTimer()
		m.FireTaskFailed(ctx, p, cognitive.TaskInput{})
	}
}
