package postgres

import (
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/fsmgen/fsmgen/fsmrt"
)

// ErrCorrupt says the database does not hold what this store wrote: an instance row out
// of step with its log (a version, snapshot or state its entries do not lead to), a gap
// in a log, or PostgreSQL's own word that its data or an index is damaged (SQLSTATE
// XX001, XX002). Errors of Load wrap it when they find such rows; every operation's error
// wraps it on PostgreSQL's word.
//
// Load checks what it reads anyway: the instance row against the entries after its
// snapshot. Not checked, because it would cost every commit or read another query: the
// counters rows and the deadlines' times (Find and the claims believe them), and an
// instance row's state when its last entry is its snapshot's (fsmrt's Replay compares it
// with the snapshot).
var ErrCorrupt = errors.New("corrupt data")

// corrupt returns err wrapping ErrCorrupt when PostgreSQL says its data or an index is
// damaged; otherwise err.
func corrupt(err error) error {
	var pe *pgconn.PgError
	if errors.As(err, &pe) && (pe.Code == "XX001" || pe.Code == "XX002") && !errors.Is(err, ErrCorrupt) {
		return fmt.Errorf("%w: %w", ErrCorrupt, err)
	}
	return err
}

// checkLoaded returns an error wrapping ErrCorrupt when the instance Load read is not
// one Commit writes: its entries after the snapshot are not those numbered from the
// snapshot's up to its version, or the last of them did not enter its state (when the
// commit named the state it entered).
func checkLoaded(l *fsmrt.Loaded) error {
	if l.Version == 0 && l.State == "" && l.Spec == "" {
		if len(l.Entries) > 0 {
			return fmt.Errorf("%w: entries of an instance that is not stored", ErrCorrupt)
		}
		return nil // never committed
	}
	switch {
	case l.Version < 1:
		return fmt.Errorf("%w: instance at version %d", ErrCorrupt, l.Version)
	case l.SnapshotSeq < 0 || l.SnapshotSeq > l.Version:
		return fmt.Errorf("%w: snapshot after entry %d of %d", ErrCorrupt, l.SnapshotSeq, l.Version)
	case int64(len(l.Entries)) != l.Version-l.SnapshotSeq:
		return fmt.Errorf("%w: %d entries after entry %d, want %d up to version %d", ErrCorrupt, len(l.Entries), l.SnapshotSeq, l.Version-l.SnapshotSeq, l.Version)
	}
	for i, e := range l.Entries {
		if want := l.SnapshotSeq + int64(i) + 1; e.Seq != want {
			return fmt.Errorf("%w: entry %d where entry %d of %d belongs", ErrCorrupt, e.Seq, want, l.Version)
		}
	}
	if n := len(l.Entries); n > 0 && l.Entries[n-1].To != "" && l.Entries[n-1].To != l.State {
		return fmt.Errorf("%w: instance in state %q, its last entry %d entered %q", ErrCorrupt, l.State, l.Version, l.Entries[n-1].To)
	}
	return nil
}
