// Package lower resolves a spec's syntax tree into the IR and runs every semantic check:
// references, Go names, initial and terminal states, reachability, determinism, counters,
// guards, timeouts and checkpoints. It reports all findings, not only the first.
package lower

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/fsmgen/fsmgen/internal/diag"
	"github.com/fsmgen/fsmgen/internal/ir"
	"github.com/fsmgen/fsmgen/internal/names"
	"github.com/fsmgen/fsmgen/spec"
)

// Lower resolves f. It returns the machine, or nil when there are errors, and every
// finding (warnings do not stop lowering).
func Lower(f *spec.File) (*ir.Machine, diag.List) {
	l := &lowerer{
		f:  f,
		m:  &ir.Machine{Source: f.Path, Name: f.Machine.Value, Package: f.Package.Value, Doc: f.Doc.Value, RecordHistory: f.RecordHistory.Value, Idempotent: f.Idempotent.Value},
		st: map[string]*ir.State{}, ev: map[string]*ir.Event{}, gr: map[string]*ir.Group{},
		ro: map[string]*ir.Role{}, po: map[string]*ir.Policy{}, fi: map[string]*ir.Field{},
		co: map[string]*ir.Counter{}, gu: map[string]*ir.Guard{}, ac: map[string]*ir.Action{},
		cp:   map[string]*ir.Checkpoint{},
		used: map[any]bool{},
	}
	l.run()
	ds := l.ds.Sorted()
	if ds.HasErrors() {
		return nil, ds
	}
	return l.m, ds
}

type lowerer struct {
	f  *spec.File
	m  *ir.Machine
	ds diag.List

	st map[string]*ir.State
	ev map[string]*ir.Event
	gr map[string]*ir.Group
	ro map[string]*ir.Role
	po map[string]*ir.Policy
	fi map[string]*ir.Field
	co map[string]*ir.Counter
	gu map[string]*ir.Guard
	ac map[string]*ir.Action
	cp map[string]*ir.Checkpoint

	used      map[any]bool // declarations referenced somewhere
	statePos  map[*ir.State]spec.Pos
	expiryPos map[*ir.State]spec.Pos // where each state's timeout names its on_expiry event
}

func (l *lowerer) run() {
	f := l.f
	l.m.GoName = names.GoName(f.Machine.Value)
	switch {
	case l.m.GoName == "":
		l.ds.Errorf(f.Machine.Pos, "machine name %q has no letter or digit to make a Go name from", f.Machine.Value)
	case !names.StartsWithLetter(l.m.GoName):
		l.ds.Errorf(f.Machine.Pos, "machine name %q must start with a letter to be a Go type name", f.Machine.Value)
	case !names.Exported(l.m.GoName):
		l.ds.Errorf(f.Machine.Pos, "machine name %q maps to Go name %s, which must start with an upper-case letter to be exported", f.Machine.Value, l.m.GoName)
	}
	l.m.Levels = l.levels(f.TimeoutLevels)
	l.declare()
	l.resolveStates()
	l.resolveGuards()
	l.resolveCounters()
	l.resolveCheckpoints()
	l.resolveTransitions()
	if l.ds.HasErrors() {
		return
	}
	l.buildTable()
	l.computeHistory()
	l.checkGraph()
	l.checkUnused()
}

// goNames checks that names sharing one Go namespace map to distinct Go identifiers and,
// when bare (used without a prefix, as methods and struct fields), that the identifiers
// are exported.
type goNames struct {
	kind  string
	bare  bool
	seen  map[string]goName
	owner *lowerer
}

type goName struct {
	kind string
	name spec.Str
}

func (l *lowerer) newGoNames(kind string, bare bool) *goNames {
	return &goNames{kind: kind, bare: bare, seen: map[string]goName{}, owner: l}
}

func (g *goNames) add(n spec.Str) string { return g.addAs(g.kind, n) }

// addAs adds a name of the given kind, for namespaces that hold more than one kind (guards
// and actions are both methods of the hooks interface).
func (g *goNames) addAs(kind string, n spec.Str) string {
	id := names.GoName(n.Value)
	switch {
	case id == "":
		g.owner.ds.Errorf(n.Pos, "%s name %q has no letter or digit to make a Go name from", kind, n.Value)
		return ""
	case g.bare && !names.StartsWithLetter(id):
		g.owner.ds.Errorf(n.Pos, "%s name %q maps to Go name %s, which must start with a letter", kind, n.Value, id)
		return id
	case g.bare && !names.Exported(id):
		g.owner.ds.Errorf(n.Pos, "%s name %q maps to Go name %s, which must start with an upper-case letter to be exported", kind, n.Value, id)
		return id
	}
	if prev, ok := g.seen[id]; ok {
		other := fmt.Sprintf("%q", prev.name.Value)
		if prev.kind != kind {
			other = prev.kind + " " + other
		}
		g.owner.ds.Errorf(n.Pos, "%s %q maps to Go name %s, as does %s (%d:%d)", kind, n.Value, id, other, prev.name.Pos.Line, prev.name.Pos.Col)
		return id
	}
	g.seen[id] = goName{kind, n}
	return id
}

