package fsmrt

import (
	"bytes"
	"encoding/json"
	"errors"
	"maps"
	"reflect"
	"strings"
	"testing"
	"time"
)

// Migrations at the level of the runtime: the JSON rewriting of snapshots and log
// entries, Replay of an instance stored under an older spec, the replay of transitions
// the older spec had and this one has not (applyMoved), the commit that stores the
// instance under this spec, and the registry Snapshot's UnmarshalJSON migrates through.
// examples/evolve covers the same end to end with generated code.
//
// The older spec of these tests is review's predecessor: its states writing and triage
// are both draft here, checking is review; its events send and note are submit and
// comment, sort and hold are gone; its counters rejects and notes are rejections and
// comments, gone is gone; its context's heading is title, obsolete is gone, and reviewer
// is new (default "bo").

const (
	mgOld = "sha256:old-review"
	mgNew = "sha256:new-review"
)

// The older spec's transitions, by index, and what they are here.
const (
	oSendWriting  = 0 // writing -send-> checking: submit (0)
	oSortWriting  = 1 // writing -sort-> triage: none; moved, comments+1
	oSortChecking = 2 // checking -sort-> checking, internal: none; moved, internal, submits+1
	oNote         = 3 // checking -note-> checking: comment (6)
	oSendTriage   = 4 // triage -send-> checking: submit (0)
	oPause        = 5 // checking -pause-> paused: pause (4)
	oResume       = 6 // paused -resume-> history: resume (5)
	oApprove      = 7 // checking -approve-> approved: approve (1)
	oHold         = 8 // checking -hold-> paused: none; moved, submits reset
	oSortApprove  = 9 // checking -sort-> approved: none, and no move: cannot be replayed
)

// oldMigration is the migration from the older spec.
func oldMigration() Migration {
	return Migration{
		From:        mgOld,
		States:      map[string]string{"writing": "draft", "triage": "draft", "checking": "review"},
		Events:      map[string]string{"send": "submit", "sort": "", "hold": "", "note": "comment"},
		Counters:    map[string]string{"rejects": "rejections", "notes": "comments", "gone": ""},
		Fields:      map[string]string{"heading": "title", "obsolete": ""},
		Defaults:    map[string]string{"reviewer": `"bo"`},
		Transitions: []int32{0, -1, -1, 6, 0, 4, 5, 1, -1, -1},
		Moves: []Move{
			oSortWriting:  {Inc: []int32{cComments}},
			oSortChecking: {Internal: true, Inc: []int32{cSubmits}},
			oHold:         {Reset: []int32{cSubmits}},
		},
	}
}

// withMigration makes richDef the newer spec, migrating from the older one (as change
// leaves the migration).
func withMigration(change ...func(*Migration)) func(*tDef) {
	return func(d *tDef) {
		mg := oldMigration()
		for _, c := range change {
			c(&mg)
		}
		d.Spec.Fingerprint = mgNew
		d.Migrations = []Migration{mg}
	}
}

// mgAt is the time of entry seq of the older log.
func mgAt(seq int64) time.Time { return t0.Add(time.Duration(seq) * time.Minute) }

// oldEntry is the JSON of entry seq of the older spec's log: trigger from -> to by its
// transition ti; more adds members (nil deletes one).
func oldEntry(seq int64, trigger, from, to string, ti int, more map[string]any) []byte {
	o := map[string]any{
		"spec": mgOld, "seq": seq, "timestamp": mgAt(seq), "taskId": "doc-1", "event": KindTransition,
		"trigger": trigger, "from": from, "to": to, "transition": ti, "actor": "v1", "reason": "",
		"context": map[string]any{"heading": "h", "obsolete": true, "n": seq}, "metadata": map[string]string{},
	}
	if seq == 1 {
		o["created"] = t0
	}
	for k, v := range more {
		if v == nil {
			delete(o, k)
		} else {
			o[k] = v
		}
	}
	b, err := json.Marshal(o)
	if err != nil {
		panic(err)
	}
	return b
}

// oldSnapshot is the JSON of a snapshot of the older spec at seq, in state; more adds
// members (nil deletes one).
func oldSnapshot(seq int64, state string, more map[string]any) []byte {
	o := map[string]any{
		"version": 1, "spec": mgOld, "id": "doc-1", "seq": seq, "state": state, "updatedAt": mgAt(seq),
		"context": map[string]any{"heading": "h", "obsolete": true}, "createdAt": t0, "enteredAt": mgAt(seq),
	}
	for k, v := range more {
		if v == nil {
			delete(o, k)
		} else {
			o[k] = v
		}
	}
	b, err := json.Marshal(o)
	if err != nil {
		panic(err)
	}
	return b
}

// oldLog is a log of the older spec, as happy as it gets: every kind of entry replays.
func oldLog() [][]byte {
	return [][]byte{
		oldEntry(1, "sort", "writing", "triage", oSortWriting, map[string]any{"payload": map[string]int{"x": 1}}),
		oldEntry(2, "send", "triage", "checking", oSendTriage, nil),
		oldEntry(3, "note", "checking", "checking", oNote, nil),
		oldEntry(4, "sort", "checking", "checking", oSortChecking, nil),
		oldEntry(5, "hold", "checking", "paused", oHold, nil),
		oldEntry(6, "resume", "paused", "checking", oResume, nil),
	}
}

// oldStore returns a store holding doc-1 as the older spec wrote it (under spec), the
// snapshot snap (when not nil) taken at entry snapAt.
func oldStore(t *testing.T, spec string, snapAt int64, snap []byte, entries ...[]byte) *tStore {
	t.Helper()
	st := newStore()
	for i, b := range entries {
		var h struct {
			Seq  int64  `json:"seq"`
			Kind string `json:"event"`
			To   string `json:"to"`
			Key  string `json:"idempotencyKey"`
		}
		if err := json.Unmarshal(b, &h); err != nil {
			t.Fatal(err)
		}
		c := &Commit{Machine: tStoreName, ID: "doc-1", Spec: spec, Version: int64(i), State: h.To,
			Entry: Entry{Seq: h.Seq, Kind: h.Kind, At: mgAt(h.Seq), Key: h.Key, Data: b}}
		if h.Seq == snapAt {
			c.Snapshot = snap
		}
		if err := st.Commit(bg, c); err != nil {
			t.Fatal(err)
		}
	}
	return st
}

