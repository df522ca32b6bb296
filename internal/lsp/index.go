package lsp

import (
	"bytes"
	"errors"
	"io"
	"path/filepath"
	"sort"
	"strings"

	"github.com/fsmgen/fsmgen/spec"
	"gopkg.in/yaml.v3"
)

// kind is what a name names.
type kind int

const (
	kState kind = iota + 1
	kEvent
	kGuard
	kAction
	kRole
	kPolicy
	kCounter
	kField   // a context field
	kPayload // a field of an event's payload
	kCheckpoint
	kGroup
	kLevel // a timeout level
	kSaved // an entry of a checkpoint's save: a context field, a counter or a keyword
)

var kindNames = map[kind]string{
	kState: "state", kEvent: "event", kGuard: "guard", kAction: "action", kRole: "role",
	kPolicy: "policy", kCounter: "counter", kField: "context field", kPayload: "payload field",
	kCheckpoint: "checkpoint", kGroup: "group", kLevel: "timeout level", kSaved: "saved item",
}

func (k kind) String() string { return kindNames[k] }

// sections are the top-level keys that declare names, with the kind they declare.
var sections = map[string]kind{
	"states": kState, "events": kEvent, "guards": kGuard, "actions": kAction, "roles": kRole,
	"policies": kPolicy, "counters": kCounter, "context": kField, "checkpoints": kCheckpoint,
	"timeout_levels": kLevel,
}

// decl is a declaration: a key under a section (or a state's states, an event's payload),
// or, for a group, an entry of a state's groups.
type decl struct {
	kind     kind
	name     string // as declared
	path     string // states: the dotted path from the top; others: the name
	key      *yaml.Node
	value    *yaml.Node
	occ      *occ // the declaration's name, as an occurrence
	doc      string
	parent   *decl   // a nested state's parent; a payload field's event
	children []*decl // a state's nested states; an event's payload fields
	terminal bool
	initial  bool
}

// occ is one occurrence of a name: its declaration or a reference.
type occ struct {
	kind     kind
	name     string // as written: for a state, a name or a path
	from, to int    // byte offsets of the name in the text
	decl     *decl  // set on a declaration's own occurrence
	role     string // the key the reference is under (from, to, on, if, ...)
	trans    *transition
	older    *migration // set on a migration's older name: it names a name of that spec
	implicit bool       // a transition's to: that also names its event (no on)
	quote    byte       // the quote the name is written in ('"', '\'' or 0)
	part     bool       // the name is a part of a scalar (a configuration's state)
}

// transition is one entry of transitions, as far as it could be read.
type transition struct {
	item          *yaml.Node
	from, to, on  []*occ
	guards        []*occ
	group         string
	any           bool
	always, done  bool
	doc           string
	choose        bool
	line          int // 0-based
	implicitEvent bool
}

// migration is one entry of migrations.
type migration struct {
	item *yaml.Node
	from *occ   // the from value (kind 0)
	file string // the older spec's path, resolved; "" for a fingerprint
	// pairs are its renames: older names (of the older spec) and the names here.
	pairs []renamePair
}

type renamePair struct {
	kind     kind
	old, now []*occ
}

// index is what the server knows of one spec's names: read from the yaml.v3 node tree of
// the document, with byte offsets into its text. A document that does not parse has an
// index with no root and no names.
type index struct {
	path        string
	t           *text
	root        *yaml.Node // the top-level mapping; nil when the document does not parse
	err         error      // why root is nil
	decls       []*decl
	occs        []*occ // in the order of the text
	byName      map[kind]map[string][]*decl
	transitions []*transition
	migrations  []*migration
	sectionKeys map[string]*yaml.Node
}

