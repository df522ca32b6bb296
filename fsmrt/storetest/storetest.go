// Package storetest is the conformance suite of fsmrt.Store: every store passes it, the
// runtime's MemoryStore and the SQLite and PostgreSQL adapters alike, and so can a third
// party's. Call Run from a test of the adapter's package:
//
//	func TestConformance(t *testing.T) {
//		storetest.Run(t, func(t *testing.T) fsmrt.Store { return openStore(t) })
//	}
//
// open may return a new store for every subtest or the same one: the suite names the
// instances of each subtest apart (machine "storetest.<subtest>", a random run prefix in
// every ID), so that a shared database holds them side by side.
package storetest

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fsmgen/fsmgen/fsmrt"
)

// Run runs every conformance test against the stores open returns, each as a subtest.
// The tests of the optional interfaces (fsmrt.PendingReader, IndexReader, StateCounter,
// EffectErrorRecorder, Waker) are skipped, saying so, for a store that does not implement them.
func Run(t *testing.T, open func(t *testing.T) fsmrt.Store) { run(t, open, false) }

// RunComplete runs every conformance test as Run does, and fails those of an optional
// interface the store does not implement: the suite of a store that means to have them
// all (the memory, SQLite and PostgreSQL stores) skips nothing.
func RunComplete(t *testing.T, open func(t *testing.T) fsmrt.Store) { run(t, open, true) }

func run(t *testing.T, open func(t *testing.T) fsmrt.Store, complete bool) {
	id := randomID()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.test(t, &suite{Store: open(t), machine: "storetest." + c.name, run: id, complete: complete})
		})
	}
}

// suite is what one subtest works on.
type suite struct {
	fsmrt.Store
	machine  string
	run      string
	complete bool // RunComplete: a missing optional interface fails the test
}

// optional returns the suite's store as the optional interface T, or ends the subtest:
// skipped under Run, failed under RunComplete.
func optional[T any](t *testing.T, s *suite, what string) T {
	t.Helper()
	x, ok := s.Store.(T)
	if !ok {
		if s.complete {
			t.Fatalf("the store does not implement %s", what)
		}
		t.Skipf("the store does not implement %s", what)
	}
	return x
}

// id names an instance of the subtest, apart from those of earlier runs on the same store.
func (s *suite) id(name string) string { return s.run + "-" + name }

var cases = []struct {
	name string
	test func(*testing.T, *suite)
}{
	{"Empty", testEmpty},
	{"CommitAndLoad", testCommitAndLoad},
	{"Snapshots", testSnapshots},
	{"Log", testLog},
	{"StaleVersion", testStaleVersion},
	{"Race", testRace},
	{"IdempotencyKeys", testIdempotencyKeys},
	{"SpecMismatch", testSpecMismatch},
	{"MigratedCommit", testMigratedCommit},
	{"InvalidCommit", testInvalidCommit},
	{"Isolation", testIsolation},
	{"Bytes", testBytes},
	{"Cancelled", testCancelled},
	{"Effects", testEffects},
	{"EffectsLeasedAtCommit", testEffectsLeasedAtCommit},
	{"EffectsRace", testEffectsRace},
	{"Deadlines", testDeadlines},
	{"DeadlinesRace", testDeadlinesRace},
	{"DelayDeadlines", testDelayDeadlines},
	{"Find", testFind},
	{"Pending", testPending},
	{"IndexRows", testIndexRows},
	{"CountByState", testCountByState},
	{"EffectErrors", testEffectErrors},
	{"FindIdleAndEffects", testFindIdleAndEffects},
	{"Waker", testWaker},
}

const spec = "sha256:0123456789abcdef"

// at is the time of entry seq: microseconds apart, in a zone other than UTC.
func at(seq int64) time.Time {
	return time.Date(2026, 11, 24, 10, 0, 0, 0, time.FixedZone("CET", 3600)).Add(time.Duration(seq)*time.Second + 1500*time.Nanosecond)
}

// entry returns entry seq of a machine going a -> b -> a ...
func entry(seq int64, key string) fsmrt.Entry {
	from, to := "a", "b"
	if seq%2 == 0 {
		from, to = "b", "a"
	}
	return fsmrt.Entry{
		Seq: seq, Kind: fsmrt.KindTransition, Event: "go_" + to, From: from, To: to, At: at(seq), Key: key,
		Data: fmt.Appendf(nil, `{"seq":%d,"from":%q,"to":%q}`, seq, from, to),
	}
}

// commit returns the commit of entry seq of instance id, with a snapshot when snap.
func (s *suite) commit(id string, seq int64, key string, snap bool) *fsmrt.Commit {
	e := entry(seq, key)
	c := &fsmrt.Commit{Machine: s.machine, ID: id, Spec: spec, Version: seq - 1, State: e.To, Entry: e}
	if snap {
		c.Snapshot = fmt.Appendf(nil, `{"seq":%d,"state":%q}`, seq, e.To)
	}
	return c
}

// commitAll commits entries 1 to n of id, a snapshot after each entry in snaps.
func (s *suite) commitAll(t *testing.T, id string, n int64, snaps ...int64) {
	t.Helper()
	for seq := int64(1); seq <= n; seq++ {
		snap := false
		for _, k := range snaps {
			snap = snap || k == seq
		}
		if err := s.Commit(context.Background(), s.commit(id, seq, "", snap)); err != nil {
			t.Fatalf("commit %d of %s: %v", seq, id, err)
		}
	}
}

// load loads id and fails the test on an error.
func (s *suite) load(t *testing.T, id string) fsmrt.Loaded {
	t.Helper()
	l, err := s.Load(context.Background(), s.machine, id)
	if err != nil {
		t.Fatalf("load %s: %v", id, err)
	}
	return l
}

// checkEntries compares entries with want, At to the microsecond.
func checkEntries(t *testing.T, what string, got, want []fsmrt.Entry) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d entries, want %d: %+v", what, len(got), len(want), got)
	}
	for i := range got {
		g, w := got[i], want[i]
		if !g.At.Equal(w.At.Truncate(time.Microsecond)) {
			t.Errorf("%s: entry %d at %v, want %v", what, w.Seq, g.At, w.At.Truncate(time.Microsecond))
		}
		g.At, w.At = time.Time{}, time.Time{}
		if !reflect.DeepEqual(g, w) {
			t.Errorf("%s: entry %d:\n got %+v (data %s)\nwant %+v (data %s)", what, w.Seq, g, g.Data, w, w.Data)
		}
	}
}

// entries returns entries from to to of a machine committed without keys.
func entries(from, to int64) []fsmrt.Entry {
	var out []fsmrt.Entry
	for seq := from; seq <= to; seq++ {
		out = append(out, entry(seq, ""))
	}
	return out
}

// unchanged checks that instance id still loads and logs as before.
func (s *suite) unchanged(t *testing.T, id string, before fsmrt.Loaded, log []fsmrt.Entry) {
	t.Helper()
	after := s.load(t, id)
	if after.Version != before.Version || after.State != before.State || after.Spec != before.Spec ||
		after.SnapshotSeq != before.SnapshotSeq || !bytes.Equal(after.Snapshot, before.Snapshot) {
		t.Errorf("a refused commit changed %s: %+v, was %+v", id, after, before)
	}
	checkEntries(t, "entries after a refused commit", after.Entries, before.Entries)
	got, err := s.Log(context.Background(), s.machine, id, 0)
	if err != nil {
		t.Fatal(err)
	}
	checkEntries(t, "log after a refused commit", got, log)
}

