package fsmrt

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

// The types below stand in for what a generated package declares: its State, Event and
// Role enums, its context, its extra snapshot data, its hooks and its Def.

type tState uint8

const (
	sDraft tState = iota
	sReview
	sPaused
	sApproved
	sRejected // terminal
	sEscalated
	sClosed // terminal
	numStates
)

var tStateNames = Names{
	Package: "review", Type: "State", What: "state",
	List: []string{"draft", "review", "paused", "approved", "rejected", "escalated", "closed"},
}

func (s tState) String() string               { return tStateNames.String(int(s)) }
func (s tState) IsTerminal() bool             { return s == sRejected || s == sClosed }
func (s tState) MarshalText() ([]byte, error) { return tStateNames.Marshal(int(s)) }
func (s *tState) UnmarshalText(b []byte) error {
	return Unmarshal(&tStateNames, b, s)
}

type tEvent uint8

const (
	eSubmit tEvent = iota
	eApprove
	eReject
	ePause
	eResume
	eComment
	eEscalate
	eRoute
	eClose
	eRework
	numEvents
)

var tEventNames = Names{
	Package: "review", Type: "Event", What: "event",
	List: []string{"submit", "approve", "reject", "pause", "resume", "comment", "escalate", "route", "close", "rework"},
}

func (e tEvent) String() string               { return tEventNames.String(int(e)) }
func (e tEvent) MarshalText() ([]byte, error) { return tEventNames.Marshal(int(e)) }
func (e *tEvent) UnmarshalText(b []byte) error {
	return Unmarshal(&tEventNames, b, e)
}

type tRole uint8

const (
	rNone tRole = iota
	rAdmin
	rEditor
	rViewer
	rOwner
)

var tRoleNames = Names{
	Package: "review", Type: "Role", What: "role",
	List: []string{"", "admin", "editor", "viewer", "owner"}, None: true,
}

func (r tRole) String() string { return tRoleNames.String(int(r)) }

// Guards, policies, counters, context fields and checkpoints, by index.
const (
	gOK           = 0
	gUrgent       = 1
	gRouteApprove = 2
	gRouteBack    = 3

	pEditors = 0

	cRejections  = 0
	cComments    = 1
	cEscalations = 2
	cSubmits     = 3

	fTitle    = 0
	fReviewer = 1
	fNote     = 2
)

var tFieldNames = []string{"title", "reviewer", "note"}

// tCtx is the machine's context. Bad, when set to something JSON cannot encode, makes the
// event log entry fail to encode.
type tCtx struct {
	Title    string `json:"title"`
	Reviewer string `json:"reviewer"`
	Note     string `json:"note"`
	N        int    `json:"n"` // every action increments it
	Bad      any    `json:"bad,omitempty"`
}

func (c *tCtx) field(f int) *string {
	return [...]*string{&c.Title, &c.Reviewer, &c.Note}[f]
}

// tExtra is the machine's extra data: a tag the check of Restore sees, the payloads of
// submit and reject, and the policies.
type tExtra struct {
	Tag      string         `json:"tag,omitempty"`
	Submit   tSubmitPayload `json:"submit,omitzero"`
	Reject   tRejectPayload `json:"reject,omitzero"`
	Policies tPolicies      `json:"policies,omitzero"`
}

// tSubmitPayload is submit's payload: its title is required, so that the zero payload is
// invalid.
type tSubmitPayload struct {
	Title string `json:"title"`
}

func (p *tSubmitPayload) Validate() []FieldError {
	if p.Title == "" {
		return []FieldError{{Field: "title", Message: "required"}}
	}
	return nil
}

// tRejectPayload is reject's payload: a severity from 0 to 5, so that the zero payload is
// valid.
type tRejectPayload struct {
	Severity int `json:"severity"`
}

func (p *tRejectPayload) Validate() []FieldError {
	if p.Severity < 0 || p.Severity > 5 {
		return []FieldError{{Field: "severity", Message: "must be from 0 to 5"}}
	}
	return nil
}

// tPolicies are the machine's policies: Editors is policy pEditors.
type tPolicies struct {
	Editors bool `json:"editors"`
}

type (
	tDef      = Def[tState, tEvent, tRole]
	tMachine  = Machine[tState, tEvent, tRole, tCtx, tExtra]
	tStep     = Step[tState, tEvent, tRole]
	tIn       = Input[tRole]
	tEntryLog = LogEntry[tState, tEvent, tRole]
	tSnapshot = Snapshot[tState, tCtx, tExtra]

	pDef     = Def[tState, tEvent, NoRole]
	pMachine = Machine[tState, tEvent, NoRole, tCtx, None]
)

// tOps implements every hook interface (Guards, Actions, Requirer, Policies,
// Checkpointer), recording what the engine calls back.
type tOps struct {
	m        *tMachine
	guards   map[int]bool
	policies map[int]bool
	requires map[tState][]int // the context fields each state requires
	cpErr    error
	actErr   map[int]error // the actions that fail, with their error

	asked      []int   // guards evaluated, in order
	guardSteps []tStep // the step each guard saw
	acts       []string
	steps      []tStep // the step each action saw
	cps        []string
}

func (o *tOps) Guard(_ context.Context, g int, st tStep) bool {
	o.asked = append(o.asked, g)
	o.guardSteps = append(o.guardSteps, st)
	return o.guards[g]
}

func (o *tOps) Act(_ context.Context, a int, st tStep) error {
	o.acts = append(o.acts, fmt.Sprintf("a%d %s->%s", a, st.From, st.To))
	o.steps = append(o.steps, st)
	if o.m != nil {
		o.m.Context.N++
	}
	return o.actErr[a]
}

func (o *tOps) Require(s tState, c *tCtx) []FieldError {
	var errs []FieldError
	for _, f := range o.requires[s] {
		if *c.field(f) == "" {
			errs = append(errs, FieldError{Field: tFieldNames[f], Message: "required"})
		}
	}
	return errs
}

func (o *tOps) SetField(c *tCtx, f int, text string) { *c.field(f) = text }

func (o *tOps) Policy(p int) bool { return o.policies[p] }

func (o *tOps) Checkpoint(_ context.Context, cp int, st tStep) error {
	o.cps = append(o.cps, fmt.Sprintf("cp%d %s->%s", cp, st.From, st.To))
	return o.cpErr
}

// xOps is tOps for a machine whose extra data holds payloads and policies (withExtras): it
// reaches into them (Extras), and its policy is the one in the machine's extra data.
type xOps struct{ *tOps }

func (o xOps) Payload(x *tExtra, e int, clear bool) Payload {
	var p Payload
	switch tEvent(e) {
	case eSubmit:
		if clear {
			x.Submit = tSubmitPayload{}
		}
		p = &x.Submit
	case eReject:
		if clear {
			x.Reject = tRejectPayload{}
		}
		p = &x.Reject
	}
	return p
}

func (o xOps) PolicySet(x *tExtra, clear bool) any {
	if clear {
		x.Policies = tPolicies{}
	}
	return &x.Policies
}

func (o xOps) Policy(p int) bool { return p == pEditors && o.m.extra.Policies.Editors }

// reset forgets the calls recorded so far.
func (o *tOps) reset() { o.asked, o.guardSteps, o.acts, o.steps, o.cps = nil, nil, nil, nil, nil }

type fakeClock struct{ t time.Time }

func (c *fakeClock) Now() time.Time      { return c.t }
func (c *fakeClock) add(d time.Duration) { c.t = c.t.Add(d) }

var t0 = time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC)

var bg = context.Background()

func ss(xs ...tState) []int32 {
	out := make([]int32, len(xs))
	for i, x := range xs {
		out[i] = int32(x)
	}
	return out
}

func es(xs ...tEvent) []int32 {
	out := make([]int32, len(xs))
	for i, x := range xs {
		out[i] = int32(x)
	}
	return out
}

// finish fills d's Moves and Pairs from its transitions, as the generator does: every
// (state, event) pair with transitions gets a Pair listing them in order (conds gives the
// conditions of a transition by index), and a Moves entry that is the target when the pair's
// only transition does nothing but move, MoveStep otherwise.
func finish[R EnumType](d *Def[tState, tEvent, R], conds map[int][]int32) *Def[tState, tEvent, R] {
	ns, ne := len(d.States), d.NumEvents
	type key struct{ s, e int32 }
	cands := map[key][]Cand{}
	for i, t := range d.Transitions {
		for _, s := range t.From {
			for _, e := range t.On {
				k := key{s, e}
				cands[k] = append(cands[k], Cand{T: int32(i), Conds: conds[i]})
			}
		}
	}
	d.Moves = make([]uint32, ns*ne)
	for s := range ns {
		for e := range ne {
			i := s*ne + e
			cs, ok := cands[key{int32(s), int32(e)}]
			if !ok {
				d.Moves[i] = MoveRefused(ns)
				continue
			}
			d.Pairs = append(d.Pairs, Pair{State: int32(s), Event: int32(e), Cands: cs})
			d.Moves[i] = MoveStep(ns)
			if e < len(d.Payloads) && d.Payloads[e] {
				continue // Fire validates the payload
			}
			if to, ok := fixedMove(d, s, cs); ok {
				d.Moves[i] = uint32(to)
			}
		}
	}
	return d
}

// fixedMove returns the target of a pair whose only transition does nothing but move.
func fixedMove[R EnumType](d *Def[tState, tEvent, R], s int, cs []Cand) (int, bool) {
	if len(cs) != 1 || len(cs[0].Conds) > 0 || d.Timing || d.History || d.EveryCheckpoint >= 0 {
		return 0, false
	}
	for _, c := range d.Counters {
		if c.ResetOnSuccess {
			return 0, false
		}
	}
	t := &d.Transitions[cs[0].T]
	if !t.Plain || len(t.Roles) > 0 || len(t.Actions) > 0 || len(t.Inc) > 0 || len(t.Reset) > 0 || t.Checkpoint >= 0 || t.Require {
		return 0, false
	}
	var to int
	switch t.Kind {
	case TargetInternal:
		return s, true
	case TargetFixed:
		to = int(t.Target)
	default:
		return 0, false
	}
	if len(d.States[s].Exit) > 0 || len(d.States[to].Entry) > 0 || (d.States[to].Remembers && to != s) {
		return 0, false
	}
	return to, true
}

