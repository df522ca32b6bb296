package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/fsmgen/fsmgen/fsmrt"
)

// Statements of the counters. Both take the commit's counters as one JSON array of
// [name, state, value] arrays, so that each is one statement however many counters there
// are.
const (
	// setCounters sets the counters of an instance, writing only those whose value changed.
	setCounters = `INSERT INTO fsmgen_counters (machine, id, name, state, value)
		SELECT ?, ?, c.value ->> 0, c.value ->> 1, c.value ->> 2 FROM json_each(?) AS c WHERE true
		ON CONFLICT (machine, id, name, state) DO UPDATE SET value = excluded.value
		WHERE value <> excluded.value`

	deleteCounters = `DELETE FROM fsmgen_counters WHERE machine = ? AND id = ?`

	insertCounterRow = `INSERT INTO fsmgen_counters (machine, id, name, state, value)
		VALUES (?, ?, ?, ?, ?)`

	// setCounter sets one counter of an instance, and clearCounter deletes one that went
	// back to zero: a commit that says which counters it changed (CountersDelta).
	setCounter = `INSERT INTO fsmgen_counters (machine, id, name, state, value) VALUES (?, ?, ?, ?, ?)
		ON CONFLICT (machine, id, name, state) DO UPDATE SET value = excluded.value`
	clearCounter = `DELETE FROM fsmgen_counters WHERE machine = ? AND id = ? AND name = ? AND state = ?`

	// clearCounters deletes the counters of an instance that are not among those set: they
	// went back to zero.
	clearCounters = `DELETE FROM fsmgen_counters WHERE machine = ? AND id = ?
		AND (name, state) NOT IN (SELECT c.value ->> 0, c.value ->> 1 FROM json_each(?) AS c)`
)

// writeCounters makes the counters of the instance those of c (none when c has none),
// unless c keeps them, inside the caller's transaction. A commit that says which it
// changed writes those, a row each. Otherwise it sets c's, which writes only those whose value
// changed, and deletes the others. Names that are not UTF-8, which JSON cannot carry,
// are written a row at a time: all the instance's counters deleted, c's inserted.
func writeCounters(ctx context.Context, t *tx, c *fsmrt.Commit) error {
	if c.CountersKept {
		return nil
	}
	if c.CountersDelta {
		// Only those that changed, a row each.
		for _, v := range c.CountersChanged {
			var err error
			if v.Value == 0 {
				_, err = t.ExecContext(ctx, clearCounter, c.Machine, c.ID, v.Name, v.State)
			} else {
				_, err = t.ExecContext(ctx, setCounter, c.Machine, c.ID, v.Name, v.State, v.Value)
			}
			if err != nil {
				return fmt.Errorf("counter %s in %q: %w", v.Name, v.State, err)
			}
		}
		return nil
	}
	counters, ok := countersJSON(c.Counters)
	if !ok {
		return replaceCounters(ctx, t, c)
	}
	if len(c.Counters) > 0 {
		if _, err := t.ExecContext(ctx, setCounters, c.Machine, c.ID, counters); err != nil {
			return fmt.Errorf("counters: %w", err)
		}
	}
	_, err := t.ExecContext(ctx, clearCounters, c.Machine, c.ID, counters)
	return err
}

// countersJSON returns counters as a JSON array of [name, state, value] arrays, or false
// when a name is not UTF-8.
func countersJSON(counters []fsmrt.CounterValue) (string, bool) {
	b := make([]byte, 0, 64)
	b = append(b, '[')
	for i, v := range counters {
		if !utf8.ValidString(v.Name) || !utf8.ValidString(v.State) {
			return "", false
		}
		if i > 0 {
			b = append(b, ',')
		}
		name, _ := json.Marshal(v.Name)
		state, _ := json.Marshal(v.State)
		b = append(append(append(append(append(b, '['), name...), ','), state...), ',')
		b = append(strconv.AppendInt(b, int64(v.Value), 10), ']')
	}
	return string(append(b, ']')), true
}

// replaceCounters deletes the counters of the instance and inserts c's.
func replaceCounters(ctx context.Context, t *tx, c *fsmrt.Commit) error {
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

	// findIdle searches the index fsmgen_instances_idle: the last entry at or before the
	// time.
	findIdle = `
  AND i.id IN (SELECT l.id FROM fsmgen_instances AS l WHERE l.machine = ? AND l.last_at <= ?)`

	// findPending and findFailing search the outbox's index fsmgen_effects_pending, of
	// the effects not delivered: any, or those whose last delivery failed.
	findPending = `
  AND i.id IN (SELECT e.id FROM fsmgen_effects AS e WHERE e.machine = ? AND e.delivered_at IS NULL)`
	findFailing = `
  AND i.id IN (SELECT e.id FROM fsmgen_effects AS e WHERE e.machine = ? AND e.delivered_at IS NULL AND e.last_error IS NOT NULL)`

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
	args := findConditions(&b, q, []any{q.Machine})
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

// findConditions writes to b the parts of the conditions q sets (its page aside), and
// returns args with their parameters appended.
func findConditions(b *strings.Builder, q *fsmrt.Query, args []any) []any {
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
	if !q.IdleSince.IsZero() {
		b.WriteString(findIdle)
		args = append(args, q.Machine, q.IdleSince.UnixMicro())
	}
	switch q.Effects {
	case fsmrt.EffectsPending:
		b.WriteString(findPending)
		args = append(args, q.Machine)
	case fsmrt.EffectsFailing:
		b.WriteString(findFailing)
		args = append(args, q.Machine)
	}
	return args
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
		return nil, fmt.Errorf("sqlite store: find %s: %w", q.Machine, corrupt(err))
	}
	return out, nil
}
