package importer

import (
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/fsmgen/fsmgen/internal/diag"
	"github.com/fsmgen/fsmgen/internal/names"
)

// xstateStateKeys are the keys of an XState state node the subset reads; meta is read and
// left out.
func xstateStateKeys() []string {
	return []string{"id", "description", "type", "history", "target", "initial", "states",
		"on", "always", "after", "onDone", "entry", "exit", "meta"}
}

func xstateTransKeys() []string {
	return []string{"target", "guard", "actions", "reenter", "description", "meta"}
}

// xstateStateRefusal says why the subset refuses a key of an XState state node, or "".
func xstateStateRefusal(key string) string {
	switch key {
	case "invoke":
		return "invoke (invoked actors) cannot be imported: an fsmgen machine invokes no actors"
	case "context":
		return "context (extended state) cannot be imported: declare the context the machine needs in the spec"
	case "output":
		return "output cannot be imported: an fsmgen machine and its final states have no output"
	case "tags":
		return "tags cannot be imported: fsmgen states have no tags"
	}
	return ""
}

// xstateTransRefusal says why the subset refuses a key of an XState transition, or "".
func xstateTransRefusal(key string) string {
	switch key {
	case "cond":
		return "cond is XState v4's name for a guard: XState v5 and the import read guard"
	case "internal":
		return "internal is XState v4's: XState v5 and the import read reenter (internal: false is reenter: true)"
	case "in":
		return "in is XState v4's state guard: XState v5 and the import read guard: {\"type\": \"xstate.stateIn\", \"stateValue\": \"#id\"}"
	}
	return ""
}

type xreader struct {
	src   *source
	ds    diag.List
	root  *node
	ids   map[string]*node
	idAt  map[string]diag.Pos
	order []string // ids in the order declared, for "did you mean"
	refs  []xref
	trans []xtrans
}

// xref is a target to resolve once every state (and id) is read.
type xref struct {
	from *node // the state the target is written on
	ref  string
	pos  diag.Pos
	set  func(*node)
}

// xtrans is a transition with its reenter as XState reads it.
type xtrans struct {
	t       *trans
	src     *node
	reenter bool
}

func readXState(src *source) (*chart, diag.List) {
	v, err := parseJSON(src)
	if err != nil {
		return nil, diag.List{*err}
	}
	r := &xreader{src: src, ids: map[string]*node{}, idAt: map[string]diag.Pos{}}
	c := &chart{from: "XState machine config", idPos: v.pos}
	if v.kind != jObject {
		r.ds.Errorf(v.pos, "an XState machine config is an object, not %s", v.kind)
		return nil, r.ds
	}
	root := &node{pos: v.pos, kind: compound}
	r.root = root
	c.root = root
	if m := member(v, "id"); m != nil {
		if m.value.kind == jString { // state reports an id that is not
			c.id, c.idPos = m.value.str, m.value.pos
		}
	} else {
		r.addID("(machine)", root, v.pos) // XState's id for a machine without one
	}
	r.state(root, v)
	if r.ds.HasErrors() {
		return nil, r.ds
	}
	if root.kind == atomic && len(root.trans) == 0 && len(root.entry)+len(root.exit) == 0 {
		r.ds.Errorf(v.pos, "the machine has no states: an fsmgen spec has at least one")
		return nil, r.ds
	}

	targetsRoot := false
	for _, x := range r.refs {
		n := r.resolve(x.from, x.ref, x.pos)
		if n != nil {
			x.set(n)
			targetsRoot = targetsRoot || n == root
		}
	}
	if r.ds.HasErrors() {
		return nil, r.ds
	}
	c.doc = root.doc
	root.doc = ""
	c.wrap = root.kind != compound || len(root.trans) > 0 || len(root.entry)+len(root.exit) > 0 || targetsRoot
	for _, k := range root.children {
		c.wrap = c.wrap || k.kind == history
	}
	c.wrapName = c.id
	if c.wrapName == "" {
		c.wrapName = "machine"
	}
	// The id names the state that holds the machine's states.
	if c.wrap && !checkName(&r.ds, "id", named{c.wrapName, c.idPos}, true) {
		return nil, r.ds
	}

	// XState does not re-enter the source of a transition to itself or to a state within
	// it unless reenter: true; fsmgen re-enters a self-target by default. So reenter is
	// written where it matters, and where XState's config says true. (A final state of
	// the machine that stays outside the wrapped root is not within it.)
	for _, x := range r.trans {
		t := x.t
		if t.target == nil {
			continue
		}
		within := true
		for _, n := range append([]*node{t.target}, t.more...) {
			within = within && (n == x.src || n.isDescendant(x.src) && !c.outside(n))
		}
		if within || x.reenter {
			v := x.reenter
			t.reenter = &v
		}
	}
	return c, r.ds
}

