package importer

import (
	"slices"
	"strings"

	"github.com/fsmgen/fsmgen/internal/diag"
	"github.com/fsmgen/fsmgen/internal/names"
)

const scxmlNS = "http://www.w3.org/2005/07/scxml"

// scxmlRefusal says why the subset refuses an SCXML element, or "".
func scxmlRefusal(name string) string {
	switch name {
	case "datamodel":
		return "<datamodel> cannot be imported: fsmgen statecharts have no data model; guards and actions are named hooks"
	case "data":
		return "<data> cannot be imported: fsmgen statecharts have no data model"
	case "invoke":
		return "<invoke> cannot be imported: an fsmgen machine invokes no services"
	case "donedata":
		return "<donedata> cannot be imported: an fsmgen state's done event carries no data"
	case "script":
		return "<script> outside <onentry>, <onexit> and <transition> cannot be imported: fsmgen statecharts have no data model"
	}
	return ""
}

// executable content the subset refuses (everything but <log> and <script>).
const execOnly = "only <log label=\"NAME\"/> and <script>NAME</script>, each naming an action, may stand in <onentry>, <onexit> and <transition>, and <raise event=\"NAME\"/> in <transition>"

type sreader struct {
	src    *source
	ds     diag.List
	ids    map[string]*node
	idAt   map[string]diag.Pos
	order  []string
	refs   []sref
	trans  []strans
	events []named // every event name where first written
	seenEv map[string]bool
	sends  []delayedSend // the <send delay> of every state's <onentry> (scxmlsend.go)
	cancel []delayedSend // the <cancel> of every state's <onexit>
}

type sref struct {
	ref string
	pos diag.Pos
	set func(*node)
}

// strans is a transition with what SCXML says about re-entering its source.
type strans struct {
	t        *trans
	src      *node
	internal bool
	typePos  diag.Pos
}

func readSCXML(src *source) (*chart, diag.List) {
	e, err := parseXML(src)
	if err != nil {
		return nil, diag.List{*err}
	}
	r := &sreader{src: src, ids: map[string]*node{}, idAt: map[string]diag.Pos{}, seenEv: map[string]bool{}}
	if !r.scxml(e) || e.name != "scxml" {
		r.ds.Errorf(e.pos, "the document's root element is <%s>, not SCXML's <scxml>", e.name)
		return nil, r.ds
	}
	c := &chart{from: "SCXML document", idPos: e.pos}
	root := &node{pos: e.pos, kind: compound}
	c.root = root
	at := r.attrs(e, "version", "name", "initial", "datamodel", "binding")
	if a, ok := at["name"]; ok {
		c.id, c.idPos = a.value, a.pos
	}
	if a, ok := at["datamodel"]; ok && a.value != "null" && a.value != "ecmascript" {
		r.ds.Errorf(a.pos, "datamodel %q cannot be imported: conditions are read as guard names, as in the null or ecmascript data model", a.value)
	}
	states := 0
	for _, k := range e.kids {
		if !r.scxml(k) {
			continue
		}
		switch k.name {
		case "state", "parallel", "final":
			states++
			r.state(root, k)
		default:
			r.refuse(k, "<scxml>")
		}
	}
	r.noText(e)
	if states == 0 {
		r.ds.Errorf(e.pos, "the document has no states: an fsmgen spec has at least one")
	}
	r.initial(root, at["initial"], nil)
	if r.ds.HasErrors() {
		return nil, r.ds
	}

	for _, x := range r.refs {
		n := r.ids[x.ref]
		if n == nil {
			r.ds.Errorf(x.pos, "target %q: no state has that id%s", x.ref, names.DidYouMean(x.ref, r.order))
			continue
		}
		x.set(n)
	}
	r.delayedSends()
	r.prefixes()
	r.wildcardOrder()
	if r.ds.HasErrors() {
		return nil, r.ds
	}
	for _, x := range r.trans {
		r.reenter(x)
	}
	return c, r.ds
}

// scxml reports whether e is an SCXML element: in SCXML's namespace, or in none. Elements
// of other namespaces are an editor's, or another tool's.
func (r *sreader) scxml(e *xelem) bool { return e.space == "" || e.space == scxmlNS }

