package fsmrt

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// loadSnapshot returns the snapshot st holds for doc-1, failing t if none is.
func loadSnapshot(t *testing.T, st *tStore) tSnapshot {
	t.Helper()
	s, ok, _, err := st.loadT(bg, "doc-1")
	if err != nil || !ok {
		t.Fatalf("Load: %v, %v", ok, err)
	}
	return s
}

func logOf(t *testing.T, st *tStore) []tEntryLog {
	t.Helper()
	log, err := st.logT(bg, "doc-1", 0)
	if err != nil {
		t.Fatal(err)
	}
	return log
}

func TestEngineLogEntries(t *testing.T) {
	r := newRig()
	st := newStore()
	r.m.SetStore(st)
	r.m.Context.Title = "t"
	r.clk.add(time.Minute)
	r.fire(t, eSubmit, tIn{Actor: "ann", Reason: "ready", EventID: "e1", Key: "k1"})
	if err := SetCounterLimit(r.m, cRejections, 5); err != nil {
		t.Fatal(err)
	}
	at := t0.Add(30 * time.Minute)
	r.fire(t, eReject, tIn{Role: rEditor, At: at, Actor: "bob"})
	r.clk.t = at.Add(time.Minute)
	r.fire(t, eComment, tIn{Role: rViewer})
	want := []tEntryLog{
		{Seq: 1, Timestamp: t0.Add(time.Minute), ID: "doc-1", Kind: "STATE_TRANSITION", Event: eSubmit, From: sDraft, To: sReview, Transition: 0,
			Actor: "ann", Reason: "ready", EventID: "e1", Key: "k1", Created: t0,
			Context: json.RawMessage(`{"title":"t","reviewer":"","note":"","n":3}`), Metadata: map[string]string{}},
		{Seq: 2, Timestamp: at, ID: "doc-1", Kind: "STATE_TRANSITION", Event: eReject, From: sReview, To: sDraft, Transition: 3,
			Actor: "bob", Role: rEditor, Context: json.RawMessage(`{"title":"t","reviewer":"","note":"","n":5}`),
			Limits: map[string]int{"rejections": 5}, Metadata: map[string]string{}},
		{Seq: 3, Timestamp: at.Add(time.Minute), ID: "doc-1", Kind: "STATE_TRANSITION", Event: eComment, From: sDraft, To: sDraft, Transition: 6,
			Role: rViewer, Context: json.RawMessage(`{"title":"t","reviewer":"","note":"","n":6}`),
			Limits: map[string]int{"rejections": 5}, Metadata: map[string]string{}},
	}
	got := logOf(t, st)
	if len(got) != len(want) {
		t.Fatalf("%d entries, want %d", len(got), len(want))
	}
	for i := range want {
		if !reflect.DeepEqual(got[i], want[i]) {
			t.Errorf("entry %d:\n got %+v\nwant %+v", i+1, got[i], want[i])
		}
	}
	// A refusal is not logged; no checkpoint was reached, so no snapshot is saved.
	if _, err := r.m.Fire(bg, eClose); err == nil {
		t.Fatal("close in draft")
	}
	if _, ok, log, _ := st.loadT(bg, "doc-1"); ok || len(log) != 3 {
		t.Errorf("after a refusal: snapshot %v, %d entries", ok, len(log))
	}

	t.Run("roles and keys only when the spec has them", func(t *testing.T) {
		r := newRig(func(d *tDef) { d.Roles, d.Idempotent = false, false })
		st := newStore()
		r.m.SetStore(st)
		r.fire(t, eSubmit, tIn{Role: rAdmin, Key: "k"})
		if e := logOf(t, st)[0]; e.Role != rNone || e.Key != "" || !e.Created.Equal(t0) {
			t.Errorf("entry %+v", e)
		}
	})
	t.Run("a machine that keeps no time", func(t *testing.T) {
		r := newRig(untimed)
		st := newStore()
		r.m.SetStore(st)
		at := t0.Add(time.Hour)
		r.fire(t, eComment, tIn{At: at})
		before := time.Now()
		r.fire(t, eSubmit, tIn{})
		after := time.Now()
		r.fire(t, eComment, tIn{})
		log := logOf(t, st)
		if !log[0].Timestamp.Equal(at) || !log[0].Created.IsZero() {
			t.Errorf("entry 1: timestamp %v, created %v", log[0].Timestamp, log[0].Created)
		}
		if ts := log[1].Timestamp; ts.Before(before) || ts.After(after) {
			t.Errorf("entry 2 at %v, not between %v and %v", ts, before, after)
		}
		s := r.m.Snapshot()
		if !s.UpdatedAt.Equal(log[2].Timestamp) || !s.CreatedAt.IsZero() || !s.EnteredAt.IsZero() || s.TimeByState != nil {
			t.Errorf("snapshot %+v", s)
		}
		// Counters per state that do not reset on success add up in each state.
		if want := map[string]map[tState]int{"comments": {sDraft: 1, sReview: 1}}; !reflect.DeepEqual(s.StateCounters, want) {
			t.Errorf("StateCounters = %v, want %v", s.StateCounters, want)
		}
	})
}

func TestEngineCheckpoints(t *testing.T) {
	steps := []struct {
		e  tEvent
		in tIn
	}{{eSubmit, tIn{}}, {eApprove, tIn{Role: rAdmin}}, {eRework, tIn{}}, {eComment, tIn{}}}
	cases := []struct {
		name  string
		every int
		cps   [][]string // by step
		saved []int64    // the seq of the snapshot stored after each step, 0: none
	}{
		{"by transition", -1,
			[][]string{nil, {"cp0 review->approved"}, {"cp1 approved->draft"}, nil},
			[]int64{0, 2, 3, 3}},
		{"after every transition", 1,
			[][]string{{"cp1 draft->review"}, {"cp0 review->approved", "cp1 review->approved"}, {"cp1 approved->draft"}, {"cp1 draft->draft"}},
			[]int64{1, 2, 3, 4}},
		{"after every transition, the same as a transition's", 0,
			[][]string{{"cp0 draft->review"}, {"cp0 review->approved"}, {"cp1 approved->draft", "cp0 approved->draft"}, {"cp0 draft->draft"}},
			[]int64{1, 2, 3, 4}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := newRig(func(d *tDef) { d.EveryCheckpoint = c.every })
			st := newStore()
			r.m.SetStore(st)
			r.m.Context.Reviewer = "bo"
			r.ops.guards[gOK] = true
			for i, x := range steps {
				r.ops.reset()
				r.clk.add(time.Minute)
				r.fire(t, x.e, x.in)
				if !reflect.DeepEqual(r.ops.cps, c.cps[i]) {
					t.Errorf("step %d (%s): checkpoints %q, want %q", i+1, x.e, r.ops.cps, c.cps[i])
				}
				s, ok, _, err := st.loadT(bg, "doc-1")
				if err != nil || ok != (c.saved[i] > 0) || s.Seq != c.saved[i] {
					t.Fatalf("step %d: snapshot %v (seq %d), %v; want seq %d", i+1, ok, s.Seq, err, c.saved[i])
				}
				if c.saved[i] == int64(i+1) && snapJSON(t, s) != snapJSON(t, r.m.Snapshot()) {
					t.Errorf("step %d: saved\n%s\nwant\n%s", i+1, snapJSON(t, s), snapJSON(t, r.m.Snapshot()))
				}
			}
		})
	}
	t.Run("without a store", func(t *testing.T) {
		r := newRig(untimed)
		r.m.Context.Reviewer = "bo"
		r.ops.guards[gOK] = true
		r.walk(t, eSubmit)
		if !r.m.Snapshot().UpdatedAt.IsZero() {
			t.Error("a transition without checkpoint nor store set UpdatedAt")
		}
		at := t0.Add(time.Hour)
		r.fire(t, eApprove, tIn{Role: rAdmin, At: at})
		if !reflect.DeepEqual(r.ops.cps, []string{"cp0 review->approved"}) || !r.m.Snapshot().UpdatedAt.Equal(at) {
			t.Errorf("checkpoints %q, updated at %v", r.ops.cps, r.m.Snapshot().UpdatedAt)
		}
	})
	t.Run("a failing checkpoint", func(t *testing.T) {
		for _, every := range []int{-1, 1} {
			r := newRig(func(d *tDef) { d.EveryCheckpoint = every })
			st := newStore()
			r.m.SetStore(st)
			r.m.Context.Reviewer = "bo"
			r.ops.guards[gOK] = true
			r.walk(t, eSubmit)
			boom := errors.New("boom")
			r.ops.cpErr = boom
			r.ops.reset()
			got, err := r.m.FireWith(bg, eApprove, tIn{Role: rAdmin})
			if got != sReview || err != boom {
				t.Errorf("every %d: approve = %s, %v; want review, boom as it is", every, got, err)
			}
			// Nothing is committed, and the machine is as it was.
			if r.m.State() != sReview || r.m.Seq() != 1 || len(logOf(t, st)) != 1 {
				t.Errorf("every %d: state %s, seq %d, %d entries", every, r.m.State(), r.m.Seq(), len(logOf(t, st)))
			}
			if !reflect.DeepEqual(r.ops.cps, []string{"cp0 review->approved"}) {
				t.Errorf("every %d: checkpoints %q", every, r.ops.cps)
			}
			if s, ok, _, _ := st.loadT(bg, "doc-1"); every < 0 && ok || every >= 0 && s.Seq != 1 {
				t.Errorf("every %d: snapshot %v at %d", every, ok, s.Seq)
			}
		}
	})
}

