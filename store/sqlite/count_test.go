package sqlite

import (
	"strings"
	"testing"

	"github.com/fsmgen/fsmgen/fsmrt"
)

// CountByState reads the index of each condition, as Find does, and counts by state
// without sorting: with no condition, from the index fsmgen_instances_state alone.
func TestCountQueryPlans(t *testing.T) {
	s := openStore(t, tempPath(t))
	for _, tc := range []struct {
		name    string
		q       fsmrt.Query
		indexes []string
	}{
		{"machine", fsmrt.Query{}, []string{"COVERING INDEX fsmgen_instances_state (machine=?)"}},
		{"states", fsmrt.Query{States: []string{"waiting", "failed"}}, []string{"fsmgen_instances_state (machine=? AND state=?)"}},
		{"deadline", fsmrt.Query{Deadline: "expiry", Due: t0}, []string{"fsmgen_deadlines_name (machine=? AND name=? AND at<?)"}},
		{"counter", fsmrt.Query{Counter: "failures", AtLeast: 3}, []string{"fsmgen_counters_value (machine=? AND name=? AND value>?)"}},
		{"all", fsmrt.Query{States: []string{"waiting"}, Deadline: "warn", Due: t0, Counter: "failures", AtLeast: 3, After: "m", Limit: 10}, []string{
			"fsmgen_instances_state (machine=? AND state=?)",
			"fsmgen_deadlines_name (machine=? AND name=? AND at<?)",
			"fsmgen_counters_value (machine=? AND name=? AND value>?)",
		}},
	} {
		q := tc.q
		q.Machine = "test.M"
		query, args := countQuery(q)
		plan := queryPlan(t, s, query, args...)
		t.Logf("count by %s:\n%s\n%s", tc.name, query, plan)
		for _, index := range tc.indexes {
			if !strings.Contains(plan, "USING "+index) && !strings.Contains(plan, "USING INDEX "+index) {
				t.Errorf("count by %s does not search %s:\n%s", tc.name, index, plan)
			}
		}
		if strings.Contains(plan, "TEMP B-TREE") || strings.Contains(plan, "SCAN ") {
			t.Errorf("count by %s sorts or reads a whole table:\n%s", tc.name, plan)
		}
	}
}
