package lower_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fsmgen/fsmgen/internal/ir"
	"github.com/fsmgen/fsmgen/internal/lock"
	"github.com/fsmgen/fsmgen/internal/lower"
)

// lockedSpec writes spec (a version of seed 003's review spec, edited by edit) beside a
// lock that records the seed's version as it is, and returns the spec's path and the
// locked fingerprint.
func lockedSpec(t *testing.T, edit func(string) string) (string, string) {
	t.Helper()
	seed, err := os.ReadFile("../../examples/review/review.fsm.yaml")
	if err != nil {
		t.Fatal(err)
	}
	old, ds := lower.Load("review.fsm.yaml", seed)
	if old == nil {
		t.Fatal(ds)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "review.fsm.yaml")
	f := &lock.File{}
	f.Add(old)
	if err := os.WriteFile(lock.Path(path), f.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(edit(string(seed))), 0o644); err != nil {
		t.Fatal(err)
	}
	return path, ir.Fingerprint(old)
}

func load(t *testing.T, path string) (*ir.Machine, string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	m, ds := lower.Load(path, data)
	return m, fmt.Sprint(ds)
}

// addEvent adds an event and a transition on it: an additive change.
func addEvent(s string) string {
	s = strings.Replace(s, "events:\n", "events:\n  nudge: { doc: A reminder. }\n", 1)
	return strings.Replace(s, "transitions:\n", "transitions:\n  - { from: blocked, on: nudge, internal: true }\n", 1)
}