func member(v *jvalue, key string) *jmember {
	for i := range v.members {
		if v.members[i].key == key {
			return &v.members[i]
		}
	}
	return nil
}

func (r *xreader) str(v *jvalue, what string) (string, bool) {
	if v.kind != jString {
		r.ds.Errorf(v.pos, "%s must be a string, not %s", what, v.kind)
		return "", false
	}
	return v.str, true
}

// describe names a state in a message by its keys from the root.
func describe(n *node) string {
	if n.parent == nil {
		return "the machine"
	}
	var parts []string
	for x := n; x.parent != nil; x = x.parent {
		parts = append(parts, x.name)
	}
	slices.Reverse(parts)
	return "state " + quoteMsg(strings.Join(parts, "."))
}

func quoteMsg(s string) string { return `"` + strings.ReplaceAll(s, `"`, `\"`) + `"` }

func (r *xreader) addID(id string, n *node, p diag.Pos) {
	if first, dup := r.idAt[id]; dup {
		r.ds.Errorf(p, "duplicate id %q (first at %d:%d)", id, first.Line, first.Col)
		return
	}
	r.ids[id], r.idAt[id] = n, p
	r.order = append(r.order, id)
}

// state reads the state node v into n.
func (r *xreader) state(n *node, v *jvalue) {
	isRoot := n.parent == nil
	if v.kind != jObject {
		r.ds.Errorf(v.pos, "%s must be an object, not %s", describe(n), v.kind)
		return
	}
	m := map[string]*jmember{}
	for i := range v.members {
		mb := &v.members[i]
		switch {
		case xstateStateRefusal(mb.key) != "":
			r.ds.Errorf(mb.keyPos, "%s", xstateStateRefusal(mb.key))
		case isRoot && mb.key == "version": // the machine's version: left out, as meta is
		case !slices.Contains(xstateStateKeys(), mb.key):
			r.ds.Errorf(mb.keyPos, "unknown key %q in %s%s", mb.key, describe(n), names.DidYouMean(mb.key, xstateStateKeys()))
		default:
			m[mb.key] = mb
		}
	}

	// What the state is.
	typ := ""
	if mb := m["type"]; mb != nil {
		typ, _ = r.str(mb.value, "type")
	}
	states := m["states"]
	if states != nil && states.value.kind != jObject {
		r.ds.Errorf(states.value.pos, "states must be an object, not %s", states.value.kind)
		states = nil
	}
	hasStates := states != nil && len(states.value.members) > 0
	switch typ {
	case "":
		if hasStates {
			n.kind = compound
		}
	case "atomic":
		if hasStates {
			r.ds.Errorf(m["type"].value.pos, "%s is atomic but has states", describe(n))
		}
	case "compound":
		n.kind = compound
		if !hasStates {
			r.ds.Errorf(m["type"].value.pos, "%s is compound but has no states", describe(n))
		}
	case "parallel":
		n.kind = parallel
	case "final":
		n.kind = final
	case "history":
		n.kind = history
	default:
		r.ds.Errorf(m["type"].value.pos, "type %q is not one of atomic, compound, parallel, final, history", typ)
	}
	if isRoot && (n.kind == final || n.kind == history) {
		r.ds.Errorf(m["type"].value.pos, "the machine itself cannot be a %s state", typ)
	}

	if mb := m["id"]; mb != nil {
		if id, ok := r.str(mb.value, "id"); ok {
			r.checkID(id, n, mb.value.pos)
		}
	}
	if mb := m["description"]; mb != nil {
		n.doc, _ = r.str(mb.value, "description")
	}

	if states != nil {
		for i := range states.value.members {
			sm := &states.value.members[i]
			k := &node{name: sm.key, pos: sm.keyPos, parent: n}
			if !checkName(&r.ds, "state name", named{sm.key, sm.keyPos}, true) {
				continue
			}
			n.children = append(n.children, k)
			r.state(k, sm.value)
		}
	}

	// Initial state.
	if mb := m["initial"]; mb != nil {
		if name, ok := r.str(mb.value, "initial"); ok {
			switch {
			case n.kind == parallel:
				r.ds.Errorf(mb.keyPos, "initial belongs to compound states: every region of parallel %s is entered", describe(n))
			case n.kind != compound:
				r.ds.Errorf(mb.keyPos, "initial names a state of %s, which has no states", describe(n))
			case n.child(name) == nil:
				var cands []string
				for _, k := range n.children {
					cands = append(cands, k.name)
				}
				r.ds.Errorf(mb.value.pos, "initial %q is not a state of %s%s", name, describe(n), names.DidYouMean(name, cands))
			default:
				n.initial = n.child(name)
				if n.initial.kind == history {
					r.ds.Errorf(mb.value.pos, "initial %q is a history state: name the state to enter", name)
				}
			}
		}
	} else if n.kind == compound && len(n.children) > 0 {
		r.ds.Errorf(n.pos, "%s has states but no initial: name the state it starts in with initial", describe(n))
	}

	// History.
	if mb := m["history"]; mb != nil {
		if h, ok := r.str(mb.value, "history"); ok {
			switch {
			case n.kind != history:
				r.ds.Errorf(mb.keyPos, "history belongs to history states (type: \"history\")")
			case h == "deep":
				n.deep = true
			case h != "shallow":
				r.ds.Errorf(mb.value.pos, "history must be \"shallow\" or \"deep\", not %q", h)
			}
		}
	}
	if mb := m["target"]; mb != nil {
		if n.kind != history {
			r.ds.Errorf(mb.keyPos, "target belongs to history states (type: \"history\"): a transition's goes under on, always or onDone")
		} else if ref, p, ok := r.target(mb.value); ok {
			r.refs = append(r.refs, xref{from: n, ref: ref, pos: p, set: func(d *node) { n.def = d }})
		}
	}

	// Actions and transitions, in the order written.
	for i := range v.members {
		mb := &v.members[i]
		if m[mb.key] != mb {
			continue
		}
		switch mb.key {
		case "entry":
			n.entry = append(n.entry, r.actions(mb.value)...)
		case "exit":
			n.exit = append(n.exit, r.actions(mb.value)...)
		case "on":
			if mb.value.kind != jObject {
				r.ds.Errorf(mb.value.pos, "on must be an object of events, not %s", mb.value.kind)
				continue
			}
			for j := range mb.value.members {
				em := &mb.value.members[j]
				if r.event(em) {
					r.transitions(n, em.value, []named{{em.key, em.keyPos}}, false, false)
				}
			}
		case "always":
			r.transitions(n, mb.value, nil, true, false)
		case "after":
			r.after(n, mb.value)
		case "onDone":
			if isRoot {
				r.ds.Errorf(mb.keyPos, "onDone of the machine itself cannot be imported: nothing above the machine takes it")
				continue
			}
			r.transitions(n, mb.value, nil, false, true)
		}
	}
}

