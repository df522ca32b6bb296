package postgres

import (
	"context"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/fsmgen/fsmgen/fsmrt"
)

// CountByState's statement: Find's conditions (findStatement) between sqlCountSelect and
// sqlCountGroup, each backed by the index Find's is. With no condition it reads the index
// fsmgen_instances_state alone.
const (
	sqlCountSelect = `SELECT i.state, count(*)
FROM {schema}.fsmgen_instances i
WHERE i.machine = $?::text`
	sqlCountGroup = `
GROUP BY i.state`
)

// countStatement returns CountByState's statement for the conditions set (no page: set
// has neither findAfter nor findLimited), its schema still "{schema}": Find's condition
// parts between sqlCountSelect and sqlCountGroup, the parameters numbered from $1.
func countStatement(set findConditions) string {
	parts := append([]string{sqlCountSelect}, conditionParts(set&^(findAfter|findLimited))...)
	return numbered(strings.Join(append(parts, sqlCountGroup), ""))
}

// countStatements returns CountByState's statements for every set of conditions, on the
// tables of schema, by set.
func countStatements(schema string) []string {
	q := qualifier(schema)
	out := make([]string, findAfter)
	for set := range findConditions(findAfter) {
		out[set] = q(countStatement(set))
	}
	return out
}

var _ fsmrt.StateCounter = (*Store)(nil)

// CountByState returns how many instances of q.Machine meet q's conditions, by state, in
// one statement and one round trip (fsmrt.StateCounter).
func (s *Store) CountByState(ctx context.Context, q fsmrt.Query) (map[string]int, error) {
	q.After, q.Limit = "", 0
	set, args := findQuery(&q)
	rows, err := s.pool.Query(ctx, s.index.count[set], args...)
	if err != nil {
		return nil, fmt.Errorf("postgres store: count %q: %w", q.Machine, err)
	}
	out := map[string]int{}
	var state string
	var n int64
	_, err = pgx.ForEachRow(rows, []any{&state, &n}, func() error {
		out[state] = int(n)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("postgres store: count %q: %w", q.Machine, err)
	}
	return out, nil
}
