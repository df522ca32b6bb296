// Package randspec writes random flat specs for property tests: the shapes real machines
// are made of, combined in ways no one wrote by hand. A payment-style chain of transitions
// on one event, each guarded by a hook guard of its own (or an expression of guards of its
// own: and, or, not) and some only for one role; states
// in the middle of chains that require context fields; timeouts whose expiry moves the
// machine on; counters whose limit redirects a transition elsewhere; checkpoints. Every
// state is the target of some transition, so the checker finds none unreachable; what the
// specs are for is whether the generated tests reach every state the interpreter can.
package randspec

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
)

// Options bounds a flat spec.
type Options struct {
	MinStates, MaxStates int // states, terminals included
	MinChain, MaxChain   int // links of a guarded chain
}

// DefaultOptions are the sizes the property tests use: chains of 2 to 6 links.
func DefaultOptions() Options {
	return Options{MinStates: 4, MaxStates: 10, MinChain: 2, MaxChain: 6}
}

type transition struct {
	from, on, to string
	guard        string // hook guard that must hold ("" none)
	unless       string // hook guard that must fail ("" none)
	expr         string // a guard expression that must hold, as YAML (logic.go; "" none)
	by           []string
	increment    string
	checkpoint   string
}

// Flat returns the YAML of a random flat spec drawn from r.
func Flat(r *rand.Rand, opt Options) []byte {
	g := &flat{r: r}
	return g.spec(opt)
}

type flat struct {
	r      *rand.Rand
	guards int
	ts     []transition
}

func (g *flat) guard() string {
	name := fmt.Sprintf("g%d", g.guards)
	g.guards++
	return name
}

