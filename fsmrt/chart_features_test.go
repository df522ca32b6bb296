package fsmrt

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
)

// A statechart with what flat machines have besides nesting, compiled as a generated
// package declares it: chart states q (compound: q.x, q.y, q.z) and p, which remembers the
// configuration it was entered from. Configurations x, y, z and p. Event go takes x to y,
// for role writer only, counting tries (limit: its 3rd increment refuses); y goes on to z
// by itself, counting streak (reset on success) and checkpointing; go takes z back to x,
// resetting tries. pause leaves x or z for p, resume goes back.

type cfState uint8

const (
	cfX cfState = iota
	cfY
	cfZ
	cfP
)

var cfStateNames = Names{Package: "chart", Type: "State", What: "state", List: []string{"x", "y", "z", "p"}}

func (s cfState) String() string                { return cfStateNames.String(int(s)) }
func (s cfState) IsTerminal() bool              { return false }
func (s cfState) MarshalText() ([]byte, error)  { return cfStateNames.Marshal(int(s)) }
func (s *cfState) UnmarshalText(b []byte) error { return Unmarshal(&cfStateNames, b, s) }

type cfEvent uint8

const (
	cfGo cfEvent = iota
	cfPause
	cfResume
)

var cfEventNames = Names{Package: "chart", Type: "Event", What: "event", List: []string{"go", "pause", "resume"}}

func (e cfEvent) String() string                { return cfEventNames.String(int(e)) }
func (e cfEvent) MarshalText() ([]byte, error)  { return cfEventNames.Marshal(int(e)) }
func (e *cfEvent) UnmarshalText(b []byte) error { return Unmarshal(&cfEventNames, b, e) }

type cfRole uint8

var cfRoleNames = Names{Package: "chart", Type: "Role", What: "role", List: []string{"", "writer"}, None: true}

func (r cfRole) String() string                { return cfRoleNames.String(int(r)) }
func (r cfRole) MarshalText() ([]byte, error)  { return cfRoleNames.Marshal(int(r)) }
func (r *cfRole) UnmarshalText(b []byte) error { return Unmarshal(&cfRoleNames, b, r) }

type cfMachine = Machine[cfState, cfEvent, cfRole, struct{}, None]

type cfOps struct{ checkpoints []string }

func (o *cfOps) Checkpoint(_ context.Context, cp int, st Step[cfState, cfEvent, cfRole]) error {
	o.checkpoints = append(o.checkpoints, st.From.String()+">"+st.To.String())
	return nil
}

var cfDef = newCfDef()

// newCfDef returns the chart's Def, for a test that changes it.
func newCfDef() *Def[cfState, cfEvent, cfRole] {
	return &Def[cfState, cfEvent, cfRole]{
		Spec:      &Spec{Machine: "F", Package: "chart", Fingerprint: "sha256:features"},
		NumEvents: 4,
		Initial:   cfX,
		Moves: []uint32{
			// go, pause, resume, always
			5, 5, 4, 4, // x
			4, 4, 4, 5, // y
			5, 5, 4, 4, // z
			4, 4, 5, 4, // p
		},
		States: []StateDef{{}, {}, {}, {}},
		Transitions: []Transition{
			{From: []int32{0}, On: []int32{0}, To: []int32{1}, Target: 1, Inc: []int32{0}, Roles: []RoleRule{{Role: 1, Policy: -1}}, Checkpoint: -1, Changes: true},
			{From: []int32{1}, On: []int32{3}, To: []int32{2}, Target: 2, Inc: []int32{1}, Checkpoint: 0, Changes: true},
			{From: []int32{2}, On: []int32{0}, To: []int32{0}, Target: 0, Reset: []int32{0}, Checkpoint: -1, Changes: true},
			{From: []int32{0}, On: []int32{1}, To: []int32{3}, Target: 3, Record: []Memory{{0, 1}}, Checkpoint: -1, Changes: true},
			{From: []int32{2}, On: []int32{1}, To: []int32{3}, Target: 3, Record: []Memory{{0, 2}}, Checkpoint: -1, Changes: true},
			{From: []int32{3}, On: []int32{2}, To: []int32{0}, Target: 0, Mem: []Memory{{0, 1}}, Checkpoint: -1, Changes: true},
			{From: []int32{3}, On: []int32{2}, To: []int32{2}, Target: 2, Mem: []Memory{{0, 2}}, Checkpoint: -1, Changes: true},
		},
		Counters: []Counter{
			{Name: "tries", Limit: 3, Then: -1, Summary: -1},
			{Name: "streak", Then: -1, Summary: -1, ResetOnSuccess: true},
		},
		NumRoles:        2,
		Roles:           true,
		EveryCheckpoint: -1,
		Chart: &Chart{
			External: 3, Always: 3,
			Nodes:    []string{"q", "q.x", "q.y", "q.z", "p"},
			Words:    1,
			Active:   []uint64{0b00011, 0b00101, 0b01001, 0b10000},
			History:  []string{"p"},
			Values:   [][]string{{"q.x", "q.z"}},
			Remember: []int32{-1, -1, -1, 0},
			Recall:   [][]int32{{0, 2}},
		},
	}
}