// attrs returns the element's SCXML attributes by name, refusing those not in allowed;
// namespace declarations and attributes of other namespaces are left out.
func (r *sreader) attrs(e *xelem, allowed ...string) map[string]xattr {
	out := map[string]xattr{}
	for _, a := range e.attrs {
		switch {
		case a.space == "" && a.name == "xmlns", a.space == "xmlns", a.space != "" && a.space != scxmlNS:
		case slices.Contains(allowed, a.name):
			out[a.name] = a
		case a.name == "src":
			r.ds.Errorf(a.pos, "src (content from another document) cannot be imported")
		case a.name == "expr" && e.name == "log":
			r.ds.Errorf(a.pos, "expr of <log> cannot be imported: <log label=\"NAME\"/> names an action by its label")
		default:
			r.ds.Errorf(a.pos, "unknown attribute %q of <%s>%s", a.name, e.name, names.DidYouMean(a.name, allowed))
		}
	}
	return out
}

// refuse reports an element that may not stand where it is.
func (r *sreader) refuse(e *xelem, in string) {
	if msg := scxmlRefusal(e.name); msg != "" {
		r.ds.Errorf(e.pos, "%s", msg)
		return
	}
	r.ds.Errorf(e.pos, "<%s> cannot stand in %s", e.name, in)
}

// noText refuses text in an element that holds only elements.
func (r *sreader) noText(e *xelem) {
	if s, p := e.textOf(); strings.TrimSpace(s) != "" {
		r.ds.Errorf(p, "text cannot stand in <%s>", e.name)
	}
}

func (r *sreader) state(parent *node, e *xelem) {
	n := &node{pos: e.pos, parent: parent}
	var at map[string]xattr
	switch e.name {
	case "state":
		at = r.attrs(e, "id", "initial")
	case "parallel":
		n.kind = parallel
		at = r.attrs(e, "id")
	case "final":
		n.kind = final
		at = r.attrs(e, "id")
	case "history":
		n.kind = history
		at = r.attrs(e, "id", "type")
		if a, ok := at["type"]; ok {
			switch a.value {
			case "deep":
				n.deep = true
			case "shallow":
			default:
				r.ds.Errorf(a.pos, "type of <history> must be shallow or deep, not %q", a.value)
			}
		}
	}
	id, ok := at["id"]
	if !ok {
		r.ds.Errorf(e.pos, "<%s> has no id: an fsmgen state is named by it", e.name)
		return
	}
	n.name = id.value
	if !checkName(&r.ds, "state id", named{id.value, id.pos}, true) {
		return
	}
	if first, dup := r.idAt[id.value]; dup {
		r.ds.Errorf(id.pos, "duplicate id %q (first at %d:%d)", id.value, first.Line, first.Col)
		return
	}
	r.ids[id.value], r.idAt[id.value] = n, id.pos
	r.order = append(r.order, id.value)
	parent.children = append(parent.children, n)

	allowed := map[string][]string{
		"state":    {"onentry", "onexit", "transition", "initial", "state", "parallel", "final", "history"},
		"parallel": {"onentry", "onexit", "transition", "state", "parallel", "history"},
		"final":    {"onentry", "onexit"},
		"history":  {"transition"},
	}[e.name]
	var initial *xelem
	var def []*xelem
	for _, k := range e.kids {
		if !r.scxml(k) {
			continue
		}
		if !slices.Contains(allowed, k.name) {
			r.refuse(k, "<"+e.name+">")
			continue
		}
		switch k.name {
		case "onentry":
			r.attrs(k)
			n.entry = append(n.entry, r.exec(r.takeSends(n, k))...)
		case "onexit":
			r.attrs(k)
			n.exit = append(n.exit, r.exec(r.takeCancels(n, k))...)
		case "transition":
			if n.kind == history {
				def = append(def, k)
			} else {
				r.transition(n, k)
			}
		case "initial":
			if initial != nil {
				r.ds.Errorf(k.pos, "a second <initial> in <state id=%q>", n.name)
			}
			initial = k
		default:
			if n.kind == atomic { // a <state> with states is compound
				n.kind = compound
			}
			r.state(n, k)
		}
	}
	r.noText(e)

	switch {
	case n.kind == history:
		r.historyDefault(n, e, def)
	case n.kind == compound:
		r.initial(n, at["initial"], initial)
	case at["initial"].name != "":
		r.ds.Errorf(at["initial"].pos, "initial names a state of %q, which has no states", n.name)
	case initial != nil:
		r.ds.Errorf(initial.pos, "<initial> names a state of %q, which has no states", n.name)
	}
}

