package postgres

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"

	"github.com/fsmgen/fsmgen/fsmrt"
)

// Load returns instance (machine, id) (fsmrt.Store.Load): the instance and its entries
// after the snapshot are read in one REPEATABLE READ, READ ONLY transaction, sent in one
// round trip. An instance never committed loads as the zero fsmrt.Loaded.
func (s *Store) Load(ctx context.Context, machine, id string) (fsmrt.Loaded, error) {
	var l fsmrt.Loaded
	var b pgx.Batch
	b.Queue(sqlBeginSnapshot)
	b.Queue(s.sql.instance, machine, id).QueryRow(func(row pgx.Row) error {
		err := row.Scan(&l.Version, &l.Spec, &l.State, &l.Snapshot, &l.SnapshotSeq)
		if errors.Is(err, pgx.ErrNoRows) {
			return nil
		}
		return err
	})
	b.Queue(s.sql.entriesAfterSnapshot, machine, id).Query(func(rows pgx.Rows) (err error) {
		l.Entries, err = scanEntries(rows)
		return err
	})
	b.Queue(sqlEnd)
	// A failure leaves the connection in the transaction: the pool then closes it.
	if err := s.pool.SendBatch(ctx, &b).Close(); err != nil {
		return fsmrt.Loaded{}, failed("load", machine, id, err)
	}
	if err := checkLoaded(&l); err != nil {
		return fsmrt.Loaded{}, failed("load", machine, id, err)
	}
	return l, nil
}

// Log returns the entries of the instance after seq after, in order (fsmrt.Store.Log).
func (s *Store) Log(ctx context.Context, machine, id string, after int64) ([]fsmrt.Entry, error) {
	rows, err := s.pool.Query(ctx, s.sql.log, machine, id, after)
	if err != nil {
		return nil, failed("log", machine, id, err)
	}
	log, err := scanEntries(rows)
	if err != nil {
		return nil, failed("log", machine, id, err)
	}
	return log, nil
}

// FindKey returns the entry of the instance that used idempotency key key
// (fsmrt.Store.FindKey). The empty key is no key: it finds nothing.
func (s *Store) FindKey(ctx context.Context, machine, id, key string) (fsmrt.Entry, bool, error) {
	if key == "" {
		return fsmrt.Entry{}, false, ctx.Err()
	}
	var e fsmrt.Entry
	err := scanEntry(s.pool.QueryRow(ctx, s.sql.findKey, machine, id, key), &e)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return fsmrt.Entry{}, false, nil
	case err != nil:
		return fsmrt.Entry{}, false, failed("find key", machine, id, err)
	}
	return e, true, nil
}

// scanEntries reads the entries rows returns and closes them; nil when there are none.
func scanEntries(rows pgx.Rows) ([]fsmrt.Entry, error) {
	defer rows.Close()
	var out []fsmrt.Entry
	for rows.Next() {
		var e fsmrt.Entry
		if err := scanEntry(rows, &e); err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

// scanEntry reads an entry from row, which holds the columns of sqlLog; the bytes of
// Data are the caller's.
func scanEntry(row pgx.Row, e *fsmrt.Entry) error {
	return row.Scan(&e.Seq, &e.Kind, &e.Event, &e.From, &e.To, &e.At, &e.Key, &e.Data)
}
