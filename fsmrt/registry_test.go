package fsmrt_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"log"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/fsmgen/fsmgen/fsmrt"
)

// tMachine stands in for a generated machine.
type tMachine struct {
	id    string
	state tState
	n     int // changed only under the registry's lock

	inside atomic.Int32 // goroutines currently holding the machine, to check exclusion
}

func (m *tMachine) State() tState { return m.state }

func machineID(m *tMachine) string { return m.id }

type tRegistry = fsmrt.Registry[*tMachine, tState]

// bufLogger returns a logger writing text without times into buf.
func bufLogger(buf *bytes.Buffer) *slog.Logger {
	return slog.New(slog.NewTextHandler(buf, &slog.HandlerOptions{
		ReplaceAttr: func(groups []string, a slog.Attr) slog.Attr {
			if len(groups) == 0 && a.Key == slog.TimeKey {
				return slog.Attr{}
			}
			return a
		},
	}))
}

func newRegistry(t *testing.T, maxActive int, logger *slog.Logger, ms ...*tMachine) *tRegistry {
	t.Helper()
	r := new(tRegistry)
	r.Init("Task", machineID, maxActive, logger)
	for _, m := range ms {
		if err := r.Register(m); err != nil {
			t.Fatalf("Register(%q): %v", m.id, err)
		}
	}
	return r
}

func ids(ms []*tMachine) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = m.id
	}
	return out
}

func TestRegistryInitLogger(t *testing.T) {
	var buf bytes.Buffer
	l := bufLogger(&buf)
	r := newRegistry(t, 0, l)
	if r.Logger() != l {
		t.Fatalf("Logger() = %p, want the logger given to Init %p", r.Logger(), l)
	}
}

func TestRegistryInitNilLoggerUsesDefault(t *testing.T) {
	oldDefault, oldWriter, oldFlags := slog.Default(), log.Writer(), log.Flags()
	t.Cleanup(func() {
		slog.SetDefault(oldDefault)
		log.SetOutput(oldWriter)
		log.SetFlags(oldFlags)
	})
	var buf bytes.Buffer
	def := bufLogger(&buf)
	slog.SetDefault(def)

	r := newRegistry(t, 1, nil, &tMachine{id: "a"})
	if r.Logger() != def {
		t.Fatalf("Logger() = %p, want slog.Default() %p", r.Logger(), def)
	}
	if buf.Len() != 0 {
		t.Fatalf("logged at the limit: %q", buf.String())
	}
	if err := r.Register(&tMachine{id: "b"}); err != nil {
		t.Fatal(err)
	}
	if got, want := buf.String(), "level=WARN msg=\"active machines past the limit\" machine=Task active=2 max=1\n"; got != want {
		t.Fatalf("default logger got %q, want %q", got, want)
	}
}

func TestRegistryRegisterErrors(t *testing.T) {
	first := &tMachine{id: "a"}
	r := newRegistry(t, 0, nil, first)

	err := r.Register(&tMachine{})
	if err == nil || err.Error() != "fsm: register: machine has no ID" {
		t.Fatalf("Register without ID: %v", err)
	}
	if errors.Is(err, fsmrt.ErrNotRegistered) || errors.Is(err, fsmrt.ErrRefused) {
		t.Fatalf("Register without ID matches a sentinel: %v", err)
	}
	if got := r.ListAll(); !slices.Equal(ids(got), []string{"a"}) {
		t.Fatalf("a machine without ID was registered: %v", ids(got))
	}

	second := &tMachine{id: "a", state: sRunning}
	err = r.Register(second)
	if err == nil || err.Error() != `fsm: register: "a" is already registered` {
		t.Fatalf("Register duplicate: %v", err)
	}
	if got, err := r.Get("a"); err != nil || got != first {
		t.Fatalf("after a duplicate, Get(a) = %p, %v; want the first machine %p", got, err, first)
	}
	if got := r.ListAll(); len(got) != 1 {
		t.Fatalf("ListAll after duplicate has %d machines", len(got))
	}
}

