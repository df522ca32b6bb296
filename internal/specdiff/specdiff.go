// Package specdiff compares two versions of a spec, as lowered, and classifies every change
// by what it does to the machines already running and stored under the old one:
// compatible (added states, events, transitions, fields; docs), a behaviour change (a
// target, guards and their order, a limit, a timeout) or breaking for stored instances (a
// state, event, counter, role or context field removed, a field's type or a payload changed
// incompatibly). Each change carries its position in the file it is found in, and in the
// other where it is in both.
package specdiff

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/fsmgen/fsmgen/fsmrt"
	"github.com/fsmgen/fsmgen/internal/diag"
	"github.com/fsmgen/fsmgen/internal/ir"
	"github.com/fsmgen/fsmgen/internal/mermaid/graph"
)

// Class is how far a change reaches.
type Class int

const (
	Compatible Class = iota // nothing stored or running changes meaning
	Behaviour               // machines behave differently from now on
	Breaking                // instances stored under the old spec cannot be carried on as they are
)

// String names the class as the output does.
func (c Class) String() string {
	return [...]string{"compatible", "behaviour", "breaking"}[c]
}

// ParseClass reads a class name.
func ParseClass(s string) (Class, error) {
	for c := Compatible; c <= Breaking; c++ {
		if c.String() == s {
			return c, nil
		}
	}
	return 0, fmt.Errorf("unknown class %q (want breaking, behaviour or compatible)", s)
}

// Change is one difference between the specs.
type Change struct {
	Class   Class
	Message string
	// Pos is where the change is: in the new spec, or in the old one for what it removes.
	Pos diag.Pos
	// Was is where the same thing is in the old spec, when it is in both (zero otherwise).
	Was diag.Pos
	// State and Counter name what of the old spec the change concerns, when it concerns
	// the instances stored in a state or counting a counter: a store can count them.
	State, Counter string
	// Stored is how many stored instances it concerns, when a store was asked (Count);
	// Deadlines, for a change of a state, how many of them have deadlines of that state
	// (its timeout's levels and expiry, its delays), which a migration arms again.
	Stored    *int
	Deadlines *int
}

// Verdict is the highest class of the changes (Compatible when there are none).
func Verdict(cs []Change) Class {
	v := Compatible
	for _, c := range cs {
		v = max(v, c.Class)
	}
	return v
}

// Compare lists every change from old to new, ordered by position (the new spec's first).
//
// A change of the fingerprint (what stored instances mean) is a change of its own: breaking
// unless the new spec declares a migration from the old one, which then also says what
// became of the states, events, counters and context fields it renamed or dropped.
func Compare(old, new *ir.Machine) []Change {
	d := &differ{old: old, new: new}
	from, to := ir.Fingerprint(old), ir.Fingerprint(new)
	for _, mg := range new.Migrations {
		if mg.From == from {
			d.mg, d.rn = mg, *mg
		}
	}
	d.machine()
	d.states()
	d.events()
	d.roles()
	d.fields()
	d.counters()
	d.declarations()
	d.transitions()
	switch {
	case from == to:
	case d.mg != nil:
		d.add(Compatible, d.mg.Pos, diag.Pos{}, "instances stored under the old spec (%s) migrate to this one (%s): the migration from %s", from, to, d.mg.Source)
	default:
		d.add(Breaking, top(new), top(old), "the fingerprint changes (%s -> %s): code generated from the new spec refuses instances stored under the old one; the version lock beside the spec carries them once it records the old version (fsmgen generate records each version it generates code from), or keep the old spec as a file and declare a migration from it (migrations: [{from: FILE%s}])", from, to, d.placesNeeded())
	}
	sort.SliceStable(d.out, func(i, j int) bool {
		a, b := d.out[i].Pos, d.out[j].Pos
		if (a.File == new.Source) != (b.File == new.Source) {
			return a.File == new.Source
		}
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		return a.Col < b.Col
	})
	return d.out
}