// declare creates every declared thing, checking duplicates and Go names.
func (l *lowerer) declare() {
	f := l.f
	dup := func(kind string, seen map[string]spec.Pos, n spec.Str) bool {
		if p, ok := seen[n.Value]; ok {
			l.ds.Errorf(n.Pos, "duplicate %s %q (first declared at %d:%d)", kind, n.Value, p.Line, p.Col)
			return true
		}
		seen[n.Value] = n.Pos
		return false
	}

	stateGo := l.newGoNames("state", false)
	seen := map[string]spec.Pos{}
	l.statePos = map[*ir.State]spec.Pos{}
	for _, s := range f.States {
		if dup("state", seen, s.Name) {
			continue
		}
		st := &ir.State{Index: len(l.m.States), Name: s.Name.Value, GoName: stateGo.add(s.Name), Doc: s.Doc.Value, Pos: s.Name.Pos,
			Initial: s.Initial.Value, Terminal: s.Terminal.Value, Remembers: s.Remembers.Value}
		l.m.States = append(l.m.States, st)
		l.st[st.Name] = st
		l.statePos[st] = s.Name.Pos
	}

	eventGo := l.newGoNames("event", false)
	seen = map[string]spec.Pos{}
	for _, e := range f.Events {
		if dup("event", seen, e.Name) {
			continue
		}
		ev := &ir.Event{Index: len(l.m.Events), Name: e.Name.Value, GoName: eventGo.add(e.Name), Doc: e.Doc.Value, Pos: e.Name.Pos}
		ev.Payload = l.fields("payload field", e.Payload)
		l.m.Events = append(l.m.Events, ev)
		l.ev[ev.Name] = ev
	}
	// Events implied by transitions named by their target, in order of first use.
	for _, t := range f.Transitions {
		if t.OnSet || !t.To.State.Set {
			continue
		}
		name := t.To.State
		if _, ok := l.ev[name.Value]; ok || l.st[name.Value] == nil {
			continue // an unknown target is reported once, as an unknown state
		}
		ev := &ir.Event{Index: len(l.m.Events), Name: name.Value, GoName: eventGo.add(name), Pos: name.Pos, Implicit: true,
			Doc: "Move to " + name.Value + "."}
		l.m.Events = append(l.m.Events, ev)
		l.ev[ev.Name] = ev
	}

	roleGo := l.newGoNames("role", false)
	seen = map[string]spec.Pos{}
	for _, r := range f.Roles {
		if dup("role", seen, r.Name) {
			continue
		}
		ro := &ir.Role{Index: len(l.m.Roles), Name: r.Name.Value, GoName: roleGo.add(r.Name), Doc: r.Doc.Value, All: r.All.Value}
		l.m.Roles = append(l.m.Roles, ro)
		l.ro[ro.Name] = ro
	}

	policyGo := l.newGoNames("policy", true)
	seen = map[string]spec.Pos{}
	for _, p := range f.Policies {
		if dup("policy", seen, p.Name) {
			continue
		}
		po := &ir.Policy{Index: len(l.m.Policies), Name: p.Name.Value, GoName: policyGo.add(p.Name), Doc: p.Doc.Value, Default: p.Default.Value}
		l.m.Policies = append(l.m.Policies, po)
		l.po[po.Name] = po
	}

	l.m.Fields = l.fields("context field", f.Context)
	for _, fd := range l.m.Fields {
		l.fi[fd.Name] = fd
	}

	counterGo := l.newGoNames("counter", true)
	seen = map[string]spec.Pos{}
	for _, c := range f.Counters {
		if dup("counter", seen, c.Name) {
			continue
		}
		co := &ir.Counter{Index: len(l.m.Counters), Name: c.Name.Value, GoName: counterGo.add(c.Name), Doc: c.Doc.Value, Pos: c.Name.Pos,
			PerState: c.PerState.Value, ResetOnSuccess: c.ResetOnSuccess.Value, Limit: int(c.Limit.Value)}
		l.m.Counters = append(l.m.Counters, co)
		l.co[co.Name] = co
	}

	// Guards and actions both become methods of the generated hooks interface.
	hookGo := l.newGoNames("guard", true)
	seen = map[string]spec.Pos{}
	for _, g := range f.Guards {
		if dup("guard", seen, g.Name) {
			continue
		}
		gu := &ir.Guard{Index: len(l.m.Guards), Name: g.Name.Value, GoName: hookGo.addAs("guard", g.Name), Doc: g.Doc.Value, Pos: g.Name.Pos}
		l.m.Guards = append(l.m.Guards, gu)
		l.gu[gu.Name] = gu
	}
	seen = map[string]spec.Pos{}
	for _, a := range f.Actions {
		if dup("action", seen, a.Name) {
			continue
		}
		ac := &ir.Action{Index: len(l.m.Actions), Name: a.Name.Value, GoName: hookGo.addAs("action", a.Name), Doc: a.Doc.Value}
		l.m.Actions = append(l.m.Actions, ac)
		l.ac[ac.Name] = ac
	}

	cpGo := l.newGoNames("checkpoint", true)
	seen = map[string]spec.Pos{}
	for _, c := range f.Checkpoints {
		if dup("checkpoint", seen, c.Name) {
			continue
		}
		cp := &ir.Checkpoint{Index: len(l.m.Checkpoints), Name: c.Name.Value, GoName: cpGo.add(c.Name), Doc: c.Doc.Value, EveryTransition: c.EveryTransition.Value}
		for _, s := range c.Save {
			cp.Save = append(cp.Save, s.Value)
		}
		l.m.Checkpoints = append(l.m.Checkpoints, cp)
		l.cp[cp.Name] = cp
	}

	// Groups, in order of first mention.
	groupGo := l.newGoNames("group", false)
	for _, s := range f.States {
		st := l.st[s.Name.Value]
		if st == nil || l.statePos[st] != s.Name.Pos {
			continue
		}
		for _, g := range s.Groups {
			gr := l.gr[g.Value]
			if gr == nil {
				gr = &ir.Group{Index: len(l.m.Groups), Name: g.Value, GoName: groupGo.add(g)}
				l.m.Groups = append(l.m.Groups, gr)
				l.gr[g.Value] = gr
			}
			if !st.InGroup(gr) {
				st.Groups = append(st.Groups, gr)
				gr.States = append(gr.States, st)
			}
		}
	}
}

