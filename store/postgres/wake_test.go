package postgres

import (
	"context"
	"testing"
	"time"

	"github.com/fsmgen/fsmgen/fsmrt"
)

// woken waits for a wake-up of w, at most a few seconds.
func woken(t *testing.T, w fsmrt.WorkWatch, what string) {
	t.Helper()
	select {
	case <-w.C():
	case <-time.After(10 * time.Second):
		t.Fatalf("%s: no wake-up", what)
	}
}

// drain empties the watch of a wake-up left over (the one every (re)connection gives).
func drain(w fsmrt.WorkWatch) {
	select {
	case <-w.C():
	default:
	}
}

// listening waits until the store listens with its n-th connection.
func listening(t *testing.T, s *Store, n int) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		on, connects := s.Listening()
		if on && connects >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the store does not listen with connection %d (listening %v, %d connections)", n, on, connects)
		}
	}
}

// TestWakeOnCommit: a store watching a machine is woken by a commit of another store
// (another pool, as another process) that arms a deadline, once it is committed; a
// transaction of the caller's that rolls back wakes nobody, one that commits does; a
// commit whose effects its committer holds and that arms nothing wakes nobody, nor does a
// commit of another machine or a refused one; and NextWork tells the nearest deadline, lease end or free
// effect.
func TestWakeOnCommit(t *testing.T) {
	ctx := context.Background()
	dsn := newDatabase(t)
	a, b := openStore(t, dsn), openStore(t, dsn)
	w := a.WatchWork("test.M")
	defer w.Close()
	listening(t, a, 1)
	drain(w)

	if _, ok, err := a.NextWork(ctx, "test.M"); err != nil || ok {
		t.Fatalf("NextWork of an empty store: %v %v", ok, err)
	}
	c := orderCommit("o1", 1, "") // an effect nobody holds, and a deadline
	if err := b.Commit(ctx, c); err != nil {
		t.Fatal(err)
	}
	woken(t, w, "a commit arming a deadline")
	at, ok, err := a.NextWork(ctx, "test.M")
	if err != nil || !ok || !at.Equal(c.Entry.At) {
		t.Fatalf("NextWork = %v %v %v, want the free effect's commit time %v", at, ok, err, c.Entry.At)
	}
	// Delivered, the effect leaves the deadline.
	if err := b.CompleteEffects(ctx, []fsmrt.EffectID{{Machine: "test.M", ID: "o1", Seq: 1}}, c.Entry.At); err != nil {
		t.Fatal(err)
	}
	if at, _, _ := a.NextWork(ctx, "test.M"); !at.Equal(c.Deadlines[0].At) {
		t.Fatalf("NextWork = %v, want the deadline %v", at, c.Deadlines[0].At)
	}
	// Claimed, the deadline is someone's until its lease ends.
	due := c.Deadlines[0].At
	if got, err := b.ClaimDeadlines(ctx, "test.M", "x", due, time.Hour, 1); err != nil || len(got) != 1 {
		t.Fatalf("claim: %v %v", got, err)
	}
	if at, _, _ := a.NextWork(ctx, "test.M"); !at.Equal(due.Add(time.Hour + time.Microsecond)) {
		t.Fatalf("NextWork = %v, want a microsecond after the lease %v", at, due.Add(time.Hour))
	}

	// Effects held by their committer, no deadline: nobody is woken.
	quiet := testCommit("test.M", "o2", 1, "", `{}`)
	quiet.Effects, quiet.Owner, quiet.LeaseUntil = []fsmrt.Effect{{Name: "mail", Key: "o2", Data: []byte(`{}`)}}, "me", quiet.Entry.At.Add(time.Minute)
	if err := b.Commit(ctx, quiet); err != nil {
		t.Fatal(err)
	}
	other := orderCommit("o3", 1, "")
	other.Machine = "test.Other"
	if err := b.Commit(ctx, other); err != nil {
		t.Fatal(err)
	}
	// A caller's transaction rolled back wakes nobody.
	tx, err := newPool(t, dsn).Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	if err := b.WithTx(tx).Commit(ctx, orderCommit("o4", 1, "")); err != nil {
		t.Fatal(err)
	}
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	// The marker: a commit that wakes, after those that must not have.
	if err := b.Commit(ctx, orderCommit("o5", 1, "")); err != nil {
		t.Fatal(err)
	}
	woken(t, w, "the marker")
	// A commit refused (o5 exists) is rolled back: its NOTIFY with it.
	if err := b.Commit(ctx, orderCommit("o5", 1, "")); err == nil {
		t.Fatal("a second creation of o5 was accepted")
	}
	select {
	case <-w.C():
		t.Fatal("woken twice: by a commit that should wake nobody")
	case <-time.After(200 * time.Millisecond):
	}

	// A caller's transaction that commits wakes, at its commit.
	tx, err = newPool(t, dsn).Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	if err := b.WithTx(tx).Commit(ctx, orderCommit("o6", 1, "")); err != nil {
		t.Fatal(err)
	}
	select {
	case <-w.C():
		t.Fatal("woken before the caller's transaction committed")
	case <-time.After(200 * time.Millisecond):
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	woken(t, w, "the caller's transaction committed")
}

// TestWakeAfterLostConnection: when the listening connection is terminated by the server
// (pg_terminate_backend), every watch is woken (what was committed meanwhile went unheard)
// and the store listens again on a new connection, and is woken by commits as before; a
// fsmrt.Waiter on it returns at a commit, long before its polling interval.
func TestWakeAfterLostConnection(t *testing.T) {
	ctx := context.Background()
	dsn := newDatabase(t)
	a, b := openStore(t, dsn), openStore(t, dsn)
	waiter := fsmrt.NewWaiter(a, "test.M", fsmrt.WaitOptions{Poll: time.Hour})
	defer waiter.Close()
	if !waiter.Woken() {
		t.Fatal("the Waiter does not see the store as a Waker")
	}
	listening(t, a, 1)
	wait := func(what string) {
		t.Helper()
		ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		if err := waiter.Wait(ctx); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	wait("the first connection") // its wake-up
	var killed int
	if err := newPool(t, dsn).QueryRow(ctx, `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
		WHERE query = 'LISTEN `+wakeChannel+`' AND pid <> pg_backend_pid()`).Scan(&killed); err != nil || killed != 1 {
		t.Fatalf("terminate the listening connection: %d terminated, %v", killed, err)
	}
	wait("the lost connection")
	listening(t, a, 2)
	for range 2 { // the wake-ups of the loss and of the new connection, if apart
		ctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
		_ = waiter.Wait(ctx)
		cancel()
	}
	wakes := waiter.Wakes
	start := time.Now()
	go func() {
		time.Sleep(50 * time.Millisecond)
		_ = b.Commit(context.Background(), orderCommit("o1", 1, ""))
	}()
	wait("a commit after the reconnection")
	if waiter.Wakes != wakes+1 {
		t.Fatalf("the Wait ended otherwise than woken (%d wakes, %d timed, %d polls)", waiter.Wakes, waiter.Timed, waiter.Polls)
	}
	t.Logf("woken %v after the commit was sent", time.Since(start)-50*time.Millisecond)
}
