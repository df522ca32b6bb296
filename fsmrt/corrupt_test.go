package fsmrt

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"
	"time"
)

// rawStore returns one instance as it is given, bytes and all: what a damaged or edited
// database could hand Replay.
type rawStore struct {
	Store // nil: nothing else is asked
	l     Loaded
	past  []Entry
}

func (s *rawStore) Load(context.Context, string, string) (Loaded, error) { return s.l, nil }

func (s *rawStore) Log(_ context.Context, _, _ string, after int64) ([]Entry, error) {
	var out []Entry
	for _, e := range s.past {
		if e.Seq > after {
			out = append(out, e)
		}
	}
	return out, nil
}

// snapshotAt is a store of doc-1 whose last snapshot, at seq 1 in review, is b.
func snapshotAt(b string) *rawStore {
	return &rawStore{l: Loaded{Version: 1, State: "review", Snapshot: []byte(b), SnapshotSeq: 1}}
}

// goodSnapshot is the snapshot of doc-1 in review at seq 1, change applied to its JSON
// object.
func goodSnapshot(t testing.TB, change func(map[string]any)) string {
	t.Helper()
	o := map[string]any{"version": 1, "id": "doc-1", "seq": 1, "state": "review", "updatedAt": t0.Add(time.Minute),
		"context": map[string]any{"title": "t"}, "createdAt": t0, "enteredAt": t0.Add(time.Minute)}
	if change != nil {
		change(o)
	}
	b, err := json.Marshal(o)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestCorruptSnapshots is the corpus of stored snapshots no machine wrote: each is refused
// with a SnapshotError naming the instance, by Replay and by the timer path that loads
// machines, and leaves nothing half restored.
func TestCorruptSnapshots(t *testing.T) {
	deep := strings.Repeat(`{"a":`, 20000) + "1" + strings.Repeat("}", 20000)
	cases := []struct {
		name, snap, field string
	}{
		{"empty bytes", "", "(json)"},
		{"truncated", goodSnapshot(t, nil)[:40], "(json)"},
		{"NaN", strings.Replace(goodSnapshot(t, nil), `"seq":1`, `"seq":NaN`, 1), "(json)"},
		{"Infinity", strings.Replace(goodSnapshot(t, nil), `"seq":1`, `"seq":Infinity`, 1), "(json)"},
		{"too deep", strings.Replace(goodSnapshot(t, nil), `{"title":"t"}`, deep, 1), "(json)"},
		{"not an object", `[1,2,3]`, "(json)"},
		{"a huge ID", goodSnapshot(t, func(o map[string]any) { o["id"] = strings.Repeat("x", 10<<20) }), "seq"},
		{"another instance", goodSnapshot(t, func(o map[string]any) { o["id"] = "doc-2" }), "seq"},
		{"no state", goodSnapshot(t, func(o map[string]any) { delete(o, "state") }), "state"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := newRig()
			before, _ := json.Marshal(r.m.Snapshot())
			err := Replay(bg, r.m, snapshotAt(c.snap), "doc-1", nil)
			var se *SnapshotError
			if !errors.As(err, &se) || !errors.Is(err, ErrInvalidSnapshot) || se.ID != "doc-1" || se.Field != c.field {
				t.Fatalf("Replay = %T %.300v, want a SnapshotError of doc-1 at %s", err, err, c.field)
			}
			if !strings.Contains(err.Error(), "doc-1") || len(err.Error()) > 2000 {
				t.Errorf("the error does not name the instance, or says too much: %.300s", err)
			}
			if after, _ := json.Marshal(r.m.Snapshot()); string(after) != string(before) {
				t.Errorf("a refused snapshot changed the machine:\n%s\n%s", after, before)
			}
			// The scheduler's path: the machine it loads is refused the same way.
			st := newStore()
			if err := st.Commit(bg, &Commit{Machine: tStoreName, ID: "doc-1", State: "review", Version: 0,
				Entry: Entry{Seq: 1, Kind: KindTransition, Data: []byte("{}")}, Snapshot: []byte(c.snap)}); err != nil {
				t.Fatal(err)
			}
			_, load := timerRig(st)
			if _, err := load(bg, "doc-1"); !errors.As(err, &se) || se.ID != "doc-1" {
				t.Errorf("the timer path's load = %T %.300v", err, err)
			}
			var m tSnapshot
			if err := (&m).UnmarshalJSON([]byte(c.snap)); err == nil && c.field == "(json)" {
				t.Error("the snapshot decoded")
			}
		})
	}
}