type differ struct {
	old, new *ir.Machine
	mg       *ir.Migration // the new spec's migration from the old one, if any
	// rn holds the maps of mg, empty (nil maps, which read as empty) without one.
	rn  ir.Migration
	out []Change
}

// renamedTo reports whether the migration from the old spec renames something to name in
// names (one of rn's maps): the name is then no addition.
func renamedTo(names map[string]string, name string) bool {
	for _, to := range names {
		if to == name {
			return true
		}
	}
	return false
}

// placesNeeded is what a migration from the old spec must say at least: where the
// instances of its removed states go (", states: {a: ?, b: ?}"), "" when nothing.
func (d *differ) placesNeeded() string {
	var removed []string
	for _, s := range d.old.States {
		if stateNamed(d.new, s.Name) == nil {
			removed = append(removed, fmt.Sprintf("%q: ?", s.Name))
		}
	}
	if len(removed) == 0 {
		return ""
	}
	return ", states: {" + strings.Join(removed, ", ") + "}"
}

func (d *differ) add(c Class, pos, was diag.Pos, format string, args ...any) {
	d.out = append(d.out, Change{Class: c, Message: fmt.Sprintf(format, args...), Pos: pos, Was: was})
}

// concern marks the changes from the from-th on that are not compatible as concerning
// what set marks them with (a rename, compatible, is marked where it is added).
func (d *differ) concern(from int, set func(*Change)) {
	for i := from; i < len(d.out); i++ {
		if d.out[i].Class != Compatible {
			set(&d.out[i])
		}
	}
}

// last is the change added last.
func (d *differ) last() *Change { return &d.out[len(d.out)-1] }

// top is the position of the spec as a whole (its first line).
func top(m *ir.Machine) diag.Pos { return diag.Pos{File: m.Source, Line: 1, Col: 1} }

func (d *differ) machine() {
	o, n := d.old, d.new
	if o.Name != n.Name || o.Package != n.Package {
		d.add(Breaking, top(n), top(o), "the machine %s.%s is now %s.%s: a store names its instances by package and machine, so those stored under the old name are not found", o.Package, o.Name, n.Package, n.Name)
	}
	if o.RecordHistory != n.RecordHistory {
		d.add(Behaviour, top(n), top(o), "record_history is now %v", n.RecordHistory)
	}
	if o.Idempotent != n.Idempotent {
		d.add(Behaviour, top(n), top(o), "idempotent is now %v", n.Idempotent)
	}
	if o.Doc != n.Doc {
		d.add(Compatible, top(n), top(o), "the machine's doc changed")
	}
}

// kindOf says what a machine's states are: states, or a statechart's configurations (the
// states its instances are stored in).
func kindOf(m *ir.Machine) string {
	if m.Chart != nil {
		return "configuration"
	}
	return "state"
}

func (d *differ) states() {
	o, n := d.old, d.new
	what := kindOf(n)
	for _, s := range o.States {
		from := len(d.out)
		d.stateChanges(s, what)
		d.concern(from, func(c *Change) { c.State = s.Name })
	}
	for _, x := range n.States {
		if stateNamed(o, x.Name) == nil && !renamedTo(d.rn.States, x.Name) {
			d.add(Compatible, x.Pos, diag.Pos{}, "%s %q added", what, x.Name)
		}
	}
	if o.Initial != nil && n.Initial != nil && o.Initial.Name != n.Initial.Name {
		d.add(Behaviour, n.Initial.Pos, o.Initial.Pos, "new machines start in %q (was %q)", n.Initial.Name, o.Initial.Name)
	}
}

