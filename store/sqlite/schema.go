package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// migration is one step of the schema: the statements that take a database from the
// version before it to its version.
type migration struct {
	version int
	// what the step adds, for errors.
	what  string
	stmts []string
}

// migrations are the steps of the schema, in order: version n is migrations[n-1]. A new
// version appends a step; a shipped step never changes, since files out there ran it.
var migrations = []migration{
	{version: 1, what: "instances and entries", stmts: []string{
		`CREATE TABLE fsmgen_instances (
			machine      TEXT    NOT NULL,
			id           TEXT    NOT NULL,
			spec         TEXT    NOT NULL,
			version      INTEGER NOT NULL,
			state        TEXT    NOT NULL,
			snapshot     BLOB    NULL,
			snapshot_seq INTEGER NOT NULL DEFAULT 0,
			updated_at   INTEGER NOT NULL,
			PRIMARY KEY (machine, id)
		)`,
		`CREATE INDEX fsmgen_instances_state ON fsmgen_instances (machine, state)`,
		`CREATE TABLE fsmgen_entries (
			machine    TEXT    NOT NULL,
			id         TEXT    NOT NULL,
			seq        INTEGER NOT NULL,
			kind       TEXT    NOT NULL,
			event      TEXT    NOT NULL,
			from_state TEXT    NOT NULL,
			to_state   TEXT    NOT NULL,
			at         INTEGER NOT NULL,
			idem_key   TEXT    NULL,
			data       BLOB    NULL,
			PRIMARY KEY (machine, id, seq)
		)`,
		`CREATE UNIQUE INDEX fsmgen_entries_idem_key ON fsmgen_entries (machine, id, idem_key)
			WHERE idem_key IS NOT NULL`,
	}},
	{version: 2, what: "effects and deadlines", stmts: []string{
		`CREATE TABLE fsmgen_effects (
			machine      TEXT    NOT NULL,
			id           TEXT    NOT NULL,
			seq          INTEGER NOT NULL,
			idx          INTEGER NOT NULL,
			name         TEXT    NOT NULL,
			idem_key     TEXT    NOT NULL,
			data         BLOB    NULL,
			owner        TEXT    NULL,
			leased_until INTEGER NULL,
			attempts     INTEGER NOT NULL DEFAULT 0,
			delivered_at INTEGER NULL,
			committed_at INTEGER NOT NULL,
			PRIMARY KEY (machine, id, seq, idx),
			FOREIGN KEY (machine, id, seq) REFERENCES fsmgen_entries (machine, id, seq)
		)`,
		// The claim walks the effects not delivered in the order it hands them out.
		`CREATE INDEX fsmgen_effects_pending ON fsmgen_effects (machine, committed_at, id, seq, idx)
			WHERE delivered_at IS NULL`,
		`CREATE TABLE fsmgen_deadlines (
			machine      TEXT    NOT NULL,
			id           TEXT    NOT NULL,
			name         TEXT    NOT NULL,
			at           INTEGER NOT NULL,
			state        TEXT    NOT NULL,
			event        TEXT    NOT NULL,
			level        INTEGER NOT NULL,
			owner        TEXT    NULL,
			leased_until INTEGER NULL,
			PRIMARY KEY (machine, id, name),
			FOREIGN KEY (machine, id) REFERENCES fsmgen_instances (machine, id)
		)`,
		// The claim walks the deadlines in the order it hands them out, due first.
		`CREATE INDEX fsmgen_deadlines_due ON fsmgen_deadlines (machine, at, id, name)`,
	}},
	{version: 3, what: "handled deadlines, counters and Find", stmts: []string{
		// A handled deadline stays until the next rearm, marked handled_at (the time of
		// the transition that handled it).
		`ALTER TABLE fsmgen_deadlines ADD COLUMN handled_at INTEGER NULL`,
		// The claim walks the deadlines not handled only, so that those handled and kept
		// for Find cost it nothing.
		`DROP INDEX fsmgen_deadlines_due`,
		`CREATE INDEX fsmgen_deadlines_due ON fsmgen_deadlines (machine, at, id, name)
			WHERE handled_at IS NULL`,
		// Find's condition on a deadline, handled or not.
		`CREATE INDEX fsmgen_deadlines_name ON fsmgen_deadlines (machine, name, at)`,
		// The counters of each instance that are not zero, as its last commit left them;
		// state is empty but for a per-state counter.
		`CREATE TABLE fsmgen_counters (
			machine TEXT    NOT NULL,
			id      TEXT    NOT NULL,
			name    TEXT    NOT NULL,
			state   TEXT    NOT NULL DEFAULT '',
			value   INTEGER NOT NULL,
			PRIMARY KEY (machine, id, name, state),
			FOREIGN KEY (machine, id) REFERENCES fsmgen_instances (machine, id)
		)`,
		// Find's condition on a counter.
		`CREATE INDEX fsmgen_counters_value ON fsmgen_counters (machine, name, value)`,
		// The time of the instance's last entry (Instance.UpdatedAt), taken from the log
		// for the instances already stored.
		`ALTER TABLE fsmgen_instances ADD COLUMN last_at INTEGER NULL`,
		`UPDATE fsmgen_instances SET last_at = (SELECT e.at FROM fsmgen_entries AS e
			WHERE e.machine = fsmgen_instances.machine AND e.id = fsmgen_instances.id
				AND e.seq = fsmgen_instances.version)`,
	}},
	{version: 4, what: "effects' last errors, idle instances", stmts: []string{
		// The error of an effect's last failed delivery and when it failed, for an
		// operator (fsmrt.EffectErrorRecorder).
		`ALTER TABLE fsmgen_effects ADD COLUMN last_error TEXT NULL`,
		`ALTER TABLE fsmgen_effects ADD COLUMN failed_at INTEGER NULL`,
		// Find's condition on the time of the last entry (Query.IdleSince).
		`CREATE INDEX fsmgen_instances_idle ON fsmgen_instances (machine, last_at)`,
	}},
}

