package interp_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/fsmgen/fsmgen/internal/interp"
	"github.com/fsmgen/fsmgen/internal/ir"
	"github.com/fsmgen/fsmgen/internal/lower"
)

// chart runs a statechart spec (the body after the header) from its start through events,
// with the given hook guards holding, and returns what each step printed: the
// configuration, "done" when the machine is, and the actions run; a refusal as its reason.
func chart(t *testing.T, body string, guards []string, events ...string) []string {
	t.Helper()
	spec := "version: 1\nmachine: M\npackage: m\n" + body
	m, ds := lower.Load("chart.fsm.yaml", []byte(spec))
	if ds.HasErrors() {
		t.Fatalf("spec refused:\n%v", ds)
	}
	in := interp.Inputs{Guard: func(g *ir.Guard) bool { return slices.Contains(guards, g.Name) }}
	x := interp.New(m)
	show := func(s *ir.State, as []*ir.Action) string {
		out := ir.ConfigName(s.Config) // the paths, not the short names
		if s.Terminal {
			out += " done"
		}
		for i, a := range as {
			if i == 0 {
				out += " /"
			}
			out += " " + a.Name
		}
		return out
	}
	st, rej := x.Start(in)
	if rej != nil {
		return []string{"start: " + string(rej.Reason)}
	}
	out := []string{show(st.To, st.Actions)}
	for _, name := range events {
		var e *ir.Event
		for _, ev := range m.Events {
			if ev.Name == name {
				e = ev
			}
		}
		st, rej := x.Fire(e, in)
		if rej != nil {
			out = append(out, name+": "+string(rej.Reason)+" in "+ir.ConfigName(x.State.Config))
			continue
		}
		out = append(out, show(st.To, st.Actions))
	}
	return out
}

func want(t *testing.T, got []string, want ...string) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Errorf("got\n  %s\nwant\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
}

const historyChart = `
events: { go: {}, out: {}, back: {}, deep_back: {} }
actions: { en_a: {}, ex_a: {}, en_y: {} }
states:
  a:
    initial: true
    entry: [en_a]
    exit: [ex_a]
    states:
      h: { history: shallow }
      hd: { history: deep }
      x: { initial: true }
      y:
        entry: [en_y]
        states:
          y1: { initial: true }
          y2: {}
  b: {}
transitions:
  - { from: a.x, on: go, to: a.y }
  - { from: a.y.y1, on: go, to: a.y.y2 }
  - { from: a, on: out, to: b }
  - { from: b, on: back, to: a.h }
  - { from: b, on: deep_back, to: a.hd }
`

func TestChartHistory(t *testing.T) {
	// Shallow history restores a.y and enters it at its initial state; deep history
	// restores a.y.y2 itself.
	want(t, chart(t, historyChart, nil, "go", "go", "out", "back", "go", "out", "deep_back"),
		"a.x / en_a",
		"a.y.y1 / en_y",
		"a.y.y2",
		"b / ex_a",
		"a.y.y1 / en_a en_y",
		"a.y.y2",
		"b / ex_a",
		"a.y.y2 / en_a en_y")
	// Nothing recorded yet: the parent's initial state.
	want(t, chart(t, historyChart, nil, "out", "deep_back"), "a.x / en_a", "b / ex_a", "a.x / en_a")
}

func TestChartParallelDone(t *testing.T) {
	body := `
events: { f1: {}, f2: {} }
actions: { fin: {} }
states:
  p:
    initial: true
    parallel: true
    states:
      r1:
        states:
          a: { initial: true }
          end: { terminal: true }
      r2:
        states:
          b: { initial: true }
          end: { terminal: true }
  over: { terminal: true }
transitions:
  - { from: p.r1.a, on: f1, to: p.r1.end }
  - { from: p.r2.b, on: f2, to: p.r2.end }
  - { from: p, done: true, to: over, do: [fin] }
`
	want(t, chart(t, body, nil, "f1", "f1", "f2", "f1"),
		"p.r1.a,p.r2.b",
		"p.r1.end,p.r2.b",
		"f1: invalid_transition in p.r1.end,p.r2.b",
		"over done / fin",
		"f1: invalid_transition in over")
}

func TestChartEventless(t *testing.T) {
	body := `
events: { go: {} }
guards: { ready: {} }
states:
  a: { initial: true }
  b: {}
  c: {}
transitions:
  - { from: a, always: true, if: ready, to: b }
  - { from: b, always: true, to: c }
  - { from: a, on: go, to: c }
`
	// Taken at start when the guard holds, in a chain.
	want(t, chart(t, body, []string{"ready"}), "c")
	want(t, chart(t, body, nil, "go"), "a", "c")

	loop := `
events: { go: {} }
guards: { spin: {} }
states:
  a: { initial: true }
  b: {}
  c: {}
transitions:
  - { from: a, on: go, to: b }
  - { from: b, always: true, to: c }
  - { from: c, always: true, if: spin, to: b }
`
	// An eventless loop refuses the event and changes nothing (its guard holds: without
	// one, the checker refuses the loop).
	want(t, chart(t, loop, []string{"spin"}, "go"), "a", "go: eventless_loop in a")
}

func TestChartReenter(t *testing.T) {
	body := `
events: { in: {}, again: {}, self: {}, stay: {} }
actions: { en: {}, ex: {}, t: {} }
states:
  a:
    initial: true
    entry: [en]
    exit: [ex]
    states:
      x: { initial: true }
      y: {}
transitions:
  - { from: a, on: in, to: a.y, reenter: false }
  - { from: a, on: again, to: a.x, reenter: true }
  - { from: a, on: self, to: a }
  - { from: a, on: stay, internal: true, do: [t] }
`
	want(t, chart(t, body, nil, "in", "again", "in", "self", "stay"),
		"a.x / en",
		"a.y",
		"a.x / ex en",
		"a.y",
		"a.x / ex en",
		"a.x / t")
}

func TestChartInternalEventsCannotBeFired(t *testing.T) {
	body := `
states:
  a:
    initial: true
    states:
      x: { initial: true }
      end: { terminal: true }
  b: {}
transitions:
  - { from: a, done: true, to: b }
  - { from: a.x, always: true, to: a.end }
`
	m, ds := lower.Load("chart.fsm.yaml", []byte("version: 1\nmachine: M\npackage: m\n"+body))
	if ds.HasErrors() {
		t.Fatal(ds)
	}
	x := interp.New(m)
	if _, rej := x.Start(interp.Inputs{}); rej != nil {
		t.Fatal(rej)
	}
	if x.State.Name != "b" {
		t.Fatalf("after start: %s, want b (always, then done)", x.State.Name)
	}
	for _, e := range m.Events {
		if !e.Internal {
			t.Errorf("event %s is not internal", e.Name)
			continue
		}
		if _, rej := x.Fire(e, interp.Inputs{}); rej == nil || rej.Reason != interp.InvalidTransition {
			t.Errorf("firing %s: %v, want an invalid transition", e.Name, rej)
		}
	}
}