// plainDef is a machine whose transitions do nothing but move: its dispatch table answers
// every event.
func plainDef() *pDef {
	return finish(&pDef{
		Spec:      &Spec{Package: "plain", Machine: "Job"},
		States:    make([]StateDef, numStates),
		NumEvents: int(numEvents),
		Initial:   sDraft,
		Transitions: []Transition{
			{From: ss(sDraft), On: es(eSubmit), To: ss(sReview), Target: int32(sReview), Plain: true, Checkpoint: -1},
			{From: ss(sReview), On: es(eApprove), To: ss(sApproved), Target: int32(sApproved), Plain: true, Checkpoint: -1},
			{From: ss(sReview), On: es(eReject), To: ss(sRejected), Target: int32(sRejected), Plain: true, Checkpoint: -1},
			{From: ss(sDraft, sReview), On: es(ePause), To: ss(sPaused), Target: int32(sPaused), Plain: true, Checkpoint: -1},
			{From: ss(sPaused), On: es(eResume), To: ss(sDraft), Target: int32(sDraft), Plain: true, Checkpoint: -1},
			{From: ss(sReview), On: es(eComment), To: ss(sReview), Kind: TargetInternal, Plain: true, Checkpoint: -1},
			{From: ss(sApproved), On: es(eClose), To: ss(sClosed), Target: int32(sClosed), Plain: true, Checkpoint: -1},
		},
		EveryCheckpoint: -1,
	}, nil)
}

func newPlain() *pMachine {
	m := &pMachine{ID: "job-1"}
	Init(m, plainDef(), nil)
	return m
}

// richDef is a machine with every feature: guards, roles and policies, history and choice
// targets, counters with limits, required fields, actions, checkpoints, time, history and
// idempotency keys. opts change it before its dispatch table is built.
func richDef(opts ...func(*tDef)) *tDef {
	d := &tDef{
		Spec: &Spec{Package: "review", Machine: "Review"},
		States: []StateDef{
			sDraft:     {Exit: []int32{4}},
			sReview:    {Entry: []int32{5}, Exit: []int32{6}, Timeout: 10 * time.Minute, Configurable: true, Levels: []int{80, 100, 150}, LevelValues: []int{2, 3, 4}},
			sPaused:    {Remembers: true, From: ss(sDraft, sReview), Timeout: time.Hour},
			sApproved:  {Entry: []int32{7}},
			sRejected:  {Terminal: true},
			sEscalated: {},
			sClosed:    {Terminal: true},
		},
		NumEvents: int(numEvents),
		Initial:   sDraft,
		Transitions: []Transition{
			0: {From: ss(sDraft), On: es(eSubmit), To: ss(sReview), Target: int32(sReview), Actions: []int32{0}, Inc: []int32{cSubmits}, Checkpoint: -1},
			1: {From: ss(sReview), On: es(eApprove), To: ss(sApproved), Target: int32(sApproved),
				Roles: []RoleRule{{Role: int32(rAdmin), Policy: -1}, {Role: int32(rEditor), Policy: pEditors}}, Require: true, Actions: []int32{1}, Checkpoint: 0},
			2:  {From: ss(sReview), On: es(eApprove), To: ss(sRejected), Target: int32(sRejected), Require: true, Actions: []int32{2}, Checkpoint: -1},
			3:  {From: ss(sReview), On: es(eReject), To: ss(sDraft, sRejected), Target: int32(sDraft), Inc: []int32{cRejections}, Require: true, Actions: []int32{8}, Checkpoint: -1},
			4:  {From: ss(sDraft, sReview), On: es(ePause), To: ss(sPaused), Target: int32(sPaused), Plain: true, Checkpoint: -1},
			5:  {From: ss(sPaused), On: es(eResume), To: ss(sDraft, sReview), Kind: TargetHistory, Target: int32(sPaused), Checkpoint: -1},
			6:  {From: ss(sDraft, sReview), On: es(eComment), To: ss(sDraft, sReview), Kind: TargetInternal, Actions: []int32{3}, Inc: []int32{cComments}, Checkpoint: -1},
			7:  {From: ss(sReview), On: es(eEscalate), To: ss(sEscalated), Target: int32(sEscalated), Inc: []int32{cEscalations}, Require: true, Checkpoint: -1},
			8:  {From: ss(sEscalated), On: es(eRoute), To: ss(sDraft, sReview, sApproved), Kind: TargetChoice, Choices: []ChoiceDef{{Conds: []int32{gRouteApprove}, Target: int32(sApproved)}, {Conds: []int32{gRouteBack}, Kind: TargetHistory, Target: int32(sPaused)}}, Require: true, Checkpoint: -1},
			9:  {From: ss(sApproved), On: es(eClose), To: ss(sClosed), Target: int32(sClosed), Plain: true, Checkpoint: -1},
			10: {From: ss(sApproved), On: es(eRework), To: ss(sDraft), Target: int32(sDraft), Reset: []int32{cSubmits, cRejections}, Plain: true, Checkpoint: 1},
		},
		Counters: []Counter{
			cRejections:  {Name: "rejections", Limit: 3, Configurable: true, Then: int32(sRejected), Summary: fNote},
			cComments:    {Name: "comments", PerState: true, ResetOnSuccess: true, Then: -1, Summary: -1},
			cEscalations: {Name: "escalations", Limit: 2, Max: true, Configurable: true, Then: -1, Summary: -1},
			cSubmits:     {Name: "submits", Then: -1, Summary: -1},
		},
		AlwaysRoles:     []tRole{rOwner},
		EveryCheckpoint: -1,
		Idempotent:      true,
		History:         true,
		Timing:          true,
		Roles:           true,
	}
	for _, o := range opts {
		o(d)
	}
	return finish(d, map[int][]int32{1: {gOK}, 2: {^gOK, gUrgent}})
}

// untimed makes richDef a machine that keeps no time nor history, and whose counters do not
// reset on success, so that its dispatch table answers some events itself.
func untimed(d *tDef) {
	d.Timing, d.History = false, false
	d.Counters[cComments].ResetOnSuccess = false
}

// rig is a machine of richDef with its ops and a fake clock at t0.
type rig struct {
	m   *tMachine
	ops *tOps
	clk *fakeClock
	d   *tDef
}

func newRig(opts ...func(*tDef)) *rig {
	return attach(richDef(opts...))
}

// withExtras makes richDef a machine whose submit and reject carry payloads and whose
// extra data holds policies; newRig and attach give it xOps.
func withExtras(d *tDef) {
	d.Payloads = make([]bool, numEvents)
	d.Payloads[eSubmit], d.Payloads[eReject] = true, true
	d.Policies = true
}

// attach returns a new machine of d.
func attach(d *tDef) *rig {
	m := &tMachine{}
	ops := &tOps{m: m, guards: map[int]bool{}, policies: map[int]bool{},
		requires: map[tState][]int{sApproved: {fReviewer}, sRejected: {fNote}, sEscalated: {fTitle}}}
	if d.Payloads != nil {
		Init(m, d, xOps{ops})
	} else {
		Init(m, d, ops)
	}
	m.ID = "doc-1"
	clk := &fakeClock{t: t0}
	SetClock(m, clk)
	return &rig{m: m, ops: ops, clk: clk, d: d}
}

// fire fires e as in says, failing t on a refusal.
func (r *rig) fire(t *testing.T, e tEvent, in tIn) tState {
	t.Helper()
	s, err := r.m.FireWith(bg, e, in)
	if err != nil {
		t.Fatalf("%s in %s: %v", e, r.m.State(), err)
	}
	return s
}

// walk fires the events in order as admin.
func (r *rig) walk(t *testing.T, events ...tEvent) {
	t.Helper()
	for _, e := range events {
		r.fire(t, e, tIn{Role: rAdmin})
	}
}