func TestEngineStoreErrors(t *testing.T) {
	boom := errors.New("boom")
	// before returns what a failed commit must leave as it was.
	before := func(r *rig) (tSnapshot, []Record[tState, tEvent]) { return r.m.Snapshot(), History(r.m) }
	same := func(t *testing.T, r *rig, snap tSnapshot, hist []Record[tState, tEvent]) {
		t.Helper()
		if got := r.m.Snapshot(); !reflect.DeepEqual(got, snap) {
			t.Errorf("a failed commit changed the machine:\n got %+v\nwant %+v", got, snap)
		}
		if got := History(r.m); !reflect.DeepEqual(got, hist) {
			t.Errorf("a failed commit changed the history: %+v, was %+v", got, hist)
		}
	}
	t.Run("commit fails", func(t *testing.T) {
		r := newRig()
		fs := &failStore{tStore: newStore()}
		r.m.SetStore(fs)
		r.m.Context.Reviewer = "bo"
		r.ops.guards[gOK] = true
		r.walk(t, eSubmit, eComment)
		fs.commitErr = boom
		snap, hist := before(r)
		for _, e := range []tEvent{eComment, eApprove, ePause, eReject} {
			got, err := r.m.FireWith(bg, e, tIn{Role: rAdmin, Key: "k-" + e.String()})
			var se *StoreError
			if got != sReview || !errors.As(err, &se) || se.Op != "commit" || se.Seq != 3 || !errors.Is(err, boom) {
				t.Fatalf("%s = %s, %#v", e, got, err)
			}
			same(t, r, snap, hist)
		}
		if want := "review: store commit of seq 3: boom"; fs.commitErr != nil {
			_, err := r.m.Fire(bg, ePause)
			if err.Error() != want {
				t.Errorf("error %q, want %q", err, want)
			}
		}
		// The keys of the failed firings were not taken: they fire once the store works.
		fs.commitErr = nil
		if got, err := r.m.FireWith(bg, ePause, tIn{Key: "k-pause"}); got != sPaused || err != nil || r.m.Seq() != 3 {
			t.Errorf("pause after the store recovered = %s, %v, seq %d", got, err, r.m.Seq())
		}
		if log := logOf(t, fs.tStore); len(log) != 3 || log[2].Key != "k-pause" {
			t.Errorf("log: %+v", log)
		}
	})
	t.Run("another writer", func(t *testing.T) {
		st := newStore()
		a, b := newRig(), newRig()
		a.m.SetStore(st)
		b.m.SetStore(st)
		a.walk(t, eSubmit)
		snap, hist := before(b)
		_, err := b.m.Fire(bg, eSubmit)
		var se *StoreError
		var ce *ConflictError
		if !errors.As(err, &se) || se.Op != "commit" || !errors.Is(err, ErrStoreConflict) || !errors.As(err, &ce) || ce.Stored != 1 || ce.Version != 0 {
			t.Errorf("submit: %v", err)
		}
		same(t, b, snap, hist)
	})
	t.Run("counters, memory and clock put back", func(t *testing.T) {
		r := newRig()
		fs := &failStore{tStore: newStore()}
		r.m.SetStore(fs)
		r.m.Context = tCtx{Title: "t", Reviewer: "bo"}
		r.walk(t, eSubmit, eComment, eReject, eSubmit)
		r.clk.add(time.Hour)
		fs.commitErr = &ConflictError{Machine: tStoreName, ID: "doc-1", Version: 4, Stored: 5}
		snap, hist := before(r)
		for _, e := range []tEvent{eComment, ePause, eReject} {
			if _, err := r.m.Fire(bg, e); !errors.Is(err, ErrStoreConflict) {
				t.Fatalf("%s: %v", e, err)
			}
			same(t, r, snap, hist)
		}
	})
	t.Run("a checkpoint fails", func(t *testing.T) {
		r := newRig()
		st := newStore()
		r.m.SetStore(st)
		r.m.Context.Reviewer = "bo"
		r.ops.guards[gOK] = true
		r.walk(t, eSubmit)
		r.ops.cpErr = boom
		snap, hist := before(r)
		if _, err := r.m.FireWith(bg, eApprove, tIn{Role: rAdmin}); !errors.Is(err, boom) {
			t.Fatalf("approve: %v", err)
		}
		same(t, r, snap, hist)
		if log := logOf(t, st); len(log) != 1 {
			t.Errorf("a failed checkpoint committed: %+v", log)
		}
	})
	t.Run("a context that does not encode", func(t *testing.T) {
		r := newRig()
		st := newStore()
		r.m.SetStore(st)
		r.m.Context.Bad = make(chan int)
		_, err := r.m.Fire(bg, eSubmit)
		var se *StoreError
		var ue *json.UnsupportedTypeError
		if !errors.As(err, &se) || se.Op != "commit" || !errors.As(err, &ue) || len(logOf(t, st)) != 0 || r.m.State() != sDraft || r.m.Seq() != 0 {
			t.Errorf("submit: %#v", err)
		}
	})
}

// snapshotRig returns a machine that has been through pauses, rejections and comments,
// with a limit, a timeout and extra data changed at run time.
func snapshotRig(t *testing.T) *rig {
	r := newRig()
	r.m.Context = tCtx{Title: "t", Reviewer: "bo"}
	for _, e := range []tEvent{eSubmit, eReject, eSubmit, ePause, eResume, eComment, eComment} {
		r.clk.add(time.Minute)
		r.walk(t, e)
	}
	if err := SetCounterLimit(r.m, cEscalations, 3); err != nil {
		t.Fatal(err)
	}
	if err := SetTimeout(r.m, sReview, 20*time.Minute); err != nil {
		t.Fatal(err)
	}
	Extra(r.m).Tag = "x"
	return r
}

func TestEngineSnapshot(t *testing.T) {
	r := snapshotRig(t)
	want := tSnapshot{
		Version: 1, ID: "doc-1", Seq: 7, State: sReview, UpdatedAt: t0.Add(7 * time.Minute),
		Context:       tCtx{Title: "t", Reviewer: "bo", N: 12},
		Counters:      map[string]int{"rejections": 1, "submits": 2},
		StateCounters: map[string]map[tState]int{"comments": {sReview: 2}},
		Limits:        map[string]int{"escalations": 3},
		Remembered:    map[tState]tState{sPaused: sReview},
		CreatedAt:     t0, EnteredAt: t0.Add(5 * time.Minute),
		TimeByState: map[tState]time.Duration{sDraft: 2 * time.Minute, sReview: 2 * time.Minute, sPaused: time.Minute},
		Timeouts:    map[tState]time.Duration{sReview: 20 * time.Minute},
		Extra:       tExtra{Tag: "x"},
	}
	s := r.m.Snapshot()
	if !reflect.DeepEqual(s, want) {
		t.Fatalf("Snapshot() =\n%+v\nwant\n%+v", s, want)
	}
	if s.Sequence() != 7 {
		t.Errorf("Sequence() = %d", s.Sequence())
	}
	// The snapshot's maps are its own.
	s.Counters["rejections"] = 9
	s.StateCounters["comments"][sReview] = 9
	s.Limits["escalations"] = 9
	s.Remembered[sPaused] = sDraft
	s.TimeByState[sDraft] = 0
	s.Timeouts[sReview] = time.Second
	if again := r.m.Snapshot(); !reflect.DeepEqual(again, want) {
		t.Errorf("changing a snapshot changed the machine:\n%+v", again)
	}
	// A new machine has an empty snapshot.
	fresh := newRig().m.Snapshot()
	if fresh.Counters != nil || fresh.StateCounters != nil || fresh.Limits != nil || fresh.Remembered != nil || fresh.TimeByState != nil || fresh.Timeouts != nil || fresh.Seq != 0 || fresh.State != sDraft {
		t.Errorf("a new machine's snapshot: %+v", fresh)
	}

	t.Run("JSON", func(t *testing.T) {
		b, err := json.Marshal(want)
		if err != nil {
			t.Fatal(err)
		}
		for _, part := range []string{`"version":1`, `"state":"review"`, `"counters":{"rejections":1,"submits":2}`, `"stateCounters":{"comments":{"review":2}}`,
			`"limits":{"escalations":3}`, `"remembered":{"paused":"review"}`, `"timeouts":{"review":1200000000000}`, `"extra":{"tag":"x"}`, `"createdAt":"2024-01-02T03:04:05Z"`} {
			if !strings.Contains(string(b), part) {
				t.Errorf("%s lacks %s", b, part)
			}
		}
		var back tSnapshot
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(back, want) {
			t.Errorf("round trip:\n%+v\nwant\n%+v", back, want)
		}
		// A new machine's snapshot omits what it does not have.
		b, _ = json.Marshal(newPlain().Snapshot())
		if want := `{"version":1,"id":"job-1","seq":0,"state":"draft","updatedAt":"0001-01-01T00:00:00Z","context":{"title":"","reviewer":"","note":"","n":0}}`; string(b) != want {
			t.Errorf("plain snapshot %s, want %s", b, want)
		}
	})
	t.Run("JSON refused", func(t *testing.T) {
		cases := []struct {
			json, field, reason string
		}{
			{`{"state":"review"}`, "version", "missing"},
			{`{"version":null,"state":"review"}`, "version", "null"},
			{`{"version":1}`, "state", "missing"},
			{`{"version":1,"state":null}`, "state", "null"},
			{`{"version":1,"state":"nowhere"}`, "(json)", `review: unknown state "nowhere"`},
			{`[1]`, "(json)", "json: cannot unmarshal"},
			{`{"version":1,"state":"draft","counters":{"x":"y"}}`, "(json)", "json: cannot unmarshal"},
		}
		for _, c := range cases {
			var s tSnapshot
			err := json.Unmarshal([]byte(c.json), &s)
			var se *SnapshotError
			if !errors.As(err, &se) || se.Field != c.field || !strings.Contains(se.Reason, c.reason) || !errors.Is(err, ErrInvalidSnapshot) {
				t.Errorf("%s: %#v, want %s: %s", c.json, err, c.field, c.reason)
			}
		}
		var s tSnapshot
		if err := json.Unmarshal([]byte(`{"state":"review"}`), &s); err == nil || err.Error() != "fsm: restore: version: missing" {
			t.Errorf("error %v", err)
		}
	})
}

