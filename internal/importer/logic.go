package importer

import (
	"fmt"
	"strings"
	"unicode"

	"github.com/fsmgen/fsmgen/internal/diag"
)

// gexpr is a guard expression read from the input: a guard's name (op ""), the and, or or
// not of others, or in of a state, written in the spec as {and: [...]}, {or: [...]},
// {not: ...} and {in: path}.
type gexpr struct {
	op    string // "", "and", "or", "not", "in"
	name  named  // the guard
	state *node  // in: the state, once resolved
	args  []*gexpr
}

// spec writes the expression in YAML's flow style.
func (x *gexpr) spec() string {
	switch x.op {
	case "":
		return quote(x.name.name)
	case "in":
		return "{ in: " + quote(x.state.path) + " }"
	case "not":
		return "{ not: " + x.args[0].spec() + " }"
	}
	args := make([]string, len(x.args))
	for i, a := range x.args {
		args[i] = a.spec()
	}
	return "{ " + x.op + ": [" + strings.Join(args, ", ") + "] }"
}

// leaves lists the guards the expression names, in order.
func (x *gexpr) leaves() []named {
	if x == nil {
		return nil
	}
	if x.op == "" {
		return []named{x.name}
	}
	var out []named
	for _, a := range x.args {
		out = append(out, a.leaves()...)
	}
	return out
}

// setGuard gives transition t guard x: a name alone goes to if, the not of a name to
// unless, anything else is the transition's expression.
func setGuard(t *trans, x *gexpr) {
	switch {
	case x.op == "":
		t.ifs = append(t.ifs, x.name)
	case x.op == "not" && x.args[0].op == "":
		t.unless = append(t.unless, x.args[0].name)
	default:
		t.expr = x
	}
}

// xguard reads an XState guard: a name, {type: name}, and XState's own and, or, not and
// stateIn as a config written as JSON writes them, with the properties those guards carry:
// {type: "xstate.and" | "xstate.or", guards: [...]}, {type: "xstate.not", guards: [g]} and
// {type: "xstate.stateIn", stateValue: "#id"} ("and", "or", "not" and "stateIn" too). A
// stateValue without "#" is a path from the machine's root, as XState's matches reads it.
func (r *xreader) xguard(v *jvalue) (*gexpr, bool) {
	switch v.kind {
	case jString:
		g := named{v.str, v.pos}
		if strings.HasPrefix(g.name, "xstate.") {
			r.ds.Errorf(v.pos, "guard %q is one of XState's own, which take arguments: write it as an object, {\"type\": %q, ...}", g.name, g.name)
			return nil, false
		}
		return &gexpr{name: g}, checkName(&r.ds, "guard name", g, false)
	case jObject:
	default:
		r.ds.Errorf(v.pos, "a guard is a name or an object with a type, not %s", v.kind)
		return nil, false
	}
	typ := member(v, "type")
	if typ == nil {
		r.ds.Errorf(v.pos, "a guard object needs a type, the guard's name")
		return nil, false
	}
	name, ok := r.str(typ.value, "a guard's type")
	if !ok {
		return nil, false
	}
	op := strings.TrimPrefix(name, "xstate.")
	switch op {
	case "and", "or", "not":
		x := &gexpr{op: op}
		var list *jvalue
		for i := range v.members {
			mb := &v.members[i]
			switch {
			case mb.key == "type":
			case mb.key == "guards":
				list = mb.value
			case mb.key == "guard" && op == "not":
				list = &jvalue{kind: jArray, elems: []*jvalue{mb.value}, pos: mb.value.pos}
			default:
				r.ds.Errorf(mb.keyPos, "unknown key %q in %s: it takes guards, an array of guards", mb.key, op)
				return nil, false
			}
		}
		switch {
		case list == nil:
			r.ds.Errorf(v.pos, "%s needs the guards it combines: guards: [...]", op)
			return nil, false
		case list.kind != jArray || len(list.elems) == 0:
			r.ds.Errorf(list.pos, "%s takes guards, an array of guards", op)
			return nil, false
		case op == "not" && len(list.elems) != 1:
			r.ds.Errorf(list.pos, "not takes one guard: guards must be an array of one")
			return nil, false
		}
		for _, e := range list.elems {
			a, good := r.xguard(e)
			if !good {
				return nil, false
			}
			x.args = append(x.args, a)
		}
		return x, true
	case "stateIn":
		x := &gexpr{op: "in"}
		var ref string
		var at diag.Pos
		for i := range v.members {
			mb := &v.members[i]
			switch mb.key {
			case "type":
			case "stateValue":
				if mb.value.kind != jString {
					r.ds.Errorf(mb.value.pos, "stateIn's stateValue cannot be imported as %s: write the state's id, \"#id\"", mb.value.kind)
					return nil, false
				}
				ref, at = mb.value.str, mb.value.pos
			default:
				r.ds.Errorf(mb.keyPos, "unknown key %q in stateIn: it takes stateValue, \"#id\"", mb.key)
				return nil, false
			}
		}
		if ref == "" {
			r.ds.Errorf(v.pos, "stateIn needs the state: stateValue: \"#id\"")
			return nil, false
		}
		if !strings.HasPrefix(ref, "#") {
			ref = "." + ref // a path from the root
		}
		r.refs = append(r.refs, xref{from: r.root, ref: ref, pos: at, set: func(n *node) { x.state = n }})
		return x, true
	}
	if strings.HasPrefix(name, "xstate.") {
		r.ds.Errorf(typ.value.pos, "guard %q is one of XState's own that fsmgen does not have: it reads xstate.and, xstate.or, xstate.not and xstate.stateIn", name)
		return nil, false
	}
	for i := range v.members {
		mb := &v.members[i]
		switch mb.key {
		case "type":
		case "params":
			r.ds.Errorf(mb.keyPos, "guard %q has params, which cannot be imported: an fsmgen guard is a named hook without arguments", name)
			return nil, false
		default:
			r.ds.Errorf(mb.keyPos, "unknown key %q in guard %q: a guard object is {\"type\": name}", mb.key, name)
			return nil, false
		}
	}
	g := named{name, typ.value.pos}
	return &gexpr{name: g}, checkName(&r.ds, "guard name", g, false)
}

