package fsmrt

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"
)

// A statechart whose compound state a times out: idle, then a (a.x initially, a.y), whose
// 10-minute configurable timeout warns at 50% and closes a on expiry. Configurations idle,
// x and y; x and y share a's timeout (Clock 2). move goes between x and y within a,
// keeping a active (KeepsClock); reenter leaves a and enters it again.

type ckState uint8

const (
	ckIdle ckState = iota
	ckX
	ckY
)

var ckStateNames = Names{Package: "clock", Type: "State", What: "state", List: []string{"idle", "x", "y"}}

func (s ckState) String() string                { return ckStateNames.String(int(s)) }
func (s ckState) IsTerminal() bool              { return false }
func (s ckState) MarshalText() ([]byte, error)  { return ckStateNames.Marshal(int(s)) }
func (s *ckState) UnmarshalText(b []byte) error { return Unmarshal(&ckStateNames, b, s) }

type ckEvent uint8

const (
	ckOpen ckEvent = iota
	ckMove
	ckReenter
	ckClose
)

var ckEventNames = Names{Package: "clock", Type: "Event", What: "event", List: []string{"open", "move", "reenter", "close"}}

func (e ckEvent) String() string                { return ckEventNames.String(int(e)) }
func (e ckEvent) MarshalText() ([]byte, error)  { return ckEventNames.Marshal(int(e)) }
func (e *ckEvent) UnmarshalText(b []byte) error { return Unmarshal(&ckEventNames, b, e) }

type ckMachine = Machine[ckState, ckEvent, NoRole, struct{}, None]

func newCkDef() *Def[ckState, ckEvent, NoRole] {
	a := StateDef{Timeout: 10 * time.Minute, Configurable: true, Levels: []int{50}, LevelValues: []int{1}, Expires: true, Expiry: int32(ckClose), Clock: 2}
	return &Def[ckState, ckEvent, NoRole]{
		Spec:      &Spec{Machine: "Clock", Package: "clock", Fingerprint: "sha256:clock"},
		NumEvents: 4,
		Initial:   ckIdle,
		Moves: []uint32{
			// open, move, reenter, close
			4, 3, 3, 3, // idle
			3, 4, 4, 4, // x
			3, 4, 4, 4, // y
		},
		States: []StateDef{{}, a, a},
		Transitions: []Transition{
			{From: []int32{0}, On: []int32{0}, To: []int32{1}, Target: 1, Checkpoint: -1, Changes: true},
			{From: []int32{1}, On: []int32{1}, To: []int32{2}, Target: 2, Checkpoint: -1, Changes: true, KeepsClock: true},
			{From: []int32{2}, On: []int32{1}, To: []int32{1}, Target: 1, Checkpoint: -1, Changes: true, KeepsClock: true},
			{From: []int32{1, 2}, On: []int32{2}, To: []int32{1}, Target: 1, Checkpoint: -1, Changes: true},
			{From: []int32{1, 2}, On: []int32{3}, To: []int32{0}, Target: 0, Checkpoint: -1, Changes: true},
		},
		LevelNames:      []string{"warning"},
		Timing:          true,
		EveryCheckpoint: -1,
		Chart: &Chart{
			External: 4, Always: -1,
			Nodes:  []string{"idle", "a", "a.x", "a.y"},
			Words:  1,
			Active: []uint64{0b0001, 0b0110, 0b1010},
		},
	}
}

var ckDef = newCkDef()

// ckRig is a machine of ckDef on store st (nil: none), with a clock at t0, and how to load
// one from st.
func ckRig(st Store) (*ckMachine, *fakeClock, func(context.Context, string) (*ckMachine, error)) {
	clk := &fakeClock{t: t0}
	m := &ckMachine{ID: "c1"}
	Init(m, ckDef, nil)
	SetClock(m, clk)
	if st != nil {
		m.SetStore(st)
	}
	load := func(ctx context.Context, id string) (*ckMachine, error) {
		l := &ckMachine{}
		Init(l, ckDef, nil)
		if err := Replay(ctx, l, st, id, nil); err != nil {
			return nil, err
		}
		l.SetStore(st)
		return l, nil
	}
	return m, clk, load
}

func ckFire(t *testing.T, m *ckMachine, e ckEvent, at time.Duration) {
	t.Helper()
	if _, err := m.FireWith(bg, e, Input[NoRole]{At: t0.Add(at)}); err != nil {
		t.Fatalf("%s at %v: %v", e, at, err)
	}
}

