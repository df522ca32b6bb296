package fsmrt

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
)

// A statechart as a generated package declares it, compiled: chart states a (compound,
// entered at x, with a shallow history state h), a.x, a.y and b. Its configurations are
// the states: a.x, a.y and b. Events next, out and back are the program's; always is the
// machine's own. With guard loop holding, a.y and b hand the machine to each other for
// ever through eventless transitions.

type chState uint8

const (
	chAX chState = iota
	chAY
	chB
)

var chStateNames = Names{Package: "chart", Type: "State", What: "state", List: []string{"a.x", "a.y", "b"}}

func (s chState) String() string                { return chStateNames.String(int(s)) }
func (s chState) IsTerminal() bool              { return false }
func (s chState) MarshalText() ([]byte, error)  { return chStateNames.Marshal(int(s)) }
func (s *chState) UnmarshalText(b []byte) error { return Unmarshal(&chStateNames, b, s) }

type chEvent uint8

const (
	chNext chEvent = iota
	chOut
	chBack
	chAlways // raised by the machine
)

var chEventNames = Names{Package: "chart", Type: "Event", What: "event", List: []string{"next", "out", "back"}}

func (e chEvent) String() string                { return chEventNames.String(int(e)) }
func (e chEvent) MarshalText() ([]byte, error)  { return chEventNames.Marshal(int(e)) }
func (e *chEvent) UnmarshalText(b []byte) error { return Unmarshal(&chEventNames, b, e) }

type chContext struct {
	Entered int `json:"entered"`
}

type chMachine = Machine[chState, chEvent, NoRole, chContext, None]

// chOps is the hooks: guard 0 is loop; action 0 (entering a) counts in the context.
type chOps struct {
	m     *chMachine
	loop  bool
	fail  error // what en_a returns
	calls []string
}

func (o *chOps) Guard(_ context.Context, g int, _ Step[chState, chEvent, NoRole]) bool { return o.loop }

func (o *chOps) Act(_ context.Context, a int, st Step[chState, chEvent, NoRole]) error {
	o.m.Context.Entered++
	o.calls = append(o.calls, "en_a")
	return o.fail
}

var chDef = Def[chState, chEvent, NoRole]{
	Spec:      &Spec{Machine: "C", Package: "chart", Fingerprint: "sha256:chart"},
	NumEvents: 4,
	Initial:   chAX,
	Moves: []uint32{
		// next, out, back, always
		4, 4, 3, 3, // a.x
		3, 4, 3, 4, // a.y
		3, 3, 4, 4, // b
	},
	States: []StateDef{{}, {}, {}},
	Transitions: []Transition{
		{From: []int32{0}, On: []int32{0}, To: []int32{1}, Target: 1, Checkpoint: -1, Plain: true, Changes: true},
		{From: []int32{0}, On: []int32{1}, To: []int32{2}, Target: 2, Checkpoint: -1, Plain: true, Record: []Memory{{0, 1}}, Changes: true},
		{From: []int32{1}, On: []int32{1}, To: []int32{2}, Target: 2, Checkpoint: -1, Plain: true, Record: []Memory{{0, 2}}, Changes: true},
		{From: []int32{2}, On: []int32{2}, To: []int32{0}, Target: 0, Actions: []int32{0}, Checkpoint: -1, Mem: []Memory{{0, 0}}, Changes: true},
		{From: []int32{2}, On: []int32{2}, To: []int32{0}, Target: 0, Actions: []int32{0}, Checkpoint: -1, Mem: []Memory{{0, 1}}, Changes: true},
		{From: []int32{2}, On: []int32{2}, To: []int32{1}, Target: 1, Actions: []int32{0}, Checkpoint: -1, Mem: []Memory{{0, 2}}, Changes: true},
		{From: []int32{1}, On: []int32{3}, To: []int32{2}, Conds: []int32{0}, Target: 2, Checkpoint: -1, Record: []Memory{{0, 2}}, Changes: true},
		{From: []int32{2}, On: []int32{3}, To: []int32{1}, Conds: []int32{0}, Target: 1, Actions: []int32{0}, Checkpoint: -1, Changes: true},
	},
	EveryCheckpoint: -1,
	Chart: &Chart{
		External: 3, Always: 3,
		Nodes:   []string{"a", "a.x", "a.y", "b"},
		Words:   1,
		Active:  []uint64{0b0011, 0b0101, 0b1000},
		History: []string{"a.h"},
		Values:  [][]string{{"a.x", "a.y"}},
		Start:   []int32{0},
		Starts:  true,
	},
}

func newChart() (*chMachine, *chOps) {
	m := &chMachine{}
	o := &chOps{m: m}
	Init(m, &chDef, o)
	return m, o
}

