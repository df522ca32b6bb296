package interp_test

import (
	"encoding/json"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/fsmgen/fsmgen/internal/interp"
	"github.com/fsmgen/fsmgen/internal/ir"
	"github.com/fsmgen/fsmgen/internal/lower"
)

func load(t *testing.T, path string) *ir.Machine {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	m, ds := lower.Load(path, data)
	if len(ds) > 0 {
		t.Fatalf("spec has findings:\n%v", ds)
	}
	return m
}

// env builds inputs by name, so tests read like the spec.
type env struct {
	m      *ir.Machine
	role   string
	guards map[string]bool
	policy map[string]bool
	ctx    map[string]string // JSON values
}

func (e env) inputs(t *testing.T) interp.Inputs {
	t.Helper()
	var in interp.Inputs
	for _, r := range e.m.Roles {
		if r.Name == e.role {
			in.Role = r
		}
	}
	if e.role != "" && in.Role == nil {
		t.Fatalf("no role %q", e.role)
	}
	in.Guard = func(g *ir.Guard) bool { return e.guards[g.Name] }
	in.Policies = make([]bool, len(e.m.Policies))
	for _, p := range e.m.Policies {
		in.Policies[p.Index] = e.policy[p.Name]
	}
	in.Context = make([]any, len(e.m.Fields))
	for _, f := range e.m.Fields {
		if raw, ok := e.ctx[f.Name]; ok {
			dec := json.NewDecoder(strings.NewReader(raw))
			dec.UseNumber()
			var v any
			if err := dec.Decode(&v); err != nil {
				t.Fatalf("context %s: %v", f.Name, err)
			}
			in.Context[f.Index] = v
		}
	}
	return in
}

func event(t *testing.T, m *ir.Machine, name string) *ir.Event {
	t.Helper()
	for _, e := range m.Events {
		if e.Name == name {
			return e
		}
	}
	t.Fatalf("no event %q", name)
	return nil
}

// step is one firing and what must come of it: the state after it, or the refusal reason.
type step struct {
	event  string
	want   string        // state after the event; for a refusal, the unchanged state
	reason interp.Reason // "" when accepted
	env    func(*env)
}

func run(t *testing.T, m *ir.Machine, base env, steps []step) *interp.Machine {
	t.Helper()
	x := interp.New(m)
	for i, s := range steps {
		e := base
		e.m = m
		if s.env != nil {
			s.env(&e)
		}
		before := x.State.Name
		st, rej := x.Fire(event(t, m, s.event), e.inputs(t))
		switch {
		case s.reason == "" && rej != nil:
			t.Fatalf("step %d %s in %s: refused (%s): %s", i, s.event, before, rej.Reason, rej.Message)
		case s.reason != "" && rej == nil:
			t.Fatalf("step %d %s in %s: accepted (-> %s), want refusal %s", i, s.event, before, st.To.Name, s.reason)
		case rej != nil && rej.Reason != s.reason:
			t.Fatalf("step %d %s in %s: refused for %s (%s), want %s", i, s.event, before, rej.Reason, rej.Message, s.reason)
		}
		if x.State.Name != s.want {
			t.Fatalf("step %d %s: state %s, want %s", i, s.event, x.State.Name, s.want)
		}
	}
	return x
}

func kitchen(t *testing.T) *ir.Machine { return load(t, "testdata/kitchen.fsm.yaml") }

var openCtx = map[string]string{"menu": `["soup","stew"]`, "manager": `"ana"`}

func TestRolesAndRequiredFields(t *testing.T) {
	m := kitchen(t)
	x := run(t, m, env{ctx: openCtx}, []step{
		{event: "open_up", want: "closed", reason: interp.RoleDenied},
		{event: "open_up", want: "closed", reason: interp.MissingArtifacts, env: func(e *env) { e.role = "cook"; e.ctx = nil }},
		{event: "open_up", want: "open", env: func(e *env) { e.role = "cook" }},
	})
	_ = x
	// The artifacts refusal lists every field, with the custom message where there is one.
	y := interp.New(m)
	e := env{m: m, role: "chef", ctx: map[string]string{"menu": `["a","b","c","d"]`}}
	_, rej := y.Fire(event(t, m, "open_up"), e.inputs(t))
	want := []interp.FieldError{
		{Field: "menu", Message: "A menu has 2 or 3 dishes"},
		{Field: "manager", Message: "manager is required"},
	}
	if rej == nil || !reflect.DeepEqual(rej.Errors, want) {
		t.Fatalf("errors = %+v, want %+v", rej, want)
	}
}

