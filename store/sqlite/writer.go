package sqlite

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
)

// The writer connection. A Store writes (commits, claims, completions) on one connection
// of the pool it keeps for that, with its statements prepared on it, in transactions it
// begins with BEGIN IMMEDIATE. Two things make that cheaper than a connection of the pool
// for each write:
//
//   - SQLite keeps a cache of pages per connection, and drops it whenever another
//     connection has written the file since. database/sql hands out the connection idle
//     longest, so writes taking turns on the pool's connections read back from the file
//     the pages the write before them had in cache. On one connection, the pages of the
//     instances, the log's indexes and the outbox stay in cache from write to write.
//   - A transaction of database/sql watches its context in a goroutine of its own; a
//     transaction begun by a statement on the connection does not need one.
//
// A database handed to New and limited to one connection (SetMaxOpenConns(1)) is written
// through the pool instead: keeping its only connection would leave the reads none.

// writer is the connection a Store writes on, and its statements.
type writer struct {
	conn  *sql.Conn
	stmts map[string]*sql.Stmt
}

// keepsWriter reports whether a Store on db writes on a connection of its own: unless
// db is limited to one connection.
func keepsWriter(db *sql.DB) bool { return db.Stats().MaxOpenConnections != 1 }

// writerConn returns the writer connection, taking one from the pool and preparing the
// statements of preparedStatements on it the first time, or after the last one was
// dropped. The caller holds the writer's turn (lockWriter).
func (s *Store) writerConn(ctx context.Context) (*writer, error) {
	if s.w != nil {
		return s.w, nil
	}
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return nil, err
	}
	w := &writer{conn: conn, stmts: make(map[string]*sql.Stmt, len(preparedStatements))}
	for _, q := range preparedStatements {
		if q == lockWrite {
			continue // BEGIN IMMEDIATE takes the lock
		}
		st, err := conn.PrepareContext(ctx, q)
		if err := ctx.Err(); err != nil {
			w.close(false)
			return nil, err
		}
		if err == nil {
			w.stmts[q] = st
		}
		// A statement SQLite refuses to prepare runs as it is, and fails there.
	}
	s.w = w
	return w, nil
}

// beginWriter begins a transaction on the writer connection with BEGIN IMMEDIATE. A
// connection the pool closed meanwhile (a transaction of InTx whose context ended is
// rolled back by database/sql, which may close its connection) is dropped, and the
// transaction begun on another one. The caller holds the writer's turn.
func (s *Store) beginWriter(ctx context.Context) (*writer, error) {
	for try := 0; ; try++ {
		w, err := s.writerConn(ctx)
		if err != nil {
			return nil, err
		}
		_, err = w.conn.ExecContext(ctx, "BEGIN IMMEDIATE")
		if err == nil {
			return w, nil
		}
		if !errors.Is(err, sql.ErrConnDone) && !errors.Is(err, driver.ErrBadConn) {
			return nil, err // BUSY, a context done: no transaction began
		}
		if derr := s.dropWriter(true); derr != nil || try > 0 {
			return nil, errors.Join(err, derr)
		}
	}
}

// close closes the statements of w and gives its connection back to the pool, or, when
// bad (its transaction in an unknown state, or the connection closed already), has the
// pool close it. The statements of a connection closed already are left alone: the driver
// cannot close them any more, and they go with it.
func (w *writer) close(bad bool) error {
	open := w.conn.Raw(func(any) error { return nil }) == nil
	var errs []error
	if open {
		for _, st := range w.stmts {
			errs = append(errs, st.Close())
		}
	}
	if bad || !open {
		// The pool closes the connection; what closing it says is of no use.
		_ = w.conn.Raw(func(any) error { return driver.ErrBadConn })
		_ = w.conn.Close()
		return nil
	}
	return errors.Join(append(errs, w.conn.Close())...)
}

// dropWriter closes the writer connection, bad or not; the next write takes another. The
// caller holds the writer's turn.
func (s *Store) dropWriter(bad bool) error {
	if s.w == nil {
		return nil
	}
	err := s.w.close(bad)
	s.w = nil
	return err
}

// closeWriter closes the writer connection once the write under way, if any, is done.
func (s *Store) closeWriter() error {
	s.writer <- struct{}{}
	defer s.unlockWriter()
	return s.dropWriter(false)
}

// writeOn runs fn in a transaction on the writer connection that holds SQLite's write lock
// from its start (BEGIN IMMEDIATE): committed when fn returns nil and ctx is not done by
// then, rolled back otherwise. Once it commits, the commit is not cancelled. A connection
// that cannot roll back (the transaction may have ended already, or be in an unknown
// state) or that the pool closed is dropped. The caller holds the writer's turn.
func (s *Store) writeOn(ctx context.Context, fn func(*tx) error) error {
	w, err := s.beginWriter(ctx)
	if err != nil {
		return err
	}
	err = fn(&tx{conn: w.conn, stmts: w.stmts})
	if err == nil {
		err = ctx.Err()
	}
	if err == nil {
		if _, err = w.conn.ExecContext(context.WithoutCancel(ctx), "COMMIT"); err == nil {
			return nil
		}
	}
	if _, rerr := w.conn.ExecContext(context.Background(), "ROLLBACK"); rerr != nil {
		if derr := s.dropWriter(true); derr != nil {
			return errors.Join(err, fmt.Errorf("dropping the writer connection: %w", derr))
		}
	}
	return err
}

// userTx runs fn in a transaction of the caller's (InTx) holding SQLite's write lock from
// its start: on the writer connection, in the store's turn to write, when the store keeps
// one; else as BeginTx begins it. It is committed when fn returns nil, rolled back
// otherwise, and when fn panics.
func (s *Store) userTx(ctx context.Context, fn func(*sql.Tx) error) error {
	begin := s.BeginTx
	if s.keepWriter {
		if err := s.lockWriter(ctx); err != nil {
			return err
		}
		defer s.unlockWriter()
		begin = s.beginOnWriter
	}
	t, err := begin(ctx)
	if err != nil {
		return err
	}
	done := false
	defer func() {
		if !done {
			_ = t.Rollback()
		}
	}()
	err = fn(t)
	done = true
	if err != nil {
		_ = t.Rollback()
		return err
	}
	if err := t.Commit(); err != nil {
		return fmt.Errorf("sqlite store: commit: %w", corrupt(err))
	}
	return nil
}

// beginOnWriter begins a transaction of database/sql on the writer connection, holding
// SQLite's write lock from its start. The caller holds the writer's turn.
func (s *Store) beginOnWriter(ctx context.Context) (*sql.Tx, error) {
	w, err := s.writerConn(ctx)
	if err != nil {
		return nil, fmt.Errorf("sqlite store: begin: %w", corrupt(err))
	}
	t, err := w.conn.BeginTx(ctx, nil)
	if err == nil {
		if _, err = t.ExecContext(ctx, lockWrite); err != nil {
			_ = t.Rollback()
		}
	}
	if err != nil {
		if errors.Is(err, sql.ErrConnDone) || errors.Is(err, driver.ErrBadConn) {
			err = errors.Join(err, s.dropWriter(true))
		}
		return nil, fmt.Errorf("sqlite store: begin: %w", corrupt(err))
	}
	return t, nil
}