func testEmpty(t *testing.T, s *suite) {
	ctx := context.Background()
	if l := s.load(t, s.id("none")); !reflect.DeepEqual(l, fsmrt.Loaded{}) {
		t.Errorf("an instance never committed loads as %+v, want the zero Loaded", l)
	}
	if log, err := s.Log(ctx, s.machine, s.id("none"), 0); err != nil || len(log) != 0 {
		t.Errorf("log of an instance never committed: %+v, %v", log, err)
	}
	if e, ok, err := s.FindKey(ctx, s.machine, s.id("none"), "k"); err != nil || ok || !reflect.DeepEqual(e, fsmrt.Entry{}) {
		t.Errorf("key of an instance never committed: %+v, %v, %v", e, ok, err)
	}
}

func testCommitAndLoad(t *testing.T, s *suite) {
	id := s.id("m")
	s.commitAll(t, id, 1)
	l := s.load(t, id)
	if l.Version != 1 || l.State != "b" || l.Spec != spec || l.Snapshot != nil || l.SnapshotSeq != 0 {
		t.Errorf("after one commit: %+v", l)
	}
	checkEntries(t, "entries after one commit", l.Entries, entries(1, 1))
	if err := s.Commit(context.Background(), s.commit(id, 2, "", false)); err != nil {
		t.Fatal(err)
	}
	l = s.load(t, id)
	if l.Version != 2 || l.State != "a" {
		t.Errorf("after two commits: version %d, state %q", l.Version, l.State)
	}
	checkEntries(t, "entries after two commits", l.Entries, entries(1, 2))
}

func testSnapshots(t *testing.T, s *suite) {
	id := s.id("m")
	s.commitAll(t, id, 5, 2, 4)
	l := s.load(t, id)
	if l.Version != 5 || l.State != "b" || l.SnapshotSeq != 4 || string(l.Snapshot) != `{"seq":4,"state":"a"}` {
		t.Errorf("after 5 commits, snapshots at 2 and 4: version %d, state %q, snapshot %d %s", l.Version, l.State, l.SnapshotSeq, l.Snapshot)
	}
	checkEntries(t, "entries after the snapshot", l.Entries, entries(5, 5))
	// A snapshot at the last entry leaves no entries after it.
	if err := s.Commit(context.Background(), s.commit(id, 6, "", true)); err != nil {
		t.Fatal(err)
	}
	l = s.load(t, id)
	if l.Version != 6 || l.SnapshotSeq != 6 || len(l.Entries) != 0 {
		t.Errorf("after a snapshot at the last entry: version %d, snapshot %d, %d entries", l.Version, l.SnapshotSeq, len(l.Entries))
	}
}

func testLog(t *testing.T, s *suite) {
	ctx := context.Background()
	id := s.id("m")
	s.commitAll(t, id, 7, 3)
	for _, after := range []int64{0, 1, 3, 6, 7, 9, -1} {
		log, err := s.Log(ctx, s.machine, id, after)
		if err != nil {
			t.Fatal(err)
		}
		checkEntries(t, fmt.Sprintf("log after %d", after), log, entries(max(after, 0)+1, 7))
	}
}

func testStaleVersion(t *testing.T, s *suite) {
	ctx := context.Background()
	id := s.id("m")
	s.commitAll(t, id, 3, 2)
	before, log := s.load(t, id), entries(1, 3)
	for _, version := range []int64{0, 1, 2, 4, 10} {
		c := s.commit(id, version+1, "k", true)
		err := s.Commit(ctx, c)
		var ce *fsmrt.ConflictError
		if !errors.Is(err, fsmrt.ErrStoreConflict) || !errors.As(err, &ce) {
			t.Errorf("commit at version %d over version 3: %v, want a ConflictError", version, err)
			continue
		}
		if ce.Machine != s.machine || ce.ID != id || ce.Version != version || ce.Stored != 3 || ce.Key != "" {
			t.Errorf("commit at version %d over version 3: %+v", version, ce)
		}
		s.unchanged(t, id, before, log)
	}
	// A new instance is at version 0.
	err := s.Commit(ctx, s.commit(s.id("new"), 2, "", false))
	var ce *fsmrt.ConflictError
	if !errors.As(err, &ce) || ce.Stored != 0 || ce.Version != 1 {
		t.Errorf("commit at version 1 of a new instance: %v", err)
	}
	if l := s.load(t, s.id("new")); l.Version != 0 {
		t.Errorf("a refused first commit stored %+v", l)
	}
}

func testRace(t *testing.T, s *suite) {
	ctx := context.Background()
	const writers, rounds = 8, 5
	id := s.id("m")
	for round := int64(1); round <= rounds; round++ {
		var wg sync.WaitGroup
		errs := make([]error, writers)
		for w := range writers {
			wg.Go(func() {
				c := s.commit(id, round, "", w%2 == 0)
				c.Entry.Data = fmt.Appendf(nil, `{"seq":%d,"writer":%d}`, round, w)
				errs[w] = s.Commit(ctx, c)
			})
		}
		wg.Wait()
		won := -1
		for w, err := range errs {
			switch {
			case err == nil && won >= 0:
				t.Fatalf("round %d: writers %d and %d both committed version %d", round, won, w, round)
			case err == nil:
				won = w
			case !errors.Is(err, fsmrt.ErrStoreConflict):
				t.Fatalf("round %d: writer %d: %v, want a conflict", round, w, err)
			}
		}
		if won < 0 {
			t.Fatalf("round %d: no writer committed", round)
		}
		log, err := s.Log(ctx, s.machine, id, round-1)
		if err != nil {
			t.Fatal(err)
		}
		if len(log) != 1 || string(log[0].Data) != fmt.Sprintf(`{"seq":%d,"writer":%d}`, round, won) {
			t.Fatalf("round %d: writer %d won, the log has %+v", round, won, log)
		}
	}
	if l := s.load(t, id); l.Version != rounds {
		t.Errorf("after %d rounds: version %d", rounds, l.Version)
	}
}

func testIdempotencyKeys(t *testing.T, s *suite) {
	ctx := context.Background()
	id := s.id("m")
	for seq, key := range []string{"", "k1", "", "k2"} {
		if err := s.Commit(ctx, s.commit(id, int64(seq)+1, key, false)); err != nil {
			t.Fatal(err)
		}
	}
	for key, seq := range map[string]int64{"k1": 2, "k2": 4} {
		e, ok, err := s.FindKey(ctx, s.machine, id, key)
		if err != nil || !ok {
			t.Fatalf("key %s: %v, %v", key, ok, err)
		}
		checkEntries(t, "entry of key "+key, []fsmrt.Entry{e}, []fsmrt.Entry{entry(seq, key)})
	}
	if _, ok, err := s.FindKey(ctx, s.machine, id, "k3"); ok || err != nil {
		t.Errorf("an unused key: %v, %v", ok, err)
	}
	if _, ok, err := s.FindKey(ctx, s.machine, id, ""); ok || err != nil {
		t.Errorf("the empty key: %v, %v", ok, err)
	}
	// A key used again, at the right version, is a conflict that changes nothing.
	before := s.load(t, id)
	log, err := s.Log(ctx, s.machine, id, 0)
	if err != nil {
		t.Fatal(err)
	}
	err = s.Commit(ctx, s.commit(id, 5, "k1", true))
	var ce *fsmrt.ConflictError
	if !errors.As(err, &ce) || !errors.Is(err, fsmrt.ErrStoreConflict) || ce.Key != "k1" || ce.Version != 4 || ce.Stored != 4 {
		t.Errorf("key k1 used again: %v (%+v)", err, ce)
	}
	s.unchanged(t, id, before, log)
	// Keys belong to their instance.
	if err := s.Commit(ctx, s.commit(s.id("other"), 1, "k1", false)); err != nil {
		t.Errorf("key k1 on another instance: %v", err)
	}
	if _, ok, _ := s.FindKey(ctx, s.machine, s.id("third"), "k1"); ok {
		t.Error("key k1 found on an instance that never used it")
	}
}