// after reads a state's delayed transitions: an object whose keys are delays in
// milliseconds, each its own delay of the state (several make several clocks). A delay
// written as a name (one the machine's options define) cannot be imported.
func (r *xreader) after(n *node, v *jvalue) {
	if v.kind != jObject {
		r.ds.Errorf(v.pos, "after must be an object of delays in milliseconds, not %s", v.kind)
		return
	}
	for j := range v.members {
		em := &v.members[j]
		ms, err := strconv.ParseInt(em.key, 10, 64)
		switch {
		case err != nil && strings.Trim(em.key, "0123456789") == "":
			r.ds.Errorf(em.keyPos, "delay %q is too long: a delay is at most %d milliseconds", em.key, int64(math.MaxInt64/time.Millisecond))
			continue
		case err != nil:
			// A named delay, whose value the machine's options define (Options.Delays).
			k := len(n.trans)
			r.transitions(n, em.value, nil, false, false)
			for _, t := range n.trans[k:] {
				t.delay = named{em.key, em.keyPos}
			}
			continue
		case ms <= 0 || ms > int64(math.MaxInt64/time.Millisecond):
			r.ds.Errorf(em.keyPos, "delay %q must be a positive number of milliseconds, at most %d", em.key, int64(math.MaxInt64/time.Millisecond))
			continue
		}
		k := len(n.trans)
		r.transitions(n, em.value, nil, false, false)
		for _, t := range n.trans[k:] {
			t.after = msDuration(ms)
		}
	}
}

// msDuration writes ms milliseconds in the largest unit that divides them ("2m",
// "1500ms"), as a person writes a delay: a state's several delays are named by it.
func msDuration(ms int64) string {
	for _, u := range []struct {
		ms   int64
		unit string
	}{{3600000, "h"}, {60000, "m"}, {1000, "s"}} {
		if ms%u.ms == 0 {
			return strconv.FormatInt(ms/u.ms, 10) + u.unit
		}
	}
	return strconv.FormatInt(ms, 10) + "ms"
}