// initial sets a compound state's initial state: its initial attribute, its <initial>, or
// its first state.
func (r *sreader) initial(n *node, attr xattr, elem *xelem) {
	what := "the document"
	if n.parent != nil {
		what = quoteMsg(n.name)
	}
	var ref string
	var p diag.Pos
	switch {
	case attr.name != "" && elem != nil:
		r.ds.Errorf(elem.pos, "%s has both an initial attribute and <initial>: give one", what)
		return
	case attr.name != "":
		ref, p = attr.value, attr.pos
	case elem != nil:
		r.attrs(elem)
		r.noText(elem)
		var ts []*xelem
		for _, k := range elem.kids {
			if !r.scxml(k) {
				continue
			}
			if k.name != "transition" {
				r.refuse(k, "<initial>")
				continue
			}
			ts = append(ts, k)
		}
		if len(ts) != 1 {
			r.ds.Errorf(elem.pos, "<initial> holds one <transition>, not %d", len(ts))
			return
		}
		t := ts[0]
		at := r.attrs(t, "target")
		if len(r.exec(t)) > 0 {
			r.ds.Errorf(t.pos, "actions of an initial transition cannot be imported: fsmgen enters a state's initial state with no actions of its own")
		}
		a, ok := at["target"]
		if !ok {
			r.ds.Errorf(t.pos, "the <transition> of <initial> needs a target")
			return
		}
		ref, p = a.value, a.pos
	default:
		for _, k := range n.children {
			if k.kind != history {
				n.initial = k
				return
			}
		}
		return
	}
	fields := strings.Fields(ref)
	if len(fields) != 1 {
		r.ds.Errorf(p, "initial %q must name one state: fsmgen starts a compound state in one of its states", ref)
		return
	}
	k := n.child(fields[0])
	var cands []string
	for _, c := range n.children {
		cands = append(cands, c.name)
	}
	switch {
	case k == nil:
		r.ds.Errorf(p, "initial %q is not a state of %s: fsmgen starts a compound state in one of its own states%s", fields[0], what, names.DidYouMean(fields[0], cands))
	case k.kind == history:
		r.ds.Errorf(p, "initial %q is a history state: name the state to enter", fields[0])
	default:
		n.initial = k
	}
}

func (r *sreader) historyDefault(n *node, e *xelem, def []*xelem) {
	switch len(def) {
	case 0:
		return
	case 1:
	default:
		r.ds.Errorf(def[1].pos, "<history> holds one <transition>, its default, not %d", len(def))
		return
	}
	t := def[0]
	at := r.attrs(t, "target")
	if len(r.exec(t)) > 0 {
		r.ds.Errorf(t.pos, "actions of a history state's default transition cannot be imported: fsmgen's default is a state, entered with no actions of its own")
	}
	a, ok := at["target"]
	if !ok {
		r.ds.Errorf(t.pos, "the <transition> of <history> needs a target, the default")
		return
	}
	fields := strings.Fields(a.value)
	if len(fields) != 1 {
		r.ds.Errorf(a.pos, "the default of a history state must be one state, not %q", a.value)
		return
	}
	r.refs = append(r.refs, sref{ref: fields[0], pos: a.pos, set: func(d *node) { n.def = d }})
}