func testSpecMismatch(t *testing.T, s *suite) {
	ctx := context.Background()
	id := s.id("m")
	s.commitAll(t, id, 2, 1)
	before, log := s.load(t, id), entries(1, 2)
	c := s.commit(id, 3, "", true)
	c.Spec = "sha256:fedcba9876543210"
	err := s.Commit(ctx, c)
	var se *fsmrt.SpecMismatchError
	if !errors.Is(err, fsmrt.ErrSpecMismatch) || !errors.As(err, &se) || se.Stored != spec || se.Spec != c.Spec || se.ID != id || se.Machine != s.machine {
		t.Errorf("a commit under another spec: %v (%+v)", err, se)
	}
	s.unchanged(t, id, before, log)
}

func testMigratedCommit(t *testing.T, s *suite) {
	ctx := context.Background()
	const f2, f3 = "sha256:fedcba9876543210", "sha256:00112233445566ff"
	// Find and the claims see every instance of a machine: a machine of this run's own
	// keeps earlier runs on the same store out of the results.
	s = &suite{Store: s.Store, machine: s.machine + "." + s.run, run: s.run}
	id := s.id("m")
	c := s.commit(id, 1, "", false)
	c.Rearm, c.Deadlines = true, []fsmrt.Deadline{dl("warn", at(80), "", 1), dl("expiry", at(100), "expire", 0)}
	c.Counters = []fsmrt.CounterValue{{Name: "failures", State: "b", Value: 1}}
	if err := s.Commit(ctx, c); err != nil {
		t.Fatal(err)
	}
	// The machine migrates the instance from spec to f2: the commit is accepted, and the
	// instance is stored under f2 with its snapshot, deadlines and counters.
	c = s.commit(id, 2, "", true)
	c.Spec, c.Migrated = f2, spec
	c.Rearm, c.Deadlines = true, []fsmrt.Deadline{dl("escalate", at(150), "", 3)}
	c.Counters = []fsmrt.CounterValue{{Name: "attempts", Value: 2}}
	if err := s.Commit(ctx, c); err != nil {
		t.Fatalf("a commit that migrates the instance from its stored spec: %v", err)
	}
	l := s.load(t, id)
	if l.Version != 2 || l.Spec != f2 || l.State != "a" || l.SnapshotSeq != 2 || string(l.Snapshot) != `{"seq":2,"state":"a"}` || len(l.Entries) != 0 {
		t.Errorf("after the migration: %+v (snapshot %s)", l, l.Snapshot)
	}
	for name, c := range map[string]struct {
		q    fsmrt.Query
		want []string
	}{
		"the old warning":    {fsmrt.Query{Deadline: "warn", Due: at(1000)}, []string{}},
		"the old expiry":     {fsmrt.Query{Deadline: "expiry", Due: at(1000)}, []string{}},
		"the new deadline":   {fsmrt.Query{Deadline: "escalate", Due: at(150)}, []string{"m"}},
		"the old counter":    {fsmrt.Query{Counter: "failures", AtLeast: 1}, []string{}},
		"the new counter":    {fsmrt.Query{Counter: "attempts", AtLeast: 2}, []string{"m"}},
		"the state migrated": {fsmrt.Query{States: []string{"a"}}, []string{"m"}},
	} {
		if got := s.find(t, c.q); !reflect.DeepEqual(got, c.want) {
			t.Errorf("after the migration, %s: %v, want %v", name, got, c.want)
		}
	}
	if got, want := s.claimDue(t, "s1", at(1000)), []string{id + "/escalate@150::3"}; !reflect.DeepEqual(got, want) {
		t.Errorf("deadlines due after the migration: %v, want %v", got, want)
	}
	// The instance is under f2 from then on: a commit under f2 is accepted, one under the
	// old spec refused.
	c = s.commit(id, 3, "", false)
	c.Spec = f2
	if err := s.Commit(ctx, c); err != nil {
		t.Fatalf("a commit under the spec migrated to: %v", err)
	}
	before, log := s.load(t, id), entries(1, 3)
	err := s.Commit(ctx, s.commit(id, 4, "", true))
	var se *fsmrt.SpecMismatchError
	if !errors.Is(err, fsmrt.ErrSpecMismatch) || !errors.As(err, &se) || se.Stored != f2 || se.Spec != spec || se.ID != id || se.Machine != s.machine {
		t.Errorf("a commit under the spec migrated from: %v (%+v)", err, se)
	}
	s.unchanged(t, id, before, log)
	// A migration from a spec the instance is not stored under is refused, as is one from
	// the stored spec at another version.
	for name, specs := range map[string][2]string{
		"back to the old spec from a third": {spec, f3},
		"from the old spec, stored no more": {f3, spec},
	} {
		c = s.commit(id, 4, "", true)
		c.Spec, c.Migrated, c.Rearm = specs[0], specs[1], true
		err := s.Commit(ctx, c)
		se = nil
		if !errors.Is(err, fsmrt.ErrSpecMismatch) || !errors.As(err, &se) || se.Stored != f2 || se.Spec != c.Spec {
			t.Errorf("a migration %s: %v (%+v)", name, err, se)
		}
		s.unchanged(t, id, before, log)
	}
	for _, version := range []int64{0, 2, 4} {
		c = s.commit(id, version+1, "", true)
		c.Spec, c.Migrated, c.Rearm = f3, f2, true
		err := s.Commit(ctx, c)
		var ce *fsmrt.ConflictError
		if !errors.Is(err, fsmrt.ErrStoreConflict) || !errors.As(err, &ce) || ce.Version != version || ce.Stored != 3 {
			t.Errorf("a migration at version %d over version 3: %v (%+v)", version, err, ce)
		}
		s.unchanged(t, id, before, log)
	}
	// A migration without a snapshot is invalid.
	c = s.commit(id, 4, "", false)
	c.Spec, c.Migrated, c.Rearm = f3, f2, true
	if err := s.Commit(ctx, c); !errors.Is(err, fsmrt.ErrInvalidCommit) {
		t.Errorf("a migration without a snapshot: %v, want ErrInvalidCommit", err)
	}
	s.unchanged(t, id, before, log)
	// A new instance is stored under no other spec: its first commit may migrate.
	c = s.commit(s.id("new"), 1, "", true)
	c.Spec, c.Migrated, c.Rearm = f2, spec, true
	if err := s.Commit(ctx, c); err != nil {
		t.Errorf("a migration of a new instance: %v", err)
	}
	if l := s.load(t, s.id("new")); l.Version != 1 || l.Spec != f2 {
		t.Errorf("a new instance migrated: %+v", l)
	}
}