func TestEngineRestore(t *testing.T) {
	orig := snapshotRig(t)
	b, err := json.Marshal(orig.m.Snapshot())
	if err != nil {
		t.Fatal(err)
	}
	var s tSnapshot
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	r := newRig()
	var checked tExtra
	if err := Restore(r.m, s, func(x *tExtra) error { checked = *x; return nil }); err != nil {
		t.Fatal(err)
	}
	if checked.Tag != "x" {
		t.Errorf("check saw %+v", checked)
	}
	if got, want := snapJSON(t, r.m.Snapshot()), snapJSON(t, orig.m.Snapshot()); got != want {
		t.Errorf("restored\n%s\nwant\n%s", got, want)
	}
	if r.m.State() != sReview || r.m.Seq() != 7 || r.m.ID != "doc-1" || r.m.Context != orig.m.Context || Extra(r.m).Tag != "x" {
		t.Errorf("restored: %s, seq %d, id %q, %+v", r.m.State(), r.m.Seq(), r.m.ID, r.m.Context)
	}
	if Count(r.m, cComments, sReview) != 2 || CounterLimit(r.m, cEscalations) != 3 || Timeout(r.m, sReview) != 20*time.Minute {
		t.Error("restored counters, limits or timeouts differ")
	}
	if from, ok := Remembered(r.m, sPaused); !ok || from != sReview {
		t.Errorf("Remembered(paused) = %s, %v", from, ok)
	}
	if !CreatedAt(r.m).Equal(t0) || !EnteredAt(r.m).Equal(t0.Add(5*time.Minute)) {
		t.Errorf("created %v, entered %v", CreatedAt(r.m), EnteredAt(r.m))
	}
	// Both machines go on alike.
	for _, x := range []*rig{orig, r} {
		x.clk.t = t0.Add(time.Hour)
		x.walk(t, eReject, ePause, eResume, eSubmit)
	}
	if got, want := snapJSON(t, r.m.Snapshot()), snapJSON(t, orig.m.Snapshot()); got != want {
		t.Errorf("after firing on:\n%s\nwant\n%s", got, want)
	}
}

func TestEngineRestoreRefuses(t *testing.T) {
	const past = numStates
	rich := []struct {
		name          string
		s             tSnapshot
		field, reason string
	}{
		{"version 0", tSnapshot{Version: 0, State: sReview}, "version", "unsupported snapshot version 0"},
		{"version 2", tSnapshot{Version: 2, State: sReview}, "version", "unsupported snapshot version 2"},
		{"state", tSnapshot{Version: 1, State: past}, "state", "7 is not a state"},
		{"seq", tSnapshot{Version: 1, Seq: -1}, "seq", "-1 is negative"},
		{"unknown counter", tSnapshot{Version: 1, Counters: map[string]int{"nope": 1}}, "counters", `"nope" is not a counter`},
		{"per-state counter as a counter", tSnapshot{Version: 1, Counters: map[string]int{"comments": 1}}, "counters", `"comments" is not a counter`},
		{"counter as a per-state counter", tSnapshot{Version: 1, StateCounters: map[string]map[tState]int{"rejections": {sReview: 1}}}, "counters", `"rejections" is not a counter per state`},
		{"negative counter", tSnapshot{Version: 1, Counters: map[string]int{"rejections": -1}}, "counters.rejections", "-1 is negative"},
		{"counter at its limit", tSnapshot{Version: 1, Counters: map[string]int{"rejections": 3}}, "counters.rejections", "3 is past the limit of 3"},
		{"counter past its limit", tSnapshot{Version: 1, Counters: map[string]int{"rejections": 4}}, "counters.rejections", "4 is past the limit of 3"},
		{"counter past its max", tSnapshot{Version: 1, Counters: map[string]int{"escalations": 2}}, "counters.escalations", "2 is past the limit of 2"},
		{"counter at a limit changed", tSnapshot{Version: 1, Limits: map[string]int{"rejections": 5}, Counters: map[string]int{"rejections": 5}}, "counters.rejections", "5 is past the limit of 5"},
		{"per-state counter in no state", tSnapshot{Version: 1, StateCounters: map[string]map[tState]int{"comments": {past: 1}}}, "stateCounters.comments", "7 is not a state"},
		{"negative per-state counter", tSnapshot{Version: 1, StateCounters: map[string]map[tState]int{"comments": {sReview: -2}}}, "counters.comments", "-2 in review is negative"},
		{"remembered by a state that does not remember", tSnapshot{Version: 1, Remembered: map[tState]tState{sReview: sDraft}}, "remembered", "review does not remember"},
		{"remembered by no state", tSnapshot{Version: 1, Remembered: map[tState]tState{past: sDraft}}, "remembered", "State(7) does not remember"},
		{"remembering no state", tSnapshot{Version: 1, Remembered: map[tState]tState{sPaused: past}}, "remembered", "7 is not a state"},
		{"remembering a state it is not entered from", tSnapshot{Version: 1, Remembered: map[tState]tState{sPaused: sEscalated}}, "remembered", "paused cannot remember escalated"},
		{"time in no state", tSnapshot{Version: 1, TimeByState: map[tState]time.Duration{past: time.Second}}, "timeByState", "7 is not a state"},
		{"negative time", tSnapshot{Version: 1, TimeByState: map[tState]time.Duration{sDraft: -time.Second}}, "timeByState", "draft: -1s is negative"},
		{"timeout not configurable", tSnapshot{Version: 1, Timeouts: map[tState]time.Duration{sPaused: time.Hour}}, "timeouts", "the timeout of paused is not configurable"},
		{"timeout of no state", tSnapshot{Version: 1, Timeouts: map[tState]time.Duration{past: time.Hour}}, "timeouts", "the timeout of State(7) is not configurable"},
		{"zero timeout", tSnapshot{Version: 1, Timeouts: map[tState]time.Duration{sReview: 0}}, "timeouts", "review: 0s is not positive"},
		{"negative timeout", tSnapshot{Version: 1, Timeouts: map[tState]time.Duration{sReview: -time.Minute}}, "timeouts", "review: -1m0s is not positive"},
		{"limit of no counter", tSnapshot{Version: 1, Limits: map[string]int{"nope": 3}}, "limits", `review: no configurable counter "nope"`},
		{"limit not configurable", tSnapshot{Version: 1, Limits: map[string]int{"submits": 3}}, "limits", `review: no configurable counter "submits"`},
		{"limit below 1", tSnapshot{Version: 1, Limits: map[string]int{"rejections": 0}}, "limits", "review: counter rejections: limit 0 is below 1"},
		{"max below 0", tSnapshot{Version: 1, Limits: map[string]int{"escalations": -1}}, "limits", "review: counter escalations: max -1 is below 0"},
	}
	for _, c := range rich {
		t.Run(c.name, func(t *testing.T) {
			r := newRig()
			err := Restore(r.m, c.s, nil)
			var se *SnapshotError
			if !errors.As(err, &se) || se.Field != c.field || se.Reason != c.reason || !errors.Is(err, ErrInvalidSnapshot) {
				t.Fatalf("Restore = %#v, want %s: %s", err, c.field, c.reason)
			}
			if want := "review: restore: " + c.field + ": " + c.reason; err.Error() != want {
				t.Errorf("error %q, want %q", err, want)
			}
			if r.m.State() != sDraft || r.m.Seq() != 0 {
				t.Errorf("a refused snapshot set the state or seq: %s, %d", r.m.State(), r.m.Seq())
			}
		})
	}
	at := t0
	plain := []struct {
		name          string
		s             Snapshot[tState, tCtx, None]
		field, reason string
	}{
		{"limits without counters", Snapshot[tState, tCtx, None]{Version: 1, Limits: map[string]int{"x": 1}}, "limits", "the machine has no counters"},
		{"counters without counters", Snapshot[tState, tCtx, None]{Version: 1, Counters: map[string]int{"x": 1}}, "counters", `"x" is not a counter`},
		{"remembered without remembering", Snapshot[tState, tCtx, None]{Version: 1, Remembered: map[tState]tState{sPaused: sDraft}}, "remembered", "paused does not remember"},
		{"created without time", Snapshot[tState, tCtx, None]{Version: 1, CreatedAt: at}, "timeouts", "the machine keeps no time"},
		{"entered without time", Snapshot[tState, tCtx, None]{Version: 1, EnteredAt: at}, "timeouts", "the machine keeps no time"},
		{"time by state without time", Snapshot[tState, tCtx, None]{Version: 1, TimeByState: map[tState]time.Duration{sDraft: 1}}, "timeouts", "the machine keeps no time"},
		{"timeouts without time", Snapshot[tState, tCtx, None]{Version: 1, Timeouts: map[tState]time.Duration{sDraft: 1}}, "timeouts", "the machine keeps no time"},
	}
	for _, c := range plain {
		t.Run(c.name, func(t *testing.T) {
			m := newPlain()
			err := Restore(m, c.s, nil)
			var se *SnapshotError
			if !errors.As(err, &se) || se.Field != c.field || se.Reason != c.reason || !errors.Is(err, ErrInvalidSnapshot) {
				t.Fatalf("Restore = %#v, want %s: %s", err, c.field, c.reason)
			}
			if want := "plain: restore: " + c.field + ": " + c.reason; err.Error() != want {
				t.Errorf("error %q, want %q", err, want)
			}
		})
	}
	t.Run("the check refuses", func(t *testing.T) {
		bad := errors.New("bad tag")
		for _, refusal := range []error{bad, InvalidSnapshot(nil, "extra.tag", "bad")} {
			r := newRig()
			err := Restore(r.m, tSnapshot{Version: 1, State: sReview, Extra: tExtra{Tag: "?"}}, func(x *tExtra) error {
				if x.Tag != "?" {
					t.Errorf("check saw %+v", x)
				}
				return refusal
			})
			if err != refusal {
				t.Errorf("Restore = %v, want the check's error as it is", err)
			}
			if r.m.State() != sDraft || Extra(r.m).Tag != "" {
				t.Error("a refused snapshot set the state or the extra data")
			}
		}
		r := newRig()
		err := Restore(r.m, tSnapshot{Version: 1}, func(*tExtra) error { return InvalidSnapshot(r.d.Spec, "extra", "bad") })
		if !errors.Is(err, ErrInvalidSnapshot) {
			t.Errorf("Restore = %v", err)
		}
	})
	t.Run("at the bounds", func(t *testing.T) {
		r := newRig()
		s := tSnapshot{Version: 1, State: sPaused, Seq: 0,
			Counters:      map[string]int{"rejections": 2, "escalations": 1},
			StateCounters: map[string]map[tState]int{"comments": {sDraft: 0, sReview: 5}},
			Remembered:    map[tState]tState{sPaused: sDraft},
			TimeByState:   map[tState]time.Duration{sDraft: 0},
			Timeouts:      map[tState]time.Duration{sReview: 1},
		}
		if err := Restore(r.m, s, nil); err != nil {
			t.Fatal(err)
		}
		if Count(r.m, cRejections, 0) != 2 || Count(r.m, cEscalations, 0) != 1 || Count(r.m, cComments, sReview) != 5 || Timeout(r.m, sReview) != 1 {
			t.Error("restored values differ")
		}
		if got := r.fire(t, eResume, tIn{}); got != sDraft {
			t.Errorf("resume = %s", got)
		}
	})
}