func TestRegistryMaxActiveWarning(t *testing.T) {
	var buf bytes.Buffer
	r := newRegistry(t, 2, bufLogger(&buf),
		&tMachine{id: "a", state: sIdle},
		&tMachine{id: "b", state: sRunning})
	if buf.Len() != 0 {
		t.Fatalf("logged at the limit: %q", buf.String())
	}
	// A terminal machine is not active: still at the limit.
	if err := r.Register(&tMachine{id: "c", state: sDone}); err != nil {
		t.Fatal(err)
	}
	if buf.Len() != 0 {
		t.Fatalf("logged for a terminal machine: %q", buf.String())
	}
	// Past it: registered anyway, and warned about.
	if err := r.Register(&tMachine{id: "d", state: sRunning}); err != nil {
		t.Fatalf("Register past the limit is refused: %v", err)
	}
	want := "level=WARN msg=\"active machines past the limit\" machine=Task active=3 max=2\n"
	if got := buf.String(); got != want {
		t.Fatalf("warning = %q, want %q", got, want)
	}
	if _, err := r.Get("d"); err != nil {
		t.Fatalf("machine past the limit not registered: %v", err)
	}
	if err := r.Register(&tMachine{id: "e", state: sIdle}); err != nil {
		t.Fatal(err)
	}
	want += "level=WARN msg=\"active machines past the limit\" machine=Task active=4 max=2\n"
	if got := buf.String(); got != want {
		t.Fatalf("warnings = %q, want %q", got, want)
	}
	// A failed Register does not warn.
	buf.Reset()
	if err := r.Register(&tMachine{id: "e", state: sIdle}); err == nil {
		t.Fatal("duplicate registered")
	}
	if err := r.Register(&tMachine{state: sIdle}); err == nil {
		t.Fatal("machine without ID registered")
	}
	if buf.Len() != 0 {
		t.Fatalf("failed Register logged %q", buf.String())
	}
}

func TestRegistryMaxActiveWarningAttrs(t *testing.T) {
	// The warning's attributes, through a JSON handler: types and values.
	var buf bytes.Buffer
	r := newRegistry(t, 1, slog.New(slog.NewJSONHandler(&buf, nil)), &tMachine{id: "a"})
	if err := r.Register(&tMachine{id: "b"}); err != nil {
		t.Fatal(err)
	}
	got := buf.String()
	for _, want := range []string{`"level":"WARN"`, `"msg":"active machines past the limit"`, `"machine":"Task"`, `"active":2`, `"max":1`} {
		if !strings.Contains(got, want) {
			t.Errorf("warning %s lacks %s", got, want)
		}
	}
	if n := strings.Count(got, "\n"); n != 1 {
		t.Errorf("%d records logged, want 1", n)
	}
}

func TestRegistryNoLimit(t *testing.T) {
	var buf bytes.Buffer
	r := newRegistry(t, 0, bufLogger(&buf))
	for i := range 50 {
		if err := r.Register(&tMachine{id: fmt.Sprintf("m%02d", i)}); err != nil {
			t.Fatal(err)
		}
	}
	if buf.Len() != 0 {
		t.Fatalf("maxActive 0 logged %q", buf.String())
	}
	if got := r.ActiveCount(); got != 50 {
		t.Fatalf("ActiveCount() = %d, want 50", got)
	}
	// A negative limit means no limit too.
	r = newRegistry(t, -1, bufLogger(&buf), &tMachine{id: "a"}, &tMachine{id: "b"})
	if buf.Len() != 0 {
		t.Fatalf("maxActive -1 logged %q", buf.String())
	}
}

func TestRegistryGet(t *testing.T) {
	a := &tMachine{id: "a"}
	r := newRegistry(t, 0, nil, a)

	got, err := r.Get("a")
	if err != nil || got != a {
		t.Fatalf("Get(a) = %p, %v; want %p, nil", got, err, a)
	}
	if got := r.GetOrNil("a"); got != a {
		t.Fatalf("GetOrNil(a) = %p, want %p", got, a)
	}

	got, err = r.Get("missing")
	if got != nil {
		t.Fatalf("Get(missing) = %p, want nil", got)
	}
	if !errors.Is(err, fsmrt.ErrNotRegistered) {
		t.Fatalf("Get(missing) error %v does not match ErrNotRegistered", err)
	}
	if errors.Is(err, fsmrt.ErrRefused) {
		t.Fatalf("Get(missing) error %v matches ErrRefused", err)
	}
	if want := `fsm: not registered: "missing"`; err.Error() != want {
		t.Fatalf("Get(missing) error = %q, want %q", err, want)
	}
	if got := r.GetOrNil("missing"); got != nil {
		t.Fatalf("GetOrNil(missing) = %p, want nil", got)
	}
	if _, err := r.Get(""); !errors.Is(err, fsmrt.ErrNotRegistered) {
		t.Fatalf("Get(\"\") error = %v", err)
	}
}

