package scaleout

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	_ "modernc.org/sqlite" // the driver of the proof's own connection to a SQLite file

	"github.com/fsmgen/fsmgen/fsmrt"
	"github.com/fsmgen/fsmgen/store/postgres"
	"github.com/fsmgen/fsmgen/store/sqlite"
)

// The stores a run can use.
const (
	SQLite   = "sqlite"
	Postgres = "postgres"
)

// DB is one database of a run: the fsmrt.Store on it, and the proof's own access to the
// same database, for what it keeps beside the store (the deliveries table), what it reads
// of the store's tables directly (the outbox, the deadlines) and the floor's hand-written
// commits. On SQLite the proof has a connection of its own to the file; on PostgreSQL the
// store and the proof share one pool.
type DB struct {
	Kind  string // SQLite or Postgres
	Store fsmrt.Store
	file  *sql.DB       // SQLite
	pool  *pgxpool.Pool // PostgreSQL
	close func()
	// stmts are the proof's statements prepared on file, once each (pgx prepares and
	// keeps those it runs on its own).
	mu    sync.Mutex
	stmts map[string]*sql.Stmt
	// deliver is Deliver's statement on SQLite, prepared on the store's database.
	deliver *sql.Stmt
}

// Open opens the database where (a SQLite file, or a PostgreSQL DSN) of kind, migrating
// the store's schema. SQLite runs with synchronous=NORMAL: a crash of a process loses
// nothing, a power loss may lose the last commits (the PostgreSQL of the tests runs
// without fsync alike). Group, when not zero, is the stores' WithGroupedCompletions.
func Open(ctx context.Context, kind, where string, group ...time.Duration) (*DB, error) {
	var within time.Duration
	if len(group) > 0 {
		within = group[0]
	}
	switch kind {
	case SQLite:
		return openSQLite(ctx, where, sqlite.WithSynchronousNormal(), sqlite.WithGroupedCompletions(within))
	case Postgres:
		return openPostgres(ctx, where, postgres.WithGroupedCompletions(within))
	}
	return nil, fmt.Errorf("unknown store %q (sqlite or postgres)", kind)
}

// openSQLite opens the store on file path and a connection of the proof's own.
func openSQLite(ctx context.Context, path string, opts ...sqlite.Option) (*DB, error) {
	st, err := sqlite.Open(ctx, path, opts...)
	if err != nil {
		return nil, err
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		st.Close()
		return nil, err
	}
	q := url.Values{}
	q.Set("_busy_timeout", "30000")
	q.Set("_synchronous", "NORMAL")
	q.Set("_txlock", "immediate") // a transaction takes the write lock at its start, as the store's do
	file, err := sql.Open("sqlite", "file:"+abs+"?"+q.Encode())
	if err != nil {
		st.Close()
		return nil, err
	}
	file.SetMaxOpenConns(2)
	d := &DB{Kind: SQLite, Store: st, file: file, stmts: map[string]*sql.Stmt{}}
	d.close = func() {
		for _, s := range d.stmts {
			s.Close()
		}
		if d.deliver != nil {
			d.deliver.Close()
		}
		file.Close()
		st.Close()
	}
	return d, nil
}

// openPostgres opens a pool on dsn and the store on it.
func openPostgres(ctx context.Context, dsn string, opts ...postgres.Option) (*DB, error) {
	pool, err := pgxpool.New(ctx, dsn)
	if err != nil {
		return nil, err
	}
	st, err := postgres.New(ctx, pool, opts...)
	if err != nil {
		pool.Close()
		return nil, err
	}
	return &DB{Kind: Postgres, Store: st, pool: pool, close: func() { st.Close(); pool.Close() }}, nil
}

// Close closes the store and the proof's connections.
func (d *DB) Close() { d.close() }

