package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"github.com/fsmgen/fsmgen/fsmrt"
)

// Statements of the counters.
const (
	// upsertCounter sets a counter, writing only when its value changes.
	upsertCounter = `INSERT INTO fsmgen_counters (machine, id, name, state, value)
		VALUES (?, ?, ?, ?, ?)
		ON CONFLICT (machine, id, name, state) DO UPDATE SET value = excluded.value
		WHERE value <> excluded.value`

	countCounters = `SELECT count(*) FROM fsmgen_counters WHERE machine = ? AND id = ?`

	deleteCounters = `DELETE FROM fsmgen_counters WHERE machine = ? AND id = ?`

	insertCounterRow = `INSERT INTO fsmgen_counters (machine, id, name, state, value)
		VALUES (?, ?, ?, ?, ?)`
)

// writeCounters makes the counters of the instance those of c (none when c has none),
// inside the caller's transaction. It sets each counter of c, which writes only those
// whose value changed, and counts the instance's counters: more than c's means some went
// back to zero (their rows are gone from c), and then they are all written again.
func writeCounters(ctx context.Context, t *tx, c *fsmrt.Commit) error {
	for _, v := range c.Counters {
		if _, err := t.ExecContext(ctx, upsertCounter, c.Machine, c.ID, v.Name, v.State, v.Value); err != nil {
			return fmt.Errorf("counter %s in %q: %w", v.Name, v.State, err)
		}
	}
	var stored int
	if err := t.QueryRowContext(ctx, countCounters, c.Machine, c.ID).Scan(&stored); err != nil || stored == len(c.Counters) {
		return err
	}
	if _, err := t.ExecContext(ctx, deleteCounters, c.Machine, c.ID); err != nil {
		return err
	}
	for _, v := range c.Counters {
		if _, err := t.ExecContext(ctx, insertCounterRow, c.Machine, c.ID, v.Name, v.State, v.Value); err != nil {
			return fmt.Errorf("counter %s in %q: %w", v.Name, v.State, err)
		}
	}
	return nil
}

// The parts of Find's statement, which findQuery puts together from the conditions a
// query sets. Every value is a parameter. Each condition is a subquery that searches its
// own index for the IDs that meet it (rather than a subquery run for every instance, which
// would look up the instance's row by primary key and leave these indexes unused); the
// outer query then reads the instances of those IDs by primary key, in ID order, so that
// the result needs no sort.
const (
	findSelect = `SELECT i.id, i.state, i.version, i.last_at FROM fsmgen_instances AS i
WHERE i.machine = ?`

	// findStates is closed by findQuery with one placeholder per state and "))". It
	// searches the index fsmgen_instances_state.
	findStates = `
  AND i.id IN (SELECT s.id FROM fsmgen_instances AS s WHERE s.machine = ? AND s.state IN (`

	// findDeadline searches the index fsmgen_deadlines_name. Handled deadlines count.
	findDeadline = `
  AND i.id IN (SELECT d.id FROM fsmgen_deadlines AS d WHERE d.machine = ? AND d.name = ? AND d.at <= ?)`

	// findCounter searches the index fsmgen_counters_value: a counter of the name in any
	// state.
	findCounter = `
  AND i.id IN (SELECT c.id FROM fsmgen_counters AS c WHERE c.machine = ? AND c.name = ? AND c.value >= ?)`

	findAfter = `
  AND i.id > ?`

	findOrder = `
ORDER BY i.id`

	findLimit = `
LIMIT ?`
)

// findQuery returns Find's statement for q and its parameters.
func findQuery(q *fsmrt.Query) (string, []any) {
	var b strings.Builder
	b.WriteString(findSelect)
	args := []any{q.Machine}
	if len(q.States) > 0 {
		b.WriteString(findStates)
		args = append(args, q.Machine)
		for i, st := range q.States {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString("?")
			args = append(args, st)
		}
		b.WriteString("))")
	}
	if q.Deadline != "" {
		b.WriteString(findDeadline)
		args = append(args, q.Machine, q.Deadline, q.Due.UnixMicro())
	}
	if q.Counter != "" {
		b.WriteString(findCounter)
		args = append(args, q.Machine, q.Counter, q.AtLeast)
	}
	if q.After != "" {
		b.WriteString(findAfter)
		args = append(args, q.After)
	}
	b.WriteString(findOrder)
	if q.Limit > 0 {
		b.WriteString(findLimit)
		args = append(args, q.Limit)
	}
	return b.String(), args
}

// Find returns the instances of q.Machine that meet every condition q sets, in ID order,
// at most q.Limit when it is above 0 (fsmrt.Store.Find). It is one statement, read at one
// point in time; UpdatedAt is the time of the instance's last entry, to the microsecond.
// An instance row that is not one Commit writes is an error wrapping ErrCorrupt.
func (s *Store) Find(ctx context.Context, q fsmrt.Query) ([]fsmrt.Instance, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	query, args := findQuery(&q)
	var out []fsmrt.Instance
	err := eachRow(ctx, s.db, query, args, func(rows *sql.Rows) error {
		var in fsmrt.Instance
		var at int64
		if err := scan(rows, &in.ID, &in.State, &in.Version, &at); err != nil {
			return err
		}
		in.UpdatedAt = time.UnixMicro(at)
		out = append(out, in)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("sqlite store: find %s: %w", q.Machine, err)
	}
	return out, nil
}