// jsonOf decodes b, failing t when it is not JSON.
func jsonOf(t *testing.T, b []byte) map[string]any {
	t.Helper()
	var v map[string]any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	return v
}

// asJSON is v as encoding/json decodes it into an any.
func asJSON(t *testing.T, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// mgDef is richDef migrating from the older spec (the migration as change leaves it).
func mgDef(change ...func(*Migration)) *tDef {
	return richDef(withMigration(change...))
}

func TestMigrateSnapshotEveryMember(t *testing.T) {
	d := mgDef()
	old := oldSnapshot(7, "checking", map[string]any{
		"counters":      map[string]int{"rejects": 1, "gone": 4, "submits": 2},
		"limits":        map[string]int{"rejects": 5, "gone": 9},
		"stateCounters": map[string]map[string]int{"notes": {"writing": 1, "triage": 2, "checking": 3}, "gone": {"writing": 1}},
		"remembered":    map[string]string{"paused": "checking"},
		"timeByState":   map[string]time.Duration{"writing": time.Minute, "triage": 30 * time.Second, "checking": time.Second, "paused": time.Hour},
		"timeouts":      map[string]time.Duration{"checking": 20 * time.Minute},
		"context":       map[string]any{"heading": "h", "obsolete": []int{1}, "n": 2, "note": "kept"},
		"extra":         map[string]any{"tag": "t", "payloads": map[string]any{"send": map[string]string{"title": "x"}, "sort": map[string]int{"a": 1}, "note": map[string]any{}}},
	})
	got, err := d.migrateSnapshot(old)
	if err != nil {
		t.Fatal(err)
	}
	want := asJSON(t, map[string]any{
		"version": 1, "spec": mgNew, "id": "doc-1", "seq": 7, "state": "review", "updatedAt": mgAt(7),
		"createdAt": t0, "enteredAt": mgAt(7),
		"counters":      map[string]int{"rejections": 1, "submits": 2},
		"limits":        map[string]int{"rejections": 5},
		"stateCounters": map[string]map[string]int{"comments": {"draft": 3, "review": 3}},
		"remembered":    map[string]string{"paused": "review"},
		"timeByState":   map[string]time.Duration{"draft": 90 * time.Second, "review": time.Second, "paused": time.Hour},
		"timeouts":      map[string]time.Duration{"review": 20 * time.Minute},
		"context":       map[string]any{"title": "h", "n": 2, "note": "kept", "reviewer": "bo"},
		"extra":         map[string]any{"tag": "t", "payloads": map[string]any{"submit": map[string]string{"title": "x"}, "comment": map[string]any{}}},
	})
	if g := any(jsonOf(t, got)); !reflect.DeepEqual(g, want) {
		t.Errorf("migrated\n%s\nwant\n%s", got, snapJSON(t, want))
	}
	// What it becomes is a snapshot of this spec: it decodes and restores.
	var s tSnapshot
	if err := json.Unmarshal(got, &s); err != nil {
		t.Fatal(err)
	}
	r := attach(d)
	if err := Restore(r.m, s, nil); err != nil {
		t.Fatal(err)
	}
	snap := r.m.Snapshot()
	if r.m.State() != sReview || snap.Spec != mgNew || snap.Counters["rejections"] != 1 || snap.StateCounters["comments"][sDraft] != 3 ||
		snap.Remembered[sPaused] != sReview || snap.TimeByState[sDraft] != 90*time.Second || Timeout(r.m, sReview) != 20*time.Minute ||
		r.m.Context.Title != "h" || r.m.Context.Reviewer != "bo" || CounterLimit(r.m, cRejections) != 5 {
		t.Errorf("restored %s", snapJSON(t, snap))
	}
	// Migrated again, it is of this spec: unchanged.
	if again, err := d.migrateSnapshot(got); err != nil || !bytes.Equal(again, got) {
		t.Errorf("migrated twice: %s, %v", again, err)
	}
}

func TestMigrateSnapshotContext(t *testing.T) {
	noDefaults := func(mg *Migration) { mg.Defaults = nil }
	cases := []struct {
		name    string
		change  []func(*Migration)
		context any // nil: the member is missing
		null    bool
		want    any // the context migrated; nil: missing
	}{
		{"null, with defaults", nil, nil, true, map[string]any{"reviewer": "bo"}},
		{"missing, with defaults", nil, nil, false, map[string]any{"reviewer": "bo"}},
		{"null, without defaults", []func(*Migration){noDefaults}, nil, true, nil},
		{"missing, without defaults", []func(*Migration){noDefaults}, nil, false, "missing"},
		{"a default not overriding a value", nil, map[string]any{"reviewer": "ann"}, false, map[string]any{"reviewer": "ann"}},
		{"a default not overriding null", nil, map[string]any{"reviewer": nil}, false, map[string]any{"reviewer": nil}},
		{"renamed and dropped", []func(*Migration){noDefaults}, map[string]any{"heading": "h", "obsolete": 1, "n": 3}, false, map[string]any{"title": "h", "n": 3.0}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := mgDef(c.change...)
			more := map[string]any{"context": nil}
			if c.context != nil {
				more["context"] = c.context
			}
			old := oldSnapshot(1, "writing", more)
			if c.null {
				old = bytes.Replace(old, []byte(`"createdAt"`), []byte(`"context":null,"createdAt"`), 1)
			}
			got, err := d.migrateSnapshot(old)
			if err != nil {
				t.Fatal(err)
			}
			ctx, ok := jsonOf(t, got)["context"]
			switch {
			case c.want == "missing":
				if ok {
					t.Errorf("context %v, want none", ctx)
				}
			case !ok || !reflect.DeepEqual(ctx, asJSON(t, c.want)):
				t.Errorf("context %v (%t), want %v", ctx, ok, c.want)
			}
		})
	}
}

func TestMigrateSnapshotUnchanged(t *testing.T) {
	d := mgDef()
	for name, b := range map[string][]byte{
		"this spec":    bytes.Replace(oldSnapshot(1, "draft", nil), []byte(mgOld), []byte(mgNew), 1),
		"another spec": bytes.Replace(oldSnapshot(1, "writing", nil), []byte(mgOld), []byte("sha256:other"), 1),
		"no spec":      oldSnapshot(1, "writing", map[string]any{"spec": nil}),
		// Not a JSON object the migration could rewrite: left for decoding to refuse.
		"an array": []byte(`["spec"]`),
		"null":     []byte(`null`),
	} {
		got, err := d.migrateSnapshot(b)
		if err != nil || !bytes.Equal(got, b) {
			t.Errorf("%s: %s, %v; want it unchanged", name, got, err)
		}
	}
	// A Def without migrations leaves even the older spec's.
	b := oldSnapshot(1, "writing", nil)
	if got, err := richDef().migrateSnapshot(b); err != nil || !bytes.Equal(got, b) {
		t.Errorf("without migrations: %s, %v", got, err)
	}
}