// builtinSaves lists what a checkpoint may save besides context fields and counters.
func builtinSaves() []string {
	return []string{"state", "updated_at", "context", "counters", "history"}
}

func (l *lowerer) fields(kind string, in []*spec.Field) []*ir.Field {
	goNames := l.newGoNames(kind, true)
	seen := map[string]spec.Pos{}
	var out []*ir.Field
	for _, f := range in {
		if p, ok := seen[f.Name.Value]; ok {
			l.ds.Errorf(f.Name.Pos, "duplicate %s %q (first declared at %d:%d)", kind, f.Name.Value, p.Line, p.Col)
			continue
		}
		seen[f.Name.Value] = f.Name.Pos
		fd := &ir.Field{Index: len(out), Name: f.Name.Value, GoName: goNames.add(f.Name), Doc: f.Doc.Value, Pos: f.Name.Pos,
			Required: f.Required.Value, NonEmpty: f.NonEmpty.Value, MinItems: -1, MaxItems: -1, Message: f.Message.Value}
		fd.Type = parseType(f.Type.Value)
		l.checkField(f, fd)
		out = append(out, fd)
	}
	return out
}

func parseType(s string) ir.Type {
	var t ir.Type
	switch {
	case strings.HasPrefix(s, "[]"):
		t.List, s = true, s[2:]
	case strings.HasPrefix(s, "map[string]"):
		t.Map, s = true, s[len("map[string]"):]
	}
	for k := ir.String; k <= ir.Enum; k++ {
		if k.String() == s {
			t.Kind = k
		}
	}
	return t
}

func (l *lowerer) checkField(f *spec.Field, fd *ir.Field) {
	t := fd.Type
	name := f.Name.Value
	if f.NonEmpty.Set && f.NonEmpty.Value && !(t.Collection() || t.Kind == ir.String) {
		l.ds.Errorf(f.NonEmpty.Pos, "non_empty applies to strings, lists and maps, not %s field %q", t, name)
	}
	for _, b := range []spec.Int{f.MinItems, f.MaxItems} {
		if b.Set && !t.Collection() {
			l.ds.Errorf(b.Pos, "min_items and max_items apply to lists and maps, not %s field %q", t, name)
		}
	}
	if f.MinItems.Set {
		fd.MinItems = int(f.MinItems.Value)
	}
	if f.MaxItems.Set {
		fd.MaxItems = int(f.MaxItems.Value)
	}
	if fd.MinItems >= 0 && fd.MaxItems >= 0 && fd.MinItems > fd.MaxItems {
		l.ds.Errorf(f.MaxItems.Pos, "max_items %d is below min_items %d", fd.MaxItems, fd.MinItems)
	}
	bounds := 0
	for _, b := range []struct {
		key string
		s   spec.Scalar
		dst *ir.Literal
	}{{"min", f.Min, &fd.Min}, {"max", f.Max, &fd.Max}} {
		if !b.s.Set {
			continue
		}
		if !t.Kind.Numeric() || t.Collection() {
			l.ds.Errorf(b.s.Pos, "min and max apply to int, float and duration fields, not %s field %q", t, name)
			continue
		}
		var ok bool
		if *b.dst, ok = l.literal(b.s, fd, b.key); ok {
			bounds++
		}
	}
	if bounds == 2 && fd.Min.Num > fd.Max.Num {
		l.ds.Errorf(f.Max.Pos, "max %s is below min %s", f.Max.Text, f.Min.Text)
	}
	if t.Kind == ir.Enum {
		if len(f.Values) == 0 {
			l.ds.Errorf(f.Type.Pos, "enum field %q needs values", name)
		}
		seen := map[string]spec.Pos{}
		g := l.newGoNames("enum value", false)
		for _, v := range f.Values {
			if p, ok := seen[v.Value]; ok {
				l.ds.Errorf(v.Pos, "duplicate enum value %q (first at %d:%d)", v.Value, p.Line, p.Col)
				continue
			}
			seen[v.Value] = v.Pos
			fd.Values = append(fd.Values, v.Value)
			g.add(v)
		}
	} else if len(f.Values) > 0 {
		l.ds.Errorf(f.Values[0].Pos, "values apply to enum fields, not %s field %q", t, name)
	}
	if f.Default.Set {
		if t.Collection() || t.Kind == ir.Time {
			l.ds.Errorf(f.Default.Pos, "%s field %q cannot have a default", t, name)
		} else {
			fd.Default, _ = l.literal(f.Default, fd, "default")
		}
	}
}

