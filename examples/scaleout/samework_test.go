package scaleout

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fsmgen/fsmgen/examples/scaleout/order"
	"github.com/fsmgen/fsmgen/fsmrt"
)

// checkSameWork runs the same-work floor of r (its workers' log, made again by Redo and
// written by SameWork) from db, which r's workers filled and drained, to the empty
// database floor, and compares the two: every row a commit writes must be the same (the
// instances with their snapshots, the entries, the outbox but for its deliveries, the
// deadlines armed and handled, the counters). The floor writes the same work, or this
// fails.
func checkSameWork(ctx context.Context, t *testing.T, r *Run, db *DB, floor string) {
	t.Helper()
	res, err := r.Floor(ctx, FloorSameWork, r.Where, floor)
	if err != nil {
		t.Fatalf("same-work floor: %v", err)
	}
	entries, err := db.Entries(ctx, machineName)
	if err != nil {
		t.Fatal(err)
	}
	if res.Commits != entries {
		t.Errorf("same-work floor: %d commits, the workers' log has %d entries", res.Commits, entries)
	}
	t.Logf("same-work floor: %d commits in %v", res.Commits, res.Elapsed.Round(time.Millisecond))
	fdb, err := Open(ctx, r.Kind, floor)
	if err != nil {
		t.Fatal(err)
	}
	defer fdb.Close()
	want, err := commitRows(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	got, err := commitRows(ctx, fdb)
	if err != nil {
		t.Fatal(err)
	}
	for table, rows := range want {
		if len(rows) == 0 {
			t.Errorf("%s: the workers wrote no rows: the comparison proves nothing of it", table)
		}
		if diff := firstDiff(rows, got[table]); diff != "" {
			t.Errorf("%s: the floor wrote other rows than the workers (%d rows against %d): %s", table, len(got[table]), len(rows), diff)
		}
	}
}

// commitTables are the columns of the store's tables that commits write, and the order
// to read them in: what the deliveries, the claims and the clock of the writes change
// is left out.
var commitTables = map[string]string{
	"instances": `SELECT machine, id, spec, version, state, snapshot, snapshot_seq, last_at FROM fsmgen_instances ORDER BY 1, 2`,
	"entries":   `SELECT machine, id, seq, kind, event, from_state, to_state, at, idem_key, data FROM fsmgen_entries ORDER BY 1, 2, 3`,
	"effects":   `SELECT machine, id, seq, idx, name, idem_key, data, committed_at FROM fsmgen_effects ORDER BY 1, 2, 3, 4`,
	"deadlines": `SELECT machine, id, name, at, state, event, level, handled_at FROM fsmgen_deadlines ORDER BY 1, 2, 3`,
	"counters":  `SELECT machine, id, name, state, value FROM fsmgen_counters ORDER BY 1, 2, 3, 4`,
}

// commitRows returns the rows of commitTables in db, each as text.
func commitRows(ctx context.Context, db *DB) (map[string][]string, error) {
	out := map[string][]string{}
	for table, query := range commitTables {
		err := db.query(ctx, query, nil, func(scan func(...any) error) error {
			vals := make([]any, 10)
			ptrs := make([]any, 0, 10)
			for i := range vals {
				ptrs = append(ptrs, &vals[i])
			}
			n := columns(query)
			if err := scan(ptrs[:n]...); err != nil {
				return err
			}
			out[table] = append(out[table], fmt.Sprintf("%v", vals[:n]))
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("%s: %w", table, err)
		}
	}
	return out, nil
}

// columns returns how many columns query selects.
func columns(query string) int {
	return strings.Count(query[:strings.Index(query, " FROM ")], ",") + 1
}

// firstDiff describes the first difference of two lists of rows, "" when they are equal.
func firstDiff(want, got []string) string {
	if slices.Equal(want, got) {
		return ""
	}
	for i := range max(len(want), len(got)) {
		var w, g string
		if i < len(want) {
			w = want[i]
		}
		if i < len(got) {
			g = got[i]
		}
		if w != g {
			return fmt.Sprintf("row %d:\n workers %.300s\n floor   %.300s", i, w, g)
		}
	}
	return ""
}

// checkSameWorkSteps takes one order through every kind of commit on the store of kind
// at where (created, an item added, moved on, an effect, put on hold, both timeout
// levels, released by the expiry), reading the store's rows after each commit; then it
// writes the order's log again with the same-work floor on the empty database floor,
// whose rows must be the store's after each commit, not only at the end (a level marked
// handled is deleted by the next rearm).
func checkSameWorkSteps(ctx context.Context, t *testing.T, kind, where, floor string) {
	t.Helper()
	db, err := Open(ctx, kind, where)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	clock := &setClock{at: time.Date(2026, 6, 1, 8, 0, 0, 0, time.UTC)}
	m := order.NewOrder(&redoHooks{})
	m.ID = "order-steps"
	m.SetClock(clock)
	m.SetOwner("worker-steps", time.Minute)
	m.SetStore(db.Store)
	load := func(context.Context, string) (*fsmrt.Machine[order.State, order.Event, fsmrt.NoRole, order.OrderContext, fsmrt.None], error) {
		return &m.Machine, nil
	}
	var want [][]string
	step := func(what string, do func() error) {
		t.Helper()
		clock.at = clock.at.Add(time.Second)
		if err := do(); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		rows, err := commitRows(ctx, db)
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, flatten(rows))
	}
	fire := func(e order.Event, key string) func() error {
		return func() error {
			_, err := m.FireWith(ctx, e, order.OrderInput{At: clock.at, Key: key, Actor: "worker-steps"})
			return err
		}
	}
	due := func(after time.Duration) func() error {
		return func() error {
			clock.at = clock.at.Add(after)
			n, err := fsmrt.FireDue(ctx, db.Store, machineName, "worker-steps", clock.at, time.Minute, 10, load)
			if err == nil && n != 1 {
				err = fmt.Errorf("%d deadlines handled, want 1", n)
			}
			return err
		}
	}
	step("create", func() error { return m.Create(ctx, order.OrderInput{At: clock.at, Actor: "worker-steps"}) })
	step("add", fire(order.EventAdd, "k1"))
	step("advance", fire(order.EventAdvance, "k2"))
	step("advance with an effect", fire(order.EventAdvance, ""))
	step("add in shipped", fire(order.EventAdd, "k3"))
	step("hold", fire(order.EventHold, "k4"))
	step("level remind", due(time.Minute))
	step("add while held", fire(order.EventAdd, ""))
	step("level late", due(2*time.Minute))
	step("released", due(2*time.Minute))
	step("hold again", fire(order.EventHold, "k5"))

	commits, err := Redo(ctx, db.Store, m.ID, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if len(commits) != len(want) {
		t.Fatalf("Redo made %d commits of %d", len(commits), len(want))
	}
	fdb, err := Open(ctx, kind, floor)
	if err != nil {
		t.Fatal(err)
	}
	defer fdb.Close()
	sw, err := NewSameWork(ctx, fdb)
	if err != nil {
		t.Fatal(err)
	}
	defer sw.Close()
	for i := range commits {
		if err := sw.Commit(ctx, &commits[i]); err != nil {
			t.Fatalf("commit %d: %v", i+1, err)
		}
		rows, err := commitRows(ctx, fdb)
		if err != nil {
			t.Fatal(err)
		}
		if diff := firstDiff(want[i], flatten(rows)); diff != "" {
			t.Errorf("after commit %d (%s %s), the floor's rows differ from the store's: %s",
				i+1, commits[i].Entry.Kind, commits[i].Entry.Event, diff)
		}
	}
	// A commit at a version the instance has left is refused, and writes nothing.
	before, _ := commitRows(ctx, fdb)
	if err := sw.Commit(ctx, &commits[len(commits)-1]); err == nil {
		t.Errorf("a commit written twice was accepted")
	}
	if after, _ := commitRows(ctx, fdb); firstDiff(flatten(before), flatten(after)) != "" {
		t.Errorf("a refused commit wrote rows")
	}
}

// flatten returns the rows of every table, each prefixed by its table, in table order.
func flatten(rows map[string][]string) []string {
	var out []string
	for _, table := range slices.Sorted(maps.Keys(rows)) {
		for _, r := range rows[table] {
			out = append(out, table+" "+r)
		}
	}
	return out
}
