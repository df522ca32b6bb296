package fsmrt

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"testing"
	"time"
)

type tCall = EffectCall[tState, tEvent, tCtx]

// effOps is tOps with effects: it records each call and fails while fail is set.
type effOps struct {
	*tOps
	calls []string
	got   []tCall
	fail  error
}

func (o *effOps) Effect(_ context.Context, a int, c *tCall) error {
	o.calls = append(o.calls, fmt.Sprintf("%d %s #%d", a, c.Name, c.Attempt))
	o.got = append(o.got, *c)
	return o.fail
}

// withEffects makes actions 0 (submit's) and 5 (entering review) effects.
func withEffects(d *tDef) {
	d.Effects = make([]string, 9)
	d.Effects[0], d.Effects[5] = "notify", "announce"
}

// effRig returns a machine whose submit has two effects, and its hooks.
func effRig() (*rig, *effOps) {
	d := richDef(withEffects)
	m := &tMachine{}
	ops := &effOps{tOps: &tOps{m: m, guards: map[int]bool{}, policies: map[int]bool{}, requires: map[tState][]int{}}}
	Init(m, d, ops)
	m.ID = "doc-1"
	clk := &fakeClock{t: t0}
	SetClock(m, clk)
	return &rig{m: m, ops: ops.tOps, clk: clk, d: d}, ops
}

func TestEffectsWithoutStore(t *testing.T) {
	r, e := effRig()
	r.m.Context.Title = "t"
	r.fire(t, eSubmit, tIn{Actor: "ann", Reason: "ready"})
	// The other actions ran during the transition; the effects after it, in order.
	if !reflect.DeepEqual(r.ops.acts, []string{"a4 draft->review"}) || !reflect.DeepEqual(e.calls, []string{"0 notify #1", "5 announce #1"}) {
		t.Fatalf("actions %v, effects %v", r.ops.acts, e.calls)
	}
	want := tCall{Name: "notify", Key: "review.Review/doc-1/1/0-notify", ID: "doc-1", Seq: 1, Event: eSubmit, From: sDraft, To: sReview,
		At: t0, Actor: "ann", Reason: "ready", Context: tCtx{Title: "t", N: 1}, Attempt: 1}
	if !reflect.DeepEqual(e.got[0], want) || e.got[1].Key != "review.Review/doc-1/1/1-announce" {
		t.Errorf("call\n got %+v\nwant %+v", e.got[0], want)
	}
	// A failing effect: the transition has happened, the error says which effect failed,
	// and every effect was called.
	r2, e2 := effRig()
	boom := errors.New("boom")
	e2.fail = boom
	got, err := r2.m.FireWith(bg, eSubmit, tIn{Key: "k1"})
	var ee *EffectError
	if got != sReview || r2.m.State() != sReview || !errors.As(err, &ee) || ee.Effect != "notify" || ee.Seq != 1 || !errors.Is(err, boom) || !errors.Is(err, ErrEffect) || len(e2.calls) != 2 {
		t.Fatalf("submit = %s, %v; effects %v", got, err, e2.calls)
	}
	if want := "fsm: effect notify of seq 1: boom"; err.Error() != want {
		t.Errorf("error %q, want %q", err, want)
	}
	if e2.got[0].Key != "review.Review/doc-1/key:k1/0-notify" {
		t.Errorf("key %q", e2.got[0].Key)
	}
	// A machine without a store has no outbox.
	if _, err := r2.m.DeliverEffects(bg, 10); err != ErrNoStore {
		t.Errorf("DeliverEffects without a store: %v", err)
	}
}