// TestSnapshotBounds: Restore refuses an ID past MaxIDLength and a sequence number past
// MaxSeq, which no store holds; those at the bounds are restored.
func TestSnapshotBounds(t *testing.T) {
	for _, c := range []struct {
		name  string
		s     tSnapshot
		field string
	}{
		{"a 10 MB ID", tSnapshot{Version: 1, ID: strings.Repeat("x", 10<<20), State: sReview}, "id"},
		{"an ID a byte too long", tSnapshot{Version: 1, ID: strings.Repeat("x", MaxIDLength+1), State: sReview}, "id"},
		{"seq 2^63-1", tSnapshot{Version: 1, ID: "doc-1", Seq: math.MaxInt64, State: sReview}, "seq"},
		{"seq past MaxSeq", tSnapshot{Version: 1, ID: "doc-1", Seq: MaxSeq + 1, State: sReview}, "seq"},
		{"the longest ID", tSnapshot{Version: 1, ID: strings.Repeat("x", MaxIDLength), State: sReview}, ""},
		{"seq MaxSeq", tSnapshot{Version: 1, ID: "doc-1", Seq: MaxSeq, State: sReview}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := newRig()
			err := Restore(r.m, c.s, nil)
			var se *SnapshotError
			switch {
			case c.field == "" && err != nil:
				t.Errorf("Restore = %v", err)
			case c.field != "" && (!errors.As(err, &se) || se.Field != c.field):
				t.Errorf("Restore = %.200v, want a SnapshotError at %s", err, c.field)
			case c.field != "" && r.m.Seq() != 0:
				t.Errorf("a refused snapshot set the machine to seq %d", r.m.Seq())
			}
		})
	}
	// A store refuses to commit an ID the engine would not read back.
	c := &Commit{Machine: tStoreName, ID: strings.Repeat("x", MaxIDLength+1), State: "review", Entry: Entry{Seq: 1, Kind: KindTransition}}
	if err := newStore().Commit(bg, c); !errors.Is(err, ErrInvalidCommit) {
		t.Errorf("commit of a %d-byte ID = %v", len(c.ID), err)
	}
	c.ID = strings.Repeat("x", MaxIDLength)
	if err := newStore().Commit(bg, c); err != nil {
		t.Errorf("commit of a %d-byte ID = %v", len(c.ID), err)
	}
}

