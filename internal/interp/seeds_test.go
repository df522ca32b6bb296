package interp_test

// One test per seed document (/work/shared/seeds): each drives the reference interpreter
// through the behaviour its document describes, on the example spec written for it. The
// comments quote the document's rules.

import (
	"reflect"
	"strings"
	"testing"

	"github.com/fsmgen/fsmgen/internal/interp"
	"github.com/fsmgen/fsmgen/internal/ir"
)

// ---- helpers ----------------------------------------------------------------------------

func exampleSpec(t *testing.T, name string) *ir.Machine {
	t.Helper()
	return load(t, "../../examples/"+name+"/"+name+".fsm.yaml")
}

// fire fires the named event on x with e's inputs.
func fire(t *testing.T, x *interp.Machine, e env, name string) (*interp.Step, *interp.Rejection) {
	t.Helper()
	e.m = x.IR
	return x.Fire(event(t, x.IR, name), e.inputs(t))
}

// mustAccept fires name and requires it to be accepted, ending in state want.
func mustAccept(t *testing.T, x *interp.Machine, e env, name, want string) *interp.Step {
	t.Helper()
	from := x.State.Name
	st, rej := fire(t, x, e, name)
	if rej != nil {
		t.Fatalf("%s in %s: refused (%s): %s", name, from, rej.Reason, rej.Message)
	}
	if st.To.Name != want || x.State.Name != want {
		t.Fatalf("%s in %s: now in %s (step to %s), want %s", name, from, x.State.Name, st.To.Name, want)
	}
	return st
}

// mustRefuse fires name and requires a refusal for reason that changes nothing: not the
// state, not a counter, not the history memory.
func mustRefuse(t *testing.T, x *interp.Machine, e env, name string, reason interp.Reason) *interp.Rejection {
	t.Helper()
	state, memory := x.State, append([]*ir.State(nil), x.Memory...)
	counters := make([][]int, 0, len(x.Counters))
	for _, c := range x.Counters {
		counters = append(counters, append([]int(nil), c...))
	}
	st, rej := fire(t, x, e, name)
	switch {
	case rej == nil:
		t.Fatalf("%s in %s: accepted (-> %s), want refusal %s", name, state.Name, st.To.Name, reason)
	case rej.Reason != reason:
		t.Fatalf("%s in %s: refused for %s (%s), want %s", name, state.Name, rej.Reason, rej.Message, reason)
	case x.State != state || !reflect.DeepEqual(x.Counters, counters) || !reflect.DeepEqual(x.Memory, memory):
		t.Fatalf("%s in %s: the refusal changed the machine (now in %s)", name, state.Name, x.State.Name)
	}
	return rej
}

// reach starts a machine and fires events, each of which must be accepted.
func reach(t *testing.T, m *ir.Machine, e env, events ...string) *interp.Machine {
	t.Helper()
	x := interp.New(m)
	for _, name := range events {
		from := x.State.Name
		if _, rej := fire(t, x, e, name); rej != nil {
			t.Fatalf("reaching via %v: %s in %s refused (%s): %s", events, name, from, rej.Reason, rej.Message)
		}
	}
	return x
}

// countOf reads a counter; state names the slot of a per_state counter ("" for the current state).
func countOf(t *testing.T, x *interp.Machine, counter, state string) int {
	t.Helper()
	s := x.State
	if state != "" {
		s = stateOf(t, x.IR, state)
	}
	for _, c := range x.IR.Counters {
		if c.Name == counter {
			return x.Count(c, s)
		}
	}
	t.Fatalf("no counter %q", counter)
	return 0
}

func stateOf(t *testing.T, m *ir.Machine, name string) *ir.State {
	t.Helper()
	for _, s := range m.States {
		if s.Name == name {
			return s
		}
	}
	t.Fatalf("no state %q", name)
	return nil
}

func checkpointNames(st *interp.Step) []string {
	var out []string
	for _, c := range st.Checkpoint {
		out = append(out, c.Name)
	}
	return out
}

func actionNames(st *interp.Step) []string {
	var out []string
	for _, a := range st.Actions {
		out = append(out, a.Name)
	}
	return out
}

func eventNames(es []*ir.Event) []string {
	var out []string
	for _, e := range es {
		out = append(out, e.Name)
	}
	return out
}

// mustRefuseEverything checks a terminal state: every event of the machine is refused with
// invalid_transition, whatever the inputs, and nothing is allowed.
func mustRefuseEverything(t *testing.T, x *interp.Machine, e env) {
	t.Helper()
	for _, ev := range x.IR.Events {
		mustRefuse(t, x, e, ev.Name, interp.InvalidTransition)
	}
	e.m = x.IR
	if got := x.Allowed(e.inputs(t)); len(got) != 0 {
		t.Fatalf("allowed in terminal %s: %v, want none", x.State.Name, eventNames(got))
	}
}

// with copies a context and sets the given key/JSON pairs; an empty value removes the key.
func with(ctx map[string]string, kv ...string) map[string]string {
	out := map[string]string{}
	for k, v := range ctx {
		out[k] = v
	}
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] == "" {
			delete(out, kv[i])
		} else {
			out[kv[i]] = kv[i+1]
		}
	}
	return out
}

func guards(names ...string) map[string]bool {
	out := map[string]bool{}
	for _, n := range names {
		out[n] = true
	}
	return out
}

// ---- Seed 000: the cognitive loop -------------------------------------------------------

