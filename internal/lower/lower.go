// Package lower resolves a spec's syntax tree into the IR and runs every semantic check:
// references, Go names, initial and terminal states, reachability, determinism, counters,
// guards, timeouts and checkpoints. It reports all findings, not only the first.
package lower

import (
	"fmt"
	"go/token"
	"math"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/fsmgen/fsmgen/internal/diag"
	"github.com/fsmgen/fsmgen/internal/ir"
	"github.com/fsmgen/fsmgen/internal/names"
	"github.com/fsmgen/fsmgen/spec"
)

// reading says how a spec is lowered: with its (state, event) table or not, and with the
// migrations it declares resolved or not; chain holds, for an older spec read through the
// migration of a newer one, the newer specs' paths.
type reading struct {
	table, migrations bool
	chain             map[string]bool
}

// lowerAs resolves f, read as r says. It returns the machine, or nil when there are
// errors, and every finding (warnings do not stop lowering). Without r.table it leaves out
// the machine's (state, event) table (Check needs none).
//
// f may be partial (spec.LoadPartial): lowering then checks everything that does not
// depend on the parts with errors, and reports nothing that could be a consequence of them.
// Within a complete spec it does the same for its own errors: an unknown name is reported
// once, and the checks that would need to know what it names are skipped or made
// conservative (a transition from an unknown state could be the way out of any state, so
// no state is reported as a dead end).
func lowerAs(f *spec.File, r reading) (*ir.Machine, diag.List) {
	l := &lowerer{
		f: f, reading: r,
		m:  &ir.Machine{Source: f.Path, Name: f.Machine.Value, Package: f.Package.Value, Doc: f.Doc.Value, RecordHistory: f.RecordHistory.Value, Idempotent: f.Idempotent.Value},
		st: map[string]*ir.State{}, ev: map[string]*ir.Event{}, gr: map[string]*ir.Group{},
		ro: map[string]*ir.Role{}, po: map[string]*ir.Policy{}, fi: map[string]*ir.Field{},
		co: map[string]*ir.Counter{}, gu: map[string]*ir.Guard{}, ac: map[string]*ir.Action{},
		cp:     map[string]*ir.Checkpoint{},
		used:   map[any]bool{},
		unsure: map[string]bool{}, failed: map[string]bool{}, keys: suggesters{},
		broken: map[*ir.State]bool{}, typeUnknown: map[*ir.Field]bool{}, brokenDecl: map[any]bool{},
		groupPos: map[*ir.Group]spec.Pos{},
		afters:   map[string]*afterTimeout{}, afterEv: map[*spec.Transition]*ir.Event{},
	}
	l.run()
	if r.table && !l.ds.HasErrors() {
		l.m.SetTable(l.table())
	}
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

	used      map[any]bool           // declarations referenced somewhere
	expiryPos map[*ir.State]spec.Pos // where each state's timeout names its on_expiry event

	// What is not known because of errors, so that no check reports their consequences.
	unsure      map[string]bool        // kinds whose declarations may be incomplete: unknown names are not reported
	failed      map[string]bool        // kinds with a reference that did not resolve
	keys        suggesters             // did-you-mean among the names of a kind (or an enum's values)
	broken      map[*ir.State]bool     // states declared with errors (spec.State.Broken)
	typeUnknown map[*ir.Field]bool     // fields whose type is not known
	brokenDecl  map[any]bool           // other declarations with errors (roles, counters)
	groupPos    map[*ir.Group]spec.Pos // where each group is first mentioned
	checks      []*trCheck             // every transition, resolved as far as it goes
	cells       cellTable              // state*len(Events)+event -> transitions, in priority order
	initials    []*ir.State            // the states marked initial
	brokenTrans bool                   // some transition was declared with errors
	unprintable map[spec.Pos]bool      // names refused for an unprintable character, by position
	cs          *chartState            // the tree of a statechart (nil for a flat machine)

	afters  map[string]*afterTimeout       // the timeouts delayed transitions give states, by name (path)
	afterEv map[*spec.Transition]*ir.Event // the event each delayed transition is taken on
	reading reading                        // how the spec is read
	logic   map[string]*ir.Guard           // the guard expressions written in transitions, by their structure (exprKey)
}

func (l *lowerer) run() {
	f := l.f
	l.unsureSections()
	l.machineName()
	l.packageName()
	l.m.Levels = l.levels(f.TimeoutLevels)
	l.declare()
	if l.cs != nil {
		l.resolveNodes()
		l.resolveGuards()
		l.resolveLogic()
		l.resolveCounters()
		l.resolveCheckpoints()
		l.resolveChartTransitions()
		l.refuseInChart()
		l.flatten()
		l.pruneLogic()
		l.checkLivelock()
		l.checkGoDecls()
		l.checkUnused()
		l.migrations()
		return
	}
	l.resolveStates()
	l.resolveGuards()
	l.resolveLogic()
	l.checkGoDecls()
	l.resolveCounters()
	l.resolveCheckpoints()
	l.resolveTransitions()
	l.checkShadowing()
	l.computeHistory()
	l.checkGraph()
	l.checkUnused()
	l.migrations()
}

// unsureSections marks the kinds of declaration whose section has errors as a whole: a
// name missing from them may be declared in the part that could not be read.
func (l *lowerer) unsureSections() {
	for section, kind := range map[string]string{
		"states": "state", "events": "event", "roles": "role", "policies": "policy", "context": "context field",
		"counters": "counter", "guards": "guard", "actions": "action", "checkpoints": "checkpoint",
	} {
		if l.f.Broken[section] {
			l.unsure[kind] = true
		}
	}
	if l.f.Broken["states"] {
		l.unsure["group"] = true
	}
	if l.f.Broken["transitions"] {
		l.brokenTrans = true
	}
}

func (l *lowerer) machineName() {
	f := l.f
	l.m.GoName = names.GoName(f.Machine.Value)
	if f.Broken["machine"] || f.Machine.Bad || !f.Machine.Set {
		return
	}
	l.printable("machine name", f.Machine)
	switch {
	case l.m.GoName == "":
		l.ds.Errorf(f.Machine.Pos, "machine name %q has no letter or digit to make a Go name from", f.Machine.Value)
	case !names.StartsWithLetter(l.m.GoName):
		l.ds.Errorf(f.Machine.Pos, "machine name %q must start with a letter to be a Go type name", f.Machine.Value)
	case !names.Exported(l.m.GoName):
		l.ds.Errorf(f.Machine.Pos, "machine name %q maps to Go name %s, which must start with an upper-case letter to be exported", f.Machine.Value, l.m.GoName)
	}
}

// packageName refuses package names Go cannot declare (the schema allows lower-case letters
// and digits, which keywords are too).
func (l *lowerer) packageName() {
	p := l.f.Package
	if l.f.Broken["package"] || p.Bad || !p.Set {
		return
	}
	if token.IsKeyword(p.Value) {
		l.ds.Errorf(p.Pos, "package %q is a Go keyword, so it cannot name a package", p.Value)
	}
}

