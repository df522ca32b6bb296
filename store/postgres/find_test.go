package postgres

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/fsmgen/fsmgen/fsmrt"
)

// sameInstances compares instances as Find returns them, times by the instant.
func sameInstances(a, b []fsmrt.Instance) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := a[i], b[i]
		if !x.UpdatedAt.Equal(y.UpdatedAt) {
			return false
		}
		x.UpdatedAt, y.UpdatedAt = time.Time{}, time.Time{}
		if x != y {
			return false
		}
	}
	return true
}

// findIDs runs q and returns the ids found as id@version, never nil.
func findIDs(t *testing.T, st fsmrt.Store, q fsmrt.Query) []string {
	t.Helper()
	got, err := st.Find(context.Background(), q)
	if err != nil {
		t.Fatalf("find %+v: %v", q, err)
	}
	out := []string{}
	for _, in := range got {
		out = append(out, fmt.Sprintf("%s@%d", in.ID, in.Version))
	}
	return out
}

// The statements of Find number their parameters in the order of their parts.
func TestFindStatements(t *testing.T) {
	every := findStatement(findVariants - 1)
	for n := 1; n <= 9; n++ {
		if !strings.Contains(every, fmt.Sprintf("$%d::", n)) {
			t.Errorf("parameter $%d missing:\n%s", n, every)
		}
	}
	if strings.Contains(every, "$?") || strings.Contains(every, "$10") {
		t.Errorf("parameters misnumbered:\n%s", every)
	}
	q := fsmrt.Query{Machine: "m", States: []string{"a"}, Deadline: "d", Due: time.Now(), Counter: "c", AtLeast: 1,
		IdleSince: time.Now(), Effects: fsmrt.EffectsFailing, After: "x", Limit: 1}
	if set, args := findQuery(&q); set != findVariants-1-findPending || len(args) != 9 {
		t.Errorf("a query setting everything: conditions %b, %d arguments", set, len(args))
	}
	if set, args := findQuery(&fsmrt.Query{Machine: "m", States: []string{}, Limit: -1}); set != 0 || len(args) != 1 {
		t.Errorf("a query setting nothing: conditions %b, %d arguments", set, len(args))
	}
}

// findPlanData fills the tables of conn's database, in a few statements, with 9000
// instances of 3 machines (m0, m1, m2), id "i<g>" for g in 1..9000 of machine m<g%3>, and
// ANALYZEs them. See findPlanInstance for what each has.
func findPlanData(t *testing.T, conn *pgx.Conn, t0 time.Time) {
	t.Helper()
	ctx := context.Background()
	for _, sql := range []string{
		`INSERT INTO fsmgen_instances (machine, id, spec, version, state, last_at)
		SELECT 'm' || (g % 3), 'i' || g, 's', g % 5 + 1,
			CASE WHEN g % 50 = 0 THEN 'failed' ELSE 'st' || (g % 7) END,
			$1::timestamptz + g * interval '1 second'
		FROM generate_series(1, 9000) g`,
		`INSERT INTO fsmgen_deadlines (machine, id, name, at, state, event, level, handled_at)
		SELECT 'm' || (g % 3), 'i' || g, n.name, $1::timestamptz + g * interval '1 minute' + n.later, 'b', '', 1,
			CASE WHEN g % 2 = 0 THEN $1::timestamptz END
		FROM generate_series(1, 9000) g, (VALUES ('warn', interval '0'), ('expiry', interval '1 hour')) n(name, later)`,
		`INSERT INTO fsmgen_counters (machine, id, name, state, value)
		SELECT 'm' || (g % 3), 'i' || g, 'failures', 'st' || (g % 5), g % 37
		FROM generate_series(1, 9000) g WHERE g % 4 <> 0`,
		`INSERT INTO fsmgen_counters (machine, id, name, state, value)
		SELECT 'm' || (g % 3), 'i' || g, 'total', '', g % 11
		FROM generate_series(1, 9000) g`,
		// An effect each: not delivered for one instance in 2, its last delivery failed for
		// one in 10.
		`INSERT INTO fsmgen_effects (machine, id, seq, idx, name, idem_key, committed_at, delivered_at, last_error)
		SELECT 'm' || (g % 3), 'i' || g, 1, 0, 'send', 'k' || g, $1::timestamptz,
			CASE WHEN g % 2 <> 0 THEN $1::timestamptz END, CASE WHEN g % 10 = 0 THEN 'down' END
		FROM generate_series(1, 9000) g`,
		`ANALYZE fsmgen_instances`,
		`ANALYZE fsmgen_deadlines`,
		`ANALYZE fsmgen_counters`,
		`ANALYZE fsmgen_effects`,
	} {
		var args []any
		if strings.Contains(sql, "$1") {
			args = append(args, t0)
		}
		if _, err := conn.Exec(ctx, sql, args...); err != nil {
			t.Fatal(err)
		}
	}
}

