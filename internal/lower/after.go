package lower

import (
	"fmt"
	"slices"
	"time"

	"github.com/fsmgen/fsmgen/internal/ir"
	"github.com/fsmgen/fsmgen/spec"
)

// afterTimeout is what a state's delayed transitions (after) give it: with one delay and
// no timeout of its own, the timeout of that delay (after, as the first of them writes it)
// whose expiry raises ev; else its delays, each a clock of its own raising its own event.
type afterTimeout struct {
	after  spec.Str
	ev     *ir.Event
	delays []*ir.Delay
}

// timeout is the timeout the state would declare for it.
func (a *afterTimeout) timeout() *spec.Timeout {
	return &spec.Timeout{Pos: a.after.Pos, After: a.after, OnExpiry: spec.Str{Value: a.ev.Name, Pos: a.after.Pos, Set: true}}
}

// maxDelays is how many delays one state may wait (the runtime keeps which fired in a word).
const maxDelays = 64

// afterGroup gathers the delayed transitions of one state while they are read: its name,
// its shortest unambiguous name, its own timeout, and its delays in order of first use.
type afterGroup struct {
	key, short string
	own        *spec.Timeout
	node       *ir.Node // in a statechart
	delays     []*afterDelay
}

// afterDelay is one delay of a state and the transitions that wait it.
type afterDelay struct {
	d     time.Duration
	after spec.Str // as the first transition waiting it writes it
	ts    []*spec.Transition
}

// declareAfter declares what the delayed transitions wait for. Each state they leave gets,
// for one delay and no timeout of its own, a timeout of that delay whose expiry raises an
// event of its own ("<state>.after", by the state's shortest unambiguous path in a
// statechart), which they are taken on. A state with several delays, or a delay beside its
// timeout, gets a delay per duration instead: a clock of its own, counting from when the
// state was entered, whose event is "<state>.after.<duration as first written>" (with one
// delay beside a timeout, "<state>.after"). A delayed transition leaves one state; the
// delayed transitions of one delay are tried in order, guards and all, as transitions on
// one event are. In a statechart the state may be any state but a final or history one;
// its time counts from when it was entered, however its children move.
func (l *lowerer) declareAfter(eventGo *goNames) {
	var groups []*afterGroup
	byKey := map[string]*afterGroup{}
	for _, t := range l.f.Transitions {
		if !t.After.Set || t.After.Bad {
			continue
		}
		switch {
		case t.OnSet:
			l.ds.Errorf(t.OnPos, "a transition with after is taken when its source's time runs out, on an event of its own: remove on")
			continue
		case t.Always.Value:
			l.ds.Errorf(t.Always.Pos, "a transition is delayed (after) or eventless (always), not both")
			continue
		case t.Done.Value:
			l.ds.Errorf(t.Done.Pos, "a transition is delayed (after) or taken when its source is done (done), not both")
			continue
		}
		if len(t.From.States) != 1 || t.From.Any || t.From.Group.Set {
			if t.From.Set && !t.From.Bad { // a missing from is the schema's to report
				l.ds.Errorf(t.From.Pos, "a transition with after counts the time spent in its source, so from names one state")
			}
			continue
		}
		key, short, own, node, ok := l.afterSource(t)
		if !ok {
			continue // unknown, or refused: reported where the sources are resolved, or here
		}
		g := byKey[key]
		if g == nil {
			g = &afterGroup{key: key, short: short, own: own, node: node}
			byKey[key] = g
			groups = append(groups, g)
		}
		d, err := time.ParseDuration(t.After.Value)
		if err != nil || d <= 0 {
			d = -1 - time.Duration(len(g.delays)) // reported with the timeout or the delay it makes
		}
		i := slices.IndexFunc(g.delays, func(x *afterDelay) bool { return x.d == d })
		if i < 0 {
			i = len(g.delays)
			g.delays = append(g.delays, &afterDelay{d: d, after: t.After})
		}
		g.delays[i].ts = append(g.delays[i].ts, t)
	}
	for _, g := range groups {
		a := &afterTimeout{after: g.delays[0].after}
		if g.own == nil && len(g.delays) == 1 && !l.waitsBeside(g, groups) {
			if a.ev = l.afterEvent(eventGo, g, g.delays[0], g.short+".after"); a.ev != nil {
				l.afters[g.key] = a
			}
			continue
		}
		if len(g.delays) > maxDelays {
			l.ds.Errorf(g.delays[maxDelays].after.Pos, "state %q waits %d delays: a state waits at most %d", g.key, len(g.delays), maxDelays)
			continue
		}
		for _, dl := range g.delays {
			if dl.d <= 0 {
				l.ds.Errorf(dl.after.Pos, "delay %q must be a positive duration such as 30s", dl.after.Value)
				continue
			}
			name := g.short + ".after"
			if len(g.delays) > 1 {
				name += "." + dl.after.Value
			}
			if ev := l.afterEvent(eventGo, g, dl, name); ev != nil {
				a.delays = append(a.delays, &ir.Delay{After: dl.d, Text: dl.after.Value, Event: ev, Pos: dl.after.Pos, Node: g.node})
			}
		}
		l.afters[g.key] = a
	}
}

