package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"testing"

	"github.com/fsmgen/fsmgen/fsmrt"
)

// orderCommit is entry seq of instance id with an effect and a deadline, as a transition
// that sends a mail and arms a timeout commits.
func orderCommit(id string, seq int64, key string) *fsmrt.Commit {
	c := testCommit(id, seq, key, seq == 1)
	c.Effects = []fsmrt.Effect{{Name: "mail", Key: id, Data: []byte(`{}`)}}
	c.Rearm, c.Deadlines = true, []fsmrt.Deadline{{Name: "expiry", At: t0.Add(24 * 3600e9), State: c.State, Event: "expire"}}
	return c
}

// orders counts the rows of the program's own table.
func orders(t *testing.T, s *Store) int {
	t.Helper()
	var n int
	if err := s.DB().QueryRowContext(context.Background(), `SELECT count(*) FROM orders`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// owed counts what the store owes instance id: effects not delivered, deadlines armed.
func owed(t *testing.T, s *Store, id string) (effects, deadlines int) {
	t.Helper()
	ctx := context.Background()
	e, err := s.PendingEffects(ctx, fsmrt.PendingQuery{Machine: "test.M", ID: id})
	if err != nil {
		t.Fatal(err)
	}
	d, err := s.PendingDeadlines(ctx, fsmrt.PendingQuery{Machine: "test.M", ID: id})
	if err != nil {
		t.Fatal(err)
	}
	return len(e), len(d)
}

// TestCommitInCallersTx: a transition committed in the program's own transaction, beside
// a row of its own table, is stored with it when the program commits, and leaves no trace
// when it rolls back (no entry, no effect, no deadline), after which the store refuses the
// next commit of the machine that made it as a conflict. A commit the store refuses in the
// transaction leaves the transaction usable.
func TestCommitInCallersTx(t *testing.T) {
	ctx := context.Background()
	s := openStore(t, tempPath(t))
	mustExec(t, s, `CREATE TABLE orders (id TEXT PRIMARY KEY, total INTEGER NOT NULL)`)
	inTx := func(fn func(tx *sql.Tx, st fsmrt.Store) error) *sql.Tx {
		t.Helper()
		tx, err := s.BeginTx(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if err := fn(tx, s.WithTx(tx)); err != nil {
			tx.Rollback()
			t.Fatal(err)
		}
		return tx
	}
	order := func(id string, total int) func(tx *sql.Tx, st fsmrt.Store) error {
		return func(tx *sql.Tx, st fsmrt.Store) error {
			if _, err := tx.ExecContext(ctx, `INSERT INTO orders VALUES (?, ?)`, id, total); err != nil {
				return err
			}
			if err := st.Commit(ctx, orderCommit(id, 1, "place-"+id)); err != nil {
				return err
			}
			// The transaction sees its own commit.
			if l, err := st.Load(ctx, "test.M", id); err != nil || l.Version != 1 {
				return errors.Join(err, errors.New("the transaction does not see its commit"))
			}
			return nil
		}
	}

	// Rolled back: nothing of either.
	tx := inTx(order("o-1", 30))
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	if l := mustLoad(t, s, "o-1"); l.Version != 0 || orders(t, s) != 0 {
		t.Fatalf("after the rollback: version %d, %d orders", l.Version, orders(t, s))
	}
	if e, d := owed(t, s, "o-1"); e != 0 || d != 0 {
		t.Fatalf("after the rollback: %d effects, %d deadlines owed", e, d)
	}
	// The machine that made it is ahead of its store: its next commit is a conflict.
	if err := s.Commit(ctx, orderCommit("o-1", 2, "")); !errors.Is(err, fsmrt.ErrStoreConflict) {
		t.Fatalf("the next commit after the rollback: %v", err)
	}

	// Committed: both, with the effect and the deadline.
	tx = inTx(order("o-2", 40))
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	if l := mustLoad(t, s, "o-2"); l.Version != 1 || l.State != "b" || orders(t, s) != 1 {
		t.Fatalf("after the commit: version %d, %d orders", l.Version, orders(t, s))
	}
	if e, d := owed(t, s, "o-2"); e != 1 || d != 1 {
		t.Fatalf("after the commit: %d effects, %d deadlines owed", e, d)
	}

	// Refused in the transaction (a version moved on, a key used): the transaction goes
	// on, and commits the rest.
	tx = inTx(func(tx *sql.Tx, st fsmrt.Store) error {
		if err := st.Commit(ctx, orderCommit("o-2", 1, "")); !errors.Is(err, fsmrt.ErrStoreConflict) {
			return errors.Join(err, errors.New("a stale version is not a conflict"))
		}
		if err := st.Commit(ctx, orderCommit("o-2", 2, "place-o-2")); !errors.Is(err, fsmrt.ErrStoreConflict) {
			return errors.Join(err, errors.New("a key used is not a conflict"))
		}
		_, err := tx.ExecContext(ctx, `UPDATE orders SET total = 45 WHERE id = 'o-2'`)
		if err == nil {
			err = st.Commit(ctx, orderCommit("o-2", 2, "pay-o-2"))
		}
		return err
	})
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	var total int
	if err := s.DB().QueryRowContext(ctx, `SELECT total FROM orders WHERE id = 'o-2'`).Scan(&total); err != nil || total != 45 {
		t.Fatalf("total %d, %v", total, err)
	}
	if l := mustLoad(t, s, "o-2"); l.Version != 2 || l.State != "a" {
		t.Fatalf("after the refusals and the commit: version %d, state %s", l.Version, l.State)
	}
}
