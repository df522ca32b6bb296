package budget

import (
	"fmt"
	"strings"

	"github.com/fsmgen/fsmgen/internal/fixture"
)

// wideSpec is fixture.WideSpec: the report's machine.
func wideSpec(n, e int) []byte { return fixture.WideSpec(n, e) }

// scalingSpec writes a machine of the shape the scaling benchmark generates: n states in a
// ring (the first initial, the last terminal), e events, and from each state per-1
// transitions on events and to states picked by offset, plus one on the last event to the
// terminal state.
func scalingSpec(n, e, per int) []byte {
	var b strings.Builder
	b.WriteString("version: 1\nmachine: Scale\npackage: scale\nstates:\n")
	w := len(fmt.Sprint(n - 1))
	for i := range n {
		switch i {
		case 0:
			fmt.Fprintf(&b, "  s%0*d: { initial: true }\n", w, i)
		case n - 1:
			fmt.Fprintf(&b, "  s%0*d: { terminal: true }\n", w, i)
		default:
			fmt.Fprintf(&b, "  s%0*d: {}\n", w, i)
		}
	}
	b.WriteString("events:\n")
	for j := range e {
		fmt.Fprintf(&b, "  e%02d: {}\n", j)
	}
	b.WriteString("transitions:\n")
	ring := n - 1
	offsets := [][2]int{{0, 1}, {1, -1}, {5, 7}, {11, 20}, {15, 33}, {3, 12}} // event, target
	for i := range ring {
		for _, o := range offsets[:min(per-1, len(offsets))] {
			to := ((i+o[1])%ring + ring) % ring
			fmt.Fprintf(&b, "  - { from: s%0*d, on: e%02d, to: s%0*d }\n", w, i, (i+o[0])%(e-1), w, to)
		}
		fmt.Fprintf(&b, "  - { from: s%0*d, on: e%02d, to: s%0*d }\n", w, i, e-1, w, n-1)
	}
	return []byte(b.String())
}

// featureSpec writes a machine of n states and e events that uses guards, roles, actions,
// counters and docs on every transition, so that the cases the tests add per pair count.
func featureSpec(n, e int) []byte {
	var b strings.Builder
	b.WriteString(`version: 1
machine: Rich
package: rich
roles: { clerk: {}, boss: { all: true } }
policies: { late: {} }
counters: { tries: { limit: 3, then: s0 } }
guards: { ready: { doc: a hook }, ok: {} }
actions: { note: {}, send: { effect: true } }
states:
`)
	for i := range n {
		if i == 0 {
			fmt.Fprintf(&b, "  s%d: { initial: true, doc: The state number %d. }\n", i, i)
			continue
		}
		fmt.Fprintf(&b, "  s%d: { doc: The state number %d. }\n", i, i)
	}
	b.WriteString("events:\n")
	for j := range e {
		fmt.Fprintf(&b, "  ev%d: { doc: The event number %d. }\n", j, j)
	}
	b.WriteString("transitions:\n")
	for i := range n {
		for j := range 3 {
			ev := (i + j) % e
			fmt.Fprintf(&b, "  - { from: s%d, on: ev%d, to: s%d, if: ready, unless: ok, by: [clerk, { role: boss, policy: late }], do: [note, send], increment: tries, doc: Moves on when ready. }\n", i, ev, (i+j+1)%n)
			fmt.Fprintf(&b, "  - { from: s%d, on: ev%d, to: s%d }\n", i, ev, (i+j+2)%n)
		}
	}
	return []byte(b.String())
}

// faninSpec writes n states and e events where every event leads from every state to the
// same state (one diagram edge per state carries every event), and a next event that
// leads through the states in order.
func faninSpec(n, e int) []byte {
	var b strings.Builder
	b.WriteString("version: 1\nmachine: Fan\npackage: fan\nstates:\n  s0: { initial: true }\n")
	for i := 1; i < n; i++ {
		fmt.Fprintf(&b, "  s%d: {}\n", i)
	}
	b.WriteString("events:\n")
	for j := range e {
		fmt.Fprintf(&b, "  e%d: {}\n", j)
	}
	b.WriteString("  next: {}\ntransitions:\n")
	for i := range n - 1 {
		fmt.Fprintf(&b, "  - { from: s%d, on: next, to: s%d }\n", i, i+1)
	}
	for j := range e {
		fmt.Fprintf(&b, "  - { from: { any: true }, on: e%d, to: s0 }\n", j)
	}
	return []byte(b.String())
}

