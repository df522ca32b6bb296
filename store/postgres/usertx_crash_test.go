package postgres

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fsmgen/fsmgen/fsmrt"
)

// childEnv names the role of a copy of the test binary (TestMain): crashChild.
const childEnv = "FSMGEN_POSTGRES_TEST_CHILD"

// crashChild is a process that, in one transaction of its own on the database of dsn,
// writes an order row and commits the first transition of its machine (an entry, an
// effect, a deadline: orderCommit), says "written", and waits there to be killed before
// it commits.
func crashChild(dsn string) error {
	ctx := context.Background()
	s, err := Open(ctx, dsn)
	if err != nil {
		return err
	}
	pool := s.pool
	tx, err := pool.Begin(ctx)
	if err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, `INSERT INTO orders VALUES ('o-9', 90)`); err != nil {
		return err
	}
	if err := s.WithTx(tx).Commit(ctx, orderCommit("o-9", 1, "place-o-9")); err != nil {
		return err
	}
	fmt.Println("written")
	select {}
}

// TestCommitInCallersTxCrash: a process killed (SIGKILL) after writing its order row and
// committing a transition in the same transaction, before it commits the transaction,
// leaves no trace: no order, no entry, no effect, no deadline, and no lock held (the
// server rolls the transaction back when the connection goes); the order and its machine
// are then written again, by another process, without waiting.
func TestCommitInCallersTxCrash(t *testing.T) {
	ctx := context.Background()
	dsn := newDatabase(t)
	s := openStore(t, dsn)
	pool := newPool(t, dsn)
	if _, err := pool.Exec(ctx, `CREATE TABLE orders (id text PRIMARY KEY, total int NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"=crash", "FSMGEN_POSTGRES_TEST_DSN="+dsn)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	said := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		sc.Scan()
		said <- sc.Text()
	}()
	select {
	case l := <-said:
		if l != "written" {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("the process said %q: %s", l, stderr.String())
		}
	case <-time.After(time.Minute):
		cmd.Process.Kill()
		t.Fatalf("the process did not write: %s", stderr.String())
	}
	// Its transaction is open, with the instance's row written.
	var open int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()
		AND state = 'idle in transaction'`).Scan(&open); err != nil || open != 1 {
		t.Fatalf("%d transactions open before the kill, %v", open, err)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()

	// Nothing of it remains, and nothing waits on it: written again at once.
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	var orders int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM orders`).Scan(&orders); err != nil || orders != 0 {
		t.Fatalf("%d orders after the crash, %v", orders, err)
	}
	if l := mustLoad(t, s, "test.M", "o-9"); l.Version != 0 || len(l.Entries) != 0 {
		t.Fatalf("the instance after the crash: version %d, %d entries", l.Version, len(l.Entries))
	}
	e, err := s.PendingEffects(ctx, fsmrt.PendingQuery{Machine: "test.M"})
	if err != nil {
		t.Fatal(err)
	}
	d, err := s.PendingDeadlines(ctx, fsmrt.PendingQuery{Machine: "test.M"})
	if err != nil {
		t.Fatal(err)
	}
	if len(e) != 0 || len(d) != 0 {
		t.Fatalf("after the crash: %d effects, %d deadlines owed", len(e), len(d))
	}
	if _, found, err := s.FindKey(ctx, "test.M", "o-9", "place-o-9"); err != nil || found {
		t.Fatalf("the key after the crash: found %v, %v", found, err)
	}
	tx, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(context.Background())
	if _, err := tx.Exec(ctx, `INSERT INTO orders VALUES ('o-9', 95)`); err != nil {
		t.Fatalf("the order written again: %v", err)
	}
	if err := s.WithTx(tx).Commit(ctx, orderCommit("o-9", 1, "place-o-9")); err != nil {
		t.Fatalf("the machine committed again: %v", err)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if l := mustLoad(t, s, "test.M", "o-9"); l.Version != 1 {
		t.Fatalf("version %d after the commit", l.Version)
	}
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		t.Fatal("waited on the killed process's locks")
	}
}