func TestSeed000CognitiveLoop(t *testing.T) {
	m := exampleSpec(t, "cognitive")
	none := env{}
	// "Plan provides currentStep (next uncompleted step) and hasMoreSteps properties": the
	// context carries the action type of each step (plan_steps) and the index of the
	// current step (plan_completed); the machine routes from them, no hook decides.
	plan := func(steps string, completed string) env {
		return env{ctx: map[string]string{"plan_steps": steps, "plan_completed": completed}}
	}
	moreSteps := plan(`["tool_call","respond"]`, "1")
	toolCalls := plan(`["tool_call","respond"]`, "2")  // all steps done, some were tool_call
	onlyRespond := plan(`["respond","generate"]`, "2") // all steps done, no tool_call step
	acting := []string{"task_created", "reason_done"}

	t.Run("static transitions", func(t *testing.T) {
		// | IDLE | TASK_CREATED | REASONING |
		// | REASONING | REASON_DONE | ACTING |
		// | REASONING | NEED_MORE_INFO | SUSPENDED |
		// | SUSPENDED | MESSAGE_RECEIVED | REASONING |
		run(t, m, none, []step{
			{event: "reason_done", want: "idle", reason: interp.InvalidTransition},
			{event: "task_created", want: "reasoning"},
			{event: "message_received", want: "reasoning", reason: interp.InvalidTransition},
			{event: "need_more_info", want: "suspended"},
			{event: "message_received", want: "reasoning"},
			{event: "reason_done", want: "acting"},
			// NEED_MORE_INFO is a transition of REASONING only.
			{event: "need_more_info", want: "acting", reason: interp.InvalidTransition},
			{event: "reason_done", want: "acting", reason: interp.InvalidTransition},
		})
	})

	t.Run("completion routing", func(t *testing.T) {
		// "ACTING | TOOL_CALL_COMPLETED / TOOL_CALL_FAILED / STEP_COMPLETED | plan has more
		// steps -> ACTING; otherwise -> see below"
		// "Completion routing (when all plan steps are done): Plan contains any tool_call
		// steps -> REASONING (continue cognitive loop); Plan contains only respond steps ->
		// COMPLETED (task is done)"
		routes := []struct {
			plan string
			env  env
			want string
		}{
			{"has more steps", moreSteps, "acting"},
			{"has more steps, some tool_call", plan(`["tool_call","tool_call","respond"]`, "1"), "acting"},
			{"has more steps, none done", plan(`["respond"]`, "0"), "acting"},
			{"no plan", none, "completed"},
			{"done, contains tool_call steps", toolCalls, "reasoning"},
			{"done, only respond steps", onlyRespond, "completed"},
		}
		for _, ev := range []string{"tool_call_completed", "tool_call_failed", "step_completed"} {
			// The choice is the compound state's: one chart transition per choice.
			var choices []string
			for _, t := range m.Chart.Transitions {
				if t.Event.Name == ev && t.Source.Path == "active.acting" {
					choices = append(choices, t.Target.Path)
				}
			}
			if want := []string{"active.acting", "active.reasoning", "completed"}; !reflect.DeepEqual(choices, want) {
				t.Errorf("%s: choices %v, want %v", ev, choices, want)
			}
			for _, r := range routes {
				x := reach(t, m, none, acting...)
				if st := mustAccept(t, x, r.env, ev, r.want); len(st.Transition.Taken) != 1 || st.Transition.Taken[0].Source.Path != "active.acting" {
					t.Errorf("%s (%s): not a choice of acting", ev, r.plan)
				}
			}
		}
		// The multi-step loop: ACTING -> ACTING while steps remain, back to REASONING after
		// a plan with tool calls, COMPLETED after a plan of respond steps.
		run(t, m, none, []step{
			{event: "task_created", want: "reasoning"},
			{event: "reason_done", want: "acting"},
			{event: "tool_call_completed", want: "acting", env: func(e *env) { e.ctx = moreSteps.ctx }},
			{event: "tool_call_failed", want: "acting", env: func(e *env) { e.ctx = moreSteps.ctx }},
			{event: "tool_call_completed", want: "reasoning", env: func(e *env) { e.ctx = toolCalls.ctx }},
			{event: "reason_done", want: "acting"},
			{event: "step_completed", want: "acting", env: func(e *env) { e.ctx = moreSteps.ctx }},
			{event: "step_completed", want: "completed", env: func(e *env) { e.ctx = onlyRespond.ctx }},
		})
	})

	t.Run("suspend only active states", func(t *testing.T) {
		// "Suspendable states: only active states (REASONING / ACTING) can be suspended."
		x := interp.New(m)
		mustRefuse(t, x, none, "task_suspended", interp.InvalidTransition) // IDLE
		mustAccept(t, x, none, "task_created", "reasoning")
		mustAccept(t, x, none, "task_suspended", "suspended")
		mustRefuse(t, x, none, "task_suspended", interp.InvalidTransition) // SUSPENDED
		x = reach(t, m, none, acting...)
		mustAccept(t, x, none, "task_suspended", "suspended")
		var active []string // the configurations within the compound state active
		for _, s := range m.States {
			if s.Config[0].Parent.Path == "active" {
				active = append(active, s.Name)
			}
		}
		if want := []string{"reasoning", "acting"}; !reflect.DeepEqual(active, want) {
			t.Errorf("active group = %v, want %v", active, want)
		}
	})

	t.Run("resume restores the pre-suspend state", func(t *testing.T) {
		// "SUSPENDED | TASK_RESUMED | restore to pre-suspend state"
		run(t, m, none, []step{
			{event: "task_resumed", want: "idle", reason: interp.InvalidTransition},
			{event: "task_created", want: "reasoning"},
			{event: "task_suspended", want: "suspended"},
			{event: "task_resumed", want: "reasoning"},
			{event: "reason_done", want: "acting"},
			{event: "task_suspended", want: "suspended"},
			{event: "task_resumed", want: "acting"},
			{event: "task_resumed", want: "acting", reason: interp.InvalidTransition},
			// The memory follows the latest suspension: back to REASONING, suspended there.
			{event: "tool_call_completed", want: "reasoning", env: func(e *env) { e.ctx = toolCalls.ctx }},
			{event: "need_more_info", want: "suspended"},
			{event: "task_resumed", want: "reasoning"},
		})
		// MESSAGE_RECEIVED goes to REASONING even when the task was suspended from ACTING.
		run(t, m, none, []step{
			{event: "task_created", want: "reasoning"},
			{event: "reason_done", want: "acting"},
			{event: "task_suspended", want: "suspended"},
			{event: "message_received", want: "reasoning"},
		})
	})

	t.Run("task_failed from every non-terminal state", func(t *testing.T) {
		// "TASK_FAILED | FAILED | any non-terminal state"; "FAILED <- terminal state
		// (reachable from any)"
		paths := map[string][]string{
			"idle":      nil,
			"reasoning": {"task_created"},
			"acting":    acting,
			"suspended": {"task_created", "need_more_info"},
		}
		for _, s := range m.States {
			path, ok := paths[s.Name]
			if s.Terminal {
				continue
			}
			if !ok {
				t.Fatalf("non-terminal state %s is not covered", s.Name)
			}
			x := reach(t, m, none, path...)
			st := mustAccept(t, x, none, "task_failed", "failed")
			if got := checkpointNames(st); !reflect.DeepEqual(got, []string{"task_failed"}) {
				t.Errorf("task_failed from %s: checkpoints %v, want [task_failed]", s.Name, got)
			}
		}
	})

	t.Run("terminal states accept nothing", func(t *testing.T) {
		// "after reaching COMPLETED or FAILED, no further transitions are accepted; throws
		// InvalidStateTransition."
		all := plan(`["tool_call","respond"]`, "0") // every routing guard holds
		x := reach(t, m, onlyRespond, append(acting, "step_completed")...)
		if x.State.Name != "completed" {
			t.Fatalf("state %s, want completed", x.State.Name)
		}
		mustRefuseEverything(t, x, all)
		x = reach(t, m, none, "task_created", "task_failed")
		if x.State.Name != "failed" {
			t.Fatalf("state %s, want failed", x.State.Name)
		}
		mustRefuseEverything(t, x, all)
	})

	t.Run("persistence strategy", func(t *testing.T) {
		// "Not every step is written to disk - only at critical checkpoints:"
		// | Timing | Persisted Content |
		rows := []struct {
			timing     string
			path       []string
			env        env
			event      string
			checkpoint string   // "" when the document has no row
			saves      []string // the persisted content
		}{
			{"TASK_CREATED", nil, none, "task_created", "task_created", []string{"input_text", "source", "input_metadata"}},
			{"REASON_DONE", []string{"task_created"}, none, "reason_done", "reason_done", []string{"plan_goal", "plan_steps", "plan_reasoning", "reasoning", "messages"}},
			{"TOOL_CALL_COMPLETED", acting, moreSteps, "tool_call_completed", "tool_call_completed", []string{"messages"}},
			{"TOOL_CALL_FAILED", acting, moreSteps, "tool_call_failed", "tool_call_failed", []string{"messages"}},
			{"NEED_MORE_INFO", []string{"task_created"}, none, "need_more_info", "need_more_info", []string{"reasoning"}},
			{"TASK_SUSPENDED", []string{"task_created"}, none, "task_suspended", "task_suspended", []string{"context"}},
			{"TASK_SUSPENDED (from ACTING)", acting, none, "task_suspended", "task_suspended", []string{"context"}},
			{"TASK_COMPLETED", acting, onlyRespond, "step_completed", "task_completed", []string{"context"}},
			{"TASK_FAILED", []string{"task_created"}, none, "task_failed", "task_failed", []string{"context", "error"}},
			{"no row: MESSAGE_RECEIVED", []string{"task_created", "need_more_info"}, none, "message_received", "", nil},
			{"no row: TASK_RESUMED", []string{"task_created", "need_more_info"}, none, "task_resumed", "", nil},
		}
		for _, r := range rows {
			x := reach(t, m, none, r.path...)
			st, rej := fire(t, x, r.env, r.event)
			if rej != nil {
				t.Fatalf("%s: refused: %s", r.timing, rej.Message)
			}
			var want []string
			if r.checkpoint != "" {
				want = []string{r.checkpoint}
			}
			if got := checkpointNames(st); !reflect.DeepEqual(got, want) {
				t.Errorf("%s: checkpoints %v, want %v", r.timing, got, want)
				continue
			}
			if r.checkpoint == "" {
				continue
			}
			saved := strings.Join(st.Checkpoint[0].Save, " ")
			for _, s := range r.saves {
				if !strings.Contains(" "+saved+" ", " "+s+" ") {
					t.Errorf("%s: checkpoint %s saves [%s], missing %s", r.timing, r.checkpoint, saved, s)
				}
			}
		}
	})
}

