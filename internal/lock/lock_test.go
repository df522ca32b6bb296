package lock_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fsmgen/fsmgen/internal/fixture"
	"github.com/fsmgen/fsmgen/internal/ir"
	"github.com/fsmgen/fsmgen/internal/lock"
)

// TestRoundTrip locks every spec the generators are tested on, reads the lock back, and
// requires each version to hash to its fingerprint and to give back the names, field
// types and transition shapes a migration reads.
func TestRoundTrip(t *testing.T) {
	f := &lock.File{Path: "all.fsm.lock"}
	var machines []*ir.Machine
	for _, p := range fixture.Specs(t, "../..") {
		m := fixture.Load(t, p)
		machines = append(machines, m)
		f.Add(m)
		if f.Add(m) {
			t.Errorf("%s: added twice", p)
		}
	}
	text := f.Bytes()
	back, ds := lock.Parse("all.fsm.lock", text)
	if len(ds) > 0 {
		t.Fatal(ds)
	}
	if !bytes.Equal(back.Bytes(), text) {
		t.Fatal("the lock does not read back to the same text")
	}
	lines := strings.Split(strings.TrimSpace(string(text)), "\n")
	var body []string
	for _, l := range lines {
		if !strings.HasPrefix(l, "#") {
			body = append(body, l)
		}
	}
	if !slices.IsSorted(body) {
		t.Error("the lines are not sorted")
	}
	for _, m := range machines {
		fp := ir.Fingerprint(m)
		v, msg := back.Find(fp)
		if v == nil {
			t.Fatalf("%s: %s", m.Source, msg)
		}
		got, err := v.Machine()
		if err != nil {
			t.Fatalf("%s: %v", m.Source, err)
		}
		if got.Name != m.Name || got.Package != m.Package || (got.Chart != nil) != (m.Chart != nil) {
			t.Errorf("%s: machine %s.%s chart=%t", m.Source, got.Package, got.Name, got.Chart != nil)
		}
		same := func(what string, a, b []string) {
			if !slices.Equal(a, b) {
				t.Errorf("%s: %s %q, want %q", m.Source, what, a, b)
			}
		}
		same("states", names(got.States, func(s *ir.State) string { return s.Name }), names(m.States, func(s *ir.State) string { return s.Name }))
		same("events", names(got.Events, func(e *ir.Event) string { return e.Name }), names(m.Events, func(e *ir.Event) string { return e.Name }))
		same("fields", names(got.Fields, func(f *ir.Field) string { return f.Name + " " + f.Type.String() + " " + strings.Join(f.Values, ",") }), names(m.Fields, func(f *ir.Field) string { return f.Name + " " + f.Type.String() + " " + strings.Join(f.Values, ",") }))
		same("counters", names(got.Counters, func(c *ir.Counter) string { return c.Name + " " + boolText(c.PerState) }), names(m.Counters, func(c *ir.Counter) string { return c.Name + " " + boolText(c.PerState) }))
		same("transitions", names(got.Transitions, shape), names(m.Transitions, shape))
	}
}

func names[T any](xs []T, name func(T) string) []string {
	out := []string{}
	for _, x := range xs {
		out = append(out, name(x))
	}
	return out
}

func boolText(b bool) string {
	if b {
		return "true"
	}
	return "false"
}

// shape is what pairs a transition with the one that replays it.
func shape(t *ir.Transition) string {
	var b strings.Builder
	for _, s := range t.From {
		b.WriteString(s.Name + " ")
	}
	b.WriteString("on ")
	for _, e := range t.Events {
		b.WriteString(e.Name + " ")
	}
	target := func(tg ir.Target) {
		b.WriteString("-> " + string(rune('0'+tg.Kind)))
		if tg.State != nil {
			b.WriteString(tg.State.Name)
		}
	}
	target(t.Target)
	for _, c := range t.Choices {
		target(c.Target)
	}
	for _, c := range t.Increment {
		b.WriteString(" +" + c.Name)
	}
	for _, c := range t.Reset {
		b.WriteString(" 0" + c.Name)
	}
	return b.String()
}