func TestPolicyAndAllRole(t *testing.T) {
	m := kitchen(t)
	opened := []step{{event: "open_up", want: "open", env: func(e *env) { e.role = "cook" }}}
	run(t, m, env{ctx: openCtx}, append(opened,
		step{event: "close", want: "open", reason: interp.RoleDenied, env: func(e *env) { e.role = "chef" }},
		step{event: "close", want: "done", env: func(e *env) { e.role = "chef"; e.policy = map[string]bool{"chef_may_close": true} }},
		step{event: "close", want: "done", reason: interp.InvalidTransition, env: func(e *env) { e.role = "owner" }},
	))
	run(t, m, env{ctx: openCtx}, append(opened,
		step{event: "close", want: "done", env: func(e *env) { e.role = "owner" }},
	))
}

func TestCounterGuardByEnum(t *testing.T) {
	m := kitchen(t)
	opened := step{event: "open_up", want: "open", env: func(e *env) { e.role = "cook" }}
	rush := func(e *env) { e.ctx = map[string]string{"menu": `["a","b"]`, "manager": `"x"`, "level": `"rush"`} }
	run(t, m, env{ctx: openCtx}, []step{
		opened,
		{event: "cook", want: "open", reason: interp.GuardRejected}, // calm (first value) needs 1 order
		{event: "order", want: "open"},
		{event: "cook", want: "open", reason: interp.GuardRejected, env: rush}, // rush needs 3
		{event: "order", want: "open"},
		{event: "order", want: "open"},
		{event: "cook", want: "cooking", env: rush},
	})
}

func TestChoiceAndGuardOrder(t *testing.T) {
	m := kitchen(t)
	toCooking := []step{
		{event: "open_up", want: "open", env: func(e *env) { e.role = "cook" }},
		{event: "order", want: "open"},
		{event: "cook", want: "cooking"},
	}
	both := func(e *env) { e.guards = map[string]bool{"hungry": true, "fancy": true} }
	hungry := func(e *env) { e.guards = map[string]bool{"hungry": true} }
	run(t, m, env{ctx: openCtx}, append(toCooking, step{event: "serve", want: "serving", env: both}))
	run(t, m, env{ctx: openCtx}, append(toCooking, step{event: "serve", want: "open"}))
	run(t, m, env{ctx: openCtx}, append(toCooking, step{event: "serve", want: "cooking", env: hungry}))
	// tick: first transition needs heat >= 200, the second (internal) needs level != rush.
	hot := func(e *env) { e.ctx = map[string]string{"heat": "250"} }
	rushCold := func(e *env) { e.ctx = map[string]string{"level": `"rush"`, "heat": "20"} }
	run(t, m, env{ctx: openCtx}, append(toCooking, step{event: "tick", want: "serving", env: hot}))
	run(t, m, env{ctx: openCtx}, append(toCooking, step{event: "tick", want: "cooking"}))
	run(t, m, env{ctx: openCtx}, append(toCooking, step{event: "tick", want: "cooking", reason: interp.GuardRejected, env: rushCold}))
}

func TestPerStateLimitRedirectsAndHistoryReturns(t *testing.T) {
	m := kitchen(t)
	steps := []step{
		{event: "open_up", want: "open", env: func(e *env) { e.role = "cook" }},
		{event: "order", want: "open"},
		{event: "cook", want: "cooking"},
		{event: "burn", want: "cooking"},
		{event: "burn", want: "cooking"},
		{event: "burn", want: "inspection"}, // third burn trips the limit
		{event: "inspected", want: "cooking"},
		{event: "burn", want: "cooking"}, // tripping reset the count
		{event: "burn", want: "cooking"},
		{event: "tick", want: "cooking"}, // internal: does not reset
		{event: "burn", want: "inspection"},
	}
	x := run(t, m, env{ctx: openCtx}, steps)
	burns := m.Counters[0]
	if n := x.Count(burns, m.States[2]); n != 0 {
		t.Fatalf("burns in cooking after trip = %d, want 0", n)
	}
	// reset_on_success: leaving cooking without a burn resets cooking's count.
	x = run(t, m, env{ctx: openCtx}, append(steps[:5:5],
		step{event: "serve", want: "open"},
	))
	if n := x.Count(burns, m.States[2]); n != 0 {
		t.Fatalf("burns in cooking after leaving = %d, want 0", n)
	}
}