func snapJSON(t *testing.T, s any) string {
	t.Helper()
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestEnginePlainMoves(t *testing.T) {
	steps := []struct {
		e    tEvent
		want tState
		msg  string // the refusal's message; "" when accepted
	}{
		{eApprove, sDraft, "plain: no transition from draft on approve"},
		{eSubmit, sReview, ""},
		{eComment, sReview, ""}, // internal
		{eSubmit, sReview, "plain: no transition from review on submit"},
		{ePause, sPaused, ""},
		{eResume, sDraft, ""},
		{eSubmit, sReview, ""},
		{eApprove, sApproved, ""},
		{eClose, sClosed, ""},
		{eSubmit, sClosed, "plain: closed is terminal: submit is not accepted"},
	}
	// fast answers from the dispatch table; slow goes through the pairs (FireWith).
	fast, slow := newPlain(), newPlain()
	seq := int64(0)
	for i, st := range steps {
		for _, m := range []*pMachine{fast, slow} {
			var got tState
			var err error
			if m == fast {
				got, err = m.Fire(bg, st.e)
			} else {
				got, err = m.FireWith(bg, st.e, Input[NoRole]{})
			}
			if got != st.want || m.State() != st.want {
				t.Fatalf("step %d (%s): Fire = %s, State = %s, want %s", i, st.e, got, m.State(), st.want)
			}
			if st.msg == "" {
				if err != nil {
					t.Fatalf("step %d (%s): %v", i, st.e, err)
				}
				continue
			}
			var it *InvalidTransitionError[tState, tEvent]
			if !errors.As(err, &it) || it.State != st.want || it.Event != st.e {
				t.Fatalf("step %d (%s): error %#v, want an InvalidTransitionError", i, st.e, err)
			}
			if !errors.Is(err, ErrInvalidTransition) || !errors.Is(err, ErrRefused) || errors.Is(err, ErrGuard) {
				t.Errorf("step %d: errors.Is does not match the sentinels: %v", i, err)
			}
			if err.Error() != st.msg {
				t.Errorf("step %d: error %q, want %q", i, err, st.msg)
			}
		}
		if st.msg == "" {
			seq++
		}
		if fast.Seq() != seq || slow.Seq() != seq {
			t.Fatalf("step %d: Seq = %d and %d, want %d", i, fast.Seq(), slow.Seq(), seq)
		}
	}
}

func TestEnginePermittedPlain(t *testing.T) {
	m := newPlain()
	want := map[tState][]tEvent{
		sDraft:    {eSubmit, ePause},
		sReview:   {eApprove, eReject, ePause, eComment},
		sPaused:   {eResume},
		sApproved: {eClose},
		sClosed:   nil,
	}
	for s, events := range want {
		m.state = s
		buf := make([]tEvent, 1, 8)
		buf[0] = eRework
		got := m.Permitted(bg, buf)
		if !slices.Equal(got, append([]tEvent{eRework}, events...)) {
			t.Errorf("Permitted in %s = %v, want %v after the buffer's content", s, got, events)
		}
		for e := range numEvents {
			if can := m.Can(bg, e); can != slices.Contains(events, e) {
				t.Errorf("Can(%s) in %s = %v", e, s, can)
			}
			if can := m.CanWith(bg, e, Input[NoRole]{}); can != slices.Contains(events, e) {
				t.Errorf("CanWith(%s) in %s = %v", e, s, can)
			}
		}
	}
	// The refusal's Permitted lists what the spec accepts.
	m.state = sReview
	_, err := m.Fire(bg, eClose)
	var it *InvalidTransitionError[tState, tEvent]
	if !errors.As(err, &it) || !slices.Equal(it.Permitted(), want[sReview]) {
		t.Errorf("refusal %v: Permitted() = %v, want %v", err, it.Permitted(), want[sReview])
	}
}

func TestEngineOutOfRange(t *testing.T) {
	t.Run("event", func(t *testing.T) {
		for _, name := range []string{"plain", "rich"} {
			var fire func(tEvent) (tState, error)
			var can func(tEvent) bool
			var seq func() int64
			if name == "plain" {
				m := newPlain()
				fire, can, seq = func(e tEvent) (tState, error) { return m.Fire(bg, e) }, func(e tEvent) bool { return m.Can(bg, e) }, m.Seq
			} else {
				r := newRig()
				fire, can, seq = func(e tEvent) (tState, error) { return r.m.Fire(bg, e) }, func(e tEvent) bool { return r.m.Can(bg, e) }, r.m.Seq
			}
			got, err := fire(numEvents + 3)
			var it *InvalidTransitionError[tState, tEvent]
			if got != sDraft || !errors.As(err, &it) || it.State != sDraft || it.Event != numEvents+3 || !errors.Is(err, ErrRefused) {
				t.Errorf("%s: Fire(out of range) = %s, %v", name, got, err)
			}
			if !strings.Contains(err.Error(), "Event(13)") {
				t.Errorf("%s: %q does not name the event", name, err)
			}
			if can(numEvents+3) || seq() != 0 {
				t.Errorf("%s: Can(out of range) is true, or Seq is %d", name, seq())
			}
		}
	})
	t.Run("state", func(t *testing.T) {
		r := newRig()
		r.m.state = numStates + 2
		got, err := r.m.Fire(bg, eSubmit)
		var it *InvalidTransitionError[tState, tEvent]
		if got != numStates+2 || !errors.As(err, &it) || it.State != numStates+2 || it.Event != eSubmit {
			t.Errorf("Fire in an out-of-range state = %s, %v", got, err)
		}
		if r.m.Can(bg, eSubmit) || r.m.CanWith(bg, eSubmit, tIn{Role: rAdmin}) {
			t.Error("Can in an out-of-range state")
		}
		if got := r.m.Permitted(bg, []tEvent{eClose}); !slices.Equal(got, []tEvent{eClose}) {
			t.Errorf("Permitted in an out-of-range state = %v", got)
		}
		if got := TimeoutLevel(r.m, t0.Add(time.Hour)); got != 0 {
			t.Errorf("TimeoutLevel in an out-of-range state = %d", got)
		}
		if got := TimeByState(r.m, t0.Add(time.Hour)); !slices.Equal(got, make([]time.Duration, numStates)) {
			t.Errorf("TimeByState in an out-of-range state = %v", got)
		}
		p := newPlain()
		p.state = numStates
		if got, err := p.Fire(bg, eSubmit); got != numStates || !errors.Is(err, ErrInvalidTransition) {
			t.Errorf("plain Fire in an out-of-range state = %s, %v", got, err)
		}
		if p.Can(bg, eSubmit) {
			t.Error("plain Can in an out-of-range state")
		}
	})
}

func TestEngineGuards(t *testing.T) {
	cases := []struct {
		name   string
		guards map[int]bool
		ctx    tCtx
		want   tState
		is     error // the refusal's sentinel, nil when accepted
		asked  []int
	}{
		{"first candidate", map[int]bool{gOK: true}, tCtx{Reviewer: "bo"}, sApproved, nil, []int{gOK}},
		{"first candidate wins", map[int]bool{gOK: true, gUrgent: true}, tCtx{Reviewer: "bo", Note: "n"}, sApproved, nil, []int{gOK}},
		{"negated condition", map[int]bool{gUrgent: true}, tCtx{Note: "late"}, sRejected, nil, []int{gOK, gOK, gUrgent}},
		{"none holds", map[int]bool{}, tCtx{Reviewer: "bo", Note: "n"}, sReview, ErrGuard, []int{gOK, gOK, gUrgent}},
		// Allowed is computed by asking the guards again.
		{"the candidate's target requires", map[int]bool{gUrgent: true}, tCtx{Reviewer: "bo"}, sReview, ErrValidation, []int{gOK, gOK, gUrgent, gOK, gOK, gUrgent}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := newRig()
			r.walk(t, eSubmit)
			r.ops.reset()
			r.ops.guards = c.guards
			r.m.Context = c.ctx
			got, err := r.m.FireWith(bg, eApprove, tIn{Role: rAdmin})
			if got != c.want || r.m.State() != c.want {
				t.Errorf("FireWith = %s (state %s), want %s", got, r.m.State(), c.want)
			}
			if c.is == nil && err != nil || c.is != nil && (!errors.Is(err, c.is) || !errors.Is(err, ErrRefused)) {
				t.Errorf("error %v, want %v", err, c.is)
			}
			if !slices.Equal(r.ops.asked, c.asked) {
				t.Errorf("guards asked %v, want %v", r.ops.asked, c.asked)
			}
			for _, st := range r.ops.guardSteps {
				if st.From != sReview || st.To != sReview || st.Event != eApprove || st.Role != rAdmin || !st.At.IsZero() {
					t.Errorf("a guard saw %+v", st)
				}
			}
			if c.is == ErrGuard {
				var ge *GuardError[tState, tEvent]
				if !errors.As(err, &ge) || ge.State != sReview || ge.Event != eApprove {
					t.Errorf("error %#v, want a GuardError", err)
				}
				if want := "review: review on approve: no transition's guards hold"; err.Error() != want {
					t.Errorf("error %q, want %q", err, want)
				}
				if r.m.Seq() != 1 || len(r.ops.acts) != 0 {
					t.Errorf("a refusal changed the machine: seq %d, actions %v", r.m.Seq(), r.ops.acts)
				}
			}
		})
	}
}

func TestEngineRoles(t *testing.T) {
	cases := []struct {
		name   string
		role   tRole
		policy bool
		always []tRole
		urgent bool // the candidate with no roles is taken
		ok     bool
	}{
		{"no role", rNone, true, []tRole{rOwner}, false, false},
		{"a role no rule names", rViewer, true, []tRole{rOwner}, false, false},
		{"a rule without policy", rAdmin, false, []tRole{rOwner}, false, true},
		{"a rule whose policy holds", rEditor, true, []tRole{rOwner}, false, true},
		{"a rule whose policy does not hold", rEditor, false, []tRole{rOwner}, false, false},
		{"a role that fires everything", rOwner, false, []tRole{rOwner}, false, true},
		{"that role on another machine", rOwner, false, nil, false, false},
		{"a transition naming no roles", rNone, false, nil, true, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := newRig(func(d *tDef) { d.AlwaysRoles = c.always })
			r.walk(t, eSubmit)
			r.ops.reset()
			r.ops.policies[pEditors] = c.policy
			r.ops.guards = map[int]bool{gOK: !c.urgent, gUrgent: c.urgent}
			r.m.Context = tCtx{Reviewer: "bo", Note: "n"}
			in := tIn{Role: c.role}
			can := r.m.CanWith(bg, eApprove, in)
			got, err := r.m.FireWith(bg, eApprove, in)
			if can != c.ok || (err == nil) != c.ok {
				t.Fatalf("CanWith = %v, FireWith = %s, %v; want ok %v", can, got, err, c.ok)
			}
			if c.ok {
				if want := map[bool]tState{false: sApproved, true: sRejected}[c.urgent]; got != want {
					t.Errorf("FireWith = %s, want %s", got, want)
				}
				return
			}
			var pe *PermissionError[tState, tEvent, tRole]
			if !errors.As(err, &pe) || pe.State != sReview || pe.Event != eApprove || pe.Role != c.role {
				t.Fatalf("error %#v, want a PermissionError", err)
			}
			if !errors.Is(err, ErrPermission) || !errors.Is(err, ErrRefused) {
				t.Errorf("errors.Is does not match: %v", err)
			}
			want := fmt.Sprintf("review: review on approve is not permitted to role %q", c.role.String())
			if c.role.String() == "" {
				want = "review: review on approve is not permitted without a role"
			}
			if err.Error() != want {
				t.Errorf("error %q, want %q", err, want)
			}
			if got != sReview || r.m.Seq() != 1 || len(r.ops.acts) != 0 {
				t.Errorf("the refusal changed the machine: %s, seq %d, %v", got, r.m.Seq(), r.ops.acts)
			}
		})
	}
}

func TestEngineActionOrder(t *testing.T) {
	r := newRig()
	r.m.Context = tCtx{Reviewer: "bo"}
	r.ops.guards[gOK] = true
	steps := []struct {
		e    tEvent
		in   tIn
		acts []string
	}{
		// exit actions, the transition's actions, entry actions.
		{eSubmit, tIn{Actor: "ann"}, []string{"a4 draft->review", "a0 draft->review", "a5 draft->review"}},
		// an internal transition runs no exit or entry action.
		{eComment, tIn{}, []string{"a3 review->review"}},
		{eApprove, tIn{Role: rAdmin}, []string{"a6 review->approved", "a1 review->approved", "a7 review->approved"}},
		{eRework, tIn{}, []string{}},
		// leaving draft for paused: draft's exit action only.
		{ePause, tIn{}, []string{"a4 draft->paused"}},
	}
	n := 0
	for _, st := range steps {
		r.ops.reset()
		r.clk.add(time.Minute)
		r.fire(t, st.e, st.in)
		if !slices.Equal(r.ops.acts, st.acts) {
			t.Errorf("%s: actions %q, want %q", st.e, r.ops.acts, st.acts)
		}
		for _, s := range r.ops.steps {
			if s.Event != st.e || s.Role != st.in.Role || !s.At.Equal(r.clk.t) {
				t.Errorf("%s: an action saw %+v", st.e, s)
			}
		}
		n += len(st.acts)
		if r.m.Context.N != n {
			t.Errorf("%s: the actions ran %d times in all, want %d", st.e, r.m.Context.N, n)
		}
	}
}

