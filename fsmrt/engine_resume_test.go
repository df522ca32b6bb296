package fsmrt

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
)

// resumable makes richDef a machine that Resume may take out of its terminal states: it
// takes a checkpoint after every transition.
func resumable(d *tDef) {
	d.Resumable = true
	d.EveryCheckpoint = 1
}

// closedStore returns the store of doc-1, a machine of d that was submitted, approved and
// closed (a snapshot after each), and the rig that fired it.
func closedStore(t *testing.T, opts ...func(*tDef)) (*rig, *tStore) {
	t.Helper()
	r := newRig(append([]func(*tDef){resumable}, opts...)...)
	st := newStore()
	r.m.SetStore(st)
	r.m.Context.Reviewer = "bo"
	r.ops.guards[gOK] = true
	for _, e := range []tEvent{eSubmit, eApprove, eClose} {
		r.clk.add(time.Minute)
		r.walk(t, e)
	}
	if r.m.State() != sClosed || loadSnapshot(t, st).Seq != 3 {
		t.Fatalf("in %s, snapshot at %d", r.m.State(), loadSnapshot(t, st).Seq)
	}
	return r, st
}

func TestEngineResume(t *testing.T) {
	_, st := closedStore(t)
	r := newRig(resumable)
	r.clk.t = t0.Add(time.Hour)
	at := t0.Add(2 * time.Hour)
	in := tIn{Role: rAdmin, Actor: "ann", Reason: "reopen", EventID: "e9", At: at}
	if err := Resume(bg, r.m, st, "doc-1", nil, in); err != nil {
		t.Fatal(err)
	}
	// Back in the state the last transition (close) left, counted as the fourth entry.
	if r.m.State() != sApproved || r.m.Seq() != 4 || r.m.store != st {
		t.Fatalf("resumed to %s at seq %d (store %v)", r.m.State(), r.m.Seq(), r.m.store)
	}
	log := logOf(t, st)
	want := tEntryLog{Seq: 4, Timestamp: at, ID: "doc-1", Kind: KindResumed, Event: eClose, From: sClosed, To: sApproved, Transition: -1,
		Actor: "ann", Reason: "reopen", EventID: "e9", Role: rAdmin, Context: log[2].Context, Metadata: map[string]string{}}
	if len(log) != 4 || !reflect.DeepEqual(log[3], want) {
		t.Fatalf("the resumed entry:\n got %+v\nwant %+v", log[3], want)
	}
	if b := snapJSON(t, log[3]); !strings.Contains(b, `"kind":"STATE_RESUMED"`) || !strings.Contains(b, `"transition":-1`) {
		t.Errorf("entry JSON %s", b)
	}
	// A snapshot of the resumed machine is saved.
	resumed := snapJSON(t, r.m.Snapshot())
	if s := loadSnapshot(t, st); s.Seq != 4 || snapJSON(t, s) != resumed {
		t.Errorf("saved\n%s\nwant\n%s", snapJSON(t, s), resumed)
	}
	if !EnteredAt(r.m).Equal(at) || TimeByState(r.m, at)[sClosed] != at.Sub(t0.Add(3*time.Minute)) {
		t.Errorf("entered at %v, time in closed %v", EnteredAt(r.m), TimeByState(r.m, at)[sClosed])
	}
	if h := History(r.m); len(h) != 3 || h[2].Event != eClose {
		t.Errorf("history %+v", h)
	}
	// Replaying the log applies the resumption: from the snapshot, and from the log alone.
	only := newStore()
	for _, e := range log {
		if err := only.appendEntry(bg, "doc-1", e, nil); err != nil {
			t.Fatal(err)
		}
	}
	for name, from := range map[string]*tStore{"snapshot": st, "log": only} {
		r2 := newRig(resumable)
		if err := Replay(bg, r2.m, from, "doc-1", nil); err != nil {
			t.Fatalf("from the %s: %v", name, err)
		}
		if got := snapJSON(t, r2.m.Snapshot()); got != resumed {
			t.Errorf("replayed from the %s\n%s\nwant\n%s", name, got, resumed)
		}
		if h := History(r2.m); name == "log" && (len(h) != 4 || h[3].From != sClosed || h[3].To != sApproved || !h[3].At.Equal(at)) {
			t.Errorf("replayed history %+v", h)
		}
	}
	// The resumed machine fires on, into its log.
	r.clk.t = at.Add(time.Minute)
	r.ops.guards[gOK] = true
	r.walk(t, eRework)
	if log := logOf(t, st); len(log) != 5 || log[4].From != sApproved || log[4].To != sDraft {
		t.Errorf("log after firing on: %+v", log[4:])
	}
	// Resuming again once closed again goes back to approved again.
	r.m.Context.Reviewer = "bo"
	r.walk(t, eSubmit, eApprove, eClose)
	r3 := newRig(resumable)
	if err := Resume(bg, r3.m, st, "doc-1", nil, tIn{}); err != nil || r3.m.State() != sApproved || r3.m.Seq() != 9 {
		t.Errorf("resumed again: %v, %s at %d", err, r3.m.State(), r3.m.Seq())
	}
}