// findPlanInstance is instance g of findPlanData: its machine, id, state, version,
// warning time (its expiry an hour later), failures (-1 for none) and total.
func findPlanInstance(g int, t0 time.Time) (machine, id, state string, version int64, warn time.Time, failures, total int) {
	state = fmt.Sprint("st", g%7)
	if g%50 == 0 {
		state = "failed"
	}
	failures = -1
	if g%4 != 0 {
		failures = g % 37
	}
	return fmt.Sprint("m", g%3), fmt.Sprint("i", g), state, int64(g%5 + 1), t0.Add(time.Duration(g) * time.Minute), failures, g % 11
}

// sqlLiteral returns v as an SQL literal, for EXECUTE's arguments.
func sqlLiteral(v any) string {
	quote := func(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }
	switch v := v.(type) {
	case string:
		return quote(v)
	case []string:
		var items []string
		for _, s := range v {
			items = append(items, quote(s))
		}
		return "ARRAY[" + strings.Join(items, ", ") + "]::text[]"
	case time.Time:
		return quote(v.Format(time.RFC3339Nano)) + "::timestamptz"
	}
	return fmt.Sprint(v)
}

// Each condition of Find searches its index, in the plan for the query's values and in
// the generic plan of the prepared statement: the state fsmgen_instances_state, the
// deadline fsmgen_deadlines_name, the counter fsmgen_counters_value; no plan reads a whole
// table. The plans are logged. And Find finds what the data hold.
func TestFindPlansUseIndexes(t *testing.T) {
	ctx := context.Background()
	dsn := newDatabase(t)
	st := openStore(t, dsn)
	conn := connect(t, dsn)
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	findPlanData(t, conn, t0)
	if _, err := conn.Exec(ctx, `SET plan_cache_mode = force_generic_plan`); err != nil {
		t.Fatal(err)
	}
	for i, c := range []struct {
		name    string
		q       fsmrt.Query
		indexes []string // searched by the plan for the values
		generic []string // searched by the generic plan
		match   func(state string, warn time.Time, failures, total int) bool
		// g: which instances of findPlanData also match (nil: all).
		g func(g int) bool
	}{
		{
			name: "machine", q: fsmrt.Query{},
			match: func(string, time.Time, int, int) bool { return true },
		},
		{
			name: "page", q: fsmrt.Query{After: "i500", Limit: 10},
			match: func(string, time.Time, int, int) bool { return true },
		},
		{
			name: "state", q: fsmrt.Query{States: []string{"failed"}},
			indexes: []string{instancesStateIndex}, generic: []string{instancesStateIndex},
			match: func(state string, _ time.Time, _, _ int) bool { return state == "failed" },
		},
		{
			name: "deadline", q: fsmrt.Query{Deadline: "warn", Due: t0.Add(100 * time.Minute)},
			indexes: []string{deadlinesNameIndex}, generic: []string{deadlinesNameIndex},
			match: func(_ string, warn time.Time, _, _ int) bool { return !warn.After(t0.Add(100 * time.Minute)) },
		},
		{
			name: "counter", q: fsmrt.Query{Counter: "failures", AtLeast: 36},
			indexes: []string{countersValueIndex}, generic: []string{countersValueIndex},
			match: func(_ string, _ time.Time, failures, _ int) bool { return failures >= 36 },
		},
		{
			name: "idle", q: fsmrt.Query{IdleSince: t0.Add(100 * time.Second)},
			indexes: []string{instancesIdleIndex}, generic: []string{instancesIdleIndex},
			match: func(string, time.Time, int, int) bool { return true },
			g:     func(g int) bool { return g <= 100 },
		},
		{
			name: "pending effects", q: fsmrt.Query{Effects: fsmrt.EffectsPending},
			indexes: []string{effectsPendingIndex}, generic: []string{effectsPendingIndex},
			match: func(string, time.Time, int, int) bool { return true },
			g:     func(g int) bool { return g%2 == 0 },
		},
		{
			name: "failing effects", q: fsmrt.Query{Effects: fsmrt.EffectsFailing},
			indexes: []string{effectsPendingIndex}, generic: []string{effectsPendingIndex},
			match: func(string, time.Time, int, int) bool { return true },
			g:     func(g int) bool { return g%10 == 0 },
		},
		{
			name: "every condition",
			q: fsmrt.Query{States: []string{"failed", "st1"}, Deadline: "expiry", Due: t0.Add(1000 * time.Minute),
				Counter: "failures", AtLeast: 30, After: "i1", Limit: 10},
			indexes: []string{instancesStateIndex, countersValueIndex}, generic: []string{instancesStateIndex, countersValueIndex},
			match: func(state string, warn time.Time, failures, _ int) bool {
				return (state == "failed" || state == "st1") && !warn.Add(time.Hour).After(t0.Add(1000*time.Minute)) && failures >= 30
			},
		},
	} {
		q := c.q
		q.Machine = "m1"
		set, args := findQuery(&q)
		sql := st.sql.find[set]
		custom := explain(t, conn, "EXPLAIN (COSTS OFF) "+sql, args...)
		name := fmt.Sprint("find_", i)
		if _, err := conn.Exec(ctx, "PREPARE "+name+" AS "+sql); err != nil {
			t.Fatal(err)
		}
		var literals []string
		for _, a := range args {
			literals = append(literals, sqlLiteral(a))
		}
		generic := explain(t, conn, fmt.Sprintf("EXPLAIN (COSTS OFF) EXECUTE %s(%s)", name, strings.Join(literals, ", ")))
		t.Logf("find by %s:\n%s\n\n%s\n\ngeneric plan:\n%s", c.name, sql, custom, generic)
		for _, p := range []struct {
			what, plan string
			indexes    []string
		}{{"plan", custom, c.indexes}, {"generic plan", generic, c.generic}} {
			for _, index := range p.indexes {
				if !strings.Contains(p.plan, "Index Scan using "+index) && !strings.Contains(p.plan, "Index Scan on "+index) {
					t.Errorf("find by %s: the %s does not search %s:\n%s", c.name, p.what, index, p.plan)
				}
			}
			if strings.Contains(p.plan, "Seq Scan") {
				t.Errorf("find by %s: the %s reads a whole table:\n%s", c.name, p.what, p.plan)
			}
		}

		// What it finds.
		var want []fsmrt.Instance
		for g := 1; g <= 9000; g++ {
			machine, id, state, version, warn, failures, total := findPlanInstance(g, t0)
			if machine == q.Machine && id > q.After && c.match(state, warn, failures, total) && (c.g == nil || c.g(g)) {
				want = append(want, fsmrt.Instance{ID: id, State: state, Version: version, UpdatedAt: t0.Add(time.Duration(g) * time.Second)})
			}
		}
		slices.SortFunc(want, func(a, b fsmrt.Instance) int { return strings.Compare(a.ID, b.ID) })
		if q.Limit > 0 && len(want) > q.Limit {
			want = want[:q.Limit]
		}
		if len(want) == 0 {
			t.Errorf("find by %s: the data hold no match", c.name)
		}
		got, err := st.Find(ctx, q)
		if err != nil || !sameInstances(got, want) {
			t.Errorf("find by %s: %d instances (%v), want %d: %+v...", c.name, len(got), err, len(want), want[:min(len(want), 3)])
		}
	}
}

