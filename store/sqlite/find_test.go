package sqlite

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/fsmgen/fsmgen/fsmrt"
)

// findIDs runs q on machine test.M and returns the instances found as id@version.
func findIDs(t *testing.T, s *Store, q fsmrt.Query) []string {
	t.Helper()
	q.Machine = "test.M"
	got, err := s.Find(context.Background(), q)
	if err != nil {
		t.Fatalf("find %+v: %v", q, err)
	}
	out := []string{}
	for _, in := range got {
		out = append(out, fmt.Sprintf("%s@%d", in.ID, in.Version))
	}
	return out
}

// queryPlan returns SQLite's plan of query as a tree, one step a line, indented under
// the step it belongs to.
func queryPlan(t *testing.T, s *Store, query string, args ...any) string {
	t.Helper()
	rows, err := s.db.Query(`EXPLAIN QUERY PLAN `+query, args...)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	depth := map[int]int{0: -1}
	var b strings.Builder
	for rows.Next() {
		var id, parent, unused int
		var detail string
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			t.Fatal(err)
		}
		depth[id] = depth[parent] + 1
		fmt.Fprintf(&b, "%s%s\n", strings.Repeat("    ", depth[id]), detail)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// Each condition of Find searches its index: the state in fsmgen_instances_state, the
// deadline in fsmgen_deadlines_name, the counter in fsmgen_counters_value; the
// instances are then read by primary key in ID order, with no sort.
func TestFindQueryPlans(t *testing.T) {
	s := openStore(t, tempPath(t))
	for _, tc := range []struct {
		name    string
		q       fsmrt.Query
		indexes []string
	}{
		{"machine", fsmrt.Query{}, []string{"sqlite_autoindex_fsmgen_instances_1 (machine=?)"}},
		{"page", fsmrt.Query{After: "m", Limit: 10}, []string{"sqlite_autoindex_fsmgen_instances_1 (machine=? AND id>?)"}},
		{"states", fsmrt.Query{States: []string{"waiting", "failed"}}, []string{"fsmgen_instances_state (machine=? AND state=?)"}},
		{"deadline", fsmrt.Query{Deadline: "expiry", Due: t0}, []string{"fsmgen_deadlines_name (machine=? AND name=? AND at<?)"}},
		{"counter", fsmrt.Query{Counter: "failures", AtLeast: 3}, []string{"fsmgen_counters_value (machine=? AND name=? AND value>?)"}},
		{"idle", fsmrt.Query{IdleSince: t0}, []string{"fsmgen_instances_idle (machine=? AND last_at<?)"}},
		{"pending effects", fsmrt.Query{Effects: fsmrt.EffectsPending}, []string{"fsmgen_effects_pending (machine=?)"}},
		{"failing effects", fsmrt.Query{Effects: fsmrt.EffectsFailing}, []string{"fsmgen_effects_pending (machine=?)"}},
		{"all", fsmrt.Query{States: []string{"waiting"}, Deadline: "warn", Due: t0, Counter: "failures", AtLeast: 3, After: "m", Limit: 10}, []string{
			"fsmgen_instances_state (machine=? AND state=?)",
			"fsmgen_deadlines_name (machine=? AND name=? AND at<?)",
			"fsmgen_counters_value (machine=? AND name=? AND value>?)",
		}},
	} {
		q := tc.q
		q.Machine = "test.M"
		query, args := findQuery(&q)
		plan := queryPlan(t, s, query, args...)
		t.Logf("find by %s:\n%s\n%s", tc.name, query, plan)
		for _, index := range tc.indexes {
			if !strings.Contains(plan, "USING INDEX "+index) {
				t.Errorf("find by %s does not search %s:\n%s", tc.name, index, plan)
			}
		}
		if strings.Contains(plan, "TEMP B-TREE") || strings.Contains(plan, "SCAN") {
			t.Errorf("find by %s sorts or scans:\n%s", tc.name, plan)
		}
	}
}

// Every value of a query is a parameter: names with quotes and SQL in them match
// themselves only, and a long list of states works.
func TestFindParameters(t *testing.T) {
	s := openStore(t, tempPath(t))
	odd := `it's' OR '1'='1`
	c := testCommit(odd, 1, "", false)
	c.State = odd
	c.Rearm, c.Deadlines = true, []fsmrt.Deadline{{Name: odd, At: t0, State: odd}}
	c.Counters = []fsmrt.CounterValue{{Name: odd, State: odd, Value: 1}}
	mustCommit(t, s, c)
	commitN(t, s, "plain", 1)
	var many []string
	for i := range 2000 {
		many = append(many, fmt.Sprint("s", i))
	}
	for name, tc := range map[string]struct {
		q    fsmrt.Query
		want []string
	}{
		"odd state":          {fsmrt.Query{States: []string{odd}}, []string{odd + "@1"}},
		"injected state":     {fsmrt.Query{States: []string{`b' OR '1'='1`}}, []string{}},
		"odd deadline":       {fsmrt.Query{Deadline: odd, Due: t0}, []string{odd + "@1"}},
		"odd counter":        {fsmrt.Query{Counter: odd, AtLeast: 1}, []string{odd + "@1"}},
		"after odd":          {fsmrt.Query{After: odd}, []string{"plain@1"}},
		"many states":        {fsmrt.Query{States: append(many, "b")}, []string{"plain@1"}},
		"injected after":     {fsmrt.Query{After: `' OR 1=1 --`}, []string{odd + "@1", "plain@1"}},
		"negative limit":     {fsmrt.Query{Limit: -1}, []string{odd + "@1", "plain@1"}},
		"counter at least 0": {fsmrt.Query{Counter: "none", AtLeast: 0}, []string{}},
	} {
		if got := findIDs(t, s, tc.q); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: %v, want %v", name, got, tc.want)
		}
	}
}

