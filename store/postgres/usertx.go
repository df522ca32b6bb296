package postgres

import (
	"context"
	"errors"
	"regexp"

	"github.com/fsmgen/fsmgen/fsmrt"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// WithTx returns the store as seen from tx, a transaction the caller began on the store's
// database (with its own pool or connection): a machine whose store it is commits each
// transition (its log entry, the effects of its outbox, its deadlines and counters) in tx,
// beside whatever else the caller writes there, and loads its instances through tx,
// seeing what tx wrote. Nothing is stored until the caller commits tx. If the caller
// rolls tx back, nothing of those transitions remains, and each machine that made one is
// ahead of its store: its next commit is refused with a *fsmrt.ConflictError (errors.Is
// fsmrt.ErrStoreConflict), and it is loaded again (Replay) to go on. A commit the store
// refuses (a conflict, an idempotency key used already, another spec) is rolled back to a
// savepoint of its own, leaving tx usable, and returns the same error a plain commit
// returns. Claims, completions, queries and the pending reads are the store's own,
// outside tx.
func (s *Store) WithTx(tx pgx.Tx) fsmrt.Store {
	inner := *s
	inner.sql = inTx(s.sql)
	return &txStore{Store: &inner, tx: tx}
}

// txStore is a Store committing in a transaction of the caller's.
type txStore struct {
	*Store
	tx pgx.Tx
}

// written matches the condition the statements of a commit after the instance's write
// add, that this transaction wrote the instance (sqlWritten, qualified by any schema):
// inside a savepoint the row's xmin is the savepoint's own transaction ID, not the one
// pg_current_xact_id_if_assigned returns, so a commit in the caller's transaction writes
// the instance first and sends the rest only once it is written.
var writtenCond = regexp.MustCompile(`EXISTS \(SELECT 1 FROM \S*fsmgen_instances\s+WHERE machine = \$1::text AND id = \$2::text AND xmin = pg_current_xact_id_if_assigned\(\)::xid\)`)

// inTx returns the statements of a commit in the caller's transaction.
func inTx(st statements) statements {
	for _, p := range []*string{&st.insertEffects, &st.handleFired, &st.disarm, &st.arm, &st.clearCounters, &st.setCounters, &st.changeCounters, &st.notify} {
		*p = writtenCond.ReplaceAllLiteralString(*p, "TRUE")
	}
	return st
}

// Commit writes c in the caller's transaction, inside a savepoint: the instance and its
// entry, then (once they are written) the rest, in two round trips (fsmrt.Store.Commit).
func (s *txStore) Commit(ctx context.Context, c *fsmrt.Commit) error {
	if err := fsmrt.CheckCommit(c); err != nil {
		return err
	}
	sp, err := s.tx.Begin(ctx) // a savepoint
	if err != nil {
		return failed("commit in the caller's transaction", c.Machine, c.ID, err)
	}
	w := written{fired: c.Fired == ""}
	var b pgx.Batch
	sql, args := s.sql.commitFirst, commitArgs(c)
	if c.Version > 0 {
		sql, args = s.sql.commitNext, append(args, orNull(c.Migrated))
	}
	b.Queue(sql, args...).Exec(func(tag pgconn.CommandTag) error {
		w.instance = tag.RowsAffected() == 1
		return nil
	})
	err = sp.SendBatch(ctx, &b).Close()
	if err == nil && w.instance {
		var rest pgx.Batch
		if len(c.Effects) > 0 {
			rest.Queue(s.sql.insertEffects, effectArgs(c)...)
		}
		s.queueDeadlines(&rest, c, &w)
		s.queueCounters(&rest, c)
		s.queueNotify(&rest, c)
		if rest.Len() > 0 {
			err = sp.SendBatch(ctx, &rest).Close()
		}
	}
	if err != nil || !w.instance || !w.fired {
		if rerr := sp.Rollback(ctx); rerr != nil {
			return failed("commit in the caller's transaction (undoing it)", c.Machine, c.ID, errors.Join(err, rerr))
		}
		return s.refusedIn(ctx, s.tx, c, w, err)
	}
	if err := sp.Commit(ctx); err != nil { // releases the savepoint
		return failed("commit in the caller's transaction", c.Machine, c.ID, err)
	}
	return nil
}

// Load reads the instance through the caller's transaction (fsmrt.Store.Load).
func (s *txStore) Load(ctx context.Context, machine, id string) (fsmrt.Loaded, error) {
	var l fsmrt.Loaded
	var b pgx.Batch
	b.Queue(s.sql.instance, machine, id).QueryRow(func(row pgx.Row) error {
		err := row.Scan(&l.Version, &l.Spec, &l.State, &l.Snapshot, &l.SnapshotSeq)
		if errors.Is(err, pgx.ErrNoRows) {
			return nil
		}
		return err
	})
	b.Queue(s.sql.entriesAfterSnapshot, machine, id).Query(func(rows pgx.Rows) (err error) {
		l.Entries, err = scanEntries(rows)
		return err
	})
	if err := s.tx.SendBatch(ctx, &b).Close(); err != nil {
		return fsmrt.Loaded{}, failed("load", machine, id, err)
	}
	if err := checkLoaded(&l); err != nil {
		return fsmrt.Loaded{}, failed("load", machine, id, err)
	}
	return l, nil
}

// Log reads the entries through the caller's transaction (fsmrt.Store.Log).
func (s *txStore) Log(ctx context.Context, machine, id string, after int64) ([]fsmrt.Entry, error) {
	rows, err := s.tx.Query(ctx, s.sql.log, machine, id, after)
	if err != nil {
		return nil, failed("log", machine, id, err)
	}
	log, err := scanEntries(rows)
	if err != nil {
		return nil, failed("log", machine, id, err)
	}
	return log, nil
}

// FindKey looks the key up through the caller's transaction (fsmrt.Store.FindKey).
func (s *txStore) FindKey(ctx context.Context, machine, id, key string) (fsmrt.Entry, bool, error) {
	if key == "" {
		return fsmrt.Entry{}, false, ctx.Err()
	}
	var e fsmrt.Entry
	err := scanEntry(s.tx.QueryRow(ctx, s.sql.findKey, machine, id, key), &e)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return fsmrt.Entry{}, false, nil
	case err != nil:
		return fsmrt.Entry{}, false, failed("find key", machine, id, err)
	}
	return e, true, nil
}

// InCallersTx marks the store as committing in the caller's transaction (fsmrt.CallersTx):
// a machine delivers none of its effects itself, and checks it is stored once the
// transaction is over.
func (s *txStore) InCallersTx() {}

var _ fsmrt.CallersTx = (*txStore)(nil)