// TestRefused: a lock edited or merged by hand, or not a lock at all, is an error at the
// line at fault, never a version read wrong.
func TestRefused(t *testing.T) {
	m := fixture.Load(t, "../../examples/review/review.fsm.yaml")
	f := &lock.File{}
	f.Add(m)
	good := string(f.Bytes())
	fp := ir.Fingerprint(m)
	first := strings.Index(good, fp)
	for _, c := range []struct{ name, text, want string }{
		{"edited", strings.Replace(good, `state "`, `state "x`, 1), "hash to"},
		{"line dropped", dropLine(good, 6), "lines are missing"},
		{"out of order", swapLines(good, 5, 6), "out of order"},
		{"garbage", good + "hello\n", "not a line of a version lock"},
		{"bad fingerprint", good + "sha256:xyz 000000 lock package \"a\" chart=false\n", "not a fingerprint"},
		{"no lock line", good[:first] + strings.Replace(good[first:], fp+" 000000 lock", fp+" 000000 state", 1), "without its lock line"},
	} {
		t.Run(c.name, func(t *testing.T) {
			f, ds := lock.Parse("review.fsm.lock", []byte(c.text))
			if !ds.HasErrors() || !strings.Contains(fmt.Sprint(ds), c.want) || !strings.Contains(fmt.Sprint(ds), "review.fsm.lock:") {
				t.Fatalf("diagnostics %v, want an error at a position saying %q", ds, c.want)
			}
			if len(f.Versions) != 0 {
				t.Errorf("a refused lock gives %d versions", len(f.Versions))
			}
		})
	}
}

// dropLine removes the n-th line (from 1) of s.
func dropLine(s string, n int) string {
	lines := strings.SplitAfter(s, "\n")
	return strings.Join(append(lines[:n-1:n-1], lines[n:]...), "")
}

// swapLines swaps the n-th and m-th lines (from 1) of s.
func swapLines(s string, n, m int) string {
	lines := strings.SplitAfter(s, "\n")
	lines[n-1], lines[m-1] = lines[m-1], lines[n-1]
	return strings.Join(lines, "")
}

// TestFind names a version by a prefix of its fingerprint of at least 8 hex digits.
func TestFind(t *testing.T) {
	f := &lock.File{Path: "x.fsm.lock"}
	f.Add(fixture.Load(t, "../../examples/review/review.fsm.yaml"))
	fp := f.Versions[0].Fingerprint
	if v, msg := f.Find(fp[:len("sha256:")+8]); v == nil {
		t.Errorf("a prefix of 8 digits: %s", msg)
	}
	if v, msg := f.Find(fp[:len("sha256:")+4]); v != nil || !strings.Contains(msg, "too short") {
		t.Errorf("a prefix of 4 digits: %v %s", v, msg)
	}
	if v, msg := f.Find("sha256:00000000"); v != nil || !strings.Contains(msg, "records no version") {
		t.Errorf("an unknown version: %v %s", v, msg)
	}
}

// TestRead: a missing lock is an empty one; a directory or a FIFO in its place is an error,
// never a hang.
func TestRead(t *testing.T) {
	dir := t.TempDir()
	spec := filepath.Join(dir, "a.fsm.yaml")
	if got := lock.Path(spec); got != filepath.Join(dir, "a.fsm.lock") {
		t.Errorf("Path = %s", got)
	}
	f, exists, ds := lock.Read(spec)
	if exists || len(ds) > 0 || len(f.Versions) != 0 {
		t.Errorf("no lock: %v %v %d", exists, ds, len(f.Versions))
	}
	if err := os.Mkdir(lock.Path(spec), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, _, ds := lock.Read(spec); !strings.Contains(fmt.Sprint(ds), "not a regular file") {
		t.Errorf("a directory: %v", ds)
	}
}

// FuzzParse: no input makes Parse panic or hang, and a lock it reads writes back as a lock
// that reads to the same versions.
func FuzzParse(f *testing.F) {
	l := &lock.File{}
	l.Add(fixture.Load(f, "../../examples/review/review.fsm.yaml"))
	good := l.Bytes()
	f.Add(good)
	f.Add([]byte(swapLines(string(good), 5, 6)))
	f.Add([]byte("# only a comment\n"))
	f.Add([]byte("sha256:0123456789abcdef0123456789abcdef 000000 lock package \"x\" chart=false\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		got, ds := lock.Parse("x.fsm.lock", data)
		if ds.HasErrors() {
			if len(got.Versions) != 0 {
				t.Fatal("a refused lock has versions")
			}
			return
		}
		again, ds := lock.Parse("x.fsm.lock", got.Bytes())
		if ds.HasErrors() || len(again.Versions) != len(got.Versions) {
			t.Fatalf("written back: %v", ds)
		}
		for _, v := range got.Versions {
			if _, err := v.Machine(); err != nil {
				var le *lock.LineError
				if !errors.As(err, &le) || le.Pos.Line == 0 {
					t.Fatalf("an untyped or unplaced error: %v", err)
				}
			}
		}
	})
}