// ---- Seed 001: review and approval ------------------------------------------------------

// The Transition Matrix, as the document draws it (✓* = requires human approval by default).
var approvalMatrix = []string{
	"                    INBOX  ASSIGNED  IN_PROGRESS  REVIEW  NEEDS_APPROVAL  BLOCKED  DONE  CANCELED",
	"From INBOX            —      ✓           —          —          —            —       —       ✓",
	"From ASSIGNED         ✓      —           ✓          —          —            —       —       ✓",
	"From IN_PROGRESS      —      —           —          ✓          ✓            ✓       —       ✓",
	"From REVIEW           —      —           ✓          —          ✓            ✓       ✓*      ✓",
	"From NEEDS_APPROVAL   ✓      ✓           ✓          ✓          —            ✓       ✓       ✓",
	"From BLOCKED          —      ✓           ✓          —          ✓            —       —       ✓",
	"From DONE             —      —           —          —          —            —       —       —",
	"From CANCELED         —      —           —          —          —            —       —       —",
}

// Agent Permissions: | Role | Can Transition |. "*" is "Any".
var approvalPermissions = map[string][]string{
	"intern":                        {"ASSIGNED->IN_PROGRESS", "IN_PROGRESS->REVIEW"},                                                            // "... only"
	"specialist":                    {"ASSIGNED->IN_PROGRESS", "IN_PROGRESS->REVIEW", "IN_PROGRESS->BLOCKED", "INBOX->ASSIGNED"},                 // "Above + IN_PROGRESS->BLOCKED (self), claim from INBOX"
	"lead":                          {"ASSIGNED->IN_PROGRESS", "IN_PROGRESS->REVIEW", "IN_PROGRESS->BLOCKED", "INBOX->ASSIGNED"},                 // "Above + ... INBOX->ASSIGNED"
	"lead, policy lead_may_approve": {"ASSIGNED->IN_PROGRESS", "IN_PROGRESS->REVIEW", "IN_PROGRESS->BLOCKED", "INBOX->ASSIGNED", "REVIEW->DONE"}, // "+ REVIEW->DONE (if policy allows)"
	"human":                         {"*->*"},                                                                                                    // "All transitions"
	"system":                        {"*->BLOCKED", "*->NEEDS_APPROVAL"},                                                                         // "Any->BLOCKED, Any->NEEDS_APPROVAL"
	"":                              nil,                                                                                                         // nobody said who fires
}

func approvalMay(actor, from, to string) bool {
	for _, p := range approvalPermissions[actor] {
		f, g, _ := strings.Cut(p, "->")
		if (f == "*" || f == from) && (g == "*" || g == to) {
			return true
		}
	}
	return false
}

// approvalActor turns an actor of approvalPermissions into inputs.
func approvalActor(actor string, ctx map[string]string) env {
	role, policy, _ := strings.Cut(actor, ", policy ")
	e := env{role: role, ctx: ctx}
	if policy != "" {
		e.policy = map[string]bool{policy: true}
	}
	return e
}