func (r *sreader) transition(src *node, e *xelem) {
	t := &trans{pos: e.pos}
	at := r.attrs(e, "event", "cond", "target", "type")
	x := strans{t: t, src: src}
	if a, ok := at["event"]; !ok {
		t.always = true
	} else {
		fields := strings.Fields(a.value)
		if len(fields) == 0 {
			r.ds.Errorf(a.pos, "event is empty: leave it out for an eventless transition")
		}
		for _, ev := range fields {
			switch {
			case ev == "*" || strings.HasSuffix(ev, ".*") || strings.HasSuffix(ev, "."):
				// A wildcard: "a." and "a.*" are one descriptor in SCXML, a.* in the spec.
				if strings.HasSuffix(ev, ".") {
					ev += "*"
				}
				t.events = append(t.events, named{ev, a.pos})
			case ev == "done.state."+src.name && len(fields) == 1:
				t.done = true
			case strings.HasPrefix(ev, "done.state."):
				if len(fields) > 1 {
					r.ds.Errorf(a.pos, "%s cannot share a transition with other events: give it a <transition> of its own", ev)
				} else {
					r.ds.Errorf(a.pos, "%s on a transition of %q cannot be imported: an fsmgen done transition is written on the state that is done", ev, src.name)
				}
			case strings.HasPrefix(ev, "done.") || strings.HasPrefix(ev, "error."):
				r.ds.Errorf(a.pos, "event %q is raised by an SCXML processor, which fsmgen does not raise", ev)
			default:
				if n := (named{ev, a.pos}); checkName(&r.ds, "event name", n, false) {
					t.events = append(t.events, n)
					if !r.seenEv[ev] {
						r.seenEv[ev] = true
						r.events = append(r.events, n)
					}
				}
			}
		}
	}
	if a, ok := at["cond"]; ok {
		if x, ok := r.scond(a); ok {
			setGuard(t, x)
		}
	}
	if a, ok := at["target"]; ok {
		fields := strings.Fields(a.value)
		switch len(fields) {
		case 0:
			r.ds.Errorf(a.pos, "target is empty: leave it out for a transition without one")
		default:
			// Several targets: one in each region of a parallel state.
			r.refs = append(r.refs, sref{ref: fields[0], pos: a.pos, set: func(n *node) { t.target = n }})
			for _, f := range fields[1:] {
				r.refs = append(r.refs, sref{ref: f, pos: a.pos, set: func(n *node) { t.more = append(t.more, n) }})
			}
		}
	}
	if a, ok := at["type"]; ok {
		switch a.value {
		case "internal":
			x.internal, x.typePos = true, a.pos
		case "external":
		default:
			r.ds.Errorf(a.pos, "type of <transition> must be internal or external, not %q", a.value)
		}
	}
	t.do, t.raise = r.execRaising(e)
	src.trans = append(src.trans, t)
	r.trans = append(r.trans, x)
}

// exec reads executable content: the actions named by <log label="NAME"/> and
// <script>NAME</script>.
func (r *sreader) exec(e *xelem) []named {
	out, raised := r.execRaising(e)
	for _, ev := range raised {
		r.ds.Errorf(ev.pos, "<raise> here cannot be imported: an fsmgen state raises no events; raise %q on the transitions into it", ev.name)
	}
	return out
}

// execRaising reads executable content as exec does, and the events its <raise event="E"/>
// elements raise.
func (r *sreader) execRaising(e *xelem) (out, raised []named) {
	for _, k := range e.kids {
		if !r.scxml(k) {
			r.ds.Errorf(k.pos, "<%s> (namespace %q) cannot be imported: %s", k.name, k.space, execOnly)
			continue
		}
		var a named
		switch k.name {
		case "log":
			at := r.attrs(k, "label")
			r.noText(k)
			l, ok := at["label"]
			if !ok {
				r.ds.Errorf(k.pos, "<log> without a label cannot be imported: its label names the action")
				continue
			}
			a = named{l.value, l.pos}
		case "script":
			r.attrs(k)
			for _, kk := range k.kids {
				r.ds.Errorf(kk.pos, "<%s> cannot stand in <script>", kk.name)
			}
			s, p := k.textOf()
			a = named{strings.TrimSpace(s), p}
		case "raise":
			at := r.attrs(k, "event")
			r.noText(k)
			if ev, ok := at["event"]; !ok || ev.value == "" {
				r.ds.Errorf(k.pos, "<raise> without an event cannot be imported")
			} else if n := (named{ev.value, ev.pos}); checkName(&r.ds, "event name", n, false) {
				raised = append(raised, n)
				if !r.seenEv[n.name] {
					r.seenEv[n.name] = true
					r.events = append(r.events, n)
				}
			}
			continue
		default:
			r.ds.Errorf(k.pos, "<%s> cannot be imported: %s", k.name, execOnly)
			continue
		}
		if !identRE.MatchString(a.name) {
			r.ds.Errorf(a.pos, "action %q cannot be imported: <%s> must name an action, a plain identifier", a.name, k.name)
			continue
		}
		out = append(out, a)
	}
	r.noText(e)
	return out, raised
}

