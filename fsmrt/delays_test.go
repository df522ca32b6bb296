package fsmrt

import (
	"reflect"
	"testing"
	"time"
)

// withDelays gives review two delays beside its timeout (10 minutes, expiring into
// paused): a comment after 3 minutes (an internal transition) and a rejection after 10.
func withDelays(d *tDef) {
	d.States[sReview].Delays = []DelayDef{{After: 3 * time.Minute, Event: int32(eComment)}, {After: 10 * time.Minute, Event: int32(eReject)}}
}

func TestExpireNextDelays(t *testing.T) {
	r := attach(richDef(withTimers, withDelays))
	r.walk(t, eSubmit) // review at t0
	expire := func(at time.Duration, fires bool, want tState, stamped time.Duration) {
		t.Helper()
		ok, s, err := ExpireNext(bg, r.m, t0.Add(at))
		if err != nil || ok != fires || s != want {
			t.Fatalf("ExpireNext at %v: %t, %s, %v; want %t, %s", at, ok, s, err, fires, want)
		}
		if fires && !r.m.updatedAt.Equal(t0.Add(stamped)) {
			t.Errorf("ExpireNext at %v: stamped %v, want its deadline %v", at, r.m.updatedAt.Sub(t0), stamped)
		}
	}
	expire(2*time.Minute, false, sReview, 0)
	// Twenty minutes on, one timer a call, the first that ran out first, each at its deadline:
	// the comment (internal, the stay goes on), then at 10 minutes the rejection, before the
	// timeout's expiry at the same instant, which leaving review cancels.
	expire(20*time.Minute, true, sReview, 3*time.Minute)
	expire(20*time.Minute, true, sDraft, 10*time.Minute)
	expire(20*time.Minute, false, sDraft, 0)
	// Entering review again starts its delays again, from then.
	r.clk.add(20 * time.Minute)
	r.walk(t, eSubmit)
	expire(22*time.Minute, false, sReview, 0)
	expire(24*time.Minute, true, sReview, 23*time.Minute)
	expire(24*time.Minute, false, sReview, 0) // fired this stay
	// An internal transition keeps the stay: the comment does not fire again, the
	// rejection still falls due at 30 minutes.
	r.clk.add(5 * time.Minute)
	r.walk(t, eComment)
	expire(29*time.Minute, false, sReview, 0)
	expire(31*time.Minute, true, sDraft, 30*time.Minute)
}

func TestFireDueDelays(t *testing.T) {
	st := newStore()
	r, load := timerRig(st, withDelays)
	r.walk(t, eSubmit) // review at t0
	want := []string{"after:comment@3m0s:comment", "level:warning@8m0s:", "after:reject@10m0s:reject", "expiry@10m0s:pause", "level:escalate@15m0s:"}
	if got := armed(t, st); !reflect.DeepEqual(got, want) {
		t.Errorf("armed on entering review: %v, want %v", got, want)
	}
	fire := func(at time.Duration) int {
		t.Helper()
		n, err := FireDue(bg, st, tStoreName, "s1", t0.Add(at), time.Minute, 10, load)
		if err != nil {
			t.Fatalf("at %v: %v", at, err)
		}
		return n
	}
	// The comment, at its deadline; the stay goes on, with its other deadlines.
	if n := fire(4 * time.Minute); n != 1 {
		t.Fatalf("at 4 minutes: %d handled", n)
	}
	log := logOf(t, st)
	if e := log[len(log)-1]; e.Event != eComment || e.To != sReview || e.Actor != "scheduler" || !e.Timestamp.Equal(t0.Add(3*time.Minute)) {
		t.Errorf("comment entry %+v", e)
	}
	if got := armed(t, st); !reflect.DeepEqual(got, want[1:]) {
		t.Errorf("armed after the comment: %v, want %v", got, want[1:])
	}
	if n := fire(5 * time.Minute); n != 0 {
		t.Errorf("the comment fired again: %d handled", n)
	}
	// At 12 minutes: the warning, then the rejection (before the expiry at the same
	// instant), which leaves review: the expiry is stale.
	if n := fire(12 * time.Minute); n != 2 {
		t.Fatalf("at 12 minutes: %d handled", n)
	}
	m, err := load(bg, "doc-1")
	if err != nil || m.State() != sDraft {
		t.Fatalf("after the rejection: %v, %v", m, err)
	}
	log = logOf(t, st)
	if e := log[len(log)-1]; e.Event != eReject || !e.Timestamp.Equal(t0.Add(10*time.Minute)) {
		t.Errorf("rejection entry %+v", e)
	}
	if got := armed(t, st); len(got) != 0 {
		t.Errorf("armed in draft: %v", got)
	}
	// Entering review again arms its delays again, from then.
	m.SetStore(st)
	if _, err := m.FireWith(bg, eSubmit, tIn{Role: rAdmin, At: t0.Add(20 * time.Minute)}); err != nil {
		t.Fatal(err)
	}
	if got := armed(t, st); len(got) != 5 || got[0] != "after:comment@23m0s:comment" || got[2] != "after:reject@30m0s:reject" {
		t.Errorf("armed on entering review again: %v", got)
	}
}
