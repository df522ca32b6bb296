//go:build !race

package fsmrt

import (
	"context"
	"errors"
	"testing"
)

// quietOps implements every hook interface and records nothing, so that it allocates
// nothing itself.
type quietOps struct{ ok bool }

func (o quietOps) Guard(context.Context, int, tStep) bool     { return o.ok }
func (quietOps) Act(context.Context, int, tStep) error        { return nil }
func (quietOps) Require(tState, *tCtx) []FieldError           { return nil }
func (quietOps) SetField(c *tCtx, f int, text string)         { *c.field(f) = text }
func (quietOps) Policy(int) bool                              { return true }
func (quietOps) Checkpoint(context.Context, int, tStep) error { return nil }

func TestEngineAllocs(t *testing.T) {
	m := newPlain()
	cases := []struct {
		name string
		f    func()
	}{
		{"plain moves", func() {
			m.Fire(bg, eSubmit)
			m.Fire(bg, ePause)
			m.Fire(bg, eResume)
		}},
		{"refused", func() { m.Fire(bg, eApprove) }},
	}
	for _, c := range cases {
		if n := testing.AllocsPerRun(100, c.f); n != 0 {
			t.Errorf("%s: Fire allocates %v times", c.name, n)
		}
	}
	if m.State() != sDraft || m.Seq() != 3*101 {
		t.Errorf("after the runs: %s, seq %d", m.State(), m.Seq())
	}
}

// TestEngineAllocsSteps: Fire, Can and Permitted decided by the engine allocate nothing
// either for a machine that asks for neither history nor idempotency keys, time included.
func TestEngineAllocsSteps(t *testing.T) {
	d := richDef(func(d *tDef) { d.History, d.Idempotent = false, false })
	m := &tMachine{}
	Init(m, d, quietOps{ok: true})
	clk := &fakeClock{t: t0}
	SetClock(m, clk)
	m.Context = tCtx{Title: "t", Reviewer: "bo", Note: "n"}
	m.Fire(bg, eSubmit)
	refusing := &tMachine{}
	Init(refusing, d, quietOps{ok: false})
	refusing.Fire(bg, eSubmit)
	buf := make([]tEvent, 0, numEvents)
	admin := tIn{Role: rAdmin}
	cases := []struct {
		name string
		f    func()
	}{
		{"moves", func() { m.Fire(bg, ePause); m.Fire(bg, eResume) }},
		{"an internal transition", func() { m.Fire(bg, eComment) }},
		{"a guard refusal", func() { refusing.FireWith(bg, eApprove, admin) }},
		{"Can", func() { m.Can(bg, eComment) }},
		{"CanWith", func() { m.CanWith(bg, eApprove, admin) }},
		{"PermittedWith", func() { buf = m.PermittedWith(bg, admin, buf[:0]) }},
	}
	for _, c := range cases {
		if n := testing.AllocsPerRun(100, c.f); n != 0 {
			t.Errorf("%s allocates %v times", c.name, n)
		}
	}
	if m.State() != sReview || len(buf) != 5 || Count(m, cComments, sReview) != 101 {
		t.Errorf("after the runs: %s, permitted %v, %d comments", m.State(), buf, Count(m, cComments, sReview))
	}
}

// guardOps is quietOps whose only guard that holds is yes.
type guardOps struct {
	quietOps
	yes int
}

func (o guardOps) Guard(_ context.Context, g int, _ tStep) bool { return g == o.yes }

