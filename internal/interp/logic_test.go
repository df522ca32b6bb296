package interp

import (
	"slices"
	"testing"

	"github.com/fsmgen/fsmgen/internal/ir"
	"github.com/fsmgen/fsmgen/internal/lower"
)

// TestGuardLists: a list in if must hold item by item, a list in unless must fail item by
// item, as lists of names do, expressions among the items or not; {and: [...]} in unless
// fails when one argument fails.
func TestGuardLists(t *testing.T) {
	const spec = `version: 1
machine: M
package: m
events: { go: {}, back: {}, try: {} }
guards: { a: {}, b: {}, c: {} }
states:
  s: { initial: true }
  t: {}
transitions:
  - { from: s, on: go, to: t, unless: [a, { or: [b, c] }] }
  - { from: t, on: back, to: s, if: [a, { or: [b, c] }] }
  - { from: s, on: try, to: t, unless: { and: [a, { or: [b, c] }] } }
  - { from: t, on: try, to: s }
`
	m, ds := lower.Load("m.fsm.yaml", []byte(spec))
	if ds.HasErrors() {
		t.Fatal(ds)
	}
	ev := func(name string) *ir.Event {
		return m.Events[slices.IndexFunc(m.Events, func(e *ir.Event) bool { return e.Name == name })]
	}
	for _, c := range []struct {
		event string
		holds []string
		taken bool
	}{
		{"go", nil, true},
		{"go", []string{"a"}, false},
		{"go", []string{"c"}, false},
		{"try", []string{"a"}, true},
		{"try", []string{"b"}, true},
		{"try", []string{"a", "c"}, false},
	} {
		x := New(m)
		in := Inputs{Guard: func(g *ir.Guard) bool { return slices.Contains(c.holds, g.Name) }}
		if _, rej := x.Fire(ev(c.event), in); (rej == nil) != c.taken {
			t.Errorf("%s with %v holding: taken %v, want %v (%v)", c.event, c.holds, rej == nil, c.taken, rej)
		}
	}
	for _, c := range []struct {
		holds []string
		taken bool
	}{{[]string{"a", "b"}, true}, {[]string{"a"}, false}, {[]string{"b", "c"}, false}} {
		x := New(m)
		x.Fire(ev("go"), Inputs{})
		in := Inputs{Guard: func(g *ir.Guard) bool { return slices.Contains(c.holds, g.Name) }}
		if _, rej := x.Fire(ev("back"), in); (rej == nil) != c.taken {
			t.Errorf("back with %v holding: taken %v, want %v (%v)", c.holds, rej == nil, c.taken, rej)
		}
	}
}

// TestGuardExpressionsReadingAlike: two expressions whose text reads alike (a guard's name
// holds " and ") are two expressions.
func TestGuardExpressionsReadingAlike(t *testing.T) {
	const spec = `version: 1
machine: M
package: m
events: { go: {}, back: {} }
guards: { "x and y": {}, x: {}, y: {}, z: {} }
states:
  s: { initial: true }
  t: {}
transitions:
  - { from: s, on: go, to: t, unless: { and: ["x and y", z] } }
  - { from: t, on: back, to: s, unless: { and: [x, y, z] } }
`
	m, ds := lower.Load("m.fsm.yaml", []byte(spec))
	if ds.HasErrors() {
		t.Fatal(ds)
	}
	x := New(m)
	in := Inputs{Guard: func(g *ir.Guard) bool { return g.Name != "x and y" }}
	if _, rej := x.Fire(m.Events[0], in); rej != nil {
		t.Fatal(rej) // "x and y" fails: the and fails
	}
	if _, rej := x.Fire(m.Events[1], in); rej == nil {
		t.Error("back was taken: x, y and z hold")
	}
}