func TestSeed001ReviewApproval(t *testing.T) {
	m := exampleSpec(t, "approval")
	// Every artifact present and valid, so that only the matrix and the roles decide.
	full := map[string]string{
		"assignee_ids":         `["agent-1"]`,
		"work_plan":            `["read","write","test"]`,
		"deliverable":          `"report.md"`,
		"review_checklist":     `["self-reviewed"]`,
		"revision_feedback":    `"tighten section 2"`,
		"approved_by":          `"u-1"`,
		"approved_at":          `"2024-01-01T12:00:00Z"`,
		"decision_note":        `"meets the brief"`,
		"deliverable_accepted": `true`,
		"approval_request":     `"budget exceeded"`,
		"block_reason":         `"loop detected"`,
	}
	human := env{role: "human", ctx: full}
	paths := map[string][]string{ // how a human gets a task into each status
		"INBOX":          nil,
		"ASSIGNED":       {"ASSIGNED"},
		"IN_PROGRESS":    {"ASSIGNED", "IN_PROGRESS"},
		"REVIEW":         {"ASSIGNED", "IN_PROGRESS", "REVIEW"},
		"NEEDS_APPROVAL": {"ASSIGNED", "IN_PROGRESS", "NEEDS_APPROVAL"},
		"BLOCKED":        {"ASSIGNED", "IN_PROGRESS", "BLOCKED"},
		"DONE":           {"ASSIGNED", "IN_PROGRESS", "REVIEW", "DONE"},
		"CANCELED":       {"CANCELED"},
	}

	t.Run("transition matrix and agent permissions", func(t *testing.T) {
		// Every ✓ is accepted for the roles the Agent Permissions table allows and refused
		// (role) for the others; every blank is refused (invalid_transition) for everyone.
		columns := strings.Fields(approvalMatrix[0])
		if len(columns) != 8 || len(approvalMatrix) != 9 {
			t.Fatalf("matrix is not 8x8")
		}
		checked := 0
		for _, row := range approvalMatrix[1:] {
			cells := strings.Fields(row)
			from, marks := cells[1], cells[2:]
			for j, to := range columns {
				allowed := strings.HasPrefix(marks[j], "✓")
				for actor := range approvalPermissions {
					x := reach(t, m, human, paths[from]...)
					st, rej := fire(t, x, approvalActor(actor, full), to)
					var want interp.Reason
					switch {
					case !allowed:
						want = interp.InvalidTransition
					case !approvalMay(actor, from, to):
						want = interp.RoleDenied
					}
					switch {
					case want == "" && rej != nil:
						t.Errorf("%s -> %s as %q: refused (%s): %s", from, to, actor, rej.Reason, rej.Message)
					case want != "" && rej == nil:
						t.Errorf("%s -> %s as %q: accepted (-> %s), want %s", from, to, actor, st.To.Name, want)
					case rej != nil && rej.Reason != want:
						t.Errorf("%s -> %s as %q: refused for %s, want %s", from, to, actor, rej.Reason, want)
					case rej == nil && x.State.Name != to:
						t.Errorf("%s -> %s as %q: now in %s", from, to, actor, x.State.Name)
					case rej != nil && x.State.Name != from:
						t.Errorf("%s -> %s as %q: refused but now in %s", from, to, actor, x.State.Name)
					}
					checked++
				}
			}
		}
		if checked != 8*8*len(approvalPermissions) {
			t.Errorf("checked %d cells x actors", checked)
		}
	})

	t.Run("lead approves DONE only if the policy allows", func(t *testing.T) {
		// "REVIEW -> DONE: Who: Human (default), Lead Agent (if policy allows)"
		x := reach(t, m, human, paths["REVIEW"]...)
		rej := mustRefuse(t, x, env{role: "lead", ctx: full}, "DONE", interp.RoleDenied)
		if !strings.Contains(rej.Message, "lead (if lead_may_approve)") {
			t.Errorf("role refusal %q does not name the policy", rej.Message)
		}
		mustAccept(t, x, env{role: "lead", ctx: full, policy: map[string]bool{"lead_may_approve": true}}, "DONE", "DONE")
		// The policy is off by default.
		for _, p := range m.Policies {
			if p.Name == "lead_may_approve" && p.Default {
				t.Errorf("lead_may_approve is on by default")
			}
		}
	})

	t.Run("required artifacts for IN_PROGRESS", func(t *testing.T) {
		// "ASSIGNED -> IN_PROGRESS: Required: workPlan with 3-6 bullets; assigneeIds still
		// non-empty". "If a transition is invalid, the API returns: errors: [{field, message}]"
		workPlan := interp.FieldError{Field: "work_plan", Message: "Work plan required for IN_PROGRESS"}
		assignees := interp.FieldError{Field: "assignee_ids", Message: "Must have at least one assignee"}
		cases := []struct {
			name string
			ctx  map[string]string
			want []interp.FieldError // nil: accepted
		}{
			{"no work plan", with(full, "work_plan", ""), []interp.FieldError{workPlan}},
			{"empty work plan", with(full, "work_plan", `[]`), []interp.FieldError{workPlan}},
			{"2 bullets", with(full, "work_plan", `["a","b"]`), []interp.FieldError{workPlan}},
			{"7 bullets", with(full, "work_plan", `["a","b","c","d","e","f","g"]`), []interp.FieldError{workPlan}},
			{"no assignees", with(full, "assignee_ids", ""), []interp.FieldError{assignees}},
			{"empty assignees", with(full, "assignee_ids", `[]`), []interp.FieldError{assignees}},
			{"neither", with(full, "work_plan", "", "assignee_ids", ""), []interp.FieldError{assignees, workPlan}},
			{"3 bullets", with(full, "work_plan", `["a","b","c"]`), nil},
			{"6 bullets", with(full, "work_plan", `["a","b","c","d","e","f"]`), nil},
		}
		for _, c := range cases {
			x := reach(t, m, human, "ASSIGNED")
			intern := env{role: "intern", ctx: c.ctx}
			if c.want == nil {
				mustAccept(t, x, intern, "IN_PROGRESS", "IN_PROGRESS")
				continue
			}
			rej := mustRefuse(t, x, intern, "IN_PROGRESS", interp.MissingArtifacts)
			if !reflect.DeepEqual(rej.Errors, c.want) {
				t.Errorf("%s: errors %+v, want %+v", c.name, rej.Errors, c.want)
			}
		}
		// allowedTransitions: what a human could do instead, with the same inputs.
		x := reach(t, m, human, "ASSIGNED")
		noPlan := env{m: m, role: "human", ctx: with(full, "work_plan", "")}
		if got, want := eventNames(x.Allowed(noPlan.inputs(t))), []string{"CANCELED", "INBOX"}; !reflect.DeepEqual(got, want) {
			t.Errorf("allowed = %v, want %v", got, want)
		}
		// "INBOX -> ASSIGNED: Required: assigneeIds must be non-empty"
		x = interp.New(m)
		rej := mustRefuse(t, x, env{role: "lead", ctx: with(full, "assignee_ids", "")}, "ASSIGNED", interp.MissingArtifacts)
		if !reflect.DeepEqual(rej.Errors, []interp.FieldError{assignees}) {
			t.Errorf("INBOX -> ASSIGNED errors %+v", rej.Errors)
		}
	})

	t.Run("required artifacts for DONE", func(t *testing.T) {
		// "REVIEW -> DONE: Required: Approval record; Deliverable confirmed acceptable;
		// Decision note"
		x := reach(t, m, human, paths["REVIEW"]...)
		bare := with(full, "approved_by", "", "approved_at", "", "decision_note", "", "deliverable_accepted", "false")
		rej := mustRefuse(t, x, env{role: "human", ctx: bare}, "DONE", interp.MissingArtifacts)
		want := []interp.FieldError{
			{Field: "approved_by", Message: "Approval record required for DONE (approved by)"},
			{Field: "approved_at", Message: "Approval record required for DONE (approved at)"},
			{Field: "deliverable_accepted", Message: "Deliverable must be confirmed acceptable"},
			{Field: "decision_note", Message: "Decision note required for DONE"},
		}
		if !reflect.DeepEqual(rej.Errors, want) {
			t.Errorf("errors %+v, want %+v", rej.Errors, want)
		}
		mustAccept(t, x, human, "DONE", "DONE")
	})

	t.Run("review cycles", func(t *testing.T) {
		// "Max review cycles: 3. After 3 cycles: Task moves to BLOCKED with Loop Summary.
		// To continue: Human must unblock and clarify requirements."
		// "REVIEW -> IN_PROGRESS: Required: Revision feedback provided. Note: Increments
		// reviewCycles counter"
		x := reach(t, m, human, paths["REVIEW"]...)
		intern := env{role: "intern", ctx: full}
		mustRefuse(t, x, env{role: "human", ctx: with(full, "revision_feedback", "")}, "IN_PROGRESS", interp.GuardRejected)
		for cycle := 1; cycle <= 3; cycle++ {
			if n := countOf(t, x, "review_cycles", ""); n != cycle-1 {
				t.Fatalf("before cycle %d: review_cycles = %d", cycle, n)
			}
			mustAccept(t, x, human, "IN_PROGRESS", "IN_PROGRESS")
			if n := countOf(t, x, "review_cycles", ""); n != cycle {
				t.Fatalf("after cycle %d: review_cycles = %d", cycle, n)
			}
			mustAccept(t, x, intern, "REVIEW", "REVIEW")
		}
		// After 3 cycles the next goes to BLOCKED, and the machine writes the Loop Summary
		// into block_reason, which BLOCKED requires: the caller need not have set it.
		st := mustAccept(t, x, env{role: "human", ctx: with(full, "block_reason", "")}, "IN_PROGRESS", "BLOCKED")
		if st.Tripped == nil || st.Tripped.Name != "review_cycles" {
			t.Errorf("4th cycle: tripped %v, want review_cycles", st.Tripped)
		}
		if want := "review_cycles reached its maximum of 3: REVIEW -> IN_PROGRESS went to BLOCKED instead"; st.Summary != want || st.Tripped.Summary.Name != "block_reason" {
			t.Errorf("loop summary %q, want %q", st.Summary, want)
		}
		if n := countOf(t, x, "review_cycles", ""); n != 0 {
			t.Errorf("after the 4th cycle: review_cycles = %d, want 0 (tripping resets)", n)
		}
		// Only a human unblocks.
		mustRefuse(t, x, intern, "IN_PROGRESS", interp.RoleDenied)
		mustRefuse(t, x, env{role: "system", ctx: full}, "IN_PROGRESS", interp.RoleDenied)
		mustAccept(t, x, human, "IN_PROGRESS", "IN_PROGRESS")
	})

	t.Run("DONE and CANCELED are terminal", func(t *testing.T) {
		// "DONE ... Exit To: —"; "CANCELED ... Exit To: —"
		for _, s := range []string{"DONE", "CANCELED"} {
			x := reach(t, m, human, paths[s]...)
			if x.State.Name != s || !x.State.Terminal {
				t.Fatalf("%s: in %s, terminal %v", s, x.State.Name, x.State.Terminal)
			}
			mustRefuseEverything(t, x, human)
		}
	})
}

