package spec

import "gopkg.in/yaml.v3"

// GuardExpr is a guard expression as written: a guard's name, or {and: [...]},
// {or: [...]}, {not: x} or {in: state}.
type GuardExpr struct {
	Pos  Pos
	Op   string // "" for a guard's name, "and", "or", "not", "in"
	Name Str    // the guard, or the state of in
	Args []*GuardExpr
	Bad  bool // written wrong (the error is reported)
	// List says the expression is a list of items (an "and"), as if and unless take one:
	// every item must hold (if), or every item must fail (unless).
	List bool
}

// conditions reads an if or unless: one name or a list of names (the names), or, when it
// holds an expression, the and of its items as one expression.
func (l *loader) conditions(n *yaml.Node) ([]Str, *GuardExpr) {
	n = resolve(n)
	expr := n.Kind == yaml.MappingNode
	if n.Kind == yaml.SequenceNode {
		for _, c := range n.Content {
			expr = expr || resolve(c).Kind == yaml.MappingNode
		}
	}
	if !expr {
		return l.strs(n), nil
	}
	if n.Kind == yaml.MappingNode {
		return nil, l.guardExpr(n)
	}
	x := &GuardExpr{Pos: l.pos(n), Op: "and", List: true}
	for _, c := range n.Content {
		x.Args = append(x.Args, l.guardExpr(c))
	}
	return nil, x
}

// guardExpr reads one expression: a name, or a mapping of one of and, or, not, in.
func (l *loader) guardExpr(n *yaml.Node) *GuardExpr {
	n = resolve(n)
	switch n.Kind {
	case yaml.ScalarNode:
		return &GuardExpr{Pos: l.pos(n), Name: l.str(n)}
	case yaml.MappingNode:
		var x *GuardExpr
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			switch k.Value {
			case "and", "or", "not", "in":
				x = l.guardOp(x, k.Value, k, v)
			default:
				l.shape(k, "unknown key "+k.Value+" in a guard expression: expected one of and, or, not, in")
				return &GuardExpr{Pos: l.pos(k), Bad: true}
			}
		}
		if x == nil {
			l.shape(n, "a guard expression is a guard's name or one of {and: [...]}, {or: [...]}, {not: ...}, {in: state}")
			return &GuardExpr{Pos: l.pos(n), Bad: true}
		}
		return x
	}
	l.shape(n, "a guard expression is a guard's name or one of {and: [...]}, {or: [...]}, {not: ...}, {in: state}")
	return &GuardExpr{Pos: l.pos(n), Bad: true}
}

// guardOp reads the operation op (key k, value v) of an expression; prev is one already
// read from the same mapping, which may hold only one.
func (l *loader) guardOp(prev *GuardExpr, op string, k, v *yaml.Node) *GuardExpr {
	x := &GuardExpr{Pos: l.pos(k), Op: op}
	if prev != nil {
		l.shape(k, "a guard expression has one operation: "+prev.Op+" and "+op+" are both written; nest them")
		x.Bad = true
		return x
	}
	v = resolve(v)
	switch op {
	case "and", "or":
		if v.Kind != yaml.SequenceNode || len(v.Content) == 0 {
			l.shape(v, op+" takes a list of guard expressions")
			x.Bad = true
			return x
		}
		for _, c := range v.Content {
			x.Args = append(x.Args, l.guardExpr(c))
		}
	case "not":
		x.Args = []*GuardExpr{l.guardExpr(v)}
	case "in":
		if v.Kind != yaml.ScalarNode {
			l.shape(v, "in takes a state's name or path")
			x.Bad = true
			return x
		}
		x.Name = l.str(v)
	}
	return x
}