// scond reads an SCXML cond: guard names, In('id'), !, &&, || and parentheses (not name
// too, as the null data model's conds are read). Anything else is refused, naming where it
// is in the cond.
func (r *sreader) scond(a xattr) (*gexpr, bool) {
	p := &condParser{s: a.value}
	x, err := p.or()
	if err == nil && p.skip() < len(p.s) {
		err = p.fail("expected && or || here")
	}
	if err != nil {
		r.ds.Errorf(a.pos, "cond %q cannot be imported: %v; a cond is guard names, In('id'), !, &&, || and parentheses", a.value, err)
		return nil, false
	}
	var resolve func(x *gexpr)
	resolve = func(x *gexpr) {
		switch x.op {
		case "":
			x.name.pos = a.pos
		case "in":
			r.refs = append(r.refs, sref{ref: x.name.name, pos: a.pos, set: func(n *node) { x.state = n }})
			x.name = named{}
		}
		for _, y := range x.args {
			resolve(y)
		}
	}
	resolve(x)
	for _, g := range x.leaves() {
		if !checkName(&r.ds, "guard name", named{g.name, a.pos}, false) {
			return nil, false
		}
	}
	return x, true
}

// condParser reads an SCXML cond by recursive descent.
type condParser struct {
	s string
	i int
}

func (p *condParser) fail(msg string) error {
	rest := p.s[p.i:]
	if len(rest) > 20 {
		rest = rest[:20] + "..."
	}
	if rest == "" {
		return fmt.Errorf("%s, at its end", msg)
	}
	return fmt.Errorf("%s, at %q (character %d)", msg, rest, len([]rune(p.s[:p.i]))+1)
}

// skip moves past spaces and returns the position.
func (p *condParser) skip() int {
	for p.i < len(p.s) && (p.s[p.i] == ' ' || p.s[p.i] == '\t' || p.s[p.i] == '\n' || p.s[p.i] == '\r') {
		p.i++
	}
	return p.i
}

func (p *condParser) eat(tok string) bool {
	p.skip()
	if strings.HasPrefix(p.s[p.i:], tok) {
		p.i += len(tok)
		return true
	}
	return false
}

func (p *condParser) or() (*gexpr, error) {
	return p.list("||", "or", p.and)
}

func (p *condParser) and() (*gexpr, error) {
	return p.list("&&", "and", p.unary)
}

func (p *condParser) list(tok, op string, next func() (*gexpr, error)) (*gexpr, error) {
	x, err := next()
	if err != nil {
		return nil, err
	}
	out := &gexpr{op: op, args: []*gexpr{x}}
	for p.eat(tok) {
		y, err := next()
		if err != nil {
			return nil, err
		}
		out.args = append(out.args, y)
	}
	if len(out.args) == 1 {
		return x, nil
	}
	return out, nil
}

func (p *condParser) unary() (*gexpr, error) {
	switch {
	case p.eat("!"):
		x, err := p.unary()
		if err != nil {
			return nil, err
		}
		return &gexpr{op: "not", args: []*gexpr{x}}, nil
	case p.eat("("):
		x, err := p.or()
		if err != nil {
			return nil, err
		}
		if !p.eat(")") {
			return nil, p.fail("expected )")
		}
		return x, nil
	}
	p.skip()
	start := p.i
	for p.i < len(p.s) {
		c := rune(p.s[p.i])
		if c >= unicode.MaxASCII || c != '_' && !unicode.IsLetter(c) && !unicode.IsDigit(c) || p.i == start && unicode.IsDigit(c) {
			break
		}
		p.i++
	}
	word := p.s[start:p.i]
	switch word {
	case "":
		return nil, p.fail("expected a guard name, In('id'), ! or (")
	case "true", "false", "null", "undefined":
		p.i = start
		return nil, p.fail("a literal is not a guard")
	case "not":
		if p.i < len(p.s) && (p.s[p.i] == ' ' || p.s[p.i] == '\t') {
			x, err := p.unary()
			if err != nil {
				return nil, err
			}
			return &gexpr{op: "not", args: []*gexpr{x}}, nil
		}
	case "In":
		if !p.eat("(") {
			return nil, p.fail("expected ( after In")
		}
		p.skip()
		if p.i >= len(p.s) || p.s[p.i] != '\'' && p.s[p.i] != '"' {
			return nil, p.fail("In takes a state's id in quotes")
		}
		q := p.s[p.i]
		end := strings.IndexByte(p.s[p.i+1:], q)
		if end < 0 {
			return nil, p.fail("the id in In( is not closed")
		}
		id := p.s[p.i+1 : p.i+1+end]
		p.i += end + 2
		if !p.eat(")") {
			return nil, p.fail("expected ) after In's id")
		}
		return &gexpr{op: "in", name: named{name: id}}, nil
	}
	p.skip()
	if p.i < len(p.s) && p.s[p.i] == '(' {
		p.i = start
		return nil, p.fail("a call is not a guard (In('id') is the one function read)")
	}
	return &gexpr{name: named{name: word}}, nil
}