// UpdatedAt is the time of the last entry, to the microsecond, whichever way the commit
// wrote the instance; the due time of a deadline compares to the microsecond its time
// was kept to.
func TestFindTimes(t *testing.T) {
	ctx := context.Background()
	s := openStore(t, tempPath(t))
	at := t0.Add(time.Hour + 1500*time.Nanosecond) // kept as ... + 1 µs
	c := testCommit("m", 1, "", false)
	c.Entry.At = at
	c.Rearm, c.Deadlines = true, []fsmrt.Deadline{{Name: "expiry", At: at, State: "b", Event: "expire"}}
	mustCommit(t, s, c)
	check := func(what string, want time.Time) {
		t.Helper()
		got, err := s.Find(ctx, fsmrt.Query{Machine: "test.M"})
		if err != nil || len(got) != 1 || !got[0].UpdatedAt.Equal(want.Truncate(time.Microsecond)) {
			t.Errorf("%s: %+v, %v, want updated at %v", what, got, err, want.Truncate(time.Microsecond))
		}
	}
	check("first commit", at)
	for seq := int64(2); seq <= 3; seq++ {
		snap := seq == 2
		c := testCommit("m", seq, "", snap)
		c.Entry.At = at.Add(time.Duration(seq) * time.Minute)
		mustCommit(t, s, c)
		check(fmt.Sprintf("commit %d, snapshot %v", seq, snap), c.Entry.At)
	}
	kept := at.Truncate(time.Microsecond)
	if got := findIDs(t, s, fsmrt.Query{Deadline: "expiry", Due: kept}); !reflect.DeepEqual(got, []string{"m@3"}) {
		t.Errorf("due at its time: %v", got)
	}
	if got := findIDs(t, s, fsmrt.Query{Deadline: "expiry", Due: kept.Add(-time.Nanosecond)}); len(got) != 0 {
		t.Errorf("due before its time: %v", got)
	}
}

// Each commit replaces the instance's counters: per-state ones with their state, the
// others with an empty one; a commit without counters clears them.
func TestCounterRows(t *testing.T) {
	s := openStore(t, tempPath(t))
	c := testCommit("m", 1, "", false)
	c.Counters = []fsmrt.CounterValue{{Name: "failures", State: "b", Value: 1}, {Name: "failures", State: "a", Value: 4}, {Name: "total", Value: 1}}
	mustCommit(t, s, c)
	want := []string{"[test.M m failures a 4]", "[test.M m failures b 1]", "[test.M m total  1]"}
	if got := tableRows(t, s, allCounters); !reflect.DeepEqual(got, want) {
		t.Errorf("counters: %q, want %q", got, want)
	}
	if got := findIDs(t, s, fsmrt.Query{Counter: "failures", AtLeast: 4}); !reflect.DeepEqual(got, []string{"m@1"}) {
		t.Errorf("a per-state counter in another state than the instance's: %v", got)
	}
	c = testCommit("m", 2, "", true)
	c.Counters = []fsmrt.CounterValue{{Name: "total", Value: 2}}
	mustCommit(t, s, c)
	if got := tableRows(t, s, allCounters); !reflect.DeepEqual(got, []string{"[test.M m total  2]"}) {
		t.Errorf("counters replaced: %q", got)
	}
	commitN(t, s, "other", 1)
	mustCommit(t, s, testCommit("m", 3, "", false))
	if got := tableRows(t, s, allCounters); len(got) != 0 {
		t.Errorf("counters after a commit without: %q", got)
	}
}