// Every value of a query is a parameter: names with quotes and SQL in them match
// themselves only, and a long list of states works; a negative limit is none.
func TestFindParameters(t *testing.T) {
	st := openStore(t, newDatabase(t))
	odd := `it's' OR '1'='1`
	c := testCommit("find", odd, 1, "", "{}")
	c.State = odd
	c.Rearm, c.Deadlines = true, []fsmrt.Deadline{{Name: odd, At: c.Entry.At, State: odd}}
	c.Counters = []fsmrt.CounterValue{{Name: odd, State: odd, Value: 1}}
	if err := st.Commit(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	mustCommit(t, st, "find", "plain", 1, 1)
	mustCommit(t, st, odd, "other machine", 1, 1)
	var many []string
	for i := range 5000 {
		many = append(many, fmt.Sprint("s", i))
	}
	for name, tc := range map[string]struct {
		q    fsmrt.Query
		want []string
	}{
		"odd state":          {fsmrt.Query{States: []string{odd}}, []string{odd + "@1"}},
		"injected state":     {fsmrt.Query{States: []string{`b' OR '1'='1`}}, []string{}},
		"odd deadline":       {fsmrt.Query{Deadline: odd, Due: c.Entry.At}, []string{odd + "@1"}},
		"odd counter":        {fsmrt.Query{Counter: odd, AtLeast: 1}, []string{odd + "@1"}},
		"after odd":          {fsmrt.Query{After: odd}, []string{"plain@1"}},
		"many states":        {fsmrt.Query{States: append(many, "b")}, []string{"plain@1"}},
		"injected after":     {fsmrt.Query{After: `' OR 1=1 --`}, []string{odd + "@1", "plain@1"}},
		"negative limit":     {fsmrt.Query{Limit: -1}, []string{odd + "@1", "plain@1"}},
		"counter at least 0": {fsmrt.Query{Counter: "none", AtLeast: 0}, []string{}},
		"huge counter":       {fsmrt.Query{Counter: odd, AtLeast: 1 << 40}, []string{}},
		"no such machine":    {fsmrt.Query{Machine: "none"}, []string{}},
	} {
		q := tc.q
		if q.Machine == "" {
			q.Machine = "find"
		}
		if got := findIDs(t, st, q); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: %v, want %v", name, got, tc.want)
		}
	}
	if got := findIDs(t, st, fsmrt.Query{Machine: odd}); !reflect.DeepEqual(got, []string{"other machine@1"}) {
		t.Errorf("odd machine: %v", got)
	}
}

