package sqlite

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/fsmgen/fsmgen/fsmrt"
)

// DB returns the store's database, for the program's own tables: rows that change with a
// machine's transitions live in the same file and commit with them (WithTx).
func (s *Store) DB() *sql.DB { return s.db }

// BeginTx begins a transaction on the store's database holding SQLite's write lock from
// its first statement, waiting for it as the store's own commits do: a transaction that
// reads first and writes later may otherwise find another writer got there in between, and
// fail. Use it for the transactions that machines commit in (WithTx). It begins on a
// connection of the pool, outside the store's turn to write, so it waits for the store's
// writes in SQLite's busy handler: InTx, which runs in that turn, is the cheaper way.
func (s *Store) BeginTx(ctx context.Context) (*sql.Tx, error) {
	t, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("sqlite store: begin: %w", corrupt(err))
	}
	if _, err := t.ExecContext(ctx, lockWrite); err != nil {
		_ = t.Rollback()
		return nil, fmt.Errorf("sqlite store: begin: %w", corrupt(err))
	}
	return t, nil
}

// WithTx returns the store as seen from t, a transaction the caller began on the store's
// database (BeginTx): a machine whose store it is commits each transition (its log entry,
// the effects of its outbox, its deadlines and counters) in t, beside whatever else the
// caller writes there, and loads its instances through t, seeing what t wrote. Nothing is
// stored until the caller commits t. If the caller rolls t back, nothing of those
// transitions remains, and each machine that made one is ahead of its store: its next
// commit is refused with a *fsmrt.ConflictError (errors.Is fsmrt.ErrStoreConflict), and
// it is loaded again (Replay) to go on. A commit the store refuses (a conflict, an
// idempotency key used already, another spec) is undone to a savepoint, leaving t as it
// was and usable, and returns the same error a plain commit returns. Claims, completions,
// queries and the pending reads are the store's own, outside t.
func (s *Store) WithTx(t *sql.Tx) fsmrt.Store { return &txStore{Store: s, tx: &tx{tx: t}} }

// txStore is a Store committing in a transaction of the caller's.
type txStore struct {
	*Store
	tx *tx
	// woke, in a transaction of InTx, collects the machines whose commits wake the
	// watches once it commits (wake.go).
	woke *[]string
}

// savepoint names the savepoint a commit in the caller's transaction rolls back to.
const savepoint = "fsmgen_commit"

// Commit writes c in the caller's transaction (fsmrt.Store.Commit).
func (s *txStore) Commit(ctx context.Context, c *fsmrt.Commit) error {
	if err := fsmrt.CheckCommit(c); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if _, err := s.tx.ExecContext(ctx, "SAVEPOINT "+savepoint); err != nil {
		return fmt.Errorf("sqlite store: commit %s %s seq %d in the caller's transaction: %w", c.Machine, c.ID, c.Entry.Seq, corrupt(err))
	}
	err := commitTx(ctx, s.tx, c)
	if err != nil {
		if _, rerr := s.tx.ExecContext(ctx, "ROLLBACK TO "+savepoint); rerr != nil {
			return fmt.Errorf("sqlite store: commit %s %s seq %d in the caller's transaction: %w (and undoing it: %v)", c.Machine, c.ID, c.Entry.Seq, corrupt(err), rerr)
		}
	}
	if _, rerr := s.tx.ExecContext(ctx, "RELEASE "+savepoint); rerr != nil && err == nil {
		err = rerr
	}
	if err == nil && s.woke != nil && fsmrt.CommitWakes(c) {
		*s.woke = append(*s.woke, c.Machine)
	}
	if err == nil || refusal(err) {
		return err
	}
	return fmt.Errorf("sqlite store: commit %s %s seq %d in the caller's transaction: %w", c.Machine, c.ID, c.Entry.Seq, corrupt(err))
}

// Load reads the instance through the caller's transaction (fsmrt.Store.Load).
func (s *txStore) Load(ctx context.Context, machine, id string) (fsmrt.Loaded, error) {
	l, err := load(ctx, s.tx, machine, id)
	if err != nil {
		return fsmrt.Loaded{}, fmt.Errorf("sqlite store: load %s %s: %w", machine, id, corrupt(err))
	}
	return l, nil
}

// Log reads the entries through the caller's transaction (fsmrt.Store.Log).
func (s *txStore) Log(ctx context.Context, machine, id string, after int64) ([]fsmrt.Entry, error) {
	h, exists, err := storedHead(ctx, s.tx, machine, id)
	if err != nil || !exists {
		return nil, err
	}
	log, err := entriesAfter(ctx, s.tx, machine, id, max(after, 0), h.version)
	if err != nil {
		return nil, fmt.Errorf("sqlite store: log of %s %s: %w", machine, id, corrupt(err))
	}
	return log, nil
}

// FindKey looks the key up through the caller's transaction (fsmrt.Store.FindKey).
func (s *txStore) FindKey(ctx context.Context, machine, id, key string) (fsmrt.Entry, bool, error) {
	if err := ctx.Err(); err != nil || key == "" {
		return fsmrt.Entry{}, false, err
	}
	var e fsmrt.Entry
	found := false
	err := eachRow(ctx, s.tx, selectKeyEntry, []any{machine, id, key}, func(rows *sql.Rows) (err error) {
		e, err = scanEntry(rows)
		found = true
		return err
	})
	if err != nil {
		return fsmrt.Entry{}, false, fmt.Errorf("sqlite store: find key %q of %s %s: %w", key, machine, id, corrupt(err))
	}
	return e, found, nil
}

// InCallersTx marks the store as committing in the caller's transaction (fsmrt.CallersTx):
// a machine delivers none of its effects itself, and checks it is stored once the
// transaction is over.
func (s *txStore) InCallersTx() {}

var _ fsmrt.CallersTx = (*txStore)(nil)
