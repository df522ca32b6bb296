package lower

import (
	"fmt"
	"time"

	"github.com/fsmgen/fsmgen/internal/ir"
	"github.com/fsmgen/fsmgen/spec"
)

// afterTimeout is the timeout a state's delayed transitions (after) give it: the duration
// the first of them writes, and the event its expiry raises, which they are taken on.
type afterTimeout struct {
	after spec.Str
	ev    *ir.Event
}

// timeout is the timeout the state would declare for it.
func (a *afterTimeout) timeout() *spec.Timeout {
	return &spec.Timeout{Pos: a.after.Pos, After: a.after, OnExpiry: spec.Str{Value: a.ev.Name, Pos: a.after.Pos, Set: true}}
}

// declareAfter makes the delayed transitions sugar over timeouts: each state they leave
// gets a timeout of their duration, whose expiry raises an event of its own ("<state>.after",
// by the state's shortest unambiguous path in a statechart), which they are taken on. A delayed transition
// leaves one state, which declares no timeout itself; the delayed transitions of one state
// share their duration (they are tried in order, as transitions on one event are). In a
// statechart the state may be any state but a final or history one; its time counts from
// when it was entered, however its children move.
func (l *lowerer) declareAfter(eventGo *goNames) {
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
		key, short, own, ok := l.afterSource(t)
		if !ok {
			continue // unknown, or refused: reported where the sources are resolved, or here
		}
		if own != nil {
			l.ds.Errorf(t.After.Pos, "state %q has a timeout of its own (%d:%d), and a state has one: take its on_expiry event (on: EVENT) instead of after", key, own.Pos.Line, own.Pos.Col)
			continue
		}
		if prev := l.afters[key]; prev != nil {
			d1, err1 := time.ParseDuration(prev.after.Value)
			d2, err2 := time.ParseDuration(t.After.Value)
			if err1 == nil && (err2 != nil || d1 != d2) {
				l.ds.Errorf(t.After.Pos, "state %q times out after %s (%d:%d), and a state has one timeout: its delayed transitions wait as long, and are tried in order", key, prev.after.Value, prev.after.Pos.Line, prev.after.Pos.Col)
				continue
			}
			l.afterEv[t] = prev.ev
			continue
		}
		name := short + ".after"
		if e := l.ev[name]; e != nil {
			l.used[any(e)] = true // what it would be used for is not known
			l.ds.Errorf(t.After.Pos, "the delayed transitions of %q are taken on event %q, which is declared already (%d:%d): rename that event", key, name, e.Pos.Line, e.Pos.Col)
			continue
		}
		ev := &ir.Event{Index: len(l.m.Events), Name: name, GoName: eventGo.add(spec.Str{Value: name, Pos: t.After.Pos, Set: true}), Pos: t.After.Pos,
			Implicit: true, After: t.After.Value, Doc: fmt.Sprintf("Raised when %s has been active for %s (after).", key, t.After.Value)}
		l.m.Events = append(l.m.Events, ev)
		l.ev[name] = ev
		l.used[any(ev)] = true
		l.afters[key] = &afterTimeout{after: t.After, ev: ev}
		l.afterEv[t] = ev
	}
}

// afterSource resolves the source of delayed transition t: its name (a statechart state's
// path, and the shortest end of it no other state's path ends with), the timeout it
// declares itself, and whether it can have a timeout of after's.
func (l *lowerer) afterSource(t *spec.Transition) (key, short string, own *spec.Timeout, ok bool) {
	name := t.From.States[0]
	if l.cs == nil {
		for _, s := range l.f.States {
			if s.Name.Value == name.Value {
				return s.Name.Value, s.Name.Value, s.Timeout, true
			}
		}
		return "", "", nil, false
	}
	n := l.cs.refs[name.Value]
	if n == nil && l.cs.twice[name.Value] == nil {
		n = l.cs.relative(name.Value)
	}
	if n == nil {
		return "", "", nil, false
	}
	if why := cannotTimeOut(n); why != "" {
		l.ds.Errorf(t.After.Pos, "after on %s state %q, which cannot time out: %s", n.Kind, n.Path, why)
		return "", "", nil, false
	}
	return n.Path, l.cs.shortNames()[n], l.cs.decl[n].Timeout, true
}
