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

// askingStore is a memory store that counts the questions NextWork answers.
type askingStore struct {
	*MemoryStore
	asked int
}

func (s *askingStore) NextWork(ctx context.Context, machine string) (time.Time, bool, error) {
	s.asked++
	return s.MemoryStore.NextWork(ctx, machine)
}

// TestWaiterReady: a busy loop's Ready asks the store once every polling interval (not at
// a wake-up), says yes when the work it was told of falls due without asking, and says
// yes to work due now; on a store that is not a Waker it says yes once every interval.
func TestWaiterReady(t *testing.T) {
	ctx := context.Background()
	const poll = 400 * time.Millisecond // long beside two calls in a row, on a busy machine too
	t0 := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
	clock := &fakeClock{t: t0}
	s := &askingStore{MemoryStore: NewMemoryStore()}
	w := NewWaiter(s, "m", WaitOptions{Poll: poll, Clock: clock})
	defer w.Close()
	ready := func(what string, want bool, asked int) {
		t.Helper()
		if got := w.Ready(ctx); got != want || s.asked != asked {
			t.Fatalf("%s: Ready %v after %d questions, want %v after %d", what, got, s.asked, want, asked)
		}
	}
	ready("nothing stored", false, 1)
	ready("at once again", false, 1)
	if err := s.Commit(ctx, armCommit("c", t0.Add(10*time.Second))); err != nil {
		t.Fatal(err)
	}
	ready("woken, within the interval", false, 1)
	time.Sleep(poll + 20*time.Millisecond)
	ready("a deadline 10s away", false, 2)
	ready("the deadline it knows of, not due", false, 2)
	clock.t = t0.Add(10 * time.Second)
	ready("the deadline due", true, 2)
	// Handled: the state left, its deadlines disarmed; a free effect committed.
	c := armCommit("c", t0)
	c.Version, c.Entry.Seq, c.Deadlines = 1, 2, nil
	c.Entry.At = clock.t
	c.Effects = []Effect{{Name: "send", Key: "c/2/0"}}
	if err := s.Commit(ctx, c); err != nil {
		t.Fatal(err)
	}
	ready("within the interval", false, 2)
	time.Sleep(poll + 20*time.Millisecond)
	ready("a free effect", true, 3)
	if w.Wakes != 2 || w.Timed != 1 {
		t.Errorf("%d wakes, %d timed; want 2 and 1", w.Wakes, w.Timed)
	}

	p := NewWaiter(struct{ Store }{NewMemoryStore()}, "m", WaitOptions{Poll: poll})
	defer p.Close()
	if !p.Ready(ctx) || p.Ready(ctx) {
		t.Fatal("polling: Ready not yes then no")
	}
	time.Sleep(poll + 20*time.Millisecond)
	if !p.Ready(ctx) {
		t.Fatal("polling: Ready not yes after the interval")
	}
}