// TestMigrateSnapshotInvalid: what the migration has no place for is a SnapshotError.
func TestMigrateSnapshotInvalid(t *testing.T) {
	d := mgDef()
	cases := []struct {
		name   string
		more   map[string]any
		reason string
	}{
		// Two values becoming one are refused, not written over one another.
		{"counters renamed onto one another", map[string]any{"counters": map[string]int{"rejects": 1, "rejections": 2}}, `both become "rejections"`},
		{"limits renamed onto one another", map[string]any{"limits": map[string]int{"rejects": 1, "rejections": 2}}, `both become "rejections"`},
		{"state counters renamed onto one another", map[string]any{"stateCounters": map[string]map[string]int{"notes": {"writing": 1}, "comments": {"draft": 1}}}, `both become "comments"`},
		{"remembering states merged", map[string]any{"remembered": map[string]string{"writing": "paused", "triage": "paused"}}, `both become "draft"`},
		{"timeouts of states merged", map[string]any{"timeouts": map[string]int{"writing": 1, "triage": 2}}, `both become "draft"`},
		{"context fields renamed onto one another", map[string]any{"context": map[string]string{"heading": "a", "title": "b"}}, `both become "title"`},
		{"payloads renamed onto one another", map[string]any{"extra": map[string]any{"payloads": map[string]any{"send": 1, "submit": 2}}}, `both become "submit"`},
		// Values of the wrong kind.
		{"a state that is not a string", map[string]any{"state": 5}, "cannot unmarshal number"},
		{"counters that are not an object", map[string]any{"counters": []int{1}}, "cannot unmarshal array"},
		{"state counters that are not counts", map[string]any{"stateCounters": map[string]any{"notes": "x"}}, "cannot unmarshal string"},
		{"remembered that is not a state", map[string]any{"remembered": map[string]int{"paused": 1}}, "cannot unmarshal number"},
		{"times that are not durations", map[string]any{"timeByState": map[string]string{"writing": "1m"}}, "cannot unmarshal string"},
		{"a context that is not an object", map[string]any{"context": "c"}, "cannot unmarshal string"},
		{"extra that is not an object", map[string]any{"extra": 1}, "cannot unmarshal number"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := d.migrateSnapshot(oldSnapshot(1, "writing", c.more))
			var se *SnapshotError
			if !errors.As(err, &se) || !errors.Is(err, ErrInvalidSnapshot) || got != nil {
				t.Fatalf("migrateSnapshot = %s, %#v; want a SnapshotError", got, err)
			}
			if se.Field != "(migration from "+mgOld+")" || !strings.Contains(se.Reason, c.reason) {
				t.Errorf("error %q (field %q), want %q", err, se.Field, c.reason)
			}
		})
	}
	// A state null is rewritten "" (no state of any spec): decoding still refuses it.
	got, err := d.migrateSnapshot(oldSnapshot(1, "writing", map[string]any{"state": json.RawMessage("null")}))
	if err != nil {
		t.Fatal(err)
	}
	var s tSnapshot
	if err := json.Unmarshal(got, &s); !errors.Is(err, ErrInvalidSnapshot) {
		t.Errorf("a null state migrated decodes: %v", err)
	}
}

// TestMigrateSnapshotNotJSON: what is not JSON is left as it is (decoding refuses it).
func TestMigrateSnapshotNotJSON(t *testing.T) {
	d := mgDef()
	b := []byte(`{"spec":"` + mgOld + `","state":`)
	if got, err := d.migrateSnapshot(b); err != nil || !bytes.Equal(got, b) {
		t.Errorf("migrateSnapshot(%s) = %s, %v; want it unchanged", b, got, err)
	}
	var snap tSnapshot
	if err := json.Unmarshal(b, &snap); err == nil {
		t.Errorf("decoding it: %+v", snap)
	}
}

// TestMigrateSnapshotQuotes: names are written back as JSON strings, whatever they hold.
func TestMigrateSnapshotQuotes(t *testing.T) {
	d := mgDef()
	old := oldSnapshot(1, "a\u007fb", nil) // DEL: printable for JSON, not for strconv.Quote
	got, err := d.migrateSnapshot(old)
	if err == nil && json.Valid(got) && jsonOf(t, got)["state"] == "a\u007fb" {
		return
	}
	if !errors.Is(err, ErrInvalidSnapshot) {
		t.Errorf("a state named %q migrates to %s, %T %v", "a\u007fb", got, err, err)
	}
}

