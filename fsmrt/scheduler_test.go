package fsmrt

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"testing"
	"time"
)

// TestFireDueWithTheCallersClock: the transition an expiry fires schedules its effects
// leased on the scheduler's clock, to its owner, for its lease, whatever the wall clock
// says; DeliverEffects on the same clock claims a failed delivery once that lease has run
// out, and not before. With the system clock's lease (what the generated FireDue<T>Timers
// gave), a clock behind the wall clock never claimed it again, and one ahead claimed it
// while it was being delivered.
func TestFireDueWithTheCallersClock(t *testing.T) {
	for name, base := range map[string]time.Time{
		"behind": t0,                                                         // 2024
		"ahead":  time.Now().Add(365 * 24 * time.Hour).Truncate(time.Second), // a year on
	} {
		t.Run(name, func(t *testing.T) {
			st := newStore()
			d := richDef(withTimers, withEffects, draftTimesOut)
			newMachine := func(at time.Time) (*tMachine, *effOps) {
				m := &tMachine{}
				ops := &effOps{tOps: &tOps{m: m, guards: map[int]bool{}, policies: map[int]bool{}, requires: map[tState][]int{}}}
				Init(m, d, ops)
				m.ID = "doc-1"
				SetClock(m, &fakeClock{t: at})
				m.SetStore(st)
				return m, ops
			}
			m, _ := newMachine(base)
			if err := m.Create(bg, tIn{Actor: "ann"}); err != nil {
				t.Fatal(err)
			}
			// The scheduler's process: its receiver fails.
			var ops *effOps
			load := func(ctx context.Context, id string) (*tMachine, error) {
				l, o := newMachine(time.Time{})
				o.fail = errors.New("receiver down")
				ops = o
				if err := Replay(ctx, l, st, id, nil); err != nil {
					return nil, err
				}
				return l, nil
			}
			clock := &fakeClock{t: base.Add(time.Hour)}
			n, err := FireDueWith(bg, st, tStoreName, TimerOptions{Clock: clock, Owner: "scheduler-1", Lease: time.Minute, EffectLease: 5 * time.Minute, Limit: 10}, load)
			if n != 2 || err != nil { // the level and the expiry
				t.Fatalf("FireDueWith = %d, %v", n, err)
			}
			if !reflect.DeepEqual(ops.calls, []string{"0 notify #1", "5 announce #1"}) {
				t.Fatalf("deliveries at the commit: %v", ops.calls)
			}
			owed, err := st.PendingEffects(bg, PendingQuery{Machine: tStoreName})
			if err != nil || len(owed) != 2 {
				t.Fatalf("pending effects %+v, %v", owed, err)
			}
			for _, e := range owed {
				if e.Owner != "scheduler-1" || !e.LeaseUntil.Equal(clock.t.Add(5*time.Minute)) || e.Attempts != 1 {
					t.Errorf("effect %s leased to %q until %v (attempt %d), want scheduler-1 until %v", e.Name, e.Owner, e.LeaseUntil, e.Attempts, clock.t.Add(5*time.Minute))
				}
			}
			// Another process, on the same clock: nothing to claim while the lease runs,
			// both effects once it has run out.
			w, wops := newMachine(time.Time{})
			w.SetOwner("worker-2", time.Minute)
			SetClock(w, &fakeClock{t: clock.t.Add(4 * time.Minute)})
			if n, err := w.DeliverEffects(bg, 10); n != 0 || err != nil || len(wops.calls) != 0 {
				t.Fatalf("DeliverEffects while leased = %d, %v, %v", n, err, wops.calls)
			}
			SetClock(w, &fakeClock{t: clock.t.Add(6 * time.Minute)})
			if n, err := w.DeliverEffects(bg, 10); n != 2 || err != nil || !reflect.DeepEqual(wops.calls, []string{"0 notify #2", "5 announce #2"}) {
				t.Fatalf("DeliverEffects after the lease = %d, %v, %v", n, err, wops.calls)
			}
			// The entries are stamped at the deadlines, the machine's own clock.
			log := logOf(t, st)
			var got []string
			for _, e := range log {
				got = append(got, fmt.Sprintf("%s@%v", e.Kind, e.Timestamp.Sub(base)))
			}
			if want := []string{"MACHINE_CREATED@0s", "TIMEOUT_INFO@5m0s", "STATE_TRANSITION@10m0s"}; !reflect.DeepEqual(got, want) {
				t.Errorf("log %v, want %v", got, want)
			}
		})
	}
}
