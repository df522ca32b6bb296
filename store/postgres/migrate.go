package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// SchemaVersion is the version of the schema this code reads and writes: the version of
// the last of its migrations.
const SchemaVersion = 3

// ErrSchema is what a *SchemaError matches with errors.Is.
var ErrSchema = errors.New("postgres store: unsupported schema version")

// SchemaError says the database holds a newer schema than this code knows: a newer
// release of the program migrated it. New refuses it and changes nothing; upgrade the
// program.
type SchemaError struct {
	// Found is the version of the database's schema; Want is SchemaVersion.
	Found, Want int
}

// Error describes the refusal.
func (e *SchemaError) Error() string {
	return fmt.Sprintf("postgres store: the database schema is at version %d, newer than this code's %d: upgrade the program", e.Found, e.Want)
}

// Is makes SchemaError match ErrSchema.
func (e *SchemaError) Is(target error) bool { return target == ErrSchema }

// migration is one step of the schema: the statements that take it from the previous
// version to version.
type migration struct {
	version    int
	statements []string
}

// migrations are the steps of the schema, in order, numbered from 1. A new version of
// the schema appends a step; a released step never changes.
var migrations = []migration{
	{version: 1, statements: []string{
		sqlCreateInstances, sqlCreateInstancesByState, sqlCreateEntries, sqlCreateEntriesByKey,
	}},
	{version: 2, statements: []string{
		sqlCreateEffects, sqlCreateEffectsPending,
		sqlCreateDeadlines, sqlCreateDeadlinesDue, sqlCreateDeadlinesByName,
		sqlCreateCounters, sqlCreateCountersByValue,
		sqlAddLastAt, sqlFillLastAt, sqlRequireLastAt,
	}},
	{version: 3, statements: []string{sqlAddEffectErrors, sqlCreateInstancesIdle}},
}

// The statements of version 3: the error of an effect's last failed delivery and when it
// failed, for an operator (fsmrt.EffectErrorRecorder); Find's condition on the time of the
// last entry (Query.IdleSince).
const (
	sqlAddEffectErrors     = `ALTER TABLE {schema}.fsmgen_effects ADD COLUMN last_error text, ADD COLUMN failed_at timestamptz`
	sqlCreateInstancesIdle = `CREATE INDEX ` + instancesIdleIndex + ` ON {schema}.fsmgen_instances (machine, last_at)`
)

// instancesIdleIndex is the index of Find's condition on the time of the last entry.
const instancesIdleIndex = "fsmgen_instances_idle"

// The statements of version 1: instances and their event logs.
const (
	sqlCreateInstances = `CREATE TABLE {schema}.fsmgen_instances (
	machine      text        NOT NULL,
	id           text        NOT NULL,
	spec         text        NOT NULL,
	version      bigint      NOT NULL,
	state        text        NOT NULL,
	snapshot     bytea,
	snapshot_seq bigint      NOT NULL DEFAULT 0,
	updated_at   timestamptz NOT NULL DEFAULT now(),
	CONSTRAINT fsmgen_instances_pkey PRIMARY KEY (machine, id)
)`
	sqlCreateInstancesByState = `CREATE INDEX fsmgen_instances_state ON {schema}.fsmgen_instances (machine, state)`
	sqlCreateEntries          = `CREATE TABLE {schema}.fsmgen_entries (
	machine    text        NOT NULL,
	id         text        NOT NULL,
	seq        bigint      NOT NULL,
	kind       text        NOT NULL,
	event      text        NOT NULL,
	from_state text        NOT NULL,
	to_state   text        NOT NULL,
	at         timestamptz NOT NULL,
	idem_key   text,
	data       bytea,
	CONSTRAINT ` + entriesPrimaryKey + ` PRIMARY KEY (machine, id, seq)
)`
	sqlCreateEntriesByKey = `CREATE UNIQUE INDEX ` + entriesKeyIndex + ` ON {schema}.fsmgen_entries (machine, id, idem_key)
	WHERE idem_key IS NOT NULL`
)

