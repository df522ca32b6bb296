package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/fsmgen/fsmgen/fsmrt"
)

// Read-only statements of what the store still owes (fsmrt.PendingReader), in the orders
// the claims take them: the outbox by the partial index fsmgen_effects_pending, the
// deadlines by fsmgen_deadlines_due. ?2 is the instance, "" for all; ?3 the limit, -1 for
// none.
const (
	selectPendingEffects = `SELECT id, seq, idx, name, idem_key, data, data IS NOT NULL, attempts, owner, leased_until,
			coalesce(last_error, ''), failed_at
		FROM fsmgen_effects
		WHERE machine = ?1 AND delivered_at IS NULL AND (?2 = '' OR id = ?2)
		ORDER BY committed_at, id, seq, idx
		LIMIT ?3`

	selectPendingDeadlines = `SELECT id, name, at, state, event, level, owner, leased_until
		FROM fsmgen_deadlines
		WHERE machine = ?1 AND handled_at IS NULL AND (?2 = '' OR id = ?2)
		ORDER BY at, id, name
		LIMIT ?3`
)

var _ fsmrt.PendingReader = (*Store)(nil)

// pendingLimit is q's limit as the statements take it: -1 for none.
func pendingLimit(q fsmrt.PendingQuery) int {
	if q.Limit <= 0 {
		return -1
	}
	return q.Limit
}

// leasedUntil is the end of a lease as the store keeps it, in microseconds, or the zero
// time for none.
func leasedUntil(micros sql.NullInt64) time.Time {
	if !micros.Valid {
		return time.Time{}
	}
	return time.UnixMicro(micros.Int64)
}

// PendingEffects returns the effects of q.Machine (of instance q.ID, or of all) not
// delivered, oldest commit first, at most q.Limit (0: all), read in one transaction
// without claiming them (fsmrt.PendingReader).
func (s *Store) PendingEffects(ctx context.Context, q fsmrt.PendingQuery) ([]fsmrt.OwedEffect, error) {
	var out []fsmrt.OwedEffect
	err := s.read(ctx, func(t *tx) error {
		return eachRow(ctx, t, selectPendingEffects, []any{q.Machine, q.ID, pendingLimit(q)}, func(rows *sql.Rows) error {
			e := fsmrt.OwedEffect{PendingEffect: fsmrt.PendingEffect{EffectID: fsmrt.EffectID{Machine: q.Machine}}}
			var hasData bool
			var owner sql.NullString
			var until, failed sql.NullInt64
			if err := scan(rows, &e.ID, &e.Seq, &e.Index, &e.Name, &e.Key, &e.Data, &hasData, &e.Attempts, &owner, &until, &e.LastError, &failed); err != nil {
				return err
			}
			e.FailedAt = leasedUntil(failed)
			if hasData && e.Data == nil {
				e.Data = []byte{} // empty data, not none
			}
			e.Owner, e.LeaseUntil = owner.String, leasedUntil(until)
			out = append(out, e)
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("sqlite store: pending effects of %s: %w", q.Machine, err)
	}
	return out, nil
}

// PendingDeadlines returns the deadlines of q.Machine (of instance q.ID, or of all) not
// handled, due or not, earliest first, at most q.Limit (0: all), read in one transaction
// without claiming them (fsmrt.PendingReader).
func (s *Store) PendingDeadlines(ctx context.Context, q fsmrt.PendingQuery) ([]fsmrt.OwedDeadline, error) {
	var out []fsmrt.OwedDeadline
	err := s.read(ctx, func(t *tx) error {
		return eachRow(ctx, t, selectPendingDeadlines, []any{q.Machine, q.ID, pendingLimit(q)}, func(rows *sql.Rows) error {
			d := fsmrt.OwedDeadline{DueDeadline: fsmrt.DueDeadline{Machine: q.Machine}}
			var at int64
			var owner sql.NullString
			var until sql.NullInt64
			if err := scan(rows, &d.ID, &d.Name, &at, &d.State, &d.Event, &d.Level, &owner, &until); err != nil {
				return err
			}
			d.At, d.Owner, d.LeaseUntil = time.UnixMicro(at), owner.String, leasedUntil(until)
			out = append(out, d)
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("sqlite store: pending deadlines of %s: %w", q.Machine, err)
	}
	return out, nil
}
