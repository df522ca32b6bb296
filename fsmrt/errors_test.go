package fsmrt_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"testing"

	"github.com/fsmgen/fsmgen/fsmrt"
)

// newSpec returns a spec whose idle state accepts start and cancel, running accepts finish,
// cancel and retry, and the terminal states accept nothing.
func newSpec() *fsmrt.Spec {
	return &fsmrt.Spec{
		Package: "review",
		Machine: "Task",
		Accepts: [][]int{
			{int(eStart), int(eCancel)},
			{int(eFinish), int(eCancel), int(eRetry)},
			nil,
			{},
		},
	}
}

// refusal is what every typed refusal offers.
type refusal interface {
	error
	Reason() string
}

func TestSentinelTexts(t *testing.T) {
	tests := []struct {
		err  error
		want string
	}{
		{fsmrt.ErrRefused, "fsm: event refused"},
		{fsmrt.ErrInvalidTransition, "fsm: invalid transition"},
		{fsmrt.ErrGuard, "fsm: guard does not hold"},
		{fsmrt.ErrPermission, "fsm: permission denied"},
		{fsmrt.ErrNoChoice, "fsm: no choice holds"},
		{fsmrt.ErrNoHistory, "fsm: nothing remembered"},
		{fsmrt.ErrLimit, "fsm: limit reached"},
		{fsmrt.ErrValidation, "fsm: validation failed"},
		{fsmrt.ErrIdempotencyConflict, "fsm: idempotency key reused for another transition"},
		{fsmrt.ErrNotRegistered, "fsm: not registered"},
	}
	for _, tt := range tests {
		if got := tt.err.Error(); got != tt.want {
			t.Errorf("sentinel text = %q, want %q", got, tt.want)
		}
	}
}

// refusals returns one of each typed refusal for spec sp, with the sentinel it must match,
// its reason and its exact message when the prefix is prefix.
func refusals(sp *fsmrt.Spec, prefix string) []struct {
	name     string
	err      refusal
	sentinel error
	reason   string
	text     string
} {
	invalid := fsmrt.InvalidTransition(sp, sIdle, eFinish)
	terminal := fsmrt.InvalidTransition(sp, sDone, eStart)
	guard := fsmrt.Guard(sp, sIdle, eStart)
	fields := []fsmrt.FieldError{{Field: "owner", Message: "is required"}, {Field: "due", Message: "must be in the future"}}
	return []struct {
		name     string
		err      refusal
		sentinel error
		reason   string
		text     string
	}{
		{"invalid transition", &invalid, fsmrt.ErrInvalidTransition, "invalid_transition",
			prefix + "no transition from idle on finish"},
		{"invalid transition terminal", &terminal, fsmrt.ErrInvalidTransition, "invalid_transition",
			prefix + "done is terminal: start is not accepted"},
		{"guard", &guard, fsmrt.ErrGuard, "guard",
			prefix + "idle on start: no transition's guards hold"},
		{"no choice", fsmrt.NoChoice(sp, sRunning, eFinish), fsmrt.ErrNoChoice, "no_choice",
			prefix + "running on finish: no choice holds"},
		{"no history", fsmrt.NoHistory(sp, sRunning, eRetry, sIdle), fsmrt.ErrNoHistory, "no_history",
			prefix + "running on retry: idle remembers no state to return to"},
		{"limit", fsmrt.Limit(sp, sRunning, eRetry, "retries", 3), fsmrt.ErrLimit, "limit",
			prefix + "running on retry: counter retries reached its limit of 3"},
		{"validation context", fsmrt.Validation(sp, sIdle, eStart, sRunning, false, fields, []tEvent{eCancel}),
			fsmrt.ErrValidation, "artifacts",
			prefix + "cannot enter running: owner: is required; due: must be in the future"},
		{"validation payload", fsmrt.Validation(sp, sIdle, eStart, sRunning, true, fields[:1], nil),
			fsmrt.ErrValidation, "payload",
			prefix + "invalid payload for start: owner: is required"},
		{"permission", fsmrt.Permission(sp, sRunning, eFinish, rViewer), fsmrt.ErrPermission, "role",
			prefix + `running on finish is not permitted to role "viewer"`},
		{"permission no role", fsmrt.Permission(sp, sRunning, eFinish, rNone), fsmrt.ErrPermission, "role",
			prefix + `running on finish is not permitted without a role`},
		{"idempotency conflict", fsmrt.IdempotencyConflict(sp, sRunning, eFinish, "k-1", eStart),
			fsmrt.ErrIdempotencyConflict, "idempotency_conflict",
			prefix + `idempotency key "k-1" was used for start, not finish`},
	}
}