func TestMigrateEntry(t *testing.T) {
	d := mgDef()
	t.Run("paired", func(t *testing.T) {
		b := oldEntry(2, "send", "writing", "checking", oSendWriting, map[string]any{
			"microsteps": []int{oNote, oSendWriting, -1},
			"limits":     map[string]int{"rejects": 2, "gone": 1},
			"timeouts":   map[string]time.Duration{"checking": time.Hour},
			"payload":    map[string]string{"title": "p"},
		})
		got, _, err := d.migrateEntry(b)
		if err != nil {
			t.Fatal(err)
		}
		want := jsonOf(t, b)
		// Migrated, it is of this format (LogEntry.UnmarshalJSON): id, kind, event.
		want["id"], want["kind"] = want["taskId"], want["event"]
		delete(want, "taskId")
		delete(want, "trigger")
		maps.Copy(want, map[string]any{
			"spec": mgNew, "event": "submit", "from": "draft", "to": "review", "transition": 0.0,
			"microsteps": []any{6.0, 0.0, -1.0}, "limits": map[string]any{"rejections": 2.0},
			"timeouts": map[string]any{"review": float64(time.Hour)}, "context": map[string]any{"title": "h", "n": 2.0, "reviewer": "bo"},
		})
		if g := jsonOf(t, got); !reflect.DeepEqual(g, want) {
			t.Errorf("migrated\n%s\nwant\n%s", got, snapJSON(t, want))
		}
		// It decodes as an entry of this spec.
		var e tEntryLog
		if err := json.Unmarshal(got, &e); err != nil || e.Spec != mgNew || e.Event != eSubmit || e.From != sDraft || e.To != sReview || e.Moved != nil {
			t.Errorf("decoded %+v, %v", e, err)
		}
	})
	t.Run("moved, its event gone", func(t *testing.T) {
		got, _, err := d.migrateEntry(oldEntry(1, "sort", "writing", "triage", oSortWriting, map[string]any{"payload": map[string]int{"x": 1}}))
		if err != nil {
			t.Fatal(err)
		}
		o := jsonOf(t, got)
		if _, ok := o["event"]; ok {
			t.Errorf("event %v kept", o["event"])
		}
		if _, ok := o["payload"]; ok {
			t.Errorf("payload %v kept", o["payload"])
		}
		if o["transition"] != -1.0 || !reflect.DeepEqual(o["moved"], map[string]any{"inc": []any{1.0}}) || o["from"] != "draft" || o["to"] != "draft" {
			t.Errorf("migrated %s", got)
		}
		var e tEntryLog
		if err := json.Unmarshal(got, &e); err != nil || e.Moved == nil || !reflect.DeepEqual(*e.Moved, Move{Inc: []int32{cComments}}) || e.Transition != -1 {
			t.Errorf("decoded %+v, %v", e, err)
		}
	})
	t.Run("moved, its event kept", func(t *testing.T) {
		got, _, err := d.migrateEntry(oldEntry(4, "note", "checking", "checking", oSortChecking, map[string]any{"payload": map[string]int{"x": 1}}))
		if err != nil {
			t.Fatal(err)
		}
		o := jsonOf(t, got)
		if o["event"] != "comment" || o["payload"] == nil || o["transition"] != -1.0 ||
			!reflect.DeepEqual(o["moved"], map[string]any{"inc": []any{3.0}, "internal": true}) {
			t.Errorf("migrated %s", got)
		}
	})
	t.Run("notes", func(t *testing.T) {
		// Entries of no transition (-1) and no event stay so.
		b := oldEntry(3, "", "checking", "checking", -1, map[string]any{"event": "TIMEOUT_WARNING", "trigger": nil})
		got, _, err := d.migrateEntry(b)
		if err != nil {
			t.Fatal(err)
		}
		if o := jsonOf(t, got); o["transition"] != -1.0 || o["moved"] != nil || o["from"] != "review" || o["event"] != nil || o["kind"] != "TIMEOUT_WARNING" {
			t.Errorf("migrated %s", got)
		}
	})
	t.Run("unchanged", func(t *testing.T) {
		for name, b := range map[string][]byte{
			"this spec":    bytes.Replace(oldEntry(1, "sort", "writing", "triage", 99, nil), []byte(mgOld), []byte(mgNew), 1),
			"another spec": bytes.Replace(oldEntry(1, "sort", "writing", "triage", 99, nil), []byte(mgOld), []byte("sha256:other"), 1),
		} {
			if got, _, err := d.migrateEntry(b); err != nil || !bytes.Equal(got, b) {
				t.Errorf("%s: %s, %v", name, got, err)
			}
		}
	})
	cases := []struct {
		name   string
		b      []byte
		reason string
	}{
		{"past the older spec's transitions", oldEntry(1, "send", "writing", "checking", 10, nil), "10 is not a transition of the older spec"},
		{"far past them", oldEntry(1, "send", "writing", "checking", 42, nil), "42 is not a transition of the older spec"},
		{"negative", oldEntry(1, "send", "writing", "checking", -2, nil), "-2 is not a transition of the older spec"},
		{"a microstep unpaired", oldEntry(1, "send", "writing", "checking", oSendWriting, map[string]any{"microsteps": []int{oHold}}), "transition 8 of the older spec has no counterpart"},
		{"a microstep out of range", oldEntry(1, "send", "writing", "checking", oSendWriting, map[string]any{"microsteps": []int{17}}), "17 is not a transition"},
		{"limits renamed onto one another", oldEntry(1, "send", "writing", "checking", oSendWriting, map[string]any{"limits": map[string]int{"rejects": 1, "rejections": 1}}), `both become "rejections"`},
		{"a transition that is not a number", oldEntry(1, "send", "writing", "checking", 0, map[string]any{"transition": "0"}), "cannot unmarshal string"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, _, err := d.migrateEntry(c.b)
			if err == nil || got != nil || !strings.Contains(err.Error(), c.reason) || !strings.HasPrefix(err.Error(), "migrating from "+mgOld+": ") {
				t.Errorf("migrateEntry = %s, %v; want %q", got, err, c.reason)
			}
		})
	}
}

// replayOld replays doc-1 of st into a new machine of d.
func replayOld(d *tDef, st Store) (*rig, error) {
	r := attach(d)
	return r, Replay(bg, r.m, st, "doc-1", nil)
}