func TestEngineInternal(t *testing.T) {
	r := newRig()
	r.walk(t, eSubmit)
	entered := EnteredAt(r.m)
	r.clk.add(time.Minute)
	r.ops.reset()
	got, err := r.m.Fire(bg, eComment)
	if got != sReview || err != nil {
		t.Fatalf("comment: %s, %v", got, err)
	}
	if !slices.Equal(r.ops.acts, []string{"a3 review->review"}) {
		t.Errorf("actions %q", r.ops.acts)
	}
	if r.m.Seq() != 2 || Count(r.m, cComments, sReview) != 1 || !EnteredAt(r.m).Equal(entered) {
		t.Errorf("seq %d, comments %d, entered at %v (was %v)", r.m.Seq(), Count(r.m, cComments, sReview), EnteredAt(r.m), entered)
	}
	h := History(r.m)
	if len(h) != 2 || h[1].From != sReview || h[1].To != sReview || h[1].Event != eComment || !h[1].At.Equal(r.clk.t) {
		t.Errorf("history %+v", h)
	}
}

func TestEngineHistoryTarget(t *testing.T) {
	for _, from := range []tState{sDraft, sReview} {
		t.Run(from.String(), func(t *testing.T) {
			r := newRig()
			if from == sReview {
				r.walk(t, eSubmit)
			}
			if s, ok := Remembered(r.m, sPaused); ok {
				t.Fatalf("paused remembers %s before being entered", s)
			}
			r.walk(t, ePause)
			if s, ok := Remembered(r.m, sPaused); !ok || s != from {
				t.Errorf("Remembered(paused) = %s, %v; want %s", s, ok, from)
			}
			if got := r.fire(t, eResume, tIn{}); got != from {
				t.Errorf("resume went to %s, want %s", got, from)
			}
			if s, ok := Remembered(r.m, sPaused); !ok || s != from {
				t.Errorf("leaving paused forgot it: %s, %v", s, ok)
			}
		})
	}
	t.Run("re-entering itself", func(t *testing.T) {
		// paused --comment--> paused, an external self-transition: paused still remembers
		// where it was entered from, live and replayed.
		selfLoop := func(d *tDef) {
			d.Transitions = append(d.Transitions, Transition{From: ss(sPaused), On: es(eComment), To: ss(sPaused), Target: int32(sPaused), Checkpoint: -1})
		}
		r := newRig(selfLoop)
		st := newStore()
		r.m.SetStore(st)
		r.walk(t, eSubmit, ePause, eComment)
		if s, ok := Remembered(r.m, sPaused); !ok || s != sReview {
			t.Errorf("after re-entering paused, Remembered(paused) = %s, %v; want review", s, ok)
		}
		r2 := newRig(selfLoop)
		if err := Replay(bg, r2.m, st, "doc-1", nil); err != nil {
			t.Fatal(err)
		}
		if s, ok := Remembered(r2.m, sPaused); !ok || s != sReview {
			t.Errorf("replayed, Remembered(paused) = %s, %v; want review", s, ok)
		}
		if got := r.fire(t, eResume, tIn{}); got != sReview {
			t.Errorf("resume = %s", got)
		}
	})
	t.Run("states that do not remember", func(t *testing.T) {
		r := newRig()
		r.walk(t, eSubmit)
		for _, s := range []tState{sDraft, sReview, numStates} {
			if got, ok := Remembered(r.m, s); ok {
				t.Errorf("Remembered(%s) = %s", s, got)
			}
		}
		if got, ok := Remembered(newPlain(), sPaused); ok {
			t.Errorf("a machine with no remembering state remembers %s", got)
		}
	})
	t.Run("nothing remembered", func(t *testing.T) {
		r := newRig()
		if err := Restore(r.m, tSnapshot{Version: 1, State: sPaused}, nil); err != nil {
			t.Fatal(err)
		}
		if r.m.Can(bg, eResume) {
			t.Error("Can(resume) with nothing remembered")
		}
		got, err := r.m.Fire(bg, eResume)
		var nh *NoHistoryError[tState, tEvent]
		if got != sPaused || !errors.As(err, &nh) || nh.State != sPaused || nh.Event != eResume || nh.Remembering != sPaused {
			t.Fatalf("resume = %s, %#v", got, err)
		}
		if !errors.Is(err, ErrNoHistory) || !errors.Is(err, ErrRefused) {
			t.Errorf("errors.Is does not match: %v", err)
		}
		if want := "review: paused on resume: paused remembers no state to return to"; err.Error() != want {
			t.Errorf("error %q, want %q", err, want)
		}
	})
}

func TestEngineChoice(t *testing.T) {
	cases := []struct {
		name        string
		pausedFirst bool // paused was entered from review before
		guards      map[int]bool
		reviewer    string
		want        tState
		is          error
		asked       []int
	}{
		{"first branch", false, map[int]bool{gRouteApprove: true}, "bo", sApproved, nil, []int{gRouteApprove}},
		{"first branch wins", true, map[int]bool{gRouteApprove: true, gRouteBack: true}, "bo", sApproved, nil, []int{gRouteApprove}},
		{"first branch requires", false, map[int]bool{gRouteApprove: true}, "", sEscalated, ErrValidation, []int{gRouteApprove, gRouteApprove}},
		{"history branch", true, map[int]bool{gRouteBack: true}, "", sReview, nil, []int{gRouteApprove, gRouteBack}},
		{"history branch with nothing remembered", false, map[int]bool{gRouteBack: true}, "", sEscalated, ErrNoHistory, []int{gRouteApprove, gRouteBack}},
		{"no branch", true, map[int]bool{}, "bo", sEscalated, ErrNoChoice, []int{gRouteApprove, gRouteBack}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := newRig()
			r.m.Context = tCtx{Title: "t", Reviewer: c.reviewer}
			r.walk(t, eSubmit)
			if c.pausedFirst {
				r.walk(t, ePause, eResume)
			}
			r.walk(t, eEscalate)
			r.ops.reset()
			r.ops.guards = c.guards
			got, err := r.m.FireWith(bg, eRoute, tIn{Role: rViewer})
			if got != c.want || r.m.State() != c.want {
				t.Errorf("route = %s (state %s), want %s", got, r.m.State(), c.want)
			}
			if c.is == nil && err != nil || c.is != nil && (!errors.Is(err, c.is) || !errors.Is(err, ErrRefused)) {
				t.Errorf("error %v, want %v", err, c.is)
			}
			if !slices.Equal(r.ops.asked, c.asked) {
				t.Errorf("guards asked %v, want %v", r.ops.asked, c.asked)
			}
			switch c.is {
			case ErrNoChoice:
				var nc *NoChoiceError[tState, tEvent]
				if !errors.As(err, &nc) || nc.State != sEscalated || nc.Event != eRoute {
					t.Errorf("error %#v", err)
				}
				if want := "review: escalated on route: no choice holds"; err.Error() != want {
					t.Errorf("error %q, want %q", err, want)
				}
			case ErrNoHistory:
				var nh *NoHistoryError[tState, tEvent]
				if !errors.As(err, &nh) || nh.State != sEscalated || nh.Remembering != sPaused {
					t.Errorf("error %#v", err)
				}
			case ErrValidation:
				var ve *ValidationError[tState, tEvent]
				if !errors.As(err, &ve) || ve.Target != sApproved {
					t.Errorf("error %#v", err)
				}
			}
		})
	}
}

func TestEngineCounters(t *testing.T) {
	r := newRig()
	r.m.Context = tCtx{Reviewer: "bo"}
	r.ops.guards[gOK] = true
	type counts struct{ rejections, commentsDraft, commentsReview, escalations, submits int }
	get := func() counts {
		return counts{Count(r.m, cRejections, 0), Count(r.m, cComments, sDraft), Count(r.m, cComments, sReview), Count(r.m, cEscalations, 0), Count(r.m, cSubmits, sClosed)}
	}
	steps := []struct {
		e    tEvent
		want counts
	}{
		{eComment, counts{0, 1, 0, 0, 0}}, // per state
		{eComment, counts{0, 2, 0, 0, 0}},
		{eSubmit, counts{0, 0, 0, 0, 1}}, // moving resets comments in the state left
		{eComment, counts{0, 0, 1, 0, 1}},
		{eReject, counts{1, 0, 0, 0, 1}},
		{eComment, counts{1, 1, 0, 0, 1}},
		{eSubmit, counts{1, 0, 0, 0, 2}},
		{eApprove, counts{1, 0, 0, 0, 2}},
		{eRework, counts{0, 0, 0, 0, 0}}, // resets rejections and submits
	}
	for i, st := range steps {
		r.fire(t, st.e, tIn{Role: rAdmin})
		if got := get(); got != st.want {
			t.Errorf("step %d (%s): counts %+v, want %+v", i, st.e, got, st.want)
		}
	}
	if got := Count(r.m, cComments, numStates); got != 0 {
		t.Errorf("Count of a per-state counter in no state = %d", got)
	}
	r.walk(t, eSubmit)
	if got := Count(r.m, cSubmits, numStates+5); got != 1 {
		t.Errorf("Count of a counter not per state, given no state = %d, want 1", got)
	}

	t.Run("reset on success spares the counter incremented", func(t *testing.T) {
		r := newRig(func(d *tDef) { d.Counters[cSubmits].ResetOnSuccess = true })
		r.walk(t, eSubmit)
		if got := Count(r.m, cSubmits, 0); got != 1 {
			t.Errorf("submits after submit = %d, want 1", got)
		}
		r.walk(t, eComment) // internal: no reset
		if got := Count(r.m, cSubmits, 0); got != 1 {
			t.Errorf("submits after an internal transition = %d, want 1", got)
		}
		r.walk(t, ePause)
		if got := Count(r.m, cSubmits, 0); got != 0 {
			t.Errorf("submits after pause = %d, want 0", got)
		}
	})
}

