package fsmrt

import (
	"errors"
	"reflect"
	"testing"
	"time"
)

// TestCreateArmsFromTheEntry: Create counts the first state's timeout from its entry (the
// input's At, else the clock then), not from when the machine was built.
func TestCreateArmsFromTheEntry(t *testing.T) {
	for _, at := range []bool{true, false} {
		st := newStore()
		r := attach(richDef(withTimers, draftTimesOut)) // built at t0
		r.m.SetStore(st)
		in := tIn{Actor: "ann"}
		if at {
			in.At = t0.Add(5 * time.Minute)
		} else {
			r.clk.add(5 * time.Minute)
		}
		if err := r.m.Create(bg, in); err != nil {
			t.Fatal(err)
		}
		want := []string{"level:info@10m0s:", "expiry@15m0s:submit"}
		if got := armed(t, st); !reflect.DeepEqual(got, want) {
			t.Errorf("At %v: armed %v, want %v", at, got, want)
		}
		if c, e := CreatedAt(r.m), EnteredAt(r.m); !c.Equal(t0.Add(5*time.Minute)) || !e.Equal(c) || !TimeoutSince(r.m).Equal(c) {
			t.Errorf("At %v: created %v, entered %v", at, c, e)
		}
		// The log says the same, and replays to the same machine.
		l := attach(r.d)
		if err := Replay(bg, l.m, st, "doc-1", nil); err != nil {
			t.Fatal(err)
		}
		if got, want := snapJSON(t, l.m.Snapshot()), snapJSON(t, r.m.Snapshot()); got != want {
			t.Errorf("replayed\n%s\nwant\n%s", got, want)
		}
	}
	// A Create the store refuses leaves the machine's times as they were.
	r := attach(richDef(withTimers, draftTimesOut))
	r.m.SetStore(&failStore{tStore: newStore(), commitErr: errors.New("boom")})
	if err := r.m.Create(bg, tIn{At: t0.Add(time.Hour)}); err == nil || !CreatedAt(r.m).Equal(t0) || !EnteredAt(r.m).Equal(t0) || !TimeoutSince(r.m).Equal(t0) {
		t.Errorf("a refused Create: %v, created %v", err, CreatedAt(r.m))
	}
}
