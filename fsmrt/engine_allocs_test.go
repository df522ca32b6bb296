//go:build !race

package fsmrt

import (
	"context"
	"testing"
)

// quietOps implements every hook interface and records nothing, so that it allocates
// nothing itself.
type quietOps struct{ ok bool }

func (o quietOps) Guard(context.Context, int, tStep) bool     { return o.ok }
func (quietOps) Act(context.Context, int, tStep)              {}
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