// literal converts a scalar to a value of fd's scalar kind. It reports whether the scalar
// is a valid value of that kind.
func (l *lowerer) literal(s spec.Scalar, fd *ir.Field, what string) (ir.Literal, bool) {
	lit := ir.Literal{Set: true, Str: s.Text}
	bad := func(format string, args ...any) (ir.Literal, bool) {
		l.ds.Errorf(s.Pos, format, args...)
		return lit, false
	}
	switch fd.Type.Kind {
	case ir.Int, ir.Float:
		lit.Num = s.Num
		if s.Kind != spec.ScalarNumber {
			return bad("%s of %s field %q must be a number, not %s", what, fd.Type.Kind, fd.Name, shown(s))
		}
		if fd.Type.Kind == ir.Int && (s.Num != math.Trunc(s.Num) || math.Abs(s.Num) > 1<<53) {
			return bad("%s of int field %q must be a whole number, not %s", what, fd.Name, shown(s))
		}
	case ir.Duration:
		d, err := time.ParseDuration(s.Text)
		lit.Num = float64(d)
		if s.Kind != spec.ScalarString || err != nil {
			return bad("%s of duration field %q must be a duration such as 15m, not %s", what, fd.Name, shown(s))
		}
	case ir.Bool:
		lit.Bool = s.Bool
		if s.Kind != spec.ScalarBool {
			return bad("%s of bool field %q must be true or false, not %s", what, fd.Name, shown(s))
		}
	case ir.Enum:
		if fd.EnumIndex(s.Text) < 0 && len(fd.Values) > 0 {
			return bad("%s %s is not a value of enum field %q%s", what, shown(s), fd.Name, names.DidYouMean(s.Text, fd.Values))
		}
	case ir.String:
		if s.Kind != spec.ScalarString {
			return bad("%s of string field %q must be a string, not %s; quote it", what, fd.Name, shown(s))
		}
	}
	return lit, true
}

// shown formats a scalar as written: strings quoted, numbers and booleans bare.
func shown(s spec.Scalar) string {
	text := s.Text
	if r := []rune(text); len(r) > 40 {
		text = string(r[:40]) + "..."
	}
	if s.Kind == spec.ScalarString {
		return fmt.Sprintf("%q", text)
	}
	return text
}

func (l *lowerer) levels(in []*spec.Level) []ir.Level {
	g := l.newGoNames("timeout level", true)
	var out []ir.Level
	for _, lv := range in {
		if lv.Percent.Value <= 0 {
			l.ds.Errorf(lv.Percent.Pos, "timeout level %q must be above 0%%", lv.Name.Value)
		}
		out = append(out, ir.Level{Name: lv.Name.Value, GoName: g.add(lv.Name), Percent: int(lv.Percent.Value)})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Percent < out[j].Percent })
	return out
}

// ref looks a name up among declarations of one kind, reporting unknown names with a
// suggestion.
func ref[T any](l *lowerer, kind string, m map[string]T, n spec.Str) (T, bool) {
	v, ok := m[n.Value]
	if !ok {
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		l.ds.Errorf(n.Pos, "unknown %s %q%s", kind, n.Value, names.DidYouMean(n.Value, keys))
		return v, false
	}
	l.used[any(v)] = true
	return v, true
}

func (l *lowerer) resolveStates() {
	var initials []*ir.State
	for _, s := range l.f.States {
		st := l.st[s.Name.Value]
		if st == nil || l.statePos[st] != s.Name.Pos {
			continue
		}
		if st.Initial {
			initials = append(initials, st)
		}
		if st.Terminal && st.Remembers {
			l.ds.Errorf(s.Remembers.Pos, "terminal state %q cannot remember: nothing leaves it", st.Name)
		}
		for _, r := range s.Requires {
			if fd, ok := ref(l, "context field", l.fi, r); ok {
				st.Requires = append(st.Requires, fd)
			}
		}
		for _, a := range s.Entry {
			if ac, ok := ref(l, "action", l.ac, a); ok {
				st.Entry = append(st.Entry, ac)
			}
		}
		for _, a := range s.Exit {
			if ac, ok := ref(l, "action", l.ac, a); ok {
				st.Exit = append(st.Exit, ac)
			}
		}
		if st.Terminal && len(s.Exit) > 0 {
			l.ds.Warnf(s.Exit[0].Pos, "terminal state %q is never left, so its exit actions never run", st.Name)
		}
		if s.Timeout != nil {
			st.Timeout = l.timeout(st, s.Timeout)
		}
	}
	switch len(initials) {
	case 0:
		p := spec.Pos{File: l.f.Path, Line: 1, Col: 1}
		if len(l.f.States) > 0 {
			p = l.f.States[0].Name.Pos
		}
		l.ds.Errorf(p, "no initial state: mark one state with initial: true")
	case 1:
		l.m.Initial = initials[0]
	default:
		for _, s := range initials[1:] {
			l.ds.Errorf(s.Pos, "state %q is also marked initial; %q is the first (exactly one state is initial)", s.Name, initials[0].Name)
		}
	}
}

func (l *lowerer) timeout(st *ir.State, t *spec.Timeout) *ir.Timeout {
	if st.Terminal {
		l.ds.Errorf(t.Pos, "terminal state %q cannot have a timeout", st.Name)
	}
	d, err := time.ParseDuration(t.After.Value)
	if err != nil || d <= 0 {
		l.ds.Errorf(t.After.Pos, "timeout %q must be a positive duration such as 15m", t.After.Value)
	}
	out := &ir.Timeout{After: d, Configurable: t.Configurable.Value, Doc: t.Doc.Value}
	switch {
	case len(t.Levels) > 0:
		out.Levels = l.levels(t.Levels)
	case len(l.m.Levels) > 0:
		out.Levels = l.m.Levels
	default:
		out.Levels = []ir.Level{{Name: "timeout", GoName: "Timeout", Percent: 100}}
	}
	if t.OnExpiry.Set {
		if ev, ok := ref(l, "event", l.ev, t.OnExpiry); ok {
			out.OnExpiry = ev
			if l.expiryPos == nil {
				l.expiryPos = map[*ir.State]spec.Pos{}
			}
			l.expiryPos[st] = t.OnExpiry.Pos
		}
	}
	return out
}