// parseDoc parses the first YAML document of data, as the loader does (without its
// limits on aliases, which the index never follows).
func parseDoc(data []byte) (*yaml.Node, error) {
	if len(data) > spec.MaxBytes {
		return nil, errors.New("the spec is larger than a spec may be")
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, errors.New("the spec is empty")
		}
		return nil, err
	}
	if doc.Kind == yaml.DocumentNode && len(doc.Content) > 0 {
		return doc.Content[0], nil
	}
	return nil, errors.New("the spec is empty")
}

func buildIndex(path string, t *text) *index {
	ix := &index{path: path, t: t, byName: map[kind]map[string][]*decl{}, sectionKeys: map[string]*yaml.Node{}}
	root, err := parseDoc([]byte(t.s))
	if err != nil {
		ix.err = err
		return ix
	}
	if root.Kind != yaml.MappingNode {
		ix.err = errors.New("the spec is not a mapping")
		return ix
	}
	ix.root = root
	eachPair(root, func(k, v *yaml.Node) {
		ix.sectionKeys[k.Value] = k
		switch k.Value {
		case "states":
			ix.states(v, nil, 0)
		case "events":
			ix.declare(kEvent, v, func(d *decl) {
				if p := field(d.value, "payload"); p != nil {
					eachPair(p, func(pk, pv *yaml.Node) {
						f := ix.add(kPayload, pk, pv, pk.Value)
						f.parent = d
						d.children = append(d.children, f)
					})
				}
			})
		case "guards":
			ix.declare(kGuard, v, func(d *decl) { ix.guardBody(d.value, 0) })
		case "counters":
			ix.declare(kCounter, v, func(d *decl) {
				ix.ref(kState, field(d.value, "then"), "then", nil)
				ix.ref(kField, field(d.value, "summary"), "summary", nil)
			})
		case "checkpoints":
			ix.declare(kCheckpoint, v, func(d *decl) { ix.refs(kSaved, field(d.value, "save"), "save", nil) })
		case "actions", "roles", "policies", "context", "timeout_levels":
			ix.declare(sections[k.Value], v, nil)
		case "transitions":
			if v.Kind == yaml.SequenceNode {
				for _, item := range v.Content {
					ix.transition(item)
				}
			}
		case "migrations":
			if v.Kind == yaml.SequenceNode {
				for _, item := range v.Content {
					ix.migration(item)
				}
			}
		}
	})
	// A saved item names a context field or a counter (or is a keyword).
	for _, o := range ix.occs {
		if o.kind == kSaved {
			switch {
			case len(ix.byName[kField][o.name]) > 0:
				o.kind = kField
			case len(ix.byName[kCounter][o.name]) > 0:
				o.kind = kCounter
			}
		}
	}
	sort.SliceStable(ix.occs, func(i, j int) bool { return ix.occs[i].from < ix.occs[j].from })
	return ix
}

// eachPair calls f with each key and value of a mapping (none for other nodes), the
// value's aliases followed one step.
func eachPair(m *yaml.Node, f func(k, v *yaml.Node)) {
	if m == nil || m.Kind != yaml.MappingNode {
		return
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Kind == yaml.ScalarNode {
			f(m.Content[i], m.Content[i+1])
		}
	}
}

// field returns the value of key in mapping m, or nil.
func field(m *yaml.Node, key string) *yaml.Node {
	var out *yaml.Node
	eachPair(m, func(k, v *yaml.Node) {
		if k.Value == key && out == nil {
			out = v
		}
	})
	return out
}

// scalarSpan returns the byte offsets of a scalar's value in the text: inside the quotes
// of a quoted scalar. ok is false when the text there is not the value (escapes, a
// multi-line scalar).
func (ix *index) scalarSpan(n *yaml.Node) (from, to int, ok bool) {
	from = ix.t.loaderOffset(n.Line, n.Column)
	if n.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle) != 0 {
		from++
	}
	to = from + len(n.Value)
	if to > len(ix.t.s) || ix.t.s[from:to] != n.Value {
		return from, from, false
	}
	return from, to, true
}

