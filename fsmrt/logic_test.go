package fsmrt

import (
	"context"
	"errors"
	"slices"
	"testing"
)

// askedOps answers the guards from values and records the order they are asked in.
type askedOps struct {
	values map[int]bool
	asked  *[]int
}

func (askedOps) Act(context.Context, int, tStep) error        { return nil }
func (askedOps) Require(tState, *tCtx) []FieldError           { return nil }
func (askedOps) SetField(c *tCtx, f int, text string)         { *c.field(f) = text }
func (askedOps) Policy(int) bool                              { return true }
func (askedOps) Checkpoint(context.Context, int, tStep) error { return nil }

func (o askedOps) Guard(_ context.Context, g int, _ tStep) bool {
	*o.asked = append(*o.asked, g)
	return o.values[g]
}

// logicDef is richDef with reject guarded by (ok and not urgent) or routeApprove.
func logicDef() *tDef {
	d := richDef()
	d.Logic = [][]int32{{LogicOr, 2, LogicAnd, 2, gOK, LogicNot, gUrgent, gRouteApprove}}
	d.LogicBase = 4
	for i, p := range d.Pairs {
		if p.State == int32(sReview) && p.Event == int32(eReject) {
			d.Pairs[i].Cands[0].Conds = []int32{4}
		}
	}
	return d
}

// TestLogicShortCircuits: an expression asks its guards left to right, and and or stop at
// the argument that decides them.
func TestLogicShortCircuits(t *testing.T) {
	cases := []struct {
		values map[int]bool
		asked  []int
		taken  bool
	}{
		{map[int]bool{gOK: true}, []int{gOK, gUrgent}, true},
		{map[int]bool{gOK: true, gUrgent: true}, []int{gOK, gUrgent, gRouteApprove}, false},
		{map[int]bool{gRouteApprove: true}, []int{gOK, gRouteApprove}, true},
		{map[int]bool{gOK: true, gUrgent: true, gRouteApprove: true}, []int{gOK, gUrgent, gRouteApprove}, true},
	}
	for i, c := range cases {
		var asked []int
		m := &tMachine{}
		Init(m, logicDef(), askedOps{values: c.values, asked: &asked})
		m.Context = tCtx{Title: "t", Reviewer: "bo", Note: "n"}
		if _, err := m.Fire(bg, eSubmit); err != nil {
			t.Fatal(err)
		}
		asked = nil
		_, err := m.Fire(bg, eReject)
		if !slices.Equal(asked, c.asked) {
			t.Errorf("case %d: asked %v, want %v", i, asked, c.asked)
		}
		var ge *GuardError[tState, tEvent]
		if c.taken && (err != nil || m.State() != sDraft) {
			t.Errorf("case %d: %v, in %s", i, err, m.State())
		}
		if !c.taken && !errors.As(err, &ge) {
			t.Errorf("case %d: %v, want a GuardError", i, err)
		}
	}
}
