package scaleout

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/fsmgen/fsmgen/fsmrt"
)

// The same-work floor: the durable writes of a commit (fsmrt.Commit, as Redo makes them
// again) written by hand, the way a careful engineer writes them for the same guarantees,
// in one transaction per transition on the store's own tables:
//
//   - the instance moved on by compare-and-set on its version (inserted, for a new one),
//     with its snapshot;
//   - the log entry, whose idempotency key the entries' unique index records;
//   - the effects, into the outbox;
//   - the deadline the commit handles, marked handled (and refused when it is not there);
//   - on a rearm, the instance's deadlines deleted and the new ones inserted;
//   - the counters the transition changed, upserted, or deleted when back to zero.
//
// On PostgreSQL all of it is one batch that begins the transaction, and the COMMIT a
// second round trip, after the rows changed are checked (the store's commit takes the
// same two). On SQLite the statements are prepared once, on one connection, and run
// between BEGIN IMMEDIATE and COMMIT, as the store's are. What the floor leaves out, and
// the workers do, is everything around the writes: the machine, loading and catching up,
// the conflicts, claiming deadlines, delivering effects, waking other processes.

// SameWork writes commits by hand on one database (the same-work floor).
type SameWork struct {
	db *DB
	// SQLite: the floor's connection, and its statements prepared on it.
	conn  *sql.Conn
	stmts map[string]*sql.Stmt
}

// NewSameWork returns the same-work floor on db. Close it before db.
func NewSameWork(ctx context.Context, db *DB) (*SameWork, error) {
	w := &SameWork{db: db}
	if db.pool != nil {
		return w, nil
	}
	conn, err := db.file.Conn(ctx)
	if err != nil {
		return nil, err
	}
	w.conn, w.stmts = conn, map[string]*sql.Stmt{}
	for _, q := range sqliteSameWork {
		st, err := conn.PrepareContext(ctx, q)
		if err != nil {
			w.Close()
			return nil, fmt.Errorf("prepare %.40q: %w", q, err)
		}
		w.stmts[q] = st
	}
	return w, nil
}

// Close releases the floor's statements and connection.
func (w *SameWork) Close() {
	for _, st := range w.stmts {
		st.Close()
	}
	if w.conn != nil {
		w.conn.Close()
	}
}

// The statements of the same-work floor, with ? placeholders (numbered for PostgreSQL).
const (
	swCreate = `INSERT INTO fsmgen_instances (machine, id, spec, version, state, snapshot, snapshot_seq, updated_at, last_at)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`
	swMove = `UPDATE fsmgen_instances SET version = ?, state = ?, updated_at = ?, last_at = ?, snapshot = ?, snapshot_seq = ?
WHERE machine = ? AND id = ? AND version = ?`
	swMoveKeep = `UPDATE fsmgen_instances SET version = ?, state = ?, updated_at = ?, last_at = ?
WHERE machine = ? AND id = ? AND version = ?`
	swEntry = `INSERT INTO fsmgen_entries (machine, id, seq, kind, event, from_state, to_state, at, idem_key, data)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`
	swEffect = `INSERT INTO fsmgen_effects (machine, id, seq, idx, name, idem_key, data, owner, leased_until, attempts, committed_at)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`
	swHandled = `UPDATE fsmgen_deadlines SET handled_at = ? WHERE machine = ? AND id = ? AND name = ? AND handled_at IS NULL`
	swDisarm  = `DELETE FROM fsmgen_deadlines WHERE machine = ? AND id = ?`
	swArm     = `INSERT INTO fsmgen_deadlines (machine, id, name, at, state, event, level) VALUES (?, ?, ?, ?, ?, ?, ?)`
	swCount   = `INSERT INTO fsmgen_counters (machine, id, name, state, value) VALUES (?, ?, ?, ?, ?)
ON CONFLICT (machine, id, name, state) DO UPDATE SET value = excluded.value`
	swUncount     = `DELETE FROM fsmgen_counters WHERE machine = ? AND id = ? AND name = ? AND state = ?`
	swClearCounts = `DELETE FROM fsmgen_counters WHERE machine = ? AND id = ?`
)

// sqliteSameWork are the statements SQLite prepares.
var sqliteSameWork = []string{swCreate, swMove, swMoveKeep, swEntry, swEffect, swHandled, swDisarm, swArm, swCount, swUncount, swClearCounts}

