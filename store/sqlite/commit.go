package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	msqlite "modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/fsmgen/fsmgen/fsmrt"
)

// Statements of Commit.
const (
	selectHead = `SELECT spec, version FROM fsmgen_instances WHERE machine = ? AND id = ?`

	// The instance row keeps, besides what Load reads, when it was written (updated_at)
	// and the time of its last entry (last_at, which Find returns). A first commit
	// inserts nothing when the instance is there already.
	insertInstanceRow = `INSERT INTO fsmgen_instances
		(machine, id, spec, version, state, snapshot, snapshot_seq, updated_at, last_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (machine, id) DO NOTHING`

	// updateInstanceRow moves an instance on; updateInstanceSnapshot does so with a new
	// snapshot. Both match the version the commit expects and its spec or the spec it
	// migrates the instance from (NULL for none), and store its spec.
	updateInstanceRow = `UPDATE fsmgen_instances SET spec = ?, version = ?, state = ?, updated_at = ?, last_at = ?
		WHERE machine = ? AND id = ? AND version = ? AND spec IN (?, ?)`
	updateInstanceSnapshot = `UPDATE fsmgen_instances SET spec = ?, version = ?, state = ?, updated_at = ?, last_at = ?,
		snapshot = ?, snapshot_seq = ?
		WHERE machine = ? AND id = ? AND version = ? AND spec IN (?, ?)`

	insertEntryRow = `INSERT INTO fsmgen_entries
		(machine, id, seq, kind, event, from_state, to_state, at, idem_key, data)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`
)

// Commit writes c atomically if the instance is at c.Version, under SQLite's write lock
// (fsmrt.Store.Commit): the instance, its entry, the effects to the outbox, the deadlines
// and the counters. A refusal (ConflictError, SpecMismatchError, an invalid commit) changes
// nothing, and so does an error or a context done before the commit.
func (s *Store) Commit(ctx context.Context, c *fsmrt.Commit) error {
	if err := fsmrt.CheckCommit(c); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	var done []fsmrt.EffectID // completions queued, stored with c (group.go)
	var doneAt []time.Time
	err := s.writeTx(ctx, true, func(t *tx) error {
		if err := commitTx(ctx, t, c); err != nil {
			return err
		}
		if done, doneAt = s.group.Take(); len(done) > 0 {
			return completeEach(ctx, t, done, doneAt)
		}
		return nil
	})
	if err != nil {
		s.group.GiveBack(done, doneAt)
	}
	if err == nil {
		s.notify(c)
	}
	if err == nil || refusal(err) {
		return err
	}
	return fmt.Errorf("sqlite store: commit %s %s seq %d: %w", c.Machine, c.ID, c.Entry.Seq, corrupt(err))
}

// refusal reports whether err is Commit refusing the commit, which it returns as it is.
func refusal(err error) bool {
	var conflict *fsmrt.ConflictError
	var spec *fsmrt.SpecMismatchError
	return errors.As(err, &conflict) || errors.As(err, &spec)
}

// commitTx writes c inside the caller's transaction holding the write lock, and returns
// the refusal of c, if any, once a write finds it: the instance's spec and version (the
// write of the instance matches both), the idempotency key (the entry's unique index) and
// the deadline c handles, in that order. The caller rolls a refused commit back.
func commitTx(ctx context.Context, t *tx, c *fsmrt.Commit) error {
	written, err := writeInstance(ctx, t, c)
	if err != nil {
		return err
	}
	if !written {
		return whyRefused(ctx, t, c)
	}
	if err := insertEntry(ctx, t, c.Machine, c.ID, &c.Entry); err != nil {
		if keyTaken(err) {
			return &fsmrt.ConflictError{Machine: c.Machine, ID: c.ID, Version: c.Version, Stored: c.Version, Key: c.Entry.Key}
		}
		return err
	}
	if err := writeDeadlines(ctx, t, c); err != nil {
		return err
	}
	if err := insertEffects(ctx, t, c); err != nil {
		return err
	}
	return writeCounters(ctx, t, c)
}

// writeInstance inserts the instance of a first commit (c.Version 0), or moves a stored
// one on from c.Version under c's spec (or c.Migrated, which c's spec then replaces), and
// reports whether it did.
func writeInstance(ctx context.Context, t *tx, c *fsmrt.Commit) (bool, error) {
	now, last := time.Now().UnixMicro(), c.Entry.At.UnixMicro()
	var query string
	var args []any
	switch {
	case c.Version == 0:
		var snapSeq int64
		if c.Snapshot != nil {
			snapSeq = c.Entry.Seq
		}
		query, args = insertInstanceRow, []any{c.Machine, c.ID, c.Spec, c.Entry.Seq, c.State, c.Snapshot, snapSeq, now, last}
	case c.Snapshot != nil:
		query, args = updateInstanceSnapshot, []any{c.Spec, c.Entry.Seq, c.State, now, last, c.Snapshot, c.Entry.Seq,
			c.Machine, c.ID, c.Version, c.Spec, nullString(c.Migrated)}
	default:
		query, args = updateInstanceRow, []any{c.Spec, c.Entry.Seq, c.State, now, last,
			c.Machine, c.ID, c.Version, c.Spec, nullString(c.Migrated)}
	}
	res, err := t.ExecContext(ctx, query, args...)
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

// whyRefused returns the refusal of a commit whose instance write changed nothing: a
// SpecMismatchError when the instance is stored under another spec than c's and the one
// c migrates it from, else a ConflictError with the version stored (0 for none).
func whyRefused(ctx context.Context, q querier, c *fsmrt.Commit) error {
	stored, exists, err := storedHead(ctx, q, c.Machine, c.ID)
	switch {
	case err != nil:
		return err
	case exists && stored.spec != c.Spec && (c.Migrated == "" || stored.spec != c.Migrated):
		return &fsmrt.SpecMismatchError{Machine: c.Machine, ID: c.ID, Stored: stored.spec, Spec: c.Spec}
	case stored.version == c.Version:
		return fmt.Errorf("the instance is at version %d under a spec the commit accepts, yet was not written", stored.version)
	}
	return &fsmrt.ConflictError{Machine: c.Machine, ID: c.ID, Version: c.Version, Stored: stored.version}
}

// keyTaken reports whether err is the refusal of an entry by the unique index of the
// idempotency keys.
func keyTaken(err error) bool {
	var e *msqlite.Error
	return errors.As(err, &e) && e.Code()&0xff == sqlite3.SQLITE_CONSTRAINT && strings.Contains(e.Error(), "idem_key")
}

// head is the part of an instance's row a commit checks.
type head struct {
	spec    string
	version int64
}

// storedHead returns the spec and version of instance (machine, id), and whether it is
// stored at all.
func storedHead(ctx context.Context, q querier, machine, id string) (h head, found bool, err error) {
	err = eachRow(ctx, q, selectHead, []any{machine, id}, func(rows *sql.Rows) error {
		found = true
		return scan(rows, &h.spec, &h.version)
	})
	return h, found, err
}

// insertEntry appends e to the log of instance (machine, id).
func insertEntry(ctx context.Context, t *tx, machine, id string, e *fsmrt.Entry) error {
	_, err := t.ExecContext(ctx, insertEntryRow,
		machine, id, e.Seq, e.Kind, e.Event, e.From, e.To, e.At.UnixMicro(), nullString(e.Key), e.Data)
	return err
}

// nullString is s, or NULL when s is empty.
func nullString(s string) sql.NullString {
	return sql.NullString{String: s, Valid: s != ""}
}
