package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/fsmgen/fsmgen/fsmrt"
)

// Statements of the rows kept beside an instance's log (fsmrt.IndexReader), read in one
// transaction.
const (
	selectIndexInstance = `SELECT state, version, last_at FROM fsmgen_instances WHERE machine = ? AND id = ?`

	selectIndexCounters = `SELECT name, state, value FROM fsmgen_counters WHERE machine = ? AND id = ?
		ORDER BY name, state`

	selectIndexDeadlines = `SELECT name, at, state, event, level, handled_at IS NOT NULL FROM fsmgen_deadlines
		WHERE machine = ? AND id = ? ORDER BY name`
)

var _ fsmrt.IndexReader = (*Store)(nil)

// IndexRows returns the rows the store keeps of instance (machine, id) beside its log, for
// Find and the timers: its state, version and time of its last entry, its counters and its
// deadlines, read in one transaction (fsmrt.IndexReader). fsmrt.Audit compares them with
// the log.
func (s *Store) IndexRows(ctx context.Context, machine, id string) (fsmrt.IndexRows, error) {
	var out fsmrt.IndexRows
	err := s.read(ctx, func(t *tx) error {
		out = fsmrt.IndexRows{}
		var last sql.NullInt64
		err := t.QueryRowContext(ctx, selectIndexInstance, machine, id).Scan(&out.Instance.State, &out.Instance.Version, &last)
		if errors.Is(err, sql.ErrNoRows) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%w: %v", ErrCorrupt, err)
		}
		out.Instance.ID = id
		if last.Valid {
			out.Instance.UpdatedAt = time.UnixMicro(last.Int64)
		}
		err = eachRow(ctx, t, selectIndexCounters, []any{machine, id}, func(rows *sql.Rows) error {
			var c fsmrt.CounterValue
			if err := scan(rows, &c.Name, &c.State, &c.Value); err != nil {
				return err
			}
			out.Counters = append(out.Counters, c)
			return nil
		})
		if err != nil {
			return err
		}
		return eachRow(ctx, t, selectIndexDeadlines, []any{machine, id}, func(rows *sql.Rows) error {
			var d fsmrt.IndexDeadline
			var at int64
			if err := scan(rows, &d.Name, &at, &d.State, &d.Event, &d.Level, &d.Handled); err != nil {
				return err
			}
			d.At = time.UnixMicro(at)
			out.Deadlines = append(out.Deadlines, d)
			return nil
		})
	})
	if err != nil {
		return fsmrt.IndexRows{}, fmt.Errorf("sqlite store: rows of %s %.64q: %w", machine, id, err)
	}
	return out, nil
}
