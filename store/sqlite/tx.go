package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// lockWrite is the first statement of a write transaction that would read first: it
// writes nothing, but takes SQLite's write lock, waiting for it in the busy handler as
// BEGIN IMMEDIATE would (a transaction begun on database/sql's BEGIN is deferred). Taken
// before anything is read, the lock is never refused for a snapshot gone stale.
const lockWrite = `UPDATE fsmgen_instances SET version = version WHERE 0`

// preparedStatements are the statements a Store prepares once, when it opens, rather than
// at every call: every statement of the commits, the claims, the completions and the
// reads by key. database/sql prepares each on a connection the first time a transaction
// on that connection runs it, and reuses it after.
var preparedStatements = []string{
	lockWrite,
	selectHead, insertInstanceRow, updateInstanceRow, updateInstanceSnapshot, insertEntryRow,
	handleDeadline, deleteDeadlines, insertDeadlineRow, selectDueDeadlines, leaseDeadline,
	insertEffectRow, selectClaimableEffects, leaseEffect, completeEffect,
	setCounters, clearCounters, setCounter, clearCounter,
	selectInstance, selectEntriesAfter, selectKeyEntry,
}

// prepare prepares the statements of preparedStatements, once the schema is migrated. A
// statement SQLite refuses to prepare is left to run as it is, where it fails with the
// same error; only a context done fails prepare.
func (s *Store) prepare(ctx context.Context) error {
	s.stmts = make(map[string]*sql.Stmt, len(preparedStatements))
	for _, q := range preparedStatements {
		st, err := s.db.PrepareContext(ctx, q)
		if err := ctx.Err(); err != nil {
			return errors.Join(fmt.Errorf("prepare: %w", err), s.closeStatements())
		}
		if err == nil {
			s.stmts[q] = st
		}
	}
	return nil
}

// closeStatements closes the statements prepare prepared.
func (s *Store) closeStatements() error {
	var errs []error
	for _, st := range s.stmts {
		errs = append(errs, st.Close())
	}
	return errors.Join(errs...)
}

// tx is a transaction of a Store. It runs a statement the Store prepared as prepared on
// the transaction's connection, any other one as it is. It is a transaction of
// database/sql (tx), or the one the writer connection began (conn, its statements
// prepared on it, writer.go).
type tx struct {
	tx    *sql.Tx
	conn  *sql.Conn
	stmts map[string]*sql.Stmt
}

// ExecContext runs query, which returns no rows, with args.
func (t *tx) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	switch st := t.stmts[query]; {
	case t.tx == nil && st != nil:
		return st.ExecContext(ctx, args...)
	case t.tx == nil:
		return t.conn.ExecContext(ctx, query, args...)
	case st != nil:
		return t.tx.StmtContext(ctx, st).ExecContext(ctx, args...)
	}
	return t.tx.ExecContext(ctx, query, args...)
}

// QueryContext runs query with args.
func (t *tx) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	switch st := t.stmts[query]; {
	case t.tx == nil && st != nil:
		return st.QueryContext(ctx, args...)
	case t.tx == nil:
		return t.conn.QueryContext(ctx, query, args...)
	case st != nil:
		return t.tx.StmtContext(ctx, st).QueryContext(ctx, args...)
	}
	return t.tx.QueryContext(ctx, query, args...)
}

// QueryRowContext runs query, which returns at most one row, with args.
func (t *tx) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	switch st := t.stmts[query]; {
	case t.tx == nil && st != nil:
		return st.QueryRowContext(ctx, args...)
	case t.tx == nil:
		return t.conn.QueryRowContext(ctx, query, args...)
	case st != nil:
		return t.tx.StmtContext(ctx, st).QueryRowContext(ctx, args...)
	}
	return t.tx.QueryRowContext(ctx, query, args...)
}

// pool runs a Store's statements outside any transaction, each on a connection of the
// pool: those the Store prepared as prepared, any other one as it is.
type pool struct{ s *Store }

// QueryContext runs query with args.
func (p pool) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	if st := p.s.stmts[query]; st != nil {
		return st.QueryContext(ctx, args...)
	}
	return p.s.db.QueryContext(ctx, query, args...)
}

// QueryRowContext runs query, which returns at most one row, with args.
func (p pool) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	if st := p.s.stmts[query]; st != nil {
		return st.QueryRowContext(ctx, args...)
	}
	return p.s.db.QueryRowContext(ctx, query, args...)
}

// read runs fn in a read transaction: one consistent snapshot of the database that never
// waits for the writer.
func (s *Store) read(ctx context.Context, fn func(*tx) error) error {
	return s.run(ctx, false, fn)
}

// writeTx runs fn in a transaction that holds SQLite's write lock from its start, once the
// earlier writers of this Store are done: committed when fn returns nil and ctx is not
// done by then, rolled back otherwise. Writers in other processes wait for the lock in
// SQLite's busy handler, up to the busy timeout. It runs on the writer connection
// (writeOn), or, when the Store keeps none, on a connection of the pool, where it takes
// the lock with lockWrite before fn runs, unless writesFirst says that fn's first
// statement writes, which takes it as well.
func (s *Store) writeTx(ctx context.Context, writesFirst bool, fn func(*tx) error) error {
	if err := s.lockWriter(ctx); err != nil {
		return err
	}
	defer s.unlockWriter()
	if s.keepWriter {
		return corrupt(s.writeOn(ctx, fn))
	}
	return s.run(ctx, !writesFirst, fn)
}

// run runs fn in a transaction, which takes the write lock first when lock. Once it
// commits, the commit is not cancelled. A transaction whose context ends is rolled back
// by database/sql, which then drops its connection; one whose COMMIT fails is rolled back
// here, or its connection dropped (rollback). SQLite's word that the file is damaged
// comes back wrapping ErrCorrupt.
func (s *Store) run(ctx context.Context, lock bool, fn func(*tx) error) error {
	return corrupt(s.runTx(ctx, lock, fn))
}

// runTx is run, with the driver's errors as they are.
func (s *Store) runTx(ctx context.Context, lock bool, fn func(*tx) error) error {
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	sqlTx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	t := &tx{tx: sqlTx, stmts: s.stmts}
	if lock {
		_, err = t.ExecContext(ctx, lockWrite)
	}
	if err == nil {
		err = fn(t)
	}
	if err == nil {
		err = ctx.Err()
	}
	if err != nil {
		_ = sqlTx.Rollback()
		return err
	}
	if err := sqlTx.Commit(); err != nil {
		// A failed COMMIT may leave the transaction open on the connection.
		rollback(conn)
		return err
	}
	return nil
}