// UpdatedAt is the time of the last entry, to the microsecond, whichever way the commit
// wrote the instance; a due time compares to the microsecond the deadline's time was kept
// to.
func TestFindTimes(t *testing.T) {
	ctx := context.Background()
	st := openStore(t, newDatabase(t))
	at := time.Date(2026, 5, 6, 7, 8, 9, 1500, time.FixedZone("X", -5*3600)) // kept as ... + 1 µs
	check := func(what string, want time.Time) {
		t.Helper()
		got, err := st.Find(ctx, fsmrt.Query{Machine: "times"})
		if err != nil || len(got) != 1 || !got[0].UpdatedAt.Equal(want.Truncate(time.Microsecond)) {
			t.Errorf("%s: %+v, %v, want updated at %v", what, got, err, want.Truncate(time.Microsecond))
		}
	}
	for seq := int64(1); seq <= 3; seq++ {
		c := testCommit("times", "m", seq, "", "{}")
		c.Entry.At = at.Add(time.Duration(seq) * time.Minute)
		if seq == 1 {
			c.Rearm, c.Deadlines = true, []fsmrt.Deadline{{Name: "expiry", At: at, State: "b", Event: "expire"}}
		}
		if seq == 2 {
			c.Snapshot = []byte("{}")
		}
		if err := st.Commit(ctx, c); err != nil {
			t.Fatal(err)
		}
		check(fmt.Sprintf("commit %d", seq), c.Entry.At)
	}
	kept := at.Truncate(time.Microsecond)
	for due, want := range map[time.Time][]string{
		kept:                                {"m@3"},
		kept.Add(999 * time.Nanosecond):     {"m@3"},
		kept.Add(-time.Nanosecond):          {},
		kept.Add(-time.Microsecond):         {},
		kept.In(time.UTC):                   {"m@3"},
		kept.Add(time.Hour).In(time.Local):  {"m@3"},
		kept.Add(-time.Hour).In(time.Local): {},
	} {
		if got := findIDs(t, st, fsmrt.Query{Machine: "times", Deadline: "expiry", Due: due}); !reflect.DeepEqual(got, want) {
			t.Errorf("due at %v: %v, want %v", due, got, want)
		}
	}
}