// replayScript fires, at a minute each, a run with checkpoints (snapshots at seq 5 and 6),
// keys, roles, a memory, a limit changed and a redirect; after, if not nil, runs after
// each step.
func replayScript(t *testing.T, r *rig, after func(step int)) {
	r.m.Context = tCtx{Title: "t", Reviewer: "bo"}
	r.ops.guards[gOK] = true
	steps := []struct {
		e  tEvent
		in tIn
	}{
		{eSubmit, tIn{Key: "k1", Actor: "ann", EventID: "e1"}},
		{eComment, tIn{Key: "k2", Reason: "why"}},
		{eReject, tIn{Role: rEditor}},
		{eSubmit, tIn{}},
		{eApprove, tIn{Role: rAdmin, Key: "k5"}}, // checkpoint 0
		{eRework, tIn{}},                         // checkpoint 1
		{eSubmit, tIn{Key: "k7"}},
		{ePause, tIn{}},
		{eResume, tIn{Key: "k9"}},
		{eReject, tIn{}},
		{eSubmit, tIn{}},
		{eReject, tIn{Key: "k12"}}, // trips the limit of 2: rejected
	}
	for i, x := range steps {
		r.clk.add(time.Minute)
		if i == 9 {
			if err := SetCounterLimit(r.m, cRejections, 2); err != nil {
				t.Fatal(err)
			}
		}
		r.fire(t, x.e, x.in)
		if after != nil {
			after(i + 1)
		}
	}
	if r.m.State() != sRejected || !strings.HasPrefix(r.m.Context.Note, "rejections reached its limit of 2") {
		t.Fatalf("the script ends in %s, note %q", r.m.State(), r.m.Context.Note)
	}
}

// TestEngineKeyLookups: a machine looks a key it does not hold up in the store only when
// its window may lack keys of the log: it forgot some, or was replayed from a snapshot
// without reading the log from its start. Otherwise the store's version check stands for
// the look-up: a key another writer used comes with a version the commit refuses.
func TestEngineKeyLookups(t *testing.T) {
	fs := &failStore{}
	var d *tDef
	// begin writes the first nine steps of replayScript to a new store: keys k1, k2, k5,
	// k7, k9; snapshots at 5 and 6; in review at seq 9.
	begin := func(t *testing.T) {
		t.Helper()
		fs.tStore, fs.finds = newStore(), 0
		r := newRig()
		d = r.d
		r.m.SetStore(fs)
		r.m.Context = tCtx{Title: "t", Reviewer: "bo"}
		r.ops.guards[gOK] = true
		for _, x := range []struct {
			e  tEvent
			in tIn
		}{
			{eSubmit, tIn{Key: "k1"}}, {eComment, tIn{Key: "k2"}}, {eReject, tIn{Role: rEditor}}, {eSubmit, tIn{}},
			{eApprove, tIn{Role: rAdmin, Key: "k5"}}, {eRework, tIn{}}, {eSubmit, tIn{Key: "k7"}}, {ePause, tIn{}}, {eResume, tIn{Key: "k9"}},
		} {
			r.clk.add(time.Minute)
			r.fire(t, x.e, x.in)
		}
		if fs.finds != 0 || r.m.State() != sReview || r.m.Seq() != 9 {
			t.Fatalf("the machine that began the log looked keys up %d times; %s at %d", fs.finds, r.m.State(), r.m.Seq())
		}
	}
	replayed := func(t *testing.T, window int) *rig {
		t.Helper()
		r := attach(d)
		SetHistoryWindow(r.m, window)
		SetKeyWindow(r.m, window)
		if err := Replay(bg, r.m, fs, "doc-1", nil); err != nil {
			t.Fatal(err)
		}
		r.m.SetStore(fs)
		return r
	}
	// comment fires a comment (review to review) with key, which must be accepted after
	// finds look-ups.
	comment := func(t *testing.T, r *rig, key string, finds int) {
		t.Helper()
		fs.finds = 0
		seq := r.m.Seq()
		if _, err := r.m.FireWith(bg, eComment, tIn{Key: key}); err != nil || r.m.Seq() != seq+1 {
			t.Fatalf("comment with %s: %v, seq %d", key, err, r.m.Seq())
		}
		if fs.finds != finds {
			t.Errorf("comment with %s looked keys up %d times, want %d", key, fs.finds, finds)
		}
	}
	// used fires e with a used key, which must be refused as a conflict after finds look-ups.
	used := func(t *testing.T, r *rig, e tEvent, key string, finds int) {
		t.Helper()
		fs.finds = 0
		seq := r.m.Seq()
		if _, err := r.m.FireWith(bg, e, tIn{Key: key}); !errors.Is(err, ErrIdempotencyConflict) || r.m.Seq() != seq || fs.finds != finds {
			t.Errorf("%s with %s: %v, seq %d, %d look-ups (want %d)", e, key, err, r.m.Seq(), fs.finds, finds)
		}
	}
	t.Run("replayed from the start of the log", func(t *testing.T) {
		begin(t)
		r := replayed(t, 6) // the snapshot at 6: the log read back from 1
		comment(t, r, "fresh", 0)
		used(t, r, eComment, "k1", 0)
	})
	t.Run("replayed from a snapshot past the window", func(t *testing.T) {
		begin(t)
		// The log read back from 4 holds k5, then k7 and k9 fill the window of 3: k1 and k2
		// are only in the store.
		r := replayed(t, 3)
		comment(t, r, "fresh", 1)
		used(t, r, eComment, "k1", 1)
		fs.finds = 0
		if got, err := r.m.FireWith(bg, eComment, tIn{Key: "k2"}); got != sReview || err != nil || r.m.Seq() != 10 || fs.finds != 1 {
			t.Errorf("comment with k2 (a comment's, in the store): %s, %v, seq %d, %d look-ups", got, err, r.m.Seq(), fs.finds)
		}
	})
	t.Run("restored from a snapshot", func(t *testing.T) {
		begin(t)
		r := attach(d)
		if err := Restore(r.m, loadSnapshot(t, fs.tStore), nil); err != nil {
			t.Fatal(err)
		}
		r.m.SetStore(fs)
		fs.finds = 0
		// The machine at 6 is behind the store: the commit is refused, after the look-up.
		if _, err := r.m.FireWith(bg, eComment, tIn{Key: "fresh"}); !errors.Is(err, ErrStoreConflict) || fs.finds != 1 {
			t.Errorf("comment with a fresh key: %v, %d look-ups", err, fs.finds)
		}
	})
	t.Run("a window that forgot", func(t *testing.T) {
		begin(t)
		r := replayed(t, 6)
		comment(t, r, "a", 0)
		SetKeyWindow(r.m, 1)  // forgets all but "a"
		comment(t, r, "b", 0) // never used: the window knows it forgot only other keys
		used(t, r, eComment, "k1", 1)
		for i := range 50 { // and so on: every key dropped is looked up
			comment(t, r, "c"+strconv.Itoa(i), 0)
		}
		used(t, r, eReject, "k2", 1) // a comment's key, dropped long ago
	})
	t.Run("a key another writer used", func(t *testing.T) {
		begin(t)
		a, b := replayed(t, 1000), replayed(t, 1000)
		comment(t, a, "raced", 0)
		_, err := b.m.FireWith(bg, eComment, tIn{Key: "raced"})
		var conflict *ConflictError
		if !errors.As(err, &conflict) || conflict.Key != "" || conflict.Stored != 10 || b.m.Seq() != 9 {
			t.Fatalf("the second writer: %v, seq %d", err, b.m.Seq())
		}
		b = replayed(t, 1000) // what Retry does
		fs.finds = 0
		if got, err := b.m.FireWith(bg, eComment, tIn{Key: "raced"}); got != sReview || err != nil || b.m.Seq() != 10 || fs.finds != 0 {
			t.Errorf("again after the reload: %s, %v, seq %d, %d look-ups", got, err, b.m.Seq(), fs.finds)
		}
		used(t, b, eReject, "raced", 0)
	})
}