func (ix *index) newOcc(k kind, n *yaml.Node, role string, tr *transition) *occ {
	if n == nil || n.Kind != yaml.ScalarNode || n.Tag == "!!null" || n.Value == "" {
		return nil
	}
	from, to, ok := ix.scalarSpan(n)
	if !ok {
		return nil
	}
	o := &occ{kind: k, name: n.Value, from: from, to: to, role: role, trans: tr}
	switch {
	case n.Style&yaml.DoubleQuotedStyle != 0:
		o.quote = '"'
	case n.Style&yaml.SingleQuotedStyle != 0:
		o.quote = '\''
	}
	ix.occs = append(ix.occs, o)
	return o
}

// ref records a reference to a name of kind k written as the scalar n.
func (ix *index) ref(k kind, n *yaml.Node, role string, tr *transition) *occ {
	return ix.newOcc(k, n, role, tr)
}

// refs records the references of a name or a list of names.
func (ix *index) refs(k kind, n *yaml.Node, role string, tr *transition) []*occ {
	if n == nil {
		return nil
	}
	if n.Kind == yaml.SequenceNode {
		var out []*occ
		for _, c := range n.Content {
			if o := ix.ref(k, c, role, tr); o != nil {
				out = append(out, o)
			}
		}
		return out
	}
	if o := ix.ref(k, n, role, tr); o != nil {
		return []*occ{o}
	}
	return nil
}

// add declares the name written as key k.
func (ix *index) add(kd kind, k, v *yaml.Node, path string) *decl {
	d := &decl{kind: kd, name: k.Value, path: path, key: k, value: v}
	if doc := field(v, "doc"); doc != nil && doc.Kind == yaml.ScalarNode {
		d.doc = doc.Value
	}
	if o := ix.newOcc(kd, k, "", nil); o != nil {
		o.decl = d
		d.occ = o
	}
	ix.decls = append(ix.decls, d)
	if ix.byName[kd] == nil {
		ix.byName[kd] = map[string][]*decl{}
	}
	ix.byName[kd][path] = append(ix.byName[kd][path], d)
	if kd == kState && path != k.Value {
		// A nested state is named by its path, by its name, or (where a path is read from
		// a parent, as a history state's default) by the end of its path.
		for rest := path; ; {
			i := strings.IndexByte(rest, '.')
			if i < 0 {
				break
			}
			rest = rest[i+1:]
			ix.byName[kd][rest] = append(ix.byName[kd][rest], d)
		}
	}
	return d
}

// declare declares each key of a section's mapping, then calls body with it.
func (ix *index) declare(kd kind, m *yaml.Node, body func(d *decl)) {
	eachPair(m, func(k, v *yaml.Node) {
		d := ix.add(kd, k, v, k.Value)
		if body != nil {
			body(d)
		}
	})
}

// states declares the states of a states mapping, nested ones with their paths.
func (ix *index) states(m *yaml.Node, parent *decl, depth int) {
	if depth > spec.MaxDepth {
		return
	}
	eachPair(m, func(k, v *yaml.Node) {
		path := k.Value
		if parent != nil {
			path = parent.path + "." + k.Value
		}
		d := ix.add(kState, k, v, path)
		d.parent = parent
		if parent != nil {
			parent.children = append(parent.children, d)
		}
		if b := field(v, "initial"); b != nil && b.Value == "true" {
			d.initial = true
		}
		if b := field(v, "terminal"); b != nil && b.Value == "true" {
			d.terminal = true
		}
		eachPair(v, func(sk, sv *yaml.Node) {
			switch sk.Value {
			case "groups":
				if sv.Kind == yaml.SequenceNode {
					for _, g := range sv.Content {
						if o := ix.ref(kGroup, g, "groups", nil); o != nil {
							gd := &decl{kind: kGroup, name: g.Value, path: g.Value, key: g, value: v, occ: o, parent: d}
							o.decl = gd
							ix.decls = append(ix.decls, gd)
							if ix.byName[kGroup] == nil {
								ix.byName[kGroup] = map[string][]*decl{}
							}
							ix.byName[kGroup][g.Value] = append(ix.byName[kGroup][g.Value], gd)
						}
					}
				}
			case "requires":
				ix.refs(kField, sv, "requires", nil)
			case "entry", "exit":
				ix.refs(kAction, sv, sk.Value, nil)
			case "timeout":
				ix.ref(kEvent, field(sv, "on_expiry"), "on_expiry", nil)
			case "default":
				ix.ref(kState, sv, "default", nil)
			case "states":
				ix.states(sv, d, depth+1)
			}
		})
	})
}