// PostgreSQL writes the effects, the deadlines and the counters of a commit each with one
// statement over arrays.
const (
	pgEffects = `INSERT INTO fsmgen_effects (machine, id, seq, idx, name, idem_key, data, owner, leased_until, attempts, committed_at)
SELECT $1, $2, $3, f.ord - 1, f.name, f.key, f.data, $4, $5, $6, $7
FROM unnest($8::text[], $9::text[], $10::bytea[]) WITH ORDINALITY AS f(name, key, data, ord)`
	pgArm = `INSERT INTO fsmgen_deadlines (machine, id, name, at, state, event, level)
SELECT $1, $2, d.name, d.at, d.state, d.event, d.level
FROM unnest($3::text[], $4::timestamptz[], $5::text[], $6::text[], $7::int[]) AS d(name, at, state, event, level)`
	pgCount = `INSERT INTO fsmgen_counters (machine, id, name, state, value)
SELECT $1, $2, c.name, c.state, c.value FROM unnest($3::text[], $4::text[], $5::bigint[]) AS c(name, state, value)
ON CONFLICT (machine, id, name, state) DO UPDATE SET value = excluded.value`
	pgUncount = `DELETE FROM fsmgen_counters WHERE machine = $1 AND id = $2 AND (name, state) IN
(SELECT * FROM unnest($3::text[], $4::text[]))`
)

// errSameWorkRefused says the floor found the instance at another version, or the
// deadline a commit handles missing or handled.
var errSameWorkRefused = errors.New("same-work floor: refused")

// Commit writes c by hand in one transaction.
func (w *SameWork) Commit(ctx context.Context, c *fsmrt.Commit) error {
	if w.db.pool != nil {
		return w.commitPostgres(ctx, c)
	}
	return w.commitSQLite(ctx, c)
}

// commitSQLite writes c between BEGIN IMMEDIATE and COMMIT on the floor's connection.
func (w *SameWork) commitSQLite(ctx context.Context, c *fsmrt.Commit) error {
	if _, err := w.conn.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		return err
	}
	if err := w.writeSQLite(ctx, c); err != nil {
		_, _ = w.conn.ExecContext(context.WithoutCancel(ctx), "ROLLBACK")
		return err
	}
	_, err := w.conn.ExecContext(ctx, "COMMIT")
	return err
}

// writeSQLite runs the statements of c, refusing it when a row it must change is not
// there.
func (w *SameWork) writeSQLite(ctx context.Context, c *fsmrt.Commit) error {
	exec := func(q string, want int64, args ...any) error {
		res, err := w.stmts[q].ExecContext(ctx, args...)
		if err != nil || want < 0 {
			return err
		}
		if n, err := res.RowsAffected(); err != nil || n != want {
			return orRefused(err)
		}
		return nil
	}
	e := &c.Entry
	now, at := time.Now().UnixMicro(), e.At.UnixMicro()
	var err error
	switch {
	case c.Version == 0:
		err = exec(swCreate, 1, c.Machine, c.ID, c.Spec, e.Seq, c.State, c.Snapshot, snapshotSeq(c), now, at)
	case c.Snapshot != nil:
		err = exec(swMove, 1, e.Seq, c.State, now, at, c.Snapshot, e.Seq, c.Machine, c.ID, c.Version)
	default:
		err = exec(swMoveKeep, 1, e.Seq, c.State, now, at, c.Machine, c.ID, c.Version)
	}
	if err != nil {
		return err
	}
	if err := exec(swEntry, 1, c.Machine, c.ID, e.Seq, e.Kind, e.Event, e.From, e.To, at, nullKey(e.Key), e.Data); err != nil {
		return err
	}
	owner, lease, attempts := effectLease(c)
	for i, f := range c.Effects {
		var until any
		if lease != nil {
			until = lease.UnixMicro()
		}
		if err := exec(swEffect, 1, c.Machine, c.ID, e.Seq, i, f.Name, f.Key, f.Data, owner, until, attempts, at); err != nil {
			return err
		}
	}
	if c.Fired != "" {
		if err := exec(swHandled, 1, at, c.Machine, c.ID, c.Fired); err != nil {
			return err
		}
	}
	if c.Rearm {
		if err := exec(swDisarm, -1, c.Machine, c.ID); err != nil {
			return err
		}
		for _, d := range c.Deadlines {
			if err := exec(swArm, 1, c.Machine, c.ID, d.Name, d.At.UnixMicro(), d.State, d.Event, d.Level); err != nil {
				return err
			}
		}
	}
	set, unset, clear := counterWrites(c)
	if clear {
		if err := exec(swClearCounts, -1, c.Machine, c.ID); err != nil {
			return err
		}
	}
	for _, v := range set {
		if err := exec(swCount, 1, c.Machine, c.ID, v.Name, v.State, v.Value); err != nil {
			return err
		}
	}
	for _, v := range unset {
		if err := exec(swUncount, -1, c.Machine, c.ID, v.Name, v.State); err != nil {
			return err
		}
	}
	return nil
}

