package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/fsmgen/fsmgen/fsmrt"
)

// The SQLSTATE codes of the failures Commit tells apart.
const (
	codeUniqueViolation      = "23505"
	codeSerializationFailure = "40001"
	codeDeadlockDetected     = "40P01"
	// A text that is not valid UTF-8 or holds a NUL byte, which PostgreSQL cannot keep.
	codeCharacterNotInRepertoire = "22021"
	codeUntranslatableCharacter  = "22P05"
)

// ErrCommitUnknown is matched (errors.Is) by the error of a Commit whose outcome is
// unknown: the connection was lost, or the context ended, while the COMMIT was on its way
// to the server or being answered, so the transaction may have been committed or not.
// Load the instance to find out: its log has the entry or not. Every other error of Commit
// means nothing was written.
var ErrCommitUnknown = errors.New("postgres store: commit outcome unknown")

// Commit writes c if the instance is at c.Version (fsmrt.Store.Commit), in one
// transaction of two round trips: the begin and the writes go together, then the commit.
// The first write is one statement that moves the instance from c.Version to the entry's
// sequence number, under c.Spec or c.Migrated (stored under c.Spec from then on), or
// creates it at version 1, and appends the entry only if it did; the effects, the
// deadline handled (recorded handled, not removed), the rearm and the counters (replaced,
// cleared when c has none) follow in the same batch, each writing only when the instance
// was written. A batch that changes nothing, fails, or does not find the deadline c.Fired
// not handled yet is rolled back, and Commit says why: a *fsmrt.SpecMismatchError or a
// *fsmrt.ConflictError (of the version, then the key, then the deadline), read from the
// database only after a refusal of the version. Serialization failures and deadlocks are
// conflicts too: a database whose transactions run at REPEATABLE READ or SERIALIZABLE
// reports lost races that way. Names PostgreSQL cannot keep in text (invalid UTF-8, NUL
// bytes) make the commit invalid (fsmrt.ErrInvalidCommit). A commit whose outcome is
// unknown returns an error matching ErrCommitUnknown.
func (s *Store) Commit(ctx context.Context, c *fsmrt.Commit) error {
	if err := fsmrt.CheckCommit(c); err != nil {
		return err
	}
	tx, w, err := s.write(ctx, c)
	if err != nil || !w.instance || !w.fired {
		_ = tx.Rollback(ctx) // a failed rollback closes the connection: the server rolls back
		s.group.GiveBack(w.completed, w.completedAt)
		return s.refused(ctx, c, w, err)
	}
	if err := tx.Commit(ctx); err != nil {
		// Stored or not, they may be stored again: a completion is stored once.
		s.group.GiveBack(w.completed, w.completedAt)
		return s.commitFailed(ctx, c, err)
	}
	return nil
}

// written says what the batch of a commit wrote.
type written struct {
	// instance: the instance was moved (or created) and the entry appended.
	instance bool
	// fired: the deadline the commit handles was recorded handled, or it handles none.
	fired bool
	// completed: the completions of effects queued (WithGroupedCompletions) that the
	// batch stores, delivered at completedAt.
	completed   []fsmrt.EffectID
	completedAt []time.Time
}

// write begins a transaction and writes c in it, in one round trip, and returns the
// transaction, to commit or roll back, and what it wrote. The transaction owns a
// connection of the pool until it ends.
func (s *Store) write(ctx context.Context, c *fsmrt.Commit) (pgx.Tx, written, error) {
	w := written{fired: c.Fired == ""}
	var b pgx.Batch
	b.BeginTx(pgx.TxOptions{})
	s.queueWrite(&b, c, &w)
	s.queueDeadlines(&b, c, &w)
	s.queueCounters(&b, c)
	s.queueNotify(&b, c)
	w.completed, w.completedAt = s.queueGroup(&b)
	br := s.pool.SendBatch(ctx, &b)
	err := br.Close()
	return br.Tx(), w, err
}

// queueWrite queues the statements that write the instance, its entry and its effects,
// recording in w whether the instance was written.
func (s *Store) queueWrite(b *pgx.Batch, c *fsmrt.Commit, w *written) {
	sql, args := s.sql.commitFirst, commitArgs(c)
	if c.Version > 0 {
		sql, args = s.sql.commitNext, append(args, orNull(c.Migrated))
	}
	b.Queue(sql, args...).Exec(func(tag pgconn.CommandTag) error {
		w.instance = tag.RowsAffected() == 1
		return nil
	})
	if len(c.Effects) > 0 {
		b.Queue(s.sql.insertEffects, effectArgs(c)...)
	}
}