// TestMigrateReplayLog: an older log replays, entry by entry, paired and moved.
func TestMigrateReplayLog(t *testing.T) {
	log := oldLog()
	cases := []struct {
		n             int // entries replayed
		state         tState
		counters      map[string]int
		stateCounters map[string]map[tState]int
		remembered    map[tState]tState
		timeByState   map[tState]time.Duration
		entered       time.Time
	}{
		// writing -sort-> triage, moved: comments in draft, the clock moves.
		{1, sDraft, nil, map[string]map[tState]int{"comments": {sDraft: 1}}, nil, map[tState]time.Duration{sDraft: time.Minute}, mgAt(1)},
		// triage -send-> checking is submit (comments reset on success).
		{2, sReview, map[string]int{"submits": 1}, nil, nil, map[tState]time.Duration{sDraft: 2 * time.Minute}, mgAt(2)},
		// checking -note-> checking is comment.
		{3, sReview, map[string]int{"submits": 1}, map[string]map[tState]int{"comments": {sReview: 1}}, nil, map[tState]time.Duration{sDraft: 2 * time.Minute}, mgAt(2)},
		// checking -sort-> checking, moved, internal: the clock stays, nothing reset.
		{4, sReview, map[string]int{"submits": 2}, map[string]map[tState]int{"comments": {sReview: 1}}, nil, map[tState]time.Duration{sDraft: 2 * time.Minute}, mgAt(2)},
		// checking -hold-> paused, moved: submits reset, comments reset on success,
		// paused remembers review.
		{5, sPaused, nil, nil, map[tState]tState{sPaused: sReview}, map[tState]time.Duration{sDraft: 2 * time.Minute, sReview: 3 * time.Minute}, mgAt(5)},
		// paused -resume-> back to review, by what the move remembered.
		{6, sReview, nil, nil, map[tState]tState{sPaused: sReview}, map[tState]time.Duration{sDraft: 2 * time.Minute, sReview: 3 * time.Minute, sPaused: time.Minute}, mgAt(6)},
	}
	for _, c := range cases {
		st := oldStore(t, mgOld, 0, nil, log[:c.n]...)
		r, err := replayOld(mgDef(), st)
		if err != nil {
			t.Fatalf("%d entries: %v", c.n, err)
		}
		s := r.m.Snapshot()
		if r.m.State() != c.state || r.m.Seq() != int64(c.n) || r.m.Migrated() != mgOld || !maps.Equal(s.Counters, c.counters) ||
			!reflect.DeepEqual(s.StateCounters, c.stateCounters) || !maps.Equal(s.Remembered, c.remembered) || !maps.Equal(s.TimeByState, c.timeByState) ||
			!s.EnteredAt.Equal(c.entered) || !s.CreatedAt.Equal(t0) || !s.UpdatedAt.Equal(mgAt(int64(c.n))) {
			t.Errorf("%d entries: %s, migrated from %q", c.n, snapJSON(t, s), r.m.Migrated())
		}
		if want := (tCtx{Title: "h", Reviewer: "bo", N: c.n}); r.m.Context != want {
			t.Errorf("%d entries: context %+v, want %+v", c.n, r.m.Context, want)
		}
		// The store still holds it under the older spec: nothing was committed.
		if l, err := st.Load(bg, tStoreName, "doc-1"); err != nil || l.Spec != mgOld {
			t.Errorf("%d entries: stored under %q, %v", c.n, l.Spec, err)
		}
	}
	// The history records the moved transitions as recorded, in the states they left.
	r, err := replayOld(mgDef(), oldStore(t, mgOld, 0, nil, log...))
	if err != nil {
		t.Fatal(err)
	}
	var path []string
	for _, h := range History(r.m) {
		path = append(path, h.From.String()+">"+h.To.String())
	}
	if want := "draft>draft draft>review review>review review>review review>paused paused>review"; strings.Join(path, " ") != want {
		t.Errorf("history %s, want %s", path, want)
	}
}

// TestMigrateReplaySnapshot: an older snapshot and the entries after it.
func TestMigrateReplaySnapshot(t *testing.T) {
	log := oldLog()
	snap := oldSnapshot(2, "checking", map[string]any{
		"counters":      map[string]int{"submits": 1, "gone": 3},
		"stateCounters": map[string]map[string]int{"notes": {"writing": 2, "triage": 1}},
		"timeByState":   map[string]time.Duration{"writing": time.Minute, "triage": time.Minute},
	})
	st := oldStore(t, mgOld, 2, snap, log[:4]...)
	r, err := replayOld(mgDef(), st)
	if err != nil {
		t.Fatal(err)
	}
	s := r.m.Snapshot()
	if r.m.State() != sReview || r.m.Seq() != 4 || r.m.Migrated() != mgOld || s.Counters["submits"] != 2 ||
		!reflect.DeepEqual(s.StateCounters, map[string]map[tState]int{"comments": {sDraft: 3, sReview: 1}}) || s.TimeByState[sDraft] != 2*time.Minute {
		t.Errorf("replayed %s", snapJSON(t, s))
	}
}

// TestMigrateReplayRefuses: what the migration cannot place, and moves the machine cannot
// replay, refuse Replay with a LogError naming the entry; the machine does not panic.
func TestMigrateReplayRefuses(t *testing.T) {
	log := oldLog()
	cases := []struct {
		name    string
		change  []func(*Migration)
		entries [][]byte
		reason  string
	}{
		{"unpaired without a move", nil, [][]byte{log[0], log[1], oldEntry(3, "sort", "checking", "approved", oSortApprove, nil)},
			"review -> approved on no event of this spec is not transition -1 from review"},
		{"a transition out of range", nil, [][]byte{log[0], log[1], oldEntry(3, "note", "checking", "checking", 10, nil)},
			"10 is not a transition of the older spec"},
		{"an event gone on a paired transition", nil, [][]byte{log[0], log[1], oldEntry(3, "sort", "checking", "checking", oNote, nil)},
			"review -> review on no event of this spec is not transition 6 from review"},
		{"a move from another state", nil, [][]byte{log[0], log[1], oldEntry(3, "sort", "writing", "triage", oSortWriting, nil)},
			"draft -> draft, migrated, in review"},
		{"a move past the counters", []func(*Migration){func(mg *Migration) { mg.Moves[oSortChecking].Inc = []int32{4} }},
			[][]byte{log[0], log[1], oldEntry(3, "sort", "checking", "checking", oSortChecking, nil)}, "4 is not a counter"},
		{"a move resetting a negative counter", []func(*Migration){func(mg *Migration) { mg.Moves[oHold].Reset = []int32{-1} }},
			[][]byte{log[0], log[1], oldEntry(3, "hold", "checking", "paused", oHold, nil)}, "-1 is not a counter"},
		{"an internal move that moves", nil, [][]byte{log[0], log[1], oldEntry(3, "sort", "checking", "paused", oSortChecking, nil)},
			"review -> paused, migrated, is not internal"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			st := oldStore(t, mgOld, 0, nil, c.entries...)
			r, err := replayOld(mgDef(c.change...), st)
			var le *LogError
			if !errors.As(err, &le) || !errors.Is(err, ErrInvalidLog) || le.Seq != 3 || le.ID != "doc-1" || !strings.Contains(le.Err.Error(), c.reason) {
				t.Fatalf("Replay = %v; want a LogError at 3: %s", err, c.reason)
			}
			if !strings.Contains(err.Error(), "seq 3") {
				t.Errorf("%q does not name the entry", err)
			}
			// Unusable, but it answers without panicking.
			if r.m.Migrated() != "" {
				t.Errorf("a machine Replay refused says it migrated from %q", r.m.Migrated())
			}
			_ = r.m.Snapshot()
			_ = r.m.State()
			_, _ = r.m.FireWith(bg, eComment, tIn{})
			_, _ = r.m.Migrate(bg)
		})
	}
}

