package postgres

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/fsmgen/fsmgen/fsmrt"
	"github.com/jackc/pgx/v5"
)

// orderCommit is entry seq of instance id with an effect and a deadline, as a transition
// that sends a mail and arms a timeout commits.
func orderCommit(id string, seq int64, key string) *fsmrt.Commit {
	c := testCommit("test.M", id, seq, key, `{"seq":1}`)
	c.Effects = []fsmrt.Effect{{Name: "mail", Key: id, Data: []byte(`{}`)}}
	c.Rearm, c.Deadlines = true, []fsmrt.Deadline{{Name: "expiry", At: c.Entry.At.Add(24 * time.Hour), State: c.State, Event: "expire"}}
	return c
}

// TestCommitInCallersTx: a transition committed in the program's own transaction, beside
// a row of its own table, is stored with it when the program commits, and leaves no trace
// when it rolls back (no entry, no effect, no deadline), after which the store refuses the
// next commit of the machine that made it as a conflict. A commit the store refuses in the
// transaction (a stale version, a key used) leaves the transaction usable.
func TestCommitInCallersTx(t *testing.T) {
	ctx := context.Background()
	dsn := newDatabase(t)
	s := openStore(t, dsn)
	pool := newPool(t, dsn)
	if _, err := pool.Exec(ctx, `CREATE TABLE orders (id text PRIMARY KEY, total int NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	count := func() int {
		var n int
		if err := pool.QueryRow(ctx, `SELECT count(*) FROM orders`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	owed := func(id string) (int, int) {
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
	inTx := func(fn func(tx pgx.Tx, st fsmrt.Store) error) pgx.Tx {
		t.Helper()
		tx, err := pool.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if err := fn(tx, s.WithTx(tx)); err != nil {
			tx.Rollback(ctx)
			t.Fatal(err)
		}
		return tx
	}
	order := func(id string, total int) func(tx pgx.Tx, st fsmrt.Store) error {
		return func(tx pgx.Tx, st fsmrt.Store) error {
			if _, err := tx.Exec(ctx, `INSERT INTO orders VALUES ($1, $2)`, id, total); err != nil {
				return err
			}
			if err := st.Commit(ctx, orderCommit(id, 1, "place-"+id)); err != nil {
				return err
			}
			if l, err := st.Load(ctx, "test.M", id); err != nil || l.Version != 1 {
				return errors.Join(err, errors.New("the transaction does not see its commit"))
			}
			return nil
		}
	}

	tx := inTx(order("o-1", 30))
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	if l := mustLoad(t, s, "test.M", "o-1"); l.Version != 0 || count() != 0 {
		t.Fatalf("after the rollback: version %d, %d orders", l.Version, count())
	}
	if e, d := owed("o-1"); e != 0 || d != 0 {
		t.Fatalf("after the rollback: %d effects, %d deadlines owed", e, d)
	}
	if err := s.Commit(ctx, orderCommit("o-1", 2, "")); !errors.Is(err, fsmrt.ErrStoreConflict) {
		t.Fatalf("the next commit after the rollback: %v", err)
	}

	tx = inTx(order("o-2", 40))
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if l := mustLoad(t, s, "test.M", "o-2"); l.Version != 1 || count() != 1 {
		t.Fatalf("after the commit: version %d, %d orders", l.Version, count())
	}
	if e, d := owed("o-2"); e != 1 || d != 1 {
		t.Fatalf("after the commit: %d effects, %d deadlines owed", e, d)
	}

	tx = inTx(func(tx pgx.Tx, st fsmrt.Store) error {
		if err := st.Commit(ctx, orderCommit("o-2", 1, "")); !errors.Is(err, fsmrt.ErrStoreConflict) {
			return errors.Join(err, errors.New("a stale version is not a conflict"))
		}
		if err := st.Commit(ctx, orderCommit("o-2", 2, "place-o-2")); !errors.Is(err, fsmrt.ErrStoreConflict) {
			return errors.Join(err, errors.New("a key used is not a conflict"))
		}
		_, err := tx.Exec(ctx, `UPDATE orders SET total = 45 WHERE id = 'o-2'`)
		if err == nil {
			err = st.Commit(ctx, orderCommit("o-2", 2, "pay-o-2"))
		}
		return err
	})
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	var total int
	if err := pool.QueryRow(ctx, `SELECT total FROM orders WHERE id = 'o-2'`).Scan(&total); err != nil || total != 45 {
		t.Fatalf("total %d, %v", total, err)
	}
	if l := mustLoad(t, s, "test.M", "o-2"); l.Version != 2 || l.State != "a" {
		t.Fatalf("after the refusals and the commit: version %d, state %s", l.Version, l.State)
	}
}

// TestInTxStatements: the statements a commit in the caller's transaction sends after
// the instance's write keep no condition on the transaction ID (which a savepoint
// changes), whatever the schema.
func TestInTxStatements(t *testing.T) {
	for _, schema := range []string{"", "tenant_7"} {
		st := inTx(newStatements(schema))
		for _, q := range []string{st.insertEffects, st.handleFired, st.disarm, st.arm, st.clearCounters, st.setCounters, st.changeCounters, st.notify} {
			if strings.Contains(q, "pg_current_xact_id_if_assigned") {
				t.Errorf("schema %q: %s", schema, q)
			}
		}
	}
}