// queueDeadlines queues the statements that record the deadline c handles handled,
// recording in w whether they found it not handled yet, and that rearm the instance. The
// deadline handled comes first: a rearm replaces every deadline, handled ones too.
func (s *Store) queueDeadlines(b *pgx.Batch, c *fsmrt.Commit, w *written) {
	if c.Fired != "" {
		b.Queue(s.sql.handleFired, c.Machine, c.ID, c.Fired, micro(c.Entry.At)).Exec(func(tag pgconn.CommandTag) error {
			w.fired = tag.RowsAffected() == 1
			return nil
		})
	}
	if !c.Rearm {
		return
	}
	b.Queue(s.sql.disarm, c.Machine, c.ID)
	if len(c.Deadlines) > 0 {
		b.Queue(s.sql.arm, deadlineArgs(c)...)
	}
}

// queueCounters queues the statements that replace the counters of the instance by
// those of c, unless c keeps them: the ones c changed when it says which (one statement),
// else all of them cleared and c's written.
func (s *Store) queueCounters(b *pgx.Batch, c *fsmrt.Commit) {
	switch {
	case c.CountersKept:
		return
	case c.CountersDelta:
		if len(c.CountersChanged) > 0 {
			b.Queue(s.sql.changeCounters, counterArgs(c.Machine, c.ID, c.CountersChanged)...)
		}
		return
	}
	b.Queue(s.sql.clearCounters, c.Machine, c.ID)
	if len(c.Counters) > 0 {
		b.Queue(s.sql.setCounters, counterArgs(c.Machine, c.ID, c.Counters)...)
	}
}

// commitArgs returns the arguments the commit statements share (see sqlCommitNext).
func commitArgs(c *fsmrt.Commit) []any {
	e := &c.Entry
	return []any{c.Machine, c.ID, c.Spec, e.Seq, c.State, e.Kind, e.Event, e.From, e.To, micro(e.At), orNull(e.Key), e.Data, c.Snapshot}
}

// effectArgs returns the arguments of sqlInsertEffects: the effects, leased to c.Owner
// until c.LeaseUntil when there is an owner (fsmrt.CheckCommit refuses one without an end).
func effectArgs(c *fsmrt.Commit) []any {
	names := make([]string, len(c.Effects))
	keys := make([]string, len(c.Effects))
	data := make([][]byte, len(c.Effects))
	for i, e := range c.Effects {
		names[i], keys[i], data[i] = e.Name, e.Key, e.Data
	}
	var until any // NULL for none
	if c.Owner != "" {
		until = micro(c.LeaseUntil)
	}
	return []any{c.Machine, c.ID, c.Entry.Seq, micro(c.Entry.At), orNull(c.Owner), until, names, keys, data}
}

// deadlineArgs returns the arguments of sqlArm.
func deadlineArgs(c *fsmrt.Commit) []any {
	n := len(c.Deadlines)
	names, ats := make([]string, n), make([]time.Time, n)
	states, events, levels := make([]string, n), make([]string, n), make([]int32, n)
	for i, d := range c.Deadlines {
		names[i], ats[i], states[i], events[i], levels[i] = d.Name, micro(d.At), d.State, d.Event, int32(d.Level)
	}
	return []any{c.Machine, c.ID, names, ats, states, events, levels}
}

// counterArgs returns the arguments of sqlSetCounters and sqlChangeCounters.
func counterArgs(machine, id string, counters []fsmrt.CounterValue) []any {
	n := len(counters)
	names, states, values := make([]string, n), make([]string, n), make([]int64, n)
	for i, v := range counters {
		names[i], states[i], values[i] = v.Name, v.State, int64(v.Value)
	}
	return []any{machine, id, names, states, values}
}

// micro returns t truncated to the microsecond, as the database keeps it: truncated here,
// not rounded by the server as a text timestamp would be.
func micro(t time.Time) time.Time { return t.Truncate(time.Microsecond) }