// TestMigrateReplayUnknownSpec: an instance stored under a spec the machine has no
// migration from is a SpecMismatchError naming both.
func TestMigrateReplayUnknownSpec(t *testing.T) {
	const other = "sha256:other"
	for name, d := range map[string]*tDef{"with migrations": mgDef(), "without": richDef(func(d *tDef) { d.Spec.Fingerprint = mgNew })} {
		st := oldStore(t, other, 0, nil, bytes.Replace(oldLog()[0], []byte(mgOld), []byte(other), 1))
		_, err := replayOld(d, st)
		var se *SpecMismatchError
		if !errors.As(err, &se) || !errors.Is(err, ErrSpecMismatch) || se.Stored != other || se.Spec != mgNew || se.ID != "doc-1" || se.Machine != tStoreName ||
			!strings.Contains(err.Error(), other) || !strings.Contains(err.Error(), mgNew) {
			t.Errorf("%s: Replay = %#v", name, err)
		}
	}
	// An entry of a third spec in a log of the older one: a LogError wrapping the mismatch.
	// (Its names are this spec's: only its spec is wrong.)
	st := oldStore(t, mgOld, 0, nil, oldLog()[0], bytes.Replace(oldEntry(2, "submit", "draft", "review", 0, nil), []byte(mgOld), []byte(other), 1))
	_, err := replayOld(mgDef(), st)
	var le *LogError
	var se *SpecMismatchError
	if !errors.As(err, &le) || le.Seq != 2 || !errors.As(err, &se) || se.Stored != other || se.Spec != mgNew {
		t.Errorf("Replay = %v", err)
	}
}

// migratedRig replays the first n entries of the older log into a machine with durable
// timers, and gives it a store that fails as told.
func migratedRig(t *testing.T, n int) (*rig, *failStore) {
	t.Helper()
	st := oldStore(t, mgOld, 0, nil, oldLog()[:n]...)
	r, err := replayOld(richDef(withTimers, withMigration()), st)
	if err != nil {
		t.Fatal(err)
	}
	fs := &failStore{tStore: st}
	r.m.SetStore(fs)
	return r, fs
}

// TestMigrateCommit: the first commit after a migrated Replay stores the instance under
// this spec, with a snapshot, its counters and its deadlines; one that fails leaves the
// machine migrating, so that the next carries the migration again.
func TestMigrateCommit(t *testing.T) {
	r, fs := migratedRig(t, 2) // in review since mgAt(2)
	dls := r.m.deadlines(sReview, mgAt(2))
	if len(dls) != 3 {
		t.Fatalf("review's deadlines: %v", dls)
	}
	check := func(c Commit, what string) {
		t.Helper()
		if c.Migrated != mgOld || c.Spec != mgNew || c.Snapshot == nil || !c.Rearm || !reflect.DeepEqual(c.Deadlines, dls) || c.CountersKept ||
			c.Version != 2 || c.Entry.Seq != 3 {
			t.Errorf("%s: migrated %q, spec %q, snapshot %t, rearm %t %v, counters kept %t, version %d", what, c.Migrated, c.Spec, c.Snapshot != nil, c.Rearm, c.Deadlines, c.CountersKept, c.Version)
		}
		var s tSnapshot
		if err := json.Unmarshal(c.Snapshot, &s); err != nil || s.Spec != mgNew || s.Seq != 3 || s.State != sReview || s.Context.Reviewer != "bo" ||
			!reflect.DeepEqual(s.StateCounters, map[string]map[tState]int{"comments": {sReview: 1}}) {
			t.Errorf("%s: snapshot %s, %v", what, c.Snapshot, err)
		}
		if !reflect.DeepEqual(c.Counters, []CounterValue{{Name: "comments", State: "review", Value: 1}, {Name: "submits", Value: 1}}) {
			t.Errorf("%s: counters %v", what, c.Counters)
		}
	}
	// An internal transition: it would rearm nothing, nor take a snapshot, nor change the
	// counters... but for the migration.
	fs.commitErr = errors.New("refused")
	if _, err := r.m.FireWith(bg, eComment, tIn{At: mgAt(10)}); err == nil {
		t.Fatal("the commit did not fail")
	}
	if len(fs.commits) != 1 {
		t.Fatalf("%d commits", len(fs.commits))
	}
	check(fs.commits[0], "refused")
	if r.m.Migrated() != mgOld || r.m.Seq() != 2 || r.m.State() != sReview {
		t.Errorf("after a refused commit: migrated from %q at %d in %s", r.m.Migrated(), r.m.Seq(), r.m.State())
	}
	fs.commitErr = nil
	if _, err := r.m.FireWith(bg, eComment, tIn{At: mgAt(11)}); err != nil {
		t.Fatal(err)
	}
	check(fs.commits[1], "retried")
	if r.m.Migrated() != "" {
		t.Errorf("migrating from %q after the commit", r.m.Migrated())
	}
	if l, err := fs.Load(bg, tStoreName, "doc-1"); err != nil || l.Spec != mgNew || l.SnapshotSeq != 3 {
		t.Errorf("stored under %q, snapshot at %d, %v", l.Spec, l.SnapshotSeq, err)
	}
	// The next commit is an ordinary one.
	if _, err := r.m.FireWith(bg, eComment, tIn{At: mgAt(12)}); err != nil {
		t.Fatal(err)
	}
	if c := fs.commits[2]; c.Migrated != "" || c.Snapshot != nil || c.Rearm || c.CountersKept {
		t.Errorf("after the migration: migrated %q, snapshot %t, rearm %t, counters kept %t", c.Migrated, c.Snapshot != nil, c.Rearm, c.CountersKept)
	}
	// Loaded again: of this spec, from the migration's snapshot on.
	l, err := replayOld(richDef(withTimers, withMigration()), fs.tStore)
	if err != nil || l.m.Migrated() != "" || l.m.Seq() != 4 || l.m.State() != sReview || l.m.Context.Reviewer != "bo" || Count(l.m, cComments, sReview) != 2 {
		t.Errorf("reloaded: %v, migrated %q, seq %d, %s", err, l.m.Migrated(), l.m.Seq(), snapJSON(t, l.m.Snapshot()))
	}
}

