package postgres

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/fsmgen/fsmgen/fsmrt"
	"github.com/fsmgen/fsmgen/store/postgres/pgtest"
)

// newDatabaseWith creates a database for t with the options of CREATE DATABASE opts
// ("TEMPLATE template0 ...") and returns its DSN. It fails the test when the server cannot
// create it, or skips it outside CI.
func newDatabaseWith(t *testing.T, opts string) string {
	t.Helper()
	srv := pgtest.Shared(t)
	name := fmt.Sprintf("test_%d", databases.Add(1))
	if _, err := connect(t, srv.DSN).Exec(context.Background(), "CREATE DATABASE "+name+" "+opts); err != nil {
		if ci, _ := strconv.ParseBool(os.Getenv("CI")); ci {
			t.Fatalf("create database %s: %v (CI is set, so the test may not be skipped)", opts, err)
		}
		t.Skipf("skipping: create database %s: %v", opts, err)
	}
	u, err := url.Parse(srv.DSN)
	if err != nil {
		t.Fatal(err)
	}
	u.Path = "/" + name
	return u.String()
}

// twin runs the same calls on a PostgreSQL store and a MemoryStore and fails the test when
// they answer differently.
type twin struct {
	t   *testing.T
	pg  *Store
	mem *fsmrt.MemoryStore
}

// commit commits c to both stores and returns the PostgreSQL store's error.
func (w *twin) commit(what string, c *fsmrt.Commit) error {
	w.t.Helper()
	ctx := context.Background()
	errPG, errMem := w.pg.Commit(ctx, c), w.mem.Commit(ctx, c)
	if !sameRefusal(errPG, errMem) {
		w.t.Errorf("%s: commit returns %v, the MemoryStore %v", what, errPG, errMem)
	}
	return errPG
}

// claimEffects claims effects in both stores and compares them.
func (w *twin) claimEffects(what string, owner string, now time.Time, limit int) []fsmrt.PendingEffect {
	w.t.Helper()
	ctx := context.Background()
	got, err := w.pg.ClaimEffects(ctx, "like", owner, now, time.Minute, limit)
	if err != nil {
		w.t.Fatalf("%s: %v", what, err)
	}
	want, _ := w.mem.ClaimEffects(ctx, "like", owner, now, time.Minute, limit)
	if !reflect.DeepEqual(got, want) {
		w.t.Errorf("%s: claimed\n%s\nthe MemoryStore\n%s", what, describeEffects(got), describeEffects(want))
	}
	return got
}

// complete completes effects in both stores.
func (w *twin) complete(ids []fsmrt.EffectID, now time.Time) {
	w.t.Helper()
	ctx := context.Background()
	if err := w.pg.CompleteEffects(ctx, ids, now); err != nil {
		w.t.Fatal(err)
	}
	_ = w.mem.CompleteEffects(ctx, ids, now)
}

// claimDeadlines claims deadlines in both stores and compares them, times by the instant.
func (w *twin) claimDeadlines(what string, owner string, now time.Time, limit int) {
	w.t.Helper()
	ctx := context.Background()
	got, err := w.pg.ClaimDeadlines(ctx, "like", owner, now, time.Minute, limit)
	if err != nil {
		w.t.Fatalf("%s: %v", what, err)
	}
	want, _ := w.mem.ClaimDeadlines(ctx, "like", owner, now, time.Minute, limit)
	if g, m := describeDeadlines(got), describeDeadlines(want); g != m {
		w.t.Errorf("%s: claimed\n%s\nthe MemoryStore\n%s", what, g, m)
	}
}

// find runs queries in both stores, at the times given, and compares what they find.
func (w *twin) find(what string, times ...time.Time) {
	w.t.Helper()
	ctx := context.Background()
	queries := []fsmrt.Query{
		{}, {After: "B"}, {After: "a"}, {After: "Z", Limit: 1}, {Limit: 2}, {Limit: -1},
		{States: []string{"b"}}, {States: []string{"a", "z"}},
		{Counter: "failures", AtLeast: 1}, {Counter: "failures", AtLeast: 2}, {Counter: "total", AtLeast: 0},
	}
	for _, at := range times {
		for _, name := range []string{"level:warn", "expiry", "b"} {
			queries = append(queries, fsmrt.Query{Deadline: name, Due: at}, fsmrt.Query{Deadline: name, Due: at, States: []string{"b"}, Counter: "total", AtLeast: 1})
		}
	}
	for _, q := range queries {
		q.Machine = "like"
		got, err := w.pg.Find(ctx, q)
		if err != nil {
			w.t.Fatalf("%s: find %+v: %v", what, q, err)
		}
		want, _ := w.mem.Find(ctx, q)
		if !sameInstances(got, want) {
			w.t.Errorf("%s: find %+v:\n%+v\nthe MemoryStore\n%+v", what, q, got, want)
		}
	}
}