func chartJSON(t *testing.T, m *chMachine) string {
	t.Helper()
	b, err := json.Marshal(m.Snapshot())
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestChartStartAndHistory(t *testing.T) {
	ctx := context.Background()
	m, o := newChart()
	if m.Started() {
		t.Fatal("started before Start")
	}
	// Fire starts the machine first: a's entry action runs once.
	if to, err := m.Fire(ctx, chNext); err != nil || to != chAY || !m.Started() || m.Context.Entered != 1 {
		t.Fatalf("next: %s %v, started %v, entered %d", to, err, m.Started(), m.Context.Entered)
	}
	if err := m.Start(ctx); err != nil || m.Context.Entered != 1 {
		t.Fatalf("a second Start did something: %v %d", err, m.Context.Entered)
	}
	for _, e := range []chEvent{chOut, chBack} {
		if _, err := m.Fire(ctx, e); err != nil {
			t.Fatalf("%s: %v", e, err)
		}
	}
	// Back where a was left: a.y, a's entry action run again.
	if m.State() != chAY || m.Context.Entered != 2 || !slices.Equal(o.calls, []string{"en_a", "en_a"}) {
		t.Fatalf("back in %s, entered %d, calls %v", m.State(), m.Context.Entered, o.calls)
	}
	if !In(&chDef, chAY, 0) || !In(&chDef, chAY, 2) || In(&chDef, chAY, 1) || In(&chDef, chB, 0) || In(&chDef, chB, 9) {
		t.Error("In does not read the configurations' nodes")
	}
	s := m.Snapshot()
	if s.History["a.h"] != "a.y" || s.Unstarted {
		t.Fatalf("snapshot history %v, unstarted %v", s.History, s.Unstarted)
	}
	r, _ := newChart()
	if err := Restore(r, s, nil); err != nil || chartJSON(t, r) != chartJSON(t, m) || !r.Started() {
		t.Fatalf("restored: %v\n%s\n%s", err, chartJSON(t, r), chartJSON(t, m))
	}
	// Out and back from a restored machine reads the restored history.
	for _, e := range []chEvent{chOut, chBack} {
		if _, err := r.Fire(ctx, e); err != nil {
			t.Fatal(err)
		}
	}
	if r.State() != chAY {
		t.Errorf("restored machine came back to %s", r.State())
	}
	for _, bad := range []func(*Snapshot[chState, chContext, None]){
		func(s *Snapshot[chState, chContext, None]) { s.History = map[string]string{"a.k": "a.x"} },
		func(s *Snapshot[chState, chContext, None]) { s.History = map[string]string{"a.h": "b"} },
		func(s *Snapshot[chState, chContext, None]) { s.Unstarted = true }, // past seq 0
	} {
		s := m.Snapshot()
		bad(&s)
		r, _ := newChart()
		if err := Restore(r, s, nil); !errors.Is(err, ErrInvalidSnapshot) {
			t.Errorf("restored %+v: %v", s, err)
		}
	}
}

func TestChartRefusesItsOwnEvents(t *testing.T) {
	ctx := context.Background()
	m, _ := newChart()
	if err := m.Start(ctx); err != nil {
		t.Fatal(err)
	}
	for _, e := range []chEvent{chAlways, chAlways + 1} {
		if _, err := m.Fire(ctx, e); !errors.Is(err, ErrInvalidTransition) {
			t.Errorf("fired %d: %v", e, err)
		}
		if m.Can(ctx, e) {
			t.Errorf("can fire %d", e)
		}
	}
	if p := m.Permitted(ctx, nil); !slices.Equal(p, []chEvent{chNext, chOut}) {
		t.Errorf("permitted %v", p)
	}
}

func TestChartEventlessLoop(t *testing.T) {
	ctx := context.Background()
	for _, store := range []bool{false, true} {
		m, o := newChart()
		if store {
			m.ID = "loop"
			m.SetStore(NewMemoryStore())
		}
		if err := m.Start(ctx); err != nil {
			t.Fatal(err)
		}
		o.loop = true
		before, seq := chartJSON(t, m), m.Seq()
		to, err := m.Fire(ctx, chNext)
		var loop *EventlessLoopError[chState, chEvent]
		if !errors.As(err, &loop) || !errors.Is(err, ErrEventlessLoop) || !errors.Is(err, ErrRefused) || to != chAX || loop.State != chAX || loop.Event != chNext {
			t.Fatalf("store %v: %s %v", store, to, err)
		}
		if !strings.Contains(err.Error(), "more than 1000 microsteps") {
			t.Errorf("message: %v", err)
		}
		// The configuration and history are back; with a store, the context too.
		after := chartJSON(t, m)
		if m.State() != chAX || m.Seq() != seq || m.mem[0] != 0 {
			t.Errorf("store %v: after the loop in %s at %d, memory %v", store, m.State(), m.Seq(), m.mem)
		}
		if store && after != before {
			t.Errorf("with a store the machine changed:\n%s\n%s", after, before)
		}
		o.loop = false
		if to, err := m.Fire(ctx, chNext); err != nil || to != chAY {
			t.Errorf("store %v: after the loop: %s %v", store, to, err)
		}
	}
}

func TestChartStoreReplay(t *testing.T) {
	ctx := context.Background()
	store := NewMemoryStore()
	m, o := newChart()
	m.ID = "c1"
	m.SetStore(store)
	for _, e := range []chEvent{chNext, chOut} {
		if _, err := m.Fire(ctx, e); err != nil {
			t.Fatal(err)
		}
	}
	o.loop = true // b -> a.y -> b ...: not settling; refused, nothing logged
	if _, err := m.Fire(ctx, chBack); !errors.Is(err, ErrEventlessLoop) {
		t.Fatal(err)
	}
	o.loop = false
	if _, err := m.Fire(ctx, chBack); err != nil {
		t.Fatal(err)
	}
	log, err := store.Log(ctx, chDef.Spec.Name(), "c1", 0)
	if err != nil || len(log) != 4 || log[0].Kind != KindStarted || log[0].Event != "" {
		t.Fatalf("log %+v %v", log, err)
	}
	var first LogEntry[chState, chEvent, NoRole]
	if err := json.Unmarshal(log[2].Data, &first); err != nil || first.History["a.h"] != "a.y" || first.To != chB {
		t.Fatalf("entry %s: %v", log[2].Data, err)
	}
	r, _ := newChart()
	if err := Replay(ctx, r, store, "c1", nil); err != nil || chartJSON(t, r) != chartJSON(t, m) {
		t.Fatalf("replayed: %v\n%s\n%s", err, chartJSON(t, r), chartJSON(t, m))
	}
	// A log that says what the machine cannot have done is refused.
	for _, tamper := range []struct{ from, to string }{
		{`"history":{"a.h":"a.y"}`, `"history":{"a.h":"b"}`},
		{`"to":"b"`, `"to":"a.x"`},
		{`"transition":2`, `"transition":3`},
	} {
		bad := NewMemoryStore()
		changed := false
		for _, e := range log {
			if s := string(e.Data); strings.Contains(s, tamper.from) && !changed {
				e.Data, changed = []byte(strings.Replace(s, tamper.from, tamper.to, 1)), true
			}
			c := &Commit{Machine: chDef.Spec.Name(), ID: "c1", Spec: chDef.Spec.Fingerprint, Version: e.Seq - 1, State: e.To, Entry: e}
			if err := bad.Commit(ctx, c); err != nil {
				t.Fatal(err)
			}
		}
		if !changed {
			t.Fatalf("%s is in no entry", tamper.from)
		}
		r, _ := newChart()
		if err := Replay(ctx, r, bad, "c1", nil); !errors.Is(err, ErrInvalidLog) {
			t.Errorf("%s -> %s replayed: %v", tamper.from, tamper.to, err)
		}
	}
}

func TestChartFireAllocatesNothing(t *testing.T) {
	ctx := context.Background()
	m, _ := newChart()
	if err := m.Start(ctx); err != nil {
		t.Fatal(err)
	}
	events := []chEvent{chNext, chOut, chBack, chOut, chBack} // history read and recorded
	n := testing.AllocsPerRun(100, func() {
		for _, e := range events {
			if _, err := m.Fire(ctx, e); err != nil {
				// back from b to a.y, then next is refused in a.y: ignored, it allocates none
				_ = err
			}
		}
	})
	if n != 0 {
		t.Errorf("Fire allocates %v per run", n)
	}
}

// mayFail marks action a of richDef may_fail, under name.
func mayFail(a int, name string) func(*tDef) {
	return func(d *tDef) {
		if d.MayFail == nil {
			d.MayFail = make([]string, 9)
		}
		d.MayFail[a] = name
	}
}

func TestActionFailureRefuses(t *testing.T) {
	boom := errors.New("mail server down")
	for _, a := range []int{4, 0, 5} { // draft's exit action, submit's, review's entry action
		for _, store := range []bool{false, true} {
			r := newRig(mayFail(a, "act"))
			if store {
				r.m.SetStore(NewMemoryStore())
			}
			r.ops.actErr = map[int]error{a: boom}
			before, _ := json.Marshal(r.m.Snapshot())
			seq, hist := r.m.Seq(), len(History(r.m))
			to, err := r.m.Fire(bg, eSubmit)
			var ae *ActionError[tState, tEvent]
			if !errors.As(err, &ae) || !errors.Is(err, ErrActionFailed) || !errors.Is(err, ErrRefused) || !errors.Is(err, boom) {
				t.Fatalf("action %d fails: %v", a, err)
			}
			if ae.State != sDraft || ae.Event != eSubmit || ae.Action != "act" || to != sDraft || r.m.State() != sDraft {
				t.Errorf("action %d fails: %+v, in %s", a, ae, r.m.State())
			}
			if ae.Reason() != "action_failed" || !strings.Contains(err.Error(), "draft on submit: action act failed: mail server down") {
				t.Errorf("message %q", err)
			}
			// Nothing changed: state, counters, context (the actions before it changed it), log.
			if after, _ := json.Marshal(r.m.Snapshot()); string(after) != string(before) || r.m.Seq() != seq || len(History(r.m)) != hist {
				t.Errorf("action %d (store %v) failed and the machine changed:\n%s\n%s", a, store, before, after)
			}
			r.ops.actErr = nil
			if to, err := r.m.Fire(bg, eSubmit); err != nil || to != sReview {
				t.Errorf("after the failure: %s %v", to, err)
			}
		}
	}
}

func TestChartActionFailure(t *testing.T) {
	ctx := context.Background()
	boom := errors.New("no session")
	chDef.MayFail = []string{"en_a"}
	defer func() { chDef.MayFail = nil }()
	m, o := newChart()
	o.fail = boom
	// On starting: still not started, its context as before.
	if err := m.Start(ctx); !errors.Is(err, boom) || m.Started() || m.Context.Entered != 0 {
		t.Fatalf("start: %v, started %v, entered %d", err, m.Started(), m.Context.Entered)
	}
	var ae *ActionError[chState, chEvent]
	if _, err := m.Fire(ctx, chNext); !errors.As(err, &ae) || !ae.Starting || !strings.Contains(err.Error(), "on starting") {
		t.Fatalf("fire before a start that fails: %v", err)
	}
	o.fail = nil
	for _, e := range []chEvent{chNext, chOut} {
		if _, err := m.Fire(ctx, e); err != nil {
			t.Fatal(err)
		}
	}
	// back enters a again, whose entry action fails: still in b, a.h as recorded.
	o.fail = boom
	before := chartJSON(t, m)
	if to, err := m.Fire(ctx, chBack); !errors.As(err, &ae) || to != chB || ae.State != chB || ae.Event != chBack {
		t.Fatalf("back: %s %v", to, err)
	}
	if after := chartJSON(t, m); after != before {
		t.Errorf("the machine changed:\n%s\n%s", before, after)
	}
}

// TestChartEncodings: a statechart's log entries (with their microsteps and history) and
// snapshots (with history, or unstarted) as the engine writes them without reflection are
// byte for byte what encoding/json writes.
func TestChartEncodings(t *testing.T) {
	ctx := context.Background()
	store := NewMemoryStore()
	m, _ := newChart()
	m.ID = "enc"
	m.SetStore(store)
	ctxJSON, _ := json.Marshal(&m.Context)
	if b, ok := m.appendSnapshot(nil, ctxJSON); !ok || string(b) != chartJSON(t, m) || !strings.Contains(string(b), `"unstarted":true`) {
		t.Errorf("unstarted snapshot:\n%s\n%s", b, chartJSON(t, m))
	}
	for _, e := range []chEvent{chNext, chOut} {
		if _, err := m.Fire(ctx, e); err != nil {
			t.Fatal(err)
		}
	}
	ctxJSON, _ = json.Marshal(&m.Context)
	if b, ok := m.appendSnapshot(nil, ctxJSON); !ok || string(b) != chartJSON(t, m) || !strings.Contains(string(b), `"history":{"a.h":"a.y"}`) {
		t.Errorf("snapshot:\n%s\n%s", b, chartJSON(t, m))
	}
	log, err := store.Log(ctx, chDef.Spec.Name(), "enc", 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, se := range log {
		var e LogEntry[chState, chEvent, NoRole]
		if err := json.Unmarshal(se.Data, &e); err != nil {
			t.Fatal(err)
		}
		if want, _ := json.Marshal(e); string(se.Data) != string(want) {
			t.Errorf("entry %d:\n%s\n%s", se.Seq, se.Data, want)
		}
	}
	// An entry with microsteps: one whose eventless transitions hand the machine on.
	e := LogEntry[chState, chEvent, NoRole]{Seq: 9, Timestamp: t0, Kind: KindTransition, Event: chNext, To: chB, Transition: 0, Micro: []int{6, 7, 6}, History: map[string]string{"a.h": "a.y"}}
	if b, ok := m.appendEntry(nil, &e); !ok || !strings.Contains(string(b), `"microsteps":[6,7,6]`) {
		t.Errorf("entry %s", b)
	} else if want, _ := json.Marshal(e); string(b) != string(want) {
		t.Errorf("entry:\n%s\n%s", b, want)
	}
}