// SchemaVersion is the version of the schema this code writes and reads.
const SchemaVersion = 4

// latest is the version the migrations lead to: SchemaVersion (tests append migrations
// to try those to come).
func latest() int { return len(migrations) }

// ErrSchema is what a SchemaError matches with errors.Is.
var ErrSchema = errors.New("unknown schema version")

// SchemaError says a database's schema is newer than this code knows: a newer release
// of the store migrated it. The database was left as it was; upgrade the program.
type SchemaError struct {
	// Found is the database's schema version, Want this code's (SchemaVersion).
	Found, Want int
}

// Error describes the mismatch.
func (e *SchemaError) Error() string {
	return fmt.Sprintf("database schema version %d is newer than version %d of this code: upgrade the program", e.Found, e.Want)
}

// Is makes SchemaError match ErrSchema.
func (e *SchemaError) Is(target error) bool { return target == ErrSchema }

// querier is what reads the database: a *sql.DB or a *sql.Conn.
type querier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// migrate brings the schema of the database up to SchemaVersion. A database already
// there is only read; an older one is migrated inside one transaction holding the
// write lock, which reads the version again, so that of several processes migrating a
// new file at once one does it and the others find it done.
func (s *Store) migrate(ctx context.Context) error {
	found, err := s.currentSchema(ctx)
	if err != nil || found == latest() {
		return err
	}
	return s.migrationTx(ctx, func(conn *sql.Conn) error {
		found, err := schemaVersion(ctx, conn)
		if err != nil {
			return err
		}
		if err := checkVersion(found); err != nil || found == latest() {
			return err // or another process migrated it meanwhile
		}
		return upgrade(ctx, conn, found)
	})
}

// currentSchema returns the schema version of the database, or a SchemaError when it
// is newer than this code's.
func (s *Store) currentSchema(ctx context.Context) (int, error) {
	found, err := schemaVersion(ctx, s.db)
	if err != nil {
		return 0, err
	}
	return found, checkVersion(found)
}

// checkVersion returns a SchemaError when version is newer than this code's.
func checkVersion(version int) error {
	if version > latest() {
		return &SchemaError{Found: version, Want: latest()}
	}
	return nil
}

// schemaVersion returns the schema version of the database, 0 for one without the
// fsmgen tables.
func schemaVersion(ctx context.Context, q querier) (int, error) {
	var tables int
	err := q.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'fsmgen_schema'`).Scan(&tables)
	if err != nil || tables == 0 {
		return 0, err
	}
	rows, err := q.QueryContext(ctx, `SELECT version FROM fsmgen_schema`)
	if err != nil {
		return 0, err
	}
	defer rows.Close()
	var versions []int
	for rows.Next() {
		var v int
		if err := rows.Scan(&v); err != nil {
			return 0, fmt.Errorf("%w: schema version: %v", ErrCorrupt, err)
		}
		versions = append(versions, v)
	}
	if err := rows.Err(); err != nil {
		return 0, err
	}
	if len(versions) != 1 || versions[0] < 0 {
		return 0, fmt.Errorf("%w: fsmgen_schema holds %v, not one version", ErrCorrupt, versions)
	}
	return versions[0], nil
}

// upgrade runs the migrations after version found and records the new version, inside
// the caller's transaction.
func upgrade(ctx context.Context, conn *sql.Conn, found int) error {
	if found == 0 {
		if _, err := conn.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS fsmgen_schema (version INTEGER NOT NULL)`); err != nil {
			return err
		}
	}
	for _, m := range migrations[found:] {
		for _, stmt := range m.stmts {
			if _, err := conn.ExecContext(ctx, stmt); err != nil {
				return fmt.Errorf("migrate to schema version %d (%s): %w", m.version, m.what, err)
			}
		}
	}
	if _, err := conn.ExecContext(ctx, `DELETE FROM fsmgen_schema`); err != nil {
		return err
	}
	_, err := conn.ExecContext(ctx, `INSERT INTO fsmgen_schema (version) VALUES (?)`, latest())
	return err
}