// The statements of version 2: the outbox of effects, the deadlines of instances, their
// counters, and what Find searches. The claim indexes order ids and names bytewise
// (COLLATE "C"), whatever the database's collation, so that claims take them in one order
// on every database.
const (
	sqlCreateEffects = `CREATE TABLE {schema}.fsmgen_effects (
	machine      text        NOT NULL,
	id           text        NOT NULL,
	seq          bigint      NOT NULL,
	idx          int         NOT NULL,
	name         text        NOT NULL,
	idem_key     text        NOT NULL,
	data         bytea,
	owner        text,
	leased_until timestamptz,
	attempts     int         NOT NULL DEFAULT 0,
	delivered_at timestamptz,
	committed_at timestamptz NOT NULL,
	CONSTRAINT fsmgen_effects_pkey PRIMARY KEY (machine, id, seq, idx)
)`
	// sqlCreateEffectsPending indexes the effects not delivered in the order claims take
	// them; delivered effects leave it.
	sqlCreateEffectsPending = `CREATE INDEX ` + effectsPendingIndex + ` ON {schema}.fsmgen_effects
	(machine, committed_at, id COLLATE "C", seq, idx) WHERE delivered_at IS NULL`
	// sqlCreateDeadlines: the deadlines the instance's last rearm armed. A handled deadline
	// stays, with handled_at (the time of the entry that handled it), until the next rearm.
	sqlCreateDeadlines = `CREATE TABLE {schema}.fsmgen_deadlines (
	machine      text        NOT NULL,
	id           text        NOT NULL,
	name         text        NOT NULL,
	at           timestamptz NOT NULL,
	state        text        NOT NULL,
	event        text        NOT NULL,
	level        int         NOT NULL,
	owner        text,
	leased_until timestamptz,
	handled_at   timestamptz,
	CONSTRAINT fsmgen_deadlines_pkey PRIMARY KEY (machine, id, name)
)`
	// sqlCreateDeadlinesDue indexes the deadlines not handled in the order claims take
	// them; handled deadlines, kept for Find, leave it.
	sqlCreateDeadlinesDue = `CREATE INDEX ` + deadlinesDueIndex + ` ON {schema}.fsmgen_deadlines
	(machine, at, id COLLATE "C", name COLLATE "C") WHERE handled_at IS NULL`
	// sqlCreateDeadlinesByName indexes the deadlines, handled or not, for Find's condition
	// on a deadline due by a time.
	sqlCreateDeadlinesByName = `CREATE INDEX ` + deadlinesNameIndex + ` ON {schema}.fsmgen_deadlines
	(machine, name, at)`
	// sqlCreateCounters: the counters of each instance that are not zero, as its last
	// commit left them; state is empty but for a per-state counter.
	sqlCreateCounters = `CREATE TABLE {schema}.fsmgen_counters (
	machine text   NOT NULL,
	id      text   NOT NULL,
	name    text   NOT NULL,
	state   text   NOT NULL DEFAULT '',
	value   bigint NOT NULL,
	CONSTRAINT fsmgen_counters_pkey PRIMARY KEY (machine, id, name, state)
)`
	// sqlCreateCountersByValue indexes the counters for Find's condition on a counter.
	sqlCreateCountersByValue = `CREATE INDEX ` + countersValueIndex + ` ON {schema}.fsmgen_counters
	(machine, name, value)`
	// sqlAddLastAt, sqlFillLastAt and sqlRequireLastAt give every instance the time of
	// its last entry (what Find returns as UpdatedAt), taken from the log for the
	// instances a release of version 1 stored.
	sqlAddLastAt  = `ALTER TABLE {schema}.fsmgen_instances ADD COLUMN last_at timestamptz`
	sqlFillLastAt = `UPDATE {schema}.fsmgen_instances i SET last_at = e.at
FROM {schema}.fsmgen_entries e
WHERE e.machine = i.machine AND e.id = i.id AND e.seq = i.version`
	sqlRequireLastAt = `ALTER TABLE {schema}.fsmgen_instances ALTER COLUMN last_at SET NOT NULL`
)

