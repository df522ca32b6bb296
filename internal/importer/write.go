package importer

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/fsmgen/fsmgen/internal/diag"
	"github.com/fsmgen/fsmgen/internal/names"
)

// writer collects the spec's lines and, for each, the input position it comes from.
type writer struct {
	b     strings.Builder
	lines []diag.Pos
}

func (w *writer) line(p diag.Pos, format string, args ...any) {
	fmt.Fprintf(&w.b, format, args...)
	w.b.WriteByte('\n')
	w.lines = append(w.lines, p)
}

// layout decides where each state goes in the spec and sets its path. It returns the
// top-level states and which states are marked initial.
//
// Without wrap, the root's states are the spec's top level. With wrap, the root is a
// top-level state itself (its states inside, so that its transitions, actions and history
// states apply to them), except that the final states of a compound root stay at the top
// level: entering one ends the machine, as it ends an XState machine, which then takes no
// event of the root's.
func (c *chart) layout() (top []*node, initial map[*node]bool) {
	initial = map[*node]bool{}
	root := c.root
	if !c.wrap {
		top = root.children
		root.path = ""
	} else {
		root.name = c.wrapName
		top = []*node{root}
		for _, k := range root.children {
			if c.outside(k) {
				top = append(top, k)
			}
		}
	}
	var set func(n *node, prefix string)
	set = func(n *node, prefix string) {
		n.path = prefix + n.name
		for _, k := range c.kids(n) {
			set(k, n.path+".")
		}
	}
	for _, n := range top {
		set(n, "")
	}
	root.walk(func(n *node) {
		if n.kind == compound && n.initial != nil && n != root {
			initial[n.initial] = true
		}
	})
	switch {
	case !c.wrap:
		if root.initial != nil {
			initial[root.initial] = true
		}
	case root.initial != nil && c.outside(root.initial):
		// The machine starts done; the wrapping state still needs an initial state.
		initial[root.initial] = true
		for _, k := range c.kids(root) {
			if k.kind != history {
				initial[k] = true
				break
			}
		}
	default:
		initial[root] = true
		if root.initial != nil {
			initial[root.initial] = true
		}
	}
	return top, initial
}

// outside reports whether n, a state of the root, stays at the top level when the root is
// wrapped: a final state of a compound root.
func (c *chart) outside(n *node) bool {
	return c.wrap && n.parent == c.root && n.kind == final && c.root.kind == compound
}

// kids returns the states the spec writes within n.
func (c *chart) kids(n *node) []*node {
	if c.wrap && n == c.root {
		var out []*node
		for _, k := range n.children {
			if !c.outside(k) {
				out = append(out, k)
			}
		}
		return out
	}
	return n.children
}

// write renders the spec, and the input position of each of its lines.
func (c *chart) write(shown string) ([]byte, []diag.Pos) {
	top, initial := c.layout()
	w := &writer{}
	at := c.idPos
	w.line(at, "# Imported from %s (%s) by fsmgen import.", shown, c.from)
	w.line(at, "version: 1")
	w.line(at, "machine: %s", quote(c.machine))
	w.line(at, "package: %s", quote(c.pkg))
	if c.doc != "" {
		w.line(at, "doc: %s", dquote(c.doc))
	}

	// Declarations, in the order of first use.
	var events, guards, actions []named
	seen := map[string]bool{}
	add := func(list *[]named, kind string, ns []named) {
		for _, n := range ns {
			if !seen[kind+"\x00"+n.name] {
				seen[kind+"\x00"+n.name] = true
				*list = append(*list, n)
			}
		}
	}
	c.root.walk(func(n *node) {
		add(&actions, "action", n.entry)
		add(&actions, "action", n.exit)
		for _, t := range n.trans {
			add(&events, "event", slices.DeleteFunc(slices.Clone(t.events), func(n named) bool { return isDescriptor(n.name) }))
			add(&guards, "guard", t.ifs)
			add(&guards, "guard", t.unless)
			add(&guards, "guard", t.expr.leaves())
			add(&actions, "action", t.do)
			add(&events, "event", t.raise)
		}
	})
	add(&events, "event", c.extra) // after those the transitions name
	for _, d := range []struct {
		key  string
		list []named
	}{{"events", events}, {"guards", guards}, {"actions", actions}} {
		if len(d.list) == 0 {
			continue
		}
		w.line(d.list[0].pos, "%s:", d.key)
		for _, n := range d.list {
			w.line(n.pos, "  %s: {}", quote(n.name))
		}
	}

	w.line(c.root.pos, "states:")
	for _, n := range top {
		c.writeState(w, n, 1, initial)
	}

	var all []*trans
	var from []*node
	c.root.walk(func(n *node) {
		for _, t := range n.trans {
			all = append(all, t)
			from = append(from, n)
		}
	})
	if len(all) == 0 {
		w.line(c.root.pos, "transitions: []")
	} else {
		w.line(all[0].pos, "transitions:")
		for i, t := range all {
			writeTrans(w, from[i], t)
		}
	}
	return []byte(w.b.String()), w.lines
}

