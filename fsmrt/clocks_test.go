package fsmrt

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"testing"
	"time"
)

// A statechart whose two regions wait each their own delays, as fsmgen generates it from
//
//	states:
//	  call:
//	    initial: true
//	    parallel: true
//	    states:
//	      audio: { states: { live: { initial: true }, muted: {} } }
//	      video: { states: { "off": { initial: true }, "on": {} } }
//	  over: { terminal: true }
//	transitions:
//	  - { from: live, on: mute, to: muted }
//	  - { from: muted, on: back, to: live }
//	  - { from: live, after: 1m, to: over }
//	  - { from: "off", after: 30s, internal: true }
//	  - { from: "off", after: 90s, to: "on" }
//
// live counts on clock 0, off on clock 1: a transition of one region restarts neither the
// other's clock nor its delays.

type rgState uint8

const (
	rgLiveOff rgState = iota
	rgLiveOn
	rgMutedOff
	rgMutedOn
	rgOver
)

var rgStateNames = Names{Package: "regions", Type: "State", What: "state", List: []string{"live,off", "live,on", "muted,off", "muted,on", "over"}}

func (s rgState) String() string                { return rgStateNames.String(int(s)) }
func (s rgState) IsTerminal() bool              { return s == rgOver }
func (s rgState) MarshalText() ([]byte, error)  { return rgStateNames.Marshal(int(s)) }
func (s *rgState) UnmarshalText(b []byte) error { return Unmarshal(&rgStateNames, b, s) }

type rgEvent uint8

const (
	rgMute rgEvent = iota
	rgBack
	rgLiveAfter
	rgOff30
	rgOff90
)

var rgEventNames = Names{Package: "regions", Type: "Event", What: "event", List: []string{"mute", "back", "live.after", "off.after.30s", "off.after.90s"}}

func (e rgEvent) String() string                { return rgEventNames.String(int(e)) }
func (e rgEvent) MarshalText() ([]byte, error)  { return rgEventNames.Marshal(int(e)) }
func (e *rgEvent) UnmarshalText(b []byte) error { return Unmarshal(&rgEventNames, b, e) }

type rgMachine = Machine[rgState, rgEvent, NoRole, struct{}, None]

var rgDef = Def[rgState, rgEvent, NoRole]{
	Spec:      &Spec{Machine: "Regions", Package: "regions", Fingerprint: "sha256:regions"},
	NumEvents: 5,
	Initial:   rgLiveOff,
	Moves: []uint32{
		// mute, back, live.after, off.after.30s, off.after.90s
		6, 5, 6, 6, 6, // live,off
		6, 5, 6, 5, 5, // live,on
		5, 6, 5, 6, 6, // muted,off
		5, 6, 5, 5, 5, // muted,on
		5, 5, 5, 5, 5, // over
	},
	States: []StateDef{
		{Delays: []DelayDef{{After: time.Minute, Event: 2, Clock: 1}, {After: 30 * time.Second, Event: 3, Clock: 2}, {After: 90 * time.Second, Event: 4, Clock: 2}}, Clock: 3},
		{Delays: []DelayDef{{After: time.Minute, Event: 2, Clock: 1}}, Clock: 3},
		{Delays: []DelayDef{{After: 30 * time.Second, Event: 3, Clock: 2}, {After: 90 * time.Second, Event: 4, Clock: 2}}, Clock: 6},
		{},
		{Terminal: true},
	},
	Transitions: []Transition{
		{From: []int32{0}, On: []int32{0}, To: []int32{2}, Target: 2, Checkpoint: -1, Plain: true, Changes: true, KeepsClock: true, Settled: true},
		{From: []int32{0}, On: []int32{2}, To: []int32{4}, Target: 4, Checkpoint: -1, Plain: true, Changes: true, Settled: true},
		{From: []int32{0}, On: []int32{3}, To: []int32{0}, Kind: TargetInternal, Target: 0, Checkpoint: -1, Plain: true, KeepsClock: true, Settled: true},
		{From: []int32{0}, On: []int32{4}, To: []int32{1}, Target: 1, Checkpoint: -1, Plain: true, Changes: true, KeepsClock: true, Settled: true},
		{From: []int32{1}, On: []int32{0}, To: []int32{3}, Target: 3, Checkpoint: -1, Plain: true, Changes: true, Settled: true},
		{From: []int32{1}, On: []int32{2}, To: []int32{4}, Target: 4, Checkpoint: -1, Plain: true, Changes: true, Settled: true},
		{From: []int32{2}, On: []int32{1}, To: []int32{0}, Target: 0, Checkpoint: -1, Plain: true, Changes: true, Enters: []int32{0}, Settled: true},
		{From: []int32{2}, On: []int32{3}, To: []int32{2}, Kind: TargetInternal, Target: 2, Checkpoint: -1, Plain: true, KeepsClock: true, Settled: true},
		{From: []int32{2}, On: []int32{4}, To: []int32{3}, Target: 3, Checkpoint: -1, Plain: true, Changes: true, Settled: true},
		{From: []int32{3}, On: []int32{1}, To: []int32{1}, Target: 1, Checkpoint: -1, Plain: true, Changes: true, Enters: []int32{0}, Settled: true},
	},
	EveryCheckpoint: -1,
	Timing:          true,
	Chart: &Chart{
		External: 5,
		Always:   -1,
		Nodes:    []string{"call", "call.audio", "call.audio.live", "call.audio.muted", "call.video", "call.video.off", "call.video.on", "over"},
		Words:    1,
		Active:   []uint64{0x37, 0x57, 0x3b, 0x5b, 0x80},
		Clocks:   []int32{2, 5},
	},
}