// TestMigrateCommitEntering: a commit that enters a state rearms that state's deadlines,
// migration or not.
func TestMigrateCommitEntering(t *testing.T) {
	r, fs := migratedRig(t, 2)
	r.m.Context.Reviewer = "bo"
	if _, err := r.m.FireWith(bg, ePause, tIn{At: mgAt(10)}); err != nil {
		t.Fatal(err)
	}
	if c := fs.commits[0]; c.Migrated != mgOld || !c.Rearm || len(c.Deadlines) != 0 || c.Snapshot == nil || c.CountersKept {
		t.Errorf("entering paused: migrated %q, rearm %t %v, snapshot %t", c.Migrated, c.Rearm, c.Deadlines, c.Snapshot != nil)
	}
}

func TestMigrateMigrate(t *testing.T) {
	t.Run("without a store", func(t *testing.T) {
		st := oldStore(t, mgOld, 0, nil, oldLog()[:2]...)
		r, err := replayOld(mgDef(), st)
		if err != nil {
			t.Fatal(err)
		}
		if ok, err := r.m.Migrate(bg); ok || !errors.Is(err, ErrNoStore) {
			t.Errorf("Migrate = %v, %v; want ErrNoStore", ok, err)
		}
		if r.m.Migrated() != mgOld || r.m.Seq() != 2 {
			t.Errorf("migrated from %q at %d", r.m.Migrated(), r.m.Seq())
		}
		// Not migrated, without a store: nothing to do.
		if ok, err := attach(mgDef()).m.Migrate(bg); ok || err != nil {
			t.Errorf("Migrate of a new machine = %v, %v", ok, err)
		}
	})
	t.Run("not migrated", func(t *testing.T) {
		st := newStore()
		r := attach(mgDef())
		fs := &failStore{tStore: st}
		r.m.SetStore(fs)
		r.walk(t, eSubmit)
		l, err := replayOld(mgDef(), st)
		if err != nil || l.m.Migrated() != "" {
			t.Fatalf("Replay: %v, migrated from %q", err, l.m.Migrated())
		}
		l.m.SetStore(fs)
		n := len(fs.commits)
		if ok, err := l.m.Migrate(bg); ok || err != nil || len(fs.commits) != n || l.m.Seq() != 1 {
			t.Errorf("Migrate = %v, %v; %d commits, seq %d", ok, err, len(fs.commits)-n, l.m.Seq())
		}
	})
	t.Run("migrated", func(t *testing.T) {
		r, fs := migratedRig(t, 2)
		fs.commitErr = errors.New("refused")
		if ok, err := r.m.Migrate(bg); ok || err == nil {
			t.Fatalf("Migrate with a store refusing = %v, %v", ok, err)
		}
		if r.m.Migrated() != mgOld || r.m.Seq() != 2 {
			t.Errorf("after a refused Migrate: migrated from %q at %d", r.m.Migrated(), r.m.Seq())
		}
		fs.commitErr = nil
		if ok, err := r.m.Migrate(bg); !ok || err != nil {
			t.Fatalf("Migrate = %v, %v", ok, err)
		}
		for i, c := range fs.commits {
			if c.Migrated != mgOld || c.Entry.Kind != KindMigrated || c.Entry.Event != "" || c.Snapshot == nil || !c.Rearm || len(c.Deadlines) != 3 || c.CountersKept || c.Entry.Seq != 3 {
				t.Errorf("commit %d: %+v", i, c)
			}
		}
		if r.m.Migrated() != "" || r.m.Seq() != 3 {
			t.Errorf("after Migrate: migrated from %q at %d", r.m.Migrated(), r.m.Seq())
		}
		n := len(fs.commits)
		if ok, err := r.m.Migrate(bg); ok || err != nil || len(fs.commits) != n {
			t.Errorf("Migrate again = %v, %v, %d commits", ok, err, len(fs.commits)-n)
		}
		log, err := fs.logT(bg, "doc-1", 2) // the entries before it are the older spec's
		if err != nil || len(log) != 1 {
			t.Fatal(log, err)
		}
		if e := log[0]; e.Kind != KindMigrated || e.Spec != mgNew || e.Metadata["from"] != mgOld || e.From != sReview || e.To != sReview || e.Transition != -1 {
			t.Errorf("the migration's entry %+v", e)
		}
		// It replays as a note.
		l, err := replayOld(richDef(withTimers, withMigration()), fs.tStore)
		if err != nil || l.m.Seq() != 3 || l.m.Migrated() != "" || l.m.State() != sReview {
			t.Errorf("reloaded: %v at %d, migrated from %q", err, l.m.Seq(), l.m.Migrated())
		}
	})
}

// mgState is a state type of its own, for the registry (which is keyed by the state type
// and kept for the process).
type mgState uint8

func (s mgState) String() string                { return tStateNames.String(int(s)) }
func (s mgState) IsTerminal() bool              { return false }
func (s mgState) MarshalText() ([]byte, error)  { return tStateNames.Marshal(int(s)) }
func (s *mgState) UnmarshalText(b []byte) error { return Unmarshal(&tStateNames, b, s) }

var mgRegistered = RegisterMigrations(&Def[mgState, tEvent, tRole]{
	Spec:       &Spec{Package: "review", Machine: "Registered", Fingerprint: mgNew},
	Migrations: []Migration{oldMigration()},
})

func TestMigrateRegistered(t *testing.T) {
	type snapshot = Snapshot[mgState, tCtx, None]
	if !mgRegistered {
		t.Fatal("RegisterMigrations returned false")
	}
	old := oldSnapshot(3, "checking", map[string]any{
		"counters": map[string]int{"rejects": 2, "gone": 1}, "remembered": map[string]string{"paused": "triage"},
	})
	var s snapshot
	if err := json.Unmarshal(old, &s); err != nil {
		t.Fatal(err)
	}
	if s.Spec != mgNew || s.State != mgState(sReview) || s.Seq != 3 || !maps.Equal(s.Counters, map[string]int{"rejections": 2}) ||
		!maps.Equal(s.Remembered, map[mgState]mgState{mgState(sPaused): mgState(sDraft)}) || s.Context != (tCtx{Title: "h", Reviewer: "bo"}) {
		t.Errorf("decoded %+v", s)
	}
	// A snapshot of this spec decodes as it would without the registry.
	cur, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	var got snapshot
	var plain snapshotFields[mgState, tCtx, None]
	if err := json.Unmarshal(cur, &got); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(cur, &plain); err != nil || !reflect.DeepEqual(got, snapshot(plain)) || !reflect.DeepEqual(got, s) {
		t.Errorf("decoded %+v, want %+v (%v)", got, plain, err)
	}
	// What the migration refuses is a SnapshotError.
	bad := oldSnapshot(3, "checking", map[string]any{"counters": map[string]int{"rejects": 2, "rejections": 1}})
	if err := json.Unmarshal(bad, &s); !errors.Is(err, ErrInvalidSnapshot) {
		t.Errorf("decoding a snapshot the migration refuses: %v", err)
	}
	// A state type nothing registered for decodes the older spec's snapshot unmigrated
	// (and refuses its states, which are not its own).
	var other tSnapshot
	if err := json.Unmarshal(oldSnapshot(3, "draft", nil), &other); err != nil || other.Spec != mgOld {
		t.Errorf("unregistered: %+v, %v", other, err)
	}
}

