package chartdiff

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/fsmgen/fsmgen/internal/interp"
	"github.com/fsmgen/fsmgen/internal/ir"
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

// clockSim keeps time for fsmgen's interpreter as the runtime does (fsmrt.ExpireNext): a
// state's delays count from when it was entered (starts; a microstep that enters it,
// Transition.Enters, restarts it), the configuration's timeout from when its state was
// entered (since; a microstep that keeps that state active, KeepsClock, keeps it); each
// fires once a stay, the first due first (of those due at once: a delay before the
// timeout, the first started, then the first in document order), at its deadline.
type clockSim struct {
	now, since time.Duration
	fired      map[*ir.Event]bool // the timeout's, this stay of its state
	starts     map[*ir.Node]time.Duration
	firedAt    map[*ir.Event]time.Duration // a state's delay: the start of the stay it fired in
}

func newClockSim() *clockSim {
	return &clockSim{fired: map[*ir.Event]bool{}, starts: map[*ir.Node]time.Duration{}, firedAt: map[*ir.Event]time.Duration{}}
}

// moved accounts for step st taken at now: the states entered start their clocks again;
// the timeout's stay goes on when every microstep keeps the clock; a delay's event marks
// it fired unless its state was entered again.
func (k *clockSim) moved(st *interp.Step) {
	keep := len(st.Micro) > 0
	for _, t := range st.Micro {
		keep = keep && t.KeepsClock
		for _, n := range t.Enters {
			k.starts[n] = k.now
		}
	}
	if !keep {
		k.since, k.fired = k.now, map[*ir.Event]bool{}
	}
	k.mark(st.From, st.Event)
}

// mark records that delay event e of configuration s fired now.
func (k *clockSim) mark(s *ir.State, e *ir.Event) {
	for _, dl := range s.Delays {
		if dl.Event == e && dl.Node != nil && k.starts[dl.Node] != k.now {
			k.firedAt[e] = k.starts[dl.Node]
		}
	}
}

// start returns when timer dl of the configuration started counting, and whether it fired
// this stay.
func (k *clockSim) start(dl *ir.Delay) (time.Duration, bool) {
	if dl.Node == nil {
		return k.since, k.fired[dl.Event]
	}
	s := k.starts[dl.Node]
	at, ok := k.firedAt[dl.Event]
	return s, ok && at == s
}

// wait lets d pass on x, firing the delays that fall due in order, and returns the
// actions they ran.
func (k *clockSim) wait(x *interp.Machine, d time.Duration, in interp.Inputs) []*ir.Action {
	end := k.now + d
	var actions []*ir.Action
	for {
		var next *ir.Delay
		var due, from time.Duration
		for _, dl := range timers(x.State) {
			s, fired := k.start(dl)
			at := s + dl.After
			if fired || at > end {
				continue
			}
			if next == nil || at < due || at == due && dl.Node != nil && (next.Node == nil || s < from) {
				next, due, from = dl, at, s
			}
		}
		if next == nil {
			break
		}
		k.now = due
		state := x.State
		if next.Node == nil {
			k.fired[next.Event] = true
		} else {
			k.firedAt[next.Event] = from
		}
		if st, rej := x.Fire(next.Event, in); rej == nil {
			actions = append(actions, st.Actions...)
			k.moved(st)
		} else {
			k.mark(state, next.Event)
		}
	}
	k.now = end
	return actions
}

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

// timers are the delays of state s: its Delays, and the timeout its one delay makes, which
// the runtime fires after the delays due at the same instant.
func timers(s *ir.State) []*ir.Delay {
	out := s.Delays
	if t := s.Timeout; t != nil && t.OnExpiry != nil {
		out = append(slices.Clip(out), &ir.Delay{After: t.After, Event: t.OnExpiry})
	}
	return out
}
