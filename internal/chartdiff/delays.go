package chartdiff

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Delays: delayed transitions (XState's after) and the steps of a sequence that let time
// pass ("+250": 250 milliseconds), which fire them.

// delays gives a few states of c delayed transitions: 1 to 3 delays each (of 100, 200, 500
// or 1000 milliseconds), one or two transitions per delay (the first guarded when two),
// to any state but a history state, or none; and no state a history state may enter has
// any (XState 5 may then keep the timers of a state it leaves and enters again through a
// history state running beside the new ones, where fsmgen restarts them). The states may
// be active together (in two regions of a parallel state, or one within the other): each
// counts its delays from when it was entered. A chart with a "*" transition has none,
// since XState's "*" takes the events of delays too.
func (g *gen) delays(c *Chart) {
	r := g.r
	if c.Wildcard() {
		return
	}
	nodes := c.Nodes()
	var guards []string
	for name := range c.Guards {
		guards = append(guards, name)
	}
	slices.Sort(guards)
	var owners []*Node
	nd := 0
	for _, n := range nodes[1:] {
		if n.Kind == Final || n.Kind.IsHistory() || len(owners) == 3 || r.IntN(4) != 0 {
			continue
		}
		if restorable(n) {
			continue
		}
		owners = append(owners, n)
		ms := []int{100, 200, 500, 1000}
		r.Shuffle(len(ms), func(i, j int) { ms[i], ms[j] = ms[j], ms[i] })
		for _, d := range ms[:1+r.IntN(3)] {
			cnt := 1 + r.IntN(2)
			for i := range cnt {
				t := &Trans{Delay: d, Reenter: r.IntN(2) == 0}
				if i < cnt-1 || r.IntN(3) == 0 {
					t.Guard = guards[r.IntN(len(guards))]
				}
				if tg := g.eventTarget(n, nodes[1:]); r.IntN(5) != 0 && !tg.Kind.IsHistory() {
					t.Target = tg.Path()
				}
				for range r.IntN(3) {
					t.Actions = append(t.Actions, fmt.Sprintf("d%d", nd))
					nd++
				}
				n.On = append(n.On, t)
			}
		}
	}
}

// restorable reports whether a history state may enter n: n or a state around it has a
// history state among its children.
func restorable(n *Node) bool {
	for p := n; p != nil; p = p.Parent {
		if slices.ContainsFunc(p.Children, func(c *Node) bool { return c.Kind.IsHistory() }) {
			return true
		}
	}
	return false
}

// waitSteps are how long a wait step lets pass, in milliseconds.
var waitSteps = []int{50, 100, 150, 250, 500, 1000, 2000}

// waitStep returns a random wait step ("+250").
func waitStep(r *rand.Rand) string { return "+" + strconv.Itoa(waitSteps[r.IntN(len(waitSteps))]) }

// waitOf returns how long step lets pass when it is a wait step.
func waitOf(step string) (time.Duration, bool) {
	ms, err := strconv.Atoi(strings.TrimPrefix(step, "+"))
	if !strings.HasPrefix(step, "+") || err != nil {
		return 0, false
	}
	return time.Duration(ms) * time.Millisecond, true
}

// HasDelays reports whether some transition of c is delayed.
func (c *Chart) HasDelays() bool { return c.count(func(t *Trans) bool { return t.Delay > 0 }) > 0 }

// addTo appends transition t to the list of key in o, a member added at the end when new.
func addTo(o object, key string, t object) object {
	i := slices.IndexFunc(o, func(m member) bool { return m.key == key })
	if i < 0 {
		return append(o, member{key, []object{t}})
	}
	o[i].value = append(o[i].value.([]object), t)
	return o
}

// delayKey is how XState's after writes a delay of ms milliseconds.
func delayKey(ms int) string { return strconv.Itoa(ms) }