func (c *chart) writeState(w *writer, n *node, depth int, initial map[*node]bool) {
	ind := strings.Repeat("  ", depth)
	var attrs []string
	if n.doc != "" {
		attrs = append(attrs, "doc: "+dquote(n.doc))
	}
	if initial[n] {
		attrs = append(attrs, "initial: true")
	}
	switch n.kind {
	case final:
		attrs = append(attrs, "terminal: true")
	case parallel:
		attrs = append(attrs, "parallel: true")
	case history:
		h := "shallow"
		if n.deep {
			h = "deep"
		}
		attrs = append(attrs, "history: "+h)
		if n.def != nil {
			attrs = append(attrs, "default: "+quote(n.def.path))
		}
	}
	if n.wait != nil {
		attrs = append(attrs, n.wait.attr())
	}
	if len(n.entry) > 0 {
		attrs = append(attrs, "entry: "+list(n.entry))
	}
	if len(n.exit) > 0 {
		attrs = append(attrs, "exit: "+list(n.exit))
	}
	kids := c.kids(n)
	if len(kids) == 0 {
		if len(attrs) == 0 {
			w.line(n.pos, "%s%s: {}", ind, quote(n.name))
		} else {
			w.line(n.pos, "%s%s: { %s }", ind, quote(n.name), strings.Join(attrs, ", "))
		}
		return
	}
	w.line(n.pos, "%s%s:", ind, quote(n.name))
	for _, a := range attrs {
		w.line(n.pos, "%s  %s", ind, a)
	}
	w.line(n.pos, "%s  states:", ind)
	for _, k := range kids {
		c.writeState(w, k, depth+2, initial)
	}
}

func writeTrans(w *writer, src *node, t *trans) {
	parts := []string{"from: " + quote(src.path)}
	switch {
	case t.always:
		parts = append(parts, "always: true")
	case t.done:
		parts = append(parts, "done: true")
	case t.after != "":
		parts = append(parts, "after: "+t.after)
	case len(t.events) == 1:
		parts = append(parts, "on: "+quote(t.events[0].name))
	default:
		parts = append(parts, "on: "+list(t.events))
	}
	if t.target == nil {
		parts = append(parts, "internal: true")
	} else {
		to := quote(t.target.path)
		if len(t.more) > 0 {
			paths := []string{to}
			for _, n := range t.more {
				paths = append(paths, quote(n.path))
			}
			to = "[" + strings.Join(paths, ", ") + "]"
		}
		parts = append(parts, "to: "+to)
		if t.reenter != nil {
			parts = append(parts, fmt.Sprintf("reenter: %t", *t.reenter))
		}
	}
	for _, g := range []struct {
		key  string
		list []named
	}{{"if", t.ifs}, {"unless", t.unless}} {
		switch len(g.list) {
		case 0:
		case 1:
			parts = append(parts, g.key+": "+quote(g.list[0].name))
		default:
			parts = append(parts, g.key+": "+list(g.list))
		}
	}
	if t.expr != nil {
		parts = append(parts, "if: "+t.expr.spec())
	}
	if len(t.do) > 0 {
		parts = append(parts, "do: "+list(t.do))
	}
	if len(t.raise) > 0 {
		parts = append(parts, "raise: "+list(t.raise))
	}
	if t.doc != "" {
		parts = append(parts, "doc: "+dquote(t.doc))
	}
	w.line(t.pos, "  - { %s }", strings.Join(parts, ", "))
}

func list(ns []named) string {
	qs := make([]string, len(ns))
	for i, n := range ns {
		qs[i] = quote(n.name)
	}
	return "[" + strings.Join(qs, ", ") + "]"
}

var plainRE = regexp.MustCompile(`^[\p{L}_][\p{L}\p{N}_.-]*$`)

// quote writes a name as a YAML scalar: plain when it is a word YAML reads as that string,
// double-quoted otherwise.
func quote(s string) string {
	switch strings.ToLower(s) {
	case "y", "n", "yes", "no", "on", "off", "true", "false", "null":
		return dquote(s)
	}
	if plainRE.MatchString(s) {
		return s
	}
	return dquote(s)
}

// dquote writes s as a YAML double-quoted scalar, every character a name may not hold
// written as an escape.
func dquote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"':
			b.WriteString(`\"`)
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case names.Unprintable(r) && r <= 0xff:
			fmt.Fprintf(&b, `\x%02x`, r)
		case names.Unprintable(r) && r <= 0xffff:
			fmt.Fprintf(&b, `\u%04x`, r)
		case names.Unprintable(r):
			fmt.Fprintf(&b, `\U%08x`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}
