package fsmrt

import (
	"context"
	"testing"
	"time"
)

// pacedClock is the system clock read as running ten times faster.
type pacedClock struct{ start time.Time }

func (c pacedClock) Now() time.Time {
	return c.start.Add(10 * time.Since(c.start))
}

func (c pacedClock) RealTime(d time.Duration) time.Duration { return d / 10 }

// armCommit is the commit of a new instance id arming a deadline at at.
func armCommit(id string, at time.Time) *Commit {
	return &Commit{Machine: "m", ID: id, Spec: "s", State: "a", Rearm: true,
		Entry:     Entry{Seq: 1, Kind: KindTransition, Event: "e", From: "a", To: "a", At: at.Add(-time.Hour)},
		Deadlines: []Deadline{{Name: "expiry", At: at, State: "a", Event: "e"}}}
}

// TestWaiterPolls: on a store that wakes nobody, Wait sleeps the polling interval.
func TestWaiterPolls(t *testing.T) {
	w := NewWaiter(struct{ Store }{NewMemoryStore()}, "m", WaitOptions{Poll: 20 * time.Millisecond}) // not a Waker
	defer w.Close()
	if w.Woken() {
		t.Fatal("a store that is not a Waker wakes nobody")
	}
	start := time.Now()
	for range 3 {
		if err := w.Wait(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	if el := time.Since(start); el < 60*time.Millisecond || w.Polls != 3 {
		t.Fatalf("3 Waits took %v, %d polls", el, w.Polls)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := w.Wait(ctx); err != context.Canceled {
		t.Fatalf("Wait with a cancelled context: %v", err)
	}
}

// TestWaiterWoken: a commit wakes a Wait at once, and one made while the loop served
// (between Waits) ends the next Wait; the nearest deadline bounds the sleep, on the
// clock's pace; a deadline past that nobody handled (someone else's) ends one Wait, not
// every one.
func TestWaiterWoken(t *testing.T) {
	ctx := context.Background()
	s := NewMemoryStore()
	clock := pacedClock{start: time.Now()}
	w := NewWaiter(s, "m", WaitOptions{Poll: time.Hour, Clock: clock})
	defer w.Close()
	if !w.Woken() {
		t.Fatal("the store is a Waker")
	}
	if s.hub.Watching() != 1 {
		t.Fatalf("%d watches", s.hub.Watching())
	}
	far := clock.Now().Add(1000 * time.Hour)
	go func() {
		time.Sleep(20 * time.Millisecond)
		_ = s.Commit(ctx, armCommit("a", far))
	}()
	if err := w.Wait(ctx); err != nil || w.Wakes != 1 {
		t.Fatalf("Wait: %v, %d wakes", err, w.Wakes)
	}
	// While the loop serves.
	if err := s.Commit(ctx, armCommit("b", far)); err != nil {
		t.Fatal(err)
	}
	if err := w.Wait(ctx); err != nil || w.Wakes != 2 {
		t.Fatalf("Wait: %v, %d wakes", err, w.Wakes)
	}
	// A deadline 2 s away on the clock: 200 ms of real time.
	if err := s.Commit(ctx, armCommit("c", clock.Now().Add(2*time.Second))); err != nil {
		t.Fatal(err)
	}
	<-w.watch.C() // its wake-up, taken
	start := time.Now()
	if err := w.Wait(ctx); err != nil || w.Timed != 1 {
		t.Fatalf("Wait: %v, %d timed", err, w.Timed)
	}
	if el := time.Since(start); el < 150*time.Millisecond || el > 10*time.Second {
		t.Fatalf("the Wait for a deadline 200 ms away (real time) took %v", el)
	}
	// Now due and left (someone else's): one Wait returns at once, the next sleeps.
	if err := w.Wait(ctx); err != nil || w.Timed != 2 {
		t.Fatalf("Wait: %v, %d timed", err, w.Timed)
	}
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	if err := w.Wait(short); err != context.DeadlineExceeded {
		t.Fatalf("a Wait on work someone else holds returned %v, not at its context's end", err)
	}
	w.Close()
	if s.hub.Watching() != 0 {
		t.Fatalf("%d watches after Close", s.hub.Watching())
	}
}