func TestEngineResumeTime(t *testing.T) {
	t.Run("the clock", func(t *testing.T) {
		_, st := closedStore(t)
		r := newRig(resumable)
		r.clk.t = t0.Add(time.Hour)
		if err := Resume(bg, r.m, st, "doc-1", nil, tIn{}); err != nil {
			t.Fatal(err)
		}
		if e := logOf(t, st)[3]; !e.Timestamp.Equal(r.clk.t) || !EnteredAt(r.m).Equal(r.clk.t) {
			t.Errorf("resumed at %v, entered at %v; want the clock's %v", e.Timestamp, EnteredAt(r.m), r.clk.t)
		}
	})
	t.Run("a machine that keeps no time", func(t *testing.T) {
		_, st := closedStore(t, untimed, func(d *tDef) { d.Idempotent = false })
		r := newRig(resumable, untimed, func(d *tDef) { d.Idempotent = false })
		before := time.Now()
		if err := Resume(bg, r.m, st, "doc-1", nil, tIn{}); err != nil {
			t.Fatal(err)
		}
		after := time.Now()
		if r.m.State() != sApproved {
			t.Errorf("resumed to %s", r.m.State())
		}
		if ts := logOf(t, st)[3].Timestamp; ts.Before(before) || ts.After(after) {
			t.Errorf("resumed at %v, not between %v and %v", ts, before, after)
		}
	})
}

// TestEngineResumeFromSnapshot: without history or keys, replaying from a snapshot still
// reads back the entry at the snapshot's seq, for the state its transition left.
func TestEngineResumeFromSnapshot(t *testing.T) {
	noWindows := func(d *tDef) { d.History, d.Idempotent = false, false }
	_, st := closedStore(t, noWindows)
	fs := &fixedStore{ok: true, snap: loadSnapshot(t, st), past: logOf(t, st)[2:]}
	r := newRig(resumable, noWindows)
	if err := Replay(bg, r.m, fs, "doc-1", nil); err != nil {
		t.Fatal(err)
	}
	if fs.after != 2 {
		t.Errorf("Log asked after %d, want 2", fs.after)
	}
	if r.m.last != sApproved || r.m.lastEvent != eClose {
		t.Errorf("the last transition left %s on %s, want approved on close", r.m.last, r.m.lastEvent)
	}
	r2 := newRig(resumable, noWindows)
	if err := Resume(bg, r2.m, st, "doc-1", nil, tIn{}); err != nil || r2.m.State() != sApproved {
		t.Errorf("Resume = %v, in %s", err, r2.m.State())
	}
}