// guardBody records the references of a guard's declaration.
func (ix *index) guardBody(v *yaml.Node, depth int) {
	eachPair(v, func(k, x *yaml.Node) {
		switch k.Value {
		case "counter":
			ix.ref(kCounter, x, "counter", nil)
		case "field":
			ix.ref(kField, x, "field", nil)
		case "at_least", "below":
			ix.ref(kField, field(x, "by"), "by", nil)
			ix.ref(kField, field(x, "len"), "len", nil)
		case "and", "or", "not", "in":
			ix.guardExpr(&yaml.Node{Kind: yaml.MappingNode, Content: []*yaml.Node{k, x}}, "if", nil, depth+1)
		}
	})
}

// guardExpr records the guards and states of a guard expression (or a list of them).
func (ix *index) guardExpr(n *yaml.Node, role string, tr *transition, depth int) {
	if n == nil || depth > spec.MaxDepth {
		return
	}
	switch n.Kind {
	case yaml.ScalarNode:
		if o := ix.ref(kGuard, n, role, tr); o != nil && tr != nil {
			tr.guards = append(tr.guards, o)
		}
	case yaml.SequenceNode:
		for _, c := range n.Content {
			ix.guardExpr(c, role, tr, depth+1)
		}
	case yaml.MappingNode:
		eachPair(n, func(k, v *yaml.Node) {
			switch k.Value {
			case "and", "or", "not":
				ix.guardExpr(v, role, tr, depth+1)
			case "in":
				ix.ref(kState, v, "in", tr)
			}
		})
	}
}

// target records the states of a transition's (or a choice's) to.
func (ix *index) target(n *yaml.Node, tr *transition) {
	if n == nil {
		return
	}
	if n.Kind == yaml.MappingNode {
		tr.to = append(tr.to, ix.refs(kState, field(n, "history"), "to", tr)...)
		return
	}
	tr.to = append(tr.to, ix.refs(kState, n, "to", tr)...)
}

func (ix *index) transition(item *yaml.Node) {
	if item.Kind != yaml.MappingNode {
		return
	}
	tr := &transition{item: item, line: item.Line - 1}
	ix.transitions = append(ix.transitions, tr)
	eachPair(item, func(k, v *yaml.Node) {
		switch k.Value {
		case "from":
			if v.Kind == yaml.MappingNode {
				if g := field(v, "group"); g != nil {
					tr.group = g.Value
					ix.ref(kGroup, g, "from", tr)
				}
				if a := field(v, "any"); a != nil && a.Value == "true" {
					tr.any = true
				}
				ix.refs(kState, field(v, "except"), "except", tr)
				return
			}
			tr.from = ix.refs(kState, v, "from", tr)
		case "on":
			tr.on = ix.refs(kEvent, v, "on", tr)
		case "to":
			ix.target(v, tr)
		case "if", "unless":
			ix.guardExpr(v, k.Value, tr, 0)
		case "choose":
			tr.choose = true
			if v.Kind == yaml.SequenceNode {
				for _, c := range v.Content {
					eachPair(c, func(ck, cv *yaml.Node) {
						switch ck.Value {
						case "if", "unless":
							ix.guardExpr(cv, ck.Value, tr, 0)
						case "to":
							ix.target(cv, tr)
						}
					})
				}
			}
		case "by":
			if v.Kind == yaml.SequenceNode {
				for _, r := range v.Content {
					if r.Kind == yaml.MappingNode {
						ix.ref(kRole, field(r, "role"), "by", tr)
						ix.ref(kPolicy, field(r, "policy"), "by", tr)
					} else {
						ix.ref(kRole, r, "by", tr)
					}
				}
			}
		case "do":
			ix.refs(kAction, v, "do", tr)
		case "increment", "reset":
			ix.refs(kCounter, v, k.Value, tr)
		case "checkpoint":
			ix.ref(kCheckpoint, v, "checkpoint", tr)
		case "raise":
			ix.refs(kEvent, v, "raise", tr)
		case "doc":
			tr.doc = v.Value
		case "always":
			tr.always = v.Value == "true"
		case "done":
			tr.done = v.Value == "true"
		}
	})
	// Without on (and not eventless), the event is named after the target.
	if field(item, "on") == nil && !tr.always && !tr.done && field(item, "after") == nil && !tr.choose && len(tr.to) > 0 {
		tr.implicitEvent = true
		for _, o := range tr.to {
			o.implicit = true
		}
	}
}