// stateChanges compares state s of the old spec with its namesake in the new one.
func (d *differ) stateChanges(s *ir.State, what string) {
	o, n := d.old, d.new
	x := stateNamed(n, s.Name)
	if to, ok := d.rn.States[s.Name]; x == nil && ok {
		if stateNamed(o, to) != nil {
			d.add(Behaviour, s.Pos, diag.Pos{}, "%s %q removed: the migration moves its instances to %q", kindOf(o), s.Name, to)
		} else {
			d.add(Compatible, s.Pos, diag.Pos{}, "%s %q is now %q: the migration renames it", kindOf(o), s.Name, to)
			d.last().State = s.Name
		}
		return
	}
	if x == nil {
		d.add(Breaking, s.Pos, diag.Pos{}, "%s %q removed: instances stored in it cannot be loaded (map it to a new %s)", kindOf(o), s.Name, what)
		return
	}
	if s.Terminal != x.Terminal {
		if x.Terminal {
			d.add(Behaviour, x.Pos, s.Pos, "%s %q is now terminal: instances in it accept no event", what, x.Name)
		} else {
			d.add(Behaviour, x.Pos, s.Pos, "%s %q is no longer terminal", what, x.Name)
		}
	}
	if s.Remembers && !x.Remembers {
		d.add(Breaking, x.Pos, s.Pos, "%s %q no longer remembers: snapshots that hold what it remembered are refused", what, x.Name)
	} else if !s.Remembers && x.Remembers {
		d.add(Compatible, x.Pos, s.Pos, "%s %q now remembers where it was entered from", what, x.Name)
	}
	if a, b := fieldNames(s.Requires), fieldNames(x.Requires); a != b {
		d.add(Behaviour, x.Pos, s.Pos, "%s %q requires [%s] (was [%s])", what, x.Name, b, a)
	}
	if a, b := actionNames(s.Entry), actionNames(x.Entry); a != b {
		d.add(Behaviour, x.Pos, s.Pos, "%s %q runs entry actions [%s] (was [%s])", what, x.Name, b, a)
	}
	if a, b := actionNames(s.Exit), actionNames(x.Exit); a != b {
		d.add(Behaviour, x.Pos, s.Pos, "%s %q runs exit actions [%s] (was [%s])", what, x.Name, b, a)
	}
	if a, b := timeoutText(s.Timeout), timeoutText(x.Timeout); a != b {
		d.add(Behaviour, x.Pos, s.Pos, "the timeout of %s %q is %s (was %s)", what, x.Name, b, a)
	}
	if s.Doc != x.Doc {
		d.add(Compatible, x.Pos, s.Pos, "the doc of %s %q changed", what, x.Name)
	}
}

func stateNamed(m *ir.Machine, name string) *ir.State {
	for _, s := range m.States {
		if s.Name == name {
			return s
		}
	}
	return nil
}

func (d *differ) events() {
	o, n := d.old, d.new
	for _, e := range o.Events {
		if e.Internal {
			continue
		}
		x := eventNamed(n, e.Name)
		if to, ok := d.rn.Events[e.Name]; x == nil && ok {
			if to == "" {
				d.add(Behaviour, e.Pos, diag.Pos{}, "event %q removed: the migration replays the log entries that record it as recorded", e.Name)
			} else {
				d.add(Compatible, e.Pos, diag.Pos{}, "event %q is now %q: the migration renames it", e.Name, to)
			}
			continue
		}
		if x == nil {
			d.add(Breaking, e.Pos, diag.Pos{}, "event %q removed: logs that record it cannot be replayed", e.Name)
			continue
		}
		d.payload(e, x)
		if e.Doc != x.Doc && !e.Implicit && !x.Implicit {
			d.add(Compatible, x.Pos, e.Pos, "the doc of event %q changed", x.Name)
		}
	}
	for _, x := range n.Events {
		if !x.Internal && eventNamed(o, x.Name) == nil && !renamedTo(d.rn.Events, x.Name) {
			d.add(Compatible, x.Pos, diag.Pos{}, "event %q added", x.Name)
		}
	}
}

func eventNamed(m *ir.Machine, name string) *ir.Event {
	for _, e := range m.Events {
		if e.Name == name && !e.Internal {
			return e
		}
	}
	return nil
}

