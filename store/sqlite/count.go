package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/fsmgen/fsmgen/fsmrt"
)

// countSelect counts the instances of a machine by state; the conditions of Find follow
// (findQuery), then countGroup. With no condition it reads the index
// fsmgen_instances_state alone.
const (
	countSelect = `SELECT i.state, count(*) FROM fsmgen_instances AS i
WHERE i.machine = ?`
	countGroup = `
GROUP BY i.state`
)

var _ fsmrt.StateCounter = (*Store)(nil)

// countQuery returns CountByState's statement for q and its parameters: Find's, with its
// conditions searching the same indexes, counted by state.
func countQuery(q fsmrt.Query) (string, []any) {
	var b strings.Builder
	b.WriteString(countSelect)
	args := findConditions(&b, &q, []any{q.Machine})
	b.WriteString(countGroup)
	return b.String(), args
}

// CountByState returns how many instances of q.Machine meet q's conditions, by state, in
// one statement (fsmrt.StateCounter).
func (s *Store) CountByState(ctx context.Context, q fsmrt.Query) (map[string]int, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	query, args := countQuery(q)
	out := map[string]int{}
	err := eachRow(ctx, s.db, query, args, func(rows *sql.Rows) error {
		var state string
		var n int
		if err := scan(rows, &state, &n); err != nil {
			return err
		}
		out[state] = n
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("sqlite store: count %s: %w", q.Machine, corrupt(err))
	}
	return out, nil
}