// describeEffects lists effects, nil data apart from empty data.
func describeEffects(es []fsmrt.PendingEffect) string {
	var b strings.Builder
	for _, e := range es {
		data := "nil"
		if e.Data != nil {
			data = strconv.Quote(string(e.Data))
		}
		fmt.Fprintf(&b, "  %s/%s/%d/%d %s %s data %s #%d\n", e.Machine, e.ID, e.Seq, e.Index, e.Name, e.Key, data, e.Attempts)
	}
	return b.String()
}

// describeDeadlines lists deadlines, times in UTC to the microsecond.
func describeDeadlines(ds []fsmrt.DueDeadline) string {
	var b strings.Builder
	for _, d := range ds {
		fmt.Fprintf(&b, "  %s/%s/%s at %s state %q event %q level %d\n", d.Machine, d.ID, d.Name,
			d.At.UTC().Format(time.RFC3339Nano), d.State, d.Event, d.Level)
	}
	return b.String()
}

// sameRefusal reports whether two stores refused a commit alike: both not, with equal
// conflicts, equal spec mismatches, or both as invalid.
func sameRefusal(a, b error) bool {
	var ca, cb *fsmrt.ConflictError
	var sa, sb *fsmrt.SpecMismatchError
	switch {
	case a == nil || b == nil:
		return a == nil && b == nil
	case errors.As(a, &ca) || errors.As(b, &cb):
		return errors.As(a, &ca) && errors.As(b, &cb) && *ca == *cb
	case errors.As(a, &sa) || errors.As(b, &sb):
		return errors.As(a, &sa) && errors.As(b, &sb) && *sa == *sb
	}
	return errors.Is(a, fsmrt.ErrInvalidCommit) && errors.Is(b, fsmrt.ErrInvalidCommit)
}

// The outbox and the deadlines answer as the MemoryStore's, call for call: the order of
// claims (ids bytewise, whatever the database's collation), leases, attempts, nil and
// empty data, completions, and the refusals of commits that handle deadlines, in their
// order of precedence.
func TestOutboxLikeMemoryStore(t *testing.T) {
	for _, db := range []struct{ name, opts string }{
		{"default collation", ""},
		{"ICU collation", "TEMPLATE template0 LOCALE_PROVIDER icu ICU_LOCALE 'en-US'"},
	} {
		t.Run(db.name, func(t *testing.T) {
			dsn := newDatabase(t)
			if db.opts != "" {
				dsn = newDatabaseWith(t, db.opts)
			}
			outboxLikeMemoryStore(t, &twin{t: t, pg: openStore(t, dsn), mem: fsmrt.NewMemoryStore()})
		})
	}
}