// payload compares the payloads of an event in both specs: logs keep the payloads they
// were fired with, which replaying checks again.
func (d *differ) payload(e, x *ir.Event) {
	for _, f := range e.Payload {
		g := fieldIn(x.Payload, f.Name)
		switch {
		case g == nil:
			d.add(Breaking, x.Pos, f.Pos, "payload field %q of event %q removed: logged payloads that hold it are refused", f.Name, x.Name)
		case f.Type.String() != g.Type.String():
			d.add(Breaking, g.Pos, f.Pos, "payload field %q of event %q is a %s (was %s): logged payloads do not decode", g.Name, x.Name, g.Type, f.Type)
		case !f.Required && g.Required:
			d.add(Breaking, g.Pos, f.Pos, "payload field %q of event %q is now required: logged payloads without it are refused", g.Name, x.Name)
		case constraints(f) != constraints(g):
			d.add(Behaviour, g.Pos, f.Pos, "payload field %q of event %q: %s (was %s)", g.Name, x.Name, constraints(g), constraints(f))
		}
	}
	for _, g := range x.Payload {
		if fieldIn(e.Payload, g.Name) != nil {
			continue
		}
		if g.Required {
			d.add(Breaking, g.Pos, diag.Pos{}, "required payload field %q added to event %q: logged payloads without it are refused", g.Name, x.Name)
		} else {
			d.add(Compatible, g.Pos, diag.Pos{}, "payload field %q added to event %q", g.Name, x.Name)
		}
	}
}

func fieldIn(fs []*ir.Field, name string) *ir.Field {
	for _, f := range fs {
		if f.Name == name {
			return f
		}
	}
	return nil
}

func (d *differ) roles() {
	o, n := d.old, d.new
	for _, r := range o.Roles {
		if !slices.ContainsFunc(n.Roles, func(x *ir.Role) bool { return x.Name == r.Name }) {
			d.add(Breaking, top(o), diag.Pos{}, "role %q removed: logs that record it cannot be replayed", r.Name)
		}
	}
	for _, r := range n.Roles {
		if !slices.ContainsFunc(o.Roles, func(x *ir.Role) bool { return x.Name == r.Name }) {
			d.add(Compatible, top(n), diag.Pos{}, "role %q added", r.Name)
		}
	}
}

func (d *differ) fields() {
	o, n := d.old, d.new
	for _, f := range o.Fields {
		g := fieldIn(n.Fields, f.Name)
		to, migrated := d.rn.Fields[f.Name]
		switch {
		case g == nil && migrated && to == "":
			d.add(Behaviour, f.Pos, diag.Pos{}, "context field %q removed: the migration drops its stored values", f.Name)
		case g == nil && migrated:
			d.add(Compatible, f.Pos, diag.Pos{}, "context field %q is now %q: the migration renames it", f.Name, to)
		case g == nil:
			d.add(Breaking, f.Pos, diag.Pos{}, "context field %q removed: stored contexts that hold it are refused (map it to a new field)", f.Name)
		case f.Type.String() != g.Type.String() && d.mg != nil:
			// The checker proved the stored values decode.
			d.add(Behaviour, g.Pos, f.Pos, "context field %q is a %s (was %s)", g.Name, g.Type, f.Type)
		case f.Type.String() != g.Type.String():
			d.add(Breaking, g.Pos, f.Pos, "context field %q is a %s (was %s): stored contexts do not decode", g.Name, g.Type, f.Type)
		default:
			if constraints(f) != constraints(g) {
				d.add(Behaviour, g.Pos, f.Pos, "context field %q: %s (was %s)", g.Name, constraints(g), constraints(f))
			}
			if f.Doc != g.Doc {
				d.add(Compatible, g.Pos, f.Pos, "the doc of context field %q changed", g.Name)
			}
		}
	}
	for _, g := range n.Fields {
		if fieldIn(o.Fields, g.Name) == nil && !renamedTo(d.rn.Fields, g.Name) {
			d.add(Compatible, g.Pos, diag.Pos{}, "context field %q added: stored contexts load with its zero value or default", g.Name)
		}
	}
}