// ---- Seed 002: pipeline with retries ----------------------------------------------------

func TestSeed002PipelineRetries(t *testing.T) {
	m := exampleSpec(t, "pipeline")
	// Retries remain and the budget is available unless a case says otherwise.
	base := env{guards: guards("retries_remaining", "budget_available"), ctx: map[string]string{"confidence": "0.9"}}
	only := func(names ...string) env { return env{guards: guards(names...), ctx: base.ctx} }
	also := func(names ...string) env { return only(append(names, "retries_remaining", "budget_available")...) }
	executing := []string{"start", "classified", "routed"}
	after := func(events ...string) []string { return append(append([]string(nil), executing...), events...) }
	counts := func(t *testing.T, x *interp.Machine, attempts, failures int) {
		t.Helper()
		if a, f := countOf(t, x, "attempts", ""), countOf(t, x, "consecutive_failures", ""); a != attempts || f != failures {
			t.Fatalf("in %s: attempts %d, consecutive_failures %d; want %d, %d", x.State.Name, a, f, attempts, failures)
		}
	}

	t.Run("classification confidence", func(t *testing.T) {
		// "classifying -> routing: Condition: confidence >= 0.6"
		// "classifying -> awaiting_clarification: Condition: confidence < 0.6"
		cases := []struct {
			confidence string // JSON; "" unset
			want       string
			action     string
		}{
			{"1", "routing", "record_intent"},
			{"0.6", "routing", "record_intent"},
			{"0.59", "awaiting_clarification", "present_clarification_questions"},
			{"0", "awaiting_clarification", "present_clarification_questions"},
			{"", "awaiting_clarification", "present_clarification_questions"},
		}
		for _, c := range cases {
			x := reach(t, m, base, "start")
			st := mustAccept(t, x, env{ctx: with(base.ctx, "confidence", c.confidence)}, "classified", c.want)
			if got := actionNames(st); !reflect.DeepEqual(got, []string{c.action}) {
				t.Errorf("confidence %q: actions %v, want [%s]", c.confidence, got, c.action)
			}
		}
		// "awaiting_clarification -> classifying: User provides more info"
		low := func(e *env) { e.ctx = map[string]string{"confidence": "0.3"} }
		run(t, m, base, []step{
			{event: "start", want: "classifying"},
			{event: "classified", want: "awaiting_clarification", env: low},
			{event: "routed", want: "awaiting_clarification", reason: interp.InvalidTransition},
			{event: "clarified", want: "classifying"},
			{event: "classified", want: "routing"},
			{event: "routed", want: "executing"},
		})
	})

	t.Run("retry loop and escalation", func(t *testing.T) {
		// "executing -> retrying: Phase failed, retries remaining, budget available"
		// "retrying -> executing: Same model tier retry (attempts 1-2)"
		// "retrying -> escalating: Attempts >= escalation threshold"
		// "escalating -> executing: Re-run phase with upgraded model"
		x := reach(t, m, base, executing...)
		counts(t, x, 0, 0)
		mustAccept(t, x, base, "phase_failed", "retrying")
		counts(t, x, 1, 1)
		mustAccept(t, x, base, "retry", "executing")
		mustAccept(t, x, base, "phase_failed", "retrying")
		counts(t, x, 2, 2)
		st := mustAccept(t, x, base, "retry", "escalating")
		if got := actionNames(st); !reflect.DeepEqual(got, []string{"select_higher_tier"}) {
			t.Errorf("escalation actions %v", got)
		}
		mustAccept(t, x, base, "escalated", "executing")
		// "executing -> verifying ... advance to next phase or verify": the next phase
		// starts with a clean slate.
		mustAccept(t, x, also("has_more_phases"), "phase_succeeded", "executing")
		counts(t, x, 0, 0)
		mustAccept(t, x, base, "phase_failed", "retrying")
		mustAccept(t, x, base, "retry", "executing") // same tier again
	})

	t.Run("circuit breaker", func(t *testing.T) {
		// "retrying -> stopped: Circuit breaker tripped (3 consecutive failures). Action:
		// Report full diagnostics, save checkpoint"
		x := reach(t, m, base, executing...)
		mustAccept(t, x, base, "phase_failed", "retrying")
		mustAccept(t, x, base, "retry", "executing")
		mustAccept(t, x, base, "phase_failed", "retrying")
		mustAccept(t, x, base, "retry", "escalating")
		mustAccept(t, x, base, "escalated", "executing")
		mustAccept(t, x, base, "phase_failed", "retrying")
		counts(t, x, 3, 3)
		st := mustAccept(t, x, base, "retry", "stopped")
		if got := actionNames(st); !reflect.DeepEqual(got, []string{"report_full_diagnostics"}) {
			t.Errorf("breaker actions %v", got)
		}
		// Verification failures are consecutive failures too ("verifying -> retrying:
		// Verification failed").
		x = reach(t, m, base, executing...)
		mustAccept(t, x, base, "phase_failed", "retrying")
		mustAccept(t, x, base, "retry", "executing")
		mustAccept(t, x, base, "phase_succeeded", "verifying") // the last phase
		counts(t, x, 1, 1)
		mustAccept(t, x, base, "verification_failed", "retrying")
		counts(t, x, 2, 2)
		mustAccept(t, x, base, "retry", "escalating")
		mustAccept(t, x, base, "escalated", "executing")
		mustAccept(t, x, base, "phase_succeeded", "verifying")
		mustAccept(t, x, base, "verification_failed", "retrying")
		counts(t, x, 3, 3)
		mustAccept(t, x, base, "retry", "stopped")
	})

	t.Run("stopping and failing", func(t *testing.T) {
		// "executing -> stopped: Budget exceeded or user cancelled"
		x := reach(t, m, base, executing...)
		mustAccept(t, x, base, "budget_exceeded", "stopped")
		x = reach(t, m, base, executing...)
		mustAccept(t, x, only("retries_remaining"), "phase_failed", "stopped") // no budget
		// failed: "Max retries exceeded"
		x = reach(t, m, base, executing...)
		mustAccept(t, x, only("budget_available"), "phase_failed", "failed")
		// "escalating -> stopped: Already at highest tier (Opus) and max retries reached"
		toEscalating := after("phase_failed", "retry", "phase_failed", "retry")
		x = reach(t, m, base, toEscalating...)
		mustAccept(t, x, only("at_highest_tier", "budget_available"), "escalated", "stopped")
		x = reach(t, m, base, toEscalating...)
		mustAccept(t, x, also("at_highest_tier"), "escalated", "executing") // retries remain
	})

	t.Run("cancel from every non-terminal state", func(t *testing.T) {
		// "When user runs /cancel: 1. Set state to stopped; 2. Record which phase was in
		// progress; 3. Save checkpoint (do NOT delete it); 4. Report"
		paths := map[string][]string{
			"created":                nil,
			"classifying":            {"start"},
			"awaiting_clarification": nil, // below: low confidence
			"routing":                {"start", "classified"},
			"executing":              executing,
			"retrying":               after("phase_failed"),
			"escalating":             after("phase_failed", "retry", "phase_failed", "retry"),
			"verifying":              after("phase_succeeded"),
		}
		for _, s := range m.States {
			if s.Terminal {
				continue
			}
			path, ok := paths[s.Name]
			if !ok {
				t.Fatalf("non-terminal state %s is not covered", s.Name)
			}
			var x *interp.Machine
			if s.Name == "awaiting_clarification" {
				x = reach(t, m, base, "start")
				mustAccept(t, x, env{}, "classified", s.Name)
			} else {
				x = reach(t, m, base, path...)
			}
			if x.State.Name != s.Name {
				t.Fatalf("path %v reached %s, want %s", path, x.State.Name, s.Name)
			}
			st := mustAccept(t, x, base, "cancel", "stopped")
			if got := actionNames(st); !reflect.DeepEqual(got, []string{"record_phase_in_progress", "report_cancel_summary"}) {
				t.Errorf("cancel in %s: actions %v", s.Name, got)
			}
			if got := checkpointNames(st); !reflect.DeepEqual(got, []string{"progress"}) {
				t.Errorf("cancel in %s: checkpoints %v, want [progress]", s.Name, got)
			}
		}
	})

	t.Run("checkpoint at every transition", func(t *testing.T) {
		// "Update the checkpoint file at EVERY state transition." Fields: state,
		// updated_at, current_phase, attempt, cost_total_usd.
		x := interp.New(m)
		low := env{ctx: map[string]string{"confidence": "0.2"}}
		script := []struct {
			env   env
			event string
			want  string
		}{
			{base, "start", "classifying"},
			{low, "classified", "awaiting_clarification"},
			{base, "clarified", "classifying"},
			{base, "classified", "routing"},
			{base, "routed", "executing"},
			{also("has_more_phases"), "phase_succeeded", "executing"}, // internal: the next phase
			{base, "phase_succeeded", "verifying"},
			{base, "verification_failed", "retrying"},
			{base, "retry", "executing"},
			{base, "phase_failed", "retrying"},
			{base, "retry", "escalating"},
			{base, "escalated", "executing"},
			{base, "phase_succeeded", "verifying"},
			{base, "verification_passed", "completed"},
		}
		for _, s := range script {
			st := mustAccept(t, x, s.env, s.event, s.want)
			if got := checkpointNames(st); !reflect.DeepEqual(got, []string{"progress"}) {
				t.Errorf("%s -> %s: checkpoints %v, want [progress]", st.From.Name, st.To.Name, got)
			}
		}
		cp := m.Checkpoints[0]
		if want := []string{"state", "updated_at", "current_phase", "attempts", "cost_total_usd"}; !cp.EveryTransition || !reflect.DeepEqual(cp.Save, want) {
			t.Errorf("checkpoint %s: every %v, save %v; want every, %v", cp.Name, cp.EveryTransition, cp.Save, want)
		}
	})

	t.Run("completed, failed and stopped are terminal", func(t *testing.T) {
		everything := env{guards: guards("retries_remaining", "budget_available", "has_more_phases", "at_highest_tier"), ctx: base.ctx}
		for _, c := range []struct {
			path []string
			env  env
		}{
			{after("phase_succeeded", "verification_passed"), base},
			{after("phase_failed"), only("budget_available")},
			{[]string{"cancel"}, base},
		} {
			x := reach(t, m, c.env, c.path...)
			if !x.State.Terminal {
				t.Fatalf("%v: %s is not terminal", c.path, x.State.Name)
			}
			mustRefuseEverything(t, x, everything)
		}
	})
}

