package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/fsmgen/fsmgen/fsmrt"
)

// testWaker: a watch on a machine's work is woken by a commit that arms deadlines and by
// one that writes effects nobody holds; NextWork gives the earliest time a claim may find
// work (a deadline due, a free effect's commit, a lease's end and a microsecond) and
// nothing once every deadline is handled and every effect delivered.
func testWaker(t *testing.T, s *suite) {
	wk := optional[fsmrt.Waker](t, s, "fsmrt.Waker")
	ctx := context.Background()
	next := func(what string, want time.Time, ok bool) {
		t.Helper()
		got, found, err := wk.NextWork(ctx, s.machine)
		switch {
		case err != nil:
			t.Fatalf("%s: NextWork: %v", what, err)
		case found != ok:
			t.Errorf("%s: NextWork found work %v (%v), want %v", what, found, got, ok)
		case ok && !got.Truncate(time.Microsecond).Equal(want): // stores keep microseconds
			t.Errorf("%s: NextWork %v, want %v", what, got, want)
		}
	}
	watch := wk.WatchWork(s.machine)
	defer watch.Close()
	// woken waits for the watch, a commit after drain emptied it.
	drain := func() {
		for {
			select {
			case <-watch.C():
			default:
				return
			}
		}
	}
	woken := func(what string) {
		t.Helper()
		select {
		case <-watch.C():
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: the watch was not woken in 10s", what)
		}
	}
	next("no instance", time.Time{}, false)

	id := s.id("m")
	drain()
	c := s.commit(id, 1, "", false)
	c.Rearm, c.Deadlines = true, []fsmrt.Deadline{dl("warn", at(80), "", 1), dl("expiry", at(100), "expire", 0)}
	if err := s.Commit(ctx, c); err != nil {
		t.Fatal(err)
	}
	woken("deadlines armed")
	next("deadlines armed", at(80).Truncate(time.Microsecond), true)

	// A deadline leased gives its lease's end (after it falls due) and a microsecond, when
	// that comes before the other deadlines.
	claim := func(now time.Time, lease time.Duration, want int) {
		t.Helper()
		got, err := s.ClaimDeadlines(ctx, s.machine, "s1", now, lease, 10)
		if err != nil || len(got) != want {
			t.Fatalf("claimed %v, %v; want %d deadlines", got, err, want)
		}
	}
	claim(at(80), 10*time.Second, 1)
	next("the warning leased until 90", at(90).Truncate(time.Microsecond).Add(time.Microsecond), true)
	claim(at(91), 30*time.Second, 1)
	next("the warning leased until 121, the expiry free at 100", at(100).Truncate(time.Microsecond), true)
	if got := s.claimDue(t, "s1", at(130)); len(got) != 2 {
		t.Fatalf("claimed %v, want both deadlines", got)
	}
	leased := at(190).Truncate(time.Microsecond).Add(time.Microsecond)
	next("deadlines leased until 190", leased, true)

	// Effects nobody holds are free from their commit.
	drain()
	s.commitEffects(t, id, 2, 2, "", time.Time{})
	woken("effects nobody holds")
	next("free effects", at(2).Truncate(time.Microsecond), true)
	pending := s.claim(t, "d1", at(3), 10)
	if len(pending) != 2 {
		t.Fatalf("claimed %v, want 2 effects", ids(pending))
	}
	next("effects leased until 63", at(63).Truncate(time.Microsecond).Add(time.Microsecond), true)

	// Handled and delivered, nothing is left.
	var done []fsmrt.EffectID
	for _, e := range pending {
		done = append(done, e.EffectID)
	}
	if err := s.CompleteEffects(ctx, done, at(4)); err != nil {
		t.Fatal(err)
	}
	next("effects delivered", leased, true)
	c = s.commit(id, 3, "", false)
	c.Rearm = true // leaving the state disarms its deadlines
	if err := s.Commit(ctx, c); err != nil {
		t.Fatal(err)
	}
	next("every deadline disarmed and every effect delivered", time.Time{}, false)
}