// TestEngineCountersKept: a commit says whether its transition left the counters as the
// previous commit stored them, so that a store may skip writing them.
func TestEngineCountersKept(t *testing.T) {
	r := newRig()
	fs := &failStore{tStore: newStore()}
	r.m.SetStore(fs)
	r.m.Context = tCtx{Title: "t", Reviewer: "bo"}
	r.ops.guards[gOK] = true
	for _, x := range []struct {
		e  tEvent
		in tIn
	}{
		{eSubmit, tIn{}}, {eComment, tIn{}}, {eReject, tIn{Role: rEditor}}, {eSubmit, tIn{}},
		{eApprove, tIn{Role: rAdmin}}, {eRework, tIn{}}, {eSubmit, tIn{}}, {ePause, tIn{}}, {eResume, tIn{}},
	} {
		r.clk.add(time.Minute)
		r.fire(t, x.e, x.in)
	}
	// A refused commit is taken back: the next one compares with what was stored.
	fs.commitErr = errors.New("down")
	if _, err := r.m.FireWith(bg, eComment, tIn{}); err == nil {
		t.Fatal("fired on a failing store")
	}
	fs.commitErr = nil
	fs.commits = fs.commits[:len(fs.commits)-1]
	r.fire(t, ePause, tIn{})
	var prev []CounterValue
	kept, changed := 0, 0
	for _, c := range fs.commits {
		if want := slices.Equal(prev, c.Counters); c.CountersKept != want {
			t.Errorf("seq %d (%s): counters %v after %v, kept %v", c.Entry.Seq, c.Entry.Event, c.Counters, prev, c.CountersKept)
		}
		if c.CountersKept {
			kept++
		} else {
			changed++
		}
		prev = c.Counters
	}
	if kept < 2 || changed < 2 {
		t.Errorf("%d commits kept the counters, %d changed them: the script should do both", kept, changed)
	}
}

func TestEngineReplay(t *testing.T) {
	orig := newRig()
	st := newStore()
	orig.m.SetStore(st)
	replayScript(t, orig, nil)
	want := snapJSON(t, orig.m.Snapshot())
	wantHistory := History(orig.m)
	if s := loadSnapshot(t, st); s.Seq != 6 {
		t.Fatalf("the last snapshot is at %d, want 6", s.Seq)
	}

	check := func(t *testing.T, r *rig) {
		t.Helper()
		if got := snapJSON(t, r.m.Snapshot()); got != want {
			t.Errorf("replayed\n%s\nwant\n%s", got, want)
		}
		if got := History(r.m); !reflect.DeepEqual(got, wantHistory) {
			t.Errorf("history\n%+v\nwant\n%+v", got, wantHistory)
		}
		if r.m.ID != "doc-1" || r.m.Seq() != 12 || r.m.State() != sRejected {
			t.Errorf("replayed: id %q, seq %d, state %s", r.m.ID, r.m.Seq(), r.m.State())
		}
		// Every key is honoured, those before the snapshot too, with no store to find them.
		for key, x := range map[string]struct{ e, other tEvent }{"k1": {eSubmit, eReject}, "k2": {eComment, eSubmit}, "k9": {eResume, ePause}, "k12": {eReject, eApprove}} {
			if _, err := r.m.FireWith(bg, x.other, tIn{Key: key}); !errors.Is(err, ErrIdempotencyConflict) {
				t.Errorf("%s with %s: %v", x.other, key, err)
			}
			if _, err := r.m.FireWith(bg, x.e, tIn{Key: key}); err != nil || r.m.Seq() != 12 {
				t.Errorf("%s with %s: %v, seq %d", x.e, key, err, r.m.Seq())
			}
		}
		for _, op := range r.ops.acts {
			t.Errorf("replaying ran %s", op)
		}
		if len(r.ops.asked)+len(r.ops.cps) > 0 {
			t.Errorf("replaying asked guards %v, checkpoints %v", r.ops.asked, r.ops.cps)
		}
	}
	t.Run("from the snapshot", func(t *testing.T) {
		r := attach(richDef())
		if err := Replay(bg, r.m, st, "doc-1", nil); err != nil {
			t.Fatal(err)
		}
		check(t, r)
	})
	t.Run("from the log alone", func(t *testing.T) {
		only := newStore()
		for _, e := range logOf(t, st) {
			if err := only.appendEntry(bg, "doc-1", e, nil); err != nil {
				t.Fatal(err)
			}
		}
		r := attach(richDef())
		if err := Replay(bg, r.m, only, "doc-1", nil); err != nil {
			t.Fatal(err)
		}
		check(t, r)
	})
	t.Run("at every step", func(t *testing.T) {
		orig := newRig()
		st := newStore()
		orig.m.SetStore(st)
		replayScript(t, orig, func(step int) {
			r := attach(orig.d)
			if err := Replay(bg, r.m, st, "doc-1", nil); err != nil {
				t.Fatalf("step %d: %v", step, err)
			}
			if got, want := snapJSON(t, r.m.Snapshot()), snapJSON(t, orig.m.Snapshot()); got != want {
				t.Errorf("step %d: replayed\n%s\nwant\n%s", step, got, want)
			}
		})
	})
	t.Run("and fire on", func(t *testing.T) {
		orig := newRig()
		st := newStore()
		orig.m.SetStore(st)
		var cut int64 = 9
		var mid *rig
		replayScript(t, orig, func(step int) {
			if int64(step) != cut {
				return
			}
			mid = attach(orig.d)
			if err := Replay(bg, mid.m, st, "doc-1", nil); err != nil {
				t.Fatal(err)
			}
		})
		// mid, replayed at seq 9 (snapshot at 6), appends 10 and saves over 6. Its own store
		// is a copy of the first 9 entries and the snapshot.
		copied := newStore()
		snap := loadSnapshot(t, st)
		for _, e := range logOf(t, st)[:cut] {
			var at *tSnapshot
			if e.Seq == snap.Seq {
				at = &snap
			}
			if err := copied.appendEntry(bg, "doc-1", e, at); err != nil {
				t.Fatal(err)
			}
		}
		mid.m.SetStore(copied)
		mid.ops.guards[gOK] = true
		mid.clk.t = t0.Add(time.Hour)
		mid.walk(t, eApprove)
		if s := loadSnapshot(t, copied); s.Seq != 10 || s.State != sApproved {
			t.Errorf("snapshot at %d in %s, want 10 in approved", s.Seq, s.State)
		}
	})
}