// A commit writes the rows of only those counters whose value changes, and names JSON
// cannot carry (not UTF-8, NUL bytes) are kept byte for byte.
func TestCounterRowsWritten(t *testing.T) {
	s := openStore(t, tempPath(t))
	// Triggers count the rows written to fsmgen_counters.
	for _, q := range []string{
		`CREATE TABLE counter_writes (n INTEGER NOT NULL)`,
		`INSERT INTO counter_writes VALUES (0)`,
		`CREATE TRIGGER counter_inserted AFTER INSERT ON fsmgen_counters BEGIN UPDATE counter_writes SET n = n + 1; END`,
		`CREATE TRIGGER counter_updated AFTER UPDATE ON fsmgen_counters BEGIN UPDATE counter_writes SET n = n + 1; END`,
		`CREATE TRIGGER counter_deleted AFTER DELETE ON fsmgen_counters BEGIN UPDATE counter_writes SET n = n + 1; END`,
	} {
		if _, err := s.db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	writes := func() (n int) {
		t.Helper()
		if err := s.db.QueryRow(`SELECT n FROM counter_writes`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	for i, c := range []struct {
		counters []fsmrt.CounterValue
		writes   int
	}{
		{[]fsmrt.CounterValue{{Name: "adds", State: "a", Value: 1}, {Name: "holds", Value: 1}}, 2},
		{[]fsmrt.CounterValue{{Name: "adds", State: "a", Value: 1}, {Name: "holds", Value: 2}}, 1},
		{[]fsmrt.CounterValue{{Name: "adds", State: "a", Value: 1}, {Name: "holds", Value: 2}}, 0},
		{[]fsmrt.CounterValue{{Name: "adds", State: "b", Value: 1}, {Name: "adds", State: "a", Value: 1}, {Name: "holds", Value: 2}}, 1},
		{[]fsmrt.CounterValue{{Name: "adds", State: "a", Value: 1}}, 2},
	} {
		before := writes()
		commit := testCommit("m", int64(i+1), "", false)
		commit.Counters = c.counters
		mustCommit(t, s, commit)
		if got := writes() - before; got != c.writes {
			t.Errorf("commit %d wrote %d counter rows, want %d", i+1, got, c.writes)
		}
	}

	odd := []fsmrt.CounterValue{{Name: "f\xff", State: "s\x00t", Value: 3}, {Name: "g", Value: 1}}
	c := testCommit("m", 6, "", false)
	c.Counters = odd
	mustCommit(t, s, c)
	if got := findIDs(t, s, fsmrt.Query{Counter: "f\xff", AtLeast: 3}); !reflect.DeepEqual(got, []string{"m@6"}) {
		t.Errorf("a counter named f\\xff: %v", got)
	}
	c = testCommit("m", 7, "", false)
	c.Counters = odd[:1]
	mustCommit(t, s, c)
	want := []string{"[test.M m f\xff s\x00t 3]"}
	if got := tableRows(t, s, allCounters); !reflect.DeepEqual(got, want) {
		t.Errorf("counters: %q, want %q", got, want)
	}
}

// An instance row Find cannot read is an error wrapping ErrCorrupt.
func TestFindCorrupt(t *testing.T) {
	for name, corrupt := range map[string]string{
		"no last entry time": `UPDATE fsmgen_instances SET last_at = NULL`,
		"version as text":    `UPDATE fsmgen_instances SET version = 'three'`,
	} {
		s := openStore(t, tempPath(t))
		commitN(t, s, "m", 2)
		mustExec(t, s, corrupt)
		if got, err := s.Find(context.Background(), fsmrt.Query{Machine: "test.M"}); !errors.Is(err, ErrCorrupt) || got != nil {
			t.Errorf("%s: %+v, %v, want ErrCorrupt", name, got, err)
		}
	}
}
