package fsmrt

import (
	"bytes"
	"encoding/json"
	"errors"
	"log/slog"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// firePayload fires e as the generated Fire<Event> method does: it writes the payload into
// the extra data, then calls FirePayload with the extra data before.
func firePayload(r *rig, e tEvent, in tIn, write func(x *tExtra)) (tState, error) {
	prev := *Extra(r.m)
	write(Extra(r.m))
	return FirePayload(bg, r.m, e, in, prev)
}

// payloadRefusal checks that err is the refusal of e in state s for an invalid payload.
func payloadRefusal(t *testing.T, err error, s tState, e tEvent, errs []FieldError) *ValidationError[tState, tEvent] {
	t.Helper()
	var ve *ValidationError[tState, tEvent]
	if !errors.As(err, &ve) || !ve.Payload || ve.State != s || ve.Event != e || ve.Target != s || !reflect.DeepEqual(ve.Errors, errs) {
		t.Fatalf("error %#v, want a ValidationError of the payload of %s in %s", err, e, s)
	}
	if !errors.Is(err, ErrValidation) || !errors.Is(err, ErrRefused) || ve.Reason() != "payload" {
		t.Errorf("errors.Is or Reason does not match: %v, %q", err, ve.Reason())
	}
	return ve
}

func TestEnginePayloadFire(t *testing.T) {
	t.Run("a zero payload that breaks its constraints", func(t *testing.T) {
		r := newRig(withExtras)
		Extra(r.m).Submit.Title = "before"
		for _, fire := range []func() (tState, error){
			func() (tState, error) { return r.m.Fire(bg, eSubmit) },
			func() (tState, error) { return r.m.FireWith(bg, eSubmit, tIn{Role: rAdmin}) },
		} {
			r.ops.reset()
			got, err := fire()
			if got != sDraft || r.m.State() != sDraft || r.m.Seq() != 0 {
				t.Errorf("submit = %s (state %s, seq %d), want draft unchanged", got, r.m.State(), r.m.Seq())
			}
			ve := payloadRefusal(t, err, sDraft, eSubmit, []FieldError{{"title", "required"}})
			// Allowed lists submit: with a valid payload, it would be.
			if !slices.Equal(ve.Allowed, []tEvent{eSubmit, ePause, eComment}) {
				t.Errorf("Allowed = %v", ve.Allowed)
			}
			if want := "review: invalid payload for submit: title: required"; err.Error() != want {
				t.Errorf("error %q, want %q", err, want)
			}
			// The refusal restores the payload before, and runs nothing.
			if Extra(r.m).Submit.Title != "before" || len(r.ops.acts) != 0 {
				t.Errorf("after the refusal: payload %+v, actions %v", Extra(r.m).Submit, r.ops.acts)
			}
		}
	})
	t.Run("in a state that does not accept the event", func(t *testing.T) {
		r := newRig(withExtras)
		r.m.Context.Title = "t"
		r.walk(t, eComment, ePause)
		Extra(r.m).Submit.Title = "before"
		got, err := r.m.Fire(bg, eSubmit)
		var it *InvalidTransitionError[tState, tEvent]
		if got != sPaused || !errors.As(err, &it) || it.State != sPaused || it.Event != eSubmit {
			t.Fatalf("submit in paused = %s, %#v; want an InvalidTransitionError", got, err)
		}
		// Neither does FirePayload validate the payload there.
		got, err = firePayload(r, eReject, tIn{}, func(x *tExtra) { x.Reject.Severity = 9 })
		if got != sPaused || !errors.As(err, &it) || it.Event != eReject {
			t.Fatalf("reject in paused = %s, %#v; want an InvalidTransitionError", got, err)
		}
		if x := *Extra(r.m); x.Submit.Title != "before" || x.Reject.Severity != 0 {
			t.Errorf("the refusals changed the payloads: %+v", x)
		}
		// An event out of range is refused as such too.
		if _, err := firePayload(r, numEvents, tIn{}, func(x *tExtra) { x.Reject.Severity = 9 }); !errors.As(err, &it) || Extra(r.m).Reject.Severity != 0 {
			t.Errorf("an event out of range: %v, %+v", err, *Extra(r.m))
		}
	})
	t.Run("a zero payload that holds", func(t *testing.T) {
		r := newRig(withExtras)
		st := newStore()
		r.m.SetStore(st)
		r.walk(t, eComment)
		if _, err := firePayload(r, eSubmit, tIn{}, func(x *tExtra) { x.Submit.Title = "T" }); err != nil {
			t.Fatal(err)
		}
		Extra(r.m).Reject.Severity = 4
		if got := r.fire(t, eReject, tIn{}); got != sDraft {
			t.Fatalf("reject = %s", got)
		}
		if x := *Extra(r.m); x.Reject.Severity != 0 || x.Submit.Title != "T" {
			t.Errorf("Fire did not fire reject with the zero payload: %+v", x)
		}
		log := logOf(t, st)
		if string(log[2].Payload) != `{"severity":0}` {
			t.Errorf("reject's entry has payload %s", log[2].Payload)
		}
	})
	t.Run("FirePayload", func(t *testing.T) {
		r := newRig(withExtras)
		st := newStore()
		r.m.SetStore(st)
		var buf bytes.Buffer
		r.m.SetLogger(slog.New(slog.NewTextHandler(&buf, nil)))
		// An invalid payload is refused, logged, and the payload before is restored.
		got, err := firePayload(r, eSubmit, tIn{}, func(x *tExtra) { x.Submit.Title = "" })
		if got != sDraft {
			t.Errorf("submit = %s", got)
		}
		payloadRefusal(t, err, sDraft, eSubmit, []FieldError{{"title", "required"}})
		if line := buf.String(); !strings.Contains(line, "level=WARN") || !strings.Contains(line, `msg="event refused"`) || strings.Count(line, "\n") != 1 ||
			!strings.Contains(line, `error="review: invalid payload for submit: title: required"`) {
			t.Errorf("log %q", line)
		}
		// A valid one fires and stays.
		if got, err := firePayload(r, eSubmit, tIn{Key: "k1"}, func(x *tExtra) { x.Submit.Title = "T" }); got != sReview || err != nil {
			t.Fatalf("submit = %s, %v", got, err)
		}
		if Extra(r.m).Submit.Title != "T" {
			t.Errorf("payload %+v", Extra(r.m).Submit)
		}
		// Again with the key: the first result, nothing fired, the first payload kept.
		if got, err := firePayload(r, eSubmit, tIn{Key: "k1"}, func(x *tExtra) { x.Submit.Title = "again" }); got != sReview || err != nil || r.m.Seq() != 1 {
			t.Fatalf("submit again = %s, %v, seq %d", got, err, r.m.Seq())
		}
		if Extra(r.m).Submit.Title != "T" {
			t.Errorf("a transition not repeated changed the payload: %+v", Extra(r.m).Submit)
		}
		// A retry with the key and a payload that would be refused gets the first result
		// too: the key answers before the payload is looked at.
		if got, err := firePayload(r, eSubmit, tIn{Key: "k1"}, func(x *tExtra) { x.Submit.Title = "" }); got != sReview || err != nil || r.m.Seq() != 1 {
			t.Fatalf("submit again with an invalid payload = %s, %v, seq %d", got, err, r.m.Seq())
		}
		if Extra(r.m).Submit.Title != "T" {
			t.Errorf("a retry changed the payload: %+v", Extra(r.m).Submit)
		}
		// A valid payload refused for another reason is restored too.
		if _, err := firePayload(r, eReject, tIn{Key: "k1"}, func(x *tExtra) { x.Reject.Severity = 2 }); !errors.Is(err, ErrIdempotencyConflict) {
			t.Fatalf("reject with k1: %v", err)
		}
		if Extra(r.m).Reject.Severity != 0 {
			t.Errorf("a refused event left its payload: %+v", Extra(r.m).Reject)
		}
		got, err = firePayload(r, eReject, tIn{}, func(x *tExtra) { x.Reject.Severity = 6 })
		if got != sReview {
			t.Errorf("reject = %s", got)
		}
		payloadRefusal(t, err, sReview, eReject, []FieldError{{"severity", "must be from 0 to 5"}})
		if got, err := firePayload(r, eReject, tIn{}, func(x *tExtra) { x.Reject.Severity = 5 }); got != sDraft || err != nil {
			t.Fatalf("reject = %s, %v", got, err)
		}
		log := logOf(t, st)
		if len(log) != 2 || string(log[0].Payload) != `{"title":"T"}` || string(log[1].Payload) != `{"severity":5}` {
			t.Fatalf("log %+v", log)
		}
		// A transition of an event without payload records none.
		r.walk(t, eComment)
		if log := logOf(t, st); log[2].Payload != nil {
			t.Errorf("comment's entry has payload %s", log[2].Payload)
		}
	})
}

func TestEnginePoliciesAndPayloadsReplay(t *testing.T) {
	r := newRig(withExtras)
	st := newStore()
	r.m.SetStore(st)
	r.m.Context.Reviewer = "bo"
	r.ops.guards[gOK] = true
	if _, err := firePayload(r, eSubmit, tIn{}, func(x *tExtra) { x.Submit.Title = "T" }); err != nil {
		t.Fatal(err)
	}
	// The editors' policy is off: an editor may not approve.
	if _, err := r.m.FireWith(bg, eApprove, tIn{Role: rEditor}); !errors.Is(err, ErrPermission) {
		t.Fatalf("approve as editor without the policy: %v", err)
	}
	Extra(r.m).Policies.Editors = true
	if !r.m.CanWith(bg, eApprove, tIn{Role: rEditor}) {
		t.Fatal("an editor may not approve with the policy")
	}
	r.walk(t, eComment)
	log := logOf(t, st)
	if len(log) != 2 || string(log[0].Policies) != `{"editors":false}` || string(log[1].Policies) != `{"editors":true}` {
		t.Fatalf("log %+v", log)
	}
	for _, from := range []string{"the log", "a snapshot"} {
		t.Run("from "+from, func(t *testing.T) {
			if from == "a snapshot" {
				r.fire(t, eApprove, tIn{Role: rEditor}) // checkpoint 0: a snapshot
				Extra(r.m).Policies.Editors = false
				r.walk(t, eRework) // checkpoint 1
				Extra(r.m).Policies.Editors = true
				if _, err := firePayload(r, eSubmit, tIn{}, func(x *tExtra) { x.Submit.Title = "U" }); err != nil {
					t.Fatal(err)
				}
				if s := loadSnapshot(t, st); s.Seq != 4 || s.Extra.Policies.Editors {
					t.Fatalf("snapshot at %d: %+v", s.Seq, s.Extra)
				}
			}
			r2 := attach(r.d)
			r2.ops.guards[gOK] = true
			if err := Replay(bg, r2.m, st, "doc-1", nil); err != nil {
				t.Fatal(err)
			}
			if got, want := snapJSON(t, r2.m.Snapshot()), snapJSON(t, r.m.Snapshot()); got != want {
				t.Errorf("replayed\n%s\nwant\n%s", got, want)
			}
			if !Extra(r2.m).Policies.Editors || !r2.m.CanWith(bg, eApprove, tIn{Role: rEditor}) {
				t.Error("the replayed machine lost the policies")
			}
		})
	}
	t.Run("an entry without policies leaves them", func(t *testing.T) {
		r := newRig(withExtras)
		Extra(r.m).Policies.Editors = true
		fs := &fixedStore{log: []tEntryLog{{Seq: 1, Timestamp: t0, Kind: KindTransition, Event: eComment, From: sDraft, To: sDraft, Transition: 6}}}
		if err := Replay(bg, r.m, fs, "doc-1", nil); err != nil {
			t.Fatal(err)
		}
		if !Extra(r.m).Policies.Editors {
			t.Error("the policies were reset")
		}
	})
	t.Run("refused", func(t *testing.T) {
		submit := func(change func(*tEntryLog)) *fixedStore {
			e := tEntryLog{Seq: 1, Timestamp: t0, Kind: KindTransition, Event: eSubmit, From: sDraft, To: sReview, Transition: 0,
				Payload: json.RawMessage(`{"title":"T"}`), Policies: json.RawMessage(`{"editors":true}`)}
			change(&e)
			return &fixedStore{log: []tEntryLog{e}}
		}
		for _, c := range []struct {
			name   string
			store  *fixedStore
			reason string
		}{
			{"policies that do not decode", submit(func(e *tEntryLog) { e.Policies = json.RawMessage(`{"editors":"yes"}`) }), "policies: json: cannot unmarshal string"},
			{"a payload that does not decode", submit(func(e *tEntryLog) { e.Payload = json.RawMessage(`{"title":5}`) }), "payload: json: cannot unmarshal number"},
			{"no payload", submit(func(e *tEntryLog) { e.Payload = nil }), "payload: unexpected end of JSON input"},
			{"an invalid payload", submit(func(e *tEntryLog) { e.Payload = json.RawMessage(`{"title":""}`) }), "invalid payload: title: required"},
		} {
			t.Run(c.name, func(t *testing.T) {
				r := newRig(withExtras)
				err := Replay(bg, r.m, c.store, "doc-1", nil)
				var le *LogError
				if !errors.As(err, &le) || le.Seq != 1 || !strings.Contains(le.Err.Error(), c.reason) || !errors.Is(err, ErrInvalidLog) {
					t.Errorf("Replay = %v, want a LogError: %s", err, c.reason)
				}
			})
		}
		// The same entry replays when it is right.
		r := newRig(withExtras)
		if err := Replay(bg, r.m, submit(func(*tEntryLog) {}), "doc-1", nil); err != nil {
			t.Fatal(err)
		}
		if x := *Extra(r.m); x.Submit.Title != "T" || !x.Policies.Editors {
			t.Errorf("replayed extra data %+v", x)
		}
	})
}

func TestEngineRestorePayloads(t *testing.T) {
	for _, c := range []struct {
		name          string
		extra         tExtra
		field, reason string // "" when restored
	}{
		{"zero payloads, one of which breaks its constraints", tExtra{}, "", ""},
		{"valid payloads", tExtra{Submit: tSubmitPayload{Title: "T"}, Reject: tRejectPayload{Severity: 5}}, "", ""},
		{"a payload that breaks its constraints", tExtra{Submit: tSubmitPayload{Title: "T"}, Reject: tRejectPayload{Severity: 9}}, "extra.payloads.reject", "severity: must be from 0 to 5"},
		{"a negative one", tExtra{Reject: tRejectPayload{Severity: -1}}, "extra.payloads.reject", "severity: must be from 0 to 5"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := newRig(withExtras)
			err := Restore(r.m, tSnapshot{Version: 1, Seq: 2, State: sReview, Extra: c.extra}, nil)
			if c.field == "" {
				if err != nil || *Extra(r.m) != c.extra || r.m.State() != sReview {
					t.Errorf("Restore = %v; extra %+v in %s", err, *Extra(r.m), r.m.State())
				}
				return
			}
			var se *SnapshotError
			if !errors.As(err, &se) || se.Field != c.field || se.Reason != c.reason {
				t.Fatalf("Restore = %#v, want %s: %s", err, c.field, c.reason)
			}
			if *Extra(r.m) != (tExtra{}) || r.m.State() != sDraft {
				t.Errorf("the refused snapshot was restored: %+v in %s", *Extra(r.m), r.m.State())
			}
		})
	}
}
