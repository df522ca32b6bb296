package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/fsmgen/fsmgen/fsmrt"
)

// Read-only statements of what the store still owes (fsmrt.PendingReader), in the orders
// the claims take them: $2 is the instance, "" for all; $3 the limit, NULL for none. They
// take no lock: a claim running at once is not held up, and what they read may be claimed
// the moment after.
const (
	sqlPendingEffects = `SELECT id, seq, idx, name, idem_key, data, attempts, coalesce(owner, ''), leased_until,
	coalesce(last_error, ''), failed_at
FROM {schema}.fsmgen_effects
WHERE machine = $1::text AND delivered_at IS NULL AND ($2::text = '' OR id = $2::text)
ORDER BY committed_at, id COLLATE "C", seq, idx
LIMIT $3::bigint`

	sqlPendingDeadlines = `SELECT id, name, at, state, event, level, coalesce(owner, ''), leased_until
FROM {schema}.fsmgen_deadlines
WHERE machine = $1::text AND handled_at IS NULL AND ($2::text = '' OR id = $2::text)
ORDER BY at, id COLLATE "C", name COLLATE "C"
LIMIT $3::bigint`
)

var _ fsmrt.PendingReader = (*Store)(nil)

// pendingLimit is q's limit as the statements take it: nil (NULL) for none.
func pendingLimit(q fsmrt.PendingQuery) any {
	if q.Limit <= 0 {
		return nil
	}
	return q.Limit
}

// leaseEnd is the end of a lease read from the store, or the zero time for none.
func leaseEnd(t *time.Time) time.Time {
	if t == nil {
		return time.Time{}
	}
	return *t
}

// PendingEffects returns the effects of q.Machine (of instance q.ID, or of all) not
// delivered, oldest commit first, at most q.Limit (0: all), in one statement that claims
// nothing (fsmrt.PendingReader).
func (s *Store) PendingEffects(ctx context.Context, q fsmrt.PendingQuery) ([]fsmrt.OwedEffect, error) {
	rows, err := s.pool.Query(ctx, s.sql.pendingEffects, q.Machine, q.ID, pendingLimit(q))
	if err != nil {
		return nil, fmt.Errorf("postgres store: pending effects of %q: %w", q.Machine, err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (fsmrt.OwedEffect, error) {
		e := fsmrt.OwedEffect{PendingEffect: fsmrt.PendingEffect{EffectID: fsmrt.EffectID{Machine: q.Machine}}}
		var until, failed *time.Time
		err := row.Scan(&e.ID, &e.Seq, &e.Index, &e.Name, &e.Key, &e.Data, &e.Attempts, &e.Owner, &until, &e.LastError, &failed)
		e.LeaseUntil, e.FailedAt = leaseEnd(until), leaseEnd(failed)
		return e, err
	})
	if err != nil {
		return nil, fmt.Errorf("postgres store: pending effects of %q: %w", q.Machine, err)
	}
	return out, nil
}

// PendingDeadlines returns the deadlines of q.Machine (of instance q.ID, or of all) not
// handled, due or not, earliest first, at most q.Limit (0: all), in one statement that
// claims nothing (fsmrt.PendingReader).
func (s *Store) PendingDeadlines(ctx context.Context, q fsmrt.PendingQuery) ([]fsmrt.OwedDeadline, error) {
	rows, err := s.pool.Query(ctx, s.sql.pendingDeadlines, q.Machine, q.ID, pendingLimit(q))
	if err != nil {
		return nil, fmt.Errorf("postgres store: pending deadlines of %q: %w", q.Machine, err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (fsmrt.OwedDeadline, error) {
		d := fsmrt.OwedDeadline{DueDeadline: fsmrt.DueDeadline{Machine: q.Machine}}
		var level int32
		var until *time.Time
		err := row.Scan(&d.ID, &d.Name, &d.At, &d.State, &d.Event, &level, &d.Owner, &until)
		d.Level, d.LeaseUntil = int(level), leaseEnd(until)
		return d, err
	})
	if err != nil {
		return nil, fmt.Errorf("postgres store: pending deadlines of %q: %w", q.Machine, err)
	}
	return out, nil
}