// outboxLikeMemoryStore runs the calls of TestOutboxLikeMemoryStore on w.
func outboxLikeMemoryStore(t *testing.T, w *twin) {
	t0 := testCommit("like", "a", 1, "", "").Entry.At.Add(-time.Second).Add(1500 * time.Nanosecond)
	at := func(seconds int) time.Time { return t0.Add(time.Duration(seconds) * time.Second) }
	commit := func(id string, seq int64, key string) *fsmrt.Commit {
		c := testCommit("like", id, seq, key, "{}")
		c.Entry.At = c.Entry.At.Add(1500 * time.Nanosecond)
		return c
	}
	// a and B commit at the same time: by id, B first (bytewise, not in the database's
	// collation); a's effects have nil, empty and other data.
	c := commit("a", 1, "")
	c.Effects = []fsmrt.Effect{{Name: "send", Key: "a1"}, {Name: "send", Key: "a2", Data: []byte{}}, {Name: "mail", Key: "a3", Data: []byte("x")}}
	c.Rearm, c.Deadlines = true, []fsmrt.Deadline{
		{Name: "level:warn", At: at(10), State: "b", Level: 1}, {Name: "expiry", At: at(20), State: "b", Event: "expire"},
	}
	c.Counters = []fsmrt.CounterValue{{Name: "failures", State: "b", Value: 2}, {Name: "total", Value: 1}}
	w.commit("a1", c)
	c = commit("B", 1, "k")
	c.Effects = []fsmrt.Effect{{Name: "send", Key: "B1", Data: []byte("y")}}
	c.Owner, c.LeaseUntil = "committer", at(30)
	c.Rearm, c.Deadlines = true, []fsmrt.Deadline{{Name: "level:warn", At: at(10), State: "b", Level: 1}, {Name: "b", At: at(10), State: "b", Level: 2}}
	c.Counters = []fsmrt.CounterValue{{Name: "failures", State: "a", Value: 1}, {Name: "total", Value: 1}}
	w.commit("B1", c)
	c = commit("c", 1, "k")
	c.Effects = []fsmrt.Effect{{Name: "send", Key: "c1"}}
	c.Rearm, c.Deadlines = true, []fsmrt.Deadline{{Name: "level:warn", At: at(10).Add(time.Nanosecond), State: "b", Level: 1}}
	w.commit("c1", c)

	w.claimEffects("two effects", "w1", at(5), 2)
	w.claimEffects("the rest not leased", "w2", at(5), 10)
	w.claimEffects("nothing left", "w3", at(29), 10)
	got := w.claimEffects("the committer's lease ran out", "w3", at(31), 10)
	w.complete(append([]fsmrt.EffectID{{Machine: "like", ID: "a", Seq: 1, Index: 1}, {Machine: "like", ID: "none", Seq: 1}}, got[0].EffectID, got[0].EffectID), at(40))
	w.claimEffects("the leases of w1 and w2 ran out", "w4", at(66), 10)
	w.claimEffects("a claim of none", "w4", at(500), 0)

	times := []time.Time{at(9), at(10), at(10).Add(time.Nanosecond), at(10).Add(time.Microsecond), at(20), at(100)}
	w.find("after the first commits", times...)
	w.claimDeadlines("nothing due", "s1", at(9), 10)
	w.claimDeadlines("due at 10, two", "s1", at(10), 2)
	w.claimDeadlines("due at 10, the rest", "s2", at(10), 10)
	w.claimDeadlines("due at 20", "s2", at(20), 10)

	// a handles its warning; handling it again is a conflict of the deadline, which gives
	// way to the version, the spec and the key.
	c = commit("a", 2, "")
	c.Fired = "level:warn"
	w.commit("a2 handles its warning", c)
	w.find("after a handled its warning", times...)
	for what, change := range map[string]func(c *fsmrt.Commit){
		"the deadline":                 func(c *fsmrt.Commit) {},
		"the version first":            func(c *fsmrt.Commit) { c.Version, c.Entry.Seq = 1, 2 },
		"the spec first":               func(c *fsmrt.Commit) { c.Spec = "sha256:other" },
		"the key first":                func(c *fsmrt.Commit) { c.ID, c.Version, c.Entry.Seq, c.Entry.Key = "c", 1, 2, "k" },
		"with effects and a rearm too": func(c *fsmrt.Commit) { c.Effects, c.Rearm = []fsmrt.Effect{{Name: "send", Key: "lost"}}, true },
	} {
		c = commit("a", 3, "")
		c.Fired = "level:warn"
		change(c)
		if err := w.commit("a3 handles its warning again: "+what, c); !errors.Is(err, fsmrt.ErrStoreConflict) && !errors.Is(err, fsmrt.ErrSpecMismatch) {
			t.Errorf("%s: %v", what, err)
		}
	}
	c = commit("new", 1, "")
	c.Fired = "expiry"
	w.commit("a new instance handles a deadline", c)
	// a handles its expiry and enters a state with deadlines and effects of its own.
	c = commit("a", 3, "")
	c.Fired = "expiry"
	c.Effects = []fsmrt.Effect{{Name: "send", Key: "a3"}}
	c.Rearm, c.Deadlines = true, []fsmrt.Deadline{{Name: "expiry", At: at(100), State: "a", Event: "again"}}
	w.commit("a3 handles its expiry", c)
	c = commit("B", 2, "")
	w.commit("B2 keeps its deadlines", c)
	c = commit("c", 2, "")
	c.Rearm = true
	w.commit("c2 disarms", c)
	w.claimEffects("after the deadlines", "w5", at(1000), 10)
	w.claimDeadlines("after the deadlines", "s3", at(1000), 10)
	w.claimDeadlines("after the deadlines, all leased", "s3", at(1000), 10)
	w.find("at the end", times...)
}