// valMachine is a machine held by value: GetOrNil returns the zero value for it.
type valMachine struct {
	ID string
	S  tState
}

func (m valMachine) State() tState { return m.S }

func TestRegistryValueMachines(t *testing.T) {
	var r fsmrt.Registry[valMachine, tState]
	r.Init("Val", func(m valMachine) string { return m.ID }, 0, nil)
	if err := r.Register(valMachine{ID: "x", S: sDone}); err != nil {
		t.Fatal(err)
	}
	if err := r.Register(valMachine{ID: "y", S: sIdle}); err != nil {
		t.Fatal(err)
	}
	if got := r.GetOrNil("x"); got != (valMachine{ID: "x", S: sDone}) {
		t.Fatalf("GetOrNil(x) = %+v", got)
	}
	if got := r.GetOrNil("z"); got != (valMachine{}) {
		t.Fatalf("GetOrNil(z) = %+v, want the zero value", got)
	}
	if got, err := r.Get("z"); err == nil || got != (valMachine{}) {
		t.Fatalf("Get(z) = %+v, %v", got, err)
	}
	if n := r.CleanupTerminal(); n != 1 {
		t.Fatalf("CleanupTerminal() = %d, want 1", n)
	}
	if got := r.ListAll(); !slices.Equal(got, []valMachine{{ID: "y", S: sIdle}}) {
		t.Fatalf("ListAll() = %+v", got)
	}
}

func TestRegistryRemove(t *testing.T) {
	r := newRegistry(t, 0, nil, &tMachine{id: "a"}, &tMachine{id: "b"})
	if !r.Remove("a") {
		t.Fatal("Remove(a) = false, want true")
	}
	if r.Remove("a") {
		t.Fatal("second Remove(a) = true, want false")
	}
	if r.Remove("never") {
		t.Fatal("Remove(never) = true, want false")
	}
	if _, err := r.Get("a"); !errors.Is(err, fsmrt.ErrNotRegistered) {
		t.Fatalf("Get(a) after Remove: %v", err)
	}
	if got := ids(r.ListAll()); !slices.Equal(got, []string{"b"}) {
		t.Fatalf("ListAll() after Remove = %v", got)
	}
	// The ID can be registered again.
	a2 := &tMachine{id: "a"}
	if err := r.Register(a2); err != nil {
		t.Fatalf("Register after Remove: %v", err)
	}
	if got := r.GetOrNil("a"); got != a2 {
		t.Fatalf("GetOrNil(a) = %p, want %p", got, a2)
	}
}

func TestRegistryDo(t *testing.T) {
	a := &tMachine{id: "a"}
	r := newRegistry(t, 0, nil, a)

	var saw *tMachine
	if err := r.Do("a", func(m *tMachine) error { saw = m; m.n++; return nil }); err != nil {
		t.Fatalf("Do(a) = %v", err)
	}
	if saw != a || a.n != 1 {
		t.Fatalf("Do(a) ran on %p (n=%d), want %p", saw, a.n, a)
	}

	errFire := errors.New("fire failed")
	wrapped := fmt.Errorf("wrapped: %w", fsmrt.ErrGuard)
	for _, want := range []error{errFire, wrapped} {
		if err := r.Do("a", func(*tMachine) error { return want }); err != want {
			t.Fatalf("Do(a) = %v, want fn's error %v unchanged", err, want)
		}
	}

	called := false
	err := r.Do("missing", func(*tMachine) error { called = true; return nil })
	if called {
		t.Fatal("Do(missing) called fn")
	}
	if !errors.Is(err, fsmrt.ErrNotRegistered) || err.Error() != `fsm: not registered: "missing"` {
		t.Fatalf("Do(missing) = %v", err)
	}

	// The machine's lock is released after fn, also when fn panics.
	func() {
		defer func() {
			if recover() == nil {
				t.Fatal("panic in fn was not propagated")
			}
		}()
		_ = r.Do("a", func(*tMachine) error { panic("boom") })
	}()
	done := make(chan error, 1)
	go func() { done <- r.Do("a", func(m *tMachine) error { m.n++; return nil }) }()
	if err := <-done; err != nil || a.n != 2 {
		t.Fatalf("Do after a panic = %v, n = %d", err, a.n)
	}
}