func (d *differ) counters() {
	o, n := d.old, d.new
	for _, c := range o.Counters {
		from := len(d.out)
		d.counterChanges(c)
		d.concern(from, func(ch *Change) { ch.Counter = c.Name })
	}
	for _, x := range n.Counters {
		if counterNamed(o, x.Name) == nil && !renamedTo(d.rn.Counters, x.Name) {
			d.add(Compatible, x.Pos, diag.Pos{}, "counter %q added: stored instances start it at 0", x.Name)
		}
	}
}

// counterChanges compares counter c of the old spec with its namesake in the new one.
func (d *differ) counterChanges(c *ir.Counter) {
	x := counterNamed(d.new, c.Name)
	to, migrated := d.rn.Counters[c.Name]
	switch {
	case x == nil && migrated && to == "":
		d.add(Behaviour, c.Pos, diag.Pos{}, "counter %q removed: the migration drops its stored counts", c.Name)
	case x == nil && migrated:
		d.add(Compatible, c.Pos, diag.Pos{}, "counter %q is now %q: the migration renames it", c.Name, to)
		d.last().Counter = c.Name
	case x == nil:
		d.add(Breaking, c.Pos, diag.Pos{}, "counter %q removed: stored counts of it are refused (map it to a new counter)", c.Name)
	case c.PerState != x.PerState:
		d.add(Breaking, x.Pos, c.Pos, "counter %q is now counted %s: stored counts do not fit", x.Name, map[bool]string{true: "per state", false: "once for the machine"}[x.PerState])
	default:
		if a, b := limitText(c), limitText(x); a != b {
			d.add(Behaviour, x.Pos, c.Pos, "counter %q: %s (was %s)", x.Name, b, a)
		}
		if c.ResetOnSuccess != x.ResetOnSuccess {
			d.add(Behaviour, x.Pos, c.Pos, "counter %q resets on success: %v (was %v)", x.Name, x.ResetOnSuccess, c.ResetOnSuccess)
		}
	}

}

func counterNamed(m *ir.Machine, name string) *ir.Counter {
	for _, c := range m.Counters {
		if c.Name == name {
			return c
		}
	}
	return nil
}

// declarations compares guards, actions and checkpoints: what a guard tests and an action
// does when the transitions that name them run.
func (d *differ) declarations() {
	o, n := d.old, d.new
	for _, g := range declaredGuards(o) {
		x := guardNamed(n, g.Name)
		if x == nil {
			d.add(Compatible, g.Pos, diag.Pos{}, "guard %q removed", g.Name)
			continue
		}
		if guardText(g) != guardText(x) {
			d.add(Behaviour, x.Pos, g.Pos, "guard %q tests %s (was %s)", x.Name, guardText(x), guardText(g))
		}
	}
	for _, x := range declaredGuards(n) {
		if guardNamed(o, x.Name) == nil {
			d.add(Compatible, x.Pos, diag.Pos{}, "guard %q added", x.Name)
		}
	}
	for _, a := range o.Actions {
		i := slices.IndexFunc(n.Actions, func(x *ir.Action) bool { return x.Name == a.Name })
		if i < 0 {
			continue // the transitions and states that ran it say so
		}
		x := n.Actions[i]
		if a.Effect != x.Effect || a.MayFail != x.MayFail {
			d.add(Behaviour, top(n), top(o), "action %q: effect %v, may_fail %v (was %v, %v)", x.Name, x.Effect, x.MayFail, a.Effect, a.MayFail)
		}
	}
	for _, c := range o.Checkpoints {
		i := slices.IndexFunc(n.Checkpoints, func(x *ir.Checkpoint) bool { return x.Name == c.Name })
		switch {
		case i < 0:
			d.add(Behaviour, top(o), diag.Pos{}, "checkpoint %q removed", c.Name)
		case strings.Join(c.Save, ",") != strings.Join(n.Checkpoints[i].Save, ",") || c.EveryTransition != n.Checkpoints[i].EveryTransition:
			d.add(Behaviour, top(n), top(o), "checkpoint %q saves [%s]%s (was [%s]%s)", c.Name, strings.Join(n.Checkpoints[i].Save, ", "), every(n.Checkpoints[i]), strings.Join(c.Save, ", "), every(c))
		}
	}
}