// ---- Seed 003: review pipeline ----------------------------------------------------------

func TestSeed003ReviewPipeline(t *testing.T) {
	m := exampleSpec(t, "review")
	none := env{}
	// var ValidTransitions = map[string][]string{...} (state_validation.go)
	valid := map[string][]string{
		"not_started":    {"in_progress", "blocked"},
		"in_progress":    {"pending_review", "blocked"},
		"blocked":        {"in_progress", "not_started"},
		"pending_review": {"under_review"},
		"under_review":   {"final_review"},
		"final_review":   {"completed", "in_progress"},
		"completed":      {},
	}
	paths := map[string][]string{
		"not_started":    nil,
		"in_progress":    {"in_progress"},
		"blocked":        {"blocked"},
		"pending_review": {"in_progress", "pending_review"},
		"under_review":   {"in_progress", "pending_review", "under_review", "review_submitted"}, // a standard task, reviewed once
		"final_review":   {"in_progress", "pending_review", "under_review", "review_submitted", "final_review"},
		"completed":      {"in_progress", "pending_review", "under_review", "review_submitted", "final_review", "completed"},
	}

	t.Run("valid and invalid transitions", func(t *testing.T) {
		// "The following transitions are rejected by the state validator: Skipping phases
		// (e.g., pending_review -> completed); Going backwards (e.g., completed ->
		// under_review); Any transition not in the valid transitions table"
		// "When an invalid transition is attempted: the transition is rejected; the task
		// status remains unchanged"
		if len(m.States) != 7 || len(valid) != 7 {
			t.Fatalf("%d states, %d rows", len(m.States), len(valid))
		}
		for _, from := range m.States {
			for _, to := range m.States {
				x := reach(t, m, none, paths[from.Name]...)
				if x.State != from {
					t.Fatalf("path to %s reached %s", from.Name, x.State.Name)
				}
				ok := false
				for _, v := range valid[from.Name] {
					ok = ok || v == to.Name
				}
				if ok {
					mustAccept(t, x, none, to.Name, to.Name)
				} else {
					mustRefuse(t, x, none, to.Name, interp.InvalidTransition)
				}
			}
		}
		// The document's own examples.
		mustRefuse(t, reach(t, m, none, paths["pending_review"]...), none, "completed", interp.InvalidTransition)
		mustRefuse(t, reach(t, m, none, paths["completed"]...), none, "under_review", interp.InvalidTransition)
		// Reviews are counted only while under review.
		for _, s := range []string{"in_progress", "pending_review", "final_review", "completed"} {
			mustRefuse(t, reach(t, m, none, paths[s]...), none, "review_submitted", interp.InvalidTransition)
		}
	})

	t.Run("criticality decides the reviews needed", func(t *testing.T) {
		// | standard | Exactly 1 Review Agent |
		// | complex | >=2 Review Agents in parallel |
		// | security-sensitive | >=2 Review Agents with security focus |
		cases := []struct {
			criticality string // "" unset: the default, standard
			reviews     []string
			failing     string // the guards that refuse final_review; "" accepted
		}{
			{"", nil, "reviews_complete"},
			{"", []string{"review_submitted"}, ""},
			{"standard", nil, "reviews_complete"},
			{"standard", []string{"review_submitted"}, ""},
			{"standard", []string{"security_review_submitted"}, ""},
			{"complex", nil, "reviews_complete"},
			{"complex", []string{"review_submitted"}, "reviews_complete"},
			{"complex", []string{"review_submitted", "review_submitted"}, ""},
			{"complex", []string{"security_review_submitted", "review_submitted"}, ""},
			{"security-sensitive", []string{"review_submitted"}, "reviews_complete, security_reviews_complete"},
			{"security-sensitive", []string{"review_submitted", "review_submitted"}, "security_reviews_complete"},
			{"security-sensitive", []string{"security_review_submitted", "review_submitted"}, "security_reviews_complete"},
			{"security-sensitive", []string{"security_review_submitted", "security_review_submitted"}, ""},
			{"security-sensitive", []string{"review_submitted", "security_review_submitted", "review_submitted", "security_review_submitted"}, ""},
		}
		for _, c := range cases {
			e := env{}
			if c.criticality != "" {
				e.ctx = map[string]string{"criticality": `"` + c.criticality + `"`}
			}
			x := reach(t, m, e, "in_progress", "pending_review", "under_review")
			for _, r := range c.reviews {
				mustAccept(t, x, e, r, "under_review")
			}
			if c.failing == "" {
				mustAccept(t, x, e, "final_review", "final_review")
				continue
			}
			rej := mustRefuse(t, x, e, "final_review", interp.GuardRejected)
			if !strings.Contains(rej.Message, "guard "+c.failing+" does not hold") {
				t.Errorf("%s with %v: %q, want guard %s to fail", c.criticality, c.reviews, rej.Message, c.failing)
			}
		}
	})

	t.Run("a new review round after fixes", func(t *testing.T) {
		// "final_review -> in_progress: Fixes needed based on review"; the task is then
		// reviewed again.
		e := env{ctx: map[string]string{"criticality": `"complex"`}}
		x := reach(t, m, e, "in_progress", "pending_review", "under_review", "review_submitted", "review_submitted", "final_review", "in_progress", "pending_review", "under_review")
		if n := countOf(t, x, "reviews", ""); n != 0 {
			t.Fatalf("reviews in the new round = %d, want 0", n)
		}
		mustRefuse(t, x, e, "final_review", interp.GuardRejected)
		mustAccept(t, x, e, "review_submitted", "under_review")
		mustAccept(t, x, e, "review_submitted", "under_review")
		mustAccept(t, x, e, "final_review", "final_review")
		mustAccept(t, x, e, "completed", "completed")
		mustRefuseEverything(t, x, env{guards: map[string]bool{}})
	})
}

