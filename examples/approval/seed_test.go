package approval_test

// Scenario tests for seed 001 (/work/shared/seeds/001_*.txt, "STATE_MACHINE.md - Task State
// Machine"): each block quotes the document's rule and drives the generated machine through it.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/fsmgen/fsmgen/fsmrt"
	"github.com/fsmgen/fsmgen/generated/approval"
)

// seedHooks posts the artifacts the Transition Rules name and auto-calculates the cost
// summary from the task's runs; it records what it did.
type seedHooks struct {
	runs   []float64 // cost of each run so far
	tokens int
	did    []string
}

func (h *seedHooks) PostWorkPlanComment(_ context.Context, m *approval.Task, _ approval.TaskStep) {
	h.did = append(h.did, "work plan comment: "+strings.Join(m.Context.WorkPlan, "; "))
}

func (h *seedHooks) AttachReviewSubmission(_ context.Context, m *approval.Task, _ approval.TaskStep) {
	h.did = append(h.did, "attach: "+m.Context.Deliverable+" + "+strings.Join(m.Context.ReviewChecklist, "; "))
}

func (h *seedHooks) CalculateCostSummary(_ context.Context, m *approval.Task, _ approval.TaskStep) {
	total := 0.0
	for _, c := range h.runs {
		total += c
	}
	m.Context.CostTotal, m.Context.RunCount, m.Context.TokenCount = total, len(h.runs), h.tokens
	h.did = append(h.did, "cost summary")
}

func (h *seedHooks) PostReviewComment(_ context.Context, m *approval.Task, s approval.TaskStep) {
	h.did = append(h.did, "review comment: "+m.Context.RevisionFeedback+" -> "+s.To.String())
}

func (h *seedHooks) PostApprovalComment(_ context.Context, m *approval.Task, _ approval.TaskStep) {
	h.did = append(h.did, "approval comment: "+m.Context.ApprovedBy)
}

var seedApprovedAt = time.Date(2026, 4, 2, 15, 30, 0, 0, time.UTC)

// seedComplete is a context with every artifact the document requires.
func seedComplete() approval.TaskContext {
	return approval.TaskContext{
		AssigneeIds:         []string{"agent-ana"},
		WorkPlan:            []string{"read the spec", "write the code", "test it"},
		Deliverable:         "PR #12",
		ReviewChecklist:     []string{"tests pass", "docs updated"},
		RevisionFeedback:    "split the function",
		ApprovedBy:          "human-bo",
		ApprovedAt:          seedApprovedAt,
		DeliverableAccepted: true,
		DecisionNote:        "meets the brief",
		ApprovalRequest:     "budget exceeded: $12 of $10",
		BlockReason:         "external API down",
	}
}

// seedIn restores a machine in state s (the snapshot is the persistence seam's format).
func seedIn(t *testing.T, s approval.State, c approval.TaskContext, leadMayApprove bool) (*approval.Task, *seedHooks) {
	t.Helper()
	h := &seedHooks{}
	m, err := approval.RestoreTask(approval.TaskSnapshot{Version: 1, ID: "TASK-1", State: s, Context: c, Extra: approval.TaskExtra{Policies: approval.TaskPolicies{LeadMayApprove: leadMayApprove}}}, h)
	if err != nil {
		t.Fatal(err)
	}
	return m, h
}

func as(r approval.Role) approval.TaskInput { return approval.TaskInput{Role: r} }

func seedFire(t *testing.T, m *approval.Task, e approval.Event, in approval.TaskInput, want approval.State) {
	t.Helper()
	to, err := m.FireWith(context.Background(), e, in)
	if err != nil || to != want || m.State() != want {
		t.Fatalf("%s by %s: %v (state %s), %v; want %s", e, in.Role, to, m.State(), err, want)
	}
}

func seedJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// The Transition Matrix, exactly its ✓ cells.
var seedMatrix = map[approval.State][]approval.State{
	approval.StateInbox:         {approval.StateAssigned, approval.StateCanceled},
	approval.StateAssigned:      {approval.StateInbox, approval.StateInProgress, approval.StateCanceled},
	approval.StateInProgress:    {approval.StateReview, approval.StateNeedsApproval, approval.StateBlocked, approval.StateCanceled},
	approval.StateReview:        {approval.StateInProgress, approval.StateNeedsApproval, approval.StateBlocked, approval.StateDone, approval.StateCanceled},
	approval.StateNeedsApproval: {approval.StateInbox, approval.StateAssigned, approval.StateInProgress, approval.StateReview, approval.StateBlocked, approval.StateDone, approval.StateCanceled},
	approval.StateBlocked:       {approval.StateAssigned, approval.StateInProgress, approval.StateNeedsApproval, approval.StateCanceled},
}