func every(c *ir.Checkpoint) string {
	if c.EveryTransition {
		return " on every transition"
	}
	return ""
}

func guardNamed(m *ir.Machine, name string) *ir.Guard {
	for _, g := range declaredGuards(m) {
		if g.Name == name {
			return g
		}
	}
	return nil
}

// transitions pairs the transitions of both specs by their sources and triggers, in the
// order written (the order in which they are tried), and compares each pair. A
// statechart's are compared as written, not as compiled.
func (d *differ) transitions() {
	o, n := d.old, d.new
	if (o.Chart == nil) != (n.Chart == nil) {
		d.add(Behaviour, top(n), top(o), "the machine is now %s", map[bool]string{true: "a statechart (its states nest)", false: "flat"}[n.Chart != nil])
		return
	}
	oldBy, keys := byKey(views(o))
	newBy, newKeys := byKey(views(n))
	for _, k := range newKeys {
		if oldBy[k] == nil {
			keys = append(keys, k)
		}
	}
	for _, k := range keys {
		ot, nt := oldBy[k], newBy[k]
		for i := range max(len(ot), len(nt)) {
			switch {
			case i >= len(nt):
				d.add(Behaviour, ot[i].pos, diag.Pos{}, "transition %s removed: the event is no longer taken there%s", k, guarded(ot[i]))
			case i >= len(ot):
				d.add(Compatible, nt[i].pos, diag.Pos{}, "transition %s added%s", k, guarded(nt[i]))
			default:
				a, b := ot[i], nt[i]
				for j, what := range aspects {
					if a.aspects[j] != b.aspects[j] {
						d.add(Behaviour, b.pos, a.pos, "transition %s %s %s (was %s)", k, what, orNone(b.aspects[j]), orNone(a.aspects[j]))
					}
				}
				if a.doc != b.doc {
					d.add(Compatible, b.pos, a.pos, "the doc of transition %s changed", k)
				}
			}
		}
	}
}

// aspects names what a transition's view compares, in the order of view.aspects.
var aspects = [...]string{"goes to", "is guarded by", "may be fired by", "runs", "counts", "checkpoints"}

// view is a transition as the diff compares it: its key ("from A, B on e"), where it is,
// its doc, and the text of each of its aspects.
type view struct {
	key     string
	pos     diag.Pos
	doc     string
	aspects [len(aspects)]string
}

// views lists the transitions of m as written: a flat machine's, or a statechart's
// before they are compiled.
func views(m *ir.Machine) []view {
	var out []view
	if m.Chart == nil {
		for _, t := range m.Transitions {
			var from, on []string
			for _, s := range t.From {
				from = append(from, s.Name)
			}
			for _, e := range t.Events {
				on = append(on, e.Label())
			}
			out = append(out, view{key: "from " + strings.Join(from, ", ") + " on " + strings.Join(on, ", "), pos: t.Pos, doc: t.Doc,
				aspects: [...]string{targetText(t), condText(t.Conds), graph.Roles(t.Roles), actionNames(t.Actions), countText(t.Increment, t.Reset), checkpointName(t.Checkpoint)}})
		}
		return out
	}
	for _, t := range m.Chart.Transitions {
		trig := "on " + t.EventLabel()
		switch {
		case t.Always:
			trig = "always"
		case t.Done:
			trig = "when done"
		}
		target := "stays"
		switch {
		case t.Recall:
			target = "{history: " + t.Target.Path + "}"
		case t.Target != nil:
			var paths []string
			for _, n := range t.AllTargets() {
				paths = append(paths, n.Path)
			}
			target = strings.Join(paths, " and ")
		}
		out = append(out, view{key: "from " + t.Source.Path + " " + trig, pos: t.Pos, doc: t.Doc,
			aspects: [...]string{target, condText(t.Conds), graph.Roles(t.Roles), actionNames(t.Actions), countText(t.Increment, t.Reset), checkpointName(t.Checkpoint)}})
	}
	return out
}