func TestChartCountersRolesCheckpoints(t *testing.T) {
	ctx := context.Background()
	o := &cfOps{}
	m := &cfMachine{}
	Init(m, cfDef, o)
	writer := Input[cfRole]{Role: 1}

	// The role is checked on the event's microstep: refused, nothing changes.
	var pe *PermissionError[cfState, cfEvent, cfRole]
	if to, err := m.FireWith(ctx, cfGo, Input[cfRole]{}); !errors.As(err, &pe) || to != cfX || m.State() != cfX || Count(m, 0, cfX) != 0 {
		t.Fatalf("go as nobody: %s, %v (tries %d)", to, err, Count(m, 0, cfX))
	}
	if to, err := m.FireWith(ctx, cfGo, Input[cfRole]{Role: 2}); !errors.As(err, &pe) || to != cfX {
		t.Fatalf("go as an unknown role: %s, %v", to, err)
	}
	// go counts tries, the eventless microstep after it counts streak and names the
	// checkpoint the macrostep takes.
	if to, err := m.FireWith(ctx, cfGo, writer); err != nil || to != cfZ {
		t.Fatalf("go: %s, %v", to, err)
	}
	if Count(m, 0, cfZ) != 1 || Count(m, 1, cfZ) != 1 || len(o.checkpoints) != 1 || o.checkpoints[0] != "x>z" {
		t.Fatalf("after go: tries %d, streak %d, checkpoints %v", Count(m, 0, cfZ), Count(m, 1, cfZ), o.checkpoints)
	}
	// Back to x: tries reset, streak reset on success (not incremented).
	if to, err := m.Fire(ctx, cfGo); err != nil || to != cfX || Count(m, 0, cfX) != 0 || Count(m, 1, cfX) != 0 {
		t.Fatalf("go back: %s, %v (tries %d, streak %d)", to, err, Count(m, 0, cfX), Count(m, 1, cfX))
	}
	// The limit refuses the event whose microstep reaches it.
	m.counters[0] = 2
	var le *LimitError[cfState, cfEvent]
	if to, err := m.FireWith(ctx, cfGo, writer); !errors.As(err, &le) || to != cfX || le.Counter != "tries" {
		t.Fatalf("go at the limit: %s, %v", to, err)
	}
	m.limits[0] = 5 // as SetLimitTries(4) does
	if to, err := m.FireWith(ctx, cfGo, writer); err != nil || to != cfZ || Count(m, 0, cfZ) != 3 {
		t.Fatalf("go below a raised limit: %s, %v (tries %d)", to, err, Count(m, 0, cfZ))
	}
	if to, err := m.Fire(ctx, cfGo); err != nil || to != cfX {
		t.Fatalf("go back: %s, %v", to, err)
	}
	m.counters[0] = 4
	if to, err := m.FireWith(ctx, cfGo, writer); !errors.As(err, &le) || le.Limit != 5 || to != cfX {
		t.Fatalf("go at a raised limit: %s, %v", to, err)
	}
}