func TestEngineReplayEdges(t *testing.T) {
	t.Run("an empty store", func(t *testing.T) {
		// An ID the store never saw is not a new machine: a wiped database would make every
		// instance one.
		r := newRig()
		err := Replay(bg, r.m, newStore(), "doc-7", nil)
		var nf *NotFoundError
		if !errors.Is(err, ErrNotFound) || !errors.As(err, &nf) || nf.ID != "doc-7" || nf.Machine != tStoreName {
			t.Fatalf("Replay of an unknown ID = %v", err)
		}
		if r.m.ID == "doc-7" || r.m.State() != sDraft || r.m.Seq() != 0 {
			t.Errorf("the machine changed: %q, %s, %d", r.m.ID, r.m.State(), r.m.Seq())
		}
		if err := Resume(bg, newRig(resumable).m, newStore(), "doc-7", nil, tIn{}); !errors.Is(err, ErrNotFound) {
			t.Errorf("Resume of an unknown ID = %v", err)
		}
	})
	t.Run("entries without context", func(t *testing.T) {
		r := newRig()
		r.m.Context.Title = "kept"
		fs := &fixedStore{log: []tEntryLog{{Seq: 1, Timestamp: t0.Add(time.Minute), Kind: KindTransition, Event: eSubmit, From: sDraft, To: sReview, Transition: 0, Created: t0.Add(-time.Hour)}}}
		if err := Replay(bg, r.m, fs, "doc-1", nil); err != nil {
			t.Fatal(err)
		}
		if r.m.Context.Title != "kept" || r.m.State() != sReview || !CreatedAt(r.m).Equal(t0.Add(-time.Hour)) {
			t.Errorf("replayed: %+v in %s, created %v", r.m.Context, r.m.State(), CreatedAt(r.m))
		}
		if got := TimeByState(r.m, t0.Add(2*time.Minute))[sDraft]; got != time.Hour+time.Minute {
			t.Errorf("time in draft %v", got)
		}
	})
	t.Run("the past before a snapshot", func(t *testing.T) {
		r := newRig()
		fs := &fixedStore{ok: true, snap: tSnapshot{Version: 1, Seq: 1500, State: sReview},
			past: []tEntryLog{{Seq: 1499, Key: "a", Event: eSubmit, To: sReview}, {Seq: 1500, Key: "b", Event: eResume, To: sReview}, {Seq: 1501, Key: "c", Event: eComment, To: sReview}}}
		if err := Replay(bg, r.m, fs, "doc-1", nil); err != nil {
			t.Fatal(err)
		}
		if fs.after != 1500-int64(DefaultWindow) {
			t.Errorf("Log asked after %d", fs.after)
		}
		if h := History(r.m); len(h) != 2 || h[1].Event != eResume {
			t.Errorf("history %+v", h)
		}
		if _, ok := r.m.keys.Get("c"); ok {
			t.Error("a key after the snapshot was recalled from the past")
		}
		if _, ok := r.m.keys.Get("b"); !ok {
			t.Error("a key before the snapshot was not recalled")
		}
	})
	t.Run("a machine without history or keys does not read the past", func(t *testing.T) {
		r := newRig(untimed, func(d *tDef) { d.Idempotent = false })
		fs := &fixedStore{ok: true, snap: tSnapshot{Version: 1, Seq: 3, State: sReview}, logErr: errors.New("not asked")}
		if err := Replay(bg, r.m, fs, "doc-1", nil); err != nil {
			t.Fatal(err)
		}
		if r.m.Seq() != 3 || r.m.State() != sReview {
			t.Errorf("replayed %d in %s", r.m.Seq(), r.m.State())
		}
	})
	t.Run("keys before the snapshot without history", func(t *testing.T) {
		r := newRig(untimed)
		fs := &fixedStore{ok: true, snap: tSnapshot{Version: 1, Seq: 1, State: sReview},
			past: []tEntryLog{{Seq: 1, Key: "a", Event: eSubmit, From: sDraft, To: sReview, Timestamp: t0}}}
		if err := Replay(bg, r.m, fs, "doc-1", nil); err != nil {
			t.Fatal(err)
		}
		if got, err := r.m.FireWith(bg, eSubmit, tIn{Key: "a"}); got != sReview || err != nil || r.m.Seq() != 1 {
			t.Errorf("submit with a key used before the snapshot = %s, %v", got, err)
		}
		if History(r.m) != nil {
			t.Error("a machine without history has one")
		}
	})
	t.Run("keys in the log of a machine without idempotency", func(t *testing.T) {
		r := newRig(func(d *tDef) { d.Idempotent = false })
		fs := &fixedStore{log: []tEntryLog{{Seq: 1, Key: "a", Timestamp: t0, Kind: KindTransition, Event: eSubmit, From: sDraft, To: sReview, Transition: 0}}}
		if err := Replay(bg, r.m, fs, "doc-1", nil); err != nil {
			t.Fatal(err)
		}
		if r.m.keys.Len() != 0 || len(History(r.m)) != 1 {
			t.Errorf("%d keys kept, %d records", r.m.keys.Len(), len(History(r.m)))
		}
	})
	t.Run("a machine that keeps no time", func(t *testing.T) {
		r := newRig(untimed)
		r.clk.t = t0.Add(time.Hour)
		SetClock(r.m, r.clk)
		fs := &fixedStore{log: []tEntryLog{{Seq: 1, Timestamp: t0, Kind: KindTransition, Event: eSubmit, From: sDraft, To: sReview, Transition: 0, Created: t0}}}
		if err := Replay(bg, r.m, fs, "doc-1", nil); err != nil {
			t.Fatal(err)
		}
		if s := r.m.Snapshot(); !s.UpdatedAt.Equal(t0) || s.State != sReview {
			t.Errorf("snapshot %+v", s)
		}
	})
}

func TestEngineReplayRefuses(t *testing.T) {
	entry := func(seq int64, change func(*tEntryLog)) tEntryLog {
		e := tEntryLog{Seq: seq, Timestamp: t0.Add(time.Duration(seq) * time.Minute), Kind: "STATE_TRANSITION", Event: eSubmit, From: sDraft, To: sReview,
			Transition: 0, Context: json.RawMessage(`{"title":"t"}`), Metadata: map[string]string{}}
		if seq == 1 {
			e.Created = t0
		}
		if change != nil {
			change(&e)
		}
		return e
	}
	boom := errors.New("boom")
	cases := []struct {
		name   string
		store  *fixedStore
		is     error  // what errors.Is must match
		seq    int64  // the LogError's Seq, 0: not a LogError
		reason string // the LogError's cause
	}{
		{"load fails", &fixedStore{loadErr: boom}, boom, 0, ""},
		{"bad snapshot", &fixedStore{ok: true, snap: tSnapshot{Version: 2}}, ErrInvalidSnapshot, 0, ""},
		{"the past fails", &fixedStore{ok: true, snap: tSnapshot{Version: 1, Seq: 2, State: sReview}, logErr: boom}, boom, 0, ""},
		{"gap at the start", &fixedStore{log: []tEntryLog{entry(2, nil)}}, ErrInvalidLog, 2, "the log has a gap: seq 2 follows 0"},
		{"gap after the snapshot", &fixedStore{ok: true, snap: tSnapshot{Version: 1, Seq: 3}, log: []tEntryLog{entry(5, nil)}}, ErrInvalidLog, 5, "the log has a gap: seq 5 follows 3"},
		{"gap within", &fixedStore{log: []tEntryLog{entry(1, nil), entry(1, func(e *tEntryLog) { e.From, e.To, e.Event, e.Transition = sReview, sReview, eComment, 6 })}}, ErrInvalidLog, 1, "the log has a gap: seq 1 follows 1"},
		{"no timestamp", &fixedStore{log: []tEntryLog{entry(1, func(e *tEntryLog) { e.Timestamp = time.Time{} })}}, ErrInvalidLog, 1, "the entry has no timestamp"},
		{"transition past the end", &fixedStore{log: []tEntryLog{entry(1, func(e *tEntryLog) { e.Transition = 11 })}}, ErrInvalidLog, 1, "draft -> review on submit is not transition 11 from draft"},
		{"negative transition", &fixedStore{log: []tEntryLog{entry(1, func(e *tEntryLog) { e.Transition = -1 })}}, ErrInvalidLog, 1, "draft -> review on submit is not transition -1 from draft"},
		{"another transition", &fixedStore{log: []tEntryLog{entry(1, func(e *tEntryLog) { e.Transition = 4 })}}, ErrInvalidLog, 1, "draft -> review on submit is not transition 4 from draft"},
		{"from another state", &fixedStore{log: []tEntryLog{entry(1, func(e *tEntryLog) { e.From, e.To, e.Event, e.Transition = sReview, sPaused, ePause, 4 })}}, ErrInvalidLog, 1, "review -> paused on pause is not transition 4 from draft"},
		{"a state the transition does not leave", &fixedStore{ok: true, snap: tSnapshot{Version: 1, State: sEscalated}, log: []tEntryLog{entry(1, func(e *tEntryLog) { e.From, e.To, e.Event, e.Transition = sEscalated, sPaused, ePause, 4 })}}, ErrInvalidLog, 1, "escalated -> paused on pause is not transition 4 from escalated"},
		{"another trigger", &fixedStore{log: []tEntryLog{entry(1, func(e *tEntryLog) { e.Event = eApprove })}}, ErrInvalidLog, 1, "draft -> review on approve is not transition 0 from draft"},
		{"another target", &fixedStore{log: []tEntryLog{entry(1, func(e *tEntryLog) { e.To = sApproved })}}, ErrInvalidLog, 1, "draft -> approved on submit is not transition 0 from draft"},
		{"bad context", &fixedStore{log: []tEntryLog{entry(1, func(e *tEntryLog) { e.Context = json.RawMessage(`{"title":5}`) })}}, ErrInvalidLog, 1, "json: cannot unmarshal number"},
		{"bad limits", &fixedStore{log: []tEntryLog{entry(1, nil), entry(2, func(e *tEntryLog) {
			e.From, e.To, e.Event, e.Transition, e.Limits = sReview, sReview, eComment, 6, map[string]int{"rejections": 0}
		})}}, ErrInvalidLog, 2, "review: counter rejections: limit 0 is below 1"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := newRig()
			err := Replay(bg, r.m, c.store, "doc-9", nil)
			if !errors.Is(err, c.is) {
				t.Fatalf("Replay = %v, want %v", err, c.is)
			}
			var le *LogError
			if c.seq == 0 {
				if errors.As(err, &le) {
					t.Errorf("Replay = %#v, not a LogError", err)
				}
				return
			}
			if !errors.As(err, &le) || le.ID != "doc-9" || le.Seq != c.seq || !strings.Contains(le.Err.Error(), c.reason) {
				t.Fatalf("Replay = %#v, want seq %d: %s", err, c.seq, c.reason)
			}
			if want := "review: replay doc-9: seq " + itoa(c.seq) + ": " + le.Err.Error(); err.Error() != want {
				t.Errorf("error %q, want %q", err, want)
			}
		})
	}
}

func itoa(n int64) string {
	b, _ := json.Marshal(n)
	return string(b)
}