// The statements that find and record the version of a schema.
const (
	// migrationLockKey is the key of the transaction-level advisory lock that migrations
	// hold, the same for every schema and every release ("fsmgen" in ASCII).
	migrationLockKey int64 = 0x66736d67656e

	sqlLockMigrations    = `SELECT pg_advisory_xact_lock($1)`
	sqlSchemaExists      = `SELECT EXISTS (SELECT 1 FROM pg_catalog.pg_namespace WHERE nspname = $1)`
	sqlVersionTableFound = `SELECT EXISTS (SELECT 1 FROM pg_catalog.pg_tables WHERE schemaname = $1 AND tablename = 'fsmgen_schema')`
	sqlCreateSchema      = `CREATE SCHEMA IF NOT EXISTS {schema}`
	sqlCreateVersions    = `CREATE TABLE IF NOT EXISTS {schema}.fsmgen_schema (version int PRIMARY KEY)`
	sqlReadVersion       = `SELECT COALESCE(max(version), 0) FROM {schema}.fsmgen_schema`
	sqlRecordVersion     = `INSERT INTO {schema}.fsmgen_schema (version) VALUES ($1)`
)

// migrate brings schema up to SchemaVersion in one transaction that holds the migration
// lock, so that workers starting together migrate once and the others find it done. It
// refuses a newer schema with a *SchemaError, changing nothing. A schema already at
// SchemaVersion needs no privilege beyond reading fsmgen_schema.
func migrate(ctx context.Context, pool *pgxpool.Pool, schema string) error {
	return migrateTo(ctx, pool, schema, migrations)
}

// migrateTo brings schema up to the version of the last of steps, a prefix of migrations,
// as migrate does: the tests build the databases of earlier releases with it.
func migrateTo(ctx context.Context, pool *pgxpool.Pool, schema string, steps []migration) error {
	want := steps[len(steps)-1].version
	err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, sqlLockMigrations, migrationLockKey); err != nil {
			return err
		}
		found, err := readVersion(ctx, tx, schema)
		switch {
		case err != nil:
			return err
		case found > want:
			return &SchemaError{Found: found, Want: want}
		case found == want:
			return nil
		}
		if err := createVersionTable(ctx, tx, schema); err != nil {
			return err
		}
		return applyMigrations(ctx, tx, schema, found, steps)
	})
	var se *SchemaError
	if err != nil && !errors.As(err, &se) {
		return fmt.Errorf("postgres store: migrate schema %q to version %d: %w", schema, want, err)
	}
	return err
}

// readVersion returns the version of schema: 0 when it has no fsmgen_schema table.
func readVersion(ctx context.Context, tx pgx.Tx, schema string) (int, error) {
	var found bool
	if err := tx.QueryRow(ctx, sqlVersionTableFound, schema).Scan(&found); err != nil || !found {
		return 0, err
	}
	var version int
	err := tx.QueryRow(ctx, qualifier(schema)(sqlReadVersion)).Scan(&version)
	return version, err
}

// createVersionTable creates schema, when missing, and its fsmgen_schema table.
func createVersionTable(ctx context.Context, tx pgx.Tx, schema string) error {
	q := qualifier(schema)
	var exists bool
	if err := tx.QueryRow(ctx, sqlSchemaExists, schema).Scan(&exists); err != nil {
		return err
	}
	if !exists {
		if _, err := tx.Exec(ctx, q(sqlCreateSchema)); err != nil {
			return err
		}
	}
	_, err := tx.Exec(ctx, q(sqlCreateVersions))
	return err
}

// applyMigrations runs the steps after version from, recording each version.
func applyMigrations(ctx context.Context, tx pgx.Tx, schema string, from int, steps []migration) error {
	q := qualifier(schema)
	for _, m := range steps {
		if m.version <= from {
			continue
		}
		for _, stmt := range m.statements {
			if _, err := tx.Exec(ctx, q(stmt)); err != nil {
				return fmt.Errorf("version %d: %w", m.version, err)
			}
		}
		if _, err := tx.Exec(ctx, q(sqlRecordVersion), m.version); err != nil {
			return fmt.Errorf("version %d: %w", m.version, err)
		}
	}
	return nil
}