func newRegions(at time.Time) *rgMachine {
	m := &rgMachine{}
	Init(m, &rgDef, nil)
	SetClock(m, StoppedClock(at))
	m.ID = "call-1"
	return m
}

// TestExpireNextRegions: each region's delays count from when its state was entered, and
// fire once a stay.
func TestExpireNextRegions(t *testing.T) {
	m := newRegions(t0)
	expire := func(now time.Duration, fires bool, want rgState, stamped time.Duration) {
		t.Helper()
		ok, s, err := ExpireNext(bg, m, t0.Add(now))
		if err != nil || ok != fires || s != want {
			t.Fatalf("ExpireNext at %v: %t, %s, %v; want %t, %s", now, ok, s, err, fires, want)
		}
		if fires && !m.updatedAt.Equal(t0.Add(stamped)) {
			t.Errorf("ExpireNext at %v: stamped %v, want %v", now, m.updatedAt.Sub(t0), stamped)
		}
	}
	fire := func(at time.Duration, e rgEvent, want rgState) {
		t.Helper()
		if s, err := m.FireWith(bg, e, Input[NoRole]{At: t0.Add(at)}); err != nil || s != want {
			t.Fatalf("%s at %v: %s, %v; want %s", e, at, s, err, want)
		}
	}
	expire(40*time.Second, true, rgLiveOff, 30*time.Second) // off's 30s, internal: off's stay goes on
	expire(40*time.Second, false, rgLiveOff, 0)
	fire(45*time.Second, rgMute, rgMutedOff) // audio moves: off keeps its clock
	fire(50*time.Second, rgBack, rgLiveOff)  // live entered again: its minute starts at 50s
	// At 100s: off's 90s (counted from t0, not from 50s), then nothing until live's minute
	// from 50s.
	expire(100*time.Second, true, rgLiveOn, 90*time.Second)
	expire(100*time.Second, false, rgLiveOn, 0)
	expire(109*time.Second, false, rgLiveOn, 0)
	expire(115*time.Second, true, rgOver, 110*time.Second)
}

