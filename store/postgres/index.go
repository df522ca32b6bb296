package postgres

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/fsmgen/fsmgen/fsmrt"
)

// Statements of the rows kept beside an instance's log (fsmrt.IndexReader), read in one
// snapshot.
const (
	sqlIndexInstance = `SELECT state, version, last_at FROM {schema}.fsmgen_instances
WHERE machine = $1::text AND id = $2::text`

	sqlIndexCounters = `SELECT name, state, value FROM {schema}.fsmgen_counters
WHERE machine = $1::text AND id = $2::text ORDER BY name COLLATE "C", state COLLATE "C"`

	sqlIndexDeadlines = `SELECT name, at, state, event, level, handled_at IS NOT NULL FROM {schema}.fsmgen_deadlines
WHERE machine = $1::text AND id = $2::text ORDER BY name COLLATE "C"`
)

// indexStatements are the statements of IndexRows, CountByState and RecordEffectError on
// the tables of one schema.
type indexStatements struct {
	instance, counters, deadlines string
	// count holds CountByState's statement for each set of conditions without a page.
	count []string
	// effectError records an effect's last error (RecordEffectError).
	effectError string
}

// newIndexStatements returns IndexRows' statements on the tables of schema.
func newIndexStatements(schema string) indexStatements {
	q := qualifier(schema)
	return indexStatements{instance: q(sqlIndexInstance), counters: q(sqlIndexCounters), deadlines: q(sqlIndexDeadlines), count: countStatements(schema),
		effectError: q(sqlEffectError)}
}

var _ fsmrt.IndexReader = (*Store)(nil)

// IndexRows returns the rows the store keeps of instance (machine, id) beside its log, for
// Find and the timers: its state, version and time of its last entry, its counters and its
// deadlines, read in one snapshot, one round trip (fsmrt.IndexReader). fsmrt.Audit
// compares them with the log.
func (s *Store) IndexRows(ctx context.Context, machine, id string) (fsmrt.IndexRows, error) {
	var out fsmrt.IndexRows
	var b pgx.Batch
	b.Queue(sqlBeginSnapshot)
	b.Queue(s.index.instance, machine, id).QueryRow(func(row pgx.Row) error {
		var last *time.Time
		err := row.Scan(&out.Instance.State, &out.Instance.Version, &last)
		if errors.Is(err, pgx.ErrNoRows) {
			return nil
		}
		out.Instance.ID = id
		if last != nil {
			out.Instance.UpdatedAt = *last
		}
		return err
	})
	b.Queue(s.index.counters, machine, id).Query(func(rows pgx.Rows) (err error) {
		out.Counters, err = pgx.CollectRows(rows, func(row pgx.CollectableRow) (fsmrt.CounterValue, error) {
			var c fsmrt.CounterValue
			var v int64
			err := row.Scan(&c.Name, &c.State, &v)
			c.Value = int(v)
			return c, err
		})
		return err
	})
	b.Queue(s.index.deadlines, machine, id).Query(func(rows pgx.Rows) (err error) {
		out.Deadlines, err = pgx.CollectRows(rows, func(row pgx.CollectableRow) (fsmrt.IndexDeadline, error) {
			var d fsmrt.IndexDeadline
			var level int32
			err := row.Scan(&d.Name, &d.At, &d.State, &d.Event, &level, &d.Handled)
			d.Level = int(level)
			return d, err
		})
		return err
	})
	b.Queue(sqlEnd)
	// A failure leaves the connection in the transaction: the pool then closes it.
	if err := s.pool.SendBatch(ctx, &b).Close(); err != nil {
		return fsmrt.IndexRows{}, failed("rows", machine, id, err)
	}
	if out.Instance.ID == "" {
		out = fsmrt.IndexRows{}
	}
	return out, nil
}