func TestRefusalErrorText(t *testing.T) {
	for _, c := range []struct {
		name   string
		sp     *fsmrt.Spec
		prefix string
	}{
		{"spec", newSpec(), "review: "},
		{"nil spec", nil, "fsm: "},
		{"empty package", &fsmrt.Spec{Machine: "Task"}, "fsm: "},
		{"other package", &fsmrt.Spec{Package: "pipeline"}, "pipeline: "},
	} {
		for _, r := range refusals(c.sp, c.prefix) {
			if got := r.err.Error(); got != r.text {
				t.Errorf("%s/%s: Error() = %q, want %q", c.name, r.name, got, r.text)
			}
		}
	}
}

func TestRefusalOutOfRangeValues(t *testing.T) {
	it := fsmrt.InvalidTransition(newSpec(), tState(9), tEvent(7))
	if got, want := it.Error(), "review: no transition from State(9) on Event(7)"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
}

func TestRefusalIs(t *testing.T) {
	sentinels := []error{
		fsmrt.ErrInvalidTransition, fsmrt.ErrGuard, fsmrt.ErrPermission, fsmrt.ErrNoChoice,
		fsmrt.ErrNoHistory, fsmrt.ErrLimit, fsmrt.ErrValidation, fsmrt.ErrIdempotencyConflict,
		fsmrt.ErrNotRegistered,
	}
	unrelated := []error{io.EOF, errors.New("fsm: event refused"), errors.New("fsm: invalid transition"), nil}
	for _, r := range refusals(newSpec(), "review: ") {
		is, ok := r.err.(interface{ Is(error) bool })
		if !ok {
			t.Fatalf("%s: no Is method", r.name)
		}
		if !is.Is(fsmrt.ErrRefused) || !errors.Is(r.err, fsmrt.ErrRefused) {
			t.Errorf("%s: does not match ErrRefused", r.name)
		}
		for _, s := range sentinels {
			want := s == r.sentinel
			if got := is.Is(s); got != want {
				t.Errorf("%s: Is(%q) = %v, want %v", r.name, s, got, want)
			}
			if got := errors.Is(r.err, s); got != want {
				t.Errorf("%s: errors.Is(%q) = %v, want %v", r.name, s, got, want)
			}
		}
		for _, u := range unrelated {
			if is.Is(u) {
				t.Errorf("%s: Is(%v) = true for an unrelated error", r.name, u)
			}
		}
		// Through wrapping, twice.
		wrapped := fmt.Errorf("outer: %w", fmt.Errorf("fire: %w", r.err))
		if !errors.Is(wrapped, fsmrt.ErrRefused) || !errors.Is(wrapped, r.sentinel) {
			t.Errorf("%s: wrapped error does not match its sentinels", r.name)
		}
		if errors.Is(wrapped, io.EOF) {
			t.Errorf("%s: wrapped error matches io.EOF", r.name)
		}
		if got := r.err.Reason(); got != r.reason {
			t.Errorf("%s: Reason() = %q, want %q", r.name, got, r.reason)
		}
	}
}