func TestEngineResumeLeavesAsLoaded(t *testing.T) {
	t.Run("not ended", func(t *testing.T) {
		_, st := closedStore(t)
		// A copy of the first two entries, without snapshot: approved.
		st2 := newStore()
		for _, e := range logOf(t, st)[:2] {
			if err := st2.appendEntry(bg, "doc-1", e, nil); err != nil {
				t.Fatal(err)
			}
		}
		r2 := newRig(resumable)
		if err := Resume(bg, r2.m, st2, "doc-1", nil, tIn{}); err != nil {
			t.Fatal(err)
		}
		if r2.m.State() != sApproved || r2.m.Seq() != 2 || r2.m.store != st2 || len(logOf(t, st2)) != 2 {
			t.Errorf("in %s at %d, store %v, %d entries", r2.m.State(), r2.m.Seq(), r2.m.store, len(logOf(t, st2)))
		}
		if _, ok, _, _ := st2.loadT(bg, "doc-1"); ok {
			t.Error("a snapshot was saved")
		}
		// Its log goes on.
		r2.m.Context.Reviewer = "bo"
		r2.walk(t, eClose)
		if len(logOf(t, st2)) != 3 {
			t.Error("the machine Resume left has no store")
		}
	})
	t.Run("not resumable", func(t *testing.T) {
		_, st := closedStore(t)
		r := newRig(func(d *tDef) { d.EveryCheckpoint = 1 })
		if err := Resume(bg, r.m, st, "doc-1", nil, tIn{}); err != nil {
			t.Fatal(err)
		}
		if r.m.State() != sClosed || r.m.Seq() != 3 || len(logOf(t, st)) != 3 || r.m.store != st {
			t.Errorf("in %s at %d, %d entries", r.m.State(), r.m.Seq(), len(logOf(t, st)))
		}
	})
	t.Run("ended before any transition", func(t *testing.T) {
		st := &fixedStore{ok: true, snap: tSnapshot{Version: 1, ID: "doc-1", State: sClosed}}
		r := newRig(resumable)
		if err := Resume(bg, r.m, st, "doc-1", nil, tIn{}); err != nil {
			t.Fatal(err)
		}
		if r.m.State() != sClosed || r.m.Seq() != 0 {
			t.Errorf("in %s at %d", r.m.State(), r.m.Seq())
		}
	})
}

func TestEngineResumeFails(t *testing.T) {
	boom := errors.New("boom")
	t.Run("replay", func(t *testing.T) {
		r := newRig(resumable)
		if err := Resume(bg, r.m, &failStore{tStore: newStore(), loadErr: boom}, "doc-1", nil, tIn{}); err != boom {
			t.Errorf("Resume = %v, want the store's error", err)
		}
		if r.m.store != nil {
			t.Error("a machine that did not load got the store")
		}
	})
	t.Run("commit", func(t *testing.T) {
		_, st := closedStore(t)
		fs := &failStore{tStore: st, commitErr: boom}
		r := newRig(resumable)
		err := Resume(bg, r.m, fs, "doc-1", nil, tIn{})
		var se *StoreError
		if !errors.As(err, &se) || se.Op != "commit" || se.Seq != 4 || !errors.Is(err, boom) {
			t.Fatalf("Resume = %#v, want a StoreError of commit", err)
		}
		if n := len(logOf(t, st)); n != 3 {
			t.Errorf("%d entries", n)
		}
		if s := loadSnapshot(t, st); s.Seq != 3 {
			t.Errorf("snapshot at %d, want 3", s.Seq)
		}
	})
}