// byKey groups views by key in the order written, and lists the keys in order of first
// use.
func byKey(vs []view) (map[string][]view, []string) {
	by := map[string][]view{}
	var keys []string
	for _, v := range vs {
		if by[v.key] == nil {
			keys = append(keys, v.key)
		}
		by[v.key] = append(by[v.key], v)
	}
	return by, keys
}

func guarded(v view) string {
	if v.aspects[1] == "" {
		return ""
	}
	return " (if " + v.aspects[1] + ")"
}

func orNone(s string) string {
	if s == "" {
		return "nothing"
	}
	return s
}

func fieldNames(fs []*ir.Field) string {
	var out []string
	for _, f := range fs {
		out = append(out, f.Name)
	}
	return strings.Join(out, ", ")
}

func actionNames(as []*ir.Action) string {
	var out []string
	for _, a := range as {
		out = append(out, a.Name)
	}
	return strings.Join(out, ", ")
}

func condText(cs []ir.Cond) string {
	var out []string
	for _, c := range cs {
		if c.Negate {
			out = append(out, "not "+c.Guard.Name)
		} else {
			out = append(out, c.Guard.Name)
		}
	}
	return strings.Join(out, " and ")
}

func countText(inc, reset []*ir.Counter) string {
	var out []string
	for _, c := range inc {
		out = append(out, "+"+c.Name)
	}
	for _, c := range reset {
		out = append(out, "reset "+c.Name)
	}
	return strings.Join(out, ", ")
}

func checkpointName(c *ir.Checkpoint) string {
	if c == nil {
		return ""
	}
	return c.Name
}

func targetText(t *ir.Transition) string {
	switch t.Target.Kind {
	case ir.Internal:
		return "itself (internal)"
	case ir.History:
		return "where " + t.Target.State.Name + " was entered from"
	case ir.Choice:
		var out []string
		for _, c := range t.Choices {
			x := "?"
			if c.Target.State != nil {
				x = c.Target.State.Name
			}
			if len(c.Conds) > 0 {
				x += " if " + condText(c.Conds)
			}
			out = append(out, x)
		}
		return "the first of [" + strings.Join(out, "; ") + "]"
	}
	return t.Target.State.Name
}

func timeoutText(t *ir.Timeout) string {
	if t == nil {
		return "none"
	}
	s := t.After.String()
	if t.OnExpiry != nil {
		s += ", firing " + t.OnExpiry.Name
	}
	var lv []string
	for _, l := range t.Levels {
		lv = append(lv, fmt.Sprintf("%s %d%%", l.Name, l.Percent))
	}
	s += ", levels " + strings.Join(lv, ", ")
	if t.Configurable {
		s += ", configurable"
	}
	return s
}

func limitText(c *ir.Counter) string {
	switch {
	case c.Limit == 0:
		return "no limit"
	case c.Then != nil:
		return fmt.Sprintf("limit %d, then %s", c.Bound(), c.Then.Name)
	}
	return fmt.Sprintf("limit %d", c.Bound())
}

// constraints describes what a field accepts, for comparison: as the documents write it,
// and its default.
func constraints(f *ir.Field) string {
	c := graph.Constraints(f, func(v string) string { return v })
	if f.Default.Set {
		c = strings.TrimPrefix(c+", default "+graph.Literal(f, f.Default), ", ")
	}
	if c == "" {
		return "no constraint"
	}
	return c
}

func guardText(g *ir.Guard) string {
	switch g.Kind {
	case ir.Hook:
		return "a hook"
	case ir.CounterGuard:
		return fmt.Sprintf("counter %s %s", g.Counter.Name, opText(g))
	case ir.Logic:
		return "expression " + g.Expr.String()
	}
	return fmt.Sprintf("field %s %s", g.Field.Name, opText(g))
}