func TestRefusalAs(t *testing.T) {
	sp := newSpec()
	wrap := func(err error) error { return fmt.Errorf("task t1: %w", fmt.Errorf("fire: %w", err)) }

	it := fsmrt.InvalidTransition(sp, sRunning, eStart)
	var itp *fsmrt.InvalidTransitionError[tState, tEvent]
	if !errors.As(wrap(&it), &itp) || itp != &it || itp.State != sRunning || itp.Event != eStart {
		t.Errorf("As InvalidTransitionError = %v", itp)
	}
	var gp *fsmrt.GuardError[tState, tEvent]
	if errors.As(wrap(&it), &gp) {
		t.Errorf("an InvalidTransitionError is As a GuardError")
	}

	g := fsmrt.Guard(sp, sIdle, eCancel)
	if !errors.As(wrap(&g), &gp) || gp.State != sIdle || gp.Event != eCancel {
		t.Errorf("As GuardError = %v", gp)
	}

	nc := fsmrt.NoChoice(sp, sRunning, eFinish)
	var ncp *fsmrt.NoChoiceError[tState, tEvent]
	if !errors.As(wrap(nc), &ncp) || ncp != nc || ncp.State != sRunning || ncp.Event != eFinish {
		t.Errorf("As NoChoiceError = %v", ncp)
	}

	nh := fsmrt.NoHistory(sp, sRunning, eRetry, sIdle)
	var nhp *fsmrt.NoHistoryError[tState, tEvent]
	if !errors.As(wrap(nh), &nhp) || nhp.State != sRunning || nhp.Event != eRetry || nhp.Remembering != sIdle {
		t.Errorf("As NoHistoryError = %+v", nhp)
	}

	l := fsmrt.Limit(sp, sRunning, eRetry, "retries", 5)
	var lp *fsmrt.LimitError[tState, tEvent]
	if !errors.As(wrap(l), &lp) || lp.State != sRunning || lp.Event != eRetry || lp.Counter != "retries" || lp.Limit != 5 {
		t.Errorf("As LimitError = %+v", lp)
	}

	fields := []fsmrt.FieldError{{Field: "a", Message: "b"}}
	v := fsmrt.Validation(sp, sIdle, eStart, sRunning, true, fields, []tEvent{eCancel})
	var vp *fsmrt.ValidationError[tState, tEvent]
	if !errors.As(wrap(v), &vp) || vp.State != sIdle || vp.Event != eStart || vp.Target != sRunning ||
		!vp.Payload || !slices.Equal(vp.Errors, fields) || !slices.Equal(vp.Allowed, []tEvent{eCancel}) {
		t.Errorf("As ValidationError = %+v", vp)
	}

	p := fsmrt.Permission(sp, sRunning, eFinish, rAdmin)
	var pp *fsmrt.PermissionError[tState, tEvent, tRole]
	if !errors.As(wrap(p), &pp) || pp.State != sRunning || pp.Event != eFinish || pp.Role != rAdmin {
		t.Errorf("As PermissionError = %+v", pp)
	}

	ic := fsmrt.IdempotencyConflict(sp, sRunning, eFinish, "key", eStart)
	var icp *fsmrt.IdempotencyConflictError[tState, tEvent]
	if !errors.As(wrap(ic), &icp) || icp.State != sRunning || icp.Event != eFinish || icp.Key != "key" || icp.Original != eStart {
		t.Errorf("As IdempotencyConflictError = %+v", icp)
	}
	if errors.As(wrap(ic), new(*fsmrt.LimitError[tState, tEvent])) {
		t.Errorf("an IdempotencyConflictError is As a LimitError")
	}
}