// TestEngineAllocsRefusals: Fire's refusals by role, limit, choice and history return
// errors built once by Init; a limit changed at run time, and a role past Def.NumRoles,
// build theirs.
func TestEngineAllocsRefusals(t *testing.T) {
	d := richDef(func(d *tDef) { d.History, d.Idempotent, d.NumRoles = false, false, int(rOwner)+1 })
	machine := func(ops any, s tSnapshot) *tMachine {
		m := &tMachine{}
		Init(m, d, ops)
		s.Version = 1
		if err := Restore(m, s, nil); err != nil {
			t.Fatal(err)
		}
		return m
	}
	inReview := machine(quietOps{ok: true}, tSnapshot{State: sReview, Counters: map[string]int{"escalations": 1}})
	lowered := machine(quietOps{ok: true}, tSnapshot{State: sReview, Limits: map[string]int{"escalations": 0}})
	escalated := machine(quietOps{ok: false}, tSnapshot{State: sEscalated})
	routingBack := machine(guardOps{yes: gRouteBack}, tSnapshot{State: sEscalated})
	paused := machine(quietOps{ok: true}, tSnapshot{State: sPaused})
	var err error
	cases := []struct {
		name   string
		f      func()
		allocs float64
		is     error
	}{
		{"a role no rule names", func() { _, err = inReview.FireWith(bg, eApprove, tIn{Role: rViewer}) }, 0, ErrPermission},
		{"no role", func() { _, err = inReview.Fire(bg, eApprove) }, 0, ErrPermission},
		{"a role past NumRoles", func() { _, err = inReview.FireWith(bg, eApprove, tIn{Role: rOwner + 1}) }, 1, ErrPermission},
		{"a limit", func() { _, err = inReview.Fire(bg, eEscalate) }, 0, ErrLimit},
		{"a limit changed at run time", func() { _, err = lowered.Fire(bg, eEscalate) }, 1, ErrLimit},
		{"no choice", func() { _, err = escalated.FireWith(bg, eRoute, tIn{}) }, 0, ErrNoChoice},
		{"a choice with nothing remembered", func() { _, err = routingBack.Fire(bg, eRoute) }, 0, ErrNoHistory},
		{"nothing remembered", func() { _, err = paused.Fire(bg, eResume) }, 0, ErrNoHistory},
	}
	for _, c := range cases {
		if n := testing.AllocsPerRun(100, c.f); n != c.allocs {
			t.Errorf("%s: Fire allocates %v times, want %v", c.name, n, c.allocs)
		}
		if !errors.Is(err, c.is) {
			t.Errorf("%s: %v, want %v", c.name, err, c.is)
		}
	}
	// The errors say what was refused, as they did when each built its own.
	for _, x := range []struct {
		m    *tMachine
		e    tEvent
		role tRole
		want string
	}{
		{inReview, eApprove, rViewer, `review: review on approve is not permitted to role "viewer"`},
		{inReview, eApprove, rNone, `review: review on approve is not permitted without a role`},
		{inReview, eApprove, rOwner + 1, `review: review on approve is not permitted to role "Role(5)"`},
		{inReview, eEscalate, rNone, "review: review on escalate: counter escalations reached its maximum of 1"},
		{lowered, eEscalate, rNone, "review: review on escalate: counter escalations reached its maximum of 0"},
		{escalated, eRoute, rNone, "review: escalated on route: no choice holds"},
		{routingBack, eRoute, rNone, "review: escalated on route: paused remembers no state to return to"},
		{paused, eResume, rNone, "review: paused on resume: paused remembers no state to return to"},
	} {
		if _, err := x.m.FireWith(bg, x.e, tIn{Role: x.role}); err == nil || err.Error() != x.want {
			t.Errorf("%s as %q: %v, want %q", x.e, x.role, err, x.want)
		}
	}
	var pe *PermissionError[tState, tEvent, tRole]
	if _, err := inReview.FireWith(bg, eApprove, tIn{Role: rViewer}); !errors.As(err, &pe) || pe.State != sReview || pe.Event != eApprove || pe.Role != rViewer {
		t.Errorf("approve as viewer: %#v", err)
	}
	var le *LimitError[tState, tEvent]
	if _, err := lowered.Fire(bg, eEscalate); !errors.As(err, &le) || le.Counter != "escalations" || le.Limit != 1 {
		t.Errorf("escalate at a lowered limit: %#v", err)
	}
	var nh *NoHistoryError[tState, tEvent]
	if _, err := routingBack.Fire(bg, eRoute); !errors.As(err, &nh) || nh.State != sEscalated || nh.Event != eRoute || nh.Remembering != sPaused {
		t.Errorf("route back: %#v", err)
	}
	for _, m := range []*tMachine{inReview, lowered, escalated, routingBack, paused} {
		if m.Seq() != 0 {
			t.Errorf("a refusal fired: seq %d in %s", m.Seq(), m.State())
		}
	}
}

// TestEngineAllocsLogic: a transition guarded by an expression (and, or, not) allocates
// nothing, taken or refused.
func TestEngineAllocsLogic(t *testing.T) {
	m, refusing := &tMachine{}, &tMachine{}
	Init(m, logicDef(), quietOps{ok: true})
	Init(refusing, logicDef(), quietOps{ok: false})
	for _, x := range []*tMachine{m, refusing} {
		x.Context = tCtx{Title: "t", Reviewer: "bo", Note: "n"}
		x.Fire(bg, eSubmit)
	}
	cases := []struct {
		name string
		f    func()
	}{
		{"taken", func() { m.Fire(bg, eReject); m.Fire(bg, eSubmit) }},
		{"refused", func() { refusing.Fire(bg, eReject) }},
	}
	for _, c := range cases {
		if n := testing.AllocsPerRun(100, c.f); n != 0 {
			t.Errorf("%s allocates %v times", c.name, n)
		}
	}
}