func (l *lowerer) resolveGuards() {
	for _, g := range l.f.Guards {
		gu := l.gu[g.Name.Value]
		if gu == nil || gu.Pos != g.Name.Pos {
			continue
		}
		type cmp struct {
			name string
			op   ir.Op
			pos  spec.Pos
		}
		var cmps []cmp
		if g.AtLeast.Set {
			cmps = append(cmps, cmp{"at_least", ir.AtLeast, g.AtLeast.Pos})
		}
		if g.Below.Set {
			cmps = append(cmps, cmp{"below", ir.Below, g.Below.Pos})
		}
		if g.Equals.Set {
			cmps = append(cmps, cmp{"equals", ir.Equals, g.Equals.Pos})
		}
		// Every problem of the guard is reported; the comparison is checked only when the
		// guard's shape is right and its subject is known.
		good := true
		switch {
		case g.Counter.Set && g.Field.Set:
			l.ds.Errorf(g.Field.Pos, "guard %q compares either a counter or a field, not both", gu.Name)
			good = false
		case !g.Counter.Set && !g.Field.Set:
			if len(cmps) > 0 {
				l.ds.Errorf(cmps[0].pos, "guard %q has %s but nothing to compare: add counter or field", gu.Name, cmps[0].name)
				continue
			}
			gu.Kind = ir.Hook
			continue
		}
		switch len(cmps) {
		case 0:
			what := "counter"
			if g.Field.Set {
				what = "field"
			}
			l.ds.Errorf(g.Name.Pos, "guard %q names a %s but no comparison: add at_least, below or equals", gu.Name, what)
			good = false
		case 1:
		default:
			l.ds.Errorf(cmps[1].pos, "guard %q has both %s and %s; a guard makes exactly one comparison", gu.Name, cmps[0].name, cmps[1].name)
			good = false
		}
		if g.Counter.Set {
			gu.Kind = ir.CounterGuard
			c, ok := ref(l, "counter", l.co, g.Counter)
			if !ok || !good {
				continue
			}
			gu.Counter, gu.Op = c, cmps[0].op
			if g.Equals.Set {
				if g.Equals.Kind != spec.ScalarNumber || g.Equals.Num != math.Trunc(g.Equals.Num) {
					l.ds.Errorf(g.Equals.Pos, "guard %q compares a counter, so equals takes a whole number, not %s", gu.Name, shown(g.Equals))
				}
				gu.Equals = ir.Literal{Set: true, Num: g.Equals.Num, Str: g.Equals.Text}
				continue
			}
			th := g.AtLeast
			if g.Below.Set {
				th = g.Below
			}
			gu.Threshold = l.threshold(th, &ir.Field{Name: c.Name, Type: ir.Type{Kind: ir.Int}})
			continue
		}
		gu.Kind = ir.FieldGuard
		fd, ok := ref(l, "context field", l.fi, g.Field)
		if !ok || !good {
			continue
		}
		gu.Field, gu.Op = fd, cmps[0].op
		if fd.Type.Collection() {
			l.ds.Errorf(g.Field.Pos, "guard %q cannot compare %s field %q", gu.Name, fd.Type, fd.Name)
			continue
		}
		if g.Equals.Set {
			if fd.Type.Kind == ir.Time {
				l.ds.Errorf(g.Equals.Pos, "guard %q cannot compare time field %q with equals", gu.Name, fd.Name)
				continue
			}
			gu.Equals, _ = l.literal(g.Equals, fd, "equals value")
			continue
		}
		th := g.AtLeast
		if g.Below.Set {
			th = g.Below
		}
		if !fd.Type.Kind.Numeric() {
			l.ds.Errorf(th.Pos, "guard %q: %s compares numbers, but field %q is %s (use equals)", gu.Name, cmps[0].name, fd.Name, fd.Type)
			continue
		}
		gu.Threshold = l.threshold(th, fd)
	}
}

func (l *lowerer) threshold(t spec.Threshold, subject *ir.Field) ir.Threshold {
	if !t.By.Set {
		if subject.Type.Kind == ir.Duration {
			lit, _ := l.literal(t.Num, subject, "threshold")
			return ir.Threshold{Num: lit.Num}
		}
		if t.Num.Kind != spec.ScalarNumber {
			l.ds.Errorf(t.Num.Pos, "threshold must be a number, not %q", t.Num.Text)
		}
		return ir.Threshold{Num: t.Num.Num}
	}
	by, ok := ref(l, "context field", l.fi, t.By)
	if !ok {
		return ir.Threshold{}
	}
	if by.Type.Kind != ir.Enum || by.Type.Collection() {
		l.ds.Errorf(t.By.Pos, "threshold by %q: the field must be an enum, not %s", by.Name, by.Type)
		return ir.Threshold{}
	}
	out := ir.Threshold{By: by, Values: make([]float64, len(by.Values))}
	have := make([]bool, len(by.Values))
	for _, v := range t.Values {
		i := by.EnumIndex(v.Name.Value)
		if i < 0 {
			l.ds.Errorf(v.Name.Pos, "unknown value %q of enum field %q%s", v.Name.Value, by.Name, names.DidYouMean(v.Name.Value, by.Values))
			continue
		}
		if v.Value.Kind != spec.ScalarNumber {
			l.ds.Errorf(v.Value.Pos, "threshold for %q must be a number", v.Name.Value)
		}
		out.Values[i], have[i] = v.Value.Num, true
	}
	for i, ok := range have {
		if !ok {
			l.ds.Errorf(t.Pos, "threshold by %q has no value for %q", by.Name, by.Values[i])
		}
	}
	return out
}

func (l *lowerer) resolveCounters() {
	for _, c := range l.f.Counters {
		co := l.co[c.Name.Value]
		if co == nil || co.Pos != c.Name.Pos {
			continue
		}
		if c.Then.Set {
			if !c.Limit.Set {
				l.ds.Errorf(c.Then.Pos, "counter %q has then but no limit", co.Name)
			}
			if st, ok := ref(l, "state", l.st, c.Then); ok {
				co.Then = st
			}
		}
	}
}