func TestSuspendResumeHistory(t *testing.T) {
	m := kitchen(t)
	run(t, m, env{ctx: openCtx}, []step{
		{event: "resume", want: "closed", reason: interp.InvalidTransition},
		{event: "open_up", want: "open", env: func(e *env) { e.role = "cook" }},
		{event: "pause", want: "paused"},
		{event: "resume", want: "open"},
		{event: "order", want: "open"},
		{event: "cook", want: "cooking"},
		{event: "pause", want: "paused"},
		{event: "resume", want: "cooking"},
	})
}

func TestLimitWithoutThenRefuses(t *testing.T) {
	m := kitchen(t)
	x := run(t, m, env{ctx: openCtx}, []step{
		{event: "open_up", want: "open", env: func(e *env) { e.role = "cook" }},
		{event: "order", want: "open"},
		{event: "cook", want: "cooking"},
		{event: "tick", want: "serving", env: func(e *env) { e.ctx = map[string]string{"heat": "200"} }},
		{event: "retry", want: "serving"},
		{event: "retry", want: "serving", reason: interp.LimitReached},
		{event: "next_day", want: "closed"},
	})
	if got := x.Count(m.Counters[2], x.State); got != 1 {
		t.Fatalf("retries = %d, want 1 (the refused increment changed nothing)", got)
	}
}

func TestTerminalRejectsEverything(t *testing.T) {
	m := kitchen(t)
	x := run(t, m, env{ctx: openCtx, role: "owner"}, []step{
		{event: "open_up", want: "open"},
		{event: "close", want: "done"},
	})
	for _, e := range m.Events {
		in := env{m: m, role: "owner", ctx: openCtx}.inputs(t)
		if _, rej := x.Fire(e, in); rej == nil || rej.Reason != interp.InvalidTransition {
			t.Errorf("%s in done: %v, want invalid_transition", e.Name, rej)
		}
	}
	if got := x.Allowed(env{m: m}.inputs(t)); len(got) != 0 {
		t.Errorf("allowed in done = %v, want none", got)
	}
}

func TestActionOrderAndCheckpoints(t *testing.T) {
	m := kitchen(t)
	x := interp.New(m)
	in := env{m: m, role: "cook", ctx: openCtx}.inputs(t)
	st, rej := x.Fire(event(t, m, "open_up"), in)
	if rej != nil {
		t.Fatal(rej)
	}
	var acts, cps []string
	for _, a := range st.Actions {
		acts = append(acts, a.Name)
	}
	for _, c := range st.Checkpoint {
		cps = append(cps, c.Name)
	}
	if want := []string{"light_stove", "wash_up"}; !reflect.DeepEqual(acts, want) {
		t.Errorf("actions = %v, want exit then entry %v", acts, want)
	}
	if want := []string{"opened", "every"}; !reflect.DeepEqual(cps, want) {
		t.Errorf("checkpoints = %v, want %v", cps, want)
	}
	// Internal transitions run only their own actions.
	st, rej = x.Fire(event(t, m, "order"), in)
	if rej != nil {
		t.Fatal(rej)
	}
	if len(st.Actions) != 1 || st.Actions[0].Name != "plate" {
		t.Errorf("internal transition actions = %v, want [plate]", st.Actions)
	}
}

// TestSetLimit: only a configurable limit changes, within its range, and the summary a
// redirect writes names the limit in force.
func TestSetLimit(t *testing.T) {
	m := load(t, "../../examples/approval/approval.fsm.yaml")
	var cycles *ir.Counter
	for _, c := range m.Counters {
		if c.Name == "review_cycles" {
			cycles = c
		}
	}
	x := interp.New(m)
	if x.Bound(cycles) != 3 || x.Limits[cycles.Index] != 4 {
		t.Fatalf("bound %d, limit %d", x.Bound(cycles), x.Limits[cycles.Index])
	}
	if err := x.SetLimit(cycles, -1); err == nil {
		t.Error("a negative max was accepted")
	}
	if err := x.SetLimit(cycles, 0); err != nil || x.Bound(cycles) != 0 {
		t.Errorf("max 0: %v, bound %d", err, x.Bound(cycles))
	}
	other := &ir.Counter{Name: "other", Limit: 3}
	if err := x.SetLimit(other, 5); err == nil {
		t.Error("a limit that is not configurable changed")
	}
	other.Configurable = true
	if err := x.SetLimit(other, 0); err == nil {
		t.Error("a limit of 0 was accepted")
	}
	if got := cycles.SummaryText(0, "REVIEW", "IN_PROGRESS"); got != "review_cycles reached its maximum of 0: REVIEW -> IN_PROGRESS went to BLOCKED instead" {
		t.Errorf("summary %q", got)
	}
}
