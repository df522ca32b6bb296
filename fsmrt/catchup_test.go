package fsmrt

import (
	"context"
	"errors"
	"reflect"
	"slices"
	"testing"
	"time"
)

// TestCatchUp: a machine kept in memory by one process, out of date after another process
// committed, is brought up to date from the entries after its own: it ends as a machine
// replayed whole, honours the other process's keys, and then commits.
func TestCatchUp(t *testing.T) {
	st := newStore()
	d := richDef()
	a := attach(d)
	a.m.SetStore(st)
	a.walk(t, eSubmit) // version 1: review
	load := func() *rig {
		t.Helper()
		r := attach(d)
		if err := Replay(bg, r.m, st, "doc-1", nil); err != nil {
			t.Fatal(err)
		}
		r.m.SetStore(st)
		return r
	}
	b := load()
	b.clk.add(time.Minute)
	b.fire(t, eComment, tIn{Role: rAdmin, Key: "k-comment", At: t0.Add(time.Minute)})
	b.fire(t, ePause, tIn{Role: rAdmin, At: t0.Add(2 * time.Minute)})
	b.fire(t, eResume, tIn{Role: rAdmin, At: t0.Add(3 * time.Minute)})

	// a is out of date: its commit is a conflict, which changes nothing.
	var ce *ConflictError
	if _, err := a.m.FireWith(bg, eComment, tIn{Role: rAdmin}); !errors.As(err, &ce) || a.m.Seq() != 1 {
		t.Fatalf("a stale commit: %v (seq %d)", err, a.m.Seq())
	}
	if err := CatchUp(bg, a.m, st); err != nil {
		t.Fatal(err)
	}
	if got, want := snapJSON(t, a.m.Snapshot()), snapJSON(t, load().m.Snapshot()); got != want {
		t.Fatalf("caught up:\n%s\nreplayed:\n%s", got, want)
	}
	if got, want := len(History(a.m)), len(History(load().m)); got != want || got != 4 {
		t.Errorf("history %d records, replayed %d", got, want)
	}
	// b's key is known: firing with it again answers b's result without a commit.
	if s, err := a.m.FireWith(bg, eComment, tIn{Role: rAdmin, Key: "k-comment"}); err != nil || s != sReview || a.m.Seq() != 4 {
		t.Fatalf("b's key again: %s, %v (seq %d)", s, err, a.m.Seq())
	}
	a.fire(t, eComment, tIn{Role: rAdmin})
	if a.m.Seq() != 5 {
		t.Fatalf("a's commit after catching up: seq %d", a.m.Seq())
	}
	// Up to date, it reads nothing new and changes nothing.
	before := snapJSON(t, a.m.Snapshot())
	if err := CatchUp(bg, a.m, st); err != nil || snapJSON(t, a.m.Snapshot()) != before {
		t.Fatalf("caught up twice: %v", err)
	}

	// A machine that had nothing stored catches up from the first entry.
	fresh := attach(d)
	fresh.m.SetStore(st)
	if err := CatchUp(bg, fresh.m, st); err != nil || snapJSON(t, fresh.m.Snapshot()) != snapJSON(t, load().m.Snapshot()) {
		t.Fatalf("from nothing: %v", err)
	}
}

func TestCatchUpRefuses(t *testing.T) {
	st := newStore()
	d := richDef()
	a := attach(d)
	a.m.SetStore(st)
	a.walk(t, eSubmit)
	// An entry of another spec: a typed error, naming both.
	other := richDef(func(d *tDef) { d.Spec = &Spec{Package: "review", Machine: "Review", Fingerprint: "sha256:other"} })
	b := attach(other)
	b.m.ID = "doc-2"
	b.m.SetStore(st)
	b.walk(t, eSubmit)
	c := attach(d)
	c.m.ID = "doc-2"
	var sm *SpecMismatchError
	if err := CatchUp(bg, c.m, st); !errors.As(err, &sm) || sm.Stored != "sha256:other" {
		t.Fatalf("another spec's entries: %v", err)
	}
	// A machine loaded from an older spec must be replayed.
	a.m.migrated = "sha256:older"
	if err := CatchUp(bg, a.m, st); err == nil {
		t.Fatal("a migrated machine caught up")
	}
	// A store that fails says so.
	if err := CatchUp(bg, a.m, failingLog{st}); err == nil {
		t.Fatal("a failing store")
	}
}

// failingLog is a store whose Log fails.
type failingLog struct{ Store }

func (failingLog) Log(_ context.Context, _, _ string, _ int64) ([]Entry, error) {
	return nil, errors.New("the disk is gone")
}

// commitLog is a store that keeps a copy of what each commit says of its counters.
type commitLog struct {
	Store
	kept    []bool
	delta   []bool
	changed [][]CounterValue
}

func (s *commitLog) Commit(ctx context.Context, c *Commit) error {
	s.kept = append(s.kept, c.CountersKept)
	s.delta = append(s.delta, c.CountersDelta)
	s.changed = append(s.changed, slices.Clone(c.CountersChanged))
	return s.Store.Commit(ctx, c)
}

// TestCommitCountersChanged: a commit lists the counters its transition changed, with
// their new values (0 for one reset), and says so; one that changed none keeps them.
func TestCommitCountersChanged(t *testing.T) {
	st := &commitLog{Store: NewMemoryStore()}
	r := newRig()
	r.m.SetStore(st)
	r.walk(t, eSubmit)                     // submits 1
	r.fire(t, eComment, tIn{Role: rAdmin}) // comments in review 1
	r.fire(t, ePause, tIn{Role: rAdmin})   // comments reset on success
	want := []struct {
		kept, delta bool
		changed     []CounterValue
	}{
		{false, true, []CounterValue{{Name: "submits", Value: 1}}},
		{false, true, []CounterValue{{Name: "comments", State: "review", Value: 1}}},
		{false, true, []CounterValue{{Name: "comments", State: "review", Value: 0}}},
	}
	if len(st.kept) != len(want) {
		t.Fatalf("%d commits", len(st.kept))
	}
	for i, w := range want {
		if st.kept[i] != w.kept || st.delta[i] != w.delta || !reflect.DeepEqual(st.changed[i], w.changed) {
			t.Errorf("commit %d: kept %v, delta %v, changed %v; want %v", i+1, st.kept[i], st.delta[i], st.changed[i], w)
		}
	}
	r.fire(t, eResume, tIn{Role: rAdmin}) // nothing counted
	if n := len(st.kept); !st.kept[n-1] || st.delta[n-1] || st.changed[n-1] != nil {
		t.Errorf("a commit that changed no counter: kept %v, delta %v, changed %v", st.kept[n-1], st.delta[n-1], st.changed[n-1])
	}
}