func (l *lowerer) resolveCheckpoints() {
	for _, c := range l.f.Checkpoints {
		cp := l.cp[c.Name.Value]
		if cp == nil {
			continue
		}
		if cp.EveryTransition {
			l.used[any(cp)] = true
		}
		for _, s := range c.Save {
			if slices.Contains(builtinSaves(), s.Value) || l.fi[s.Value] != nil || l.co[s.Value] != nil {
				continue
			}
			cands := append(builtinSaves(), keysOf(l.fi)...)
			cands = append(cands, keysOf(l.co)...)
			l.ds.Errorf(s.Pos, "checkpoint %q saves %q, which is neither a context field, a counter nor one of %s%s",
				cp.Name, s.Value, strings.Join(builtinSaves(), ", "), names.DidYouMean(s.Value, cands))
		}
	}
}

func keysOf[T any](m map[string]T) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func (l *lowerer) conds(ifs, unless []spec.Str) []ir.Cond {
	var out []ir.Cond
	for i, list := range [][]spec.Str{ifs, unless} {
		for _, n := range list {
			if g, ok := ref(l, "guard", l.gu, n); ok {
				out = append(out, ir.Cond{Guard: g, Negate: i == 1})
			}
		}
	}
	return out
}

func (l *lowerer) target(t spec.Target) (ir.Target, bool) {
	if t.History.Set {
		st, ok := ref(l, "state", l.st, t.History)
		if !ok {
			return ir.Target{}, false
		}
		if !st.Remembers {
			l.ds.Errorf(t.History.Pos, "history target %q does not remember: add remembers: true to the state", st.Name)
			return ir.Target{}, false
		}
		return ir.Target{Kind: ir.History, State: st}, true
	}
	st, ok := ref(l, "state", l.st, t.State)
	return ir.Target{Kind: ir.Fixed, State: st}, ok
}

func (l *lowerer) resolveTransitions() {
	for i, t := range l.f.Transitions {
		tr := &ir.Transition{Index: i, Pos: t.Pos, Doc: t.Doc.Value, Named: !t.OnSet}
		ok := true

		// Destination.
		var dests []string
		if t.To.Set {
			dests = append(dests, "to")
		}
		if len(t.Choose) > 0 {
			dests = append(dests, "choose")
		}
		if t.Internal.Value {
			dests = append(dests, "internal: true")
		}
		switch {
		case len(dests) == 0:
			l.ds.Errorf(t.Pos, "transition needs a destination: to, choose or internal: true")
			ok = false
		case len(dests) > 1:
			// Report at the second destination, the one to delete or move.
			p := t.ChoosePos
			if dests[1] != "choose" {
				p = t.Internal.Pos
			}
			l.ds.Errorf(p, "transition has both %s and %s; keep one", dests[0], dests[1])
			ok = false
		case t.To.Set:
			tg, good := l.target(t.To)
			tr.Target, ok = tg, good
		case t.Internal.Value:
			tr.Target = ir.Target{Kind: ir.Internal}
		default:
			tr.Target = ir.Target{Kind: ir.Choice}
			type earlier struct {
				pos   spec.Pos
				conds []ir.Cond
			}
			var prevs []earlier
			hasDefault := false
			for _, c := range t.Choose {
				conds := l.conds(c.If, c.Unless)
				if len(conds) == len(c.If)+len(c.Unless) { // every guard known
					for _, p := range prevs {
						if covers(p.conds, conds) {
							if len(p.conds) == 0 {
								l.ds.Errorf(c.Pos, "choice can never be taken: the choice at %d:%d has no guard and comes first", p.pos.Line, p.pos.Col)
							} else {
								l.ds.Errorf(c.Pos, "choice can never be taken: the choice at %d:%d comes first and its guards hold whenever these do", p.pos.Line, p.pos.Col)
							}
							break
						}
					}
					prevs = append(prevs, earlier{c.Pos, conds})
				}
				if len(c.If)+len(c.Unless) == 0 {
					hasDefault = true
				}
				tg, good := l.target(c.To)
				if !good {
					ok = false
					continue
				}
				tr.Choices = append(tr.Choices, &ir.Candidate{Pos: c.Pos, Conds: conds, Target: tg, Doc: c.Doc.Value})
			}
			if !hasDefault {
				l.ds.Warnf(t.ChoosePos, "choose has no default (a last choice without if/unless): firing is refused when no choice holds")
			}
		}

		// Trigger.
		if !t.OnSet && len(dests) == 1 {
			switch {
			case t.To.History.Set:
				l.ds.Errorf(t.To.Pos, "a transition without on takes its event from its target state, so a history target needs on: EVENT")
				ok = false
			case len(t.Choose) > 0:
				l.ds.Errorf(t.ChoosePos, "a transition without on takes its event from its target state, so choose needs on: EVENT")
				ok = false
			case t.Internal.Value:
				l.ds.Errorf(t.Internal.Pos, "a transition without on takes its event from its target state, so internal: true needs on: EVENT")
				ok = false
			default:
				if ev := l.ev[t.To.State.Value]; ev != nil {
					tr.Events = []*ir.Event{ev}
					l.used[any(ev)] = true
				}
			}
		}
		if t.OnSet && len(t.On) == 0 {
			l.ds.Errorf(t.OnPos, "on lists no event, so the transition can never be taken")
			ok = false
		}
		for _, n := range t.On {
			ev, good := ref(l, "event", l.ev, n)
			switch {
			case !good:
				ok = false
			case slices.Contains(tr.Events, ev):
				l.ds.Errorf(n.Pos, "event %q is listed twice", ev.Name)
			default:
				tr.Events = append(tr.Events, ev)
			}
		}

		// Sources.
		tr.From = l.sources(t, tr)
		if len(tr.From) == 0 {
			ok = false
		}

		tr.Conds = l.conds(t.If, t.Unless)
		for _, r := range t.By {
			rule := ir.RoleRule{}
			if ro, good := ref(l, "role", l.ro, r.Role); good {
				rule.Role = ro
			}
			if r.Policy.Set {
				if po, good := ref(l, "policy", l.po, r.Policy); good {
					rule.Policy = po
				}
			}
			tr.Roles = append(tr.Roles, rule)
		}
		for _, a := range t.Do {
			if ac, good := ref(l, "action", l.ac, a); good {
				tr.Actions = append(tr.Actions, ac)
			}
		}
		for _, c := range t.Increment {
			if co, good := ref(l, "counter", l.co, c); good {
				tr.Increment = append(tr.Increment, co)
			}
		}
		for _, c := range t.Reset {
			if co, good := ref(l, "counter", l.co, c); good {
				tr.Reset = append(tr.Reset, co)
			}
		}
		if t.Checkpoint.Set {
			if cp, good := ref(l, "checkpoint", l.cp, t.Checkpoint); good {
				tr.Checkpoint = cp
			}
		}
		if ok {
			l.m.Transitions = append(l.m.Transitions, tr)
		}
	}
}

