package pipeline_test

import (
	"context"
	"fmt"

	"github.com/fsmgen/fsmgen/generated/pipeline"
)

// hooks answers the pipeline's questions; everything else is a no-op.
type hooks struct {
	pipeline.TaskNopHooks
}

func (hooks) RetriesRemaining(context.Context, *pipeline.Task, pipeline.TaskStep) bool { return true }
func (hooks) BudgetAvailable(context.Context, *pipeline.Task, pipeline.TaskStep) bool  { return true }

// Seed 002: a classification with confidence >= 0.6 routes the task; below 0.6 the user is
// asked for clarification.
func Example_confidence() {
	ctx := context.Background()
	m := pipeline.NewTask(hooks{})
	m.Fire(ctx, pipeline.EventStart)
	m.Context.Confidence = 0.4
	to, _ := m.Fire(ctx, pipeline.EventClassified)
	fmt.Println(to)
	m.Fire(ctx, pipeline.EventClarified)
	m.Context.Confidence = 0.8
	to, _ = m.Fire(ctx, pipeline.EventClassified)
	fmt.Println(to)
	// Output:
	// awaiting_clarification
	// routing
}

// Two failed attempts escalate the model tier; the third consecutive failure trips the
// circuit breaker and stops the task.
func Example_circuitBreaker() {
	ctx := context.Background()
	m := pipeline.NewTask(hooks{})
	for _, e := range []pipeline.Event{pipeline.EventStart, pipeline.EventClassified, pipeline.EventRouted} {
		m.Context.Confidence = 0.9
		m.Fire(ctx, e)
	}
	for i := 0; i < 3; i++ {
		m.Fire(ctx, pipeline.EventPhaseFailed)
		to, _ := m.Fire(ctx, pipeline.EventRetry)
		fmt.Println(m.CountConsecutiveFailures(), to)
		if to == pipeline.StateEscalating {
			m.Fire(ctx, pipeline.EventEscalated)
		}
	}
	// Output:
	// 1 executing
	// 2 escalating
	// 3 stopped
}
