package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/fsmgen/fsmgen/fsmrt"
)

// ErrCorrupt says the database does not hold what this store wrote: a value of the wrong
// type, a gap in a log, a snapshot out of place, an instance row in another state than
// its last entry entered, a table of the schema missing, or a file SQLite says is damaged
// or not a database. Errors of Open, Load, Log and FindKey wrap it when they find such a
// row or file, and those of every other operation on SQLite's word (corrupt.go).
var ErrCorrupt = errors.New("corrupt data")

// Load returns the instance with its last snapshot and the entries after it, read in one
// transaction (fsmrt.Store.Load).
func (s *Store) Load(ctx context.Context, machine, id string) (fsmrt.Loaded, error) {
	var l fsmrt.Loaded
	err := s.read(ctx, func(t *tx) error {
		var err error
		l, err = load(ctx, t, machine, id)
		return err
	})
	if err != nil {
		return fsmrt.Loaded{}, fmt.Errorf("sqlite store: load %s %s: %w", machine, id, corrupt(err))
	}
	return l, nil
}

// Log returns the entries of the instance after seq after, read in one transaction
// (fsmrt.Store.Log).
func (s *Store) Log(ctx context.Context, machine, id string, after int64) ([]fsmrt.Entry, error) {
	var log []fsmrt.Entry
	err := s.read(ctx, func(t *tx) error {
		h, exists, err := storedHead(ctx, t, machine, id)
		if err != nil || !exists {
			return err
		}
		log, err = entriesAfter(ctx, t, machine, id, max(after, 0), h.version)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("sqlite store: log of %s %s: %w", machine, id, corrupt(err))
	}
	return log, nil
}

// FindKey returns the entry of the instance that used idempotency key key
// (fsmrt.Store.FindKey). The empty key finds nothing.
func (s *Store) FindKey(ctx context.Context, machine, id, key string) (fsmrt.Entry, bool, error) {
	if err := ctx.Err(); err != nil || key == "" {
		return fsmrt.Entry{}, false, err
	}
	var e fsmrt.Entry
	found := false
	err := eachRow(ctx, pool{s}, selectKeyEntry, []any{machine, id, key},
		func(rows *sql.Rows) (err error) {
			e, err = scanEntry(rows)
			found = true
			return err
		})
	if err != nil {
		return fsmrt.Entry{}, false, fmt.Errorf("sqlite store: find key %q of %s %s: %w", key, machine, id, corrupt(err))
	}
	return e, found, nil
}

// load reads instance (machine, id) inside the caller's transaction.
func load(ctx context.Context, q querier, machine, id string) (fsmrt.Loaded, error) {
	var l fsmrt.Loaded
	var hasSnapshot, found bool
	err := eachRow(ctx, q, selectInstance, []any{machine, id},
		func(rows *sql.Rows) error {
			found = true
			return scan(rows, &l.Spec, &l.Version, &l.State, &l.Snapshot, &hasSnapshot, &l.SnapshotSeq)
		})
	if err != nil || !found {
		return fsmrt.Loaded{}, err
	}
	if hasSnapshot && l.Snapshot == nil {
		l.Snapshot = []byte{} // an empty snapshot, not none
	}
	if err := checkInstance(&l, hasSnapshot); err != nil {
		return fsmrt.Loaded{}, err
	}
	l.Entries, err = entriesAfter(ctx, q, machine, id, l.SnapshotSeq, l.Version)
	if n := len(l.Entries); err == nil && n > 0 && l.Entries[n-1].To != "" && l.Entries[n-1].To != l.State {
		// The instance row's state is what its last entry entered (when its commit named
		// it): Find reads it.
		return fsmrt.Loaded{}, fmt.Errorf("%w: instance in state %q, its last entry %d entered %q", ErrCorrupt, l.State, l.Version, l.Entries[n-1].To)
	}
	return l, err
}

// checkInstance returns an error wrapping ErrCorrupt when the instance row read into l
// is not one Commit writes.
func checkInstance(l *fsmrt.Loaded, hasSnapshot bool) error {
	switch {
	case l.Version < 1:
		return fmt.Errorf("%w: instance at version %d", ErrCorrupt, l.Version)
	case l.SnapshotSeq < 0 || l.SnapshotSeq > l.Version:
		return fmt.Errorf("%w: snapshot after entry %d of %d", ErrCorrupt, l.SnapshotSeq, l.Version)
	case hasSnapshot != (l.SnapshotSeq > 0):
		return fmt.Errorf("%w: snapshot stored %v, after entry %d", ErrCorrupt, hasSnapshot, l.SnapshotSeq)
	}
	return nil
}

// Statements of the readers.
const (
	// entryColumns are the columns scanEntry reads, in its order.
	entryColumns = `seq, kind, event, from_state, to_state, at, idem_key, data, data IS NOT NULL`

	selectInstance = `SELECT spec, version, state, snapshot, snapshot IS NOT NULL, snapshot_seq
		FROM fsmgen_instances WHERE machine = ? AND id = ?`

	selectEntriesAfter = `SELECT ` + entryColumns + ` FROM fsmgen_entries
		WHERE machine = ? AND id = ? AND seq > ? ORDER BY seq`

	selectKeyEntry = `SELECT ` + entryColumns + ` FROM fsmgen_entries
		WHERE machine = ? AND id = ? AND idem_key = ?`
)

// entriesAfter returns the entries of instance (machine, id) numbered after+1 to
// version, in order, or nil when there are none; an entry missing or out of place is an
// error wrapping ErrCorrupt.
func entriesAfter(ctx context.Context, q querier, machine, id string, after, version int64) ([]fsmrt.Entry, error) {
	var out []fsmrt.Entry
	err := eachRow(ctx, q, selectEntriesAfter, []any{machine, id, after},
		func(rows *sql.Rows) error {
			e, err := scanEntry(rows)
			if err != nil {
				return err
			}
			if want := after + int64(len(out)) + 1; e.Seq != want || e.Seq > version {
				return fmt.Errorf("%w: entry %d where entry %d of %d belongs", ErrCorrupt, e.Seq, want, version)
			}
			out = append(out, e)
			return nil
		})
	if err != nil {
		return nil, err
	}
	if want := max(version-after, 0); int64(len(out)) != want {
		return nil, fmt.Errorf("%w: %d entries after entry %d, want %d up to version %d", ErrCorrupt, len(out), after, want, version)
	}
	return out, nil
}

// scanEntry reads an entry from the columns entryColumns names.
func scanEntry(rows *sql.Rows) (fsmrt.Entry, error) {
	var e fsmrt.Entry
	var at int64
	var key sql.NullString
	var hasData bool
	if err := scan(rows, &e.Seq, &e.Kind, &e.Event, &e.From, &e.To, &at, &key, &e.Data, &hasData); err != nil {
		return fsmrt.Entry{}, err
	}
	if key.Valid && key.String == "" {
		return fsmrt.Entry{}, fmt.Errorf("%w: entry %d with an empty idempotency key", ErrCorrupt, e.Seq)
	}
	if hasData && e.Data == nil {
		e.Data = []byte{} // empty data, not none
	}
	e.At, e.Key = time.UnixMicro(at), key.String
	return e, nil
}

// eachRow runs query and calls row for each row of its result.
// anyRow reports whether query selects a row, read without the write lock: a claim first
// asks whether there is anything to claim, so that the polls that find nothing (most of
// them) take no write transaction from the one writer SQLite has at a time.
func (s *Store) anyRow(ctx context.Context, query string, args ...any) (bool, error) {
	found := false
	err := s.read(ctx, func(t *tx) error {
		return eachRow(ctx, t, query, args, func(*sql.Rows) error {
			found = true
			return nil
		})
	})
	return found, err
}

func eachRow(ctx context.Context, q querier, query string, args []any, row func(*sql.Rows) error) error {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		if err := row(rows); err != nil {
			return err
		}
	}
	return rows.Err()
}

// scan reads the current row into dest; a value that does not convert to its
// destination (text in an integer column, a NULL where none is written) is an error
// wrapping ErrCorrupt.
func scan(rows *sql.Rows, dest ...any) error {
	if err := rows.Scan(dest...); err != nil {
		return fmt.Errorf("%w: %v", ErrCorrupt, err)
	}
	return nil
}