// sources expands a transition's from into states, in state order.
func (l *lowerer) sources(t *spec.Transition, tr *ir.Transition) []*ir.State {
	fr := t.From
	if !fr.Any && !fr.Group.Set && len(fr.Except) == 0 {
		return l.listedSources(fr.States)
	}
	picked := make([]bool, len(l.m.States))
	var group *ir.Group
	var fixed *ir.State
	if tr.Target.Kind == ir.Fixed {
		fixed = tr.Target.State
	}
	switch {
	case fr.Any:
		for _, s := range l.m.States {
			picked[s.Index] = !s.Terminal && s != fixed
		}
	case fr.Group.Set:
		g, ok := ref(l, "group", l.gr, fr.Group)
		if !ok {
			return nil
		}
		group = g
		for _, s := range g.States {
			picked[s.Index] = true
		}
	default:
		for _, n := range fr.States {
			s, ok := ref(l, "state", l.st, n)
			if !ok {
				continue
			}
			if s.Terminal {
				l.ds.Errorf(n.Pos, "transition leaves terminal state %q", s.Name)
			}
			if picked[s.Index] {
				l.ds.Errorf(n.Pos, "state %q is listed twice", s.Name)
			}
			picked[s.Index] = true
		}
	}
	for _, n := range fr.Except {
		s, ok := ref(l, "state", l.st, n)
		if !ok {
			continue
		}
		if !picked[s.Index] && !(fr.Any && (s.Terminal || s == fixed)) {
			l.ds.Warnf(n.Pos, "except %q excludes a state the transition does not start from", s.Name)
		}
		picked[s.Index] = false
	}
	if group != nil {
		for _, s := range group.States {
			if s.Terminal && picked[s.Index] {
				l.ds.Errorf(fr.Group.Pos, "transition leaves terminal state %q (a member of group %q; add except: [%s])", s.Name, group.Name, s.Name)
			}
		}
	}
	var out []*ir.State
	for _, s := range l.m.States {
		if picked[s.Index] {
			out = append(out, s)
		}
	}
	if len(out) == 0 && (fr.Any || fr.Group.Set) {
		l.ds.Errorf(fr.Pos, "transition starts from no state: every candidate is excluded")
	}
	return out
}

// listedSources resolves a plain list of source states without visiting every state of
// the machine, so that lowering stays linear in the spec for machines of many states.
func (l *lowerer) listedSources(names []spec.Str) []*ir.State {
	var out []*ir.State
	for _, n := range names {
		s, ok := ref(l, "state", l.st, n)
		if !ok {
			continue
		}
		if s.Terminal {
			l.ds.Errorf(n.Pos, "transition leaves terminal state %q", s.Name)
		}
		if slices.Contains(out, s) {
			l.ds.Errorf(n.Pos, "state %q is listed twice", s.Name)
			continue
		}
		out = append(out, s)
	}
	slices.SortFunc(out, func(a, b *ir.State) int { return a.Index - b.Index })
	return out
}

// buildTable fills the (state, event) lookup and reports transitions that an earlier one
// for the same state and event shadows: one that is unguarded, or whose guards hold whenever
// the later one's do. A transition shadowed for every state and event it covers can never
// be taken (an error); one shadowed for only some of them, such as a {any: true} fallback
// after a specific rule, works for the rest (a warning).
func (l *lowerer) buildTable() {
	ns, ne := len(l.m.States), len(l.m.Events)
	table := make([][]*ir.Transition, ns*ne)
	type shadow struct {
		s    *ir.State
		e    *ir.Event
		prev *ir.Transition
	}
	for _, t := range l.m.Transitions {
		var shadows []shadow
		for _, s := range t.From {
			for _, e := range t.Events {
				cell := &table[s.Index*ne+e.Index]
				for _, prev := range *cell {
					if covers(prev.Conds, t.Conds) {
						shadows = append(shadows, shadow{s, e, prev})
						break
					}
				}
				*cell = append(*cell, t)
			}
		}
		if len(shadows) == 0 {
			continue
		}
		sh := shadows[0]
		why := fmt.Sprintf("the unguarded transition at %d:%d comes first", sh.prev.Pos.Line, sh.prev.Pos.Col)
		if sh.prev.Guarded() {
			why = fmt.Sprintf("the transition at %d:%d comes first and its guards hold whenever these do", sh.prev.Pos.Line, sh.prev.Pos.Col)
		}
		more := ""
		switch n := len(shadows) - 1; {
		case n == 1:
			more = " (and 1 more state and event pair)"
		case n > 1:
			more = fmt.Sprintf(" (and %d more state and event pairs)", n)
		}
		if len(sh.prev.Roles) > 0 && len(t.Roles) > 0 {
			more += "; roles are checked only after a transition is chosen, so list every role in one by"
		}
		if len(shadows) == len(t.From)*len(t.Events) {
			l.ds.Errorf(t.Pos, "transition can never be taken from %q on %q: %s%s (nondeterminism)", sh.s.Name, sh.e.Name, why, more)
		} else {
			l.ds.Warnf(t.Pos, "transition is never taken from %q on %q: %s%s", sh.s.Name, sh.e.Name, why, more)
		}
	}
	l.m.SetTable(table)
}