// exec runs a statement written with ? placeholders (numbered $n for PostgreSQL) and
// returns the rows it changed.
func (d *DB) exec(ctx context.Context, query string, args ...any) (int64, error) {
	if d.pool != nil {
		tag, err := d.pool.Exec(ctx, numbered(query), args...)
		return tag.RowsAffected(), err
	}
	st, err := d.prepared(ctx, query)
	if err != nil {
		return 0, err
	}
	res, err := st.ExecContext(ctx, args...)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// prepared returns query prepared on the proof's SQLite connections, preparing it the
// first time.
func (d *DB) prepared(ctx context.Context, query string) (*sql.Stmt, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if st := d.stmts[query]; st != nil {
		return st, nil
	}
	st, err := d.file.PrepareContext(ctx, query)
	if err == nil {
		d.stmts[query] = st
	}
	return st, err
}

// query runs a query written with ? placeholders and calls row for each row, with scan
// reading its columns.
func (d *DB) query(ctx context.Context, query string, args []any, row func(scan func(...any) error) error) error {
	if d.pool != nil {
		rows, err := d.pool.Query(ctx, numbered(query), args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			if err := row(rows.Scan); err != nil {
				return err
			}
		}
		return rows.Err()
	}
	st, err := d.prepared(ctx, query)
	if err != nil {
		return err
	}
	rows, err := st.QueryContext(ctx, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		if err := row(rows.Scan); err != nil {
			return err
		}
	}
	return rows.Err()
}

// numbered returns query with its ? placeholders numbered $1, $2, ... for PostgreSQL.
func numbered(query string) string {
	out := make([]byte, 0, len(query)+16)
	n := 0
	for i := 0; i < len(query); i++ {
		if query[i] != '?' {
			out = append(out, query[i])
			continue
		}
		n++
		out = fmt.Appendf(out, "$%d", n)
	}
	return string(out)
}

// The deliveries table: what the effect hook delivered, one row per effect key, and how
// many times (at least once: a delivery repeated after a crash adds to count).
const (
	sqlCreateDeliveries = `CREATE TABLE IF NOT EXISTS scaleout_deliveries (
	key   TEXT   NOT NULL PRIMARY KEY,
	id    TEXT   NOT NULL,
	seq   BIGINT NOT NULL,
	count BIGINT NOT NULL
)`
	sqlDeliver = `INSERT INTO scaleout_deliveries (key, id, seq, count) VALUES (?, ?, ?, 1)
ON CONFLICT (key) DO UPDATE SET count = scaleout_deliveries.count + 1
RETURNING count`
	sqlDeliveries = `SELECT key, id, seq, count FROM scaleout_deliveries`
)

// CreateDeliveries creates the deliveries table if it is missing. Run it once before the
// workers start: PostgreSQL may refuse concurrent creations of one table.
func (d *DB) CreateDeliveries(ctx context.Context) error {
	_, err := d.exec(ctx, sqlCreateDeliveries)
	return err
}

// Deliver records one delivery of the effect with key key (of entry seq of order id).
// On SQLite it is a transaction of the store's InTx, as a program writes its own rows in
// the store's file: on the store's writer connection, in its turn, so that it neither
// waits for the store's commits in SQLite's busy handler nor empties the writer's cache
// of pages, as a write on another connection would.
func (d *DB) Deliver(ctx context.Context, key, id string, seq int64) (count int64, err error) {
	if st, ok := d.Store.(*sqlite.Store); ok {
		stmt, err := d.deliverStmt(ctx, st)
		if err != nil {
			return 0, err
		}
		err = st.InTx(ctx, func(tx *sql.Tx, _ fsmrt.Store) error {
			return tx.StmtContext(ctx, stmt).QueryRowContext(ctx, key, id, seq).Scan(&count)
		})
		return count, err
	}
	err = d.query(ctx, sqlDeliver, []any{key, id, seq}, func(scan func(...any) error) error {
		return scan(&count)
	})
	return count, err
}

// deliverStmt returns the delivery's statement, prepared once on the store's database.
func (d *DB) deliverStmt(ctx context.Context, st *sqlite.Store) (*sql.Stmt, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.deliver == nil {
		stmt, err := st.DB().PrepareContext(ctx, sqlDeliver)
		if err != nil {
			return nil, err
		}
		d.deliver = stmt
	}
	return d.deliver, nil
}

// Delivery is a row of the deliveries table.
type Delivery struct {
	ID    string
	Seq   int64
	Count int64
}

// Deliveries returns the deliveries table by effect key.
func (d *DB) Deliveries(ctx context.Context) (map[string]Delivery, error) {
	out := map[string]Delivery{}
	err := d.query(ctx, sqlDeliveries, nil, func(scan func(...any) error) error {
		var key string
		var v Delivery
		err := scan(&key, &v.ID, &v.Seq, &v.Count)
		out[key] = v
		return err
	})
	return out, err
}

// OutboxRow is an effect of the store's outbox, read from its table.
type OutboxRow struct {
	ID        string
	Seq       int64
	Index     int
	Name, Key string
	Attempts  int
	Delivered bool
}

// Outbox returns the outbox of machine, in order.
func (d *DB) Outbox(ctx context.Context, machine string) ([]OutboxRow, error) {
	var out []OutboxRow
	err := d.query(ctx, `SELECT id, seq, idx, name, idem_key, attempts, delivered_at IS NOT NULL
FROM fsmgen_effects WHERE machine = ? ORDER BY id, seq, idx`, []any{machine}, func(scan func(...any) error) error {
		var r OutboxRow
		err := scan(&r.ID, &r.Seq, &r.Index, &r.Name, &r.Key, &r.Attempts, &r.Delivered)
		out = append(out, r)
		return err
	})
	return out, err
}

// DeadlineRow is a deadline of the store's deadlines table.
type DeadlineRow struct {
	ID, Name string
	Handled  bool
}

// Deadlines returns the deadlines of machine the store holds, handled or not.
func (d *DB) Deadlines(ctx context.Context, machine string) ([]DeadlineRow, error) {
	var out []DeadlineRow
	err := d.query(ctx, `SELECT id, name, handled_at IS NOT NULL FROM fsmgen_deadlines WHERE machine = ? ORDER BY id, name`,
		[]any{machine}, func(scan func(...any) error) error {
			var r DeadlineRow
			err := scan(&r.ID, &r.Name, &r.Handled)
			out = append(out, r)
			return err
		})
	return out, err
}

// Pending returns how many effects of machine are not delivered and how many deadlines
// are not handled.
func (d *DB) Pending(ctx context.Context, machine string) (effects, deadlines int64, err error) {
	err = d.query(ctx, `SELECT
	(SELECT count(*) FROM fsmgen_effects WHERE machine = ? AND delivered_at IS NULL),
	(SELECT count(*) FROM fsmgen_deadlines WHERE machine = ? AND handled_at IS NULL)`,
		[]any{machine, machine}, func(scan func(...any) error) error { return scan(&effects, &deadlines) })
	return effects, deadlines, err
}

// Entries returns how many log entries the store holds of machine.
func (d *DB) Entries(ctx context.Context, machine string) (int64, error) {
	var n int64
	err := d.query(ctx, `SELECT count(*) FROM fsmgen_entries WHERE machine = ?`, []any{machine},
		func(scan func(...any) error) error { return scan(&n) })
	return n, err
}

// The floor: a commit written by hand, one transaction of one UPDATE of the instance at
// its version (one INSERT for a new instance) and one INSERT of the log entry, on the
// store's own tables. With a snapshot, the UPDATE writes it too, as the store's commit
// does.
const (
	floorCreate = `INSERT INTO fsmgen_instances (machine, id, spec, version, state, snapshot, snapshot_seq, updated_at, last_at)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`
	floorUpdate = `UPDATE fsmgen_instances SET version = ?, state = ?, updated_at = ?, last_at = ?
WHERE machine = ? AND id = ? AND version = ?`
	floorUpdateSnapshot = `UPDATE fsmgen_instances SET version = ?, state = ?, updated_at = ?, last_at = ?, snapshot = ?, snapshot_seq = ?
WHERE machine = ? AND id = ? AND version = ?`
	floorEntry = `INSERT INTO fsmgen_entries (machine, id, seq, kind, event, from_state, to_state, at, idem_key, data)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`
)

// errFloorConflict says the floor found an instance at another version.
var errFloorConflict = errors.New("floor: version conflict")

// FloorCommit writes c by hand: its instance at c.Version moved on, and its entry.
func (d *DB) FloorCommit(ctx context.Context, c *fsmrt.Commit) error {
	if d.pool != nil {
		return pgx.BeginFunc(ctx, d.pool, func(tx pgx.Tx) error {
			return floorWrite(ctx, pgxExec{tx}, c, time.Now(), func(t time.Time) any { return t })
		})
	}
	tx, err := d.file.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	if err := floorWrite(ctx, sqlExec{tx}, c, time.Now(), func(t time.Time) any { return t.UnixMicro() }); err != nil {
		tx.Rollback()
		return err
	}
	return tx.Commit()
}

// execer runs one statement with ? placeholders and returns the rows it changed.
type execer interface {
	exec(ctx context.Context, query string, args ...any) (int64, error)
}

// floorWrite writes the floor's two statements in the caller's transaction; at converts
// a time to the database's form.
func floorWrite(ctx context.Context, tx execer, c *fsmrt.Commit, now time.Time, at func(time.Time) any) error {
	e := &c.Entry
	var n int64
	var err error
	switch {
	case c.Version == 0:
		snapSeq := int64(0)
		if c.Snapshot != nil {
			snapSeq = e.Seq
		}
		n, err = tx.exec(ctx, floorCreate, c.Machine, c.ID, c.Spec, e.Seq, c.State, c.Snapshot, snapSeq, at(now), at(e.At))
	case c.Snapshot != nil:
		n, err = tx.exec(ctx, floorUpdateSnapshot, e.Seq, c.State, at(now), at(e.At), c.Snapshot, e.Seq, c.Machine, c.ID, c.Version)
	default:
		n, err = tx.exec(ctx, floorUpdate, e.Seq, c.State, at(now), at(e.At), c.Machine, c.ID, c.Version)
	}
	if err == nil && n != 1 {
		err = errFloorConflict
	}
	if err != nil {
		return err
	}
	var key any
	if e.Key != "" {
		key = e.Key
	}
	_, err = tx.exec(ctx, floorEntry, c.Machine, c.ID, e.Seq, e.Kind, e.Event, e.From, e.To, at(e.At), key, e.Data)
	return err
}

// pgxExec is a PostgreSQL transaction as an execer.
type pgxExec struct{ tx pgx.Tx }

func (x pgxExec) exec(ctx context.Context, query string, args ...any) (int64, error) {
	tag, err := x.tx.Exec(ctx, numbered(query), args...)
	return tag.RowsAffected(), err
}

// sqlExec is a SQLite transaction as an execer.
type sqlExec struct{ tx *sql.Tx }

func (x sqlExec) exec(ctx context.Context, query string, args ...any) (int64, error) {
	res, err := x.tx.ExecContext(ctx, query, args...)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}
