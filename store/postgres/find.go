package postgres

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/fsmgen/fsmgen/fsmrt"
)

// findConditions is a set of the conditions a query sets, which selects the statement
// of Find that has their parts.
type findConditions uint16

// The conditions of a query, in the order of their parts in Find's statement.
const (
	findByState findConditions = 1 << iota
	findByDeadline
	findByCounter
	findIdle
	findPending
	findFailing
	findAfter
	findLimited

	// findVariants is the number of sets of conditions.
	findVariants = findLimited << 1
)

// The conditions of Find added with schema 3: the time of the last entry, searched in
// fsmgen_instances_idle; the effects not delivered (any, or those whose last delivery
// failed), searched by the outbox's primary key.
const (
	sqlFindIdle = `
	AND i.last_at <= $?::timestamptz`
	sqlFindPending = `
	AND EXISTS (SELECT FROM {schema}.fsmgen_effects e
		WHERE e.machine = i.machine AND e.id = i.id AND e.delivered_at IS NULL)`
	sqlFindFailing = `
	AND EXISTS (SELECT FROM {schema}.fsmgen_effects e
		WHERE e.machine = i.machine AND e.id = i.id AND e.delivered_at IS NULL AND e.last_error IS NOT NULL)`
)

// findStatement returns Find's statement for the conditions set, its schema still
// "{schema}": the parts of sqlFind..., the parameters numbered from $1 in the order they
// come.
func findStatement(set findConditions) string {
	parts := append([]string{sqlFindSelect}, conditionParts(set&^findLimited)...)
	parts = append(parts, sqlFindOrder)
	if set&findLimited != 0 {
		parts = append(parts, sqlFindLimit)
	}
	return numbered(strings.Join(parts, ""))
}

// conditionParts returns the parts of the conditions set (findLimited aside), in order.
func conditionParts(set findConditions) []string {
	var parts []string
	for _, c := range []struct {
		cond findConditions
		sql  string
	}{
		{findByState, sqlFindStates},
		{findByDeadline, sqlFindDeadline},
		{findByCounter, sqlFindCounter},
		{findIdle, sqlFindIdle},
		{findPending, sqlFindPending},
		{findFailing, sqlFindFailing},
		{findAfter, sqlFindAfter},
	} {
		if set&c.cond != 0 {
			parts = append(parts, c.sql)
		}
	}
	return parts
}

// numbered numbers the parameters "$?" of sql from $1, in the order they come.
func numbered(sql string) string {
	var b strings.Builder
	for n := 1; ; n++ {
		i := strings.Index(sql, "$?")
		if i < 0 {
			break
		}
		b.WriteString(sql[:i+1])
		b.WriteString(strconv.Itoa(n))
		sql = sql[i+2:]
	}
	b.WriteString(sql)
	return b.String()
}

// findQuery returns the conditions q sets and the parameters of their statement, in the
// order of its parts.
func findQuery(q *fsmrt.Query) (findConditions, []any) {
	var set findConditions
	args := []any{q.Machine}
	if len(q.States) > 0 {
		set |= findByState
		args = append(args, q.States)
	}
	if q.Deadline != "" {
		set |= findByDeadline
		args = append(args, q.Deadline, micro(q.Due))
	}
	if q.Counter != "" {
		set |= findByCounter
		args = append(args, q.Counter, int64(q.AtLeast))
	}
	if !q.IdleSince.IsZero() {
		set |= findIdle
		args = append(args, micro(q.IdleSince))
	}
	switch q.Effects {
	case fsmrt.EffectsPending:
		set |= findPending
	case fsmrt.EffectsFailing:
		set |= findFailing
	}
	if q.After != "" {
		set |= findAfter
		args = append(args, q.After)
	}
	if q.Limit > 0 {
		set |= findLimited
		args = append(args, int64(q.Limit))
	}
	return set, args
}

// Find returns the instances of q.Machine that meet every condition q sets, in ID order
// (bytewise), after q.After, at most q.Limit when it is above 0 (fsmrt.Store.Find). It is
// one statement, read at one point in time, in one round trip; every value is a
// parameter. A deadline counts whether it is handled or not, a counter in any state.
// UpdatedAt is the time of the instance's last entry, to the microsecond.
func (s *Store) Find(ctx context.Context, q fsmrt.Query) ([]fsmrt.Instance, error) {
	set, args := findQuery(&q)
	rows, err := s.pool.Query(ctx, s.sql.find[set], args...)
	if err != nil {
		return nil, fmt.Errorf("postgres store: find %q: %w", q.Machine, err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (fsmrt.Instance, error) {
		var in fsmrt.Instance
		err := row.Scan(&in.ID, &in.State, &in.Version, &in.UpdatedAt)
		return in, err
	})
	if err != nil {
		return nil, fmt.Errorf("postgres store: find %q: %w", q.Machine, err)
	}
	return out, nil
}
