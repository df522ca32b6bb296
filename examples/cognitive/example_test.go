package cognitive_test

import (
	"context"
	"fmt"

	"github.com/fsmgen/fsmgen/generated/cognitive"
)

// plan records the checkpoints the task reaches; the machine routes completion itself from
// the plan in the task context.
type plan struct {
	cognitive.TaskNopHooks
	saved []cognitive.Checkpoint
}

func (p *plan) Checkpoint(_ context.Context, _ *cognitive.Task, cp cognitive.Checkpoint, _ cognitive.TaskStep) error {
	p.saved = append(p.saved, cp)
	return nil
}

// Seed 000: when the plan's steps are done, a plan with tool_call steps goes back to
// REASONING and a plan of respond steps completes the task.
func Example_completionRouting() {
	ctx := context.Background()
	p := &plan{}
	m := cognitive.NewTask(p)
	m.FireTaskCreated(ctx, cognitive.TaskCreatedPayload{InputText: "summarise the report"}, cognitive.TaskInput{})
	m.Context.PlanSteps = []string{"tool_call", "tool_call"} // each step's action type
	m.Fire(ctx, cognitive.EventReasonDone)
	m.Context.PlanCompleted = 1 // one step done: more steps
	to, _ := m.Fire(ctx, cognitive.EventToolCallCompleted)
	fmt.Println(to)
	m.Context.PlanCompleted = 2 // all done, the plan has tool_call steps
	to, _ = m.Fire(ctx, cognitive.EventToolCallCompleted)
	fmt.Println(to)
	m.Context.PlanSteps, m.Context.PlanCompleted = []string{"respond"}, 0
	m.Fire(ctx, cognitive.EventReasonDone)
	m.Context.PlanCompleted = 1 // all done, only respond steps
	to, _ = m.Fire(ctx, cognitive.EventStepCompleted)
	fmt.Println(to, m.State().IsTerminal())
	fmt.Println(p.saved)
	// Output:
	// acting
	// reasoning
	// completed true
	// [task_created reason_done tool_call_completed tool_call_completed reason_done task_completed]
}

// Only active states can be suspended, and resuming restores the pre-suspend state.
func Example_suspendResume() {
	ctx := context.Background()
	m := cognitive.NewTask(&plan{})
	_, err := m.Fire(ctx, cognitive.EventTaskSuspended)
	fmt.Println(err)
	m.FireTaskCreated(ctx, cognitive.TaskCreatedPayload{InputText: "hi"}, cognitive.TaskInput{})
	m.Fire(ctx, cognitive.EventReasonDone)
	m.Fire(ctx, cognitive.EventTaskSuspended)
	to, _ := m.Fire(ctx, cognitive.EventTaskResumed)
	fmt.Println(to)
	// Output:
	// cognitive: no transition from idle on task_suspended
	// acting
}