// TestLockedAdditiveChange is the scenario: a version of the spec that code was
// generated from, then one event and one transition added. The new spec loads the locked
// version's instances with no migration written by hand.
func TestLockedAdditiveChange(t *testing.T) {
	path, fp := lockedSpec(t, addEvent)
	m, ds := load(t, path)
	if m == nil || ds != "[]" {
		t.Fatalf("diagnostics: %s", ds)
	}
	if len(m.Migrations) != 1 || m.Migrations[0].From != fp {
		t.Fatalf("migrations %+v, want one from %s", m.Migrations, fp)
	}
	mg := m.Migrations[0]
	for i, to := range mg.Transitions {
		if to != i+1 { // the new transition comes first
			t.Errorf("older transition %d replays as %d, want %d", i, to, i+1)
		}
	}
	if len(mg.States)+len(mg.Events)+len(mg.Counters)+len(mg.Fields) != 0 {
		t.Errorf("an additive change renames nothing: %+v", mg)
	}
	// The version the spec is now is no migration.
	f, _, _ := lock.Read(path)
	f.Add(m)
	if err := os.WriteFile(lock.Path(path), f.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if m, ds := load(t, path); m == nil || len(m.Migrations) != 1 {
		t.Fatalf("with both versions locked: %s, %d migrations", ds, len(m.Migrations))
	}
}

// TestLockedBreakingChange: a removed state and a retyped field are an error at the
// version's line in the lock that proposes the migration entry; the entry, naming the
// version by a prefix of its fingerprint, makes it load.
func TestLockedBreakingChange(t *testing.T) {
	remove := func(s string) string {
		return strings.ReplaceAll(strings.ReplaceAll(s, "blocked", "on_hold"), "\n  blocked:", "\n  on_hold:")
	}
	path, fp := lockedSpec(t, remove)
	m, ds := load(t, path)
	short := lock.Short(fp)
	for _, want := range []string{"review.fsm.lock:4:1: error: version " + short, `state "blocked"`, `event "blocked"`, "migrations:\n    - from: " + short, "states: { blocked: NEW_NAME }"} {
		if !strings.Contains(ds, want) {
			t.Errorf("diagnostics lack %q:\n%s", want, ds)
		}
	}
	if m != nil {
		t.Error("a spec that strands locked instances loads")
	}
	data, _ := os.ReadFile(path)
	fixed := string(data) + fmt.Sprintf("migrations:\n  - from: %s\n    states: { blocked: on_hold }\n    events: { blocked: on_hold }\n", short)
	if err := os.WriteFile(path, []byte(fixed), 0o644); err != nil {
		t.Fatal(err)
	}
	m, ds = load(t, path)
	if m == nil || ds != "[]" {
		t.Fatalf("with the migration: %s", ds)
	}
	if len(m.Migrations) != 1 || m.Migrations[0].From != fp || m.Migrations[0].States["blocked"] != "on_hold" {
		t.Fatalf("migrations %+v", m.Migrations)
	}
}

// TestLockedRefusals: a migration from a version the lock does not have, or a prefix too
// short to name one, is an error at the from.
func TestLockedRefusals(t *testing.T) {
	for _, c := range []struct{ from, want string }{
		{"sha256:00000000", "records no version sha256:00000000"},
		{"sha256:0f3e", "too short"},
	} {
		path, _ := lockedSpec(t, func(s string) string {
			return s + "migrations:\n  - from: " + c.from + "\n"
		})
		if _, ds := load(t, path); !strings.Contains(ds, c.want) || !strings.Contains(ds, "review.fsm.yaml:") {
			t.Errorf("from %s: %s", c.from, ds)
		}
	}
	// Without a lock.
	dir := t.TempDir()
	seed, _ := os.ReadFile("../../examples/review/review.fsm.yaml")
	path := filepath.Join(dir, "review.fsm.yaml")
	os.WriteFile(path, append(seed, "migrations:\n  - from: sha256:0f3e3634\n"...), 0o644)
	if _, ds := load(t, path); !strings.Contains(ds, "no version lock beside this spec") {
		t.Errorf("no lock: %s", ds)
	}
}

// TestLockedChain: the lock records the seed's version and a later one that added an event;
// then a state is renamed. One migration entry, from the later version, carries both: the
// error is at the later version's line only, and says it carries the earlier one.
func TestLockedChain(t *testing.T) {
	path, first := lockedSpec(t, func(s string) string { return s })
	data, _ := os.ReadFile(path)
	added := addEvent(string(data))
	os.WriteFile(path, []byte(added), 0o644)
	second, ds := load(t, path)
	if second == nil {
		t.Fatal(ds)
	}
	f, _, _ := lock.Read(path)
	f.Add(second)
	os.WriteFile(lock.Path(path), f.Bytes(), 0o644)
	later := ir.Fingerprint(second)

	renamed := strings.ReplaceAll(added, "blocked", "on_hold")
	os.WriteFile(path, []byte(renamed), 0o644)
	m, ds := load(t, path)
	if m != nil || strings.Count(ds, "error: version") != 1 || !strings.Contains(ds, "version "+lock.Short(later)+" of this spec") ||
		!strings.Contains(ds, "carries the earlier versions "+lock.Short(first)) {
		t.Fatalf("want one error, at the later version, carrying the first:\n%s", ds)
	}
	fixed := renamed + "migrations:\n  - from: " + lock.Short(later) + "\n    states: { blocked: on_hold }\n    events: { blocked: on_hold }\n"
	os.WriteFile(path, []byte(fixed), 0o644)
	m, ds = load(t, path)
	if m == nil || ds != "[]" {
		t.Fatalf("with the one entry: %s", ds)
	}
	from := map[string]*ir.Migration{}
	for _, mg := range m.Migrations {
		from[mg.From] = mg
	}
	for _, fp := range []string{first, later} {
		mg := from[fp]
		if mg == nil || mg.States["blocked"] != "on_hold" || mg.Events["blocked"] != "on_hold" {
			t.Errorf("migration from %s: %+v", fp, mg)
		}
	}
	if len(m.Migrations) != 2 {
		t.Errorf("%d migrations, want 2", len(m.Migrations))
	}
	// The first version has no nudge event: its transitions pair with the ones here all the same.
	if mg := from[first]; mg != nil && len(mg.Transitions) != len(m.Transitions)-1 {
		t.Errorf("the first version's %d transitions", len(mg.Transitions))
	}
}