func TestClockCountsOnWithinItsState(t *testing.T) {
	m, _, _ := ckRig(nil)
	ckFire(t, m, ckOpen, time.Minute) // a entered at 1m
	ckFire(t, m, ckMove, 4*time.Minute)
	ckFire(t, m, ckMove, 5*time.Minute)
	if m.State() != ckX || !TimeoutSince(m).Equal(t0.Add(time.Minute)) || !EnteredAt(m).Equal(t0.Add(5*time.Minute)) {
		t.Fatalf("after two moves within a: %s, timeout since %v, entered %v", m.State(), TimeoutSince(m), EnteredAt(m))
	}
	// The level and the expiry count from a's entry, not x's.
	if l := TimeoutLevel(m, t0.Add(6*time.Minute)); l != 1 {
		t.Errorf("level at 6m (5 minutes into a): %d", l)
	}
	if fired, _, err := Expire(bg, m, ckClose, t0.Add(10*time.Minute)); fired || err != nil {
		t.Fatalf("expired 9 minutes into a: %v", err)
	}
	if fired, to, err := Expire(bg, m, ckClose, t0.Add(11*time.Minute)); !fired || to != ckIdle || err != nil {
		t.Fatalf("not expired 10 minutes into a: %v, %s, %v", fired, to, err)
	}
	// Entered again, a counts from then.
	ckFire(t, m, ckOpen, 20*time.Minute)
	ckFire(t, m, ckMove, 25*time.Minute)
	ckFire(t, m, ckReenter, 26*time.Minute)
	if !TimeoutSince(m).Equal(t0.Add(26 * time.Minute)) {
		t.Errorf("a reentered counts since %v", TimeoutSince(m))
	}
	// Time by state stays per configuration.
	if tb := TimeByState(m, t0.Add(27*time.Minute)); tb[ckY] != 2*time.Minute || tb[ckX] != 15*time.Minute || tb[ckIdle] != 10*time.Minute {
		t.Errorf("time by state %v", tb)
	}
}

func TestClockExpiresOnceAStayOfItsState(t *testing.T) {
	d := newCkDef()
	d.Transitions[4].Conds = []int32{0} // close needs a guard, which refuses it
	m := &ckMachine{}
	Init(m, d, ckGuards(false))
	ckFire(t, m, ckOpen, 0)
	if fired, to, err := Expire(bg, m, ckClose, t0.Add(10*time.Minute)); fired || to != ckX || !errors.Is(err, ErrRefused) {
		t.Fatalf("expiry refused: %v, %s, %v", fired, to, err)
	}
	// Moving within a is the same stay of a: it does not expire again.
	ckFire(t, m, ckMove, 11*time.Minute)
	if fired, _, err := Expire(bg, m, ckClose, t0.Add(30*time.Minute)); fired || err != nil {
		t.Fatalf("expired twice in one stay of a: %v, %v", fired, err)
	}
	ckFire(t, m, ckReenter, 31*time.Minute)
	if _, _, err := Expire(bg, m, ckClose, t0.Add(41*time.Minute)); !errors.Is(err, ErrRefused) {
		t.Fatalf("a new stay of a does not expire: %v", err)
	}
}

type ckGuards bool

func (g ckGuards) Guard(context.Context, int, Step[ckState, ckEvent, NoRole]) bool { return bool(g) }

func TestClockSharedTimeout(t *testing.T) {
	m, _, _ := ckRig(nil)
	if err := SetTimeout(m, ckY, time.Hour); err != nil {
		t.Fatal(err)
	}
	if Timeout(m, ckX) != time.Hour || Timeout(m, ckY) != time.Hour || Timeout(m, ckIdle) != 0 {
		t.Fatalf("timeouts x %v, y %v", Timeout(m, ckX), Timeout(m, ckY))
	}
	// A snapshot keeps both; one that sets them apart is refused.
	s := m.Snapshot()
	r := &ckMachine{}
	Init(r, ckDef, nil)
	if err := Restore(r, s, nil); err != nil || Timeout(r, ckX) != time.Hour {
		t.Fatalf("restored: %v, %v", err, Timeout(r, ckX))
	}
	s.Timeouts[ckX] = 2 * time.Hour
	var se *SnapshotError
	if err := Restore(r, s, nil); !errors.As(err, &se) || se.Field != "timeouts" {
		t.Fatalf("timeouts apart: %v", err)
	}
	// One configuration's change is every sharing one's.
	s.Timeouts = map[ckState]time.Duration{ckX: 3 * time.Hour}
	if err := Restore(r, s, nil); err != nil || Timeout(r, ckY) != 3*time.Hour {
		t.Fatalf("one configuration's timeout: %v, %v", err, Timeout(r, ckY))
	}
}