// migrationKinds are the sections of a migration that rename, with the kind they rename.
var migrationKinds = map[string]kind{"states": kState, "events": kEvent, "counters": kCounter, "context": kField}

func (ix *index) migration(item *yaml.Node) {
	if item.Kind != yaml.MappingNode {
		return
	}
	mg := &migration{item: item}
	ix.migrations = append(ix.migrations, mg)
	if f := field(item, "from"); f != nil {
		mg.from = ix.newOcc(0, f, "migration", nil)
		if !strings.HasPrefix(f.Value, "sha256:") && f.Value != "" {
			p := f.Value
			if !filepath.IsAbs(p) {
				p = filepath.Join(filepath.Dir(ix.path), p)
			}
			mg.file = filepath.Clean(p)
		}
	}
	eachPair(item, func(k, v *yaml.Node) {
		kd, ok := migrationKinds[k.Value]
		if k.Value == "defaults" {
			eachPair(v, func(dk, _ *yaml.Node) { ix.ref(kField, dk, "defaults", nil) })
			return
		}
		if !ok {
			return
		}
		eachPair(v, func(old, now *yaml.Node) {
			p := renamePair{kind: kd, old: ix.configuration(kd, old, "older"), now: ix.configuration(kd, now, "migration")}
			for _, o := range p.old {
				o.older = mg
			}
			mg.pairs = append(mg.pairs, p)
		})
	})
}

// configuration records the names of a migration's rename: for states, a configuration
// (the active leaves' paths joined by commas).
func (ix *index) configuration(kd kind, n *yaml.Node, role string) []*occ {
	if kd != kState || n.Kind != yaml.ScalarNode || !strings.Contains(n.Value, ",") {
		if o := ix.ref(kd, n, role, nil); o != nil {
			return []*occ{o}
		}
		return nil
	}
	from, _, ok := ix.scalarSpan(n)
	if !ok {
		return nil
	}
	var out []*occ
	at := 0
	for _, part := range strings.Split(n.Value, ",") {
		name := strings.TrimSpace(part)
		lead := len(part) - len(strings.TrimLeft(part, " "))
		if name != "" {
			o := &occ{kind: kd, name: name, from: from + at + lead, to: from + at + lead + len(name), role: role, part: true}
			ix.occs = append(ix.occs, o)
			out = append(out, o)
		}
		at += len(part) + 1
	}
	return out
}

// resolve returns the declarations a name of kind k refers to: several when it is
// ambiguous or declared twice.
func (ix *index) resolve(k kind, name string) []*decl {
	if k == kSaved {
		return nil
	}
	return ix.byName[k][name]
}