// TestFireDueRegions: the deadlines of a region's delays are not moved by the other
// region's transitions, a delay that fired is not armed again while its state stays, and a
// machine replayed from the log (or restored from a snapshot) knows both.
func TestFireDueRegions(t *testing.T) {
	st := NewMemoryStore()
	load := func(ctx context.Context, id string) (*rgMachine, error) {
		m := newRegions(t0)
		if err := Replay(ctx, m, st, id, nil); err != nil {
			return nil, err
		}
		m.SetStore(st)
		return m, nil
	}
	armed := func() []string {
		t.Helper()
		var out []string
		for _, d := range claimAll(t, st, "regions.Regions") {
			out = append(out, fmt.Sprintf("%s@%v", d.Name, d.At.Sub(t0)))
		}
		return out
	}
	expect := func(when string, want ...string) {
		t.Helper()
		if got := armed(); !slices.Equal(got, want) {
			t.Errorf("armed %s: %v, want %v", when, got, want)
		}
	}
	due := func(at time.Duration, n int) {
		t.Helper()
		got, err := FireDue(bg, st, "regions.Regions", "s1", t0.Add(at), time.Minute, 10, load)
		if err != nil || got != n {
			t.Fatalf("FireDue at %v: %d handled, %v; want %d", at, got, err, n)
		}
	}
	fire := func(at time.Duration, e rgEvent, want rgState) *rgMachine {
		t.Helper()
		m, err := load(bg, "call-1")
		if err != nil {
			t.Fatal(err)
		}
		if s, err := m.FireWith(bg, e, Input[NoRole]{At: t0.Add(at)}); err != nil || s != want {
			t.Fatalf("%s at %v: %s, %v; want %s", e, at, s, err, want)
		}
		return m
	}
	m := newRegions(t0)
	m.SetStore(st)
	if err := m.Create(bg, Input[NoRole]{At: t0}); err != nil {
		t.Fatal(err)
	}
	expect("on creation", "after:off.after.30s@30s", "after:live.after@1m0s", "after:off.after.90s@1m30s")
	due(40*time.Second, 1) // off's 30s: internal, nothing rearmed
	expect("after off's 30s", "after:live.after@1m0s", "after:off.after.90s@1m30s")
	fire(45*time.Second, rgMute, rgMutedOff)
	expect("in muted,off", "after:off.after.90s@1m30s")
	m = fire(50*time.Second, rgBack, rgLiveOff)
	// live's minute from 50s; off's 30s has fired this stay: not armed again.
	expect("in live,off again", "after:off.after.90s@1m30s", "after:live.after@1m50s")

	// A snapshot keeps when off was entered (before the configuration's clock, live's), and
	// that off's 30s fired.
	b, err := json.Marshal(m.Snapshot())
	if err != nil {
		t.Fatal(err)
	}
	var snap Snapshot[rgState, struct{}, None]
	if err := json.Unmarshal(b, &snap); err != nil {
		t.Fatal(err)
	}
	if len(snap.Clocks) != 1 || !snap.Clocks["call.video.off"].Equal(t0) || !reflect.DeepEqual(snap.DelaysFired, map[string][]string{"call.video.off": {"off.after.30s"}}) {
		t.Errorf("snapshot %s", b)
	}
	r := newRegions(t0)
	if err := Restore(r, snap, nil); err != nil {
		t.Fatal(err)
	}
	if got, want := r.deadlines(r.state, r.since), m.deadlines(m.state, m.since); !reflect.DeepEqual(got, want) {
		t.Errorf("restored deadlines %v, want %v", got, want)
	}
	if enc, ok := m.appendSnapshot(nil, []byte("{}")); !ok || string(enc) != string(b) {
		t.Errorf("encoded snapshot %s (%t), want %s", enc, ok, b)
	}

	due(100*time.Second, 1) // off's 90s, counted from t0: live,on
	expect("in live,on", "after:live.after@1m50s")
	due(115*time.Second, 1)
	m, err = load(bg, "call-1")
	if err != nil || m.State() != rgOver || !m.updatedAt.Equal(t0.Add(110*time.Second)) {
		t.Fatalf("after live's minute: %v, %v", m, err)
	}
	expect("when over")
}

// TestRegionsFireAllocatesNothing: restarting a region's clock (back enters live again)
// and keeping the other's allocate nothing.
func TestRegionsFireAllocatesNothing(t *testing.T) {
	m := newRegions(t0)
	at := t0
	step := func() {
		at = at.Add(time.Second)
		if _, err := m.FireWith(bg, rgMute, Input[NoRole]{At: at}); err != nil {
			t.Fatal(err)
		}
		at = at.Add(time.Second)
		if _, err := m.FireWith(bg, rgBack, Input[NoRole]{At: at}); err != nil {
			t.Fatal(err)
		}
	}
	step()
	if n := testing.AllocsPerRun(200, step); n != 0 {
		t.Errorf("mute and back: %v allocations, want 0", n)
	}
	if !m.clocks.start[0].Equal(at) || !m.clocks.start[1].Equal(t0) {
		t.Errorf("clocks %v: live's started at the last back (%v), off's at the start", m.clocks.start, at)
	}
}

// loopOps holds guard 0 (loop).
type loopOps struct{ loop bool }

func (o *loopOps) Guard(context.Context, int, Step[rgState, rgEvent, NoRole]) bool { return o.loop }