// seedMay is the Agent Permissions table.
func seedMay(r approval.Role, from, to approval.State, leadMayApprove bool) bool {
	is := func(f, t approval.State) bool { return from == f && to == t }
	intern := is(approval.StateAssigned, approval.StateInProgress) || is(approval.StateInProgress, approval.StateReview)
	specialist := intern || is(approval.StateInProgress, approval.StateBlocked) || is(approval.StateInbox, approval.StateAssigned)
	switch r {
	case approval.RoleIntern: // "ASSIGNED→IN_PROGRESS, IN_PROGRESS→REVIEW only"
		return intern
	case approval.RoleSpecialist: // "Above + IN_PROGRESS→BLOCKED (self), claim from INBOX"
		return specialist
	case approval.RoleLead: // "Above + REVIEW→DONE (if policy allows), INBOX→ASSIGNED"
		return specialist || is(approval.StateReview, approval.StateDone) && leadMayApprove
	case approval.RoleHuman: // "All transitions"
		return true
	case approval.RoleSystem: // "Any→BLOCKED, Any→NEEDS_APPROVAL"
		return to == approval.StateBlocked || to == approval.StateNeedsApproval
	}
	return false
}

func TestSeed001ReviewApproval(t *testing.T) {
	ctx := context.Background()
	roles := []approval.Role{approval.RoleNone, approval.RoleIntern, approval.RoleSpecialist, approval.RoleLead, approval.RoleHuman, approval.RoleSystem}

	// "Transition Matrix" and "Agent Permissions": every (state, target, role) cell, with
	// the policy off and on. Moves outside the matrix are invalid for everyone; inside it,
	// a role the table does not grant is refused with a PermissionError.
	t.Run("role permissions per transition", func(t *testing.T) {
		for _, policy := range []bool{false, true} {
			for _, from := range approval.States() {
				for _, e := range approval.Events() {
					to, err := approval.ParseState(e.String()) // transitions are named by their target
					if err != nil {
						t.Fatal(err)
					}
					inMatrix := false
					for _, x := range seedMatrix[from] {
						inMatrix = inMatrix || x == to
					}
					for _, r := range roles {
						m, _ := seedIn(t, from, seedComplete(), policy)
						got, err := m.FireWith(ctx, e, as(r))
						var ite *approval.InvalidTransitionError
						var pe *approval.PermissionError
						switch {
						case !inMatrix:
							if !errors.As(err, &ite) || got != from || m.State() != from {
								t.Errorf("%s -> %s by %q (policy %v): %v, %v; want an InvalidTransitionError", from, to, r, policy, got, err)
							}
						case seedMay(r, from, to, policy):
							if err != nil || got != to {
								t.Errorf("%s -> %s by %q (policy %v): %v, %v; want %s", from, to, r, policy, got, err, to)
							}
						default:
							if !errors.As(err, &pe) || pe.Reason() != "role" || pe.Role != r || pe.State != from || pe.Event != e || got != from || m.State() != from {
								t.Errorf("%s -> %s by %q (policy %v): %v, %v; want a PermissionError", from, to, r, policy, got, err)
							}
						}
					}
				}
			}
		}
	})

	// "Required Artifacts by Status" and the Transition Rules' "Required" lines, reported as
	// the API's Validation Errors: {"success": false, "errors": [{field, message}...],
	// "allowedTransitions": [...]}.
	t.Run("required artifacts", func(t *testing.T) {
		refusal := func(m *approval.Task, e approval.Event, in approval.TaskInput) *approval.ValidationError {
			t.Helper()
			before := seedJSON(t, m.Snapshot())
			from := m.State()
			to, err := m.FireWith(ctx, e, in)
			var ve *approval.ValidationError
			if !errors.As(err, &ve) || ve.Reason() != "artifacts" || ve.Payload || to != from || m.State() != from {
				t.Fatalf("%s from %s: %v, %v; want a ValidationError", e, from, to, err)
			}
			if after := seedJSON(t, m.Snapshot()); after != before {
				t.Errorf("a refusal changed the machine")
			}
			return ve
		}

		// INBOX → ASSIGNED: "assigneeIds must be non-empty".
		m, _ := seedIn(t, approval.StateInbox, approval.TaskContext{}, false)
		ve := refusal(m, approval.EventAssigned, as(approval.RoleLead))
		if got, want := seedJSON(t, ve), `{"success":false,"errors":[{"field":"assignee_ids","message":"Must have at least one assignee"}],"allowedTransitions":[]}`; got != want {
			t.Errorf("INBOX -> ASSIGNED\n got %s\nwant %s", got, want)
		}

		// The document's example: entering IN_PROGRESS without a work plan and with the
		// assignees gone ("assigneeIds still non-empty").
		m, _ = seedIn(t, approval.StateInbox, approval.TaskContext{AssigneeIds: []string{"agent-ana"}}, false)
		seedFire(t, m, approval.EventAssigned, as(approval.RoleLead), approval.StateAssigned)
		m.Context.AssigneeIds = nil
		ve = refusal(m, approval.EventInProgress, as(approval.RoleHuman))
		got := seedJSON(t, ve)
		want := `{"success":false,"errors":[{"field":"assignee_ids","message":"Must have at least one assignee"},{"field":"work_plan","message":"Work plan required for IN_PROGRESS"}],"allowedTransitions":["CANCELED","INBOX"]}`
		if got != want {
			t.Errorf("ASSIGNED -> IN_PROGRESS\n got %s\nwant %s", got, want)
		}
		var doc map[string]any
		if err := json.Unmarshal([]byte(got), &doc); err != nil {
			t.Fatal(err)
		}
		var keys []string
		for k := range doc {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		if strings.Join(keys, ",") != "allowedTransitions,errors,success" || doc["success"] != false {
			t.Errorf("refusal keys %v, success %v", keys, doc["success"])
		}
		// allowedTransitions depends on who asks: the Intern may fire nothing else here.
		if ve := refusal(m, approval.EventInProgress, as(approval.RoleIntern)); len(ve.Allowed) != 0 || ve.Target != approval.StateInProgress {
			t.Errorf("intern's allowed transitions %v, target %s", ve.Allowed, ve.Target)
		}

		// "workPlan with 3-6 bullets".
		m.Context.AssigneeIds = []string{"agent-ana"}
		for n, ok := range map[int]bool{0: false, 2: false, 3: true, 6: true, 7: false} {
			m.Context.WorkPlan = make([]string, n)
			for i := range m.Context.WorkPlan {
				m.Context.WorkPlan[i] = "step"
			}
			if can := m.CanWith(ctx, approval.EventInProgress, as(approval.RoleIntern)); can != ok {
				t.Errorf("work plan of %d bullets accepted: %v, want %v", n, can, ok)
			}
			if !ok {
				if ve := refusal(m, approval.EventInProgress, as(approval.RoleIntern)); !reflect.DeepEqual(ve.Errors, []approval.FieldError{{Field: "work_plan", Message: "Work plan required for IN_PROGRESS"}}) {
					t.Errorf("%d bullets: %+v", n, ve.Errors)
				}
			}
		}

		// Entering REVIEW: "deliverable attached", "reviewChecklist completed (self-review)";
		// "Cost summary (auto-calculated from runs)".
		c := seedComplete()
		c.Deliverable, c.ReviewChecklist = "", nil
		m, h := seedIn(t, approval.StateInProgress, c, false)
		ve = refusal(m, approval.EventReview, as(approval.RoleIntern))
		if !reflect.DeepEqual(ve.Errors, []approval.FieldError{
			{Field: "deliverable", Message: "Deliverable required for REVIEW"},
			{Field: "review_checklist", Message: "Completed review checklist required for REVIEW"},
		}) {
			t.Errorf("entering REVIEW: %+v", ve.Errors)
		}
		h.runs, h.tokens = []float64{0.25, 1.5}, 4200
		m.Context.Deliverable, m.Context.ReviewChecklist = "PR #12", []string{"tests pass"}
		seedFire(t, m, approval.EventReview, as(approval.RoleIntern), approval.StateReview)
		if m.Context.CostTotal != 1.75 || m.Context.RunCount != 2 || m.Context.TokenCount != 4200 {
			t.Errorf("cost summary %v / %d runs / %d tokens", m.Context.CostTotal, m.Context.RunCount, m.Context.TokenCount)
		}

		// Entering DONE: CompletionRecord (approvedBy, approvedAt) + "Deliverable confirmed
		// acceptable" + "Decision note"; approvalId is optional.
		c = seedComplete()
		c.ApprovedBy, c.ApprovedAt, c.DeliverableAccepted, c.DecisionNote = "", time.Time{}, false, ""
		m, _ = seedIn(t, approval.StateReview, c, false)
		ve = refusal(m, approval.EventDone, as(approval.RoleHuman))
		var fields []string
		for _, fe := range ve.Errors {
			fields = append(fields, fe.Field+": "+fe.Message)
		}
		if got, want := strings.Join(fields, " | "), "approved_by: Approval record required for DONE (approved by) | approved_at: Approval record required for DONE (approved at) | deliverable_accepted: Deliverable must be confirmed acceptable | decision_note: Decision note required for DONE"; got != want {
			t.Errorf("entering DONE:\n got %s\nwant %s", got, want)
		}
		if got := seedJSON(t, ve.Allowed); got != `["CANCELED","IN_PROGRESS","NEEDS_APPROVAL","BLOCKED"]` {
			t.Errorf("allowed instead of DONE: %s", got)
		}

		// "Any → NEEDS_APPROVAL: Required: Approval request created"; "Any → BLOCKED:
		// Required: Block reason documented".
		c = seedComplete()
		c.ApprovalRequest, c.BlockReason = "", ""
		m, _ = seedIn(t, approval.StateInProgress, c, false)
		if ve := refusal(m, approval.EventNeedsApproval, as(approval.RoleSystem)); !reflect.DeepEqual(ve.Errors, []approval.FieldError{{Field: "approval_request", Message: "Approval request required for NEEDS_APPROVAL"}}) {
			t.Errorf("entering NEEDS_APPROVAL: %+v", ve.Errors)
		}
		if ve := refusal(m, approval.EventBlocked, as(approval.RoleSystem)); !reflect.DeepEqual(ve.Errors, []approval.FieldError{{Field: "block_reason", Message: "Block reason required for BLOCKED"}}) {
			t.Errorf("entering BLOCKED: %+v", ve.Errors)
		}
	})

	// The Transition Rules' "Artifacts": WorkPlan comment posted; Deliverable + Checklist
	// attached; review comment with requested changes; approval comment.
	t.Run("artifacts along the state diagram", func(t *testing.T) {
		m, h := seedIn(t, approval.StateInbox, approval.TaskContext{}, false)
		m.Context.AssigneeIds = []string{"agent-ana"}
		seedFire(t, m, approval.EventAssigned, as(approval.RoleLead), approval.StateAssigned) // assign
		m.Context.WorkPlan = []string{"a", "b", "c"}
		seedFire(t, m, approval.EventInProgress, as(approval.RoleIntern), approval.StateInProgress) // start (+ work plan)
		m.Context.Deliverable, m.Context.ReviewChecklist = "draft", []string{"self-reviewed"}
		seedFire(t, m, approval.EventReview, as(approval.RoleIntern), approval.StateReview) // submit
		m.Context.RevisionFeedback = "add tests"
		seedFire(t, m, approval.EventInProgress, as(approval.RoleHuman), approval.StateInProgress) // revisions
		seedFire(t, m, approval.EventReview, as(approval.RoleIntern), approval.StateReview)
		m.Context.ApprovedBy, m.Context.ApprovedAt, m.Context.DeliverableAccepted, m.Context.DecisionNote = "human-bo", seedApprovedAt, true, "good"
		seedFire(t, m, approval.EventDone, as(approval.RoleHuman), approval.StateDone) // approve
		want := []string{
			"work plan comment: a; b; c",
			"attach: draft + self-reviewed", "cost summary",
			"review comment: add tests -> IN_PROGRESS",
			"attach: draft + self-reviewed", "cost summary",
			"approval comment: human-bo",
		}
		if !reflect.DeepEqual(h.did, want) {
			t.Errorf("artifacts\n got %q\nwant %q", h.did, want)
		}
		if m.CountReviewCycles() != 1 || !m.State().IsTerminal() {
			t.Errorf("review cycles %d, terminal %v", m.CountReviewCycles(), m.State().IsTerminal())
		}
	})

	// "REVIEW → DONE: Who: Human (default), Lead Agent (if policy allows)"; "✓* = Requires
	// human approval by default".
	t.Run("Lead may approve DONE only if the policy allows", func(t *testing.T) {
		m, _ := seedIn(t, approval.StateReview, seedComplete(), false)
		if m.Policies().LeadMayApprove {
			t.Fatal("the policy is on by default")
		}
		if fresh := approval.NewTask(approval.TaskNopHooks{}); fresh.Policies().LeadMayApprove {
			t.Fatal("NewTask turns the policy on")
		}
		_, err := m.FireWith(ctx, approval.EventDone, as(approval.RoleLead))
		var pe *approval.PermissionError
		if !errors.As(err, &pe) || pe.Role != approval.RoleLead || m.State() != approval.StateReview {
			t.Fatalf("lead approves by default: %v", err)
		}
		if got := m.PermittedWith(ctx, as(approval.RoleLead), nil); len(got) != 0 {
			t.Errorf("lead may fire %v in REVIEW with the policy off", got)
		}
		m.SetPolicies(approval.TaskPolicies{LeadMayApprove: true})
		if got := m.PermittedWith(ctx, as(approval.RoleLead), nil); !reflect.DeepEqual(got, []approval.Event{approval.EventDone}) {
			t.Errorf("lead may fire %v in REVIEW with the policy on, want [DONE]", got)
		}
		seedFire(t, m, approval.EventDone, as(approval.RoleLead), approval.StateDone)
		if !m.Snapshot().Extra.Policies.LeadMayApprove {
			t.Error("the policy is not in the snapshot")
		}
	})

	// "REVIEW → IN_PROGRESS: Required: Revision feedback provided ... Increments reviewCycles";
	// "Max review cycles: 3 (configurable)"; "After 3 cycles: Task moves to BLOCKED with Loop
	// Summary"; "To continue: Human must unblock and clarify requirements".
	t.Run("review cycles", func(t *testing.T) {
		c := seedComplete()
		c.RevisionFeedback, c.BlockReason = "", ""
		m, h := seedIn(t, approval.StateReview, c, false)
		_, err := m.FireWith(ctx, approval.EventInProgress, as(approval.RoleHuman))
		var ge *approval.GuardError
		if !errors.As(err, &ge) || ge.Reason() != "guard" || m.CountReviewCycles() != 0 || m.State() != approval.StateReview {
			t.Fatalf("revisions without feedback: %v, cycles %d", err, m.CountReviewCycles())
		}
		if m.MaxReviewCycles() != 3 {
			t.Fatalf("max review cycles %d, want the default 3", m.MaxReviewCycles())
		}
		// Three full cycles: the reviewer sends the task back, the agent resubmits.
		for cycle := 1; cycle <= 3; cycle++ {
			m.Context.RevisionFeedback = fmt.Sprint("revision ", cycle)
			seedFire(t, m, approval.EventInProgress, as(approval.RoleHuman), approval.StateInProgress)
			if n := m.CountReviewCycles(); n != cycle {
				t.Fatalf("after revision %d reviewCycles = %d", cycle, n)
			}
			seedFire(t, m, approval.EventReview, as(approval.RoleIntern), approval.StateReview)
		}
		// After 3 cycles the next send-back moves the task to BLOCKED, and the machine
		// itself records the Loop Summary as the block reason BLOCKED requires: nobody
		// had to write one.
		if m.Context.BlockReason != "" {
			t.Fatalf("block reason %q before the loop was detected", m.Context.BlockReason)
		}
		m.Context.RevisionFeedback = "revision 4"
		seedFire(t, m, approval.EventInProgress, as(approval.RoleHuman), approval.StateBlocked)
		const summary = "review_cycles reached its maximum of 3: REVIEW -> IN_PROGRESS went to BLOCKED instead"
		if m.Context.BlockReason != summary {
			t.Errorf("loop summary %q, want %q", m.Context.BlockReason, summary)
		}
		if last := h.did[len(h.did)-1]; last != "review comment: revision 4 -> BLOCKED" {
			t.Errorf("last artifact %q", last)
		}
		// Tripping the limit resets the counter (the spec's choice): once unblocked the task
		// has 3 new cycles.
		if n := m.CountReviewCycles(); n != 0 {
			t.Errorf("reviewCycles in BLOCKED = %d, want 0", n)
		}
		// Only a Human unblocks, and clarifies the requirements while doing so.
		for _, r := range []approval.Role{approval.RoleIntern, approval.RoleSpecialist, approval.RoleLead, approval.RoleSystem} {
			if _, err := m.FireWith(ctx, approval.EventInProgress, as(r)); !errors.Is(err, approval.ErrPermission) {
				t.Errorf("%s unblocks: %v", r, err)
			}
		}
		m.Context.WorkPlan = []string{"clarified: keep the public API", "split the function", "add the missing tests"}
		seedFire(t, m, approval.EventInProgress, as(approval.RoleHuman), approval.StateInProgress)
		if m.Context.BlockReason != summary {
			t.Errorf("the loop summary is gone after unblocking: %q", m.Context.BlockReason)
		}
	})

	// "(configurable)": the program sets the maximum at run time; a snapshot keeps it.
	t.Run("review cycles configurable", func(t *testing.T) {
		c := seedComplete()
		c.BlockReason = "an older reason"
		m, _ := seedIn(t, approval.StateReview, c, false)
		if err := m.SetMaxReviewCycles(-1); err == nil {
			t.Error("a negative maximum was accepted")
		}
		if err := m.SetMaxReviewCycles(1); err != nil {
			t.Fatal(err)
		}
		r, err := approval.RestoreTask(m.Snapshot(), &seedHooks{})
		if err != nil || r.MaxReviewCycles() != 1 {
			t.Fatalf("restored max %d, %v", r.MaxReviewCycles(), err)
		}
		seedFire(t, r, approval.EventInProgress, as(approval.RoleHuman), approval.StateInProgress)
		seedFire(t, r, approval.EventReview, as(approval.RoleIntern), approval.StateReview)
		seedFire(t, r, approval.EventInProgress, as(approval.RoleHuman), approval.StateBlocked)
		if want := "review_cycles reached its maximum of 1: REVIEW -> IN_PROGRESS went to BLOCKED instead"; r.Context.BlockReason != want {
			t.Errorf("loop summary %q, want %q", r.Context.BlockReason, want)
		}
	})

	// "Idempotency: All transitions support idempotency via X-Idempotency-Key: Same key +
	// same transition = returns original result (no duplicate); Same key + different
	// transition = error (conflict); Different key = processes normally."
	t.Run("idempotency keys", func(t *testing.T) {
		// The task is stored from its creation, in the inbox, and claimed and started.
		h := &seedHooks{}
		m := approval.NewTask(h)
		m.ID, m.Context = "TASK-1", seedComplete()
		store := fsmrt.NewMemoryStore()
		m.SetStore(store)
		seedFire(t, m, approval.EventAssigned, as(approval.RoleLead), approval.StateAssigned)
		seedFire(t, m, approval.EventInProgress, as(approval.RoleIntern), approval.StateInProgress)
		submit := approval.TaskInput{Role: approval.RoleIntern, Key: "req-1"}
		seedFire(t, m, approval.EventReview, submit, approval.StateReview)
		seq, did := m.Seq(), len(h.did)

		// The retried request: the original result, no second transition, no artifacts.
		seedFire(t, m, approval.EventReview, submit, approval.StateReview)
		if m.Seq() != seq || len(h.did) != did {
			t.Errorf("the retry fired again: seq %d -> %d, %d -> %d artifacts", seq, m.Seq(), did, len(h.did))
		}

		// Same key, different transition: a conflict, and nothing changes.
		before := seedJSON(t, m.Snapshot())
		to, err := m.FireWith(ctx, approval.EventBlocked, approval.TaskInput{Role: approval.RoleSystem, Key: "req-1"})
		var ic *approval.IdempotencyConflictError
		if !errors.As(err, &ic) || !errors.Is(err, approval.ErrIdempotencyConflict) || ic.Reason() != "idempotency_conflict" {
			t.Fatalf("same key, other transition: %v", err)
		}
		if ic.Key != "req-1" || ic.Original != approval.EventReview || ic.Event != approval.EventBlocked || to != approval.StateReview || seedJSON(t, m.Snapshot()) != before {
			t.Errorf("conflict %+v, state %s", ic, to)
		}

		// Different key: processed normally.
		seedFire(t, m, approval.EventBlocked, approval.TaskInput{Role: approval.RoleSystem, Key: "req-2"}, approval.StateBlocked)

		// A refused request does not use up its key.
		if _, err := m.FireWith(ctx, approval.EventInProgress, approval.TaskInput{Role: approval.RoleIntern, Key: "req-3"}); !errors.Is(err, approval.ErrPermission) {
			t.Fatalf("intern unblocks: %v", err)
		}
		seedFire(t, m, approval.EventInProgress, approval.TaskInput{Role: approval.RoleHuman, Key: "req-3"}, approval.StateInProgress)

		// Keys live in the event log, not in the snapshot (which holds the present): a
		// machine replayed from the store still returns the retried first request's
		// original result (REVIEW) although the task has moved on.
		if b := seedJSON(t, m.Snapshot()); strings.Contains(b, "req-1") {
			t.Errorf("the snapshot holds the keys: %s", b)
		}
		r, err := approval.ReplayTask(ctx, store, m.ID, &seedHooks{})
		if err != nil {
			t.Fatal(err)
		}
		if to, err := r.FireWith(ctx, approval.EventReview, submit); err != nil || to != approval.StateReview || r.State() != approval.StateInProgress || r.Seq() != m.Seq() {
			t.Errorf("retry after replay: %v, %v; state %s", to, err, r.State())
		}

		// A machine keeps the last keys in memory (SetKeyWindow); a key it has forgotten is
		// found in its store's log, so it is honoured however old it is.
		m.SetKeyWindow(1)
		if to, err := m.FireWith(ctx, approval.EventReview, submit); err != nil || to != approval.StateReview || m.State() != approval.StateInProgress || m.Seq() != r.Seq() {
			t.Errorf("retry of a key the window forgot: %v, %v; state %s", to, err, m.State())
		}
		if _, err := m.FireWith(ctx, approval.EventBlocked, approval.TaskInput{Role: approval.RoleSystem, Key: "req-1"}); !errors.Is(err, approval.ErrIdempotencyConflict) {
			t.Errorf("a forgotten key reused for another event: %v", err)
		}
	})
}

// The persistence seam for this machine: no checkpoints are declared, so the store holds the
// event log only, and replaying it rebuilds the machine (keys, counter, policy included).
func TestSeed001EventLogReplay(t *testing.T) {
	ctx := context.Background()
	store := fsmrt.NewMemoryStore()
	m := approval.NewTask(&seedHooks{})
	m.ID = "TASK-001"
	m.SetStore(store)
	m.Context.AssigneeIds = []string{"agent-ana"}
	seedFire(t, m, approval.EventAssigned, approval.TaskInput{Role: approval.RoleLead, Actor: "lead-li", Reason: "claimed", Key: "k1"}, approval.StateAssigned)
	m.Context.WorkPlan = []string{"a", "b", "c"}
	seedFire(t, m, approval.EventInProgress, approval.TaskInput{Role: approval.RoleIntern, Key: "k2"}, approval.StateInProgress)
	m.Context.Deliverable, m.Context.ReviewChecklist = "doc", []string{"ok"}
	seedFire(t, m, approval.EventReview, approval.TaskInput{Role: approval.RoleIntern, Key: "k3"}, approval.StateReview)
	m.Context.RevisionFeedback = "more detail"
	seedFire(t, m, approval.EventInProgress, approval.TaskInput{Role: approval.RoleHuman, Key: "k4"}, approval.StateInProgress)
	seedFire(t, m, approval.EventReview, approval.TaskInput{Role: approval.RoleIntern, Key: "k5"}, approval.StateReview)
	m.SetPolicies(approval.TaskPolicies{LeadMayApprove: true})
	m.Context.ApprovedBy, m.Context.ApprovedAt, m.Context.DeliverableAccepted, m.Context.DecisionNote = "lead-li", seedApprovedAt, true, "fine"
	seedFire(t, m, approval.EventDone, approval.TaskInput{Role: approval.RoleLead, Key: "k6"}, approval.StateDone)

	snap, ok, err := m.StoredSnapshot(ctx)
	log, lerr := m.EventLog(ctx, 0)
	if err != nil || lerr != nil || ok || len(log) != 6 {
		t.Fatalf("store: %v, snapshot %v (%+v), %d log entries", err, ok, snap, len(log))
	}
	if e := log[0]; e.Kind != "STATE_TRANSITION" || e.From != approval.StateInbox || e.To != approval.StateAssigned || e.Role != approval.RoleLead || e.Actor != "lead-li" || e.Reason != "claimed" || e.Key != "k1" {
		t.Errorf("first log entry %+v", e)
	}
	hooks := &seedHooks{}
	r, err := approval.ReplayTask(ctx, store, "TASK-001", hooks)
	if err != nil {
		t.Fatal(err)
	}
	if a, b := seedJSON(t, m.Snapshot()), seedJSON(t, r.Snapshot()); a != b {
		t.Errorf("replayed machine differs:\n live %s\nreplay %s", a, b)
	}
	if r.CountReviewCycles() != 1 || r.State() != approval.StateDone {
		t.Errorf("replayed: %s, %d cycles", r.State(), r.CountReviewCycles())
	}
}

// seedCountingHooks counts every hook call on top of seedHooks (this spec has no hook
// guards: its guards are field guards the machine evaluates itself).
type seedCountingHooks struct {
	seedHooks
	calls int
}

func (h *seedCountingHooks) PostWorkPlanComment(ctx context.Context, m *approval.Task, s approval.TaskStep) {
	h.calls++
	h.seedHooks.PostWorkPlanComment(ctx, m, s)
}

func (h *seedCountingHooks) AttachReviewSubmission(ctx context.Context, m *approval.Task, s approval.TaskStep) {
	h.calls++
	h.seedHooks.AttachReviewSubmission(ctx, m, s)
}

func (h *seedCountingHooks) CalculateCostSummary(ctx context.Context, m *approval.Task, s approval.TaskStep) {
	h.calls++
	h.seedHooks.CalculateCostSummary(ctx, m, s)
}

func (h *seedCountingHooks) PostReviewComment(ctx context.Context, m *approval.Task, s approval.TaskStep) {
	h.calls++
	h.seedHooks.PostReviewComment(ctx, m, s)
}

func (h *seedCountingHooks) PostApprovalComment(ctx context.Context, m *approval.Task, s approval.TaskStep) {
	h.calls++
	h.seedHooks.PostApprovalComment(ctx, m, s)
}

// The persistence seam is exact: a snapshot through JSON restores the machine, and the
// event log replays to it, although an action computed part of the context ("Cost summary
// (auto-calculated from runs)") and replaying runs no hook: the actions happened once.
func TestSeed001PersistenceExact(t *testing.T) {
	ctx := context.Background()
	store := fsmrt.NewMemoryStore()
	live := &seedCountingHooks{seedHooks: seedHooks{runs: []float64{0.25, 1.5}, tokens: 4200}}
	m := approval.NewTask(live)
	m.ID = "TASK-9"
	m.SetStore(store)
	at := time.Date(2026, 4, 1, 9, 0, 0, 0, time.UTC)
	fire := func(e approval.Event, r approval.Role, key string, want approval.State) {
		t.Helper()
		at = at.Add(time.Hour)
		seedFire(t, m, e, approval.TaskInput{Role: r, Key: key, Actor: r.String(), Reason: e.String(), At: at}, want)
	}
	m.Context.AssigneeIds = []string{"agent-ana"}
	fire(approval.EventAssigned, approval.RoleLead, "k1", approval.StateAssigned)
	m.Context.WorkPlan = []string{"a", "b", "c"}
	fire(approval.EventInProgress, approval.RoleIntern, "k2", approval.StateInProgress)
	m.Context.Deliverable, m.Context.ReviewChecklist = "PR #7", []string{"tests pass"}
	// Three review cycles, then the next send-back goes to BLOCKED with the loop summary the
	// machine writes, which restarts the counter; the cost summary is computed on each
	// entry into REVIEW.
	for i := range 4 {
		fire(approval.EventReview, approval.RoleIntern, "", approval.StateReview)
		m.Context.RevisionFeedback = fmt.Sprint("round ", i)
		want := approval.StateInProgress
		if i == 3 {
			want = approval.StateBlocked
		}
		fire(approval.EventInProgress, approval.RoleHuman, "", want)
	}
	if !strings.HasPrefix(m.Context.BlockReason, "review_cycles reached its maximum of 3") {
		t.Fatalf("block reason %q", m.Context.BlockReason)
	}
	fire(approval.EventInProgress, approval.RoleHuman, "k3", approval.StateInProgress)
	live.runs = append(live.runs, 2) // another run before the last submission
	fire(approval.EventReview, approval.RoleIntern, "k4", approval.StateReview)
	if m.Context.CostTotal != 3.75 || m.Context.RunCount != 3 || m.CountReviewCycles() != 0 {
		t.Fatalf("live: cost %v over %d runs, %d review cycles", m.Context.CostTotal, m.Context.RunCount, m.CountReviewCycles())
	}
	liveJSON := seedJSON(t, m.Snapshot())

	// Snapshot -> JSON -> Restore.
	var snap approval.TaskSnapshot
	if err := json.Unmarshal([]byte(liveJSON), &snap); err != nil {
		t.Fatal(err)
	}
	if !snap.UpdatedAt.Equal(at) {
		t.Errorf("snapshot updated at %v, want the last transition's %v", snap.UpdatedAt, at)
	}
	restored, err := approval.RestoreTask(snap, &seedCountingHooks{})
	if err != nil {
		t.Fatal(err)
	}
	if got := seedJSON(t, restored.Snapshot()); got != liveJSON {
		t.Errorf("restored:\n got %s\nwant %s", got, liveJSON)
	}

	// Store -> Replay, with hooks that know no runs: the cost comes from the log, not from
	// running calculate_cost_summary again.
	replay := &seedCountingHooks{}
	r, err := approval.ReplayTask(ctx, store, "TASK-9", replay)
	if err != nil {
		t.Fatal(err)
	}
	if got := seedJSON(t, r.Snapshot()); got != liveJSON {
		t.Errorf("replayed:\n got %s\nwant %s", got, liveJSON)
	}
	if replay.calls != 0 || len(replay.did) != 0 {
		t.Errorf("replaying ran %d hooks: %q", replay.calls, replay.did)
	}
	// The log is the whole story: every entry kept, the context as each transition left it.
	log, err := m.EventLog(ctx, 0)
	if err != nil || int64(len(log)) != m.Seq() {
		t.Fatalf("log: %d entries for %d transitions, %v", len(log), m.Seq(), err)
	}
	var c approval.TaskContext
	if err := json.Unmarshal(log[2].Context, &c); err != nil || c.CostTotal != 1.75 || log[2].To != approval.StateReview {
		t.Errorf("entry 3 (%s) context after it: cost %v, %v", log[2].To, c.CostTotal, err)
	}
	if tail, err := m.EventLog(ctx, m.Seq()-1); err != nil || len(tail) != 1 || tail[0].Seq != m.Seq() {
		t.Errorf("log after %d: %+v, %v", m.Seq()-1, tail, err)
	}
	// Idempotency keys came back with the log: retrying k2 returns its original result.
	if to, err := r.FireWith(ctx, approval.EventInProgress, approval.TaskInput{Role: approval.RoleIntern, Key: "k2"}); err != nil || to != approval.StateInProgress || r.State() != approval.StateReview {
		t.Errorf("retry of k2 after replay: %s, %v (state %s)", to, err, r.State())
	}
	if replay.calls != 0 {
		t.Errorf("a retried key ran %d hooks", replay.calls)
	}
}