// counterRows lists the counter rows of machine, in order.
func counterRows(t *testing.T, conn *pgx.Conn, machine string) []string {
	t.Helper()
	rows, _ := conn.Query(context.Background(), `SELECT id || ' ' || name || ' ' || state || ' ' || value
		FROM fsmgen_counters WHERE machine = $1 ORDER BY id, name, state`, machine)
	out, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// Each commit replaces the instance's counters: per-state ones with their state, the
// others with an empty one; a commit without counters clears them; a refused commit
// leaves them.
func TestCounterRows(t *testing.T) {
	ctx := context.Background()
	dsn := newDatabase(t)
	st := openStore(t, dsn)
	conn := connect(t, dsn)
	c := testCommit("counters", "m", 1, "", "{}")
	c.Counters = []fsmrt.CounterValue{{Name: "failures", State: "b", Value: 1}, {Name: "failures", State: "a", Value: 4}, {Name: "total", Value: 1 << 40}}
	if err := st.Commit(ctx, c); err != nil {
		t.Fatal(err)
	}
	want := []string{"m failures a 4", "m failures b 1", "m total  1099511627776"}
	if got := counterRows(t, conn, "counters"); !reflect.DeepEqual(got, want) {
		t.Errorf("counters: %q, want %q", got, want)
	}
	if got := findIDs(t, st, fsmrt.Query{Machine: "counters", Counter: "failures", AtLeast: 4}); !reflect.DeepEqual(got, []string{"m@1"}) {
		t.Errorf("a per-state counter of another state than the instance's: %v", got)
	}
	for name, change := range map[string]func(c *fsmrt.Commit){
		"stale":        func(c *fsmrt.Commit) { c.Version, c.Entry.Seq = 0, 1 },
		"another spec": func(c *fsmrt.Commit) { c.Spec = "sha256:other" },
		"no deadline":  func(c *fsmrt.Commit) { c.Fired = "expiry" },
		"twice":        func(c *fsmrt.Commit) { c.Counters = append(c.Counters, c.Counters[0]) },
	} {
		c := testCommit("counters", "m", 2, "", "{}")
		c.Counters = []fsmrt.CounterValue{{Name: "lost", Value: 1}}
		change(c)
		if err := st.Commit(ctx, c); err == nil {
			t.Errorf("%s: committed", name)
		}
		if got := counterRows(t, conn, "counters"); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: a refused commit changed the counters: %q", name, got)
		}
	}
	c = testCommit("counters", "m", 2, "", "{}")
	c.Snapshot = []byte("{}")
	c.Counters = []fsmrt.CounterValue{{Name: "total", Value: 2}, {Name: "failures", State: "a", Value: -1}}
	if err := st.Commit(ctx, c); err != nil {
		t.Fatal(err)
	}
	if got, want := counterRows(t, conn, "counters"), []string{"m failures a -1", "m total  2"}; !reflect.DeepEqual(got, want) {
		t.Errorf("counters replaced: %q, want %q", got, want)
	}
	mustCommit(t, st, "counters", "other", 1, 1)
	mustCommit(t, st, "counters", "m", 3, 3)
	if got := counterRows(t, conn, "counters"); len(got) != 0 {
		t.Errorf("counters after a commit without: %q", got)
	}
}

