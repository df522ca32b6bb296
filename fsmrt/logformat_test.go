package fsmrt

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"
)

// format1 rewrites log entry b (this format) as format 1 wrote it: the instance as
// "taskId", the kind as "event", the event as "trigger", and a note's trigger, which
// format 1 left out as this one leaves out its event.
func format1(t *testing.T, b []byte) []byte {
	t.Helper()
	var o map[string]json.RawMessage
	if err := json.Unmarshal(b, &o); err != nil {
		t.Fatal(err)
	}
	o["taskId"], o["trigger"] = o["id"], o["event"]
	o["event"] = o["kind"]
	if o["trigger"] == nil {
		delete(o, "trigger")
	}
	delete(o, "id")
	delete(o, "kind")
	out, err := json.Marshal(o)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestLogEntryNames: an entry names the instance "id", its kind "kind" and its event
// "event"; a note (here the creation) has no event, and its Event is none of the
// machine's events.
func TestLogEntryNames(t *testing.T) {
	r := attach(richDef(withTimers, draftTimesOut))
	st := newStore()
	r.m.SetStore(st)
	if err := r.m.Create(bg, tIn{Actor: "ann"}); err != nil {
		t.Fatal(err)
	}
	r.fire(t, eSubmit, tIn{Actor: "ann", Key: "k1"})
	log := logOf(t, st)
	if len(log) != 2 {
		t.Fatalf("%d entries", len(log))
	}
	created, submitted := log[0], log[1]
	if created.Kind != KindCreated || created.HasEvent() || int(created.Event) < r.d.NumEvents || created.ID != "doc-1" {
		t.Errorf("creation: kind %s, event %s (has one: %v), id %q", created.Kind, created.Event, created.HasEvent(), created.ID)
	}
	if submitted.Kind != KindTransition || !submitted.HasEvent() || submitted.Event != eSubmit || submitted.ID != "doc-1" {
		t.Errorf("transition: kind %s, event %s (has one: %v), id %q", submitted.Kind, submitted.Event, submitted.HasEvent(), submitted.ID)
	}
	raw, err := st.Log(bg, tStoreName, "doc-1", 0)
	if err != nil || len(raw) != 2 {
		t.Fatalf("log: %v, %d entries", err, len(raw))
	}
	for i, want := range []map[string]any{
		{"id": "doc-1", "kind": KindCreated},
		{"id": "doc-1", "kind": KindTransition, "event": "submit"},
	} {
		o := jsonOf(t, raw[i].Data)
		for _, k := range []string{"id", "kind", "event"} {
			if !reflect.DeepEqual(o[k], want[k]) {
				t.Errorf("entry %d: %s = %v, want %v", i+1, k, o[k], want[k])
			}
		}
		for _, k := range []string{"taskId", "trigger"} {
			if v, ok := o[k]; ok {
				t.Errorf("entry %d has format 1's %s: %v", i+1, k, v)
			}
		}
	}
}

// TestLogEntryFormat1: a log stored in format 1 decodes into the same entries, and an
// instance stored with it replays to the same machine, its idempotency keys and its
// store's copy of each entry's fields checked as before.
func TestLogEntryFormat1(t *testing.T) {
	r := attach(richDef(withTimers, draftTimesOut))
	st := newStore()
	r.m.SetStore(st)
	if err := r.m.Create(bg, tIn{Actor: "ann"}); err != nil {
		t.Fatal(err)
	}
	r.fire(t, eSubmit, tIn{Actor: "ann", Key: "k1"})
	r.clk.add(time.Minute)
	r.fire(t, eReject, tIn{Role: rEditor, Actor: "bob", Key: "k2"})
	raw, err := st.Log(bg, tStoreName, "doc-1", 0)
	if err != nil {
		t.Fatal(err)
	}
	old := newStore()
	for i, e := range raw {
		e.Data = format1(t, e.Data)
		var now, then tEntryLog
		if err := json.Unmarshal(raw[i].Data, &now); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(e.Data, &then); err != nil {
			t.Fatalf("format 1 %s: %v", e.Data, err)
		}
		if !reflect.DeepEqual(then, now) {
			t.Errorf("entry %d in format 1 decodes as\n%+v\nwant\n%+v", i+1, then, now)
		}
		c := &Commit{Machine: tStoreName, ID: "doc-1", Spec: r.d.Spec.Fingerprint, Version: int64(i), State: now.To.String(), Entry: e}
		if err := old.Commit(bg, c); err != nil {
			t.Fatal(err)
		}
	}
	l := attach(r.d)
	if err := Replay(bg, l.m, old, "doc-1", nil); err != nil {
		t.Fatal(err)
	}
	if got, want := snapJSON(t, l.m.Snapshot()), snapJSON(t, r.m.Snapshot()); got != want {
		t.Errorf("replayed from format 1\n%s\nwant\n%s", got, want)
	}
	// Its keys are remembered: the same key again is answered, not fired.
	l.m.SetStore(old)
	if s, err := l.m.FireWith(bg, eReject, tIn{Role: rEditor, Actor: "bob", Key: "k2"}); err != nil || s != r.m.State() || l.m.Seq() != r.m.Seq() {
		t.Errorf("a key of a format 1 entry again: %s, %v, seq %d", s, err, l.m.Seq())
	}
	// An entry of format 1 edited on one side of the store is refused, as in this format.
	bad := newStore()
	for i, e := range raw {
		e.Data = format1(t, e.Data)
		if i == 1 {
			e.Event = "reject"
		}
		c := &Commit{Machine: tStoreName, ID: "doc-1", Spec: r.d.Spec.Fingerprint, Version: int64(i), State: e.To, Entry: e}
		if err := bad.Commit(bg, c); err != nil {
			t.Fatal(err)
		}
	}
	if err := Replay(bg, attach(r.d).m, bad, "doc-1", nil); err == nil {
		t.Error("a format 1 entry whose event the store names otherwise replayed")
	}
}

// TestLogEntryFormat1Hostile: format 1 entries that do not decode are errors, never a
// panic.
func TestLogEntryFormat1Hostile(t *testing.T) {
	for _, b := range []string{
		`{"taskId":"a","event":3}`,
		`{"taskId":"a","event":"STATE_TRANSITION","trigger":"no such event"}`,
		`{"taskId":7}`,
		`{"id":"a","kind":"STATE_TRANSITION","event":"no such event"}`,
		`{"id":"a","kind":"STATE_TRANSITION","event":{}}`,
	} {
		var e tEntryLog
		if err := json.Unmarshal([]byte(b), &e); err == nil {
			t.Errorf("%s decoded: %+v", b, e)
		}
	}
	var e tEntryLog
	if err := json.Unmarshal([]byte(`{"taskId":"a","event":"MACHINE_CREATED"}`), &e); err != nil || e.ID != "a" || e.Kind != KindCreated || e.HasEvent() || e.Event != noEvent[tEvent]() {
		t.Errorf("a format 1 note: %+v, %v", e, err)
	}
}