// printable refuses a name that holds a character names.Unprintable refuses: one that is
// invisible or changes how the text around it is shown (a control character, a
// bidirectional control, a zero-width character, the byte-order mark, a line separator).
// A name is reported once, however many namespaces it is added to (a state's name makes
// the implicit event of a transition named by its target, too).
func (l *lowerer) printable(what string, n spec.Str) {
	r, bad := names.FirstUnprintable(n.Value)
	if !bad || l.unprintable[n.Pos] {
		return
	}
	if l.unprintable == nil {
		l.unprintable = map[spec.Pos]bool{}
	}
	l.unprintable[n.Pos] = true
	l.ds.Errorf(n.Pos, "%s %q holds %U, %s: a name may hold only printable characters", what, n.Value, r, names.DescribeUnprintable(r))
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
	if n.Bad { // reported already
		return id
	}
	g.owner.printable(kind+" name", n)
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
	if isChart(f) {
		l.declareNodes()
	}
	for _, s := range f.States {
		if l.cs != nil {
			break
		}
		if dup("state", seen, s.Name) {
			continue
		}
		st := &ir.State{Index: len(l.m.States), Name: s.Name.Value, GoName: stateGo.add(s.Name), Doc: s.Doc.Value, Pos: s.Name.Pos,
			Initial: s.Initial.Value, Terminal: s.Terminal.Value, Remembers: s.Remembers.Value}
		if s.Broken {
			l.broken[st] = true
			l.unsure["group"] = true // the state may belong to groups it does not list
		}
		l.m.States = append(l.m.States, st)
		l.st[st.Name] = st
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
	l.declareAfter(eventGo)
	// Events implied by transitions named by their target, in order of first use.
	for _, t := range f.Transitions {
		if t.OnSet || !t.To.State.Set || t.After.Set || len(t.To.More) > 0 {
			continue // several targets: on is needed, and the checker says so
		}
		name := t.To.State
		if l.cs != nil {
			if t.Always.Value || t.Done.Value || l.cs.refs[name.Value] == nil {
				continue
			}
			name.Value = l.cs.refs[name.Value].Name
		}
		if _, ok := l.ev[name.Value]; ok || (l.cs == nil && l.st[name.Value] == nil) {
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
		l.brokenDecl[any(ro)] = r.Broken
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
			PerState: c.PerState.Value, ResetOnSuccess: c.ResetOnSuccess.Value, Limit: int(c.Limit.Value), Configurable: c.Configurable.Value}
		if c.Max.Set && !c.Max.Bad && !c.Limit.Set {
			if c.Max.Value == math.MaxInt64 {
				l.ds.Errorf(c.Max.Pos, "max %d of counter %q is out of range: the count that trips a counter (max+1) must fit in 64 bits, so max is at most %d", c.Max.Value, co.Name, int64(math.MaxInt64-1))
			} else {
				co.Limit, co.Max = int(c.Max.Value)+1, true
			}
		}
		l.brokenDecl[any(co)] = c.Broken
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
		if g.Expr != nil {
			l.declareLogic(g)
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
		ac := &ir.Action{Index: len(l.m.Actions), Name: a.Name.Value, GoName: hookGo.addAs("action", a.Name), Doc: a.Doc.Value, Effect: a.Effect.Value, MayFail: a.MayFail.Value}
		if a.Effect.Value && a.MayFail.Value {
			l.ds.Errorf(a.MayFail.Pos, "action %q is an effect: an effect's hook always returns an error, which means \"deliver it again\", not \"refuse the transition\"; drop may_fail or effect", a.Name.Value)
		}
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
		if st == nil || st.Pos != s.Name.Pos {
			continue
		}
		for _, g := range s.Groups {
			gr := l.gr[g.Value]
			if g.Bad {
				continue
			}
			if gr == nil {
				gr = &ir.Group{Index: len(l.m.Groups), Name: g.Value, GoName: groupGo.add(g)}
				l.m.Groups = append(l.m.Groups, gr)
				l.gr[g.Value] = gr
				l.groupPos[gr] = g.Pos
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
		if !f.Type.Set || f.Type.Bad {
			// The schema has said what is wrong with the type; nothing that depends on
			// it can be checked.
			l.typeUnknown[fd] = true
		} else {
			l.checkField(f, fd)
		}
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
	if f.NonEmpty.Set && f.NonEmpty.Value && !f.NonEmpty.Bad && !(t.Collection() || t.Kind == ir.String) {
		l.ds.Errorf(f.NonEmpty.Pos, "non_empty applies to strings, lists and maps, not %s field %q", t, name)
	}
	for _, b := range []spec.Int{f.MinItems, f.MaxItems} {
		if b.Set && !t.Collection() {
			l.ds.Errorf(b.Pos, "min_items and max_items apply to lists and maps, not %s field %q", t, name)
		}
	}
	if f.MinItems.Set && !f.MinItems.Bad {
		fd.MinItems = int(f.MinItems.Value)
	}
	if f.MaxItems.Set && !f.MaxItems.Bad {
		fd.MaxItems = int(f.MaxItems.Value)
	}
	if fd.MinItems >= 0 && fd.MaxItems >= 0 && fd.MinItems > fd.MaxItems {
		l.ds.Errorf(f.MaxItems.Pos, "max_items %d is below min_items %d", fd.MaxItems, fd.MinItems)
	}
	bounds := 0
	var lowPos, highPos spec.Pos
	for _, b := range []struct {
		key       string
		s         spec.Scalar
		dst       *ir.Literal
		exclusive *bool
		other     spec.Scalar // the bound of the same side, written the other way
		otherKey  string
		pos       *spec.Pos
	}{
		{"min", f.Min, &fd.Min, nil, spec.Scalar{}, "", &lowPos},
		{"above", f.Above, &fd.Min, &fd.MinExclusive, f.Min, "min", &lowPos},
		{"max", f.Max, &fd.Max, nil, spec.Scalar{}, "", &highPos},
		{"below", f.Below, &fd.Max, &fd.MaxExclusive, f.Max, "max", &highPos},
	} {
		if !b.s.Set || b.s.Bad {
			continue
		}
		if !t.Kind.Numeric() || t.Collection() {
			l.ds.Errorf(b.s.Pos, "%s applies to int, float and duration fields, not %s field %q", b.key, t, name)
			continue
		}
		if b.other.Set {
			l.ds.Errorf(b.s.Pos, "field %q has both %s and %s: give one (%s is inclusive, %s exclusive)", name, b.otherKey, b.key, b.otherKey, b.key)
			continue
		}
		lit, ok := l.literal(b.s, fd, b.key)
		if !ok {
			continue
		}
		*b.dst, *b.pos = lit, b.s.Pos
		if b.exclusive != nil {
			*b.exclusive = true
		}
		bounds++
	}
	switch {
	case bounds < 2:
	case !fd.MinExclusive && !fd.MaxExclusive && fd.Min.Num > fd.Max.Num:
		l.ds.Errorf(highPos, "max %s is below min %s", fd.Max.Str, fd.Min.Str)
	case !anyBetween(fd):
		l.ds.Errorf(highPos, "no value of field %q is %s and %s", name,
			strings.TrimPrefix(fd.MinProblem(), name+" must be "), strings.TrimPrefix(fd.MaxProblem(), name+" must be "))
	}
	if t.Kind == ir.Enum {
		if len(f.Values) == 0 && !f.Broken { // a broken field may have misspelt values
			l.ds.Errorf(f.Type.Pos, "enum field %q needs values", name)
		}
		seen := map[string]spec.Pos{}
		g := l.newGoNames("enum value", false)
		for _, v := range f.Values {
			if v.Bad {
				l.typeUnknown[fd] = true // the values are not all known
				continue
			}
			if p, ok := seen[v.Value]; ok {
				l.ds.Errorf(v.Pos, "duplicate enum value %q (first at %d:%d)", v.Value, p.Line, p.Col)
				continue
			}
			seen[v.Value] = v.Pos
			if fd.Unset() && names.GoName(v.Value) == "Unset" {
				l.ds.Errorf(v.Pos, "enum value %q of required field %q would be named %sUnset, which names the field's unset value; rename the value", v.Value, name, fd.GoName)
			}
			fd.Values = append(fd.Values, v.Value)
			g.add(v)
		}
	} else if len(f.Values) > 0 {
		l.ds.Errorf(f.Values[0].Pos, "values apply to enum fields, not %s field %q", t, name)
	}
	if f.Default.Set && !f.Default.Bad {
		if t.Collection() || t.Kind == ir.Time {
			l.ds.Errorf(f.Default.Pos, "%s field %q cannot have a default", t, name)
		} else {
			fd.Default, _ = l.literal(f.Default, fd, "default")
		}
	}
}

// anyBetween reports whether some value of the field's kind lies within its two bounds
// (ints and durations are whole numbers: above 4 and below 5 holds none).
func anyBetween(fd *ir.Field) bool {
	lo, hi := fd.Min.Num, fd.Max.Num
	if fd.Type.Kind == ir.Float {
		return lo < hi || lo == hi && !fd.MinExclusive && !fd.MaxExclusive
	}
	if fd.MinExclusive {
		lo++
	}
	if fd.MaxExclusive {
		hi--
	}
	return lo <= hi
}

// durationSyntax matches what time.ParseDuration reads, whatever the size: a duration
// that matches and does not parse is out of range.
var durationSyntax = regexp.MustCompile(`^[-+]?(0|(([0-9]+(\.[0-9]*)?|\.[0-9]+)(ns|us|µs|μs|ms|s|m|h))+)$`)

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
		if fd.Type.Kind == ir.Int && s.Num != math.Trunc(s.Num) {
			return bad("%s of int field %q must be a whole number, not %s", what, fd.Name, shown(s))
		}
		if fd.Type.Kind == ir.Int && math.Abs(s.Num) > 1<<53 {
			return bad("%s %s of int field %q is out of range: bounds and defaults of int fields lie between -2^53 and 2^53 (%d)", what, shown(s), fd.Name, int64(1)<<53)
		}
	case ir.Duration:
		d, err := time.ParseDuration(s.Text)
		lit.Num = float64(d)
		if s.Kind == spec.ScalarString && err != nil && durationSyntax.MatchString(s.Text) {
			return bad("%s %s of duration field %q is out of range: a duration lies within ±%s", what, shown(s), fd.Name, time.Duration(math.MaxInt64))
		}
		if s.Kind != spec.ScalarString || err != nil {
			return bad("%s of duration field %q must be a duration such as 15m, not %s", what, fd.Name, shown(s))
		}
	case ir.Bool:
		lit.Bool = s.Bool
		if s.Kind != spec.ScalarBool {
			return bad("%s of bool field %q must be true or false, not %s", what, fd.Name, shown(s))
		}
	case ir.Enum:
		if l.typeUnknown[fd] {
			return lit, false
		}
		if fd.EnumIndex(s.Text) < 0 && len(fd.Values) > 0 {
			return bad("%s %s is not a value of enum field %q%s", what, shown(s), fd.Name, l.didYouMean(fd, s.Text, func() []string { return fd.Values }))
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
		if lv.Percent.Value <= 0 && !lv.Percent.Bad {
			l.ds.Errorf(lv.Percent.Pos, "timeout level %q must be above 0%%", lv.Name.Value)
		}
		out = append(out, ir.Level{Name: lv.Name.Value, GoName: g.add(lv.Name), Percent: int(lv.Percent.Value)})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Percent < out[j].Percent })
	return out
}

// ref looks a name up among declarations of one kind, reporting unknown names with a
// suggestion. A name that is malformed (reported already), or missing from a kind whose
// declarations could not all be read, fails without a finding. Every failure is noted, so
// that checks needing the reference (is this declaration used?) are skipped.
func ref[T any](l *lowerer, kind string, m map[string]T, n spec.Str) (T, bool) {
	v, ok := m[n.Value]
	if !ok || !n.Set || n.Bad {
		l.failed[kind] = true
		if n.Set && !n.Bad && !l.unsure[kind] {
			hint := "" // for an event, say where a new one is declared
			if kind == "event" {
				hint = fmt.Sprintf("; to add it, declare it under events (events: { %s: {} })", n.Value)
			}
			l.ds.Errorf(n.Pos, "unknown %s %q%s%s", kind, n.Value, l.didYouMean(kind, n.Value, func() []string { return keysOf(m) }), hint)
		}
		var zero T
		return zero, false
	}
	l.used[any(v)] = true
	return v, true
}

// suggesters hold a names.Suggester by kind of declaration (a string) or by enum field (an
// *ir.Field): one for all the unknown names of a kind, which bounds the work of a spec with
// thousands of misspelt names.
type suggesters map[any]*names.Suggester

// didYouMean suggests a near miss of name among the candidates of key (a kind of
// declaration, or an enum field), which list returns the first time.
func (l *lowerer) didYouMean(key any, name string, list func() []string) string {
	s, ok := l.keys[key]
	if !ok {
		s = names.NewSuggester(list())
		l.keys[key] = s
	}
	return s.DidYouMean(name)
}

func (l *lowerer) resolveStates() {
	var initials []*ir.State
	unsure := false // a state with errors may be the initial one
	for _, s := range l.f.States {
		st := l.st[s.Name.Value]
		if st == nil || st.Pos != s.Name.Pos {
			continue
		}
		if st.Initial {
			initials = append(initials, st)
		} else if l.broken[st] {
			unsure = true
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
		} else if a := l.afters[st.Name]; a != nil && a.ev != nil {
			st.Timeout = l.timeout(st, a.timeout())
		}
		st.Delays = l.delaysOf(st.Name)
	}
	l.initials = initials
	switch {
	case len(initials) == 0 && (unsure || l.unsure["state"]):
	case len(initials) == 0:
		p := spec.Pos{File: l.f.Path, Line: 1, Col: 1}
		if len(l.f.States) > 0 {
			p = l.f.States[0].Name.Pos
		}
		l.ds.Errorf(p, "no initial state: mark one state with initial: true")
	case len(initials) == 1:
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
	switch {
	case !t.After.Set || t.After.Bad:
	case err != nil && durationSyntax.MatchString(t.After.Value):
		l.ds.Errorf(t.After.Pos, "timeout %q is out of range: a duration is at most %s", t.After.Value, time.Duration(math.MaxInt64))
	case err != nil || d <= 0:
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
		if gu == nil || gu.Pos != g.Name.Pos || gu.Kind == ir.Logic {
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
		if g.Contains.Set {
			cmps = append(cmps, cmp{"contains", ir.Contains, g.Contains.Pos})
		}
		// Every problem of the guard is reported; the comparison is checked only when the
		// guard's shape is right and its subject is known.
		good := true
		switch {
		case g.Counter.Set && g.Field.Set:
			l.ds.Errorf(g.Field.Pos, "guard %q compares either a counter or a field, not both", gu.Name)
			good = false
		case !g.Counter.Set && !g.Field.Set:
			if len(cmps) > 0 && !g.Broken { // a broken guard may have a misspelt subject
				l.ds.Errorf(cmps[0].pos, "guard %q has %s but nothing to compare: add counter or field", gu.Name, cmps[0].name)
				continue
			}
			gu.Kind = ir.Hook
			continue
		}
		switch len(cmps) {
		case 0:
			what, ops := "counter", "at_least, below or equals"
			if g.Field.Set {
				what, ops = "field", "at_least, below, equals or contains"
			}
			if !g.Broken {
				l.ds.Errorf(g.Name.Pos, "guard %q names a %s but no comparison: add %s", gu.Name, what, ops)
			}
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
			if g.Contains.Set {
				l.ds.Errorf(g.Contains.Pos, "guard %q: contains needs a list context field, not a counter", gu.Name)
				continue
			}
			if th := thresholdOf(g); th.Len.Set {
				l.ds.Errorf(th.Len.Pos, "guard %q: a threshold len compares an int context field, not a counter", gu.Name)
				continue
			}
			if g.Equals.Set {
				if g.Equals.Bad {
					continue
				}
				if g.Equals.Kind != spec.ScalarNumber || g.Equals.Num != math.Trunc(g.Equals.Num) {
					l.ds.Errorf(g.Equals.Pos, "guard %q compares a counter, so equals takes a whole number, not %s", gu.Name, shown(g.Equals))
				}
				gu.Equals = ir.Literal{Set: true, Num: g.Equals.Num, Str: g.Equals.Text}
				continue
			}
			gu.Threshold = l.threshold(thresholdOf(g), &ir.Field{Name: c.Name, Type: ir.Type{Kind: ir.Int}}, g.Broken)
			continue
		}
		gu.Kind = ir.FieldGuard
		fd, ok := ref(l, "context field", l.fi, g.Field)
		if !ok || !good {
			continue
		}
		gu.Field, gu.Op = fd, cmps[0].op
		if l.typeUnknown[fd] {
			continue
		}
		if g.Contains.Set {
			if !fd.Type.List {
				l.ds.Errorf(g.Contains.Pos, "guard %q: contains needs a list field, but field %q is %s", gu.Name, fd.Name, fd.Type)
				continue
			}
			if fd.Type.Kind == ir.Time || fd.Type.Kind == ir.Float {
				l.ds.Errorf(g.Contains.Pos, "guard %q: contains cannot look for a value in %s field %q", gu.Name, fd.Type, fd.Name)
				continue
			}
			if g.Contains.Bad {
				continue
			}
			gu.Equals, _ = l.literal(g.Contains, fd, "contains value")
			continue
		}
		if fd.Type.Collection() {
			l.ds.Errorf(g.Field.Pos, "guard %q cannot compare %s field %q", gu.Name, fd.Type, fd.Name)
			continue
		}
		if g.Equals.Set {
			if g.Equals.Bad {
				continue
			}
			if fd.Type.Kind == ir.Time {
				l.ds.Errorf(g.Equals.Pos, "guard %q cannot compare time field %q with equals", gu.Name, fd.Name)
				continue
			}
			gu.Equals, _ = l.literal(g.Equals, fd, "equals value")
			continue
		}
		th := thresholdOf(g)
		if !fd.Type.Kind.Numeric() {
			l.ds.Errorf(th.Pos, "guard %q: %s compares numbers, but field %q is %s (use equals)", gu.Name, cmps[0].name, fd.Name, fd.Type)
			continue
		}
		if th.Len.Set {
			if fd.Type.Kind != ir.Int {
				l.ds.Errorf(th.Len.Pos, "guard %q: a threshold len is a whole number, but field %q is %s (it must be int)", gu.Name, fd.Name, fd.Type)
				continue
			}
			if th.By.Set {
				l.ds.Errorf(th.Len.Pos, "guard %q: a threshold is either by an enum field or len of a list field, not both", gu.Name)
				continue
			}
			list, ok := ref(l, "context field", l.fi, th.Len)
			if !ok || l.typeUnknown[list] {
				continue
			}
			if !list.Type.List {
				l.ds.Errorf(th.Len.Pos, "guard %q: threshold len needs a list field, but field %q is %s", gu.Name, list.Name, list.Type)
				continue
			}
			gu.Threshold = ir.Threshold{Len: list}
			continue
		}
		gu.Threshold = l.threshold(th, fd, g.Broken)
	}
}

// thresholdOf returns the guard's at_least or below threshold.
func thresholdOf(g *spec.Guard) spec.Threshold {
	if g.Below.Set {
		return g.Below
	}
	return g.AtLeast
}

// threshold resolves a comparison's number. A broken guard may have lost values of a
// threshold by an enum, so their absence is not reported.
func (l *lowerer) threshold(t spec.Threshold, subject *ir.Field, broken bool) ir.Threshold {
	if !t.By.Set {
		if t.Num.Bad || !t.Num.Set {
			return ir.Threshold{}
		}
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
	if !ok || l.typeUnknown[by] {
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
			l.ds.Errorf(v.Name.Pos, "unknown value %q of enum field %q%s", v.Name.Value, by.Name, l.didYouMean(by, v.Name.Value, func() []string { return by.Values }))
			continue
		}
		if v.Value.Kind != spec.ScalarNumber && !v.Value.Bad {
			l.ds.Errorf(v.Value.Pos, "threshold for %q must be a number", v.Name.Value)
		}
		out.Values[i], have[i] = v.Value.Num, true
	}
	for i, ok := range have {
		if !ok && !broken {
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
		limited := c.Limit.Set || c.Max.Set
		if c.Limit.Set && c.Max.Set {
			l.ds.Errorf(c.Max.Pos, "counter %q has both limit and max: give one (max: N is limit: N+1)", co.Name)
		}
		if c.Then.Set {
			if !limited && !c.Broken {
				l.ds.Errorf(c.Then.Pos, "counter %q has then but no limit", co.Name)
			}
			if l.cs != nil {
				l.ds.Errorf(c.Then.Pos, "then (a limit that redirects) %s", unsupportedInChart)
				l.cs.bad = true
			} else if st, ok := ref(l, "state", l.st, c.Then); ok {
				co.Then = st
			}
		}
		if c.Configurable.Value && !limited && !c.Broken {
			l.ds.Errorf(c.Configurable.Pos, "counter %q is configurable but has no limit or max to configure", co.Name)
		}
		if c.Summary.Set {
			if !c.Then.Set && !c.Broken {
				l.ds.Errorf(c.Summary.Pos, "counter %q has summary but no then: only a limit that redirects writes a summary (a refused transition changes nothing)", co.Name)
			}
			if fd, ok := ref(l, "context field", l.fi, c.Summary); ok {
				if fd.Type.Kind != ir.String || fd.Type.Collection() {
					l.ds.Errorf(c.Summary.Pos, "counter %q writes its summary into context field %q, which is of type %s: it must be a string", co.Name, fd.Name, fd.Type)
				} else {
					co.Summary = fd
				}
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
		if cp.EveryTransition || c.Broken { // a broken checkpoint may have a misspelt every_transition
			l.used[any(cp)] = true
		}
		for _, s := range c.Save {
			if s.Bad || slices.Contains(builtinSaves(), s.Value) || l.fi[s.Value] != nil || l.co[s.Value] != nil {
				continue
			}
			if l.unsure["context field"] || l.unsure["counter"] {
				continue
			}
			saves := func() []string { return append(append(builtinSaves(), keysOf(l.fi)...), keysOf(l.co)...) }
			l.ds.Errorf(s.Pos, "checkpoint %q saves %q, which is neither a context field, a counter nor one of %s%s",
				cp.Name, s.Value, strings.Join(builtinSaves(), ", "), l.didYouMean("checkpoint save", s.Value, saves))
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

// conds resolves guard conditions; known is false when a guard did not resolve.
func (l *lowerer) conds(ifs, unless []spec.Str) (out []ir.Cond, known bool) {
	known = true
	for i, list := range [][]spec.Str{ifs, unless} {
		for _, n := range list {
			if g, ok := ref(l, "guard", l.gu, n); ok {
				out = append(out, ir.Cond{Guard: g, Negate: i == 1})
			} else {
				known = false
			}
		}
	}
	return out, known
}

// target resolves a destination. One that does not resolve comes back as an internal
// target, which leads nowhere new, so that the checks can still walk the transition.
func (l *lowerer) target(t spec.Target) (ir.Target, bool) {
	unresolved := ir.Target{Kind: ir.Internal}
	if t.Bad {
		return unresolved, false // the schema has said what is wrong
	}
	if len(t.More) > 0 {
		l.ds.Errorf(t.More[0].Pos, "a transition of a flat machine has one target: several targets go one into each region of a parallel state, which this machine has none of")
		return unresolved, false
	}
	if t.History.Set {
		st, ok := ref(l, "state", l.st, t.History)
		if !ok {
			return unresolved, false
		}
		if !st.Remembers {
			if !l.broken[st] { // a state with errors may have a misspelt remembers
				l.ds.Errorf(t.History.Pos, "history target %q does not remember: add remembers: true to the state", st.Name)
			}
			return unresolved, false
		}
		return ir.Target{Kind: ir.History, State: st}, true
	}
	st, ok := ref(l, "state", l.st, t.State)
	if !ok {
		return unresolved, false
	}
	return ir.Target{Kind: ir.Fixed, State: st}, true
}

// trCheck is a transition resolved as far as it goes, for the checks that look at every
// transition (shadowing, reachability, dead ends, unused declarations). What is known of it
// decides which of them may use it, so that none reports a consequence of an error.
type trCheck struct {
	tr *ir.Transition // From, Events, Conds, Target, Choices and Increment, as far as resolved

	srcComplete bool // no source is missing (more may be listed: an unknown except name)
	cellsReal   bool // every source in tr.From is a real source
	evKnown     bool // tr.Events are all the events
	condsKnown  bool // tr.Conds are all the conditions
	dstKnown    bool // every target is resolved, counters' then included
	anyLike     bool // the sources are {any: true} or a group, which states with errors may join
	history     bool // a target is the history of a state
}

// shadower reports whether the transition may be said to shadow later ones in its cells.
func (c *trCheck) shadower() bool { return c.cellsReal && c.condsKnown }

// shadowee reports whether the transition may be reported as shadowed.
func (c *trCheck) shadowee() bool { return c.cellsReal && c.srcComplete && c.evKnown }

func (l *lowerer) resolveTransitions() {
	for i, t := range l.f.Transitions {
		tr := &ir.Transition{Index: i, Pos: t.Pos, Doc: t.Doc.Value, Named: !t.OnSet && !t.After.Set, Target: ir.Target{Kind: ir.Internal}}
		c := &trCheck{tr: tr, evKnown: true, condsKnown: true, dstKnown: true}
		if t.Broken {
			// What it says is as written; what it does not say may be misspelt: its
			// destination, its guards.
			l.brokenTrans = true
			c.dstKnown = false
		}
		ok := true

		// Destination.
		chooseSet := t.ChoosePos.Line > 0 // written, even if not as a list
		var dests []string
		if t.To.Set {
			dests = append(dests, "to")
		}
		if chooseSet {
			dests = append(dests, "choose")
		}
		if t.Internal.Value {
			dests = append(dests, "internal: true")
		}
		switch {
		case len(dests) == 0:
			if !t.Broken {
				l.ds.Errorf(t.Pos, "transition needs a destination: to, choose or internal: true")
			}
			ok, c.dstKnown = false, false
		case len(dests) > 1:
			// Report at the second destination, the one to delete or move.
			p := t.ChoosePos
			if dests[1] != "choose" {
				p = t.Internal.Pos
			}
			l.ds.Errorf(p, "transition has both %s and %s; keep one", dests[0], dests[1])
			ok = false
			// Either may be the one meant: both count as targets.
			tr.Target = ir.Target{Kind: ir.Internal}
			if t.To.Set {
				tg, good := l.target(t.To)
				tr.Target, c.dstKnown = tg, c.dstKnown && good
			}
			if chooseSet {
				l.choose(t, tr, c, false)
			}
		case t.To.Set:
			tg, good := l.target(t.To)
			tr.Target, ok = tg, good
			c.dstKnown = c.dstKnown && good
			c.history = tg.Kind == ir.History
		case t.Internal.Value:
			tr.Target = ir.Target{Kind: ir.Internal}
		default:
			tr.Target = ir.Target{Kind: ir.Choice}
			if !l.choose(t, tr, c, !t.Broken) {
				ok = false
			}
		}

		// Trigger.
		switch {
		case t.After.Set:
			if ev := l.afterEv[t]; ev != nil {
				tr.Events = []*ir.Event{ev}
			} else {
				ok, c.evKnown = false, false
			}
		case !t.OnSet && len(dests) == 1:
			switch {
			case t.To.History.Set, chooseSet, t.Internal.Value:
				if !t.Broken { // a broken transition may have a misspelt on
					p, what := t.To.Pos, "a history target"
					switch {
					case chooseSet:
						p, what = t.ChoosePos, "choose"
					case t.Internal.Value:
						p, what = t.Internal.Pos, "internal: true"
					}
					l.ds.Errorf(p, "a transition without on takes its event from its target state, so %s needs on: EVENT", what)
				}
				ok, c.evKnown = false, false
			default:
				if ev := l.ev[t.To.State.Value]; ev != nil && !t.Broken {
					tr.Events = []*ir.Event{ev}
					l.used[any(ev)] = true
				} else {
					c.evKnown = false
				}
			}
		case !t.OnSet || t.OnBad:
			c.evKnown = false
		case len(t.On) == 0:
			l.ds.Errorf(t.OnPos, "on lists no event, so the transition can never be taken")
			ok, c.evKnown = false, false
		}
		if len(t.Raise) > 0 {
			l.ds.Errorf(t.Raise[0].Pos, "raise is for statecharts (a spec with nested states), whose macrostep takes raised events before the next one from outside; a flat machine's program fires the next event itself")
		}
		on := t.On
		if t.After.Set {
			on = nil // on beside after is refused where it is written
		}
		for _, n := range on {
			if isDescriptor(n.Value) && l.ev[n.Value] == nil {
				l.ds.Errorf(n.Pos, "event descriptor %q: wildcards are for statecharts (a spec with nested states), where the most specific match wins; a flat machine lists its events (on: [a, b]), or takes a transition from {any: true}", n.Value)
				ok, c.evKnown = false, false
				continue
			}
			ev, good := ref(l, "event", l.ev, n)
			switch {
			case !good:
				ok, c.evKnown = false, false
			case slices.Contains(tr.Events, ev):
				l.ds.Errorf(n.Pos, "event %q is listed twice", ev.Name)
			default:
				tr.Events = append(tr.Events, ev)
			}
		}

		// Sources.
		tr.From = l.sources(t, tr, c)
		if len(tr.From) == 0 {
			ok = false
		}

		conds, known := l.exprConds(t.If, t.Unless, t.IfExpr, t.UnlessExpr, nil)
		tr.Conds = conds
		c.condsKnown = known && !t.Broken
		tr.Roles, _ = l.roleRules(t.By)
		for _, a := range t.Do {
			if ac, good := ref(l, "action", l.ac, a); good {
				tr.Actions = append(tr.Actions, ac)
			}
		}
		for _, n := range t.Increment {
			co, good := ref(l, "counter", l.co, n)
			if !good {
				c.dstKnown = false // the counter may redirect to a state
				continue
			}
			if l.brokenDecl[any(co)] && co.Then == nil {
				c.dstKnown = false // its then may be misspelt
			}
			tr.Increment = append(tr.Increment, co)
		}
		for _, n := range t.Reset {
			if co, good := ref(l, "counter", l.co, n); good {
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
		l.checks = append(l.checks, c)
	}
}

// roleRules resolves who may fire a transition (by); ok is false when a role or policy did
// not resolve (its rule is kept, without it).
func (l *lowerer) roleRules(by []spec.RoleRule) (rules []ir.RoleRule, ok bool) {
	ok = true
	for _, r := range by {
		rule := ir.RoleRule{}
		if ro, good := ref(l, "role", l.ro, r.Role); good {
			rule.Role = ro
		} else {
			ok = false
		}
		if r.Policy.Set {
			if po, good := ref(l, "policy", l.po, r.Policy); good {
				rule.Policy = po
			} else {
				ok = false
			}
		}
		rules = append(rules, rule)
	}
	return rules, ok
}

// choose resolves the candidates of a dynamic transition into tr.Choices, and when report
// is set checks them: a candidate an earlier one shadows, no default. It reports whether
// every candidate resolved.
func (l *lowerer) choose(t *spec.Transition, tr *ir.Transition, c *trCheck, report bool) bool {
	if t.ChooseBad {
		c.dstKnown = false
		return false
	}
	type earlier struct {
		pos   spec.Pos
		conds []ir.Cond
	}
	var prevs []earlier
	ok, hasDefault := true, false
	for _, ch := range t.Choose {
		conds, known := l.exprConds(ch.If, ch.Unless, ch.IfExpr, ch.UnlessExpr, nil)
		if known && report {
			for _, p := range prevs {
				if covers(p.conds, conds) {
					if len(p.conds) == 0 {
						l.ds.Errorf(ch.Pos, "choice can never be taken: the choice at %d:%d has no guard and comes first", p.pos.Line, p.pos.Col)
					} else {
						l.ds.Errorf(ch.Pos, "choice can never be taken: the choice at %d:%d comes first and its guards hold whenever these do", p.pos.Line, p.pos.Col)
					}
					break
				}
			}
			prevs = append(prevs, earlier{ch.Pos, conds})
		}
		if len(ch.If)+len(ch.Unless) == 0 && ch.IfExpr == nil && ch.UnlessExpr == nil {
			hasDefault = true
		}
		tg, good := l.target(ch.To)
		if !good {
			ok, c.dstKnown = false, false
			continue
		}
		c.history = c.history || tg.Kind == ir.History
		tr.Choices = append(tr.Choices, &ir.Candidate{Pos: ch.Pos, Conds: conds, Target: tg, Doc: ch.Doc.Value})
	}
	if !hasDefault && report {
		l.ds.Warnf(t.ChoosePos, "choose has no default (a last choice without if/unless): firing is refused when no choice holds")
	}
	return ok
}

// sources expands a transition's from into states, in state order, and records in c how
// well they are known. Only {any: true} visits every state; a group visits its members and
// a list its names, so that lowering stays linear in the spec.
func (l *lowerer) sources(t *spec.Transition, tr *ir.Transition, c *trCheck) []*ir.State {
	fr := t.From
	c.srcComplete, c.cellsReal = true, true
	if fr.Pos.Line == 0 || fr.Bad { // from is missing or malformed: the schema says so
		c.srcComplete, c.cellsReal = false, false
		return nil
	}
	if !fr.Any && !fr.Group.Set && len(fr.Except) == 0 {
		out, complete := l.listedSources(fr.States)
		c.srcComplete = complete
		return out
	}
	var fixed *ir.State
	if tr.Target.Kind == ir.Fixed {
		fixed = tr.Target.State
	}
	var cands []*ir.State // in state order
	var member func(s *ir.State) bool
	var group *ir.Group
	switch {
	case fr.Any:
		c.anyLike = true
		member = func(s *ir.State) bool { return !s.Terminal && s != fixed }
		for _, s := range l.m.States {
			if member(s) {
				cands = append(cands, s)
			}
		}
	case fr.Group.Set:
		c.anyLike = true
		g, ok := ref(l, "group", l.gr, fr.Group)
		if !ok {
			c.srcComplete, c.cellsReal = false, false
			return nil
		}
		group, cands = g, g.States
		member = func(s *ir.State) bool { return s.InGroup(g) }
	default:
		var complete bool
		cands, complete = l.listedSources(fr.States)
		c.srcComplete = complete
		set := make(map[*ir.State]bool, len(cands))
		for _, s := range cands {
			set[s] = true
		}
		member = func(s *ir.State) bool { return set[s] }
	}
	excluded := map[*ir.State]bool{}
	for _, n := range fr.Except {
		s, ok := ref(l, "state", l.st, n)
		if !ok {
			c.cellsReal = false // the unknown name may be a source, now counted as one
			continue
		}
		if !member(s) && !(fr.Any && (s.Terminal || s == fixed)) && !l.broken[s] {
			l.ds.Warnf(n.Pos, "except %q excludes a state the transition does not start from", s.Name)
		}
		excluded[s] = true
	}
	out := make([]*ir.State, 0, len(cands))
	for _, s := range cands {
		if excluded[s] {
			continue
		}
		if group != nil && s.Terminal {
			l.ds.Errorf(fr.Group.Pos, "transition leaves terminal state %q (a member of group %q; add except: [%s])", s.Name, group.Name, s.Name)
		}
		out = append(out, s)
	}
	if len(out) == 0 && (fr.Any || fr.Group.Set) && len(l.broken) == 0 {
		l.ds.Errorf(fr.Pos, "transition starts from no state: every candidate is excluded")
	}
	return out
}

// listedSources resolves a plain list of source states, in state order. complete is false
// when a name did not resolve.
func (l *lowerer) listedSources(names []spec.Str) (out []*ir.State, complete bool) {
	complete = true
	seen := make(map[*ir.State]bool, len(names))
	for _, n := range names {
		s, ok := ref(l, "state", l.st, n)
		if !ok {
			complete = false
			continue
		}
		if s.Terminal {
			l.ds.Errorf(n.Pos, "transition leaves terminal state %q", s.Name)
		}
		if seen[s] {
			l.ds.Errorf(n.Pos, "state %q is listed twice", s.Name)
			continue
		}
		seen[s] = true
		out = append(out, s)
	}
	slices.SortFunc(out, func(a, b *ir.State) int { return a.Index - b.Index })
	return out, complete
}

// cellTable holds the transitions of each (state, event) cell: a slice indexed by cell
// when the transitions as written fill a good part of the table (any: true over many
// events), a map when they are few among many cells, so that its size follows the
// transitions as written either way.
type cellTable struct {
	dense  [][]*trCheck
	sparse map[int][]*trCheck
}

func newCellTable(cells, pairs int) cellTable {
	if cells <= 4*pairs+1024 {
		return cellTable{dense: make([][]*trCheck, cells)}
	}
	return cellTable{sparse: make(map[int][]*trCheck, pairs)}
}

func (t cellTable) get(k int) []*trCheck {
	if t.dense != nil {
		return t.dense[k]
	}
	return t.sparse[k]
}

func (t cellTable) set(k int, v []*trCheck) {
	if t.dense != nil {
		t.dense[k] = v
	} else {
		t.sparse[k] = v
	}
}

// checkShadowing reports transitions that an earlier one for the same state and event
// shadows: one that is unguarded, or whose guards hold whenever the later one's do. A
// transition shadowed for every state and event it covers can never be taken (an error);
// one shadowed for only some of them, such as a {any: true} fallback after a specific rule,
// works for the rest (a warning). The (state, event) cells are kept sparse, so the check is
// linear in the transitions as written.
func (l *lowerer) checkShadowing() {
	ne := len(l.m.Events)
	pairs := 0
	for _, c := range l.checks {
		pairs += len(c.tr.From) * len(c.tr.Events)
	}
	l.cells = newCellTable(len(l.m.States)*ne, pairs)
	type shadow struct {
		s    *ir.State
		e    *ir.Event
		prev *ir.Transition
	}
	for _, c := range l.checks {
		t := c.tr
		var shadows []shadow
		pairs, uncertain := 0, c.anyLike && len(l.broken) > 0
		for _, s := range t.From {
			for _, e := range t.Events {
				key := s.Index*ne + e.Index
				cell := l.cells.get(key)
				l.cells.set(key, append(cell, c))
				if l.broken[s] { // the state may be terminal, or not a source at all
					uncertain = true
					continue
				}
				pairs++
				for _, prev := range cell {
					if prev.shadower() && covers(prev.tr.Conds, t.Conds) {
						shadows = append(shadows, shadow{s, e, prev.tr})
						break
					}
				}
			}
		}
		if len(shadows) == 0 || !c.shadowee() {
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
		if len(shadows) == pairs && !uncertain {
			l.ds.Errorf(t.Pos, "transition can never be taken from %q on %q: %s%s (nondeterminism)", sh.s.Name, sh.e.Name, why, more)
		} else {
			l.ds.Warnf(t.Pos, "transition is never taken from %q on %q: %s%s", sh.s.Name, sh.e.Name, why, more)
		}
	}
}

// table is the machine's (state, event) lookup, each cell in priority order.
func (l *lowerer) table() [][]*ir.Transition {
	ne := len(l.m.Events)
	table := make([][]*ir.Transition, len(l.m.States)*ne)
	for _, t := range l.m.Transitions {
		for _, s := range t.From {
			for _, e := range t.Events {
				table[s.Index*ne+e.Index] = append(table[s.Index*ne+e.Index], t)
			}
		}
	}
	return table
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
	seen := map[[2]int]bool{}
	for changed := true; changed; {
		changed = false
		for _, c := range l.checks {
			if len(c.tr.Events) == 0 {
				continue // never taken
			}
			for _, s := range c.tr.From {
				for _, d := range c.tr.Targets(s) {
					if d.Remembers && d != s && !seen[[2]int{d.Index, s.Index}] {
						seen[[2]int{d.Index, s.Index}] = true
						d.HistoryFrom = insertState(d.HistoryFrom, s)
						changed = true
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

// checkGraph reports states no transition leaves and states the initial state cannot
// reach. A transition from an unknown state could leave any state, so then no dead end is
// reported; one to an unknown state could reach any state, so then (if it can be taken at
// all) no state is reported unreachable. States with errors are not reported, and count
// as reachable (they may be initial).
func (l *lowerer) checkGraph() {
	m := l.m
	transitionsKnown := !l.f.Broken["transitions"] && !l.unsure["state"]
	complete, eventsKnown, anyHistory, anyUnknownSource := transitionsKnown, transitionsKnown, false, false
	hasOut := make([]bool, len(m.States))
	for _, c := range l.checks {
		if !c.srcComplete {
			complete, anyUnknownSource = false, true
		}
		if !c.evKnown && len(c.tr.From) > 0 {
			eventsKnown = false
		}
		anyHistory = anyHistory || c.history
		for _, s := range c.tr.From {
			hasOut[s.Index] = true
		}
	}
	eventsKnown = eventsKnown && complete
	for _, s := range m.States {
		if s.Terminal || l.broken[s] {
			continue
		}
		if complete && !hasOut[s.Index] {
			l.ds.Errorf(s.Pos, "non-terminal state %q has no outgoing transition (mark it terminal: true, or add one)", s.Name)
		}
		if eventsKnown && s.Timeout != nil && s.Timeout.OnExpiry != nil && len(l.cells.get(s.Index*len(m.Events)+s.Timeout.OnExpiry.Index)) == 0 {
			l.ds.Errorf(l.expiryPos[s], "timeout of state %q fires %q, which has no transition from %q", s.Name, s.Timeout.OnExpiry.Name, s.Name)
		}
	}

	if len(l.initials) == 0 || !transitionsKnown || (anyUnknownSource && anyHistory) {
		return
	}
	// Every state marked initial is a root: whichever is meant, what none reaches is
	// unreachable. So are states with errors, and the targets of transitions from unknown
	// states.
	adj := make([][]*ir.State, len(m.States))
	seen := make([]bool, len(m.States))
	var queue []*ir.State
	push := func(s *ir.State) {
		if s != nil && !seen[s.Index] {
			seen[s.Index] = true
			queue = append(queue, s)
		}
	}
	for _, s := range l.initials {
		push(s)
	}
	var brokenStates []*ir.State
	for _, s := range m.States {
		if l.broken[s] {
			brokenStates = append(brokenStates, s)
			push(s)
		}
	}
	for _, c := range l.checks {
		if len(c.tr.Events) == 0 && c.evKnown {
			continue // never taken
		}
		from := c.tr.From
		if c.anyLike && len(brokenStates) > 0 {
			from = append(slices.Clip(from), brokenStates...)
		}
		for _, s := range from {
			adj[s.Index] = append(adj[s.Index], c.tr.Targets(s)...)
		}
		if !c.srcComplete {
			for _, s := range c.tr.Targets(nil) {
				push(s)
			}
		}
	}
	for len(queue) > 0 {
		s := queue[0]
		queue = queue[1:]
		for _, d := range adj[s.Index] {
			push(d)
		}
	}
	for _, c := range l.checks {
		if c.dstKnown {
			continue
		}
		if !c.srcComplete {
			return // a transition from anywhere to anywhere
		}
		for _, s := range c.tr.From {
			if seen[s.Index] {
				return // a transition that can be taken, to anywhere
			}
		}
	}
	for _, s := range m.States {
		if !seen[s.Index] {
			l.ds.Errorf(s.Pos, "state %q is unreachable from the initial state %q", s.Name, l.initials[0].Name)
		}
	}
}

// checkUnused warns about declarations nothing refers to. A kind is left out when a
// reference of that kind did not resolve (it may have been meant for one of them), or when
// declarations that could hold such references have errors.
func (l *lowerer) checkUnused() {
	f := l.f
	brokenStates := len(l.broken) > 0
	skip := func(kind string) bool { return l.failed[kind] || l.unsure[kind] || l.brokenTrans }
	warn := func(kind string, n spec.Str, v any) {
		if !l.used[v] {
			l.ds.Warnf(n.Pos, "%s %q is never used", kind, n.Value)
		}
	}
	if !skip("event") && !brokenStates { // on_expiry
		for _, e := range f.Events {
			if ev := l.ev[e.Name.Value]; ev != nil && ev.Pos == e.Name.Pos {
				warn("event", e.Name, ev)
			}
		}
	}
	if !skip("guard") {
		for _, g := range f.Guards {
			if gu := l.gu[g.Name.Value]; gu != nil && gu.Pos == g.Name.Pos {
				warn("guard", g.Name, gu)
			}
		}
	}
	if !skip("action") && !brokenStates { // entry, exit
		for _, a := range f.Actions {
			if ac := l.ac[a.Name.Value]; ac != nil {
				warn("action", a.Name, ac)
			}
		}
	}
	if !skip("role") {
		for _, r := range f.Roles {
			if ro := l.ro[r.Name.Value]; ro != nil && !ro.All && !l.brokenDecl[any(ro)] {
				warn("role", r.Name, ro)
			}
		}
	}
	if !skip("policy") {
		for _, p := range f.Policies {
			if po := l.po[p.Name.Value]; po != nil {
				warn("policy", p.Name, po)
			}
		}
	}
	if !skip("checkpoint") {
		for _, c := range f.Checkpoints {
			if cp := l.cp[c.Name.Value]; cp != nil {
				warn("checkpoint", c.Name, cp)
			}
		}
	}
	if skip("counter") {
		return
	}
	incremented := map[*ir.Counter]bool{}
	for _, c := range l.checks {
		for _, co := range c.tr.Increment {
			incremented[co] = true
		}
	}
	if l.cs != nil {
		for _, t := range l.cs.c.Transitions {
			for _, co := range t.Increment {
				incremented[co] = true
			}
		}
	}
	for _, c := range f.Counters {
		if co := l.co[c.Name.Value]; co != nil && co.Pos == c.Name.Pos && !incremented[co] {
			l.ds.Warnf(c.Name.Pos, "counter %q is never incremented", co.Name)
		}
	}
}

// Load reads, validates and lowers one spec: the front half of every command. Every
// finding is reported: when the spec has errors that leave the rest readable, the rest is
// still lowered and checked.
func Load(path string, data []byte) (*ir.Machine, diag.List) {
	return load(path, data, true)
}

// Check reads, validates and checks one spec and returns its findings, as Load does,
// without building the machine's (state, event) lookup table: that table has a cell for
// every state and event, which for a machine of thousands of states and events costs more
// than the whole check.
func Check(path string, data []byte) diag.List {
	_, ds := load(path, data, false)
	return ds
}

func load(path string, data []byte, table bool) (*ir.Machine, diag.List) {
	return loadAs(path, data, reading{table: table, migrations: true})
}

// LoadOlder is Load for the older version of a spec that a newer one is compared with: the
// migrations it declares are left out (Machine.Migrations is nil), unread, as they say
// nothing about it (and a version read from a git revision has no directory to read their
// files from).
func LoadOlder(path string, data []byte) (*ir.Machine, diag.List) {
	return loadAs(path, data, reading{table: true})
}

// loadAs is load, read as r says.
func loadAs(path string, data []byte, r reading) (*ir.Machine, diag.List) {
	f, ds := spec.LoadPartial(path, data)
	if f == nil {
		return nil, ds
	}
	m, more := lowerAs(f, r)
	if ds.HasErrors() {
		m = nil
	}
	return m, append(ds, more...).Sorted()
}