func TestEngineReplayResumedRefuses(t *testing.T) {
	// The machine was closed at seq 3, leaving approved.
	closed := tSnapshot{Version: 1, ID: "doc-1", Seq: 3, State: sClosed}
	closing := tEntryLog{Seq: 3, Timestamp: t0.Add(3 * time.Minute), Kind: KindTransition, Event: eClose, From: sApproved, To: sClosed, Transition: 9}
	resumed := func(change func(*tEntryLog)) []tEntryLog {
		e := tEntryLog{Seq: 4, Timestamp: t0.Add(time.Hour), Kind: KindResumed, Event: eClose, From: sClosed, To: sApproved, Transition: -1}
		if change != nil {
			change(&e)
		}
		return []tEntryLog{e}
	}
	cases := []struct {
		name   string
		opts   []func(*tDef)
		store  *fixedStore
		seq    int64
		reason string // "" when replayed
	}{
		{"right", []func(*tDef){resumable}, &fixedStore{ok: true, snap: closed, past: []tEntryLog{closing}, log: resumed(nil)}, 4, ""},
		{"not resumable", nil, &fixedStore{ok: true, snap: closed, past: []tEntryLog{closing}, log: resumed(nil)}, 4, "the machine cannot be resumed"},
		{"from a state not terminal", []func(*tDef){resumable},
			&fixedStore{ok: true, snap: tSnapshot{Version: 1, Seq: 3, State: sApproved}, past: []tEntryLog{{Seq: 3, Event: eApprove, From: sReview, To: sApproved}},
				log: resumed(func(e *tEntryLog) { e.From, e.To = sApproved, sReview })}, 4, "resumed from approved to review in approved"},
		{"from another state", []func(*tDef){resumable}, &fixedStore{ok: true, snap: closed, past: []tEntryLog{closing}, log: resumed(func(e *tEntryLog) { e.From = sRejected })},
			4, "resumed from rejected to approved in closed"},
		{"to a terminal state", []func(*tDef){resumable}, &fixedStore{ok: true, snap: closed, past: []tEntryLog{closing}, log: resumed(func(e *tEntryLog) { e.To = sRejected })},
			4, "resumed from closed to rejected in closed"},
		{"elsewhere than the last transition left", []func(*tDef){resumable}, &fixedStore{ok: true, snap: closed, past: []tEntryLog{closing}, log: resumed(func(e *tEntryLog) { e.To = sReview })},
			4, "resumed to review, but the last transition left approved"},
		{"at seq 0", []func(*tDef){resumable}, &fixedStore{ok: true, snap: tSnapshot{Version: 1, State: sClosed}, log: resumed(func(e *tEntryLog) { e.Seq, e.To = 1, sDraft })},
			1, "resumed to draft before any transition"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := newRig(c.opts...)
			err := Replay(bg, r.m, c.store, "doc-1", nil)
			if c.reason == "" {
				if err != nil || r.m.State() != sApproved || r.m.Seq() != 4 || !EnteredAt(r.m).Equal(t0.Add(time.Hour)) {
					t.Errorf("Replay = %v; in %s at %d, entered at %v", err, r.m.State(), r.m.Seq(), EnteredAt(r.m))
				}
				return
			}
			var le *LogError
			if !errors.As(err, &le) || le.Seq != c.seq || le.Err.Error() != c.reason || !errors.Is(err, ErrInvalidLog) {
				t.Errorf("Replay = %v, want a LogError at %d: %s", err, c.seq, c.reason)
			}
		})
	}
}

// A snapshot whose own entry the log has lost: Resume cannot know where the machine was,
// and says so rather than resuming to the zero state; a STATE_RESUMED entry right after
// such a snapshot is refused by Replay for the same reason.
func TestEngineResumeWithoutTheLastEntry(t *testing.T) {
	_, st := closedStore(t)
	snap := loadSnapshot(t, st)
	lost := &fixedStore{snap: snap, ok: true} // no entry at seq 3 before the snapshot
	r := newRig(resumable)
	err := Resume(bg, r.m, lost, "doc-1", nil, tIn{})
	var le *LogError
	if !errors.As(err, &le) || le.Seq != 3 || !strings.Contains(err.Error(), "no entry at seq 3") {
		t.Fatalf("Resume = %v, want a LogError at seq 3", err)
	}
	resumed := tEntryLog{Seq: 4, Timestamp: t0, Kind: KindResumed, Event: eClose, From: sClosed, To: sApproved, Transition: -1}
	lost.log = []tEntryLog{resumed}
	err = Replay(bg, newRig(resumable).m, lost, "doc-1", nil)
	if !errors.As(err, &le) || !strings.Contains(err.Error(), "the log before it has no entry at seq 3") {
		t.Fatalf("Replay = %v, want a LogError", err)
	}
}