// wildcardOrder refuses a state whose transitions SCXML and the spec would try in different
// orders: SCXML tries them in document order whatever their descriptors, the spec (as
// XState) a transition on the event itself before wildcards, and longer wildcards before
// shorter ones. So a wildcard transition written before a transition it outranks the
// other way round for some event cannot be imported.
func (r *sreader) wildcardOrder() {
	rank := func(d string) int { // lower is tried first in the spec
		if !isDescriptor(d) {
			return 0
		}
		return 1_000_000 - len(d)
	}
	overlaps := func(a, b string) bool { // some event both a and b match
		match := func(d, ev string) bool {
			p, ok := strings.CutSuffix(d, ".*")
			return d == "*" || d == ev || ok && (ev == p || strings.HasPrefix(ev, p+"."))
		}
		for _, e := range r.events {
			if match(a, e.name) && match(b, e.name) {
				return true
			}
		}
		return false
	}
	done := map[*node]bool{}
	for _, x := range r.trans {
		src := x.src
		if done[src] {
			continue
		}
		done[src] = true
		for i, t1 := range src.trans {
			for _, t2 := range src.trans[i+1:] {
				for _, a := range t1.events {
					for _, b := range t2.events {
						if rank(b.name) < rank(a.name) && overlaps(a.name, b.name) {
							r.ds.Errorf(a.pos, "%q is written before %q (%d:%d) in the same state: SCXML tries it first, the spec (as XState) tries the more specific %q first; write the more specific transition first", a.name, b.name, b.pos.Line, b.pos.Col, b.name)
							return
						}
					}
				}
			}
		}
	}
}

// prefixes refuses event names one of which is a prefix of another at a dot: in SCXML the
// descriptor "a" matches the event "a.b", in fsmgen only "a".
func (r *sreader) prefixes() {
	for _, a := range r.events {
		for _, b := range r.events {
			if strings.HasPrefix(b.name, a.name+".") {
				r.ds.Errorf(a.pos, "event %q also matches %q (%d:%d) in SCXML, where a descriptor matches the events it is a prefix of; fsmgen matches names exactly: rename one", a.name, b.name, b.pos.Line, b.pos.Col)
				break
			}
		}
	}
}

// reenter decides whether the transition re-enters its source, as SCXML does: a transition
// exits its source unless it is internal, its source is compound and every state it enters
// lies strictly within the source. fsmgen re-enters the source only when the target is the
// source or reenter: true says so.
func (r *sreader) reenter(x strans) {
	t, src := x.t, x.src
	if t.target == nil {
		return
	}
	yes, no := true, false
	tg := t.target
	if len(t.more) > 0 {
		// Several targets: SCXML re-enters the source unless the transition is internal,
		// the source compound, and every target strictly within it.
		inside, self := true, false
		for _, n := range append([]*node{tg}, t.more...) {
			if n.kind == history {
				r.ds.Errorf(t.pos, "a transition with several targets, one a history state (%q), cannot be imported: target states", n.name)
				return
			}
			inside = inside && n.isDescendant(src)
			self = self || n == src
		}
		switch {
		case inside && x.internal && src.kind == compound:
			t.reenter = &no
		case inside || self:
			t.reenter = &yes
		}
		return
	}
	if tg.kind == history {
		h := tg.parent // the states a history target enters lie within h
		switch {
		case !x.internal || src.kind != compound:
			t.reenter = &yes
		case h == src || h.isDescendant(src):
			t.reenter = &no
		case src.isDescendant(h):
			r.ds.Errorf(x.typePos, "type=\"internal\" on a transition from %q to history state %q, whose parent holds %q, cannot be imported: whether SCXML re-enters %q depends on what the history restores", src.name, tg.name, src.name, src.name)
		}
		return
	}
	switch {
	case tg == src:
		t.reenter = &yes
	case tg.isDescendant(src):
		if x.internal && src.kind == compound {
			t.reenter = &no
		} else {
			t.reenter = &yes
		}
	}
}