func TestEngineLogEntryMethods(t *testing.T) {
	e := tEntryLog{Seq: 4, Key: "k"}
	if e.Sequence() != 4 || e.IdempotencyKey() != "k" {
		t.Errorf("Sequence %d, IdempotencyKey %q", e.Sequence(), e.IdempotencyKey())
	}
	b, err := json.Marshal(tEntryLog{Seq: 1, Timestamp: t0, ID: "doc-1", Kind: "STATE_TRANSITION", Event: eApprove, From: sReview, To: sApproved, Transition: 1, Metadata: map[string]string{}})
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"seq":1,"timestamp":"2024-01-02T03:04:05Z","id":"doc-1","kind":"STATE_TRANSITION","event":"approve","from":"review","to":"approved","transition":1,"actor":"","reason":"","metadata":{}}`; string(b) != want {
		t.Errorf("entry JSON %s, want %s", b, want)
	}
}

func TestEngineReplayRefusesMore(t *testing.T) {
	at := func(seq int64) time.Time { return t0.Add(time.Duration(seq) * time.Minute) }
	comment := func(seq int64, change func(*tEntryLog)) tEntryLog {
		e := tEntryLog{Seq: seq, Timestamp: at(seq), Kind: KindTransition, Event: eComment, From: sReview, To: sReview, Transition: 6}
		change(&e)
		return e
	}
	inReview := func(counters map[string]int, log ...tEntryLog) *fixedStore {
		return &fixedStore{ok: true, snap: tSnapshot{Version: 1, Seq: 1, State: sReview, Counters: counters}, log: log}
	}
	cases := []struct {
		name   string
		opts   []func(*tDef)
		store  *fixedStore
		reason string
	}{
		{"an unknown kind", nil, inReview(nil, comment(2, func(e *tEntryLog) { e.Kind = "STATE_PAUSED" })), `"STATE_PAUSED" is not a kind of entry`},
		{"no kind", nil, inReview(nil, comment(2, func(e *tEntryLog) { e.Kind = "" })), `"" is not a kind of entry`},
		{"a timeout not configurable", nil, inReview(nil, comment(2, func(e *tEntryLog) { e.Timeouts = map[tState]time.Duration{sPaused: time.Hour} })),
			"timeouts: the timeout of paused is not configurable"},
		{"a timeout of no state", nil, inReview(nil, comment(2, func(e *tEntryLog) { e.Timeouts = map[tState]time.Duration{sReview: time.Hour}; e.Reason = "no state" })),
			`review: unknown state "nowhere"`},
		{"a timeout not positive", nil, inReview(nil, comment(2, func(e *tEntryLog) { e.Timeouts = map[tState]time.Duration{sReview: 0} })),
			"timeouts: review: 0s is not positive"},
		{"timeouts of a machine that keeps no time", []func(*tDef){untimed}, inReview(nil, comment(2, func(e *tEntryLog) { e.Timeouts = map[tState]time.Duration{sReview: time.Hour} })),
			"timeouts: the machine keeps no time"},
		// rejections trips at 3 and redirects to rejected; escalations past its max refuses.
		{"a redirect not taken", nil, inReview(map[string]int{"rejections": 2}, comment(2, func(e *tEntryLog) { e.Event, e.To, e.Transition = eReject, sDraft, 3 })),
			"review -> draft on reject trips a limit that redirects it to rejected"},
		{"a limit that refuses", nil, inReview(map[string]int{"escalations": 1}, comment(2, func(e *tEntryLog) { e.Event, e.To, e.Transition = eEscalate, sEscalated, 7 })),
			"review -> escalated on escalate trips a limit that refuses it"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := newRig(c.opts...)
			err := Replay(bg, r.m, c.store, "doc-1", nil)
			var le *LogError
			if !errors.As(err, &le) || le.Seq != 2 || le.Err.Error() != c.reason || !errors.Is(err, ErrInvalidLog) {
				t.Errorf("Replay = %v, want a LogError at 2: %s", err, c.reason)
			}
		})
	}
	t.Run("limits of a machine without counters", func(t *testing.T) {
		st := &tStore{NewMemoryStore(), "plain.Job"}
		e := tEntryLog{Seq: 1, Timestamp: t0, Kind: KindTransition, Event: eSubmit, From: sDraft, To: sReview, Transition: 0, Limits: map[string]int{"x": 1}}
		if err := st.appendEntry(bg, "job-1", e, nil); err != nil {
			t.Fatal(err)
		}
		var le *LogError
		if err := Replay(bg, newPlain(), st, "job-1", nil); !errors.As(err, &le) || le.Err.Error() != "limits: the machine has no counters" {
			t.Errorf("Replay = %v", err)
		}
		e.Limits = nil
		if err := st.appendEntry(bg, "job-2", e, nil); err != nil {
			t.Fatal(err)
		}
		if m := newPlain(); Replay(bg, m, st, "job-2", nil) != nil || m.State() != sReview {
			t.Errorf("replayed to %s", m.State())
		}
	})
}

// TestEngineReplaySameStateRedirect: a limit that redirects a transition back to the state
// it left, whether the transition is internal or not, replays as it fired: the redirect
// leaves the state and enters it again (exit actions, the clock, counters reset on
// success).
func TestEngineReplaySameStateRedirect(t *testing.T) {
	cases := []struct {
		name   string
		opt    func(*tDef)
		path   []tEvent // the last one is redirected
		exits  []string // the actions of the last one
		resets bool     // the last one resets rejections (reset on success)
	}{
		{"an internal transition", func(d *tDef) {
			// comment trips at 2 and goes to draft; rejections reset on success.
			c := &d.Counters[cComments]
			c.Limit, c.Then, c.Summary = 2, int32(sDraft), fNote
			d.Counters[cRejections].ResetOnSuccess = true
		}, []tEvent{eSubmit, eReject, eComment, eComment}, []string{"a4 draft->draft", "a3 draft->draft"}, true},
		{"a transition that moves", func(d *tDef) {
			// reject trips at 3 and goes back to review.
			d.Counters[cRejections].Then = int32(sReview)
			d.Transitions[3].To = ss(sDraft, sRejected, sReview)
		}, []tEvent{eSubmit, eReject, eSubmit, eReject, eSubmit, eReject}, []string{"a6 review->review", "a8 review->review", "a5 review->review"}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := newRig(c.opt)
			st := newStore()
			r.m.SetStore(st)
			r.m.Context.Title = "t"
			last := len(c.path) - 1
			for i, e := range c.path {
				r.clk.add(time.Minute)
				r.ops.reset()
				from := r.m.State()
				before := Count(r.m, cRejections, 0)
				r.walk(t, e)
				if i < last {
					continue
				}
				if r.m.State() != from || !strings.Contains(r.m.Context.Note, "went to "+from.String()+" instead") {
					t.Fatalf("%s went to %s, note %q; want a redirect to %s", e, r.m.State(), r.m.Context.Note, from)
				}
				if !slices.Equal(r.ops.acts, c.exits) || !EnteredAt(r.m).Equal(r.clk.t) {
					t.Errorf("actions %q (want %q), entered at %v (want %v)", r.ops.acts, c.exits, EnteredAt(r.m), r.clk.t)
				}
				if c.resets && before == 0 {
					t.Fatal("nothing to reset")
				}
			}
			r2 := attach(r.d)
			if err := Replay(bg, r2.m, st, "doc-1", nil); err != nil {
				t.Fatal(err)
			}
			if got, want := snapJSON(t, r2.m.Snapshot()), snapJSON(t, r.m.Snapshot()); got != want {
				t.Errorf("replayed\n%s\nwant\n%s", got, want)
			}
			if got, want := History(r2.m), History(r.m); !reflect.DeepEqual(got, want) {
				t.Errorf("history\n%+v\nwant\n%+v", got, want)
			}
			for _, x := range []*rig{r, r2} {
				if Count(x.m, cRejections, 0) != 0 || !EnteredAt(x.m).Equal(r.clk.t) {
					t.Errorf("rejections %d, entered at %v", Count(x.m, cRejections, 0), EnteredAt(x.m))
				}
			}
		})
	}
}

// TestEngineReplayTimeouts: a timeout changed at run time is in every later log entry, so
// that replaying without a later snapshot keeps it.
func TestEngineReplayTimeouts(t *testing.T) {
	r := newRig()
	st := newStore()
	r.m.SetStore(st)
	r.walk(t, eSubmit)
	if err := SetTimeout(r.m, sReview, 20*time.Minute); err != nil {
		t.Fatal(err)
	}
	r.walk(t, eComment)
	// With a store the change is committed at once, as an entry of its own.
	log := logOf(t, st)
	twenty := map[tState]time.Duration{sReview: 20 * time.Minute}
	if len(log) != 3 || log[0].Timeouts != nil || log[1].Kind != KindTimeoutChanged || !reflect.DeepEqual(log[1].Timeouts, twenty) ||
		log[1].Metadata["timeout"] != "20m0s" || !reflect.DeepEqual(log[2].Timeouts, twenty) {
		t.Fatalf("timeouts in the log: %+v", log)
	}
	b, err := json.Marshal(log[2])
	if err != nil {
		t.Fatal(err)
	}
	var back tEntryLog
	if !strings.Contains(string(b), `"timeouts":{"review":1200000000000}`) || json.Unmarshal(b, &back) != nil || !reflect.DeepEqual(back, log[2]) {
		t.Errorf("entry JSON %s decodes to %+v", b, back)
	}
	replayed := func() *rig {
		t.Helper()
		r2 := attach(r.d)
		if err := Replay(bg, r2.m, st, "doc-1", nil); err != nil {
			t.Fatal(err)
		}
		if got, want := snapJSON(t, r2.m.Snapshot()), snapJSON(t, r.m.Snapshot()); got != want {
			t.Errorf("replayed\n%s\nwant\n%s", got, want)
		}
		return r2
	}
	if r2 := replayed(); Timeout(r2.m, sReview) != 20*time.Minute {
		t.Errorf("replayed timeout %v, want 20m", Timeout(r2.m, sReview))
	}
	// Back to the spec's: the next entry has none, and replaying restores the spec's.
	if err := SetTimeout(r.m, sReview, 10*time.Minute); err != nil {
		t.Fatal(err)
	}
	r.walk(t, eComment)
	if log := logOf(t, st); log[3].Kind != KindTimeoutChanged || log[3].Timeouts != nil || log[4].Timeouts != nil {
		t.Errorf("entries 4 and 5 have timeouts %v, %v", log[3].Timeouts, log[4].Timeouts)
	}
	if r2 := replayed(); Timeout(r2.m, sReview) != 10*time.Minute {
		t.Errorf("replayed timeout %v, want 10m", Timeout(r2.m, sReview))
	}
	// A machine that keeps no time records none.
	u := newRig(untimed)
	ust := newStore()
	u.m.SetStore(ust)
	u.walk(t, eSubmit)
	if e := logOf(t, ust)[0]; e.Timeouts != nil {
		t.Errorf("an untimed entry has timeouts %v", e.Timeouts)
	}
}

// TestEngineRestoreAtomic: a refused snapshot leaves the machine as it was, whichever check
// refuses it, and a snapshot restored over a machine leaves nothing of it but its windows.
func TestEngineRestoreAtomic(t *testing.T) {
	// Each passes every check but one, the later the better.
	good := func() tSnapshot {
		return tSnapshot{Version: 1, ID: "doc-2", Seq: 3, State: sApproved, UpdatedAt: t0, Context: tCtx{Title: "other"},
			Counters: map[string]int{"rejections": 4}, StateCounters: map[string]map[tState]int{"comments": {sDraft: 3}},
			Limits: map[string]int{"rejections": 5, "escalations": 2}, Remembered: map[tState]tState{sPaused: sDraft},
			CreatedAt: t0, EnteredAt: t0, TimeByState: map[tState]time.Duration{sDraft: time.Hour}, Timeouts: map[tState]time.Duration{sReview: time.Hour},
			Extra: tExtra{Tag: "y", Submit: tSubmitPayload{Title: "T"}, Policies: tPolicies{Editors: true}}}
	}
	refused := errors.New("refused")
	cases := []struct {
		name   string
		change func(*tSnapshot)
		check  func(*tExtra) error
	}{
		{"the check", func(*tSnapshot) {}, func(*tExtra) error { return refused }},
		{"a timeout", func(s *tSnapshot) { s.Timeouts[sPaused] = time.Hour }, nil},
		{"a time by state", func(s *tSnapshot) { s.TimeByState[sReview] = -1 }, nil},
		{"a remembered state", func(s *tSnapshot) { s.Remembered[sPaused] = sEscalated }, nil},
		{"a counter per state", func(s *tSnapshot) { s.StateCounters["comments"][sReview] = -1 }, nil},
		{"a counter", func(s *tSnapshot) { s.Counters["escalations"] = 9 }, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := snapshotRig(t)
			r.m.SetStore(newStore()) // saved: seq 7 after the restore
			r2 := attach(r.d)
			s := good()
			if err := Restore(r2.m, s, nil); err != nil {
				t.Fatalf("the good snapshot is refused: %v", err)
			}
			before, history := snapJSON(t, r.m.Snapshot()), History(r.m)
			s = good()
			c.change(&s)
			if err := Restore(r.m, s, c.check); err == nil {
				t.Fatal("Restore accepted the snapshot")
			}
			if after := snapJSON(t, r.m.Snapshot()); after != before {
				t.Errorf("the refused snapshot changed the machine:\n%s\nwas\n%s", after, before)
			}
			if !reflect.DeepEqual(History(r.m), history) || Count(r.m, cComments, sReview) != 2 {
				t.Errorf("the refused snapshot changed the machine: history %+v", History(r.m))
			}
		})
	}
	t.Run("payloads", func(t *testing.T) {
		r := newRig(withExtras)
		r.m.Context.Title = "t"
		r.walk(t, eComment, eComment)
		before := snapJSON(t, r.m.Snapshot())
		s := good()
		s.Extra.Reject.Severity = 7
		if err := Restore(r.m, s, nil); !errors.Is(err, ErrInvalidSnapshot) {
			t.Fatalf("Restore = %v", err)
		}
		if after := snapJSON(t, r.m.Snapshot()); after != before {
			t.Errorf("the refused snapshot changed the machine:\n%s\nwas\n%s", after, before)
		}
	})
	t.Run("restored over a machine", func(t *testing.T) {
		r := snapshotRig(t)
		s := tSnapshot{Version: 1, ID: "doc-2", State: sDraft}
		if err := Restore(r.m, s, nil); err != nil {
			t.Fatal(err)
		}
		fresh := newRig()
		if err := Restore(fresh.m, s, nil); err != nil {
			t.Fatal(err)
		}
		if got, want := snapJSON(t, r.m.Snapshot()), snapJSON(t, fresh.m.Snapshot()); got != want {
			t.Errorf("restored over a machine\n%s\nwant\n%s", got, want)
		}
	})
}

// TestEngineReplayWindows: Replay reads back as many entries before the snapshot as the
// windows the machine keeps hold, as set before Replay.
func TestEngineReplayWindows(t *testing.T) {
	cases := []struct {
		name          string
		opts          []func(*tDef)
		history, keys int // the windows set; 0: the default
		seq           int64
		after         int64 // what Log is asked for
	}{
		{"history", []func(*tDef){func(d *tDef) { d.Idempotent = false }}, 3, 0, 100, 97},
		{"keys", []func(*tDef){func(d *tDef) { d.History = false }}, 0, 5, 100, 95},
		{"both: the larger", nil, 7, 2, 100, 93},
		{"both: the default", nil, 7, 0, 1500, 1500 - DefaultWindow},
		{"more than the log holds", nil, 7, 9, 4, 0},
		{"resumable without windows", []func(*tDef){untimed, resumable, func(d *tDef) { d.Idempotent = false }}, 0, 0, 100, 99},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := newRig(c.opts...)
			SetHistoryWindow(r.m, c.history)
			SetKeyWindow(r.m, c.keys)
			fs := &fixedStore{ok: true, snap: tSnapshot{Version: 1, Seq: c.seq, State: sReview}, after: -1}
			if err := Replay(bg, r.m, fs, "doc-1", nil); err != nil {
				t.Fatal(err)
			}
			if fs.after != c.after {
				t.Errorf("Log asked after %d, want %d", fs.after, c.after)
			}
		})
	}
}

// Built hands back the machine only when building it succeeded.
func TestBuilt(t *testing.T) {
	m := &tMachine{}
	if got, err := Built(m, nil); got != m || err != nil {
		t.Errorf("Built(m, nil) = %p, %v", got, err)
	}
	bad := errors.New("bad")
	if got, err := Built(m, bad); got != nil || err != bad {
		t.Errorf("Built(m, bad) = %p, %v", got, err)
	}
}

// TestRetry: two writers load the same machine; the one that loses the race reloads and
// fires again on what the winner committed.
func TestRetry(t *testing.T) {
	st := newStore()
	base := newRig()
	base.m.SetStore(st)
	base.walk(t, eSubmit)
	load := func() *rig {
		r := newRig()
		if err := Replay(bg, r.m, st, "doc-1", nil); err != nil {
			t.Fatal(err)
		}
		r.m.SetStore(st)
		return r
	}
	winner, loser := load(), load()
	winner.walk(t, eComment)
	tries := 0
	err := Retry(bg, 0, func(context.Context) error {
		tries++
		if tries > 1 {
			loser = load()
		}
		_, err := loser.m.Fire(bg, eComment)
		return err
	})
	if err != nil || tries != 2 || loser.m.Seq() != 3 || Count(loser.m, cComments, sReview) != 2 {
		t.Errorf("Retry = %v after %d tries; seq %d, %d comments", err, tries, loser.m.Seq(), Count(loser.m, cComments, sReview))
	}
	// A conflict every time: n tries, the conflict returned.
	tries = 0
	conflict := &ConflictError{Machine: "m", ID: "i", Version: 1, Stored: 2}
	if err := Retry(bg, 2, func(context.Context) error { tries++; return conflict }); err != conflict || tries != 2 {
		t.Errorf("Retry = %v after %d tries", err, tries)
	}
	// Another error, or a cancelled context: no retry.
	boom := errors.New("boom")
	tries = 0
	if err := Retry(bg, 5, func(context.Context) error { tries++; return boom }); err != boom || tries != 1 {
		t.Errorf("Retry = %v after %d tries", err, tries)
	}
	ctx, cancel := context.WithCancel(bg)
	cancel()
	tries = 0
	if err := Retry(ctx, 5, func(context.Context) error { tries++; return conflict }); err != conflict || tries != 1 {
		t.Errorf("Retry with a cancelled context = %v after %d tries", err, tries)
	}
}