func opText(g *ir.Guard) string {
	switch g.Op {
	case ir.AtLeast:
		return fmt.Sprintf("at least %s", threshold(g.Threshold))
	case ir.Below:
		return fmt.Sprintf("below %s", threshold(g.Threshold))
	case ir.Contains:
		return "contains " + g.Equals.Str
	}
	return "equals " + g.Equals.Str
}

func threshold(t ir.Threshold) string {
	switch {
	case t.Len != nil:
		return "the length of " + t.Len.Name
	case t.By != nil:
		return fmt.Sprintf("%v by %s", t.Values, t.By.Name)
	}
	return fmt.Sprint(t.Num)
}

// Count asks a store, through find (a Store's Find), how many instances of the old spec's
// machine each change concerns: those stored in its state, those whose counter is not
// zero. It sets the changes' Stored.
func Count(ctx context.Context, old *ir.Machine, cs []Change, find func(context.Context, fsmrt.Query) ([]fsmrt.Instance, error)) error {
	machine := old.Package + "." + old.Name
	type subject struct{ state, counter string }
	counts := map[subject]int{}
	for i, c := range cs {
		if c.State == "" && c.Counter == "" {
			continue
		}
		key := subject{c.State, c.Counter}
		n, ok := counts[key]
		if !ok {
			q := fsmrt.Query{Machine: machine, Counter: c.Counter}
			if c.State != "" {
				q = fsmrt.Query{Machine: machine, States: []string{c.State}}
			} else {
				q.AtLeast = 1
			}
			var err error
			if n, err = countAll(ctx, q, find); err != nil {
				return err
			}
			counts[key] = n
		}
		cs[i].Stored = &n
		if c.State != "" {
			if st := stateNamed(old, c.State); st != nil && n > 0 && len(deadlineNames(st)) > 0 {
				dl, err := countDeadlines(ctx, machine, st, find)
				if err != nil {
					return err
				}
				cs[i].Deadlines = &dl
			}
		}
	}
	return nil
}

// deadlineNames are the names of the deadlines state s arms (fsmrt.Query.Deadline).
func deadlineNames(s *ir.State) []string {
	var out []string
	if t := s.Timeout; t != nil {
		for _, l := range t.Levels {
			out = append(out, "level:"+l.Name)
		}
		if t.OnExpiry != nil {
			out = append(out, "expiry")
		}
	}
	for _, d := range s.Delays {
		out = append(out, fsmrt.DelayDeadline(d.Event.Name))
	}
	return out
}

// countDeadlines counts the instances in state s that have one of its deadlines.
func countDeadlines(ctx context.Context, machine string, s *ir.State, find func(context.Context, fsmrt.Query) ([]fsmrt.Instance, error)) (int, error) {
	ids := map[string]bool{}
	for _, name := range deadlineNames(s) {
		q := fsmrt.Query{Machine: machine, States: []string{s.Name}, Deadline: name, Due: time.Date(9999, 12, 31, 0, 0, 0, 0, time.UTC), Limit: 1000}
		for {
			got, err := find(ctx, q)
			if err != nil {
				return 0, err
			}
			for _, in := range got {
				ids[in.ID] = true
			}
			if len(got) < q.Limit {
				break
			}
			q.After = got[len(got)-1].ID
		}
	}
	return len(ids), nil
}

// countAll counts the instances q selects, a page at a time.
func countAll(ctx context.Context, q fsmrt.Query, find func(context.Context, fsmrt.Query) ([]fsmrt.Instance, error)) (int, error) {
	const page = 1000
	q.Limit = page
	n := 0
	for {
		got, err := find(ctx, q)
		if err != nil {
			return 0, err
		}
		n += len(got)
		if len(got) < page {
			return n, nil
		}
		q.After = got[len(got)-1].ID
	}
}