func TestEngineLimitRefuses(t *testing.T) {
	r := newRig()
	r.m.Context = tCtx{Title: "t"}
	r.ops.guards[gRouteBack] = true
	r.walk(t, eSubmit, ePause, eResume, eEscalate, eRoute) // escalations 1 (its max), back in review
	if r.m.State() != sReview || Count(r.m, cEscalations, 0) != 1 {
		t.Fatalf("in %s with %d escalations", r.m.State(), Count(r.m, cEscalations, 0))
	}
	// Each counter has its own slots: no comment was counted in any state.
	for s := range numStates {
		if n := Count(r.m, cComments, s); n != 0 {
			t.Errorf("comments in %s = %d", s, n)
		}
	}
	before := snapJSON(t, r.m.Snapshot())
	r.ops.reset()
	if r.m.Can(bg, eEscalate) {
		t.Error("Can(escalate) past the max")
	}
	got, err := r.m.Fire(bg, eEscalate)
	var le *LimitError[tState, tEvent]
	if got != sReview || !errors.As(err, &le) || le.State != sReview || le.Event != eEscalate || le.Counter != "escalations" || le.Limit != 2 {
		t.Fatalf("escalate = %s, %#v", got, err)
	}
	if !errors.Is(err, ErrLimit) || !errors.Is(err, ErrRefused) {
		t.Errorf("errors.Is does not match: %v", err)
	}
	// escalations has max: 1: the message says the spec's maximum, not the count it trips at.
	if want := "review: review on escalate: counter escalations reached its maximum of 1"; err.Error() != want || !le.Max {
		t.Errorf("error %q, want %q", err, want)
	}
	if after := snapJSON(t, r.m.Snapshot()); after != before || len(r.ops.acts) != 0 {
		t.Errorf("the refusal changed the machine:\n%s\n%s\n%v", before, after, r.ops.acts)
	}
	// Raising the max lets it through.
	if err := SetCounterLimit(r.m, cEscalations, 2); err != nil {
		t.Fatal(err)
	}
	if got := r.fire(t, eEscalate, tIn{}); got != sEscalated || Count(r.m, cEscalations, 0) != 2 {
		t.Errorf("escalate after raising the max: %s, %d", got, Count(r.m, cEscalations, 0))
	}
}

func TestEngineLimitRedirects(t *testing.T) {
	cases := []struct {
		name    string
		max     bool
		set     int // the limit set at run time, as the spec writes it; 0: none
		rejects int // the reject that trips
		summary string
	}{
		{"limit", false, 0, 3, "rejections reached its limit of 3: review -> draft went to rejected instead"},
		{"limit set", false, 2, 2, "rejections reached its limit of 2: review -> draft went to rejected instead"},
		{"limit set to 1", false, 1, 1, "rejections reached its limit of 1: review -> draft went to rejected instead"},
		{"max", true, 0, 3, "rejections reached its maximum of 2: review -> draft went to rejected instead"},
		{"max set", true, 4, 5, "rejections reached its maximum of 4: review -> draft went to rejected instead"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := newRig(func(d *tDef) { d.Counters[cRejections].Max = c.max })
			if c.set > 0 {
				if err := SetCounterLimit(r.m, cRejections, c.set); err != nil {
					t.Fatal(err)
				}
			}
			for i := 1; i < c.rejects; i++ {
				r.walk(t, eSubmit, eReject)
				if r.m.State() != sDraft || Count(r.m, cRejections, 0) != i || r.m.Context.Note != "" {
					t.Fatalf("reject %d: in %s, count %d, note %q", i, r.m.State(), Count(r.m, cRejections, 0), r.m.Context.Note)
				}
			}
			r.walk(t, eSubmit)
			r.ops.reset()
			// rejected requires a note: the summary written on the way provides it.
			if !r.m.Can(bg, eReject) {
				t.Error("Can(reject) is false")
			}
			if r.m.Context.Note != "" {
				t.Error("Can wrote the summary")
			}
			got := r.fire(t, eReject, tIn{})
			if got != sRejected || r.m.Context.Note != c.summary {
				t.Errorf("reject %d: %s, note %q; want rejected, %q", c.rejects, got, r.m.Context.Note, c.summary)
			}
			if Count(r.m, cRejections, 0) != 0 {
				t.Errorf("the tripped counter is %d, want 0", Count(r.m, cRejections, 0))
			}
			if want := []string{"a6 review->rejected", "a8 review->rejected"}; !slices.Equal(r.ops.acts, want) {
				t.Errorf("actions %q, want %q", r.ops.acts, want)
			}
		})
	}
	t.Run("the redirect's target requires", func(t *testing.T) {
		r := newRig()
		r.ops.requires[sRejected] = []int{fTitle, fNote}
		r.walk(t, eSubmit, eReject, eSubmit, eReject, eSubmit)
		r.ops.reset()
		before := snapJSON(t, r.m.Snapshot())
		got, err := r.m.FireWith(bg, eReject, tIn{Role: rAdmin})
		var ve *ValidationError[tState, tEvent]
		if got != sReview || !errors.As(err, &ve) || ve.Target != sRejected || !reflect.DeepEqual(ve.Errors, []FieldError{{"title", "required"}}) {
			t.Fatalf("reject = %s, %#v", got, err)
		}
		if after := snapJSON(t, r.m.Snapshot()); after != before || len(r.ops.acts) != 0 {
			t.Errorf("the refusal changed the machine:\n%s\n%s", before, after)
		}
	})
	t.Run("an internal transition redirected", func(t *testing.T) {
		r := newRig(func(d *tDef) {
			c := &d.Counters[cComments]
			c.Limit, c.Then, c.Summary = 3, int32(sEscalated), fNote
			d.Transitions[6].Require = true
		})
		r.m.Context.Title = "t"
		r.walk(t, eSubmit, eComment, eComment)
		entered := EnteredAt(r.m)
		r.clk.add(time.Minute)
		r.ops.reset()
		got := r.fire(t, eComment, tIn{})
		if got != sEscalated || Count(r.m, cComments, sReview) != 0 {
			t.Errorf("third comment: %s, count %d", got, Count(r.m, cComments, sReview))
		}
		if want := "comments reached its limit of 3: review -> review went to escalated instead"; r.m.Context.Note != want {
			t.Errorf("note %q, want %q", r.m.Context.Note, want)
		}
		// Redirected, it leaves review: review's exit action runs, and the clock moves.
		if want := []string{"a6 review->escalated", "a3 review->escalated"}; !slices.Equal(r.ops.acts, want) {
			t.Errorf("actions %q, want %q", r.ops.acts, want)
		}
		if !EnteredAt(r.m).Equal(r.clk.t) || EnteredAt(r.m).Equal(entered) {
			t.Errorf("entered escalated at %v, want %v", EnteredAt(r.m), r.clk.t)
		}
	})
	t.Run("the first tripped counter decides", func(t *testing.T) {
		for _, order := range [][]int32{{cEscalations, cRejections}, {cRejections, cEscalations}} {
			r := newRig(func(d *tDef) { d.Transitions[3].Inc = order })
			err := Restore(r.m, tSnapshot{Version: 1, State: sReview, Counters: map[string]int{"rejections": 2, "escalations": 1}}, nil)
			if err != nil {
				t.Fatal(err)
			}
			got, err := r.m.Fire(bg, eReject)
			if order[0] == cEscalations {
				if got != sReview || !errors.Is(err, ErrLimit) {
					t.Errorf("%v: %s, %v; want a LimitError", order, got, err)
				}
				continue
			}
			if got != sRejected || err != nil || Count(r.m, cRejections, 0) != 0 || Count(r.m, cEscalations, 0) != 0 {
				t.Errorf("%v: %s, %v, counters %d and %d", order, got, err, Count(r.m, cRejections, 0), Count(r.m, cEscalations, 0))
			}
		}
	})
}

func TestEngineCounterLimits(t *testing.T) {
	r := newRig()
	for c, want := range map[int]int{cRejections: 3, cEscalations: 1, cSubmits: 0, cComments: 0} {
		if got := CounterLimit(r.m, c); got != want {
			t.Errorf("CounterLimit(%s) = %d, want %d", r.d.Counters[c].Name, got, want)
		}
	}
	refused := []struct {
		c    int
		n    int
		want string
	}{
		{cSubmits, 3, "review: counter submits: the limit is not configurable"},
		{cRejections, 0, "review: counter rejections: limit 0 is below 1"},
		{cEscalations, -1, "review: counter escalations: max -1 is below 0"},
	}
	for _, x := range refused {
		if err := SetCounterLimit(r.m, x.c, x.n); err == nil || err.Error() != x.want {
			t.Errorf("SetCounterLimit(%d, %d) = %v, want %q", x.c, x.n, err, x.want)
		}
	}
	if s := r.m.Snapshot(); s.Limits != nil {
		t.Errorf("refused limits changed the snapshot: %v", s.Limits)
	}
	for c, n := range map[int]int{cRejections: 5, cEscalations: 0} {
		if err := SetCounterLimit(r.m, c, n); err != nil {
			t.Fatal(err)
		}
		if got := CounterLimit(r.m, c); got != n {
			t.Errorf("CounterLimit after setting %d = %d", n, got)
		}
	}
	if got := r.m.Snapshot().Limits; !reflect.DeepEqual(got, map[string]int{"rejections": 5, "escalations": 0}) {
		t.Errorf("Snapshot().Limits = %v", got)
	}
	// A max of 0: the first increment trips.
	r.m.Context.Title = "t"
	r.walk(t, eSubmit)
	if _, err := r.m.Fire(bg, eEscalate); !errors.Is(err, ErrLimit) {
		t.Errorf("escalate with a max of 0: %v", err)
	}
	// Back to the spec's limits: nothing is changed any more.
	for c, n := range map[int]int{cRejections: 3, cEscalations: 1} {
		if err := SetCounterLimit(r.m, c, n); err != nil {
			t.Fatal(err)
		}
	}
	if got := r.m.Snapshot().Limits; got != nil {
		t.Errorf("Snapshot().Limits after restoring the spec's = %v", got)
	}
}

