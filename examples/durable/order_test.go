package durable

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/fsmgen/fsmgen/fsmrt"
	"github.com/fsmgen/fsmgen/generated/review"
	"github.com/fsmgen/fsmgen/store/sqlite"
)

// TestSeed003OrderRowAndItsMachine: the program keeps its own rows (an order, with what it
// was billed) next to the task of seed 003 that reviews the work, in the same SQLite file,
// and changes both in one transaction (sqlite.Store.WithTx): a task started and its order
// opened together; a task completed and its order billed together, or, when billing fails
// and the program rolls back, neither: the task is still in final review in the store,
// the machine in memory refuses to go on (a *fsmrt.StaleError), and loaded again it does.
func TestSeed003OrderRowAndItsMachine(t *testing.T) {
	ctx := context.Background()
	store, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "orders.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	db := store.DB()
	if _, err := db.ExecContext(ctx, `CREATE TABLE orders (id TEXT PRIMARY KEY, status TEXT NOT NULL, billed INTEGER NOT NULL DEFAULT 0 CHECK (billed <= 100))`); err != nil {
		t.Fatal(err)
	}
	row := func(id string) (status string, billed int) {
		t.Helper()
		if err := db.QueryRowContext(ctx, `SELECT status, billed FROM orders WHERE id = ?`, id).Scan(&status, &billed); err != nil {
			t.Fatal(err)
		}
		return status, billed
	}
	// inTx runs fn in one transaction with the machine's store set to it, and commits
	// unless fn fails.
	inTx := func(m *review.Task, fn func(exec func(string, ...any) error) error) error {
		tx, err := store.BeginTx(ctx)
		if err != nil {
			return err
		}
		m.SetStore(store.WithTx(tx))
		defer m.SetStore(store)
		err = fn(func(q string, args ...any) error { _, err := tx.ExecContext(ctx, q, args...); return err })
		if err != nil {
			return errors.Join(err, tx.Rollback())
		}
		return tx.Commit()
	}

	m := review.NewTask()
	m.ID = "ORDER-1"
	err = inTx(m, func(exec func(string, ...any) error) error {
		if err := exec(`INSERT INTO orders (id, status) VALUES (?, 'open')`, m.ID); err != nil {
			return err
		}
		_, err := m.Fire(ctx, review.EventInProgress)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range []review.Event{review.EventPendingReview, review.EventUnderReview, review.EventReviewSubmitted, review.EventFinalReview} {
		if _, err := m.Fire(ctx, e); err != nil {
			t.Fatal(err)
		}
	}

	// Billing 150 breaks the table's check: the program rolls back, the completion with it.
	err = inTx(m, func(exec func(string, ...any) error) error {
		if _, err := m.Fire(ctx, review.EventCompleted); err != nil {
			return err
		}
		return exec(`UPDATE orders SET status = 'billed', billed = 150 WHERE id = ?`, m.ID)
	})
	if err == nil {
		t.Fatal("billing 150 went through")
	}
	if status, billed := row(m.ID); status != "open" || billed != 0 {
		t.Fatalf("order after the rollback: %s, %d", status, billed)
	}
	stored, err := review.ReplayTask(ctx, store, m.ID)
	if err != nil || stored.State() != review.StateFinalReview {
		t.Fatalf("task after the rollback: %v, %v", stored, err)
	}
	// The machine in memory completed; its store did not: its next commit is refused.
	var stale *fsmrt.StaleError
	if _, err := m.Fire(ctx, review.EventInProgress); !errors.As(err, &stale) || !errors.Is(err, fsmrt.ErrStoreConflict) || stale.Stored != stale.Seq-1 {
		t.Fatalf("the stale machine fired: %v", err)
	}

	// Loaded again, it completes with its order billed, together.
	err = inTx(stored, func(exec func(string, ...any) error) error {
		if _, err := stored.Fire(ctx, review.EventCompleted); err != nil {
			return err
		}
		return exec(`UPDATE orders SET status = 'billed', billed = 80 WHERE id = ?`, stored.ID)
	})
	if err != nil {
		t.Fatal(err)
	}
	if status, billed := row(m.ID); status != "billed" || billed != 80 {
		t.Fatalf("order: %s, %d", status, billed)
	}
	if again, err := review.ReplayTask(ctx, store, m.ID); err != nil || again.State() != review.StateCompleted {
		t.Fatalf("task: %v, %v", again, err)
	}
}