// historySpec writes n states in a ring, a state every other state can be put on hold in,
// which remembers where it was entered from, and e events that each take it back there
// (a history target: an edge to each of the n states it may go back to), from it and from
// every state of the ring.
func historySpec(n, e int) []byte {
	var b strings.Builder
	b.WriteString("version: 1\nmachine: Hist\npackage: hist\nstates:\n  held: { remembers: true }\n  s0: { initial: true }\n")
	for i := 1; i < n; i++ {
		fmt.Fprintf(&b, "  s%d: {}\n", i)
	}
	b.WriteString("events:\n  next: {}\n  hold: {}\n")
	for j := range e {
		fmt.Fprintf(&b, "  back%d: {}\n", j)
	}
	b.WriteString("transitions:\n")
	for i := range n {
		fmt.Fprintf(&b, "  - { from: s%d, on: next, to: s%d }\n", i, (i+1)%n)
	}
	b.WriteString("  - { from: { any: true, except: [held] }, on: hold, to: held }\n")
	for j := range e {
		fmt.Fprintf(&b, "  - { from: held, on: back%d, to: { history: held } }\n", j)
	}
	return []byte(b.String())
}

// levelsSpec writes n states in a ring, each with a timeout, and k timeout levels (1 % to
// k %) that every timeout has.
func levelsSpec(n, k int) []byte {
	var b strings.Builder
	b.WriteString("version: 1\nmachine: Levels\npackage: levels\ntimeout_levels: {")
	for j := range k {
		if j > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "l%d: %d%%", j, j+1)
	}
	b.WriteString("}\nstates:\n  s0: { initial: true, timeout: 15m }\n")
	for i := 1; i < n; i++ {
		fmt.Fprintf(&b, "  s%d: { timeout: 15m }\n", i)
	}
	b.WriteString("events:\n  next: {}\ntransitions:\n")
	for i := range n {
		fmt.Fprintf(&b, "  - { from: s%d, on: next, to: s%d }\n", i, (i+1)%n)
	}
	return []byte(b.String())
}

// guardedSpec writes k transitions of one (state, event) pair, each with a guard of its
// own, the last one without.
func guardedSpec(k int) []byte {
	var b strings.Builder
	b.WriteString("version: 1\nmachine: Guarded\npackage: guarded\nguards:\n")
	for j := range k {
		fmt.Fprintf(&b, "  g%d: {}\n", j)
	}
	b.WriteString("states:\n  a: { initial: true }\n  b: {}\nevents:\n  go: {}\n  back: {}\ntransitions:\n")
	for j := range k {
		fmt.Fprintf(&b, "  - { from: a, on: go, if: g%d, to: b }\n", j)
	}
	b.WriteString("  - { from: a, on: go, to: b }\n  - { from: b, on: back, to: a }\n")
	return []byte(b.String())
}

// requiredSpec writes k required context fields and n states in a ring that each require
// every one of them (one YAML anchor).
func requiredSpec(n, k int) []byte {
	var b strings.Builder
	b.WriteString("version: 1\nmachine: Required\npackage: required\ncontext:\n")
	for j := range k {
		fmt.Fprintf(&b, "  f%d: { type: string, non_empty: true }\n", j)
	}
	b.WriteString("states:\n  s0: { initial: true }\n  s1: { requires: &all [")
	for j := range k {
		if j > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "f%d", j)
	}
	b.WriteString("] }\n")
	for i := 2; i < n; i++ {
		fmt.Fprintf(&b, "  s%d: { requires: *all }\n", i)
	}
	b.WriteString("events:\n  next: {}\ntransitions:\n")
	for i := range n {
		fmt.Fprintf(&b, "  - { from: s%d, on: next, to: s%d }\n", i, (i+1)%n)
	}
	return []byte(b.String())
}