func TestEffectsWithStore(t *testing.T) {
	st := newStore()
	r, e := effRig()
	r.m.SetStore(st)
	r.m.SetOwner("w1", time.Minute)
	r.fire(t, eSubmit, tIn{Key: "k1"})
	// Delivered once the commit succeeded, and recorded delivered.
	if !reflect.DeepEqual(e.calls, []string{"0 notify #1", "5 announce #1"}) {
		t.Fatalf("effects %v", e.calls)
	}
	if got, _ := st.ClaimEffects(bg, tStoreName, "w2", t0.Add(time.Hour), time.Minute, 10); len(got) != 0 {
		t.Errorf("delivered effects still in the outbox: %+v", got)
	}
	// A failing effect does not fail the committed transition: it stays in the outbox,
	// leased to the machine, and is delivered again once the lease runs out.
	boom := errors.New("boom")
	e.fail = boom
	r.walk(t, eReject, eSubmit)
	if r.m.Seq() != 3 || len(e.calls) != 4 {
		t.Fatalf("seq %d, effects %v", r.m.Seq(), e.calls)
	}
	if got, _ := st.ClaimEffects(bg, tStoreName, "w2", r.clk.t.Add(30*time.Second), time.Minute, 10); len(got) != 0 {
		t.Errorf("claimed effects leased to their committer: %+v", got)
	}
	e.fail = nil
	w, we := effRig()
	w.m.SetStore(st)
	w.m.SetOwner("w2", time.Minute)
	w.clk.t = r.clk.t.Add(2 * time.Minute)
	if n, err := w.m.DeliverEffects(bg, 10); n != 2 || err != nil {
		t.Fatalf("DeliverEffects = %d, %v", n, err)
	}
	if !reflect.DeepEqual(we.calls, []string{"0 notify #2", "5 announce #2"}) || we.got[0].Seq != 3 || we.got[0].Context != r.m.Context {
		t.Errorf("redelivered %v, %+v", we.calls, we.got)
	}
	if n, err := w.m.DeliverEffects(bg, 10); n != 0 || err != nil {
		t.Errorf("DeliverEffects again = %d, %v", n, err)
	}
	// A failed commit delivers nothing.
	fs := &failStore{tStore: newStore(), commitErr: boom}
	f, fe := effRig()
	f.m.SetStore(fs)
	if _, err := f.m.Fire(bg, eSubmit); !errors.Is(err, boom) || len(fe.calls) != 0 {
		t.Errorf("submit with a failing store: %v, effects %v", err, fe.calls)
	}
}

func TestDeliverEffectsFails(t *testing.T) {
	st := newStore()
	r, e := effRig()
	r.m.SetStore(st)
	r.m.SetOwner("dead", time.Minute)
	e.fail = errors.New("down")
	r.fire(t, eSubmit, tIn{})
	w, we := effRig()
	w.m.SetStore(st)
	w.clk.t = t0.Add(time.Hour)
	boom := errors.New("boom")
	we.fail = boom
	n, err := w.m.DeliverEffects(bg, 1)
	var ee *EffectError
	if n != 0 || !errors.As(err, &ee) || ee.Effect != "notify" || !errors.Is(err, boom) {
		t.Errorf("DeliverEffects = %d, %v", n, err)
	}
	// An effect the machine does not know, or whose data does not decode.
	c := &Commit{Machine: tStoreName, ID: "doc-2", State: "review", Entry: Entry{Seq: 1, Kind: KindTransition},
		Effects: []Effect{{Name: "unknown", Key: "k", Data: []byte(`{}`)}, {Name: "notify", Key: "k2", Data: []byte(`{`)}}}
	if err := st.Commit(bg, c); err != nil {
		t.Fatal(err)
	}
	we.fail = nil
	w.clk.t = t0.Add(3 * time.Hour)
	n, err = w.m.DeliverEffects(bg, 10)
	if n != 2 || !errors.As(err, &ee) || ee.Effect != "unknown" {
		t.Errorf("DeliverEffects = %d, %v", n, err)
	}
	// A store that fails to claim.
	f, _ := effRig()
	f.m.SetStore(&failStore{tStore: newStore(), claimErr: boom})
	if _, err := f.m.DeliverEffects(bg, 10); err != boom {
		t.Errorf("DeliverEffects from a failing store: %v", err)
	}
	// A machine without effects delivers nothing.
	plain := newRig()
	plain.m.SetStore(st)
	if n, err := plain.m.DeliverEffects(bg, 10); n != 0 || err != nil {
		t.Errorf("DeliverEffects without effects = %d, %v", n, err)
	}
}
