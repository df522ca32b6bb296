package durable

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"syscall"
	"testing"
	"time"

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

// orderThenHang is a process that opens an order and starts its task in one transaction,
// says so, and waits there, to be killed before it commits.
func orderThenHang(ctx context.Context, store *sqlite.Store) error {
	tx, err := store.BeginTx(ctx)
	if err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO orders (id, status) VALUES ('ORDER-9', 'open')`); err != nil {
		return err
	}
	m := review.NewTask()
	m.ID = "ORDER-9"
	m.SetStore(store.WithTx(tx))
	if _, err := m.Fire(ctx, review.EventInProgress); err != nil {
		return err
	}
	fmt.Println("written")
	select {}
}

// TestSeed003OrderCrashBeforeCommit: a process killed (SIGKILL) after writing its order
// and firing its task in one transaction, before committing it, leaves neither: the next
// process finds no order and no task, and can start both again.
func TestSeed003OrderCrashBeforeCommit(t *testing.T) {
	ctx := context.Background()
	db := filepath.Join(t.TempDir(), "orders.db")
	store, err := sqlite.Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := store.DB().ExecContext(ctx, `CREATE TABLE orders (id TEXT PRIMARY KEY, status TEXT NOT NULL, billed INTEGER NOT NULL DEFAULT 0)`); err != nil {
		t.Fatal(err)
	}
	store.Close()
	cmd, lines := start(t, "order-crash", db)
	select {
	case l := <-lines:
		if l != "written" {
			t.Fatalf("the process said %q", l)
		}
	case <-time.After(time.Minute):
		t.Fatal("the process did not write")
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()

	store, err = sqlite.Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	var n int
	if err := store.DB().QueryRowContext(ctx, `SELECT count(*) FROM orders`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("%d orders after the crash, %v", n, err)
	}
	if _, err := review.ReplayTask(ctx, store, "ORDER-9"); !errors.Is(err, fsmrt.ErrNotFound) {
		t.Fatalf("the task after the crash: %v, want not found", err)
	}
	m := review.NewTask()
	m.ID = "ORDER-9"
	m.SetStore(store)
	if _, err := m.Fire(ctx, review.EventInProgress); err != nil {
		t.Fatalf("starting it again: %v", err)
	}
}