func TestEngineRequire(t *testing.T) {
	r := newRig()
	r.m.Context = tCtx{Title: "t"}
	r.ops.guards[gOK] = true
	r.walk(t, eSubmit)
	r.ops.reset()
	before := snapJSON(t, r.m.Snapshot())
	in := tIn{Role: rAdmin}
	if r.m.CanWith(bg, eApprove, in) || r.m.Can(bg, eApprove) {
		t.Error("CanWith(approve) without a reviewer")
	}
	if got := r.m.PermittedWith(bg, in, nil); !slices.Equal(got, []tEvent{eReject, ePause, eComment, eEscalate}) {
		t.Errorf("PermittedWith = %v", got)
	}
	got, err := r.m.FireWith(bg, eApprove, in)
	var ve *ValidationError[tState, tEvent]
	if got != sReview || !errors.As(err, &ve) {
		t.Fatalf("approve = %s, %#v", got, err)
	}
	want := ValidationError[tState, tEvent]{State: sReview, Event: eApprove, Target: sApproved, Errors: []FieldError{{"reviewer", "required"}},
		Allowed: []tEvent{eReject, ePause, eComment, eEscalate}, spec: r.d.Spec}
	if !reflect.DeepEqual(*ve, want) {
		t.Errorf("error %+v, want %+v", *ve, want)
	}
	if !errors.Is(err, ErrValidation) || !errors.Is(err, ErrRefused) || err.Error() != "review: cannot enter approved: reviewer: required" {
		t.Errorf("error %q", err)
	}
	if after := snapJSON(t, r.m.Snapshot()); after != before || len(r.ops.acts) != 0 || len(r.ops.cps) != 0 {
		t.Errorf("the refusal changed the machine:\n%s\n%s", before, after)
	}
	// Without a title, escalate is not allowed either.
	r.m.Context.Title = ""
	_, err = r.m.FireWith(bg, eApprove, in)
	if !errors.As(err, &ve) || !slices.Equal(ve.Allowed, []tEvent{eReject, ePause, eComment}) {
		t.Errorf("Allowed without a title: %v", err)
	}
	r.m.Context.Reviewer = "bo"
	if !r.m.CanWith(bg, eApprove, in) {
		t.Error("CanWith(approve) with a reviewer")
	}
	if got := r.fire(t, eApprove, in); got != sApproved {
		t.Errorf("approve = %s", got)
	}
}

// TestEngineDryRuns checks, in every state a path reaches and for every event, that Can,
// CanWith, Permitted and PermittedWith agree with what FireWith then does, and change
// nothing themselves.
func TestEngineDryRuns(t *testing.T) {
	paths := [][]tEvent{
		nil,
		{eSubmit},
		{eSubmit, eComment, eReject, eSubmit, eReject, eSubmit}, // the next reject trips
		{eSubmit, ePause},
		{eSubmit, eEscalate},
		{eSubmit, eApprove},
	}
	guards := []map[int]bool{{}, {gOK: true, gRouteBack: true}, {gUrgent: true, gRouteApprove: true}}
	for _, path := range paths {
		for gi, g := range guards {
			for _, role := range []tRole{rNone, rAdmin, rEditor} {
				for _, ctx := range []tCtx{{}, {Title: "t", Reviewer: "bo", Note: "n"}} {
					name := fmt.Sprintf("%v/guards %d/%s/%+v", path, gi, role, ctx)
					setup := func() *rig {
						r := newRig()
						r.m.Context = tCtx{Title: "t", Reviewer: "bo", Note: "n"}
						r.ops.guards = map[int]bool{gOK: true}
						r.walk(t, path...)
						r.m.Context = ctx
						r.ops.guards = g
						r.ops.reset()
						return r
					}
					r := setup()
					in := tIn{Role: role}
					before := snapJSON(t, r.m.Snapshot())
					hist := len(History(r.m))
					var can []tEvent
					for e := range numEvents + 1 {
						if r.m.CanWith(bg, e, in) {
							can = append(can, e)
						}
						if role == rNone && r.m.Can(bg, e) != r.m.CanWith(bg, e, in) {
							t.Errorf("%s: Can(%s) and CanWith disagree", name, e)
						}
					}
					permitted := r.m.PermittedWith(bg, in, nil)
					if !slices.Equal(can, permitted) {
						t.Errorf("%s: CanWith accepts %v, PermittedWith %v", name, can, permitted)
					}
					if role == rNone && !slices.Equal(r.m.Permitted(bg, nil), permitted) {
						t.Errorf("%s: Permitted and PermittedWith disagree", name)
					}
					if after := snapJSON(t, r.m.Snapshot()); after != before || len(History(r.m)) != hist || len(r.ops.acts) != 0 || len(r.ops.cps) != 0 {
						t.Errorf("%s: a dry run changed the machine:\n%s\n%s\nactions %v", name, before, after, r.ops.acts)
					}
					for e := range numEvents {
						r := setup()
						_, err := r.m.FireWith(bg, e, in)
						if (err == nil) != slices.Contains(can, e) {
							t.Errorf("%s: FireWith(%s) = %v, CanWith said %v", name, e, err, slices.Contains(can, e))
						}
					}
				}
			}
		}
	}
}

func TestEnginePermittedMixedRow(t *testing.T) {
	d := richDef(untimed)
	// approved answers close from the table and decides rework in step.
	ns := uint32(numStates)
	if got := d.Moves[int(sApproved)*int(numEvents)+int(eClose)]; got != uint32(sClosed) {
		t.Fatalf("the dispatch table sends close to %d", got)
	}
	if got := d.Moves[int(sApproved)*int(numEvents)+int(eRework)]; got != ns+1 {
		t.Fatalf("the dispatch table has %d for rework", got)
	}
	r := attach(d)
	r.m.Context.Reviewer = "bo"
	r.ops.guards[gOK] = true
	r.walk(t, eSubmit, eApprove)
	if got := r.m.Permitted(bg, nil); !slices.Equal(got, []tEvent{eClose, eRework}) {
		t.Errorf("Permitted in approved = %v", got)
	}
	if !r.m.Can(bg, eClose) || !r.m.Can(bg, eRework) || r.m.Can(bg, eSubmit) {
		t.Error("Can in approved")
	}
	// Fire answers close from the table: no log, no step, but a new state and seq.
	if got, err := r.m.Fire(bg, eClose); got != sClosed || err != nil || r.m.Seq() != 3 {
		t.Errorf("close = %s, %v, seq %d", got, err, r.m.Seq())
	}
	if _, err := r.m.Fire(bg, eClose); !errors.Is(err, ErrInvalidTransition) {
		t.Errorf("close in closed: %v", err)
	}
	// Without time, transitions do not touch the clock.
	if TimeByState(r.m, t0.Add(time.Hour)) != nil || Timeout(r.m, sReview) != 0 || TimeoutLevel(r.m, t0.Add(time.Hour)) != 0 {
		t.Error("a machine that keeps no time reports time")
	}
	if err := SetTimeout(r.m, sReview, time.Minute); err == nil {
		t.Error("SetTimeout on a machine that keeps no time")
	}
}

func TestEngineTiming(t *testing.T) {
	r := newRig()
	if !CreatedAt(r.m).Equal(t0) || !EnteredAt(r.m).Equal(t0) {
		t.Errorf("created at %v, entered at %v; want %v", CreatedAt(r.m), EnteredAt(r.m), t0)
	}
	r.clk.add(2 * time.Minute)
	r.walk(t, eSubmit)
	if !EnteredAt(r.m).Equal(t0.Add(2 * time.Minute)) {
		t.Errorf("entered review at %v", EnteredAt(r.m))
	}
	want := make([]time.Duration, numStates)
	want[sDraft], want[sReview] = 2*time.Minute, 3*time.Minute
	if got := TimeByState(r.m, t0.Add(5*time.Minute)); !slices.Equal(got, want) {
		t.Errorf("TimeByState = %v, want %v", got, want)
	}
	// The input's time wins over the clock's.
	at := t0.Add(time.Hour)
	r.ops.reset()
	r.fire(t, ePause, tIn{At: at})
	if !EnteredAt(r.m).Equal(at) || !r.m.Snapshot().UpdatedAt.Equal(at) || !r.ops.steps[0].At.Equal(at) {
		t.Errorf("pause at %v: entered at %v, updated at %v, actions saw %v", at, EnteredAt(r.m), r.m.Snapshot().UpdatedAt, r.ops.steps[0].At)
	}
	want[sReview], want[sPaused] = 58*time.Minute, 10*time.Minute
	if got := TimeByState(r.m, at.Add(10*time.Minute)); !slices.Equal(got, want) {
		t.Errorf("TimeByState = %v, want %v", got, want)
	}
	if h := History(r.m); len(h) != 2 || !h[0].At.Equal(t0.Add(2*time.Minute)) || !h[1].At.Equal(at) {
		t.Errorf("history %+v", h)
	}
	// SetClock keeps the times of a machine that has made transitions (a replayed one),
	// and restarts those of a new one.
	created, entered := CreatedAt(r.m), EnteredAt(r.m)
	clk := &fakeClock{t: t0.Add(24 * time.Hour)}
	SetClock(r.m, clk)
	if !CreatedAt(r.m).Equal(created) || !EnteredAt(r.m).Equal(entered) {
		t.Errorf("after SetClock: created %v, entered %v", CreatedAt(r.m), EnteredAt(r.m))
	}
	fresh := newRig()
	SetClock(fresh.m, clk)
	if !CreatedAt(fresh.m).Equal(clk.t) || !EnteredAt(fresh.m).Equal(clk.t) {
		t.Errorf("a new machine after SetClock: created %v, entered %v", CreatedAt(fresh.m), EnteredAt(fresh.m))
	}
}

