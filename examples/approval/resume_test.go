package approval_test

import (
	"context"
	"errors"
	"testing"

	"github.com/fsmgen/fsmgen/generated/approval"
)

// TestSeed001LeavingApprovalAndBlock: a task that waited for approval, or was blocked,
// goes back to work only with the artifacts the state it enters requires ("Entering
// IN_PROGRESS: WorkPlan", "Entering ASSIGNED: assignee"), whoever sends it: the human's
// decision does not stand in for them. The task stays where it was, and then goes on once
// they are there.
func TestSeed001LeavingApprovalAndBlock(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		from, to approval.State
		e        approval.Event
		missing  string
	}{
		{approval.StateNeedsApproval, approval.StateInProgress, approval.EventInProgress, "work_plan"},
		{approval.StateBlocked, approval.StateAssigned, approval.EventAssigned, "assignee_ids"},
	} {
		ctxt := seedComplete()
		switch c.missing {
		case "work_plan":
			ctxt.WorkPlan = nil
		case "assignee_ids":
			ctxt.AssigneeIds = nil
		}
		m, _ := seedIn(t, c.from, ctxt, false)
		var ve *approval.ValidationError
		_, err := m.FireWith(ctx, c.e, as(approval.RoleHuman))
		if !errors.As(err, &ve) || len(ve.Errors) != 1 || ve.Errors[0].Field != c.missing || m.State() != c.from {
			t.Fatalf("%s -> %s without %s: %v, now %s", c.from, c.to, c.missing, err, m.State())
		}
		full := seedComplete()
		m.Context.WorkPlan, m.Context.AssigneeIds = full.WorkPlan, full.AssigneeIds
		seedFire(t, m, c.e, as(approval.RoleHuman), c.to)
	}
}