func TestRegistryQueries(t *testing.T) {
	// Registered out of order: every query answers in ID order.
	ms := []*tMachine{
		{id: "delta", state: sRunning},
		{id: "alpha", state: sDone},
		{id: "charlie", state: sIdle},
		{id: "echo", state: sFailed},
		{id: "bravo", state: sRunning},
		{id: "Zulu", state: sIdle}, // upper case sorts first
	}
	r := newRegistry(t, 0, nil, ms...)

	if got, want := ids(r.ListAll()), []string{"Zulu", "alpha", "bravo", "charlie", "delta", "echo"}; !slices.Equal(got, want) {
		t.Errorf("ListAll() = %v, want %v", got, want)
	}
	if got, want := ids(r.ListActive()), []string{"Zulu", "bravo", "charlie", "delta"}; !slices.Equal(got, want) {
		t.Errorf("ListActive() = %v, want %v", got, want)
	}
	if got := r.ActiveCount(); got != 4 {
		t.Errorf("ActiveCount() = %d, want 4", got)
	}
	for _, tt := range []struct {
		s    tState
		want []string
	}{
		{sIdle, []string{"Zulu", "charlie"}},
		{sRunning, []string{"bravo", "delta"}},
		{sDone, []string{"alpha"}},
		{sFailed, []string{"echo"}},
		{numStates, []string{}},
	} {
		if got := ids(r.ByState(tt.s)); !slices.Equal(got, tt.want) {
			t.Errorf("ByState(%v) = %v, want %v", tt.s, got, tt.want)
		}
	}
	var seen []string
	got := r.Where(func(m *tMachine) bool {
		seen = append(seen, m.id)
		return strings.Contains(m.id, "r")
	})
	if want := []string{"bravo", "charlie"}; !slices.Equal(ids(got), want) {
		t.Errorf("Where(contains r) = %v, want %v", ids(got), want)
	}
	if want := []string{"Zulu", "alpha", "bravo", "charlie", "delta", "echo"}; !slices.Equal(seen, want) {
		t.Errorf("Where called keep on %v, want each machine once in ID order %v", seen, want)
	}
	if got := r.Where(func(*tMachine) bool { return false }); len(got) != 0 {
		t.Errorf("Where(false) = %v", ids(got))
	}
	// The queries return the registered machines themselves.
	if got := r.ByState(sDone); len(got) != 1 || got[0] != ms[1] {
		t.Errorf("ByState(done) does not return the registered machine")
	}

	// A machine that changes state through Do moves between the answers.
	if err := r.Do("delta", func(m *tMachine) error { m.state = sDone; return nil }); err != nil {
		t.Fatal(err)
	}
	if got, want := ids(r.ListActive()), []string{"Zulu", "bravo", "charlie"}; !slices.Equal(got, want) {
		t.Errorf("ListActive() after Do = %v, want %v", got, want)
	}

	// CleanupTerminal removes alpha, delta and echo.
	if n := r.CleanupTerminal(); n != 3 {
		t.Errorf("CleanupTerminal() = %d, want 3", n)
	}
	if got, want := ids(r.ListAll()), []string{"Zulu", "bravo", "charlie"}; !slices.Equal(got, want) {
		t.Errorf("ListAll() after CleanupTerminal = %v, want %v", got, want)
	}
	for _, id := range []string{"alpha", "delta", "echo"} {
		if _, err := r.Get(id); !errors.Is(err, fsmrt.ErrNotRegistered) {
			t.Errorf("Get(%s) after CleanupTerminal: %v", id, err)
		}
	}
	if n := r.CleanupTerminal(); n != 0 {
		t.Errorf("second CleanupTerminal() = %d, want 0", n)
	}
	if got := r.ActiveCount(); got != 3 {
		t.Errorf("ActiveCount() = %d, want 3", got)
	}
}

func TestRegistryEmpty(t *testing.T) {
	r := newRegistry(t, 0, nil)
	if got := r.ListAll(); len(got) != 0 {
		t.Errorf("ListAll() = %v", got)
	}
	if got := r.ListActive(); len(got) != 0 {
		t.Errorf("ListActive() = %v", got)
	}
	if got := r.ActiveCount(); got != 0 {
		t.Errorf("ActiveCount() = %d", got)
	}
	if got := r.ByState(sIdle); len(got) != 0 {
		t.Errorf("ByState(idle) = %v", got)
	}
	if got := r.CleanupTerminal(); got != 0 {
		t.Errorf("CleanupTerminal() = %d", got)
	}
}