func testInvalidCommit(t *testing.T, s *suite) {
	ctx := context.Background()
	id := s.id("m")
	s.commitAll(t, id, 2)
	before, log := s.load(t, id), entries(1, 2)
	for name, change := range map[string]func(*fsmrt.Commit){
		"entry not next":   func(c *fsmrt.Commit) { c.Entry.Seq = 4 },
		"entry repeated":   func(c *fsmrt.Commit) { c.Entry.Seq = 2 },
		"empty machine":    func(c *fsmrt.Commit) { c.Machine = "" },
		"empty id":         func(c *fsmrt.Commit) { c.ID = "" },
		"empty state":      func(c *fsmrt.Commit) { c.State = "" },
		"empty kind":       func(c *fsmrt.Commit) { c.Entry.Kind = "" },
		"negative version": func(c *fsmrt.Commit) { c.Version, c.Entry.Seq = -1, 0 },
		"deadlines without rearming": func(c *fsmrt.Commit) {
			c.Deadlines = []fsmrt.Deadline{{Name: "warn", At: at(9)}}
		},
		"a deadline twice": func(c *fsmrt.Commit) {
			c.Rearm, c.Deadlines = true, []fsmrt.Deadline{{Name: "warn", At: at(9)}, {Name: "warn", At: at(10)}}
		},
		"a deadline without a time": func(c *fsmrt.Commit) {
			c.Rearm, c.Deadlines = true, []fsmrt.Deadline{{Name: "warn"}}
		},
		"an effect without a key": func(c *fsmrt.Commit) { c.Effects = []fsmrt.Effect{{Name: "send"}} },
		"a lease without an end": func(c *fsmrt.Commit) {
			c.Effects, c.Owner = []fsmrt.Effect{effect(id, 3, 0)}, "w"
		},
		"a counter twice": func(c *fsmrt.Commit) {
			c.Counters = []fsmrt.CounterValue{{Name: "n", Value: 1}, {Name: "n", Value: 2}}
		},
		"a counter without a name": func(c *fsmrt.Commit) { c.Counters = []fsmrt.CounterValue{{Value: 1}} },
	} {
		c := s.commit(id, 3, "", true)
		change(c)
		if err := s.Commit(ctx, c); !errors.Is(err, fsmrt.ErrInvalidCommit) {
			t.Errorf("%s: %v, want ErrInvalidCommit", name, err)
		}
	}
	s.unchanged(t, id, before, log)
}

func testIsolation(t *testing.T, s *suite) {
	ctx := context.Background()
	id := s.id("m")
	s.commitAll(t, id, 3, 2)
	other := &suite{Store: s.Store, machine: s.machine + ".other", run: s.run}
	if l := other.load(t, id); l.Version != 0 {
		t.Errorf("the same id under another machine: %+v", l)
	}
	other.commitAll(t, id, 1)
	s.commitAll(t, s.id("m2"), 2)
	if l := s.load(t, id); l.Version != 3 || l.SnapshotSeq != 2 || len(l.Entries) != 1 {
		t.Errorf("instance m after commits to others: %+v", l)
	}
	if l := other.load(t, id); l.Version != 1 || len(l.Entries) != 1 {
		t.Errorf("instance m of the other machine: %+v", l)
	}
	if log, _ := s.Log(ctx, s.machine, s.id("m2"), 0); len(log) != 2 {
		t.Errorf("instance m2: %d entries", len(log))
	}
}

func testBytes(t *testing.T, s *suite) {
	ctx := context.Background()
	id := s.id("m")
	// Kept as given: whitespace, key order, duplicate keys, escapes, non-ASCII, large.
	odd := []byte("{ \"z\" :1,\n\t\"a\":[ ],\"a\":\"\\u00e9\\\"é 漢\" , \"n\": null }")
	big := append(append([]byte(`{"pad":"`), bytes.Repeat([]byte("x"), 1<<20)...), `"}`...)
	c := s.commit(id, 1, "key with spaces, 'quotes' and é", false)
	c.Entry.Data, c.Snapshot = odd, big
	c.Entry.Event, c.State = "évent \"quoted\"", "state; DROP TABLE x"
	if err := s.Commit(ctx, c); err != nil {
		t.Fatal(err)
	}
	// The caller may reuse its buffers after Commit.
	odd[1], big[2] = 'X', 'X'
	l := s.load(t, id)
	if l.State != "state; DROP TABLE x" || !bytes.Equal(l.Snapshot, append(append([]byte(`{"pad":"`), bytes.Repeat([]byte("x"), 1<<20)...), `"}`...)) {
		t.Errorf("state %q, snapshot of %d bytes changed", l.State, len(l.Snapshot))
	}
	want := c.Entry
	want.Data = []byte("{ \"z\" :1,\n\t\"a\":[ ],\"a\":\"\\u00e9\\\"é 漢\" , \"n\": null }")
	if len(l.Entries) != 0 || l.SnapshotSeq != 1 {
		t.Errorf("a snapshot at the only entry: snapshot at %d, %d entries after it", l.SnapshotSeq, len(l.Entries))
	}
	log, err := s.Log(ctx, s.machine, id, 0)
	if err != nil {
		t.Fatal(err)
	}
	checkEntries(t, "odd entry", log, []fsmrt.Entry{want})
	if e, ok, err := s.FindKey(ctx, s.machine, id, c.Entry.Key); !ok || err != nil || !bytes.Equal(e.Data, want.Data) {
		t.Errorf("find key %q: %v, %v", c.Entry.Key, ok, err)
	}
	// What Load and Log returned is the caller's.
	l.Snapshot[0], log[0].Data[0] = 'X', 'X'
	if l := s.load(t, id); l.Snapshot[0] != '{' {
		t.Error("changing what Load returned changed the store")
	}
	if log, _ := s.Log(ctx, s.machine, id, 0); log[0].Data[0] != '{' {
		t.Error("changing what Log returned changed the store")
	}
	// Names and ids are kept as given too.
	weird := s.id(strings.Repeat("é/ '\"", 20))
	s.commitAll(t, weird, 1)
	if l := s.load(t, weird); l.Version != 1 {
		t.Errorf("an id with odd characters: %+v", l)
	}
}

func testCancelled(t *testing.T, s *suite) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	id := s.id("m")
	if err := s.Commit(ctx, s.commit(id, 1, "k", true)); err == nil {
		t.Error("a commit with a cancelled context succeeded")
	}
	if _, err := s.Load(ctx, s.machine, id); err == nil {
		t.Error("a load with a cancelled context succeeded")
	}
	if l := s.load(t, id); l.Version != 0 {
		t.Errorf("a commit with a cancelled context stored %+v", l)
	}
}

// randomID returns a random hex string that sets a run's instances apart.
func randomID() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// LogOnly returns a new MemoryStore that holds the event log of instance (machine, id) of
// src and no snapshot: a machine replayed from it is rebuilt from its log alone.
func LogOnly(ctx context.Context, src fsmrt.Store, machine, id string) (*fsmrt.MemoryStore, error) {
	l, err := src.Load(ctx, machine, id)
	if err != nil {
		return nil, err
	}
	log, err := src.Log(ctx, machine, id, 0)
	if err != nil {
		return nil, err
	}
	dst := fsmrt.NewMemoryStore()
	for _, e := range log {
		state := e.To
		c := &fsmrt.Commit{Machine: machine, ID: id, Spec: l.Spec, Version: e.Seq - 1, State: state, Entry: e}
		if err := dst.Commit(ctx, c); err != nil {
			return nil, err
		}
	}
	return dst, nil
}

// effect returns the index-th effect of entry seq of instance id.
func effect(id string, seq int64, index int) fsmrt.Effect {
	return fsmrt.Effect{Name: fmt.Sprint("send", index), Key: fmt.Sprintf("%s/%d/%d", id, seq, index), Data: fmt.Appendf(nil, `{"seq": %d, "i": %d}`, seq, index)}
}