func (g *flat) spec(opt Options) []byte {
	r := g.r
	n := opt.MinStates + r.IntN(opt.MaxStates-opt.MinStates+1)
	terminals := 1 + r.IntN(2)
	states := make([]string, n)
	for i := range states {
		states[i] = fmt.Sprintf("s%d", i)
	}
	terminal := func(i int) bool { return i >= n-terminals }
	var roles []string
	if r.IntN(2) == 0 {
		roles = []string{"clerk", "manager"}
		if r.IntN(2) == 0 {
			roles = append(roles, "admin") // may fire everything
		}
	}
	pick := func() []string {
		if len(roles) == 0 || r.IntN(3) != 0 {
			return nil
		}
		return []string{roles[r.IntN(2)]}
	}
	requires := map[int]bool{}
	timeouts := map[int]string{}
	events := []string{}
	event := func() string {
		name := fmt.Sprintf("e%d", len(events))
		events = append(events, name)
		return name
	}
	checkpoint := r.IntN(2) == 0
	cp := func() string {
		if checkpoint && r.IntN(3) == 0 {
			return "saved"
		}
		return ""
	}
	// Each state after the first is the target of a transition from a state before it,
	// many of them in chains: one event, links tried in order, each with a guard of its
	// own, the last one unguarded or guarded too.
	for i := 1; i < n; {
		from := r.IntN(i)
		for terminal(from) {
			from = r.IntN(i)
		}
		links := 1
		if r.IntN(3) != 0 {
			links = opt.MinChain + r.IntN(opt.MaxChain-opt.MinChain+1)
		}
		links = min(links, n-i)
		on := event()
		open := r.IntN(3) != 0 // the last link unguarded
		for k := 0; k < links; k++ {
			t := transition{from: states[from], on: on, to: states[i+k], by: pick(), checkpoint: cp()}
			if links > 1 || r.IntN(2) == 0 {
				if k < links-1 || !open {
					switch r.IntN(5) {
					case 0:
						t.unless = g.guard()
					case 1:
						t.expr = g.expr()
					default:
						t.guard = g.guard()
					}
				}
			}
			g.ts = append(g.ts, t)
			// A state in the middle of a chain that requires a field.
			if !terminal(i+k) && r.IntN(3) == 0 {
				requires[i+k] = true
			}
		}
		i += links
	}
	// Ways back and onward: retries from later states to earlier ones, some counted.
	counter := r.IntN(2) == 0
	for k := r.IntN(n); k > 0; k-- {
		from := r.IntN(n)
		if terminal(from) {
			continue
		}
		t := transition{from: states[from], to: states[r.IntN(n)], by: pick(), checkpoint: cp()}
		if t.to == states[0] && from == 0 {
			continue
		}
		t.on = event()
		if counter && r.IntN(2) == 0 {
			t.increment = "retries"
		}
		if r.IntN(3) == 0 {
			t.guard = g.guard()
		}
		g.ts = append(g.ts, t)
	}
	// Timeouts whose expiry moves the machine on.
	for i := 0; i < n; i++ {
		if terminal(i) || r.IntN(3) != 0 {
			continue
		}
		on := fmt.Sprintf("expire%d", i)
		timeouts[i] = on
		events = append(events, on)
		to := states[n-1]
		if r.IntN(2) == 0 {
			to = states[r.IntN(n)]
		}
		if to == states[i] {
			to = states[n-1]
		}
		g.ts = append(g.ts, transition{from: states[i], on: on, to: to})
	}
	// Every state but a terminal one leaves somewhere; every role and the checkpoint are
	// used somewhere.
	out := map[string]bool{}
	for _, t := range g.ts {
		out[t.from] = true
	}
	for i, s := range states {
		if !terminal(i) && !out[s] {
			g.ts = append(g.ts, transition{from: s, on: event(), to: states[n-1-r.IntN(terminals)], by: pick()})
		}
	}
	for i, role := range roles {
		if role == "admin" {
			continue
		}
		used := false
		for _, t := range g.ts {
			used = used || slices.Contains(t.by, role)
		}
		if !used {
			k := r.IntN(len(g.ts))
			for j := range g.ts {
				if g.ts[j].by == nil {
					k = j
					break
				}
			}
			g.ts[k].by = []string{roles[i]}
		}
	}
	if checkpoint && !slices.ContainsFunc(g.ts, func(t transition) bool { return t.checkpoint != "" }) {
		g.ts[r.IntN(len(g.ts))].checkpoint = "saved"
	}
	counted := false
	for _, t := range g.ts {
		counted = counted || t.increment != ""
	}

	var b strings.Builder
	b.WriteString("version: 1\nmachine: Rand\npackage: randspec\n")
	if len(roles) > 0 {
		b.WriteString("roles:\n")
		for _, role := range roles {
			if role == "admin" {
				b.WriteString("  admin: { all: true }\n")
			} else {
				fmt.Fprintf(&b, "  %s: {}\n", role)
			}
		}
	}
	if g.guards > 0 {
		b.WriteString("guards:\n")
		for i := 0; i < g.guards; i++ {
			fmt.Fprintf(&b, "  g%d: {}\n", i)
		}
	}
	if len(requires) > 0 {
		b.WriteString("context:\n  reference: { type: string, required: true }\n  amount: { type: int, min: 1 }\n")
	}
	if counted {
		verb := "limit"
		if r.IntN(2) == 0 {
			verb = "max"
		}
		fmt.Fprintf(&b, "counters:\n  retries: { %s: %d, then: %s }\n", verb, 1+r.IntN(3), states[n-1])
	}
	if checkpoint {
		every := ""
		if r.IntN(3) == 0 {
			every = "every_transition: true, "
		}
		fmt.Fprintf(&b, "checkpoints:\n  saved: { %ssave: [state, counters] }\n", every)
	}
	b.WriteString("states:\n")
	for i, s := range states {
		var attrs []string
		if i == 0 {
			attrs = append(attrs, "initial: true")
		}
		if terminal(i) {
			attrs = append(attrs, "terminal: true")
		}
		if requires[i] {
			fields := "[reference]"
			if r.IntN(2) == 0 {
				fields = "[reference, amount]"
			}
			attrs = append(attrs, "requires: "+fields)
		}
		if on, ok := timeouts[i]; ok {
			attrs = append(attrs, fmt.Sprintf("timeout: { after: %dm, on_expiry: %s }", 1+r.IntN(90), on))
		}
		fmt.Fprintf(&b, "  %s: { %s }\n", s, strings.Join(attrs, ", "))
	}
	b.WriteString("events:\n")
	for _, e := range events {
		fmt.Fprintf(&b, "  %s: {}\n", e)
	}
	b.WriteString("transitions:\n")
	for _, t := range g.ts {
		fmt.Fprintf(&b, "  - { from: %s, on: %s, to: %s", t.from, t.on, t.to)
		if t.guard != "" {
			fmt.Fprintf(&b, ", if: %s", t.guard)
		}
		if t.unless != "" {
			fmt.Fprintf(&b, ", unless: %s", t.unless)
		}
		if t.expr != "" {
			fmt.Fprintf(&b, ", if: %s", t.expr)
		}
		if len(t.by) > 0 {
			fmt.Fprintf(&b, ", by: [%s]", strings.Join(t.by, ", "))
		}
		if t.increment != "" {
			fmt.Fprintf(&b, ", increment: %s", t.increment)
		}
		if t.checkpoint != "" {
			fmt.Fprintf(&b, ", checkpoint: %s", t.checkpoint)
		}
		b.WriteString(" }\n")
	}
	return []byte(b.String())
}
