package fsmrt

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"
)

// TestAppendEntry: the hand-written encoding of a log entry is byte for byte encoding/json's
// (roles are checked through the generated packages, whose Role types encode by name),
// for entries with every field, odd strings and maps, and falls back to it where it must.
func TestAppendEntry(t *testing.T) {
	r := newRig()
	rng := rand.New(rand.NewPCG(1, 2))
	odd := []string{"", "plain", `quote " and \ backslash`, "<script>&amp;</script>", "tab\tnew\nline\rcr\bbs\fff",
		"\x00\x01\x1f\x7f", "é 漢字 😀", "bad \xff\xfe utf8", "line\u2028sep\u2029para", strings.Repeat("x", 300)}
	pick := func() string { return odd[rng.IntN(len(odd))] }
	kinds := []string{KindTransition, KindResumed, KindCreated, "TIMEOUT_WARN", KindTimeoutExpired}
	times := []time.Time{{}, t0, t0.Add(123456789 * time.Nanosecond), time.Date(2026, 1, 2, 3, 4, 5, 0, time.FixedZone("X", -5*3600+1800))}
	for i := range 2000 {
		e := tEntryLog{
			Spec: pick(), Seq: rng.Int64N(1 << 40), Timestamp: times[1+rng.IntN(3)], ID: pick(), Kind: kinds[rng.IntN(len(kinds))],
			Event: tEvent(rng.IntN(int(numEvents))), From: tState(rng.IntN(int(numStates))), To: tState(rng.IntN(int(numStates))),
			Transition: rng.IntN(20) - 1, Actor: pick(), Reason: pick(), EventID: pick(), Key: pick(),
			Created: times[rng.IntN(len(times))],
		}
		if rng.IntN(2) == 0 {
			e.Context, _ = json.Marshal(tCtx{Title: pick(), Note: pick()})
		}
		if rng.IntN(3) == 0 {
			e.Payload, _ = json.Marshal(map[string]string{pick(): pick()})
		}
		if rng.IntN(3) == 0 {
			e.Policies = json.RawMessage(`{"editors":true}`)
		}
		if rng.IntN(3) == 0 {
			e.Limits = map[string]int{pick(): rng.IntN(9), "b": 2, "a": -1}
		}
		if rng.IntN(3) == 0 {
			e.Timeouts = map[tState]time.Duration{sReview: time.Minute, sDraft: -5, sPaused: time.Duration(rng.Int64())}
		}
		switch rng.IntN(3) {
		case 0:
			e.Metadata = map[string]string{}
		case 1:
			e.Metadata = map[string]string{pick(): pick(), "z": pick(), "level": "warn"}
		}
		got, ok := r.m.appendEntry(nil, &e)
		want, err := json.Marshal(e.wire())
		if !ok || err != nil || string(got) != string(want) {
			t.Fatalf("entry %d (ok %v, %v):\n got %s\nwant %s", i, ok, err, got, want)
		}
	}
	// What only encoding/json may judge falls back to it.
	for name, e := range map[string]tEntryLog{
		"a state out of range":  {From: numStates},
		"an event out of range": {Kind: KindTransition, Event: numEvents},
		"a role out of range":   {Role: 200},
		"a year past 9999":      {Timestamp: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)},
		"a creation before 0":   {Created: time.Date(-1, 1, 1, 0, 0, 0, 0, time.UTC)},
		"a timeout of no state": {Timeouts: map[tState]time.Duration{numStates: 1}},
	} {
		if _, ok := r.m.appendEntry(nil, &e); ok {
			t.Errorf("%s: encoded by hand", name)
		}
		if _, err := r.m.encodeEntry(&e); err == nil && name != "a role out of range" {
			t.Errorf("%s: encoded", name)
		}
	}
	p := newPlain()
	if _, ok := p.appendEntry(nil, &LogEntry[tState, tEvent, NoRole]{Role: 1}); ok {
		t.Error("a role of a machine without roles encoded by hand")
	}
}

// TestAppendSnapshot: the hand-written encoding of the machine's snapshot is byte for byte
// encoding/json's of Snapshot(), along random walks of a machine with counters (plain and
// per state), limits and timeouts changed, remembered states, time by state and extra data.
func TestAppendSnapshot(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for walk := range 50 {
		r := newRig(withExtras)
		r.m.ID = fmt.Sprint("doc-<", walk, ">")
		r.m.Context = tCtx{Title: "t & <u>", Reviewer: "bo"}
		r.ops.guards[gOK] = rng.IntN(2) == 0
		for range 30 {
			r.clk.add(time.Duration(rng.IntN(100)) * time.Second)
			e := tEvent(rng.IntN(int(numEvents)))
			r.m.FireWith(bg, e, tIn{Role: tRole(rng.IntN(4))})
			if rng.IntN(10) == 0 {
				SetCounterLimit(r.m, cEscalations, rng.IntN(3))
			}
			if rng.IntN(10) == 0 {
				SetTimeout(r.m, sReview, time.Duration(1+rng.IntN(100))*time.Minute)
			}
			if rng.IntN(5) == 0 {
				Extra(r.m).Tag = fmt.Sprint("x", rng.IntN(3))
			}
			ctx, err := json.Marshal(&r.m.Context)
			if err != nil {
				t.Fatal(err)
			}
			got, ok := r.m.appendSnapshot(nil, ctx)
			s := r.m.Snapshot()
			want, err := json.Marshal(&s)
			if !ok || err != nil || string(got) != string(want) {
				t.Fatalf("walk %d (ok %v, %v):\n got %s\nwant %s", walk, ok, err, got, want)
			}
		}
	}
	// A time past 9999 is left to encoding/json, which refuses it.
	r := newRig()
	r.fire(t, eSubmit, tIn{At: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)})
	if _, ok := r.m.appendSnapshot(nil, []byte("{}")); ok {
		t.Error("a year past 9999 encoded by hand")
	}
	if _, err := r.m.encodeSnapshot([]byte("{}")); err == nil {
		t.Error("a year past 9999 encoded")
	}
}

// TestPlainValues: the contexts whose encoding a commit may reuse when they compare equal.
func TestPlainValues(t *testing.T) {
	type level uint8
	type inner struct {
		A [2]int
		B level
	}
	for _, c := range []struct {
		t    reflect.Type
		want bool
	}{
		{reflect.TypeFor[struct {
			S string
			N int64
			B bool
			D time.Duration
			I inner
		}](), true},
		{reflect.TypeFor[struct{ F float64 }](), false},  // 0 == -0
		{reflect.TypeFor[struct{ L []string }](), false}, // changed in place
		{reflect.TypeFor[struct{ M map[string]int }](), false},
		{reflect.TypeFor[struct{ P *int }](), false},
		{reflect.TypeFor[struct{ X any }](), false},
		{reflect.TypeFor[struct{ T time.Time }](), false}, // its own MarshalJSON
		{reflect.TypeFor[tCtx](), false},
	} {
		if got := plainValues(c.t); got != c.want {
			t.Errorf("%v: %v, want %v", c.t, got, c.want)
		}
	}
}