// afterEvent declares the event named name that delay dl of state g raises, on which the
// transitions waiting it are taken (nil when the name is taken).
func (l *lowerer) afterEvent(eventGo *goNames, g *afterGroup, dl *afterDelay, name string) *ir.Event {
	if e := l.ev[name]; e != nil {
		l.used[any(e)] = true // what it would be used for is not known
		l.ds.Errorf(dl.after.Pos, "the delayed transitions of %q are taken on event %q, which is declared already (%d:%d): rename that event", g.key, name, e.Pos.Line, e.Pos.Col)
		return nil
	}
	ev := &ir.Event{Index: len(l.m.Events), Name: name, GoName: eventGo.add(spec.Str{Value: name, Pos: dl.after.Pos, Set: true}), Pos: dl.after.Pos,
		Implicit: true, After: dl.after.Value, Doc: fmt.Sprintf("Raised when %s has been active for %s (after).", g.key, dl.after.Value)}
	l.m.Events = append(l.m.Events, ev)
	l.ev[name] = ev
	l.used[any(ev)] = true
	for _, t := range dl.ts {
		l.afterEv[t] = ev
	}
	return ev
}

// delaysOf returns the delays the delayed transitions of state key give it (nil when they
// make its timeout, or it has none).
func (l *lowerer) delaysOf(key string) []*ir.Delay {
	if a := l.afters[key]; a != nil && a.ev == nil {
		return a.delays
	}
	return nil
}

// afterSource resolves the source of delayed transition t: its name (a statechart state's
// path, and the shortest end of it no other state's path ends with), the timeout it
// declares itself, and whether it can have a timeout of after's.
func (l *lowerer) afterSource(t *spec.Transition) (key, short string, own *spec.Timeout, node *ir.Node, ok bool) {
	name := t.From.States[0]
	if l.cs == nil {
		for _, s := range l.f.States {
			if s.Name.Value == name.Value {
				return s.Name.Value, s.Name.Value, s.Timeout, nil, true
			}
		}
		return "", "", nil, nil, false
	}
	n := l.cs.refs[name.Value]
	if n == nil && l.cs.twice[name.Value] == nil {
		n = l.cs.relative(name.Value)
	}
	if n == nil {
		return "", "", nil, nil, false
	}
	if why := cannotTimeOut(n); why != "" {
		l.ds.Errorf(t.After.Pos, "after on %s state %q, which cannot time out: %s", n.Kind, n.Path, why)
		return "", "", nil, nil, false
	}
	return n.Path, l.cs.shortNames()[n], l.cs.decl[n].Timeout, n, true
}

// waitsBeside reports whether the state of g, in a statechart, can be active together with
// another state that waits (delayed transitions, or a timeout): one is within the other, or
// they lie in two regions of a parallel state. Its one delay is then a delay of its own
// (a clock of the state's, Delay.Node), not a timeout: a configuration keeps one timeout.
func (l *lowerer) waitsBeside(g *afterGroup, groups []*afterGroup) bool {
	if g.node == nil {
		return false
	}
	for _, o := range groups {
		if o != g && activeTogether(g.node, o.node) {
			return true
		}
	}
	for n, s := range l.cs.decl {
		if n != g.node && s.Timeout != nil && activeTogether(g.node, n) {
			return true
		}
	}
	return false
}

// activeTogether reports whether chart states a and b can be active at once: one lies
// within the other, or their least common ancestor is a parallel state.
func activeTogether(a, b *ir.Node) bool {
	if a.IsDescendant(b) || b.IsDescendant(a) {
		return true
	}
	for p := a.Parent; p != nil; p = p.Parent {
		if b.IsDescendant(p) {
			return p.Kind == ir.NodeParallel
		}
	}
	return false
}