// at returns the occurrence at byte offset off (its end included, where a cursor after
// the last character stands), or nil.
func (ix *index) at(off int) *occ {
	i := sort.Search(len(ix.occs), func(i int) bool { return ix.occs[i].to >= off })
	for ; i < len(ix.occs) && ix.occs[i].from <= off; i++ {
		if off <= ix.occs[i].to {
			return ix.occs[i]
		}
	}
	return nil
}

// refersTo reports whether the occurrence o names declaration d (kind, name or path).
func (ix *index) refersTo(o *occ, d *decl) bool {
	if o.older != nil || o.kind != d.kind {
		return false
	}
	if o.decl != nil {
		return o.decl == d || (d.kind == kGroup && o.name == d.name)
	}
	for _, r := range ix.resolve(o.kind, o.name) {
		if r == d || (d.kind == kGroup && r.name == d.name) {
			return true
		}
	}
	return false
}

// uses returns the occurrences that name d, its own declaration included (for a group,
// every state that lists it), in the order of the text.
func (ix *index) uses(d *decl) []*occ {
	var out []*occ
	for _, o := range ix.occs {
		if ix.refersTo(o, d) {
			out = append(out, o)
		}
	}
	return out
}

// implicitUses returns the targets of transitions without on that name event d.
func (ix *index) implicitUses(d *decl) []*occ {
	if d.kind != kEvent {
		return nil
	}
	var out []*occ
	for _, tr := range ix.transitions {
		if !tr.implicitEvent {
			continue
		}
		for _, o := range tr.to {
			if o.name == d.name || lastSegment(o.name) == d.name {
				out = append(out, o)
			}
		}
	}
	return out
}

func lastSegment(path string) string {
	if i := strings.LastIndexByte(path, '.'); i >= 0 {
		return path[i+1:]
	}
	return path
}

// end returns the byte offset just after the last scalar of n's subtree (its start, for
// an empty collection).
func (ix *index) end(n *yaml.Node) int {
	last := ix.t.loaderOffset(n.Line, n.Column)
	var walk func(n *yaml.Node, depth int)
	walk = func(n *yaml.Node, depth int) {
		if depth > spec.MaxDepth {
			return
		}
		if n.Kind == yaml.ScalarNode || n.Kind == yaml.AliasNode {
			from := ix.t.loaderOffset(n.Line, n.Column)
			to := from + len(n.Value)
			if n.Kind == yaml.AliasNode {
				to = from + 1 + len(n.Value)
			} else if n.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle) != 0 {
				to += 2
			}
			if n.Style&(yaml.LiteralStyle|yaml.FoldedStyle) != 0 || strings.Contains(n.Value, "\n") {
				// A block scalar runs to the line before the next node: its last line of
				// text is found from its value's line count.
				line := ix.t.position(from).Line + strings.Count(strings.TrimRight(n.Value, "\n"), "\n")
				if n.Style&(yaml.LiteralStyle|yaml.FoldedStyle) != 0 {
					line++
				}
				to = ix.t.offset(Position{Line: line, Character: 1 << 30})
			}
			last = max(last, min(to, len(ix.t.s)))
			return
		}
		from := ix.t.loaderOffset(n.Line, n.Column)
		flow := n.Style&yaml.FlowStyle != 0 && (n.Kind == yaml.MappingNode || n.Kind == yaml.SequenceNode)
		if flow {
			last = max(last, from+1) // after the opening bracket
		}
		for _, c := range n.Content {
			walk(c, depth+1)
		}
		if flow {
			// The closing bracket, past commas and blanks.
			closer := byte('}')
			if n.Kind == yaml.SequenceNode {
				closer = ']'
			}
			j := last
			for j < len(ix.t.s) && strings.IndexByte(" \t\r\n,", ix.t.s[j]) >= 0 {
				j++
			}
			if j < len(ix.t.s) && ix.t.s[j] == closer {
				last = j + 1
			}
		}
	}
	walk(n, 0)
	return last
}
