package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"testing"
	"time"

	"github.com/fsmgen/fsmgen/fsmrt"
)

// TestWakeInProcess: two Stores of one process on the same file wake each other: a
// commit of one that arms a deadline, or writes an effect nobody holds, wakes the watches
// of its machine on the other; a commit whose effects its committer holds and that arms
// nothing, a commit of another machine and a refused commit wake nobody. NextWork tells
// the nearest deadline, lease end or free effect. A Store on another file shares nothing,
// and the last Store of a file to close forgets its hub.
func TestWakeInProcess(t *testing.T) {
	ctx := context.Background()
	path := tempPath(t)
	a, b := openStore(t, path), openStore(t, path)
	other := openStore(t, tempPath(t))
	if a.hub != b.hub || a.hub == other.hub {
		t.Fatal("the Stores of one file do not share their hub, or those of two files do")
	}
	w := a.WatchWork("test.M")
	defer w.Close()
	waiter := fsmrt.NewWaiter(a, "test.M", fsmrt.WaitOptions{Poll: time.Hour, Clock: fsmrt.StoppedClock(t0)})
	defer waiter.Close()
	if _, ok, err := a.NextWork(ctx, "test.M"); err != nil || ok {
		t.Fatalf("NextWork of an empty store: %v %v", ok, err)
	}

	quiet := testCommit("o1", 1, "", false)
	quiet.Effects, quiet.Owner, quiet.LeaseUntil = []fsmrt.Effect{{Name: "mail", Key: "o1", Data: []byte(`{}`)}}, "me", t0.Add(time.Hour)
	if err := b.Commit(ctx, quiet); err != nil {
		t.Fatal(err)
	}
	if err := b.Commit(ctx, orderCommit("o1", 1, "")); err == nil { // refused: o1 is at 1
		t.Fatal("a stale commit was accepted")
	}
	for _, s := range []*Store{b, other} {
		c := orderCommit("o2", 1, "")
		if s == b {
			c.Machine = "test.Other"
		}
		if err := s.Commit(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	select {
	case <-w.C():
		t.Fatal("woken by a commit that wakes nobody")
	default:
	}
	if at, ok, err := a.NextWork(ctx, "test.M"); err != nil || !ok || !at.Equal(t0.Add(time.Hour).Truncate(time.Microsecond).Add(time.Microsecond)) {
		t.Fatalf("NextWork = %v %v %v, want a microsecond after the held effect's lease", at, ok, err)
	}

	start := time.Now()
	go func() {
		time.Sleep(20 * time.Millisecond)
		_ = b.Commit(context.Background(), orderCommit("o3", 1, ""))
	}()
	if err := waiter.Wait(ctx); err != nil || waiter.Wakes != 1 {
		t.Fatalf("Wait: %v (%d wakes, %d timed, %d polls)", err, waiter.Wakes, waiter.Timed, waiter.Polls)
	}
	t.Logf("woken %v after the commit began", time.Since(start)-20*time.Millisecond)
	// The hub wakes its watches one after the other: the waiter's may come first.
	select {
	case <-w.C():
	case <-time.After(10 * time.Second):
		t.Fatal("the other watch was not woken")
	}
	c := testCommit("o3", 1, "", false)
	if at, _, _ := a.NextWork(ctx, "test.M"); !at.Equal(c.Entry.At.Truncate(time.Microsecond)) {
		t.Fatalf("NextWork = %v, want the free effect's commit time %v", at, c.Entry.At)
	}
	if err := b.CompleteEffects(ctx, []fsmrt.EffectID{{Machine: "test.M", ID: "o1", Seq: 1}, {Machine: "test.M", ID: "o3", Seq: 1}}, t0); err != nil {
		t.Fatal(err)
	}
	if at, _, _ := a.NextWork(ctx, "test.M"); !at.Equal(t0.Add(24 * time.Hour).Truncate(time.Microsecond)) {
		t.Fatalf("NextWork = %v, want the deadline", at)
	}

	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	sharedHubs.Lock()
	_, kept := sharedHubs.byFile[b.hub.file]
	sharedHubs.Unlock()
	if !kept {
		t.Fatal("the hub was forgotten while a Store still uses it")
	}
	file := b.hub.file
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	sharedHubs.Lock()
	_, kept = sharedHubs.byFile[file]
	sharedHubs.Unlock()
	if kept {
		t.Fatal("the hub outlived the last Store of its file")
	}
}

// TestWakeInTx: a transition committed in a transaction of InTx wakes the watches once
// the transaction commits, not before; one rolled back (fn failing) wakes nobody and
// leaves nothing.
func TestWakeInTx(t *testing.T) {
	ctx := context.Background()
	path := tempPath(t)
	a, b := openStore(t, path), openStore(t, path)
	w := a.WatchWork("test.M")
	defer w.Close()
	errRolledBack := errors.New("rolled back")
	err := b.InTx(ctx, func(_ *sql.Tx, st fsmrt.Store) error {
		if err := st.Commit(ctx, orderCommit("o1", 1, "")); err != nil {
			return err
		}
		return errRolledBack
	})
	if !errors.Is(err, errRolledBack) {
		t.Fatalf("InTx: %v", err)
	}
	if e, d := owed(t, b, "o1"); e != 0 || d != 0 {
		t.Fatalf("a rolled-back transaction left %d effects and %d deadlines", e, d)
	}
	err = b.InTx(ctx, func(_ *sql.Tx, st fsmrt.Store) error {
		if err := st.Commit(ctx, orderCommit("o1", 1, "")); err != nil {
			return err
		}
		select {
		case <-w.C():
			return errors.New("woken before the transaction committed")
		default:
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-w.C():
	default:
		t.Fatal("not woken once the transaction committed")
	}
	if e, d := owed(t, a, "o1"); e != 1 || d != 1 {
		t.Fatalf("the committed transaction left %d effects and %d deadlines, want 1 and 1", e, d)
	}
}
