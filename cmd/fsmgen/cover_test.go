package main_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// coverSpec exercises every kind of item fsmgen cover reports.
const coverSpec = `version: 1
machine: Door
package: door
guards:
  locked_by_hand: { doc: Someone turned the key. }
states:
  open: { initial: true }
  closed: {}
  locked: { timeout: { after: 1h, levels: { warn: 50%, alert: 100% } } }
  broken: { terminal: true }
events: { close: {}, open: {}, lock: {}, unlock: {}, break: {} }
transitions:
  - { from: open, on: close, to: closed }
  - { from: closed, on: open, to: open }
  - { from: closed, on: lock, to: locked, if: locked_by_hand }
  - { from: locked, on: unlock, to: closed }
  - { from: [open, closed], on: break, to: broken }
`

// coverScenario is the application's own test: a known sequence of fires.
const coverScenario = `package door

import (
	"context"
	"testing"
	"time"

	"github.com/fsmgen/fsmgen/fsmrt"
)

type hand struct{ turned bool }

type clock struct{ now time.Time }

func (c clock) Now() time.Time { return c.now }

func (h *hand) LockedByHand(context.Context, *Door, DoorStep) bool { return h.turned }

func TestScenario(t *testing.T) {
	ctx := context.Background()
	h := &hand{}
	m := NewDoor(h)
	t0 := time.Date(2026, 1, 1, 8, 0, 0, 0, time.UTC)
	m.SetClock(clock{t0})
	at := func(d time.Duration) DoorInput { return DoorInput{At: t0.Add(d)} }
	must := func(_ State, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(m.Fire(ctx, EventClose)) // Fire's fast path records as FireWith does
	if _, err := m.FireWith(ctx, EventLock, at(time.Minute)); err == nil {
		t.Fatal("locked without the key")
	}
	h.turned = true
	must(m.FireWith(ctx, EventLock, at(2*time.Minute)))
	if got := m.TimeoutLevel(t0.Add(40 * time.Minute)); got != LevelWarn {
		t.Fatalf("level %v", got)
	}
	must(m.FireWith(ctx, EventUnlock, at(50*time.Minute)))
	must(m.FireWith(ctx, EventOpen, at(51*time.Minute)))
	if _, err := m.FireWith(ctx, EventUnlock, at(52*time.Minute)); err == nil {
		t.Fatal("an open door unlocked")
	}
	// A stored door, locked, whose alert level the store's timers record.
	stored := NewDoor(&hand{turned: true})
	stored.ID = "door-2"
	store := fsmrt.NewMemoryStore()
	stored.SetStore(store)
	stored.SetClock(clock{t0})
	if err := stored.Create(ctx, at(0)); err != nil {
		t.Fatal(err)
	}
	must(stored.FireWith(ctx, EventClose, at(time.Minute)))
	must(stored.FireWith(ctx, EventLock, at(2*time.Minute)))
	if n, err := FireDueDoorTimers(ctx, store, &hand{}, t0.Add(3*time.Hour), 10); err != nil || n != 2 {
		t.Fatalf("timers: %d handled, %v", n, err)
	}
	// What was recorded once costs no allocation again: Fire stays at none.
	if n := testing.AllocsPerRun(100, func() {
		m.Fire(ctx, EventClose)
		m.Fire(ctx, EventOpen)
		m.Fire(ctx, EventUnlock)
	}); n != 0 {
		t.Errorf("%v allocations a run", n)
	}
}
`