func TestClockSnapshot(t *testing.T) {
	m, _, _ := ckRig(nil)
	ckFire(t, m, ckOpen, time.Minute)
	s := m.Snapshot()
	if !s.TimeoutSince.IsZero() {
		t.Fatalf("a entered with x: timeoutSince %v", s.TimeoutSince)
	}
	ckFire(t, m, ckMove, 3*time.Minute)
	s = m.Snapshot()
	if !s.TimeoutSince.Equal(t0.Add(time.Minute)) {
		t.Fatalf("timeoutSince %v", s.TimeoutSince)
	}
	b, err := json.Marshal(s)
	if err != nil || !strings.Contains(string(b), `"timeoutSince":"2024-01-02T03:05:05Z"`) {
		t.Fatalf("%s, %v", b, err)
	}
	r := &ckMachine{}
	Init(r, ckDef, nil)
	if err := Restore(r, s, nil); err != nil || !TimeoutSince(r).Equal(t0.Add(time.Minute)) || !EnteredAt(r).Equal(t0.Add(3*time.Minute)) {
		t.Fatalf("restored: %v, since %v", err, TimeoutSince(r))
	}
	// The impossible is refused.
	for name, c := range map[string]struct {
		edit  func(s *Snapshot[ckState, struct{}, None])
		field string
	}{
		"after entered":  {func(s *Snapshot[ckState, struct{}, None]) { s.TimeoutSince = s.EnteredAt.Add(time.Second) }, "timeoutSince"},
		"before created": {func(s *Snapshot[ckState, struct{}, None]) { s.TimeoutSince = s.CreatedAt.Add(-time.Second) }, "timeoutSince"},
		"no clock":       {func(s *Snapshot[ckState, struct{}, None]) { s.State = ckIdle }, "timeoutSince"},
	} {
		bad := s
		c.edit(&bad)
		var se *SnapshotError
		if err := Restore(r, bad, nil); !errors.As(err, &se) || se.Field != c.field {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestClockDurableDeadlines(t *testing.T) {
	st := NewMemoryStore()
	m, _, load := ckRig(st)
	ckFire(t, m, ckOpen, 0)
	deadlines := func() []string {
		t.Helper()
		var out []string
		for _, d := range claimAll(t, st, "clock.Clock") {
			out = append(out, fmt.Sprintf("%s@%v", d.Name, d.At.Sub(t0)))
		}
		return out
	}
	want := []string{"level:warning@5m0s", "expiry@10m0s"}
	if got := deadlines(); !reflect.DeepEqual(got, want) {
		t.Fatalf("armed entering a: %v, want %v", got, want)
	}
	fire := func(at time.Duration) int {
		t.Helper()
		n, err := FireDue(bg, st, "clock.Clock", "s1", t0.Add(at), time.Minute, 10, load)
		if err != nil {
			t.Fatalf("FireDue at %v: %v", at, err)
		}
		return n
	}
	// The warning once, at 5 minutes into a, though x was left for y and back.
	ckFire(t, m, ckMove, 2*time.Minute)
	if got := deadlines(); !reflect.DeepEqual(got, want) {
		t.Fatalf("after a move within a: %v, want %v", got, want)
	}
	if fire(6*time.Minute) != 1 {
		t.Fatal("no warning 6 minutes into a")
	}
	m, err := load(bg, "c1")
	if err != nil {
		t.Fatal(err)
	}
	ckFire(t, m, ckMove, 7*time.Minute)
	if fire(8*time.Minute) != 0 {
		t.Fatal("the warning again after a move within a")
	}
	// The expiry at 10 minutes into a, in y.
	if fire(10*time.Minute) != 1 {
		t.Fatal("no expiry 10 minutes into a")
	}
	if m, err = load(bg, "c1"); err != nil || m.State() != ckIdle {
		t.Fatalf("after the expiry: %v", err)
	}
	// Replayed from the log, the machine counts as the one that wrote it.
	ckFire(t, m, ckOpen, 20*time.Minute)
	ckFire(t, m, ckMove, 21*time.Minute)
	r, err := load(bg, "c1")
	if err != nil || !TimeoutSince(r).Equal(t0.Add(20*time.Minute)) || !EnteredAt(r).Equal(t0.Add(21*time.Minute)) {
		t.Fatalf("replayed: %v, since %v", err, TimeoutSince(r))
	}
}

// TestClockMigrated: a snapshot an older spec wrote in a configuration whose timeout
// counted from a state around it (timeoutSince) keeps it where this spec's configuration
// shares its timeout too, and drops it where it does not.
func TestClockMigrated(t *testing.T) {
	d := newCkDef()
	d.States[ckY] = StateDef{} // y has no timeout here
	d.Migrations = []Migration{{From: "sha256:older"}}
	d.Spec = &Spec{Machine: "Clock", Package: "clock", Fingerprint: "sha256:clock2"}
	old := func(state string) []byte {
		return fmt.Appendf(nil, `{"version":1,"spec":"sha256:older","id":"c1","seq":3,"state":%q,"updatedAt":"2024-01-02T03:09:05Z",`+
			`"context":{},"createdAt":"2024-01-02T03:04:05Z","enteredAt":"2024-01-02T03:08:05Z","timeoutSince":"2024-01-02T03:05:05Z"}`, state)
	}
	for _, c := range []struct {
		state ckState
		since time.Duration
	}{{ckX, time.Minute}, {ckY, 4 * time.Minute}} {
		b, err := d.migrateSnapshot(old(c.state.String()))
		if err != nil {
			t.Fatal(err)
		}
		var s Snapshot[ckState, struct{}, None]
		if err := json.Unmarshal(b, &s); err != nil {
			t.Fatal(err)
		}
		m := &ckMachine{}
		Init(m, d, nil)
		if err := Restore(m, s, nil); err != nil || !TimeoutSince(m).Equal(t0.Add(c.since)) {
			t.Errorf("%s: %v, timeout since %v, want %v", c.state, err, TimeoutSince(m), t0.Add(c.since))
		}
	}
}