// Stores on pools of their own, like processes, commit effects and deadlines while all of
// them claim: every effect and deadline is claimed, each by one claimer, once.
func TestClaimsAcrossPools(t *testing.T) {
	ctx := context.Background()
	dsn := newDatabase(t)
	const pools, instancesPerPool, claimersPerPool = 4, 10, 3
	const effectsPerInstance, deadlinesPerInstance = 6, 3
	stores := make([]*Store, pools)
	for i := range stores {
		stores[i] = openStore(t, dsn)
	}
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	var writing sync.WaitGroup
	for p, st := range stores {
		writing.Go(func() {
			for i := range instancesPerPool {
				if err := commitWork(ctx, st, fmt.Sprintf("p%d-i%d", p, i), now); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	var done atomic.Bool
	go func() { writing.Wait(); done.Store(true) }()

	var mu sync.Mutex
	effects, deadlines := map[fsmrt.EffectID]string{}, map[string]string{}
	var claiming sync.WaitGroup
	for c := range pools * claimersPerPool {
		st, owner := stores[c%pools], fmt.Sprint("claimer-", c)
		claiming.Go(func() {
			for {
				finished := done.Load() // before the claims: what is committed by now is claimed below
				es, err := st.ClaimEffects(ctx, "pools", owner, now, time.Hour, 4)
				if err != nil {
					t.Error(err)
					return
				}
				ds, err := st.ClaimDeadlines(ctx, "pools", owner, now, time.Hour, 3)
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				for _, e := range es {
					if prev, dup := effects[e.EffectID]; dup || e.Attempts != 1 {
						t.Errorf("effect %v claimed by %s and %s (attempt %d)", e.EffectID, prev, owner, e.Attempts)
					}
					effects[e.EffectID] = owner
				}
				for _, d := range ds {
					k := d.ID + "/" + d.Name
					if prev, dup := deadlines[k]; dup {
						t.Errorf("deadline %s claimed by %s and %s", k, prev, owner)
					}
					deadlines[k] = owner
				}
				mu.Unlock()
				if len(es) == 0 && len(ds) == 0 {
					if finished {
						return
					}
					time.Sleep(time.Millisecond)
				}
			}
		})
	}
	claiming.Wait()
	if want := pools * instancesPerPool * effectsPerInstance; len(effects) != want {
		t.Errorf("%d effects claimed, want %d", len(effects), want)
	}
	if want := pools * instancesPerPool * deadlinesPerInstance; len(deadlines) != want {
		t.Errorf("%d deadlines claimed, want %d", len(deadlines), want)
	}
	// Completed from every pool at once, none comes back; the deadlines come back when
	// their leases run out.
	var ids []fsmrt.EffectID
	for id := range effects {
		ids = append(ids, id)
	}
	var completing sync.WaitGroup
	for p, st := range stores {
		completing.Go(func() {
			if err := st.CompleteEffects(ctx, ids[p*len(ids)/pools:(p+1)*len(ids)/pools], now); err != nil {
				t.Error(err)
			}
		})
	}
	completing.Wait()
	later := now.Add(2 * time.Hour)
	if es, err := stores[0].ClaimEffects(ctx, "pools", "late", later, time.Hour, 1000); err != nil || len(es) != 0 {
		t.Errorf("after completing them all: %d effects claimed, %v", len(es), err)
	}
	if ds, err := stores[1].ClaimDeadlines(ctx, "pools", "late", later, time.Hour, 1000); err != nil || len(ds) != len(deadlines) {
		t.Errorf("after the leases ran out: %d deadlines claimed of %d, %v", len(ds), len(deadlines), err)
	}
}

// commitWork commits instance id of machine "pools" in three transitions: the first arms
// its deadlines (due at now) with two effects, the others bring more effects and keep the
// deadlines.
func commitWork(ctx context.Context, st *Store, id string, now time.Time) error {
	for seq, n := range []int{2, 3, 1} {
		c := testCommit("pools", id, int64(seq+1), "", "{}")
		for i := range n {
			c.Effects = append(c.Effects, fsmrt.Effect{Name: "send", Key: fmt.Sprintf("%s/%d/%d", id, seq+1, i)})
		}
		if seq == 0 {
			c.Rearm = true
			for i := range 3 {
				c.Deadlines = append(c.Deadlines, fsmrt.Deadline{Name: fmt.Sprint("d", i), At: now.Add(-time.Duration(i) * time.Minute), State: "b"})
			}
		}
		if err := st.Commit(ctx, c); err != nil {
			return err
		}
	}
	return nil
}

// The claims find their rows through the claim indexes: the pending effects in the order
// claimed, the deadlines by due time, in the plan for their arguments and in the generic
// plan of a prepared statement. The plans are logged.
func TestClaimPlansUseIndexes(t *testing.T) {
	ctx := context.Background()
	dsn := newDatabase(t)
	st := openStore(t, dsn)
	conn := connect(t, dsn)
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	// 9000 effects of 3 machines, one in 20 not delivered; 9000 deadlines, one a minute, and
	// 9000 handled ones, an hour earlier each, which claims never take.
	for _, sql := range []string{
		`INSERT INTO fsmgen_effects (machine, id, seq, idx, name, idem_key, data, attempts, committed_at, delivered_at)
		SELECT 'm' || (g % 3), 'i' || (g / 3 % 500), g, 0, 'send', 'k' || g, '\x7b7d'::bytea, 1,
			$1::timestamptz + g * interval '1 second',
			CASE WHEN g % 20 = 0 THEN NULL ELSE $1::timestamptz + g * interval '2 seconds' END
		FROM generate_series(1, 9000) g`,
		`INSERT INTO fsmgen_deadlines (machine, id, name, at, state, event, level)
		SELECT 'm' || (g % 3), 'i' || g, 'expiry', $1::timestamptz + g * interval '1 minute', 'b', 'expire', 0
		FROM generate_series(1, 9000) g`,
		`INSERT INTO fsmgen_deadlines (machine, id, name, at, state, event, level, handled_at)
		SELECT 'm' || (g % 3), 'i' || g, 'warn', $1::timestamptz + g * interval '1 minute' - interval '1 hour', 'b', '', 1, $1::timestamptz
		FROM generate_series(1, 9000) g`,
	} {
		if _, err := conn.Exec(ctx, sql, t0); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := conn.Exec(ctx, `ANALYZE fsmgen_effects; ANALYZE fsmgen_deadlines`); err != nil {
		t.Fatal(err)
	}
	now := t0.Add(90 * time.Minute)
	if _, err := conn.Exec(ctx, `SET plan_cache_mode = force_generic_plan`); err != nil {
		t.Fatal(err)
	}
	for i, c := range []struct {
		what, sql, index string
	}{
		{"claim effects", st.sql.claimEffects, effectsPendingIndex},
		{"claim deadlines", st.sql.claimDeadlines, deadlinesDueIndex},
	} {
		// The plan for these arguments, and the generic plan that a prepared statement may
		// switch to after a few executions.
		custom := explain(t, conn, "EXPLAIN (FORMAT TEXT) "+c.sql, "m1", "w", now, now.Add(time.Minute), 10)
		name := fmt.Sprint("claim_", i)
		if _, err := conn.Exec(ctx, "PREPARE "+name+" AS "+c.sql); err != nil {
			t.Fatal(err)
		}
		generic := explain(t, conn, fmt.Sprintf("EXPLAIN (FORMAT TEXT) EXECUTE %s('m1', 'w', '%s', '%s', 10)",
			name, now.Format(time.RFC3339), now.Add(time.Minute).Format(time.RFC3339)))
		t.Logf("%s:\n%s\n%s, generic plan:\n%s", c.what, custom, c.what, generic)
		for _, plan := range []string{custom, generic} {
			if !strings.Contains(plan, "Index Scan using "+c.index) {
				t.Errorf("%s does not pick through %s:\n%s", c.what, c.index, plan)
			}
		}
		// The generic plan, which guesses the limit, may join the leases by hash on a
		// table this small; costing more than the plans for the arguments, it is not the
		// one a prepared statement keeps (plan_cache_mode auto).
		if strings.Contains(custom, "Seq Scan") {
			t.Errorf("%s scans a table:\n%s", c.what, custom)
		}
	}
	// And they claim what the plans promise.
	if es, err := st.ClaimEffects(ctx, "m1", "w", now, time.Minute, 5); err != nil || len(es) != 5 || es[0].Seq != 40 || es[0].Attempts != 2 {
		t.Errorf("claimed %v, %v", describeEffects(es), err)
	}
	if ds, err := st.ClaimDeadlines(ctx, "m1", "w", now, time.Minute, 50); err != nil || len(ds) != 30 || ds[0].ID != "i1" || ds[0].Name != "expiry" {
		t.Errorf("claimed %d deadlines, first %v, %v", len(ds), ds[:min(1, len(ds))], err)
	}
}

// explain returns the plan that EXPLAIN sql (with args) prints.
func explain(t *testing.T, conn *pgx.Conn, sql string, args ...any) string {
	t.Helper()
	rows, _ := conn.Query(context.Background(), sql, args...)
	lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	return strings.Join(lines, "\n")
}
