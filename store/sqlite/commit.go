package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/fsmgen/fsmgen/fsmrt"
)

// Statements of Commit.
const (
	selectHead = `SELECT spec, version FROM fsmgen_instances WHERE machine = ? AND id = ?`

	selectKeyUsed = `SELECT EXISTS (SELECT 1 FROM fsmgen_entries
		WHERE machine = ? AND id = ? AND idem_key = ?)`

	// The instance row keeps, besides what Load reads, when it was written (updated_at)
	// and the time of its last entry (last_at, which Find returns).
	insertInstanceRow = `INSERT INTO fsmgen_instances
		(machine, id, spec, version, state, snapshot, snapshot_seq, updated_at, last_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`

	// updateInstanceRow moves an instance on; updateInstanceSnapshot does so with a new
	// snapshot. Both match the version the commit expects.
	updateInstanceRow = `UPDATE fsmgen_instances SET version = ?, state = ?, updated_at = ?, last_at = ?
		WHERE machine = ? AND id = ? AND version = ?`
	updateInstanceSnapshot = `UPDATE fsmgen_instances SET version = ?, state = ?, updated_at = ?, last_at = ?,
		snapshot = ?, snapshot_seq = ?
		WHERE machine = ? AND id = ? AND version = ?`

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
	err := s.write(ctx, func(conn *sql.Conn) error { return commitTx(ctx, conn, c) })
	if err == nil || refusal(err) {
		return err
	}
	return fmt.Errorf("sqlite store: commit %s %s seq %d: %w", c.Machine, c.ID, c.Entry.Seq, err)
}

// refusal reports whether err is Commit refusing the commit, which it returns as it is.
func refusal(err error) bool {
	var conflict *fsmrt.ConflictError
	var spec *fsmrt.SpecMismatchError
	return errors.As(err, &conflict) || errors.As(err, &spec)
}

// commitTx checks c against the stored instance and, when every check passes, writes
// it, inside the caller's transaction holding the write lock.
func commitTx(ctx context.Context, conn *sql.Conn, c *fsmrt.Commit) error {
	exists, err := checkCommit(ctx, conn, c)
	if err != nil {
		return err
	}
	if exists {
		err = updateInstance(ctx, conn, c)
	} else {
		err = insertInstance(ctx, conn, c)
	}
	if err == nil {
		err = insertEntry(ctx, conn, c.Machine, c.ID, &c.Entry)
	}
	if err == nil {
		err = writeDeadlines(ctx, conn, c)
	}
	if err == nil {
		err = insertEffects(ctx, conn, c)
	}
	if err == nil {
		err = writeCounters(ctx, conn, c)
	}
	return err
}

// checkCommit returns the refusal of c, if any: the instance's spec, version, the
// idempotency key and the deadline c handles, checked in that order. It reports whether
// the instance is stored.
func checkCommit(ctx context.Context, q querier, c *fsmrt.Commit) (exists bool, err error) {
	stored, exists, err := storedHead(ctx, q, c.Machine, c.ID)
	switch {
	case err != nil:
		return false, err
	case exists && stored.spec != c.Spec:
		return false, &fsmrt.SpecMismatchError{Machine: c.Machine, ID: c.ID, Stored: stored.spec, Spec: c.Spec}
	case stored.version != c.Version:
		return false, &fsmrt.ConflictError{Machine: c.Machine, ID: c.ID, Version: c.Version, Stored: stored.version}
	}
	if err := checkKey(ctx, q, c); err != nil {
		return false, err
	}
	return exists, checkFired(ctx, q, c)
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

// checkKey returns a ConflictError when an entry of the instance already used the
// idempotency key of c.
func checkKey(ctx context.Context, q querier, c *fsmrt.Commit) error {
	key := c.Entry.Key
	if key == "" {
		return nil
	}
	var used bool
	err := q.QueryRowContext(ctx, selectKeyUsed, c.Machine, c.ID, key).Scan(&used)
	if err != nil || !used {
		return err
	}
	return &fsmrt.ConflictError{Machine: c.Machine, ID: c.ID, Version: c.Version, Stored: c.Version, Key: key}
}

// insertInstance stores the first commit of an instance.
func insertInstance(ctx context.Context, conn *sql.Conn, c *fsmrt.Commit) error {
	var snapSeq int64
	if c.Snapshot != nil {
		snapSeq = c.Entry.Seq
	}
	_, err := conn.ExecContext(ctx, insertInstanceRow,
		c.Machine, c.ID, c.Spec, c.Entry.Seq, c.State, c.Snapshot, snapSeq, time.Now().UnixMicro(), c.Entry.At.UnixMicro())
	return err
}

// updateInstance moves a stored instance at c.Version on to c.
func updateInstance(ctx context.Context, conn *sql.Conn, c *fsmrt.Commit) error {
	query, args := updateInstanceRow, []any{c.Entry.Seq, c.State, time.Now().UnixMicro(), c.Entry.At.UnixMicro()}
	if c.Snapshot != nil {
		query, args = updateInstanceSnapshot, append(args, c.Snapshot, c.Entry.Seq)
	}
	res, err := conn.ExecContext(ctx, query, append(args, c.Machine, c.ID, c.Version)...)
	if err != nil {
		return err
	}
	n, err := res.RowsAffected()
	if err != nil {
		return err
	}
	if n != 1 {
		return fmt.Errorf("updated %d instance rows, want 1", n)
	}
	return nil
}

// insertEntry appends e to the log of instance (machine, id).
func insertEntry(ctx context.Context, conn *sql.Conn, machine, id string, e *fsmrt.Entry) error {
	_, err := conn.ExecContext(ctx, insertEntryRow,
		machine, id, e.Seq, e.Kind, e.Event, e.From, e.To, e.At.UnixMicro(), nullString(e.Key), e.Data)
	return err
}

// nullString is s, or NULL when s is empty.
func nullString(s string) sql.NullString {
	return sql.NullString{String: s, Valid: s != ""}
}