func TestEngineTimeouts(t *testing.T) {
	r := newRig()
	if Timeout(r.m, sReview) != 10*time.Minute || Timeout(r.m, sPaused) != time.Hour || Timeout(r.m, sDraft) != 0 || Timeout(r.m, numStates) != 0 {
		t.Error("Timeout does not return the spec's timeouts")
	}
	for _, x := range []struct {
		s    tState
		d    time.Duration
		want string
	}{
		{sPaused, time.Minute, "review: the timeout of paused is not configurable"},
		{numStates, time.Minute, "review: the timeout of State(7) is not configurable"},
		{sReview, 0, "review: timeout of review must be positive"},
		{sReview, -time.Second, "review: timeout of review must be positive"},
	} {
		if err := SetTimeout(r.m, x.s, x.d); err == nil || err.Error() != x.want {
			t.Errorf("SetTimeout(%s, %v) = %v, want %q", x.s, x.d, err, x.want)
		}
	}
	if r.m.Snapshot().Timeouts != nil || Timeout(r.m, sReview) != 10*time.Minute {
		t.Error("a refused timeout changed the machine")
	}
	// Levels at 80%, 100% and 150% of review's timeout, whose values are 2, 3 and 4.
	r.walk(t, eSubmit)
	levels := func(d time.Duration) []struct {
		after time.Duration
		want  int
	} {
		return []struct {
			after time.Duration
			want  int
		}{{0, 0}, {d * 8 / 10, 2}, {d*8/10 - 1, 0}, {d - 1, 2}, {d, 3}, {d * 3 / 2, 4}, {d*3/2 - 1, 3}, {100 * d, 4}, {-time.Minute, 0}}
	}
	for _, x := range levels(10 * time.Minute) {
		if got := TimeoutLevel(r.m, t0.Add(x.after)); got != x.want {
			t.Errorf("TimeoutLevel after %v = %d, want %d", x.after, got, x.want)
		}
	}
	if err := SetTimeout(r.m, sReview, 20*time.Minute); err != nil {
		t.Fatal(err)
	}
	if Timeout(r.m, sReview) != 20*time.Minute || !reflect.DeepEqual(r.m.Snapshot().Timeouts, map[tState]time.Duration{sReview: 20 * time.Minute}) {
		t.Errorf("after SetTimeout: %v, %v", Timeout(r.m, sReview), r.m.Snapshot().Timeouts)
	}
	for _, x := range levels(20 * time.Minute) {
		if got := TimeoutLevel(r.m, t0.Add(x.after)); got != x.want {
			t.Errorf("TimeoutLevel after %v of 20m = %d, want %d", x.after, got, x.want)
		}
	}
	// A state with no timeout, and one with a timeout but no levels, report no level.
	r.walk(t, eReject)
	if got := TimeoutLevel(r.m, t0.Add(time.Hour)); got != 0 {
		t.Errorf("TimeoutLevel in draft = %d", got)
	}
	r.walk(t, ePause)
	if got := TimeoutLevel(r.m, t0.Add(100*time.Hour)); got != 0 {
		t.Errorf("TimeoutLevel in paused = %d", got)
	}
}

func TestEngineHistory(t *testing.T) {
	r := newRig()
	r.m.Context = tCtx{Reviewer: "bo"}
	r.ops.guards[gOK] = true
	ins := []struct {
		e  tEvent
		in tIn
	}{
		{eSubmit, tIn{EventID: "e1", Actor: "ann", Reason: "ready"}},
		{eComment, tIn{EventID: "e2", Actor: "bob"}},
		{eApprove, tIn{EventID: "e3", Role: rAdmin, Reason: "fine"}},
		{eRework, tIn{EventID: "e4"}},
	}
	var want []Record[tState, tEvent]
	for _, x := range ins {
		r.clk.add(time.Minute)
		from := r.m.State()
		to := r.fire(t, x.e, x.in)
		want = append(want, Record[tState, tEvent]{From: from, To: to, Event: x.e, EventID: x.in.EventID, At: r.clk.t, Actor: x.in.Actor, Reason: x.in.Reason})
	}
	// A refusal is not recorded.
	if _, err := r.m.Fire(bg, eClose); err == nil {
		t.Fatal("close in draft")
	}
	if got := History(r.m); !reflect.DeepEqual(got, want) {
		t.Errorf("History = %+v, want %+v", got, want)
	}
	SetHistoryWindow(r.m, 2)
	if got := History(r.m); !reflect.DeepEqual(got, want[2:]) {
		t.Errorf("History with a window of 2 = %+v", got)
	}
	r.walk(t, ePause)
	if got := History(r.m); len(got) != 2 || got[0] != want[3] || got[1].Event != ePause {
		t.Errorf("History with a window of 2 = %+v", got)
	}
	SetHistoryWindow(r.m, 0)
	r.walk(t, eResume)
	if got := History(r.m); r.m.history.Size() != DefaultWindow || len(got) < 3 || got[len(got)-1].Event != eResume || got[len(got)-2].Event != ePause {
		t.Errorf("History with the default window = %+v", got)
	}
	// A machine whose spec keeps no history has none.
	r2 := newRig(func(d *tDef) { d.History = false })
	r2.walk(t, eSubmit)
	if got := History(r2.m); len(got) != 0 {
		t.Errorf("History without history = %v", got)
	}
}

func TestEngineIdempotency(t *testing.T) {
	r := newRig()
	if got := r.fire(t, eSubmit, tIn{Key: "k1"}); got != sReview {
		t.Fatalf("submit = %s", got)
	}
	r.ops.reset()
	// Again: the first result, nothing fired.
	if got, err := r.m.FireWith(bg, eSubmit, tIn{Key: "k1"}); got != sReview || err != nil || r.m.Seq() != 1 || len(r.ops.acts) != 0 {
		t.Errorf("submit again = %s, %v; seq %d, actions %v", got, err, r.m.Seq(), r.ops.acts)
	}
	r.fire(t, ePause, tIn{Key: "k2"})
	// The first result, though the machine has moved on.
	if got, err := r.m.FireWith(bg, eSubmit, tIn{Key: "k1"}); got != sReview || err != nil || r.m.State() != sPaused || r.m.Seq() != 2 {
		t.Errorf("submit again from paused = %s, %v; state %s, seq %d", got, err, r.m.State(), r.m.Seq())
	}
	// The key with another event.
	got, err := r.m.FireWith(bg, eResume, tIn{Key: "k1"})
	var ic *IdempotencyConflictError[tState, tEvent]
	if got != sPaused || !errors.As(err, &ic) || ic.State != sPaused || ic.Event != eResume || ic.Key != "k1" || ic.Original != eSubmit {
		t.Fatalf("resume with k1 = %s, %#v", got, err)
	}
	if !errors.Is(err, ErrIdempotencyConflict) || !errors.Is(err, ErrRefused) {
		t.Errorf("errors.Is does not match: %v", err)
	}
	if want := `review: idempotency key "k1" was used for submit, not resume`; err.Error() != want {
		t.Errorf("error %q, want %q", err, want)
	}
	if r.m.State() != sPaused || r.m.Seq() != 2 {
		t.Error("the conflict changed the machine")
	}
	// A refused event does not use its key.
	if _, err := r.m.FireWith(bg, eApprove, tIn{Key: "k3"}); !errors.Is(err, ErrInvalidTransition) {
		t.Fatalf("approve in paused: %v", err)
	}
	if got := r.fire(t, eResume, tIn{Key: "k3"}); got != sReview {
		t.Errorf("resume with the key of a refusal = %s", got)
	}
	// No key: nothing remembered.
	r.fire(t, eComment, tIn{})
	r.fire(t, eComment, tIn{})
	if Count(r.m, cComments, sReview) != 2 {
		t.Errorf("comments without keys = %d", Count(r.m, cComments, sReview))
	}

	t.Run("a machine without idempotency ignores keys", func(t *testing.T) {
		r := newRig(func(d *tDef) { d.Idempotent = false })
		r.walk(t, eSubmit)
		r.fire(t, eComment, tIn{Key: "k"})
		r.fire(t, eComment, tIn{Key: "k"})
		if got := Count(r.m, cComments, sReview); got != 2 {
			t.Errorf("comments with one key = %d, want 2", got)
		}
		if _, err := r.m.FireWith(bg, ePause, tIn{Key: "k"}); err != nil || r.m.Seq() != 4 {
			t.Errorf("keys were honoured: %v, seq %d", err, r.m.Seq())
		}
	})
}

func TestEngineKeyWindow(t *testing.T) {
	t.Run("found in the store", func(t *testing.T) {
		r := newRig()
		st := newStore()
		r.m.SetStore(st)
		SetKeyWindow(r.m, 1)
		r.fire(t, eSubmit, tIn{Key: "k1"})
		r.fire(t, ePause, tIn{Key: "k2"}) // the window forgets k1
		if _, ok := r.m.keys.Get("k1"); ok {
			t.Fatal("the window of 1 still holds k1")
		}
		if got, err := r.m.FireWith(bg, eSubmit, tIn{Key: "k1"}); got != sReview || err != nil || r.m.Seq() != 2 {
			t.Errorf("submit with k1 = %s, %v, seq %d", got, err, r.m.Seq())
		}
		if _, err := r.m.FireWith(bg, eResume, tIn{Key: "k1"}); !errors.Is(err, ErrIdempotencyConflict) {
			t.Errorf("resume with k1: %v", err)
		}
		// A key neither the window nor the store knows fires.
		if got, err := r.m.FireWith(bg, eResume, tIn{Key: "k3"}); got != sReview || err != nil {
			t.Errorf("resume with k3 = %s, %v", got, err)
		}
		SetKeyWindow(r.m, 0)
		if r.m.keys.Size() != DefaultWindow {
			t.Errorf("the key window keeps %d", r.m.keys.Size())
		}
	})
	t.Run("forgotten without a store", func(t *testing.T) {
		r := newRig()
		SetKeyWindow(r.m, 1)
		r.fire(t, eComment, tIn{Key: "k1"})
		r.fire(t, eComment, tIn{Key: "k2"})
		r.fire(t, eComment, tIn{Key: "k1"}) // forgotten: fires again
		if got := Count(r.m, cComments, sDraft); got != 3 {
			t.Errorf("comments = %d, want 3", got)
		}
	})
	t.Run("the store fails to find it", func(t *testing.T) {
		r := newRig()
		boom := errors.New("boom")
		fs := &failStore{tStore: newStore()}
		r.m.SetStore(fs)
		SetKeyWindow(r.m, 1)
		r.fire(t, eSubmit, tIn{Key: "k1"})
		r.fire(t, eComment, tIn{Key: "k2"}) // the window forgets k1
		fs.findErr = boom
		got, err := r.m.FireWith(bg, eSubmit, tIn{Key: "k1"})
		var se *StoreError
		if got != sReview || !errors.As(err, &se) || se.Op != "find key" || se.Seq != 2 || !errors.Is(err, boom) {
			t.Errorf("submit with k1 = %s, %#v", got, err)
		}
		if r.m.Seq() != 2 {
			t.Error("the failure fired the event")
		}
	})
}