func TestRegistryInitResets(t *testing.T) {
	var buf bytes.Buffer
	r := newRegistry(t, 0, nil, &tMachine{id: "a"})
	l := bufLogger(&buf)
	r.Init("Other", machineID, 1, l)
	if got := r.ListAll(); len(got) != 0 {
		t.Fatalf("Init kept machines: %v", ids(got))
	}
	if r.Logger() != l {
		t.Fatal("Init did not set the logger")
	}
	for _, id := range []string{"a", "b"} {
		if err := r.Register(&tMachine{id: id}); err != nil {
			t.Fatal(err)
		}
	}
	if got, want := buf.String(), "level=WARN msg=\"active machines past the limit\" machine=Other active=2 max=1\n"; got != want {
		t.Fatalf("warning = %q, want %q", got, want)
	}
}

// enter and leave check that no two goroutines hold machine m at once.
func enter(t *testing.T, m *tMachine) {
	if n := m.inside.Add(1); n != 1 {
		t.Errorf("machine %s held by %d goroutines at once", m.id, n)
	}
}

func leave(m *tMachine) { m.inside.Add(-1) }

func TestRegistryConcurrent(t *testing.T) {
	const (
		workers = 32
		rounds  = 200
		shared  = 4
	)
	// A limit low enough that Register counts and warns while the others work.
	r := newRegistry(t, shared+workers/2, slog.New(slog.NewTextHandler(io.Discard, nil)))
	var all []*tMachine
	for i := range shared {
		m := &tMachine{id: fmt.Sprintf("shared%d", i)}
		all = append(all, m)
		if err := r.Register(m); err != nil {
			t.Fatal(err)
		}
	}
	own := make([]*tMachine, workers)
	for w := range workers {
		own[w] = &tMachine{id: fmt.Sprintf("own%02d", w)}
		if err := r.Register(own[w]); err != nil {
			t.Fatal(err)
		}
	}

	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := range rounds {
				id := fmt.Sprintf("shared%d", (w+i)%shared)
				if err := r.Do(id, func(m *tMachine) error {
					enter(t, m)
					defer leave(m)
					m.n++
					m.state = tState(m.n % 2) // idle and running in turn
					return nil
				}); err != nil {
					t.Errorf("Do(%s): %v", id, err)
				}
				if err := r.Do(own[w].id, func(m *tMachine) error {
					enter(t, m)
					defer leave(m)
					m.n++
					return nil
				}); err != nil {
					t.Errorf("Do(%s): %v", own[w].id, err)
				}
				// Short-lived machines of this worker come and go.
				tmp := &tMachine{id: fmt.Sprintf("tmp%02d-%d", w, i), state: sDone}
				if err := r.Register(tmp); err != nil {
					t.Errorf("Register(%s): %v", tmp.id, err)
				}
				if i%3 == 0 {
					// A reader's CleanupTerminal may have removed it first.
					r.Remove(tmp.id)
				}
			}
		})
	}
	// Readers run the queries at the same time.
	stop := make(chan struct{})
	var readers sync.WaitGroup
	for range 4 {
		readers.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				r.Where(func(m *tMachine) bool {
					enter(t, m)
					defer leave(m)
					return m.n > 0
				})
				r.ListActive()
				r.ByState(sRunning)
				r.ActiveCount()
				r.CleanupTerminal()
				r.GetOrNil("shared0")
				if _, err := r.Get("own00"); err != nil {
					t.Errorf("Get(own00): %v", err)
				}
			}
		})
	}
	wg.Wait()
	close(stop)
	readers.Wait()

	total := 0
	for _, m := range all {
		total += m.n
	}
	if total != workers*rounds {
		t.Errorf("shared machines counted %d Do calls, want %d", total, workers*rounds)
	}
	for _, m := range own {
		if m.n != rounds {
			t.Errorf("%s counted %d Do calls, want %d", m.id, m.n, rounds)
		}
	}
	r.CleanupTerminal()
	if got, want := len(r.ListAll()), shared+workers; got != want {
		t.Errorf("%d machines left after cleanup, want %d", got, want)
	}
}