// TestRegionsLoopPutsClocksBack: an event refused because the eventless transitions after
// it do not settle leaves the clocks as they were (here back, which enters live again,
// then live and muted handing the machine to each other while loop holds).
func TestRegionsLoopPutsClocksBack(t *testing.T) {
	d := Def[rgState, rgEvent, NoRole]{Spec: rgDef.Spec, Initial: rgLiveOff, States: rgDef.States, EveryCheckpoint: -1, Timing: true}
	d.NumEvents = 6 // and always, the machine's own
	d.Moves = []uint32{
		6, 5, 6, 6, 6, 6, // live,off
		6, 5, 6, 5, 5, 5, // live,on
		5, 6, 5, 6, 6, 6, // muted,off
		5, 6, 5, 5, 5, 5, // muted,on
		5, 5, 5, 5, 5, 5, // over
	}
	d.Transitions = append(slices.Clone(rgDef.Transitions),
		Transition{From: []int32{0}, On: []int32{5}, To: []int32{2}, Conds: []int32{0}, Target: 2, Checkpoint: -1, Changes: true, KeepsClock: true},
		Transition{From: []int32{2}, On: []int32{5}, To: []int32{0}, Conds: []int32{0}, Target: 0, Checkpoint: -1, Changes: true, Enters: []int32{0}})
	d.Transitions[6].Settled = false // back: the eventless transitions after it are selected
	c := *rgDef.Chart
	c.Always = 5
	d.Chart = &c
	m := &rgMachine{}
	ops := &loopOps{}
	Init(m, &d, ops)
	SetClock(m, StoppedClock(t0))
	if s, err := m.FireWith(bg, rgMute, Input[NoRole]{At: t0.Add(time.Second)}); err != nil || s != rgMutedOff {
		t.Fatalf("mute: %s, %v", s, err)
	}
	ops.loop = true
	s, err := m.FireWith(bg, rgBack, Input[NoRole]{At: t0.Add(time.Minute)})
	if !errors.Is(err, ErrEventlessLoop) || s != rgMutedOff || m.State() != rgMutedOff {
		t.Fatalf("back: %s, %v (in %s)", s, err, m.State())
	}
	if !m.clocks.start[0].Equal(t0) {
		t.Errorf("live's clock started at %v after the refused back, want t0", m.clocks.start[0].Sub(t0))
	}
}

// TestFireDueRegionsRefusedDelay: a delay whose event the machine refuses (its guard does
// not hold) has fired all the same: recorded in its TIMEOUT_EXPIRED entry, a machine
// replayed from the log does not arm it again when the other region moves.
func TestFireDueRegionsRefusedDelay(t *testing.T) {
	d := Def[rgState, rgEvent, NoRole]{Spec: rgDef.Spec, NumEvents: 5, Initial: rgLiveOff, Moves: rgDef.Moves, States: rgDef.States, EveryCheckpoint: -1, Timing: true, Chart: rgDef.Chart}
	d.Transitions = slices.Clone(rgDef.Transitions)
	for _, i := range []int{2, 7} { // off.after.30s, if loop
		d.Transitions[i].Conds, d.Transitions[i].Plain = []int32{0}, false
	}
	st := NewMemoryStore()
	build := func() *rgMachine {
		m := &rgMachine{}
		Init(m, &d, &loopOps{})
		SetClock(m, StoppedClock(t0))
		m.ID = "call-1"
		return m
	}
	load := func(ctx context.Context, id string) (*rgMachine, error) {
		m := build()
		if err := Replay(ctx, m, st, id, nil); err != nil {
			return nil, err
		}
		m.SetStore(st)
		return m, nil
	}
	m := build()
	m.SetStore(st)
	if err := m.Create(bg, Input[NoRole]{At: t0}); err != nil {
		t.Fatal(err)
	}
	if n, err := FireDue(bg, st, "regions.Regions", "s1", t0.Add(40*time.Second), time.Minute, 10, load); n != 1 || err != nil {
		t.Fatalf("FireDue at 40s: %d, %v", n, err)
	}
	m, err := load(bg, "call-1")
	if err != nil {
		t.Fatal(err)
	}
	if s, err := m.FireWith(bg, rgMute, Input[NoRole]{At: t0.Add(45 * time.Second)}); err != nil || s != rgMutedOff {
		t.Fatalf("mute: %s, %v", s, err)
	}
	got, err := st.ClaimDeadlines(bg, "regions.Regions", "probe", t0.Add(1000*time.Hour), -2000*time.Hour, 100)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Name != "after:off.after.90s" || !got[0].At.Equal(t0.Add(90*time.Second)) {
		t.Errorf("armed in muted,off: %+v, want off's 90s only", got)
	}
}