// A commit that handles a deadline records it handled at the time of its entry: it stays,
// for Find, until the next rearm, and no claim takes it again; handling it again, or one
// the instance does not have, is a conflict naming it that changes nothing.
func TestHandledDeadlines(t *testing.T) {
	ctx := context.Background()
	dsn := newDatabase(t)
	st := openStore(t, dsn)
	conn := connect(t, dsn)
	c := testCommit("handled", "m", 1, "", "{}")
	t0 := c.Entry.At
	c.Rearm, c.Deadlines = true, []fsmrt.Deadline{{Name: "warn", At: t0, State: "b", Level: 1}, {Name: "expiry", At: t0.Add(time.Hour), State: "b", Event: "expire"}}
	if err := st.Commit(ctx, c); err != nil {
		t.Fatal(err)
	}
	if ds, err := st.ClaimDeadlines(ctx, "handled", "s", t0, time.Minute, 10); err != nil || len(ds) != 1 || ds[0].Name != "warn" {
		t.Fatalf("claim: %+v, %v", ds, err)
	}
	c = testCommit("handled", "m", 2, "", "{}")
	c.Fired = "warn"
	if err := st.Commit(ctx, c); err != nil {
		t.Fatal(err)
	}
	var handled time.Time
	if err := conn.QueryRow(ctx, `SELECT handled_at FROM fsmgen_deadlines WHERE machine = 'handled' AND id = 'm' AND name = 'warn'`).Scan(&handled); err != nil || !handled.Equal(c.Entry.At) {
		t.Errorf("handled at %v, %v, want %v", handled, err, c.Entry.At)
	}
	if got := findIDs(t, st, fsmrt.Query{Machine: "handled", Deadline: "warn", Due: t0}); !reflect.DeepEqual(got, []string{"m@2"}) {
		t.Errorf("find a handled deadline: %v", got)
	}
	if ds, err := st.ClaimDeadlines(ctx, "handled", "s", t0.Add(2*time.Hour), time.Minute, 10); err != nil || len(ds) != 1 || ds[0].Name != "expiry" {
		t.Errorf("claim after handling the warning: %+v, %v", ds, err)
	}
	before := mustLoad(t, st, "handled", "m")
	for _, name := range []string{"warn", "none"} {
		c = testCommit("handled", "m", 3, "", "{}")
		c.Fired = name
		c.Effects, c.Rearm = []fsmrt.Effect{{Name: "send", Key: "lost"}}, true
		c.Counters = []fsmrt.CounterValue{{Name: "lost", Value: 1}}
		var ce *fsmrt.ConflictError
		err := st.Commit(ctx, c)
		if want := (fsmrt.ConflictError{Machine: "handled", ID: "m", Version: 2, Stored: 2, Deadline: name}); !errors.As(err, &ce) || *ce != want {
			t.Errorf("handling %s: %v, want %+v", name, err, want)
		}
	}
	if l := mustLoad(t, st, "handled", "m"); l.Version != before.Version {
		t.Errorf("a refused commit moved the instance to %d", l.Version)
	}
	if got := findIDs(t, st, fsmrt.Query{Machine: "handled", Deadline: "expiry", Due: t0.Add(time.Hour)}); !reflect.DeepEqual(got, []string{"m@2"}) {
		t.Errorf("a refused rearm removed the deadlines: %v", got)
	}
	// Handling the expiry and rearming: the new deadlines replace both.
	c = testCommit("handled", "m", 3, "", "{}")
	c.Fired = "expiry"
	c.Rearm, c.Deadlines = true, []fsmrt.Deadline{{Name: "warn", At: t0.Add(3 * time.Hour), State: "b", Level: 1}}
	if err := st.Commit(ctx, c); err != nil {
		t.Fatal(err)
	}
	if got := findIDs(t, st, fsmrt.Query{Machine: "handled", Deadline: "expiry", Due: t0.Add(time.Hour)}); len(got) != 0 {
		t.Errorf("the expiry after the rearm: %v", got)
	}
	if got := findIDs(t, st, fsmrt.Query{Machine: "handled", Deadline: "warn", Due: t0.Add(3 * time.Hour)}); !reflect.DeepEqual(got, []string{"m@3"}) {
		t.Errorf("the warning rearmed: %v", got)
	}
	if ds, err := st.ClaimDeadlines(ctx, "handled", "s", t0.Add(3*time.Hour), time.Minute, 10); err != nil || len(ds) != 1 || ds[0].Name != "warn" {
		t.Errorf("claim after the rearm: %+v, %v", ds, err)
	}
}