// commitPostgres sends c's statements in one batch that begins the transaction, checks
// the rows they changed, and commits.
func (w *SameWork) commitPostgres(ctx context.Context, c *fsmrt.Commit) error {
	e := &c.Entry
	now := time.Now()
	var b pgx.Batch
	b.BeginTx(pgx.TxOptions{})
	refused := false
	want := func(q *pgx.QueuedQuery) {
		q.Exec(func(tag pgconn.CommandTag) error {
			if tag.RowsAffected() == 0 {
				refused = true
			}
			return nil
		})
	}
	switch {
	case c.Version == 0:
		want(b.Queue(numbered(swCreate), c.Machine, c.ID, c.Spec, e.Seq, c.State, c.Snapshot, snapshotSeq(c), now, e.At))
	case c.Snapshot != nil:
		want(b.Queue(numbered(swMove), e.Seq, c.State, now, e.At, c.Snapshot, e.Seq, c.Machine, c.ID, c.Version))
	default:
		want(b.Queue(numbered(swMoveKeep), e.Seq, c.State, now, e.At, c.Machine, c.ID, c.Version))
	}
	b.Queue(numbered(swEntry), c.Machine, c.ID, e.Seq, e.Kind, e.Event, e.From, e.To, e.At, nullKey(e.Key), e.Data)
	if len(c.Effects) > 0 {
		owner, lease, attempts := effectLease(c)
		names, keys, data := make([]string, len(c.Effects)), make([]string, len(c.Effects)), make([][]byte, len(c.Effects))
		for i, f := range c.Effects {
			names[i], keys[i], data[i] = f.Name, f.Key, f.Data
		}
		b.Queue(pgEffects, c.Machine, c.ID, e.Seq, owner, lease, attempts, e.At, names, keys, data)
	}
	if c.Fired != "" {
		want(b.Queue(numbered(swHandled), e.At, c.Machine, c.ID, c.Fired))
	}
	if c.Rearm {
		b.Queue(numbered(swDisarm), c.Machine, c.ID)
		if len(c.Deadlines) > 0 {
			n := len(c.Deadlines)
			names, ats, states, events, levels := make([]string, n), make([]time.Time, n), make([]string, n), make([]string, n), make([]int32, n)
			for i, d := range c.Deadlines {
				names[i], ats[i], states[i], events[i], levels[i] = d.Name, d.At, d.State, d.Event, int32(d.Level)
			}
			b.Queue(pgArm, c.Machine, c.ID, names, ats, states, events, levels)
		}
	}
	set, unset, clear := counterWrites(c)
	if clear {
		b.Queue(numbered(swClearCounts), c.Machine, c.ID)
	}
	if len(set) > 0 {
		names, states, values := counterArrays(set)
		b.Queue(pgCount, c.Machine, c.ID, names, states, values)
	}
	if len(unset) > 0 {
		names, states, _ := counterArrays(unset)
		b.Queue(pgUncount, c.Machine, c.ID, names, states)
	}
	br := w.db.pool.SendBatch(ctx, &b)
	err := br.Close()
	tx := br.Tx()
	if err == nil && refused {
		err = errSameWorkRefused
	}
	if err != nil {
		_ = tx.Rollback(context.WithoutCancel(ctx))
		return err
	}
	return tx.Commit(ctx)
}

// snapshotSeq is the snapshot_seq of a new instance's row.
func snapshotSeq(c *fsmrt.Commit) int64 {
	if c.Snapshot != nil {
		return c.Entry.Seq
	}
	return 0
}

// nullKey is an idempotency key, NULL for none.
func nullKey(key string) any {
	if key == "" {
		return nil
	}
	return key
}

// effectLease returns the owner, lease and attempts of c's effects, as the stores write
// them: leased to c.Owner, one attempt counted, when the committer delivers them.
func effectLease(c *fsmrt.Commit) (owner any, until *time.Time, attempts int) {
	if c.Owner == "" {
		return nil, nil, 0
	}
	t := c.LeaseUntil
	return c.Owner, &t, 1
}

// counterWrites returns the counters c sets and those it sets back to zero; clear says
// every counter of the instance is deleted first (a commit that does not say which it
// changed).
func counterWrites(c *fsmrt.Commit) (set, unset []fsmrt.CounterValue, clear bool) {
	switch {
	case c.CountersKept:
		return nil, nil, false
	case c.CountersDelta:
		for _, v := range c.CountersChanged {
			if v.Value == 0 {
				unset = append(unset, v)
			} else {
				set = append(set, v)
			}
		}
		return set, unset, false
	}
	return c.Counters, nil, true
}

// counterArrays returns the names, states and values of vs.
func counterArrays(vs []fsmrt.CounterValue) (names, states []string, values []int64) {
	for _, v := range vs {
		names, states, values = append(names, v.Name), append(states, v.State), append(values, int64(v.Value))
	}
	return names, states, values
}

// orRefused returns err, or else errSameWorkRefused.
func orRefused(err error) error {
	if err != nil {
		return err
	}
	return errSameWorkRefused
}