func TestEngineLogger(t *testing.T) {
	var buf bytes.Buffer
	r := newRig()
	r.m.SetLogger(slog.New(slog.NewTextHandler(&buf, nil)))
	r.walk(t, eSubmit)
	if buf.Len() != 0 {
		t.Errorf("an accepted event was logged: %s", buf.String())
	}
	if _, err := r.m.Fire(bg, eClose); err == nil {
		t.Fatal("close in review")
	}
	line := buf.String()
	for _, want := range []string{"level=WARN", `msg="event refused"`, "machine=Review", "id=doc-1", "state=review", "event=close", `error="review: no transition from review on close"`} {
		if !strings.Contains(line, want) {
			t.Errorf("the log %q lacks %q", line, want)
		}
	}
	if n := strings.Count(line, "\n"); n != 1 {
		t.Errorf("%d lines logged, want 1", n)
	}
	// FireWith logs too, and Can does not.
	buf.Reset()
	r.m.Can(bg, eClose)
	r.m.FireWith(bg, eApprove, tIn{})
	if !strings.Contains(buf.String(), "event=approve") || strings.Count(buf.String(), "\n") != 1 {
		t.Errorf("log %q", buf.String())
	}
	// Without the logger, nothing is logged.
	buf.Reset()
	r.m.SetLogger(nil)
	r.m.Fire(bg, eClose)
	if buf.Len() != 0 {
		t.Errorf("logged without a logger: %s", buf.String())
	}
	// Taking the store away leaves the logger.
	r.m.SetLogger(slog.New(slog.NewTextHandler(&buf, nil)))
	r.m.SetStore(nil)
	r.m.Fire(bg, eClose)
	if !strings.Contains(buf.String(), "event=close") {
		t.Errorf("no refusal logged after SetStore(nil): %q", buf.String())
	}
	buf.Reset()
	// A plain machine logs its refusals too.
	p := newPlain()
	p.SetLogger(slog.New(slog.NewTextHandler(&buf, nil)))
	if got, err := p.Fire(bg, eSubmit); got != sReview || err != nil || buf.Len() != 0 {
		t.Errorf("submit = %s, %v; log %q", got, err, buf.String())
	}
	p.Fire(bg, eSubmit)
	if !strings.Contains(buf.String(), "machine=Job") || !strings.Contains(buf.String(), "id=job-1") {
		t.Errorf("log %q", buf.String())
	}
	// Taking the logger away leaves the store: a plain move is logged with its transition.
	pst := newStore()
	p2 := newPlain()
	p2.SetStore(pst)
	p2.SetLogger(slog.New(slog.NewTextHandler(&buf, nil)))
	p2.SetLogger(nil)
	for _, e := range []tEvent{eSubmit, eComment} {
		if _, err := p2.Fire(bg, e); err != nil {
			t.Fatalf("%s: %v", e, err)
		}
	}
	if log := typedEntries(pst.Log(bg, "plain.Job", "job-1", 0)); len(log) != 2 || log[1].Seq != 2 || log[1].Transition != 5 || log[1].From != sReview || log[1].To != sReview || log[0].Transition != 0 {
		t.Errorf("log %+v", log)
	}
	p.SetLogger(nil)
	buf.Reset()
	if got, err := p.Fire(bg, eSubmit); got != sReview || !errors.Is(err, ErrInvalidTransition) || buf.Len() != 0 {
		t.Errorf("submit without a logger = %s, %v; log %q", got, err, buf.String())
	}
}

func TestEngineExtra(t *testing.T) {
	r := newRig()
	Extra(r.m).Tag = "x"
	if s := r.m.Snapshot(); s.Extra.Tag != "x" {
		t.Errorf("Snapshot().Extra = %+v", s.Extra)
	}
	if NoRole(3).String() != "" {
		t.Error("NoRole has a name")
	}
	if MoveRefused(4) != 4 || MoveStep(4) != 5 {
		t.Error("MoveRefused or MoveStep")
	}
}

// TestEngineLoggerNotPersisted: a transition accepted whose checkpoint or store fails is
// logged at Error as not persisted, in the state it entered; a refusal stays a Warn.
func TestEngineLoggerNotPersisted(t *testing.T) {
	var buf bytes.Buffer
	r := newRig()
	fs := &failStore{tStore: newStore()}
	r.m.SetStore(fs)
	r.m.SetLogger(slog.New(slog.NewTextHandler(&buf, nil)))
	r.m.Context.Reviewer = "bo"
	r.ops.guards[gOK] = true
	r.walk(t, eSubmit)
	boom := errors.New("boom")
	cases := []struct {
		name string
		fail func()
		e    tEvent
		want []string
	}{
		{"a checkpoint", func() { r.ops.cpErr = boom }, eApprove,
			[]string{"level=ERROR", `msg="transition not committed"`, "machine=Review", "id=doc-1", "state=review", "event=approve", "error=boom"}},
		{"the store", func() { r.ops.cpErr, fs.commitErr = nil, boom }, eApprove,
			[]string{"level=ERROR", `msg="transition not committed"`, "state=review", "event=approve", `error="review: store commit of seq 2: boom"`}},
		{"a refusal", func() { fs.commitErr = nil }, eClose,
			[]string{"level=WARN", `msg="event refused"`, "state=review", "event=close"}},
	}
	for _, c := range cases {
		buf.Reset()
		c.fail()
		if _, err := r.m.FireWith(bg, c.e, tIn{Role: rAdmin}); err == nil {
			t.Fatalf("%s: %s did not fail", c.name, c.e)
		}
		line := buf.String()
		for _, want := range c.want {
			if !strings.Contains(line, want) {
				t.Errorf("%s: the log %q lacks %q", c.name, line, want)
			}
		}
		if n := strings.Count(line, "\n"); n != 1 {
			t.Errorf("%s: %d lines logged, want 1", c.name, n)
		}
	}
}

// TestEngineKeyAfterFailedCheckpoint: without a store, a transition accepted keeps its
// idempotency key even when a checkpoint fails after it, so that firing again with the key
// does not repeat it. With a store, a failed checkpoint or commit leaves the machine as it
// was, the key unused: firing again with the key takes the transition, once.
func TestEngineKeyAfterFailedCheckpoint(t *testing.T) {
	for _, name := range []string{"checkpoint", "store"} {
		t.Run(name, func(t *testing.T) {
			r := newRig()
			r.m.Context.Reviewer = "bo"
			r.ops.guards[gOK] = true
			fs := &failStore{tStore: newStore()}
			if name == "store" {
				r.m.SetStore(fs)
			}
			r.walk(t, eSubmit)
			boom := errors.New("boom")
			if name == "checkpoint" {
				r.ops.cpErr = boom
			} else {
				fs.commitErr = boom
			}
			want, seq := sApproved, int64(2)
			if name == "store" {
				want, seq = sReview, 1
			}
			if got, err := r.m.FireWith(bg, eApprove, tIn{Role: rAdmin, Key: "k"}); got != want || !errors.Is(err, boom) || r.m.Seq() != seq {
				t.Fatalf("approve = %s, %v, seq %d", got, err, r.m.Seq())
			}
			r.ops.cpErr, fs.commitErr = nil, nil
			r.ops.reset()
			got, err := r.m.FireWith(bg, eApprove, tIn{Role: rAdmin, Key: "k"})
			if name == "checkpoint" && (got != sApproved || err != nil || r.m.Seq() != 2 || len(r.ops.acts)+len(r.ops.cps) > 0) {
				t.Errorf("approve again = %s, %v; seq %d, actions %v, checkpoints %v", got, err, r.m.Seq(), r.ops.acts, r.ops.cps)
			}
			if name == "store" && (got != sApproved || err != nil || r.m.Seq() != 2 || len(r.ops.cps) != 1) {
				t.Errorf("approve again = %s, %v; seq %d, checkpoints %v", got, err, r.m.Seq(), r.ops.cps)
			}
			if _, err := r.m.FireWith(bg, eRework, tIn{Key: "k"}); !errors.Is(err, ErrIdempotencyConflict) {
				t.Errorf("rework with the key: %v", err)
			}
		})
	}
}

// Pairs left nil are built from the transitions and their Conds: for richDef, the same
// pairs as finish lists by hand, and a candidate after an unconditional one is left out.
func TestDefBuildsPairs(t *testing.T) {
	want := richDef()
	d := richDef()
	d.Pairs = nil
	conds := map[int][]int32{1: {gOK}, 2: {^gOK, gUrgent}}
	for i := range d.Transitions {
		d.Transitions[i].Conds = conds[i]
	}
	got := d.buildPairs()
	if !reflect.DeepEqual(got, want.Pairs) {
		t.Fatalf("built pairs\n%v\nwant\n%v", got, want.Pairs)
	}
	// An unconditional transition first: the guarded one after it is never tried.
	d.Transitions[1].Conds, d.Transitions[2].Conds = nil, []int32{gOK}
	for _, p := range d.buildPairs() {
		if p.State == int32(sReview) && p.Event == int32(eApprove) && (len(p.Cands) != 1 || p.Cands[0].T != 1) {
			t.Errorf("review/approve candidates %v, want only transition 1", p.Cands)
		}
	}
	// A machine built from nil Pairs fires as the hand-listed one does.
	d = richDef(untimed)
	d.Pairs = nil
	for i := range d.Transitions {
		d.Transitions[i].Conds = conds[i]
	}
	r := attach(d)
	r.ops.guards[gOK] = true
	r.m.Context.Title, r.m.Context.Reviewer = "t", "ann"
	if got := r.fire(t, eSubmit, tIn{}); got != sReview {
		t.Fatalf("submit: %s", got)
	}
	if got := r.fire(t, eApprove, tIn{Role: rAdmin}); got != sApproved {
		t.Fatalf("approve: %s", got)
	}
}