func TestInvalidTransitionPermitted(t *testing.T) {
	sp := newSpec()
	tests := []struct {
		name string
		sp   *fsmrt.Spec
		s    tState
		want []tEvent
	}{
		{"idle", sp, sIdle, []tEvent{eStart, eCancel}},
		{"running", sp, sRunning, []tEvent{eFinish, eCancel, eRetry}},
		{"terminal nil accepts", sp, sDone, nil},
		{"terminal empty accepts", sp, sFailed, nil},
		{"out of range state", sp, numStates, nil},
		{"far out of range state", sp, 255, nil},
		{"nil spec", nil, sIdle, nil},
		{"spec without accepts", &fsmrt.Spec{Package: "review"}, sIdle, nil},
	}
	for _, tt := range tests {
		e := fsmrt.InvalidTransition(tt.sp, tt.s, eFinish)
		got := e.Permitted()
		if !slices.Equal(got, tt.want) {
			t.Errorf("%s: Permitted() = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestInvalidTransitionPermittedFresh(t *testing.T) {
	sp := newSpec()
	e := fsmrt.InvalidTransition(sp, sRunning, eStart)
	first := e.Permitted()
	first[0] = eRetry
	first[2] = eStart
	second := e.Permitted()
	if want := []tEvent{eFinish, eCancel, eRetry}; !slices.Equal(second, want) {
		t.Fatalf("Permitted() after mutating an earlier result = %v, want %v", second, want)
	}
	if want := []int{int(eFinish), int(eCancel), int(eRetry)}; !slices.Equal(sp.Accepts[sRunning], want) {
		t.Fatalf("mutating Permitted() changed the spec: %v", sp.Accepts[sRunning])
	}
	second[1] = eStart
	if third := e.Permitted(); third[1] != eCancel {
		t.Fatalf("Permitted() results share memory: %v", third)
	}
}

func TestPermittedFollowsSpec(t *testing.T) {
	// Generated code builds its refusals before it fills in Accepts: Permitted reads the
	// spec when called.
	sp := &fsmrt.Spec{Package: "review"}
	e := fsmrt.InvalidTransition(sp, sIdle, eFinish)
	if got := e.Permitted(); len(got) != 0 {
		t.Fatalf("Permitted() = %v before Accepts is set", got)
	}
	sp.Accepts = [][]int{{int(eRetry)}}
	if got := e.Permitted(); !slices.Equal(got, []tEvent{eRetry}) {
		t.Fatalf("Permitted() = %v after Accepts is set, want [retry]", got)
	}
}

func TestValidationMarshalJSON(t *testing.T) {
	sp := newSpec()
	fields := []fsmrt.FieldError{{Field: "owner", Message: "is required"}, {Field: "due", Message: `must be "soon"`}}
	tests := []struct {
		name string
		err  *fsmrt.ValidationError[tState, tEvent]
		want string
	}{
		{"full", fsmrt.Validation(sp, sIdle, eStart, sRunning, false, fields, []tEvent{eStart, eCancel}),
			`{"success":false,"errors":[{"field":"owner","message":"is required"},{"field":"due","message":"must be \"soon\""}],"allowedTransitions":["start","cancel"]}`},
		{"payload", fsmrt.Validation(sp, sIdle, eStart, sRunning, true, fields[:1], []tEvent{eRetry}),
			`{"success":false,"errors":[{"field":"owner","message":"is required"}],"allowedTransitions":["retry"]}`},
		{"nil slices", fsmrt.Validation[tState, tEvent](sp, sIdle, eStart, sRunning, false, nil, nil),
			`{"success":false,"errors":[],"allowedTransitions":[]}`},
		{"empty slices", fsmrt.Validation(nil, sIdle, eStart, sRunning, false, []fsmrt.FieldError{}, []tEvent{}),
			`{"success":false,"errors":[],"allowedTransitions":[]}`},
	}
	for _, tt := range tests {
		got, err := tt.err.MarshalJSON()
		if err != nil || string(got) != tt.want {
			t.Errorf("%s: MarshalJSON() = %s, %v; want %s", tt.name, got, err, tt.want)
		}
		// json.Marshal uses it too, for the error and for a value holding it.
		got, err = json.Marshal(tt.err)
		if err != nil || string(got) != tt.want {
			t.Errorf("%s: json.Marshal = %s, %v; want %s", tt.name, got, err, tt.want)
		}
		got, err = json.Marshal(map[string]error{"e": tt.err})
		if want := `{"e":` + tt.want + `}`; err != nil || string(got) != want {
			t.Errorf("%s: json.Marshal in map = %s, %v; want %s", tt.name, got, err, want)
		}
	}

	// An event type without MarshalText encodes as numbers.
	w := fsmrt.Validation(sp, sIdle, tWideEvent(1), sRunning, false, nil, []tWideEvent{2, 300})
	got, err := w.MarshalJSON()
	if want := `{"success":false,"errors":[],"allowedTransitions":[2,300]}`; err != nil || string(got) != want {
		t.Errorf("wide: MarshalJSON() = %s, %v; want %s", got, err, want)
	}
	w = fsmrt.Validation[tState, tWideEvent](sp, sIdle, 1, sRunning, false, nil, nil)
	got, err = w.MarshalJSON()
	if want := `{"success":false,"errors":[],"allowedTransitions":[]}`; err != nil || string(got) != want {
		t.Errorf("wide empty: MarshalJSON() = %s, %v; want %s", got, err, want)
	}

	// An event out of range fails to encode, through the event's MarshalText.
	bad := fsmrt.Validation(sp, sIdle, eStart, sRunning, false, nil, []tEvent{numEvents})
	if _, err := bad.MarshalJSON(); err == nil {
		t.Errorf("MarshalJSON with an invalid event succeeded")
	}
}

func TestValidationMarshalJSONDoesNotAlias(t *testing.T) {
	fields := []fsmrt.FieldError{{Field: "a", Message: "b"}}
	allowed := []tEvent{eStart}
	v := fsmrt.Validation(newSpec(), sIdle, eStart, sRunning, false, fields, allowed)
	if _, err := v.MarshalJSON(); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(v.Errors, []fsmrt.FieldError{{Field: "a", Message: "b"}}) || !slices.Equal(v.Allowed, []tEvent{eStart}) {
		t.Fatalf("MarshalJSON changed the error: %+v", v)
	}
}

func TestValidationReason(t *testing.T) {
	sp := newSpec()
	if got := fsmrt.Validation[tState, tEvent](sp, sIdle, eStart, sRunning, false, nil, nil).Reason(); got != "artifacts" {
		t.Errorf("context Reason() = %q, want artifacts", got)
	}
	if got := fsmrt.Validation[tState, tEvent](sp, sIdle, eStart, sRunning, true, nil, nil).Reason(); got != "payload" {
		t.Errorf("payload Reason() = %q, want payload", got)
	}
}

func TestFieldErrorJSON(t *testing.T) {
	got, err := json.Marshal(fsmrt.FieldError{Field: "f", Message: "m"})
	if want := `{"field":"f","message":"m"}`; err != nil || string(got) != want {
		t.Fatalf("json.Marshal(FieldError) = %s, %v; want %s", got, err, want)
	}
}

func TestRefusalsWideTypes(t *testing.T) {
	// The constraints accept uint32 states and uint16 events.
	e := fsmrt.InvalidTransition(&fsmrt.Spec{Accepts: [][]int{{1, 2}}}, tWideState(0), tWideEvent(1))
	if got := e.Permitted(); !slices.Equal(got, []tWideEvent{1, 2}) {
		t.Errorf("Permitted() = %v", got)
	}
	if got, want := e.Error(), "fsm: no transition from wide on wide"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	term := fsmrt.InvalidTransition(nil, tWideState(7), tWideEvent(1))
	if got, want := term.Error(), "fsm: wide is terminal: wide is not accepted"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	if got := term.Permitted(); got != nil {
		t.Errorf("Permitted() with nil spec = %v", got)
	}
}