// commitEffects commits entry seq of id with n effects, leased to owner until until when
// owner is set.
func (s *suite) commitEffects(t *testing.T, id string, seq int64, n int, owner string, until time.Time) {
	t.Helper()
	c := s.commit(id, seq, "", false)
	for i := range n {
		c.Effects = append(c.Effects, effect(id, seq, i))
	}
	c.Owner, c.LeaseUntil = owner, until
	if err := s.Commit(context.Background(), c); err != nil {
		t.Fatalf("commit %d of %s with %d effects: %v", seq, id, n, err)
	}
}

// claim claims effects and fails the test on an error.
func (s *suite) claim(t *testing.T, owner string, now time.Time, limit int) []fsmrt.PendingEffect {
	t.Helper()
	got, err := s.ClaimEffects(context.Background(), s.machine, owner, now, time.Minute, limit)
	if err != nil {
		t.Fatalf("claim effects: %v", err)
	}
	return got
}

// ids lists the effects as id/seq/index, with their attempts.
func ids(es []fsmrt.PendingEffect) []string {
	var out []string
	for _, e := range es {
		out = append(out, fmt.Sprintf("%s/%d/%d#%d", e.ID, e.Seq, e.Index, e.Attempts))
	}
	return out
}

func testEffects(t *testing.T, s *suite) {
	ctx := context.Background()
	a, b := s.id("a"), s.id("b")
	s.commitEffects(t, a, 1, 2, "", time.Time{})
	s.commitEffects(t, b, 1, 1, "", time.Time{})
	s.commitEffects(t, a, 2, 0, "", time.Time{})
	s.commitEffects(t, a, 3, 1, "", time.Time{})
	other := &suite{Store: s.Store, machine: s.machine + ".other", run: s.run}
	other.commitEffects(t, a, 1, 1, "", time.Time{})
	now := at(100)
	// Oldest commit first (a's entry 1 and b's entry 1 are at the same time: by id, then
	// position); the limit is honoured; the data comes back as given.
	got := s.claim(t, "w1", now, 3)
	want := []string{a + "/1/0#1", a + "/1/1#1", b + "/1/0#1"}
	if !reflect.DeepEqual(ids(got), want) {
		t.Fatalf("claimed %v, want %v", ids(got), want)
	}
	if e := got[1]; e.Machine != s.machine || e.Name != "send1" || e.Key != a+"/1/1" || string(e.Data) != `{"seq": 1, "i": 1}` {
		t.Errorf("claimed %+v (data %s)", e, e.Data)
	}
	// Leased: another claimer gets only what is left, until the lease runs out.
	if got := s.claim(t, "w2", now.Add(30*time.Second), 10); !reflect.DeepEqual(ids(got), []string{a + "/3/0#1"}) {
		t.Errorf("second claim %v", ids(got))
	}
	if got := s.claim(t, "w2", now.Add(59*time.Second), 10); len(got) != 0 {
		t.Errorf("claimed leased effects: %v", ids(got))
	}
	// Delivered effects are never claimed again; the others come back when their lease
	// has run out, counting the attempt.
	if err := s.CompleteEffects(ctx, []fsmrt.EffectID{{Machine: s.machine, ID: a, Seq: 1, Index: 0}}, now); err != nil {
		t.Fatal(err)
	}
	got = s.claim(t, "w3", now.Add(2*time.Minute), 10)
	if want := []string{a + "/1/1#2", b + "/1/0#2", a + "/3/0#2"}; !reflect.DeepEqual(ids(got), want) {
		t.Errorf("after the leases ran out: %v, want %v", ids(got), want)
	}
	var all []fsmrt.EffectID
	for _, e := range got {
		all = append(all, e.EffectID)
	}
	all = append(all, fsmrt.EffectID{Machine: s.machine, ID: s.id("none"), Seq: 1})
	if err := s.CompleteEffects(ctx, all, now); err != nil {
		t.Fatal(err)
	}
	if err := s.CompleteEffects(ctx, all, now); err != nil {
		t.Errorf("completing again: %v", err)
	}
	if got := s.claim(t, "w4", now.Add(time.Hour), 10); len(got) != 0 {
		t.Errorf("claimed delivered effects: %v", ids(got))
	}
	// The other machine's effect is its own.
	if got, err := other.ClaimEffects(ctx, other.machine, "w1", now, time.Minute, 10); err != nil || len(got) != 1 || got[0].Machine != other.machine {
		t.Errorf("the other machine's effects: %v, %v", ids(got), err)
	}
	if got := s.claim(t, "w5", now.Add(time.Hour), 0); len(got) != 0 {
		t.Errorf("a claim of 0: %v", ids(got))
	}
}

func testEffectsLeasedAtCommit(t *testing.T, s *suite) {
	id := s.id("m")
	now := at(100)
	s.commitEffects(t, id, 1, 1, "committer", now.Add(time.Minute))
	// A refused commit writes no effect.
	c := s.commit(id, 1, "", false)
	c.Effects = []fsmrt.Effect{effect(id, 1, 5)}
	if err := s.Commit(context.Background(), c); !errors.Is(err, fsmrt.ErrStoreConflict) {
		t.Fatalf("a stale commit: %v", err)
	}
	if got := s.claim(t, "w1", now, 10); len(got) != 0 {
		t.Errorf("claimed an effect leased to its committer: %v", ids(got))
	}
	// The committer's attempt counts.
	if got := s.claim(t, "w1", now.Add(2*time.Minute), 10); !reflect.DeepEqual(ids(got), []string{id + "/1/0#2"}) {
		t.Errorf("after the committer's lease: %v", ids(got))
	}
}