// TestCoverIsExact runs an application's test of a known sequence of fires under the
// coverage build, in a consumer module as a user would (go generate, then go test -tags
// fsmcover), and requires fsmgen cover to report exactly what the sequence left out; and
// without the tag, nothing is recorded.
func TestCoverIsExact(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a module")
	}
	repo, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	write := func(rel, data string) { writeFile(t, dir, rel, data) }
	write("go.mod", "module example.com/consumer\n\ngo 1.24\n\ntool github.com/fsmgen/fsmgen/cmd/fsmgen\n\n"+
		"require github.com/fsmgen/fsmgen v0.0.0\n\nreplace github.com/fsmgen/fsmgen => "+repo+"\n")
	write("door/door.fsm.yaml", coverSpec)
	write("door/gen.go", "// Package door holds the door machine.\npackage door\n\n//go:generate go tool fsmgen generate --no-tests door.fsm.yaml\n")
	write("door/scenario_test.go", coverScenario)
	run := func(args ...string) string { return goIn(t, dir, args...) }
	run("mod", "tidy")
	run("generate", "./...")

	records := filepath.Join(dir, ".cover")
	t.Setenv("FSMGEN_COVERDIR", records)
	// Without the tag: nothing recorded.
	run("test", "-count=1", "./...")
	if _, err := os.Stat(records); !os.IsNotExist(err) {
		t.Fatalf("a build without the tag recorded coverage: %v", err)
	}
	// With it, twice (a second run adds nothing new), and under the race detector.
	run("test", "-count=1", "-tags", "fsmcover", "./...")
	run("test", "-count=1", "-race", "-tags", "fsmcover", "./...")

	cmd := exec.Command("go", "tool", "fsmgen", "cover", "--format", "json", "door/door.fsm.yaml")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("fsmgen cover: %v\n%s", err, out)
	}
	var report struct {
		Specs []struct {
			Machine   string
			Records   int
			Percent   float64
			Totals    map[string]struct{ Covered, All int }
			Uncovered []struct {
				Kind, What string
				Pos        struct{ Line, Col int }
			}
		}
	}
	if err := json.Unmarshal(out, &report); err != nil || len(report.Specs) != 1 {
		t.Fatalf("%v\n%s", err, out)
	}
	r := report.Specs[0]
	var got []string
	for _, u := range r.Uncovered {
		got = append(got, u.Kind+": "+u.What)
	}
	want := []string{
		`states: state "broken" was never reached`,
		`transitions: transition from open, closed on break to broken was never taken`,
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("uncovered:\n%s\nwant:\n%s\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"), out)
	}
	wantTotals := map[string][2]int{"states": {3, 4}, "transitions": {4, 5}, "guard outcomes": {2, 2}, "refusals": {2, 2}, "timeouts": {2, 2}}
	for k, w := range wantTotals {
		if g := r.Totals[k]; g.Covered != w[0] || g.All != w[1] {
			t.Errorf("%s: %d/%d, want %d/%d", k, g.Covered, g.All, w[0], w[1])
		}
	}
	if r.Uncovered[1].Pos.Line != 17 || r.Uncovered[1].Pos.Col != 5 {
		t.Errorf("the transition is at %d:%d, want 17:5", r.Uncovered[1].Pos.Line, r.Uncovered[1].Pos.Col)
	}

	// Off, the recording is not in the program at all: no symbol of it in the test binary
	// built without the tag (the calls sit behind a false constant and are compiled away);
	// with the tag, it is there.
	for _, c := range []struct {
		tags string
		want bool
	}{{"", false}, {"fsmcover", true}} {
		bin := filepath.Join(t.TempDir(), "door.test")
		run("test", "-c", "-tags", c.tags, "-o", bin, "./door")
		syms := run("tool", "nm", bin)
		if got := strings.Contains(syms, "fsmrt.coverWrite"); got != c.want {
			t.Errorf("tags %q: the recording in the binary: %v, want %v", c.tags, got, c.want)
		}
	}

	// The CI gate and the reports.
	gate := exec.Command("go", "tool", "fsmgen", "cover", "--fail-under", "90", "--markdown", "cover.md",
		"--diagram", "mermaid", "-o", "cover", "door/door.fsm.yaml")
	gate.Dir = dir
	gate.Env = cmd.Env
	text, err := gate.CombinedOutput()
	if err == nil || !strings.Contains(string(text), "below 90%") || !strings.Contains(string(text), "door/door.fsm.yaml:17:5: transition from open, closed on break to broken was never taken") {
		t.Errorf("--fail-under 90: %v\n%s", err, text)
	}
	for _, f := range []string{"cover.md", "cover/door.cover.mmd"} {
		data, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil || !strings.Contains(string(data), "never taken#58; from open, closed on break to broken") {
			t.Errorf("%s: %v\n%s", f, err, data)
		}
	}
}
