package approval_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/fsmgen/fsmgen/generated/approval"
)

// Seed 001: entering IN_PROGRESS needs assignees and a work plan of 3-6 bullets. A refusal
// lists every missing field and the transitions allowed instead; the task stays put.
func Example_requiredArtifacts() {
	ctx := context.Background()
	m := approval.NewTask(approval.TaskNopHooks{})
	lead := approval.TaskInput{Role: approval.RoleLead}
	m.Context.AssigneeIds = []string{"ana"}
	m.FireWith(ctx, approval.EventAssigned, lead)

	m.Context.WorkPlan = []string{"only one bullet"}
	_, err := m.FireWith(ctx, approval.EventInProgress, approval.TaskInput{Role: approval.RoleIntern})
	var ve *approval.ValidationError
	errors.As(err, &ve)
	fmt.Println(m.State(), ve.Errors, ve.Allowed)
	// Output:
	// ASSIGNED [{work_plan Work plan required for IN_PROGRESS}] []
}

// Only a human approves DONE by default; a lead may when the policy allows it.
func Example_leadPolicy() {
	ctx := context.Background()
	m := approval.NewTask(approval.TaskNopHooks{})
	human := approval.TaskInput{Role: approval.RoleHuman}
	m.Context = approval.TaskContext{AssigneeIds: []string{"ana"}, WorkPlan: []string{"a", "b", "c"},
		Deliverable: "report", ReviewChecklist: []string{"tests pass"}}
	for _, e := range []approval.Event{approval.EventAssigned, approval.EventInProgress, approval.EventReview} {
		m.FireWith(ctx, e, human)
	}
	lead := approval.TaskInput{Role: approval.RoleLead}
	_, err := m.FireWith(ctx, approval.EventDone, lead)
	fmt.Println(errors.Is(err, approval.ErrPermission))
	m.SetPolicies(approval.TaskPolicies{LeadMayApprove: true})
	m.Context.ApprovedBy, m.Context.ApprovedAt = "lead-1", time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC)
	m.Context.DeliverableAccepted, m.Context.DecisionNote = true, "meets the brief"
	to, err := m.FireWith(ctx, approval.EventDone, lead)
	fmt.Println(to, err)
	// Output:
	// true
	// DONE <nil>
}