func TestChartRemembers(t *testing.T) {
	ctx := context.Background()
	m := &cfMachine{}
	Init(m, cfDef, &cfOps{})
	if _, ok := Remembered(m, cfP); ok {
		t.Fatal("p remembers before it was entered")
	}
	if _, ok := Remembered(m, cfX); ok {
		t.Fatal("x has no remembering state, yet remembers")
	}
	if _, ok := Remembered(m, cfState(9)); ok {
		t.Fatal("a state out of range remembers")
	}
	// Not taken while p remembers nothing.
	m.state = cfP
	if _, err := m.Fire(ctx, cfResume); err == nil {
		t.Fatal("resume with nothing remembered")
	}
	m.state = cfZ
	if to, err := m.Fire(ctx, cfPause); err != nil || to != cfP {
		t.Fatalf("pause: %s, %v", to, err)
	}
	if back, ok := Remembered(m, cfP); !ok || back != cfZ {
		t.Fatalf("p remembers %s, %v", back, ok)
	}
	if s := m.Snapshot(); s.History["p"] != "q.z" {
		t.Fatalf("snapshot history %v", s.History)
	}
	if to, err := m.Fire(ctx, cfResume); err != nil || to != cfZ {
		t.Fatalf("resume: %s, %v", to, err)
	}
}

// TestChartReplayCounts replays a log whose microsteps count and reset: the replayed
// machine has the counts of the machine that wrote it.
func TestChartReplayCounts(t *testing.T) {
	ctx := context.Background()
	store := NewMemoryStore()
	m := &cfMachine{}
	Init(m, cfDef, &cfOps{})
	m.ID = "f"
	m.SetStore(store)
	for _, e := range []cfEvent{cfGo, cfGo, cfGo} {
		if _, err := m.FireWith(ctx, e, Input[cfRole]{Role: 1}); err != nil {
			t.Fatal(err)
		}
	}
	log, err := store.Log(ctx, cfDef.Spec.Name(), "f", 0)
	if err != nil {
		t.Fatal(err)
	}
	r := &cfMachine{}
	Init(r, cfDef, &cfOps{})
	for _, e := range log {
		var le LogEntry[cfState, cfEvent, cfRole]
		if err := json.Unmarshal(e.Data, &le); err != nil {
			t.Fatal(err)
		}
		if err := r.apply(&le); err != nil {
			t.Fatalf("apply %s: %v", e.Data, err)
		}
	}
	if r.State() != m.State() || Count(r, 0, cfZ) != Count(m, 0, cfZ) || Count(r, 1, cfZ) != Count(m, 1, cfZ) || Count(r, 1, cfZ) != 1 {
		t.Fatalf("replayed %s tries %d streak %d, want %s tries %d streak %d", r.State(), Count(r, 0, cfZ), Count(r, 1, cfZ), m.State(), Count(m, 0, cfZ), Count(m, 1, cfZ))
	}
}

// cfNeeds is cfOps for a chart whose pause microstep enters a state that requires a
// context field, which the machine has when ready.
type cfNeeds struct {
	cfOps
	ready bool
	asked []int32
}

func (o *cfNeeds) RequireOn(t int32, _ *struct{}) []FieldError {
	o.asked = append(o.asked, t)
	if o.ready {
		return nil
	}
	return []FieldError{{Field: "reason", Message: "reason is required"}}
}

// TestChartRequires refuses an event whose microstep enters a state that requires a field
// the context lacks, changing nothing, and asks for the fields of that microstep only.
func TestChartRequires(t *testing.T) {
	ctx := context.Background()
	d := newCfDef()
	d.Transitions[3].Require = true // x -pause-> p
	o := &cfNeeds{}
	m := &cfMachine{}
	Init(m, d, o)
	if m.Can(ctx, cfPause) {
		t.Fatal("Can(pause) without the field")
	}
	var ve *ValidationError[cfState, cfEvent]
	to, err := m.Fire(ctx, cfPause)
	if !errors.As(err, &ve) || !errors.Is(err, ErrValidation) || to != cfX || m.State() != cfX || ve.Target != cfP {
		t.Fatalf("pause without the field: %s, %v", to, err)
	}
	if want := "chart: cannot enter p: reason: reason is required"; err.Error() != want {
		t.Fatalf("error %q, want %q", err, want)
	}
	if _, ok := Remembered(m, cfP); ok || len(ve.Allowed) != 0 {
		t.Fatalf("the refused pause remembered where it was, or allows %v", ve.Allowed)
	}
	o.ready = true
	if to, err := m.Fire(ctx, cfPause); err != nil || to != cfP {
		t.Fatalf("pause with the field: %s, %v", to, err)
	}
	if to, err := m.Fire(ctx, cfResume); err != nil || to != cfX {
		t.Fatalf("resume: %s, %v", to, err)
	}
	for _, x := range o.asked {
		if x != 3 {
			t.Fatalf("asked for the fields of microsteps %v, want only 3", o.asked)
		}
	}
}