// orNull returns s, or nil (NULL) for the empty string.
func orNull(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// commitFailed returns the error of a COMMIT that failed with err. An answer of the
// server (a serialization failure at commit, a rollback) and a COMMIT certainly never sent
// (its context ended first, or not a byte of it was written) mean nothing was written;
// anything else leaves the outcome unknown. A connection found closed is unknown too: pgx
// reports one closed after the COMMIT was sent, before its answer, in the same way as one
// closed before.
func (s *Store) commitFailed(ctx context.Context, c *fsmrt.Commit, err error) error {
	var pgErr *pgconn.PgError
	switch {
	case lostRace(err):
		return s.whyRefused(ctx, c)
	case errors.As(err, &pgErr) || errors.Is(err, pgx.ErrTxCommitRollback) ||
		pgconn.SafeToRetry(err) && !errors.Is(err, pgconn.ErrConnClosed):
		return failed("commit", c.Machine, c.ID, err)
	}
	return fmt.Errorf("postgres store: commit %q %q: %w: %w", c.Machine, c.ID, ErrCommitUnknown, err)
}

// refused returns the error of a commit whose batch failed with err, or, when err is nil,
// did not write the instance or did not find the deadline to remove. The version, the
// spec and the key come first: the batch stops at the write when they refuse it.
func (s *Store) refused(ctx context.Context, c *fsmrt.Commit, w written, err error) error {
	return s.refusedIn(ctx, s.pool, c, w, err)
}

// refusedIn is refused, reading why through q (the pool, or the caller's transaction).
func (s *Store) refusedIn(ctx context.Context, q interface {
	QueryRow(context.Context, string, ...any) pgx.Row
}, c *fsmrt.Commit, w written, err error) error {
	switch {
	case err == nil && w.instance:
		return &fsmrt.ConflictError{Machine: c.Machine, ID: c.ID, Version: c.Version, Stored: c.Version, Deadline: c.Fired}
	case err == nil || lostRace(err):
		return s.whyRefusedIn(ctx, q, c)
	}
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) {
		return failed("commit", c.Machine, c.ID, err)
	}
	switch pgErr.Code {
	case codeUniqueViolation:
		if pgErr.ConstraintName == entriesKeyIndex {
			return &fsmrt.ConflictError{Machine: c.Machine, ID: c.ID, Version: c.Version, Stored: c.Version, Key: c.Entry.Key}
		}
		// The entry's sequence number is taken: the version moved on.
		return s.whyRefusedIn(ctx, q, c)
	case codeCharacterNotInRepertoire, codeUntranslatableCharacter:
		return fmt.Errorf("%w: %q %q: a name the database cannot keep: %s", fsmrt.ErrInvalidCommit, c.Machine, c.ID, pgErr.Message)
	}
	return failed("commit", c.Machine, c.ID, err)
}

// whyRefused reads the instance of a refused commit and returns the refusal: a
// *fsmrt.SpecMismatchError when it is stored under another spec than c's and the one c
// migrates it from, else a *fsmrt.ConflictError with its version.
func (s *Store) whyRefused(ctx context.Context, c *fsmrt.Commit) error {
	return s.whyRefusedIn(ctx, s.pool, c)
}

// whyRefusedIn is whyRefused, reading through q (the pool, or the caller's transaction).
func (s *Store) whyRefusedIn(ctx context.Context, q interface {
	QueryRow(context.Context, string, ...any) pgx.Row
}, c *fsmrt.Commit) error {
	var stored int64
	var spec string
	err := q.QueryRow(ctx, s.sql.stored, c.Machine, c.ID).Scan(&stored, &spec)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		stored = 0
	case err != nil:
		return failed("commit (refused, reading why)", c.Machine, c.ID, err)
	case spec != c.Spec && (c.Migrated == "" || spec != c.Migrated):
		return &fsmrt.SpecMismatchError{Machine: c.Machine, ID: c.ID, Stored: spec, Spec: c.Spec}
	}
	return &fsmrt.ConflictError{Machine: c.Machine, ID: c.ID, Version: c.Version, Stored: stored}
}

// lostRace reports whether err is a serialization failure or a deadlock: another
// transaction won.
func lostRace(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && (pgErr.Code == codeSerializationFailure || pgErr.Code == codeDeadlockDetected)
}