// TestMigrateDecodeEntryAllocs measures what decoding a log entry costs, migrations or
// not. A Def without migrations decodes as it did before them: exactly what decoding the
// JSON costs.
func TestMigrateDecodeEntryAllocs(t *testing.T) {
	st := newStore()
	w := attach(mgDef())
	w.m.SetStore(st)
	w.walk(t, eSubmit)
	es, err := st.Log(bg, tStoreName, "doc-1", 0)
	if err != nil || len(es) != 1 {
		t.Fatal(es, err)
	}
	cur := es[0]
	without := attach(richDef(func(d *tDef) { d.Spec.Fingerprint = mgNew })).m
	with := attach(mgDef()).m
	oldData := oldEntry(1, "send", "writing", "checking", oSendWriting, nil)
	old := Entry{Seq: 1, Kind: KindTransition, Data: oldData}
	measure := func(m *tMachine, se Entry) float64 {
		if _, err := m.decodeEntry(&se); err != nil {
			t.Fatal(err)
		}
		return testing.AllocsPerRun(200, func() { _, _ = m.decodeEntry(&se) })
	}
	plain := testing.AllocsPerRun(200, func() {
		var e tEntryLog
		_ = json.Unmarshal(cur.Data, &e)
	})
	a, b, c := measure(without, cur), measure(with, cur), measure(with, old)
	t.Logf("allocations: json.Unmarshal %v; decodeEntry of an entry of this spec: without migrations %v, with %v; of an older entry, migrated: %v", plain, a, b, c)
	if a != plain {
		t.Errorf("decodeEntry without migrations: %v allocations, json.Unmarshal %v", a, plain)
	}
	// An entry of this spec is recognised without decoding it twice.
	if b != a || c <= b {
		t.Errorf("allocations without migrations %v, with %v, migrating %v", a, b, c)
	}
}

// TestMigrateWindowBeforeSnapshot: "an entry of [a transition with no counterpart] cannot
// be replayed (a snapshot taken after it can)". A machine that keeps a history or key
// window reads the entries before the snapshot back, decoding them.
func TestMigrateWindowBeforeSnapshot(t *testing.T) {
	log := [][]byte{oldLog()[0], oldLog()[1], oldEntry(3, "sort", "checking", "approved", oSortApprove, nil)}
	st := oldStore(t, mgOld, 3, oldSnapshot(3, "approved", nil), log...)
	r, err := replayOld(mgDef(), st) // richDef keeps a history and keys: it reads entries 1 to 3 back
	if err == nil {
		if r.m.State() != sApproved || r.m.Migrated() != mgOld {
			t.Errorf("replayed to %s, migrated from %q", r.m.State(), r.m.Migrated())
		}
		return
	}
	// Without windows the snapshot is enough.
	noWindows, err2 := replayOld(richDef(withMigration(), func(d *tDef) { d.History, d.Idempotent = false, false }), st)
	if err2 != nil || noWindows.m.State() != sApproved {
		t.Fatalf("without windows: %v", err2)
	}
	var le *LogError
	if errors.As(err, &le) && le.Seq == 3 {
		t.Errorf("Replay of an older instance whose snapshot (seq 3) follows a transition with no counterpart and no move = %v; "+
			"want it replayed from the snapshot (it is, without history or key windows)", err)
	}
	t.Errorf("Replay = %v", err)
}

// TestMigrateMovedKeys: a moved entry whose event is gone keeps its idempotency key; the
// key was not used for any event of this spec, so firing one with it is no repeat of it.
func TestMigrateMovedKeys(t *testing.T) {
	log := [][]byte{oldEntry(1, "sort", "writing", "triage", oSortWriting, map[string]any{"idempotencyKey": "k-sort"})}
	st := oldStore(t, mgOld, 0, nil, log...)
	r, err := replayOld(mgDef(), st)
	if err != nil {
		t.Fatal(err)
	}
	r.m.SetStore(st)
	r.m.Context.Title = "t"
	got, err := r.m.FireWith(bg, eSubmit, tIn{Key: "k-sort"})
	if err != nil && !errors.Is(err, ErrIdempotencyConflict) {
		t.Fatal(err)
	}
	if err == nil && got == sDraft && r.m.Seq() == 1 {
		t.Errorf("submit with the key of a moved entry whose event is gone (sort) = %s, nil, not fired: "+
			"the entry decodes with the zero event (%s), which the key window and the history record", got, tEvent(0))
	}
}

// TestMigrateMovedLimits: a move that increments a counter past the limit this spec
// gives it. A paired transition doing so is refused (or redirected) on replay; a move is
// replayed as recorded, leaving a machine whose snapshot Restore refuses.
func TestMigrateMovedLimits(t *testing.T) {
	inc := func(mg *Migration) { mg.Moves[oSortChecking] = Move{Internal: true, Inc: []int32{cRejections}} } // rejections: limit 3
	log := [][]byte{oldLog()[0], oldLog()[1]}
	for seq := int64(3); seq <= 5; seq++ {
		log = append(log, oldEntry(seq, "sort", "checking", "checking", oSortChecking, nil))
	}
	st := oldStore(t, mgOld, 0, nil, log...)
	d := richDef(withMigration(inc))
	r, err := replayOld(d, st)
	if err != nil {
		return // refused: fine
	}
	snap := r.m.Snapshot()
	rerr := Restore(attach(d).m, snap, nil)
	r.m.SetStore(st)
	_, merr := r.m.Migrate(bg)
	_, lerr := replayOld(d, st)
	if rerr != nil {
		t.Errorf("Replay accepts moves taking rejections to %d (limit 3); its snapshot does not restore (%v); Migrate = %v, and Replay after it = %v",
			snap.Counters["rejections"], rerr, merr, lerr)
	}
}
