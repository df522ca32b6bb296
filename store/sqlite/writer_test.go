package sqlite

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"testing"
	"time"

	"github.com/fsmgen/fsmgen/fsmrt"
)

// The Store's writes run on one connection of its own, which it takes once and keeps.
func TestWritesOnOneConnection(t *testing.T) {
	s := openStore(t, tempPath(t))
	commitN(t, s, "m", 1)
	first := s.w
	if first == nil {
		t.Fatal("no writer connection after a commit")
	}
	commitN(t, s, "n", 3)
	if s.w != first {
		t.Error("the writes took another connection")
	}
	if l := mustLoad(t, s, "n"); l.Version != 3 {
		t.Errorf("loaded %+v, want version 3", l)
	}
}

// A writer connection whose transaction cannot be rolled back is dropped, and the next
// write takes another one; nothing of the failed write remains.
func TestWriterDroppedAfterFailedRollback(t *testing.T) {
	ctx := context.Background()
	s := openStore(t, tempPath(t))
	commitN(t, s, "m", 1)
	first := s.w
	boom := errors.New("boom")
	err := s.writeTx(ctx, true, func(t *tx) error {
		if _, err := t.ExecContext(ctx, insertInstanceRow, "test.M", "x", testSpec, 1, "a", nil, 0, 0, 0); err != nil {
			return err
		}
		// Ends the transaction, so that the Store's ROLLBACK fails.
		if _, err := t.ExecContext(ctx, "ROLLBACK"); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("write: %v, want boom", err)
	}
	if s.w != nil {
		t.Fatal("the writer connection was kept")
	}
	if l := mustLoad(t, s, "x"); l.Version != 0 {
		t.Errorf("the failed write stored %+v", l)
	}
	if err := s.Commit(ctx, testCommit("m", 2, "", false)); err != nil {
		t.Fatal(err)
	}
	if s.w == nil || s.w == first {
		t.Error("the next write did not take a new writer connection")
	}
	if l := mustLoad(t, s, "m"); l.Version != 2 {
		t.Errorf("loaded %+v, want version 2", l)
	}
}

// A database limited to one connection is written through the pool: keeping its only
// connection would leave none to the reads.
func TestOneConnectionPool(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	db := openOwnDB(t, 1)
	s, err := New(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.keepWriter {
		t.Fatal("the store keeps the only connection of its database for its writes")
	}
	for seq := int64(1); seq <= 3; seq++ {
		if err := s.Commit(ctx, testCommit("m", seq, "", false)); err != nil {
			t.Fatal(err)
		}
		l, err := s.Load(ctx, "test.M", "m")
		if err != nil {
			t.Fatal(err)
		}
		if l.Version != seq {
			t.Fatalf("loaded %+v, want version %d", l, seq)
		}
	}
	if err := ctx.Err(); err != nil {
		t.Fatalf("the commits and loads took 30 s: %v", err)
	}
}

// openOwnDB returns a database of the program's own on a new file in WAL mode, limited
// to conns connections, closed when t ends.
func openOwnDB(t *testing.T, conns int) *sql.DB {
	t.Helper()
	path := tempPath(t)
	openStore(t, path) // creates the file, in WAL mode
	dsn, err := dataSourceName(path, config{busyTimeout: DefaultBusyTimeout, synchronous: "FULL"})
	if err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	db.SetMaxOpenConns(conns)
	return db
}

// Close gives the writer connection back to a database it does not own, which stays
// usable.
func TestCloseGivesTheWriterBack(t *testing.T) {
	ctx := context.Background()
	db := openOwnDB(t, 2)
	s, err := New(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	commitN(t, s, "m", 2)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if n := db.Stats().InUse; n != 0 {
		t.Errorf("%d connections still in use after Close", n)
	}
	s2, err := New(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	if err := s2.Commit(ctx, testCommit("m", 3, "", false)); err != nil {
		t.Fatal(err)
	}
}

// A transaction of InTx is the store's turn to write, on its writer connection: the
// caller's rows and the transitions commit together there, and the store's own writes
// wait for it.
func TestInTxOnTheWriter(t *testing.T) {
	ctx := context.Background()
	s := openStore(t, tempPath(t))
	mustExec(t, s, `CREATE TABLE orders (id TEXT PRIMARY KEY)`)
	commitN(t, s, "m", 1)
	first := s.w
	err := s.InTx(ctx, func(tx *sql.Tx, st fsmrt.Store) error {
		if _, err := tx.ExecContext(ctx, `INSERT INTO orders (id) VALUES ('o1')`); err != nil {
			return err
		}
		return st.Commit(ctx, testCommit("m", 2, "", false))
	})
	if err != nil {
		t.Fatal(err)
	}
	if s.w != first {
		t.Error("InTx did not run on the writer connection")
	}
	var n int
	if err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM orders`).Scan(&n); err != nil || n != 1 {
		t.Errorf("orders: %d, %v; want 1", n, err)
	}
	if l := mustLoad(t, s, "m"); l.Version != 2 {
		t.Errorf("loaded %+v, want version 2", l)
	}
}

// A write through the store itself inside its own InTx waits for the transaction, which
// waits for it: it fails with ErrWriterBusy (or its context) instead of hanging, and the
// transaction rolls back when fn returns that error. A panic in fn rolls back too, and
// gives the turn back.
func TestInTxSelfWait(t *testing.T) {
	ctx := context.Background()
	defer func(d time.Duration) { minTurnWait = d }(minTurnWait)
	minTurnWait = 50 * time.Millisecond
	s := openStore(t, tempPath(t), WithBusyTimeout(50*time.Millisecond))
	commitN(t, s, "m", 1)
	start := time.Now()
	err := s.InTx(ctx, func(_ *sql.Tx, st fsmrt.Store) error {
		if err := st.Commit(ctx, testCommit("x", 1, "", false)); err != nil {
			return err
		}
		return s.Commit(ctx, testCommit("m", 2, "", false))
	})
	if !errors.Is(err, ErrWriterBusy) {
		t.Fatalf("a store's write inside its InTx: %v, want ErrWriterBusy", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("it failed after %v", d)
	}
	err = s.InTx(ctx, func(*sql.Tx, fsmrt.Store) error {
		return s.InTx(ctx, func(*sql.Tx, fsmrt.Store) error { return nil })
	})
	if !errors.Is(err, ErrWriterBusy) {
		t.Fatalf("InTx inside InTx: %v, want ErrWriterBusy", err)
	}
	ctxDone, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	defer cancel()
	err = s.InTx(ctx, func(*sql.Tx, fsmrt.Store) error { return s.Commit(ctxDone, testCommit("m", 2, "", false)) })
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a store's write inside its InTx, its context done: %v", err)
	}
	func() {
		defer func() {
			if recover() == nil {
				t.Error("no panic")
			}
		}()
		_ = s.InTx(ctx, func(_ *sql.Tx, st fsmrt.Store) error {
			if err := st.Commit(ctx, testCommit("y", 1, "", false)); err != nil {
				t.Error(err)
			}
			panic("fn")
		})
	}()
	for _, id := range []string{"x", "y"} {
		if l := mustLoad(t, s, id); l.Version != 0 {
			t.Errorf("a transaction rolled back stored %s: %+v", id, l)
		}
	}
	if err := s.Commit(ctx, testCommit("m", 2, "", false)); err != nil {
		t.Fatalf("commit after the transactions: %v", err)
	}
}

// A transaction of InTx whose context ends is rolled back, and the store's next writes
// go through.
func TestInTxContextEnds(t *testing.T) {
	s := openStore(t, tempPath(t))
	commitN(t, s, "m", 1)
	ctx, cancel := context.WithCancel(context.Background())
	err := s.InTx(ctx, func(_ *sql.Tx, st fsmrt.Store) error {
		if err := st.Commit(ctx, testCommit("x", 1, "", false)); err != nil {
			return err
		}
		cancel()
		time.Sleep(50 * time.Millisecond) // database/sql rolls the transaction back meanwhile
		return nil
	})
	if err == nil {
		t.Fatal("InTx committed after its context ended")
	}
	if l := mustLoad(t, s, "x"); l.Version != 0 {
		t.Errorf("the transaction rolled back stored %+v", l)
	}
	for seq := int64(2); seq <= 3; seq++ {
		if err := s.Commit(context.Background(), testCommit("m", seq, "", false)); err != nil {
			t.Fatalf("commit %d after the cancelled transaction: %v", seq, err)
		}
	}
}

// A writer connection the pool closed behind the store's back is replaced at the next
// write, which goes through.
func TestWriterClosedByThePool(t *testing.T) {
	s := openStore(t, tempPath(t))
	commitN(t, s, "m", 1)
	first := s.w
	_ = first.conn.Raw(func(any) error { return driver.ErrBadConn }) // the pool closes it
	if err := s.Commit(context.Background(), testCommit("m", 2, "", false)); err != nil {
		t.Fatalf("commit after the writer connection was closed: %v", err)
	}
	if s.w == first {
		t.Error("the closed connection was kept")
	}
	if l := mustLoad(t, s, "m"); l.Version != 2 {
		t.Errorf("loaded %+v, want version 2", l)
	}
}

// Close after the pool closed the writer connection behind the store's back closes the
// store all the same.
func TestCloseAfterWriterClosed(t *testing.T) {
	s, err := Open(context.Background(), tempPath(t))
	if err != nil {
		t.Fatal(err)
	}
	commitN(t, s, "m", 1)
	_ = s.w.conn.Raw(func(any) error { return driver.ErrBadConn })
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
}
