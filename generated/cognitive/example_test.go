package cognitive_test

import (
	"context"
	"fmt"

	"github.com/fsmgen/fsmgen/generated/cognitive"
)

// plan answers the completion-routing guards from the task's plan.
type plan struct {
	cognitive.TaskNopHooks
	moreSteps, toolCalls bool
	saved                []cognitive.Checkpoint
}

func (p *plan) PlanHasMoreSteps(context.Context, *cognitive.Task, cognitive.TaskStep) bool {
	return p.moreSteps
}
func (p *plan) PlanHasToolCalls(context.Context, *cognitive.Task, cognitive.TaskStep) bool {
	return p.toolCalls
}
func (p *plan) Checkpoint(_ context.Context, _ *cognitive.Task, cp cognitive.Checkpoint, _ cognitive.TaskStep) error {
	p.saved = append(p.saved, cp)
	return nil
}

// Seed 000: when the plan's steps are done, a plan with tool_call steps goes back to
// REASONING and a plan of respond steps completes the task.
func Example_completionRouting() {
	ctx := context.Background()
	p := &plan{moreSteps: true}
	m := cognitive.NewTask(p)
	m.FireTaskCreated(ctx, cognitive.TaskCreatedPayload{InputText: "summarise the report"}, cognitive.TaskInput{})
	m.Fire(ctx, cognitive.EventReasonDone)
	to, _ := m.Fire(ctx, cognitive.EventToolCallCompleted)
	fmt.Println(to)
	p.moreSteps, p.toolCalls = false, true
	to, _ = m.Fire(ctx, cognitive.EventToolCallCompleted)
	fmt.Println(to)
	m.Fire(ctx, cognitive.EventReasonDone)
	p.toolCalls = false
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
