package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/fsmgen/fsmgen/fsmrt"
)

// Statements of the deadlines.
const (
	// handleDeadline records a deadline handled: it stays (Find sees it) until the next
	// rearm, but is never claimed again. It finds none when the instance does not have the
	// deadline, or has handled it already.
	handleDeadline = `UPDATE fsmgen_deadlines SET handled_at = ?
		WHERE machine = ? AND id = ? AND name = ? AND handled_at IS NULL`

	deleteDeadlines = `DELETE FROM fsmgen_deadlines WHERE machine = ? AND id = ?`

	insertDeadlineRow = `INSERT INTO fsmgen_deadlines (machine, id, name, at, state, event, level)
		VALUES (?, ?, ?, ?, ?, ?, ?)`

	// selectDueDeadlines lists the deadlines of a machine a claim at now may lease, in the
	// order it leases them: due, not handled, and never leased or leased until before now.
	// It walks the partial index fsmgen_deadlines_due (of the deadlines not handled) in
	// that order and stops at the limit.
	selectDueDeadlines = `SELECT id, name, at, state, event, level
		FROM fsmgen_deadlines
		WHERE machine = ? AND handled_at IS NULL AND at <= ? AND (owner IS NULL OR leased_until < ?)
		ORDER BY at, id, name
		LIMIT ?`

	anyDueDeadline = `SELECT 1 FROM fsmgen_deadlines
		WHERE machine = ? AND handled_at IS NULL AND at <= ? AND (owner IS NULL OR leased_until < ?)
		LIMIT 1`

	leaseDeadline = `UPDATE fsmgen_deadlines SET owner = ?, leased_until = ?
		WHERE machine = ? AND id = ? AND name = ?`
)

// writeDeadlines records the deadline c handles handled, at the time of c's entry, and,
// when c rearms, replaces the instance's deadlines (handled or not) by those of c
// (unleased), inside the caller's transaction. It returns a ConflictError when c handles
// a deadline (c.Fired) the instance does not have, or has handled already: another
// commit handled it, or disarmed it, first.
func writeDeadlines(ctx context.Context, t *tx, c *fsmrt.Commit) error {
	if c.Fired != "" {
		res, err := t.ExecContext(ctx, handleDeadline, c.Entry.At.UnixMicro(), c.Machine, c.ID, c.Fired)
		if err != nil {
			return err
		}
		n, err := res.RowsAffected()
		if err != nil {
			return err
		}
		if n != 1 {
			return &fsmrt.ConflictError{Machine: c.Machine, ID: c.ID, Version: c.Version, Stored: c.Version, Deadline: c.Fired}
		}
	}
	if !c.Rearm {
		return nil
	}
	if _, err := t.ExecContext(ctx, deleteDeadlines, c.Machine, c.ID); err != nil {
		return err
	}
	for _, d := range c.Deadlines {
		_, err := t.ExecContext(ctx, insertDeadlineRow, c.Machine, c.ID, d.Name, d.At.UnixMicro(), d.State, d.Event, d.Level)
		if err != nil {
			return fmt.Errorf("deadline %s: %w", d.Name, err)
		}
	}
	return nil
}

// ClaimDeadlines leases to owner, until now+lease, at most limit deadlines of machine
// that are due at now, not handled and not leased (or whose lease ended before now),
// earliest first, then by instance and name (fsmrt.Store.ClaimDeadlines). The claim is
// one transaction under SQLite's write lock, so that claimers in this process or in
// others sharing the file never get the same deadline. An error means nothing was
// claimed.
func (s *Store) ClaimDeadlines(ctx context.Context, machine, owner string, now time.Time, lease time.Duration, limit int) ([]fsmrt.DueDeadline, error) {
	if err := ctx.Err(); err != nil || limit <= 0 {
		return nil, err
	}
	var out []fsmrt.DueDeadline
	micros := now.UnixMicro()
	due, err := s.anyRow(ctx, anyDueDeadline, machine, micros, micros)
	if err == nil && due {
		err = s.writeTx(ctx, false, func(t *tx) error {
			var err error
			out, err = claimDeadlines(ctx, t, machine, owner, now, now.Add(lease), limit)
			return err
		})
	}
	if err != nil {
		return nil, fmt.Errorf("sqlite store: claim deadlines of %s: %w", machine, err)
	}
	return out, nil
}

// claimDeadlines selects the deadlines a claim at now gets and leases them to owner until
// until, inside the caller's transaction holding the write lock.
func claimDeadlines(ctx context.Context, t *tx, machine, owner string, now, until time.Time, limit int) ([]fsmrt.DueDeadline, error) {
	var out []fsmrt.DueDeadline
	micros := now.UnixMicro()
	err := eachRow(ctx, t, selectDueDeadlines, []any{machine, micros, micros, limit}, func(rows *sql.Rows) error {
		d, err := scanDeadline(rows, machine)
		out = append(out, d)
		return err
	})
	if err != nil || len(out) == 0 {
		return nil, err
	}
	for _, d := range out {
		if _, err := t.ExecContext(ctx, leaseDeadline, nullString(owner), until.UnixMicro(), machine, d.ID, d.Name); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// scanDeadline reads a deadline of machine from the columns selectDueDeadlines lists.
func scanDeadline(rows *sql.Rows, machine string) (fsmrt.DueDeadline, error) {
	d := fsmrt.DueDeadline{Machine: machine}
	var at int64
	if err := scan(rows, &d.ID, &d.Name, &at, &d.State, &d.Event, &d.Level); err != nil {
		return fsmrt.DueDeadline{}, err
	}
	d.At = time.UnixMicro(at)
	return d, nil
}