func (r *xreader) checkID(id string, n *node, p diag.Pos) {
	switch {
	case id == "":
		r.ds.Errorf(p, "id is empty")
	case strings.Contains(id, "."):
		r.ds.Errorf(p, "id %q holds a dot: a target \"#%s\" would name a state within %q; rename it", id, id, id[:strings.Index(id, ".")])
	default:
		r.addID(id, n, p)
	}
}

// event checks an event name of on.
func (r *xreader) event(em *jmember) bool {
	e := named{em.key, em.keyPos}
	switch {
	case e.name == "":
		r.ds.Errorf(e.pos, "the event \"\" is XState v4's eventless transition: XState v5 and the import read always")
	case isDescriptor(e.name):
		return true // a wildcard: the checker reads it
	case strings.HasPrefix(e.name, "xstate."):
		r.ds.Errorf(e.pos, "event %q is raised by XState itself and cannot be imported (a state's done event is onDone)", e.name)
	default:
		return checkName(&r.ds, "event name", e, false)
	}
	return false
}

// transitions reads a transition value: a target, a transition object, or an array of
// those.
func (r *xreader) transitions(src *node, v *jvalue, events []named, always, done bool) {
	switch v.kind {
	case jString, jObject:
		r.transition(src, v, events, always, done)
	case jArray:
		for _, el := range v.elems {
			if el.kind == jString || el.kind == jObject {
				r.transition(src, el, events, always, done)
			} else {
				r.ds.Errorf(el.pos, "a transition is a target (a string) or an object, not %s", el.kind)
			}
		}
	default:
		r.ds.Errorf(v.pos, "a transition is a target (a string), an object or an array of them, not %s", v.kind)
	}
}

func (r *xreader) transition(src *node, v *jvalue, events []named, always, done bool) {
	t := &trans{pos: v.pos, events: events, always: always, done: done}
	var target *jvalue
	var reenter *jmember
	if v.kind == jString {
		target = v
	} else {
		for i := range v.members {
			mb := &v.members[i]
			switch mb.key {
			case "target":
				target = mb.value
			case "guard":
				r.guard(t, mb.value)
			case "actions":
				t.do, t.raise = r.actionsRaising(mb.value)
			case "reenter":
				if mb.value.kind != jBool {
					r.ds.Errorf(mb.value.pos, "reenter must be true or false, not %s", mb.value.kind)
				} else {
					reenter = mb
				}
			case "description":
				t.doc, _ = r.str(mb.value, "description")
			case "meta":
			default:
				if msg := xstateTransRefusal(mb.key); msg != "" {
					r.ds.Errorf(mb.keyPos, "%s", msg)
				} else {
					r.ds.Errorf(mb.keyPos, "unknown key %q in a transition%s", mb.key, names.DidYouMean(mb.key, xstateTransKeys()))
				}
			}
		}
	}
	x := xtrans{t: t, src: src, reenter: reenter != nil && reenter.value.b}
	if target != nil {
		elems := []*jvalue{target}
		if target.kind == jArray && len(target.elems) > 1 {
			elems = target.elems // several targets, one in each region of a parallel state
		}
		for i, v := range elems {
			ref, p, ok := r.target(v)
			if !ok {
				continue
			}
			set := func(n *node) { t.target = n }
			if i > 0 {
				set = func(n *node) { t.more = append(t.more, n) }
			}
			r.refs = append(r.refs, xref{from: src, ref: ref, pos: p, set: set})
		}
	} else if x.reenter {
		r.ds.Errorf(reenter.keyPos, "reenter: true on a transition without a target: XState exits and enters nothing for it; remove reenter")
	}
	src.trans = append(src.trans, t)
	r.trans = append(r.trans, x)
}

// target reads a target: a string, or an array of one.
func (r *xreader) target(v *jvalue) (string, diag.Pos, bool) {
	if v.kind == jArray {
		switch len(v.elems) {
		case 0:
			r.ds.Errorf(v.pos, "target is an empty array: leave target out for a transition without one")
			return "", v.pos, false
		case 1:
			v = v.elems[0]
		default:
			r.ds.Errorf(v.elems[1].pos, "several targets where one is expected")
			return "", v.pos, false
		}
	}
	s, ok := r.str(v, "a target")
	if ok && s == "" {
		r.ds.Errorf(v.pos, "target is empty: leave target out for a transition without one")
		ok = false
	}
	return s, v.pos, ok
}