// TestCorruptLogs is the corpus of event logs no machine wrote, and of stores whose copy
// of an entry's or the instance's fields disagrees with the log: each is refused with a
// LogError naming the instance and the entry.
func TestCorruptLogs(t *testing.T) {
	submit := tEntryLog{Seq: 1, Timestamp: t0.Add(time.Minute), ID: "doc-1", Kind: KindTransition, Event: eSubmit, From: sDraft, To: sReview, Transition: 0, Created: t0}
	approve := tEntryLog{Seq: 2, Timestamp: t0.Add(2 * time.Minute), ID: "doc-1", Kind: KindTransition, Event: eApprove, From: sReview, To: sApproved, Transition: 1,
		Role: rAdmin, Context: json.RawMessage(`{"title":"t","reviewer":"r"}`)}
	store := func(change func(es []Entry, l *Loaded), log ...tEntryLog) *rawStore {
		s := &rawStore{}
		for _, e := range log {
			s.l.Entries = append(s.l.Entries, storeEntry(e))
			s.l.Version, s.l.State = e.Seq, e.To.String()
		}
		if change != nil {
			change(s.l.Entries, &s.l)
		}
		return s
	}
	with := func(e tEntryLog, change func(*tEntryLog)) tEntryLog {
		change(&e)
		return e
	}
	cases := []struct {
		name  string
		store *rawStore
		seq   int64
		want  string
	}{
		{"empty entry", store(func(es []Entry, _ *Loaded) { es[0].Data = []byte{} }, submit), 1, "unexpected end of JSON input"},
		{"truncated entry", store(func(es []Entry, _ *Loaded) { es[0].Data = es[0].Data[:30] }, submit), 1, "unexpected end of JSON input"},
		{"NaN", store(func(es []Entry, _ *Loaded) {
			es[0].Data = []byte(strings.Replace(string(es[0].Data), `"transition":0`, `"transition":NaN`, 1))
		}, submit), 1, "invalid character 'N'"},
		{"a role the transition does not allow", store(nil, submit, with(approve, func(e *tEntryLog) { e.Role = rViewer })), 2, "transition 1 is not permitted to role viewer"},
		{"no role where the transition names some", store(nil, submit, with(approve, func(e *tEntryLog) { e.Role = rNone })), 2, "transition 1 names roles, and was fired without one"},
		{"an idempotency key used twice", store(nil, with(submit, func(e *tEntryLog) { e.Key = "k" }), with(approve, func(e *tEntryLog) { e.Key = "k" })), 2, `idempotency key "k" used again`},
		{"an entry of another instance", store(nil, with(submit, func(e *tEntryLog) { e.ID = "doc-2" })), 1, `the entry is of instance "doc-2"`},
		{"the store's to_state edited", store(func(es []Entry, _ *Loaded) { es[0].To = "approved" }, submit), 1, "the entry says draft -> review; the store draft -> approved"},
		{"the store's from_state edited", store(func(es []Entry, _ *Loaded) { es[0].From = "paused" }, submit), 1, "the entry says draft -> review; the store paused -> review"},
		{"the store's event edited", store(func(es []Entry, _ *Loaded) { es[0].Event = "approve" }, submit), 1, "the entry says event submit; the store approve"},
		{"the store's time edited", store(func(es []Entry, _ *Loaded) { es[0].At = es[0].At.Add(time.Hour) }, submit), 1, "the entry says it happened at"},
		{"the instance's state edited", store(func(_ []Entry, l *Loaded) { l.State = "approved" }, submit), 1, "the store says the instance is in approved, its snapshot and log in review"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := newRig()
			err := Replay(bg, r.m, c.store, "doc-1", nil)
			var le *LogError
			if !errors.As(err, &le) || !errors.Is(err, ErrInvalidLog) || le.ID != "doc-1" || le.Seq != c.seq || !strings.Contains(le.Err.Error(), c.want) {
				t.Fatalf("Replay = %v, want a LogError of doc-1 at %d: %s", err, c.seq, c.want)
			}
		})
	}
	// A machine without a key window refuses a key used twice too.
	twice := store(nil, with(submit, func(e *tEntryLog) { e.Key = "k" }), with(approve, func(e *tEntryLog) { e.Key = "k" }))
	var le *LogError
	if err := Replay(bg, newRig(func(d *tDef) { d.Idempotent = false }).m, twice, "doc-1", nil); !errors.As(err, &le) || le.Seq != 2 {
		t.Errorf("a key used twice, without a key window: %v", err)
	}
	// What the engine may write replays: a log whose times go back (an input's At in the
	// past), one in year 9999 (a clock set there), a stay entered before the creation.
	for name, log := range map[string][]tEntryLog{
		"times that go back": {submit, with(approve, func(e *tEntryLog) { e.Timestamp = t0.Add(-time.Hour) })},
		"year 9999":          {submit, with(approve, func(e *tEntryLog) { e.Timestamp = time.Date(9999, 12, 31, 0, 0, 0, 0, time.UTC) })},
		"the owner's role":   {submit, with(approve, func(e *tEntryLog) { e.Role = rOwner })},
		"keys":               {with(submit, func(e *tEntryLog) { e.Key = "a" }), with(approve, func(e *tEntryLog) { e.Key = "b" })},
	} {
		if err := Replay(bg, newRig().m, store(nil, log...), "doc-1", nil); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// TestReplayUnknownID: a store that never saw an ID has no machine of it: Replay and Resume
// say so with a NotFoundError, and the timer path cannot load it.
func TestReplayUnknownID(t *testing.T) {
	st := newStore()
	_, load := timerRig(st)
	var nf *NotFoundError
	if _, err := load(bg, "doc-404"); !errors.As(err, &nf) || nf.ID != "doc-404" || !errors.Is(err, ErrNotFound) {
		t.Errorf("load of an unknown ID = %v", err)
	}
	// Created, it is found.
	r, _ := timerRig(st)
	r.m.ID = "doc-404"
	if err := r.m.Create(bg, tIn{}); err != nil {
		t.Fatal(err)
	}
	if _, err := load(bg, "doc-404"); err != nil {
		t.Errorf("load of a created ID = %v", err)
	}
}

// FuzzReplay feeds Replay a stored snapshot and a log entry after it, as bytes: whatever
// they hold, it returns nil or a typed error (never panics or hangs), and an error leaves
// the machine as it was built. The seeds (testdata/fuzz/FuzzReplay) are the corpus of the
// defects found in stored data.
func FuzzReplay(f *testing.F) {
	good := goodSnapshot(f, nil)
	entry := storeEntry(tEntryLog{Seq: 2, Timestamp: t0.Add(2 * time.Minute), ID: "doc-1", Kind: KindTransition, Event: eComment, From: sReview, To: sReview, Transition: 6})
	f.Add([]byte(good), entry.Data)
	f.Add([]byte(good), []byte{})
	f.Fuzz(func(t *testing.T, snap, entry []byte) {
		s := snapshotAt(string(snap))
		if len(entry) > 0 {
			s.l.Entries = []Entry{{Seq: 2, Kind: KindTransition, Data: entry}}
			s.l.Version = 2
			s.l.State = ""
		}
		r := newRig()
		before, _ := json.Marshal(r.m.Snapshot())
		err := Replay(bg, r.m, s, "doc-1", nil)
		if err == nil {
			return
		}
		var se *SnapshotError
		var le *LogError
		var sm *SpecMismatchError
		if !errors.As(err, &se) && !errors.As(err, &le) && !errors.As(err, &sm) {
			t.Fatalf("Replay = %T %v: not a typed error", err, err)
		}
		if se != nil && se.ID != "doc-1" || le != nil && le.ID != "doc-1" {
			t.Fatalf("Replay = %v: does not name doc-1", err)
		}
		if se != nil {
			if after, _ := json.Marshal(r.m.Snapshot()); string(after) != string(before) {
				t.Fatalf("a refused snapshot changed the machine:\n%s\n%s", after, before)
			}
		}
	})
}