// covers reports whether conditions first always hold when conditions then do, so that
// whatever is tried after first with conditions then can never be chosen: every condition
// of first is also one of then (none at all, for an unguarded first).
func covers(first, then []ir.Cond) bool {
	for _, c := range first {
		found := false
		for _, d := range then {
			if c.Guard == d.Guard && c.Negate == d.Negate {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// computeHistory fills HistoryFrom: the states each remembering state can be entered from.
// History targets add edges themselves, so iterate to a fixed point.
func (l *lowerer) computeHistory() {
	for changed := true; changed; {
		changed = false
		for _, s := range l.m.States {
			for _, e := range l.m.Events {
				for _, t := range l.m.Lookup(s, e) {
					for _, d := range t.Targets(s) {
						if d.Remembers && d != s && !slices.Contains(d.HistoryFrom, s) {
							d.HistoryFrom = insertState(d.HistoryFrom, s)
							changed = true
						}
					}
				}
			}
		}
	}
}

func insertState(list []*ir.State, s *ir.State) []*ir.State {
	i := sort.Search(len(list), func(i int) bool { return list[i].Index > s.Index })
	list = append(list, nil)
	copy(list[i+1:], list[i:])
	list[i] = s
	return list
}

func (l *lowerer) checkGraph() {
	m := l.m
	if m.Initial == nil {
		return
	}
	seen := make([]bool, len(m.States))
	queue := []*ir.State{m.Initial}
	seen[m.Initial.Index] = true
	for len(queue) > 0 {
		s := queue[0]
		queue = queue[1:]
		for _, e := range m.Events {
			for _, t := range m.Lookup(s, e) {
				for _, d := range t.Targets(s) {
					if !seen[d.Index] {
						seen[d.Index] = true
						queue = append(queue, d)
					}
				}
			}
		}
	}
	for _, s := range m.States {
		if !seen[s.Index] {
			l.ds.Errorf(s.Pos, "state %q is unreachable from the initial state %q", s.Name, m.Initial.Name)
		}
		if s.Terminal {
			continue
		}
		out := false
		for _, e := range m.Events {
			if len(m.Lookup(s, e)) > 0 {
				out = true
				break
			}
		}
		if !out {
			l.ds.Errorf(s.Pos, "non-terminal state %q has no outgoing transition (mark it terminal: true, or add one)", s.Name)
		}
		if s.Timeout != nil && s.Timeout.OnExpiry != nil && len(m.Lookup(s, s.Timeout.OnExpiry)) == 0 {
			l.ds.Errorf(l.expiryPos[s], "timeout of state %q fires %q, which has no transition from %q", s.Name, s.Timeout.OnExpiry.Name, s.Name)
		}
	}
}

func (l *lowerer) checkUnused() {
	f := l.f
	warn := func(kind string, n spec.Str, v any) {
		if !l.used[v] {
			l.ds.Warnf(n.Pos, "%s %q is never used", kind, n.Value)
		}
	}
	for _, e := range f.Events {
		if ev := l.ev[e.Name.Value]; ev != nil && ev.Pos == e.Name.Pos {
			warn("event", e.Name, ev)
		}
	}
	for _, g := range f.Guards {
		if gu := l.gu[g.Name.Value]; gu != nil && gu.Pos == g.Name.Pos {
			warn("guard", g.Name, gu)
		}
	}
	for _, a := range f.Actions {
		if ac := l.ac[a.Name.Value]; ac != nil {
			warn("action", a.Name, ac)
		}
	}
	for _, r := range f.Roles {
		if ro := l.ro[r.Name.Value]; ro != nil && !ro.All {
			warn("role", r.Name, ro)
		}
	}
	for _, p := range f.Policies {
		if po := l.po[p.Name.Value]; po != nil {
			warn("policy", p.Name, po)
		}
	}
	for _, c := range f.Checkpoints {
		if cp := l.cp[c.Name.Value]; cp != nil {
			warn("checkpoint", c.Name, cp)
		}
	}
	incremented := map[*ir.Counter]bool{}
	for _, t := range l.m.Transitions {
		for _, c := range t.Increment {
			incremented[c] = true
		}
	}
	for _, c := range f.Counters {
		if co := l.co[c.Name.Value]; co != nil && co.Pos == c.Name.Pos && !incremented[co] {
			l.ds.Warnf(c.Name.Pos, "counter %q is never incremented", co.Name)
		}
	}
}

// Load reads, validates and lowers one spec: the front half of every command.
func Load(path string, data []byte) (*ir.Machine, diag.List) {
	f, ds := spec.Load(path, data)
	if f == nil {
		return nil, ds
	}
	return Lower(f)
}