func testEffectsRace(t *testing.T, s *suite) {
	const instances, claimers = 10, 6
	for i := range instances {
		s.commitEffects(t, s.id(fmt.Sprint("m", i)), 1, 3, "", time.Time{})
	}
	var mu sync.Mutex
	seen := map[fsmrt.EffectID]string{}
	var wg sync.WaitGroup
	for c := range claimers {
		wg.Go(func() {
			owner := fmt.Sprint("w", c)
			for {
				got, err := s.ClaimEffects(context.Background(), s.machine, owner, at(100), time.Hour, 2)
				if err != nil {
					t.Error(err)
					return
				}
				if len(got) == 0 {
					return
				}
				mu.Lock()
				for _, e := range got {
					if prev, dup := seen[e.EffectID]; dup {
						t.Errorf("%v claimed by %s and %s", e.EffectID, prev, owner)
					}
					seen[e.EffectID] = owner
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if len(seen) != instances*3 {
		t.Errorf("%d effects claimed, want %d", len(seen), instances*3)
	}
}

// dl returns a deadline of state "b".
func dl(name string, at time.Time, event string, level int) fsmrt.Deadline {
	return fsmrt.Deadline{Name: name, At: at, State: "b", Event: event, Level: level}
}

// claimDue claims due deadlines and fails the test on an error.
func (s *suite) claimDue(t *testing.T, owner string, now time.Time) []string {
	t.Helper()
	got, err := s.ClaimDeadlines(context.Background(), s.machine, owner, now, time.Minute, 10)
	if err != nil {
		t.Fatalf("claim deadlines: %v", err)
	}
	var out []string
	for _, d := range got {
		if d.Machine != s.machine || d.State != "b" {
			t.Errorf("claimed %+v", d)
		}
		out = append(out, fmt.Sprintf("%s/%s@%d:%s:%d", d.ID, d.Name, d.At.Sub(at(0)).Round(time.Second)/time.Second, d.Event, d.Level))
	}
	return out
}

func testDeadlines(t *testing.T, s *suite) {
	ctx := context.Background()
	id, other := s.id("m"), s.id("n")
	// Entering b arms its levels and its expiry.
	c := s.commit(id, 1, "", false)
	c.Rearm, c.Deadlines = true, []fsmrt.Deadline{dl("warn", at(80), "", 1), dl("expiry", at(100), "expire", 0), dl("escalate", at(150), "", 3)}
	if err := s.Commit(ctx, c); err != nil {
		t.Fatal(err)
	}
	c = s.commit(other, 1, "", false)
	c.Rearm, c.Deadlines = true, []fsmrt.Deadline{dl("warn", at(80), "", 1)}
	if err := s.Commit(ctx, c); err != nil {
		t.Fatal(err)
	}
	if got := s.claimDue(t, "s1", at(79)); len(got) != 0 {
		t.Errorf("claimed before due: %v", got)
	}
	// Due at 80: both warnings, earliest first, then by id.
	if got, want := s.claimDue(t, "s1", at(80)), []string{id + "/warn@80::1", other + "/warn@80::1"}; !reflect.DeepEqual(got, want) {
		t.Errorf("due at 80: %v, want %v", got, want)
	}
	if got := s.claimDue(t, "s2", at(90)); len(got) != 0 {
		t.Errorf("claimed leased deadlines: %v", got)
	}
	// A commit that handles the warning (at the right version) records it handled, never
	// claimed again; a second one is a conflict that changes nothing.
	c = s.commit(id, 2, "", false)
	c.Fired = "warn"
	if err := s.Commit(ctx, c); err != nil {
		t.Fatal(err)
	}
	before := s.load(t, id)
	c = s.commit(id, 3, "", false)
	c.Fired = "warn"
	var ce *fsmrt.ConflictError
	if err := s.Commit(ctx, c); !errors.As(err, &ce) || ce.Deadline != "warn" || !errors.Is(err, fsmrt.ErrStoreConflict) {
		t.Errorf("handling the warning twice: %v", err)
	}
	if l := s.load(t, id); l.Version != before.Version {
		t.Errorf("a refused commit moved the instance to %d", l.Version)
	}
	// A stale commit that would rearm changes nothing either.
	c = s.commit(id, 2, "", false)
	c.Rearm = true
	if err := s.Commit(ctx, c); !errors.Is(err, fsmrt.ErrStoreConflict) {
		t.Fatalf("a stale commit: %v", err)
	}
	// The expiry is due at 100 (the other instance's warning is leased until 140); a
	// commit without rearming keeps the deadlines; leases run out.
	if got, want := s.claimDue(t, "s2", at(100)), []string{id + "/expiry@100:expire:0"}; !reflect.DeepEqual(got, want) {
		t.Errorf("due at 100: %v, want %v", got, want)
	}
	c = s.commit(id, 3, "", false)
	if err := s.Commit(ctx, c); err != nil {
		t.Fatal(err)
	}
	if got, want := s.claimDue(t, "s3", at(200)), []string{other + "/warn@80::1", id + "/expiry@100:expire:0", id + "/escalate@150::3"}; !reflect.DeepEqual(got, want) {
		t.Errorf("due at 200: %v, want %v", got, want)
	}
	// Leaving the state disarms them: a rearm with no deadline.
	c = s.commit(id, 4, "", false)
	c.Rearm = true
	if err := s.Commit(ctx, c); err != nil {
		t.Fatal(err)
	}
	if got := s.claimDue(t, "s4", at(1000)); !reflect.DeepEqual(got, []string{other + "/warn@80::1"}) {
		t.Errorf("after disarming: %v", got)
	}
	// A deadline of an instance never committed is a conflict.
	c = s.commit(s.id("none"), 1, "", false)
	c.Fired = "warn"
	if err := s.Commit(ctx, c); !errors.Is(err, fsmrt.ErrStoreConflict) {
		t.Errorf("handling a deadline of a new instance: %v", err)
	}
}

func testDeadlinesRace(t *testing.T, s *suite) {
	const instances, claimers = 12, 6
	for i := range instances {
		c := s.commit(s.id(fmt.Sprint("m", i)), 1, "", false)
		c.Rearm, c.Deadlines = true, []fsmrt.Deadline{dl("warn", at(int64(i)), "", 1), dl("expiry", at(50), "expire", 0)}
		if err := s.Commit(context.Background(), c); err != nil {
			t.Fatal(err)
		}
	}
	var mu sync.Mutex
	seen := map[string]string{}
	var wg sync.WaitGroup
	for c := range claimers {
		wg.Go(func() {
			owner := fmt.Sprint("s", c)
			for {
				got, err := s.ClaimDeadlines(context.Background(), s.machine, owner, at(100), time.Hour, 3)
				if err != nil {
					t.Error(err)
					return
				}
				if len(got) == 0 {
					return
				}
				mu.Lock()
				for _, d := range got {
					k := d.ID + "/" + d.Name
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
	if len(seen) != instances*2 {
		t.Errorf("%d deadlines claimed, want %d", len(seen), instances*2)
	}
}

// find runs q against the subtest's machine and returns the IDs found, without the run
// prefix.
func (s *suite) find(t *testing.T, q fsmrt.Query) []string {
	t.Helper()
	q.Machine = s.machine
	got, err := s.Find(context.Background(), q)
	if err != nil {
		t.Fatalf("find %+v: %v", q, err)
	}
	out := []string{}
	for _, in := range got {
		out = append(out, strings.TrimPrefix(in.ID, s.run+"-"))
	}
	return out
}

func testFind(t *testing.T, s *suite) {
	ctx := context.Background()
	// Find sees every instance of a machine: a machine of this run's own keeps earlier
	// runs on the same store out of the results.
	s = &suite{Store: s.Store, machine: s.machine + "." + s.run, run: s.run}
	// a: in b, 2 failures in b, deadlines warn (handled) and expiry; b: in a, 1 failure in
	// a; c: in b, no counter; d: in a, a counter of another name.
	put := func(id string, seq int64, counters []fsmrt.CounterValue, dls ...fsmrt.Deadline) {
		t.Helper()
		c := s.commit(s.id(id), seq, "", false)
		c.Counters = counters
		if dls != nil {
			c.Rearm, c.Deadlines = true, dls
		}
		if err := s.Commit(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	put("a", 1, []fsmrt.CounterValue{{Name: "failures", State: "b", Value: 1}}, dl("warn", at(80), "", 1), dl("expiry", at(100), "expire", 0))
	put("b", 1, nil)
	put("b", 2, []fsmrt.CounterValue{{Name: "failures", State: "a", Value: 1}})
	put("c", 1, nil)
	put("d", 1, nil)
	put("d", 2, []fsmrt.CounterValue{{Name: "cto_attempts", Value: 2}})
	put("a", 2, []fsmrt.CounterValue{{Name: "failures", State: "b", Value: 2}}) // replaces the counters
	c := s.commit(s.id("a"), 3, "", false)
	c.Fired, c.Counters = "warn", []fsmrt.CounterValue{{Name: "failures", State: "b", Value: 2}}
	if err := s.Commit(ctx, c); err != nil {
		t.Fatal(err)
	}
	other := &suite{Store: s.Store, machine: s.machine + ".other", run: s.run}
	other.commitAll(t, s.id("e"), 1)

	for name, c := range map[string]struct {
		q    fsmrt.Query
		want []string
	}{
		"all":                 {fsmrt.Query{}, []string{"a", "b", "c", "d"}},
		"in b":                {fsmrt.Query{States: []string{"b"}}, []string{"a", "c"}},
		"in a or b":           {fsmrt.Query{States: []string{"a", "b"}}, []string{"a", "b", "c", "d"}},
		"in nowhere":          {fsmrt.Query{States: []string{"z"}}, []string{}},
		"warned by 80":        {fsmrt.Query{Deadline: "warn", Due: at(80)}, []string{"a"}},
		"warned by 79":        {fsmrt.Query{Deadline: "warn", Due: at(79)}, []string{}},
		"expired by 100":      {fsmrt.Query{Deadline: "expiry", Due: at(101)}, []string{"a"}},
		"2 failures":          {fsmrt.Query{Counter: "failures", AtLeast: 2}, []string{"a"}},
		"1 failure":           {fsmrt.Query{Counter: "failures", AtLeast: 1}, []string{"a", "b"}},
		"failures and in a":   {fsmrt.Query{Counter: "failures", AtLeast: 1, States: []string{"a"}}, []string{"b"}},
		"cto attempts":        {fsmrt.Query{Counter: "cto_attempts", AtLeast: 1}, []string{"d"}},
		"after b":             {fsmrt.Query{After: s.id("b")}, []string{"c", "d"}},
		"two":                 {fsmrt.Query{Limit: 2}, []string{"a", "b"}},
		"after a, one, in b":  {fsmrt.Query{After: s.id("a"), Limit: 1, States: []string{"b"}}, []string{"c"}},
		"counter and warning": {fsmrt.Query{Counter: "failures", AtLeast: 2, Deadline: "warn", Due: at(1000)}, []string{"a"}},
	} {
		if got := s.find(t, c.q); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: %v, want %v", name, got, c.want)
		}
	}
	got, err := s.Find(ctx, fsmrt.Query{Machine: s.machine, States: []string{"b"}, Limit: 1})
	if err != nil || len(got) != 1 || got[0].ID != s.id("a") || got[0].State != "b" || got[0].Version != 3 || !got[0].UpdatedAt.Equal(at(3).Truncate(time.Microsecond)) {
		t.Errorf("instance a: %+v, %v", got, err)
	}
	// A rearm replaces handled deadlines too.
	c = s.commit(s.id("a"), 4, "", false)
	c.Rearm = true
	if err := s.Commit(ctx, c); err != nil {
		t.Fatal(err)
	}
	if got := s.find(t, fsmrt.Query{Deadline: "warn", Due: at(1000)}); len(got) != 0 {
		t.Errorf("after rearming: %v", got)
	}
	if got := s.find(t, fsmrt.Query{Counter: "failures", AtLeast: 1}); !reflect.DeepEqual(got, []string{"b"}) {
		t.Errorf("a commit without counters clears them: %v", got)
	}
	// A commit that keeps the counters leaves them: the store may write them or not.
	kept := s.commit(s.id("d"), 3, "", false)
	kept.Counters, kept.CountersKept = []fsmrt.CounterValue{{Name: "cto_attempts", Value: 2}}, true
	if err := s.Commit(ctx, kept); err != nil {
		t.Fatal(err)
	}
	if got := s.find(t, fsmrt.Query{Counter: "cto_attempts", AtLeast: 2}); !reflect.DeepEqual(got, []string{"d"}) {
		t.Errorf("after a commit that keeps the counters: %v", got)
	}
	// Counters replaced in part: one goes back to zero, another down.
	put("d", 4, []fsmrt.CounterValue{{Name: "cto_attempts", Value: 2}, {Name: "failures", State: "a", Value: 3}})
	if got := s.find(t, fsmrt.Query{Counter: "failures", AtLeast: 3}); !reflect.DeepEqual(got, []string{"d"}) {
		t.Errorf("a counter added beside another: %v", got)
	}
	put("d", 5, []fsmrt.CounterValue{{Name: "failures", State: "a", Value: 1}})
	for _, c := range []struct {
		counter string
		atLeast int
		want    []string
	}{
		{"cto_attempts", 1, []string{}},
		{"failures", 2, []string{}},
		{"failures", 1, []string{"b", "d"}},
	} {
		if got := s.find(t, fsmrt.Query{Counter: c.counter, AtLeast: c.atLeast}); !reflect.DeepEqual(got, c.want) {
			t.Errorf("one counter gone, another down: %s at least %d: %v, want %v", c.counter, c.atLeast, got, c.want)
		}
	}
	// Commits that say which counters they changed (CountersDelta): a store may write
	// only those, and Find sees what Counters says all the same.
	delta := func(seq int64, counters, changed []fsmrt.CounterValue) error {
		c := s.commit(s.id("d"), seq, "", false)
		c.Counters, c.CountersDelta, c.CountersChanged = counters, true, changed
		return s.Commit(ctx, c)
	}
	if err := delta(6, []fsmrt.CounterValue{{Name: "cto_attempts", Value: 1}, {Name: "failures", State: "a", Value: 4}},
		[]fsmrt.CounterValue{{Name: "cto_attempts", Value: 1}, {Name: "failures", State: "a", Value: 4}}); err != nil {
		t.Fatal(err)
	}
	if err := delta(7, []fsmrt.CounterValue{{Name: "cto_attempts", Value: 1}}, []fsmrt.CounterValue{{Name: "failures", State: "a", Value: 0}}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		counter string
		atLeast int
		want    []string
	}{
		{"cto_attempts", 1, []string{"d"}},
		{"failures", 1, []string{"b"}},
	} {
		if got := s.find(t, fsmrt.Query{Counter: c.counter, AtLeast: c.atLeast}); !reflect.DeepEqual(got, c.want) {
			t.Errorf("counters changed in part: %s at least %d: %v, want %v", c.counter, c.atLeast, got, c.want)
		}
	}
	// A change Counters does not hold is refused, and changes nothing.
	if err := delta(8, nil, []fsmrt.CounterValue{{Name: "failures", State: "a", Value: 2}}); !errors.Is(err, fsmrt.ErrInvalidCommit) {
		t.Errorf("a changed counter missing from Counters: %v", err)
	}
	if got := s.find(t, fsmrt.Query{Counter: "cto_attempts", AtLeast: 1}); !reflect.DeepEqual(got, []string{"d"}) {
		t.Errorf("after a refused commit: %v", got)
	}
	ctxDone, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := s.Find(ctxDone, fsmrt.Query{Machine: s.machine}); err == nil {
		t.Error("a find with a cancelled context succeeded")
	}
}

// owedEffects lists what PendingEffects reads as id/seq/index#attempts@owner+lease, the
// lease in seconds after at(0) ("-" for none).
func owedEffects(es []fsmrt.OwedEffect) []string {
	var out []string
	for _, e := range es {
		lease := "-"
		if !e.LeaseUntil.IsZero() {
			lease = fmt.Sprint(int64(e.LeaseUntil.Sub(at(0)).Round(time.Second) / time.Second))
		}
		out = append(out, fmt.Sprintf("%s/%d/%d#%d@%s+%s", e.ID, e.Seq, e.Index, e.Attempts, e.Owner, lease))
	}
	return out
}

// owedDeadlines lists what PendingDeadlines reads as id/name@at#owner+lease, times in
// seconds after at(0).
func owedDeadlines(ds []fsmrt.OwedDeadline) []string {
	var out []string
	for _, d := range ds {
		lease := "-"
		if !d.LeaseUntil.IsZero() {
			lease = fmt.Sprint(int64(d.LeaseUntil.Sub(at(0)).Round(time.Second) / time.Second))
		}
		out = append(out, fmt.Sprintf("%s/%s@%d:%s:%d#%s+%s", d.ID, d.Name, d.At.Sub(at(0)).Round(time.Second)/time.Second, d.Event, d.Level, d.Owner, lease))
	}
	return out
}

// testPending: a store that implements fsmrt.PendingReader says what it still owes, the
// effects not delivered and the deadlines not handled, with who holds each until when,
// without claiming or changing anything.
func testPending(t *testing.T, s *suite) {
	ctx := context.Background()
	pr := optional[fsmrt.PendingReader](t, s, "fsmrt.PendingReader")
	a, b := s.id("a"), s.id("b")
	effects := func(q fsmrt.PendingQuery) []string {
		t.Helper()
		q.Machine = s.machine
		got, err := pr.PendingEffects(ctx, q)
		if err != nil {
			t.Fatalf("PendingEffects(%+v): %v", q, err)
		}
		for _, e := range got {
			if e.Machine != s.machine || e.Name != fmt.Sprint("send", e.Index) || e.Key != fmt.Sprintf("%s/%d/%d", e.ID, e.Seq, e.Index) ||
				string(e.Data) != fmt.Sprintf(`{"seq": %d, "i": %d}`, e.Seq, e.Index) {
				t.Errorf("pending effect %+v (data %s)", e, e.Data)
			}
		}
		return owedEffects(got)
	}
	deadlines := func(q fsmrt.PendingQuery) []string {
		t.Helper()
		q.Machine = s.machine
		got, err := pr.PendingDeadlines(ctx, q)
		if err != nil {
			t.Fatalf("PendingDeadlines(%+v): %v", q, err)
		}
		for _, d := range got {
			if d.Machine != s.machine || d.State != "b" {
				t.Errorf("pending deadline %+v", d)
			}
		}
		return owedDeadlines(got)
	}
	if got := effects(fsmrt.PendingQuery{}); len(got) != 0 {
		t.Errorf("effects of an empty store: %v", got)
	}
	if got := deadlines(fsmrt.PendingQuery{}); len(got) != 0 {
		t.Errorf("deadlines of an empty store: %v", got)
	}

	// Effects: a's first commit has two, free; b's first one, free; a's second one, leased
	// to its committer until 160. Another machine's are its own.
	s.commitEffects(t, a, 1, 2, "", time.Time{})
	s.commitEffects(t, b, 1, 1, "", time.Time{})
	s.commitEffects(t, a, 2, 1, "committer", at(160))
	other := &suite{Store: s.Store, machine: s.machine + ".other", run: s.run}
	other.commitEffects(t, a, 1, 1, "", time.Time{})
	all := []string{a + "/1/0#0@+-", a + "/1/1#0@+-", b + "/1/0#0@+-", a + "/2/0#1@committer+160"}
	if got := effects(fsmrt.PendingQuery{}); !reflect.DeepEqual(got, all) {
		t.Fatalf("pending effects %v, want %v", got, all)
	}
	// Reading claims nothing: the same again, and a claim still gets the free ones.
	if got := effects(fsmrt.PendingQuery{}); !reflect.DeepEqual(got, all) {
		t.Errorf("read again: %v, want %v", got, all)
	}
	if got := effects(fsmrt.PendingQuery{ID: a}); !reflect.DeepEqual(got, []string{all[0], all[1], all[3]}) {
		t.Errorf("pending effects of %s: %v", a, got)
	}
	if got := effects(fsmrt.PendingQuery{Limit: 2}); !reflect.DeepEqual(got, all[:2]) {
		t.Errorf("two pending effects: %v", got)
	}
	if got := effects(fsmrt.PendingQuery{ID: s.id("none")}); len(got) != 0 {
		t.Errorf("effects of an instance never committed: %v", got)
	}
	if got := s.claim(t, "w1", at(100), 1); !reflect.DeepEqual(ids(got), []string{a + "/1/0#1"}) {
		t.Fatalf("claimed %v after reading", ids(got))
	}
	// A claim shows: its owner, the end of its lease (100 + a minute), the attempt.
	if err := s.CompleteEffects(ctx, []fsmrt.EffectID{{Machine: s.machine, ID: b, Seq: 1, Index: 0}}, at(100)); err != nil {
		t.Fatal(err)
	}
	want := []string{a + "/1/0#1@w1+160", a + "/1/1#0@+-", a + "/2/0#1@committer+160"}
	if got := effects(fsmrt.PendingQuery{}); !reflect.DeepEqual(got, want) {
		t.Errorf("after a claim and a delivery: %v, want %v", got, want)
	}

	// Deadlines: a arms a warning at 80 and its expiry at 100, b a warning at 80.
	c := s.commit(a, 3, "", false)
	c.Rearm, c.Deadlines = true, []fsmrt.Deadline{dl("warn", at(80), "", 1), dl("expiry", at(100), "expire", 0)}
	if err := s.Commit(ctx, c); err != nil {
		t.Fatal(err)
	}
	c = s.commit(b, 2, "", false)
	c.Rearm, c.Deadlines = true, []fsmrt.Deadline{dl("warn", at(80), "", 1)}
	if err := s.Commit(ctx, c); err != nil {
		t.Fatal(err)
	}
	alld := []string{a + "/warn@80::1#+-", b + "/warn@80::1#+-", a + "/expiry@100:expire:0#+-"}
	if got := deadlines(fsmrt.PendingQuery{}); !reflect.DeepEqual(got, alld) {
		t.Fatalf("pending deadlines %v, want %v", got, alld)
	}
	if got := deadlines(fsmrt.PendingQuery{ID: a, Limit: 1}); !reflect.DeepEqual(got, alld[:1]) {
		t.Errorf("one pending deadline of %s: %v", a, got)
	}
	// Reading claims nothing; a claim shows, and a deadline handled is owed no more (it
	// stays for Find until the next rearm).
	if got := s.claimDue(t, "s1", at(90)); !reflect.DeepEqual(got, []string{a + "/warn@80::1", b + "/warn@80::1"}) {
		t.Fatalf("claimed %v after reading", got)
	}
	c = s.commit(a, 4, "", false)
	c.Fired = "warn"
	if err := s.Commit(ctx, c); err != nil {
		t.Fatal(err)
	}
	want = []string{b + "/warn@80::1#s1+150", a + "/expiry@100:expire:0#+-"}
	if got := deadlines(fsmrt.PendingQuery{}); !reflect.DeepEqual(got, want) {
		t.Errorf("after a claim and a warning handled: %v, want %v", got, want)
	}
	if got, err := pr.PendingDeadlines(ctx, fsmrt.PendingQuery{Machine: other.machine}); err != nil || len(got) != 0 {
		t.Errorf("deadlines of the other machine: %v, %v", owedDeadlines(got), err)
	}

	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := pr.PendingEffects(cancelled, fsmrt.PendingQuery{Machine: s.machine}); err == nil {
		t.Error("PendingEffects with a cancelled context: no error")
	}
	if _, err := pr.PendingDeadlines(cancelled, fsmrt.PendingQuery{Machine: s.machine}); err == nil {
		t.Error("PendingDeadlines with a cancelled context: no error")
	}
}
