package sqlite

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fsmgen/fsmgen/fsmrt"
)

// withEffects adds n effects to c.
func withEffects(c *fsmrt.Commit, n int) *fsmrt.Commit {
	for i := range n {
		c.Effects = append(c.Effects, fsmrt.Effect{
			Name: "send", Key: fmt.Sprintf("%s/%d/%d", c.ID, c.Entry.Seq, i), Data: fmt.Appendf(nil, `{"i":%d}`, i),
		})
	}
	return c
}

// mustCommit commits c, failing the test on an error.
func mustCommit(t *testing.T, s *Store, c *fsmrt.Commit) {
	t.Helper()
	if err := s.Commit(context.Background(), c); err != nil {
		t.Fatalf("commit %d of %s: %v", c.Entry.Seq, c.ID, err)
	}
}

// tableRows returns the rows of query, each as its values printed: what a test compares
// before and after.
func tableRows(t *testing.T, s *Store, query string, args ...any) []string {
	t.Helper()
	rows, err := s.db.Query(query, args...)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		out = append(out, fmt.Sprintf("%v", vals))
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

const (
	allEffects = `SELECT machine, id, seq, idx, name, idem_key, data, owner, leased_until, attempts, delivered_at, committed_at
		FROM fsmgen_effects ORDER BY machine, id, seq, idx`
	allDeadlines = `SELECT * FROM fsmgen_deadlines ORDER BY machine, id, name`
	allCounters  = `SELECT * FROM fsmgen_counters ORDER BY machine, id, name, state`
)

// claimIDs claims effects of test.M and returns them as id/seq/index#attempts.
func claimIDs(t *testing.T, s *Store, owner string, now time.Time, limit int) []string {
	t.Helper()
	got, err := s.ClaimEffects(context.Background(), "test.M", owner, now, time.Minute, limit)
	if err != nil {
		t.Fatalf("claim effects: %v", err)
	}
	var out []string
	for _, e := range got {
		out = append(out, fmt.Sprintf("%s/%d/%d#%d", e.ID, e.Seq, e.Index, e.Attempts))
	}
	return out
}

// dueNames claims deadlines of test.M and returns them as id/name.
func dueNames(t *testing.T, s *Store, owner string, now time.Time) []string {
	t.Helper()
	got, err := s.ClaimDeadlines(context.Background(), "test.M", owner, now, time.Minute, 100)
	if err != nil {
		t.Fatalf("claim deadlines: %v", err)
	}
	var out []string
	for _, d := range got {
		out = append(out, d.ID+"/"+d.Name)
	}
	return out
}

// The outbox rows a commit writes: leased to its owner with one attempt counted, or free;
// ordered by the entry's time; data kept apart as nil, empty or bytes.
func TestEffectRows(t *testing.T) {
	s := openStore(t, tempPath(t))
	c := withEffects(testCommit("m", 1, "", false), 3)
	c.Effects[1].Data, c.Effects[2].Data = nil, []byte{}
	mustCommit(t, s, c)
	until := t0.Add(time.Hour + 1500*time.Nanosecond)
	c = withEffects(testCommit("n", 1, "", false), 1)
	c.Owner, c.LeaseUntil = "committer", until
	mustCommit(t, s, c)

	want := []string{
		fmt.Sprintf("[test.M m 1 0 send m/1/0 [123 34 105 34 58 48 125] <nil> <nil> 0 <nil> %d]", t0.Add(time.Second).UnixMicro()),
		fmt.Sprintf("[test.M m 1 1 send m/1/1 <nil> <nil> <nil> 0 <nil> %d]", t0.Add(time.Second).UnixMicro()),
		fmt.Sprintf("[test.M m 1 2 send m/1/2 [] <nil> <nil> 0 <nil> %d]", t0.Add(time.Second).UnixMicro()),
		fmt.Sprintf("[test.M n 1 0 send n/1/0 [123 34 105 34 58 48 125] committer %d 1 <nil> %d]", until.UnixMicro(), t0.Add(time.Second).UnixMicro()),
	}
	if got := tableRows(t, s, allEffects); !reflect.DeepEqual(got, want) {
		t.Errorf("outbox rows:\n got %q\nwant %q", got, want)
	}
	got, err := s.ClaimEffects(context.Background(), "test.M", "w", t0, 2*time.Hour, 10)
	if err != nil || len(got) != 3 {
		t.Fatalf("claimed %+v, %v", got, err)
	}
	if string(got[0].Data) != `{"i":0}` || got[1].Data != nil || got[2].Data == nil || len(got[2].Data) != 0 {
		t.Errorf("claimed data %q, %q, %q; want {\"i\":0}, nil, empty", got[0].Data, got[1].Data, got[2].Data)
	}
	// The committer's lease ends at until, to the microsecond: still held at until, not
	// after it.
	if got := claimIDs(t, s, "w", until.Truncate(time.Microsecond), 10); len(got) != 0 {
		t.Errorf("claimed at the end of the committer's lease: %v", got)
	}
	if got := claimIDs(t, s, "w", until.Add(time.Microsecond), 10); !reflect.DeepEqual(got, []string{"n/1/0#2"}) {
		t.Errorf("claimed after the committer's lease: %v", got)
	}
}

// A claim orders by the entry's time across instances, not by instance.
func TestClaimOrder(t *testing.T) {
	s := openStore(t, tempPath(t))
	for _, id := range []string{"z", "a"} {
		mustCommit(t, s, withEffects(testCommit(id, 1, "", false), 1))
	}
	mustCommit(t, s, withEffects(testCommit("z", 2, "", false), 2))
	late := withEffects(testCommit("b", 1, "", false), 1)
	late.Entry.At = t0.Add(time.Hour)
	mustCommit(t, s, late)
	early := withEffects(testCommit("y", 1, "", false), 1)
	early.Entry.At = t0.Add(-time.Hour)
	mustCommit(t, s, early)
	want := []string{"y/1/0#1", "a/1/0#1", "z/1/0#1", "z/2/0#1", "z/2/1#1", "b/1/0#1"}
	if got := claimIDs(t, s, "w", t0, 10); !reflect.DeepEqual(got, want) {
		t.Errorf("claimed %v, want %v", got, want)
	}
}

// No refused commit writes effects, deadlines or counters, nor one that fails part way.
func TestRefusedCommitWritesNothing(t *testing.T) {
	ctx := context.Background()
	s := openStore(t, tempPath(t))
	c := withEffects(testCommit("m", 1, "k1", false), 1)
	c.Rearm, c.Deadlines = true, []fsmrt.Deadline{{Name: "warn", At: t0, State: "b", Level: 1}, {Name: "expiry", At: t0.Add(time.Hour), State: "b", Event: "expire"}}
	c.Counters = []fsmrt.CounterValue{{Name: "failures", State: "b", Value: 1}}
	mustCommit(t, s, c)
	effects, deadlines, counters := tableRows(t, s, allEffects), tableRows(t, s, allDeadlines), tableRows(t, s, allCounters)
	before := mustLoad(t, s, "m")
	// next returns the commit of entry 2 of m, which would write effects, rearm, handle
	// the warning and replace the counters.
	next := func() *fsmrt.Commit {
		c := withEffects(testCommit("m", 2, "", false), 2)
		c.Rearm, c.Deadlines, c.Fired = true, []fsmrt.Deadline{{Name: "other", At: t0, State: "a"}}, "warn"
		c.Counters = []fsmrt.CounterValue{{Name: "failures", State: "b", Value: 2}, {Name: "total", Value: 3}}
		return c
	}
	mustExec(t, s, `CREATE TRIGGER fail_effect BEFORE INSERT ON fsmgen_effects WHEN NEW.name = 'boom'
		BEGIN SELECT RAISE(ABORT, 'boom'); END`)
	mustExec(t, s, `CREATE TRIGGER fail_counter BEFORE INSERT ON fsmgen_counters WHEN NEW.name = 'boom'
		BEGIN SELECT RAISE(ABORT, 'boom'); END`)
	for name, tc := range map[string]struct {
		change func(*fsmrt.Commit)
		want   error
	}{
		"stale version":  {func(c *fsmrt.Commit) { c.Version, c.Entry.Seq = 0, 1 }, fsmrt.ErrStoreConflict},
		"key used":       {func(c *fsmrt.Commit) { c.Entry.Key = "k1" }, fsmrt.ErrStoreConflict},
		"other spec":     {func(c *fsmrt.Commit) { c.Spec = "sha256:other" }, fsmrt.ErrSpecMismatch},
		"no deadline":    {func(c *fsmrt.Commit) { c.Fired = "escalate" }, fsmrt.ErrStoreConflict},
		"invalid":        {func(c *fsmrt.Commit) { c.Effects[1].Key = "" }, fsmrt.ErrInvalidCommit},
		"counter twice":  {func(c *fsmrt.Commit) { c.Counters[1] = c.Counters[0] }, fsmrt.ErrInvalidCommit},
		"failed write":   {func(c *fsmrt.Commit) { c.Effects[1].Name = "boom" }, nil},
		"failed counter": {func(c *fsmrt.Commit) { c.Counters[1].Name = "boom" }, nil},
	} {
		c := next()
		tc.change(c)
		err := s.Commit(ctx, c)
		if tc.want != nil && !errors.Is(err, tc.want) || tc.want == nil && (err == nil || refusal(err) || !strings.Contains(err.Error(), "boom")) {
			t.Errorf("%s: %v, want %v", name, err, tc.want)
		}
		if got := tableRows(t, s, allEffects); !reflect.DeepEqual(got, effects) {
			t.Errorf("%s: outbox %q, was %q", name, got, effects)
		}
		if got := tableRows(t, s, allDeadlines); !reflect.DeepEqual(got, deadlines) {
			t.Errorf("%s: deadlines %q, was %q", name, got, deadlines)
		}
		if got := tableRows(t, s, allCounters); !reflect.DeepEqual(got, counters) {
			t.Errorf("%s: counters %q, was %q", name, got, counters)
		}
		if l := mustLoad(t, s, "m"); !reflect.DeepEqual(l, before) {
			t.Errorf("%s: instance %+v, was %+v", name, l, before)
		}
	}
	mustCommit(t, s, next())
	if got := dueNames(t, s, "w", t0); !reflect.DeepEqual(got, []string{"m/other"}) {
		t.Errorf("after the commit that handled the warning and rearmed: %v", got)
	}
	if got, want := tableRows(t, s, allCounters), []string{"[test.M m failures b 2]", "[test.M m total  3]"}; !reflect.DeepEqual(got, want) {
		t.Errorf("counters after the commit: %q, want %q", got, want)
	}
}

// A commit that handles a deadline records it handled, at the time of its entry: it
// stays, lease and all, visible to Find, but is never claimed again, and handling it
// again is a conflict. A commit that also rearms replaces them all, leases dropped.
func TestFiredDeadlines(t *testing.T) {
	ctx := context.Background()
	s := openStore(t, tempPath(t))
	c := testCommit("m", 1, "", false)
	c.Rearm, c.Deadlines = true, []fsmrt.Deadline{
		{Name: "warn", At: t0, State: "b", Level: 1},
		{Name: "escalate", At: t0.Add(time.Minute), State: "b", Level: 2},
		{Name: "expiry", At: t0.Add(time.Hour), State: "b", Event: "expire"},
	}
	mustCommit(t, s, c)
	if got := dueNames(t, s, "w", t0.Add(time.Minute)); !reflect.DeepEqual(got, []string{"m/warn", "m/escalate"}) {
		t.Fatalf("due: %v", got)
	}
	c = testCommit("m", 2, "", false)
	c.Fired = "warn"
	mustCommit(t, s, c)
	want := []string{fmt.Sprintf("[warn w %d]", c.Entry.At.UnixMicro()), "[escalate w <nil>]", "[expiry <nil> <nil>]"}
	if got := tableRows(t, s, `SELECT name, owner, handled_at FROM fsmgen_deadlines ORDER BY at`); !reflect.DeepEqual(got, want) {
		t.Errorf("after handling the warning: %v, want %v", got, want)
	}
	// Never claimed again, once every lease ran out; Find still sees it.
	if got := dueNames(t, s, "w2", t0.Add(2*time.Hour)); !reflect.DeepEqual(got, []string{"m/escalate", "m/expiry"}) {
		t.Errorf("due after the leases: %v", got)
	}
	if got, err := s.Find(ctx, fsmrt.Query{Machine: "test.M", Deadline: "warn", Due: t0}); err != nil || len(got) != 1 || got[0].ID != "m" {
		t.Errorf("find the handled warning: %+v, %v", got, err)
	}
	// Handling it again is a conflict that changes nothing.
	rows := tableRows(t, s, allDeadlines)
	c = testCommit("m", 3, "", false)
	c.Fired = "warn"
	var ce *fsmrt.ConflictError
	if err := s.Commit(ctx, c); !errors.As(err, &ce) || ce.Deadline != "warn" || ce.Version != 2 || ce.Stored != 2 {
		t.Errorf("handling the warning again: %v", err)
	}
	if got := tableRows(t, s, allDeadlines); !reflect.DeepEqual(got, rows) {
		t.Errorf("a refused commit changed the deadlines: %q, was %q", got, rows)
	}
	c = testCommit("m", 3, "", false)
	c.Fired, c.Rearm = "escalate", true
	c.Deadlines = []fsmrt.Deadline{{Name: "escalate", At: t0, State: "a", Level: 2}}
	mustCommit(t, s, c)
	if got := tableRows(t, s, `SELECT name, owner, handled_at FROM fsmgen_deadlines`); !reflect.DeepEqual(got, []string{"[escalate <nil> <nil>]"}) {
		t.Errorf("after handling and rearming: %v", got)
	}
	if got := dueNames(t, s, "w2", t0); !reflect.DeepEqual(got, []string{"m/escalate"}) {
		t.Errorf("after handling and rearming: %v", got)
	}
}

// A deadline is due at its time, to the microsecond, and its lease holds until its end.
func TestDeadlineBoundaries(t *testing.T) {
	s := openStore(t, tempPath(t))
	at := t0.Add(1500 * time.Nanosecond) // kept as t0 + 1 µs
	c := testCommit("m", 1, "", false)
	c.Rearm, c.Deadlines = true, []fsmrt.Deadline{{Name: "expiry", At: at, State: "b", Event: "expire", Level: 0}}
	mustCommit(t, s, c)
	if got := dueNames(t, s, "w", at.Truncate(time.Microsecond).Add(-time.Nanosecond)); len(got) != 0 {
		t.Errorf("due before its time: %v", got)
	}
	got, err := s.ClaimDeadlines(context.Background(), "test.M", "w", at.Truncate(time.Microsecond), time.Minute, 1)
	want := []fsmrt.DueDeadline{{Machine: "test.M", ID: "m", Deadline: fsmrt.Deadline{Name: "expiry", At: at.Truncate(time.Microsecond), State: "b", Event: "expire"}}}
	if err != nil || len(got) != 1 || !got[0].At.Equal(want[0].At) {
		t.Fatalf("due at its time: %+v, %v", got, err)
	}
	got[0].At = want[0].At
	if !reflect.DeepEqual(got, want) {
		t.Errorf("claimed %+v, want %+v", got, want)
	}
	end := at.Truncate(time.Microsecond).Add(time.Minute)
	if got := dueNames(t, s, "w2", end); len(got) != 0 {
		t.Errorf("claimed at the end of the lease: %v", got)
	}
	if got := dueNames(t, s, "w2", end.Add(time.Microsecond)); !reflect.DeepEqual(got, []string{"m/expiry"}) {
		t.Errorf("claimed after the lease: %v", got)
	}
}

func TestCompleteEffects(t *testing.T) {
	ctx := context.Background()
	s := openStore(t, tempPath(t))
	mustCommit(t, s, withEffects(testCommit("m", 1, "", false), 2))
	first := fsmrt.EffectID{Machine: "test.M", ID: "m", Seq: 1, Index: 0}
	if err := s.CompleteEffects(ctx, []fsmrt.EffectID{first}, t0); err != nil {
		t.Fatal(err)
	}
	// Again later, with unknown ids: the first time stays, the rest is passed over.
	unknown := []fsmrt.EffectID{first, {Machine: "test.M", ID: "m", Seq: 1, Index: 7}, {Machine: "other", ID: "m", Seq: 1}}
	if err := s.CompleteEffects(ctx, unknown, t0.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if err := s.CompleteEffects(ctx, nil, t0); err != nil {
		t.Errorf("completing none: %v", err)
	}
	want := []string{fmt.Sprintf("[0 %d]", t0.UnixMicro()), "[1 <nil>]"}
	if got := tableRows(t, s, `SELECT idx, delivered_at FROM fsmgen_effects ORDER BY idx`); !reflect.DeepEqual(got, want) {
		t.Errorf("delivered: %v, want %v", got, want)
	}
	if got := claimIDs(t, s, "w", t0, 10); !reflect.DeepEqual(got, []string{"m/1/1#1"}) {
		t.Errorf("claimed %v", got)
	}
}

// A claim that fails, on a corrupt row or a context done, leases nothing.
func TestClaimFails(t *testing.T) {
	ctx := context.Background()
	s := openStore(t, tempPath(t))
	c := withEffects(testCommit("m", 1, "", false), 2)
	c.Rearm, c.Deadlines = true, []fsmrt.Deadline{{Name: "warn", At: t0, State: "b", Level: 1}, {Name: "expiry", At: t0, State: "b"}}
	mustCommit(t, s, c)
	effects, deadlines := tableRows(t, s, allEffects), tableRows(t, s, allDeadlines)

	mustExec(t, s, `UPDATE fsmgen_effects SET attempts = 'many' WHERE idx = 1`)
	mustExec(t, s, `UPDATE fsmgen_deadlines SET level = 'high' WHERE name = 'warn'`)
	if got, err := s.ClaimEffects(ctx, "test.M", "w", t0, time.Minute, 10); !errors.Is(err, ErrCorrupt) || got != nil {
		t.Errorf("claiming a corrupt effect: %+v, %v, want ErrCorrupt", got, err)
	}
	if got, err := s.ClaimDeadlines(ctx, "test.M", "w", t0, time.Minute, 10); !errors.Is(err, ErrCorrupt) || got != nil {
		t.Errorf("claiming a corrupt deadline: %+v, %v, want ErrCorrupt", got, err)
	}
	mustExec(t, s, `UPDATE fsmgen_effects SET attempts = 0`)
	mustExec(t, s, `UPDATE fsmgen_deadlines SET level = 1 WHERE name = 'warn'`)
	if got := tableRows(t, s, allEffects); !reflect.DeepEqual(got, effects) {
		t.Errorf("a failed claim changed the outbox: %q, was %q", got, effects)
	}
	if got := tableRows(t, s, allDeadlines); !reflect.DeepEqual(got, deadlines) {
		t.Errorf("a failed claim changed the deadlines: %q, was %q", got, deadlines)
	}

	done, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := s.ClaimEffects(done, "test.M", "w", t0, time.Minute, 10); err == nil {
		t.Error("a claim of effects with a context done succeeded")
	}
	if _, err := s.ClaimDeadlines(done, "test.M", "w", t0, time.Minute, 10); err == nil {
		t.Error("a claim of deadlines with a context done succeeded")
	}
	if err := s.CompleteEffects(done, []fsmrt.EffectID{{Machine: "test.M", ID: "m", Seq: 1}}, t0); err == nil {
		t.Error("completing with a context done succeeded")
	}
	if got := claimIDs(t, s, "w", t0, 10); !reflect.DeepEqual(got, []string{"m/1/0#1", "m/1/1#1"}) {
		t.Errorf("after failed claims: %v", got)
	}
	if got := dueNames(t, s, "w", t0); !reflect.DeepEqual(got, []string{"m/expiry", "m/warn"}) {
		t.Errorf("after failed claims: %v", got)
	}
	// A claim of none, or by a limit below one, reads nothing.
	if got, err := s.ClaimEffects(ctx, "test.M", "w", t0, time.Minute, -1); err != nil || got != nil {
		t.Errorf("a claim of -1: %+v, %v", got, err)
	}
}

// The claims walk their index in the order they hand rows out, with no sort.
func TestClaimQueryPlans(t *testing.T) {
	s := openStore(t, tempPath(t))
	for _, tc := range []struct {
		query, index string
		args         []any
	}{
		{selectClaimableEffects, "fsmgen_effects_pending", []any{"m", 1, 10}},
		{selectDueDeadlines, "fsmgen_deadlines_due", []any{"m", 1, 1, 10}},
	} {
		plan := strings.Join(tableRows(t, s, `EXPLAIN QUERY PLAN `+tc.query, tc.args...), "\n")
		if !strings.Contains(plan, "USING INDEX "+tc.index) || strings.Contains(plan, "TEMP B-TREE") {
			t.Errorf("plan of the claim on %s:\n%s", tc.index, plan)
		}
	}
}

// Two Stores on one file, as two processes would have, claim at once: no effect or
// deadline goes to both.
func TestTwoStoresClaim(t *testing.T) {
	path := tempPath(t)
	a, b := openStore(t, path), openStore(t, path)
	const instances = 20
	for i := range instances {
		c := withEffects(testCommit(fmt.Sprint("m", i), 1, "", false), 3)
		c.Rearm, c.Deadlines = true, []fsmrt.Deadline{{Name: "warn", At: t0, State: "b", Level: 1}, {Name: "expiry", At: t0, State: "b"}}
		mustCommit(t, a, c)
	}
	var mu sync.Mutex
	seen := map[string]string{}
	var wg sync.WaitGroup
	for w := range 6 {
		s := []*Store{a, b}[w%2]
		wg.Go(func() {
			owner := fmt.Sprint("w", w)
			for {
				es, err := s.ClaimEffects(context.Background(), "test.M", owner, t0, time.Hour, 2)
				if err != nil {
					t.Error(err)
					return
				}
				ds, err := s.ClaimDeadlines(context.Background(), "test.M", owner, t0, time.Hour, 2)
				if err != nil {
					t.Error(err)
					return
				}
				if len(es)+len(ds) == 0 {
					return
				}
				var got []string
				for _, e := range es {
					got = append(got, fmt.Sprintf("effect %s/%d/%d", e.ID, e.Seq, e.Index))
				}
				for _, d := range ds {
					got = append(got, "deadline "+d.ID+"/"+d.Name)
				}
				mu.Lock()
				for _, k := range got {
					if prev, dup := seen[k]; dup {
						t.Errorf("%s claimed by %s and %s", k, prev, owner)
					}
					seen[k] = owner
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if len(seen) != instances*5 {
		t.Errorf("%d claimed, want %d", len(seen), instances*5)
	}
}

// An effect needs its entry, a deadline and a counter their instance.
func TestForeignKeys(t *testing.T) {
	s := openStore(t, tempPath(t))
	for _, orphan := range []string{
		`INSERT INTO fsmgen_effects (machine, id, seq, idx, name, idem_key, committed_at) VALUES ('test.M', 'm', 1, 0, 'send', 'k', 0)`,
		`INSERT INTO fsmgen_deadlines (machine, id, name, at, state, event, level) VALUES ('test.M', 'm', 'expiry', 0, 'b', '', 0)`,
		`INSERT INTO fsmgen_counters (machine, id, name, value) VALUES ('test.M', 'm', 'failures', 1)`,
	} {
		if _, err := s.db.Exec(orphan); err == nil || !strings.Contains(err.Error(), "FOREIGN KEY") {
			t.Errorf("%s: %v, want a foreign key error", orphan, err)
		}
	}
}
