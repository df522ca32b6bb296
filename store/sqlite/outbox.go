package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/fsmgen/fsmgen/fsmrt"
)

// Statements of the outbox.
const (
	insertEffectRow = `INSERT INTO fsmgen_effects
		(machine, id, seq, idx, name, idem_key, data, owner, leased_until, attempts, committed_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`

	// selectClaimableEffects lists the effects of a machine a claim at now may lease, in
	// the order it leases them: not delivered, and never leased or leased until before
	// now. It walks the partial index fsmgen_effects_pending in that order and stops at
	// the limit.
	selectClaimableEffects = `SELECT id, seq, idx, name, idem_key, data, data IS NOT NULL, attempts
		FROM fsmgen_effects
		WHERE machine = ? AND delivered_at IS NULL AND (owner IS NULL OR leased_until < ?)
		ORDER BY committed_at, id, seq, idx
		LIMIT ?`

	anyClaimableEffect = `SELECT 1 FROM fsmgen_effects
		WHERE machine = ? AND delivered_at IS NULL AND (owner IS NULL OR leased_until < ?)
		LIMIT 1`

	leaseEffect = `UPDATE fsmgen_effects SET owner = ?, leased_until = ?, attempts = attempts + 1
		WHERE machine = ? AND id = ? AND seq = ? AND idx = ?`

	completeEffect = `UPDATE fsmgen_effects SET delivered_at = ?
		WHERE machine = ? AND id = ? AND seq = ? AND idx = ? AND delivered_at IS NULL`
)

// insertEffects writes the effects of c to the outbox, numbered by their position: leased
// to c.Owner until c.LeaseUntil with their first attempt counted when c.Owner is set,
// free for any claimer otherwise.
func insertEffects(ctx context.Context, t *tx, c *fsmrt.Commit) error {
	if len(c.Effects) == 0 {
		return nil
	}
	var until sql.NullInt64
	attempts := 0
	if c.Owner != "" {
		until, attempts = sql.NullInt64{Int64: c.LeaseUntil.UnixMicro(), Valid: true}, 1
	}
	for i, e := range c.Effects {
		_, err := t.ExecContext(ctx, insertEffectRow, c.Machine, c.ID, c.Entry.Seq, i, e.Name, e.Key, e.Data,
			nullString(c.Owner), until, attempts, c.Entry.At.UnixMicro())
		if err != nil {
			return fmt.Errorf("effect %d: %w", i, err)
		}
	}
	return nil
}

// ClaimEffects leases to owner, until now+lease, at most limit effects of machine that
// are not delivered and not leased (or whose lease ended before now), oldest commit
// first, counting the attempt (fsmrt.Store.ClaimEffects). The claim is one transaction
// under SQLite's write lock, so that claimers in this process or in others sharing the
// file never get the same effect. An error means nothing was claimed.
func (s *Store) ClaimEffects(ctx context.Context, machine, owner string, now time.Time, lease time.Duration, limit int) ([]fsmrt.PendingEffect, error) {
	if err := ctx.Err(); err != nil || limit <= 0 {
		return nil, err
	}
	var out []fsmrt.PendingEffect
	pending, err := s.anyRow(ctx, anyClaimableEffect, machine, now.UnixMicro())
	if err == nil && pending {
		err = s.writeTx(ctx, false, func(t *tx) error {
			var err error
			out, err = claimEffects(ctx, t, machine, owner, now, now.Add(lease), limit)
			return err
		})
	}
	if err != nil {
		return nil, fmt.Errorf("sqlite store: claim effects of %s: %w", machine, err)
	}
	return out, nil
}

// claimEffects selects the effects a claim at now gets and leases them to owner until
// until, inside the caller's transaction holding the write lock.
func claimEffects(ctx context.Context, t *tx, machine, owner string, now, until time.Time, limit int) ([]fsmrt.PendingEffect, error) {
	var out []fsmrt.PendingEffect
	err := eachRow(ctx, t, selectClaimableEffects, []any{machine, now.UnixMicro(), limit}, func(rows *sql.Rows) error {
		e, err := scanEffect(rows, machine)
		out = append(out, e)
		return err
	})
	if err != nil || len(out) == 0 {
		return nil, err
	}
	for i := range out {
		e := &out[i]
		if _, err := t.ExecContext(ctx, leaseEffect, nullString(owner), until.UnixMicro(), machine, e.ID, e.Seq, e.Index); err != nil {
			return nil, err
		}
		e.Attempts++
	}
	return out, nil
}

// scanEffect reads an effect of machine from the columns selectClaimableEffects lists.
func scanEffect(rows *sql.Rows, machine string) (fsmrt.PendingEffect, error) {
	e := fsmrt.PendingEffect{EffectID: fsmrt.EffectID{Machine: machine}}
	var hasData bool
	if err := scan(rows, &e.ID, &e.Seq, &e.Index, &e.Name, &e.Key, &e.Data, &hasData, &e.Attempts); err != nil {
		return fsmrt.PendingEffect{}, err
	}
	if hasData && e.Data == nil {
		e.Data = []byte{} // empty data, not none
	}
	return e, nil
}

// CompleteEffects records the effects ids delivered at now, in one transaction
// (fsmrt.Store.CompleteEffects), or queues them for the next commit when opened
// WithGroupedCompletions. Effects already delivered keep their time; ids the outbox does
// not hold are passed over.
func (s *Store) CompleteEffects(ctx context.Context, ids []fsmrt.EffectID, now time.Time) error {
	if err := ctx.Err(); err != nil || len(ids) == 0 {
		return err
	}
	if s.group.Add(ids, now) {
		return nil // stored with the next commit (WithGroupedCompletions)
	}
	err := s.writeTx(ctx, true, func(t *tx) error { return completeEffects(ctx, t, ids, now) })
	if err != nil {
		return fmt.Errorf("sqlite store: complete %d effects: %w", len(ids), err)
	}
	return nil
}

// completeEffects marks the effects ids delivered at now, inside the caller's
// transaction holding the write lock.
func completeEffects(ctx context.Context, t *tx, ids []fsmrt.EffectID, now time.Time) error {
	for _, id := range ids {
		if _, err := t.ExecContext(ctx, completeEffect, now.UnixMicro(), id.Machine, id.ID, id.Seq, id.Index); err != nil {
			return err
		}
	}
	return nil
}