// resolve finds the state a target names, as XState does: "#id" and "#id.a.b" by id, ".a"
// a state of the state the transition is written on, "a" (and "a.b") a sibling.
func (r *xreader) resolve(from *node, ref string, p diag.Pos) *node {
	var base *node
	var path []string
	switch {
	case strings.HasPrefix(ref, "#"):
		parts := strings.Split(ref[1:], ".")
		base = r.ids[parts[0]]
		if base == nil {
			r.ds.Errorf(p, "target %q: no state has id %q%s", ref, parts[0], names.DidYouMean(parts[0], r.order))
			return nil
		}
		path = parts[1:]
	case strings.HasPrefix(ref, "."):
		base, path = from, strings.Split(ref[1:], ".")
	case from.parent == nil:
		r.ds.Errorf(p, "target %q of the machine itself: write %q for a state of the machine, or \"#id\"", ref, "."+ref)
		return nil
	default:
		base, path = from.parent, strings.Split(ref, ".")
	}
	n := base
	for _, name := range path {
		k := n.child(name)
		if k == nil {
			var cands []string
			for _, c := range n.children {
				cands = append(cands, c.name)
			}
			r.ds.Errorf(p, "target %q: %s has no state %q%s", ref, describe(n), name, names.DidYouMean(name, cands))
			return nil
		}
		n = k
	}
	return n
}

// guard reads a transition's guard (xguard).
func (r *xreader) guard(t *trans, v *jvalue) {
	if x, ok := r.xguard(v); ok {
		setGuard(t, x)
	}
}

// actions reads actions: a name, {type: name}, or an array of those.
func (r *xreader) actions(v *jvalue) []named {
	out, raised := r.actionsRaising(v)
	for _, e := range raised {
		r.ds.Errorf(e.pos, "raise in entry or exit actions cannot be imported: an fsmgen state raises no events; raise %q on the transitions into it", e.name)
	}
	return out
}

// actionsRaising reads actions, and the events raised among them: XState's raise action,
// {"type": "xstate.raise", "event": {"type": name}}.
func (r *xreader) actionsRaising(v *jvalue) (out, raised []named) {
	one := func(v *jvalue) {
		a := named{pos: v.pos}
		switch v.kind {
		case jString:
			a.name = v.str
		case jObject:
			typ := member(v, "type")
			if typ == nil {
				r.ds.Errorf(v.pos, "an action object needs a type, the action's name")
				return
			}
			name, ok := r.str(typ.value, "an action's type")
			if !ok {
				return
			}
			if name == "xstate.raise" {
				if e, ok := r.raised(v); ok {
					raised = append(raised, e)
				}
				return
			}
			a = named{name, typ.value.pos}
			for i := range v.members {
				mb := &v.members[i]
				switch mb.key {
				case "type":
				case "params":
					r.ds.Errorf(mb.keyPos, "action %q has params, which cannot be imported: an fsmgen action is a named hook without arguments", name)
					return
				default:
					r.ds.Errorf(mb.keyPos, "unknown key %q in action %q: an action object is {\"type\": name}", mb.key, name)
					return
				}
			}
		default:
			r.ds.Errorf(v.pos, "an action is a name or an object with a type, not %s", v.kind)
			return
		}
		if strings.HasPrefix(a.name, "xstate.") {
			r.ds.Errorf(a.pos, "action %q is one of XState's own and cannot be imported: fsmgen actions are named hooks", a.name)
			return
		}
		if checkName(&r.ds, "action name", a, false) {
			out = append(out, a)
		}
	}
	if v.kind == jArray {
		for _, el := range v.elems {
			one(el)
		}
	} else {
		one(v)
	}
	return out, raised
}

// raised reads the event of a raise action: {"type": "xstate.raise", "event": {"type":
// name}}; a delay or an id cannot be imported.
func (r *xreader) raised(v *jvalue) (named, bool) {
	var ev *jvalue
	for i := range v.members {
		mb := &v.members[i]
		switch mb.key {
		case "type":
		case "event":
			ev = mb.value
		default:
			r.ds.Errorf(mb.keyPos, "%s of a raise action cannot be imported: fsmgen raises an event at once, by its name", mb.key)
			return named{}, false
		}
	}
	if ev == nil || ev.kind != jObject || member(ev, "type") == nil || len(ev.members) != 1 {
		r.ds.Errorf(v.pos, "a raise action's event must be {\"type\": name}")
		return named{}, false
	}
	typ := member(ev, "type")
	name, ok := r.str(typ.value, "a raised event's type")
	if !ok {
		return named{}, false
	}
	e := named{name, typ.value.pos}
	return e, checkName(&r.ds, "event name", e, false)
}
