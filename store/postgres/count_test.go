package postgres

import (
	"context"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/fsmgen/fsmgen/fsmrt"
)

// CountByState searches the index of each condition, as Find does, and with no condition
// counts from the index fsmgen_instances_state alone; it reads no whole table, in the plan
// for the values and in the generic plan. It counts what Find lists.
func TestCountPlansUseIndexes(t *testing.T) {
	ctx := context.Background()
	dsn := newDatabase(t)
	st := openStore(t, dsn)
	conn := connect(t, dsn)
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	findPlanData(t, conn, t0)
	for _, mode := range []string{"auto", "force_generic_plan"} {
		if _, err := conn.Exec(ctx, `SET plan_cache_mode = `+mode); err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct {
			name    string
			q       fsmrt.Query
			indexes []string
		}{
			{"machine", fsmrt.Query{}, []string{instancesStateIndex}},
			{"state", fsmrt.Query{States: []string{"failed"}}, []string{instancesStateIndex}},
			{"deadline", fsmrt.Query{Deadline: "warn", Due: t0.Add(100 * time.Minute)}, []string{deadlinesNameIndex}},
			{"counter", fsmrt.Query{Counter: "failures", AtLeast: 36}, []string{countersValueIndex}},
			{"every condition", fsmrt.Query{States: []string{"failed", "st1"}, Deadline: "expiry", Due: t0.Add(1000 * time.Minute),
				Counter: "failures", AtLeast: 30}, []string{instancesStateIndex, countersValueIndex}},
		} {
			q := c.q
			q.Machine = "m1"
			set, args := findQuery(&q)
			sql := st.index.count[set]
			plan := explain(t, conn, "EXPLAIN (COSTS OFF) "+sql, args...)
			t.Logf("count by %s (%s):\n%s\n\n%s", c.name, mode, sql, plan)
			for _, index := range c.indexes {
				if !strings.Contains(plan, "Index Scan using "+index) && !strings.Contains(plan, "Index Only Scan using "+index) &&
					!strings.Contains(plan, "Bitmap Index Scan on "+index) {
					t.Errorf("count by %s (%s) does not search %s:\n%s", c.name, mode, index, plan)
				}
			}
			if strings.Contains(plan, "Seq Scan") {
				t.Errorf("count by %s (%s) reads a whole table:\n%s", c.name, mode, plan)
			}
			got, err := st.CountByState(ctx, q)
			if err != nil {
				t.Fatal(err)
			}
			found, err := st.Find(ctx, q)
			if err != nil {
				t.Fatal(err)
			}
			want := map[string]int{}
			for _, in := range found {
				want[in.State]++
			}
			if !maps.Equal(got, want) || len(want) == 0 {
				t.Errorf("count by %s = %v; Find lists %v", c.name, got, want)
			}
		}
	}
}