// ---- Seed 004: build workflow -----------------------------------------------------------

func TestSeed004BuildWorkflow(t *testing.T) {
	m := exampleSpec(t, "build")
	// Forward Transitions: | From State | To State | Condition | Actor |
	forward := []struct{ from, event, to, actor string }{
		{"pending", "picked_up", "assigned", "build_orchestrator"},
		{"assigned", "validation_started", "planning", "solution_validator"},
		{"planning", "approach_approved", "validated", "solution_validator"},
		{"validated", "implementation_started", "in_progress", "fullstack_developer"},
		{"in_progress", "code_complete", "testing", "fullstack_developer"},
		{"testing", "self_checks_done", "quality_review", "fullstack_developer"},
		{"quality_review", "gates_passed", "approved", "quality_monitor"},
		{"approved", "ready_to_commit", "committing", "git_manager"},
		{"committing", "commit_succeeded", "completed", "git_manager"},
	}
	as := func(role string) env { return env{role: role} }
	// forwardTo moves x along the forward transitions until it is in state s.
	forwardTo := func(t *testing.T, x *interp.Machine, s string) {
		t.Helper()
		for x.State.Name != s {
			moved := false
			for _, f := range forward {
				if f.from == x.State.Name {
					mustAccept(t, x, as(f.actor), f.event, f.to)
					moved = true
					break
				}
			}
			if !moved {
				t.Fatalf("no forward transition from %s towards %s", x.State.Name, s)
			}
		}
	}
	fails := func(t *testing.T, x *interp.Machine, s string) int {
		t.Helper()
		return countOf(t, x, "failures", s)
	}

	t.Run("forward path and its actors", func(t *testing.T) {
		x := interp.New(m)
		for _, f := range forward {
			if x.State.Name != f.from {
				t.Fatalf("in %s, want %s", x.State.Name, f.from)
			}
			for _, r := range append(m.Roles, nil) {
				e := env{m: m}
				if r != nil {
					e.role = r.Name
				}
				want := e.role == f.actor || e.role == "human"
				if got := x.Can(event(t, m, f.event), e.inputs(t)); got != want {
					t.Errorf("%s -> %s as %q: can %v, want %v", f.from, f.to, e.role, got, want)
				}
			}
			mustRefuse(t, x, as(""), f.event, interp.RoleDenied)
			mustAccept(t, x, as(f.actor), f.event, f.to)
		}
		// "Cannot skip states (except @agent-cto override)": nothing else leaves each state.
		x = interp.New(m)
		for _, f := range forward {
			for _, g := range forward {
				if g.from != f.from && g.event != f.event {
					mustRefuse(t, x, as("human"), g.event, interp.InvalidTransition)
				}
			}
			mustAccept(t, x, as("human"), f.event, f.to)
		}
	})

	t.Run("three failures send a state to cto_intervention and retry returns to it", func(t *testing.T) {
		// "Failures counted per state, not globally"; "any_state -> cto_intervention: 3
		// failures"; "cto_intervention -> previous_state: CTO guidance (@agent-cto)"
		// Failure Transitions: | From State | To State | Condition | Actor |
		failures := []struct{ state, event, to, actor string }{
			{"planning", "approach_rejected", "planning", "solution_validator"},            // Approach rejected (<3)
			{"quality_review", "quality_failed", "in_progress", "quality_monitor"},         // Quality failed (<3)
			{"committing", "precommit_failed", "in_progress", "git_manager"},               // Pre-commit failed (<3)
			{"in_progress", "implementation_failed", "in_progress", "fullstack_developer"}, // the diagram's in_progress --> cto_intervention
		}
		for _, f := range failures {
			x := interp.New(m)
			forwardTo(t, x, f.state)
			for n := 1; n <= 2; n++ {
				mustAccept(t, x, as(f.actor), f.event, f.to)
				if got := fails(t, x, f.state); got != n {
					t.Fatalf("%s: after failure %d, failures = %d", f.state, n, got)
				}
				forwardTo(t, x, f.state)
			}
			st := mustAccept(t, x, as(f.actor), f.event, "cto_intervention")
			if st.Tripped == nil || st.Tripped.Name != "failures" {
				t.Errorf("%s: 3rd failure tripped %v, want failures", f.state, st.Tripped)
			}
			if got := fails(t, x, f.state); got != 0 {
				t.Errorf("%s: failures after the trip = %d, want 0", f.state, got)
			}
			mustRefuse(t, x, as(f.actor), "retry", interp.RoleDenied) // @agent-cto only
			mustAccept(t, x, as("cto"), "retry", f.state)
			if got := countOf(t, x, "cto_attempts", ""); got != 1 {
				t.Errorf("%s: cto_attempts = %d, want 1", f.state, got)
			}
		}
	})

	t.Run("failures reset on a successful transition", func(t *testing.T) {
		// "Reset on successful state transition"; "Failure count <= 3 per state"
		x := interp.New(m)
		forwardTo(t, x, "planning")
		validator := as("solution_validator")
		mustAccept(t, x, validator, "approach_rejected", "planning")
		mustAccept(t, x, validator, "approach_rejected", "planning")
		if got := fails(t, x, "planning"); got != 2 {
			t.Fatalf("planning failures = %d, want 2", got)
		}
		mustAccept(t, x, validator, "approach_approved", "validated")
		if got := fails(t, x, "planning"); got != 0 {
			t.Fatalf("planning failures after approval = %d, want 0", got)
		}
		// quality_review: two failures, pass, and later two more failures do not trip.
		forwardTo(t, x, "quality_review")
		monitor := as("quality_monitor")
		for i := 0; i < 2; i++ {
			mustAccept(t, x, monitor, "quality_failed", "in_progress")
			forwardTo(t, x, "quality_review")
		}
		if got := fails(t, x, "quality_review"); got != 2 {
			t.Fatalf("quality_review failures = %d, want 2", got)
		}
		mustAccept(t, x, monitor, "gates_passed", "approved")
		if got := fails(t, x, "quality_review"); got != 0 {
			t.Fatalf("quality_review failures after gates passed = %d, want 0", got)
		}
		forwardTo(t, x, "committing")
		mustAccept(t, x, as("git_manager"), "precommit_failed", "in_progress")
		forwardTo(t, x, "quality_review")
		for i := 0; i < 2; i++ {
			mustAccept(t, x, monitor, "quality_failed", "in_progress")
			forwardTo(t, x, "quality_review")
		}
		if got, c := fails(t, x, "quality_review"), fails(t, x, "committing"); got != 2 || c != 1 {
			t.Fatalf("failures: quality_review %d, committing %d; want 2, 1 (counted per state)", got, c)
		}
	})

	t.Run("two CTO attempts escalate to a human", func(t *testing.T) {
		// "human_escalation: Entry: From cto_intervention after 2 @agent-cto attempts";
		// "@agent-cto attempts <= 2 total"
		x := interp.New(m)
		forwardTo(t, x, "planning")
		for _, want := range []string{"planning", "planning", "cto_intervention"} {
			mustAccept(t, x, as("solution_validator"), "approach_rejected", want)
		}
		mustAccept(t, x, as("cto"), "retry", "planning")
		for _, want := range []string{"in_progress", "in_progress", "cto_intervention"} {
			forwardTo(t, x, "quality_review")
			mustAccept(t, x, as("quality_monitor"), "quality_failed", want)
		}
		if got := countOf(t, x, "cto_attempts", ""); got != 1 {
			t.Fatalf("cto_attempts = %d, want 1", got)
		}
		st := mustAccept(t, x, as("cto"), "retry", "human_escalation")
		if st.Tripped == nil || st.Tripped.Name != "cto_attempts" {
			t.Errorf("2nd CTO attempt tripped %v, want cto_attempts", st.Tripped)
		}
	})

	t.Run("completed and human_escalation are terminal", func(t *testing.T) {
		// "Terminal states cannot transition"
		x := interp.New(m)
		forwardTo(t, x, "completed")
		mustRefuseEverything(t, x, as("human"))
		x = interp.New(m)
		forwardTo(t, x, "planning")
		for _, back := range []string{"planning", "human_escalation"} {
			for _, want := range []string{"planning", "planning", "cto_intervention"} {
				mustAccept(t, x, as("solution_validator"), "approach_rejected", want)
			}
			mustAccept(t, x, as("cto"), "retry", back)
		}
		mustRefuseEverything(t, x, as("human"))
	})
}
