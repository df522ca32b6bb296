package ir

import (
	"strconv"
	"strings"
	"unicode"
)

// ExprOp says what a guard expression node is.
type ExprOp int

const (
	ExprGuard ExprOp = iota // a guard: a hook, a comparison or another expression
	ExprAnd                 // every argument holds (evaluated left to right, stopping at the first that fails)
	ExprOr                  // some argument holds (left to right, stopping at the first that holds)
	ExprNot                 // its one argument fails
	ExprIn                  // State is active (statecharts; flattening resolves it)
	ExprTrue                // always holds (what an in resolves to)
	ExprFalse               // never holds
)

// Expr is a guard expression: and, or, not over guards, and in on the active configuration.
type Expr struct {
	Op    ExprOp
	Guard *Guard // ExprGuard
	State *Node  // ExprIn
	Args  []*Expr
	Pos   Pos
}

// String renders the expression as diagrams and messages show it: "a and not b",
// "(a or b) and in(player.video)"; an argument that is itself an and or an or is
// parenthesised.
func (x *Expr) String() string {
	var b strings.Builder
	x.write(&b, false)
	return b.String()
}

func (x *Expr) write(b *strings.Builder, nested bool) {
	switch x.Op {
	case ExprGuard:
		if x.Guard.Kind == Logic && x.Guard.Inline {
			x.Guard.Expr.write(b, nested) // named by its text
			return
		}
		b.WriteString(exprName(x.Guard.Name))
	case ExprIn:
		b.WriteString("in(" + x.State.Path + ")")
	case ExprTrue:
		b.WriteString("true")
	case ExprFalse:
		b.WriteString("false")
	case ExprNot:
		b.WriteString("not ")
		x.Args[0].write(b, true)
	default:
		word := " and "
		if x.Op == ExprOr {
			word = " or "
		}
		if nested {
			b.WriteByte('(')
		}
		for i, a := range x.Args {
			if i > 0 {
				b.WriteString(word)
			}
			a.write(b, true)
		}
		if nested {
			b.WriteByte(')')
		}
	}
}

// exprName is a guard's name as an expression shows it: as written when it is a word
// (letters, digits, _ . -), quoted otherwise, so that "x and y" does not read as an and.
func exprName(name string) string {
	for _, r := range name {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '_' && r != '.' && r != '-' {
			return strconv.Quote(name)
		}
	}
	return name
}

// Leaves lists the guards other than expressions the expression asks, in order of first
// use, through the named expressions it uses.
func (x *Expr) Leaves() []*Guard {
	var out []*Guard
	var walk func(x *Expr)
	walk = func(x *Expr) {
		switch x.Op {
		case ExprGuard:
			if x.Guard.Kind == Logic {
				walk(x.Guard.Expr)
				return
			}
			for _, g := range out {
				if g == x.Guard {
					return
				}
			}
			out = append(out, x.Guard)
		default:
			for _, a := range x.Args {
				walk(a)
			}
		}
	}
	walk(x)
	return out
}

// HasIn reports whether the expression, or a named expression it uses, asks whether a
// state is active.
func (x *Expr) HasIn() bool {
	switch x.Op {
	case ExprIn:
		return true
	case ExprGuard:
		return x.Guard.Kind == Logic && x.Guard.Expr.HasIn()
	}
	for _, a := range x.Args {
		if a.HasIn() {
			return true
		}
	}
	return false
}

// Eval evaluates the expression as the machine does: left to right, and and or stopping at
// the first argument that decides them; leaf answers each guard other than an expression,
// active each in.
func (x *Expr) Eval(leaf func(*Guard) bool, active func(*Node) bool) bool {
	switch x.Op {
	case ExprGuard:
		if x.Guard.Kind == Logic {
			return x.Guard.Expr.Eval(leaf, active)
		}
		return leaf(x.Guard)
	case ExprIn:
		return active(x.State)
	case ExprTrue:
		return true
	case ExprFalse:
		return false
	case ExprNot:
		return !x.Args[0].Eval(leaf, active)
	case ExprAnd:
		for _, a := range x.Args {
			if !a.Eval(leaf, active) {
				return false
			}
		}
		return true
	}
	for _, a := range x.Args {
		if a.Eval(leaf, active) {
			return true
		}
	}
	return false
}

// Resolve returns the expression with every in answered by active (named expressions that
// ask one are inlined) and what becomes constant folded away: an ExprTrue or ExprFalse
// node when the whole is decided, whatever its guards say.
func (x *Expr) Resolve(active func(*Node) bool) *Expr {
	switch x.Op {
	case ExprIn:
		if active(x.State) {
			return &Expr{Op: ExprTrue, Pos: x.Pos}
		}
		return &Expr{Op: ExprFalse, Pos: x.Pos}
	case ExprGuard:
		if x.Guard.Kind == Logic && x.Guard.Expr.HasIn() {
			return x.Guard.Expr.Resolve(active)
		}
		return x
	case ExprTrue, ExprFalse:
		return x
	case ExprNot:
		a := x.Args[0].Resolve(active)
		switch a.Op {
		case ExprTrue:
			return &Expr{Op: ExprFalse, Pos: x.Pos}
		case ExprFalse:
			return &Expr{Op: ExprTrue, Pos: x.Pos}
		}
		if a == x.Args[0] {
			return x
		}
		return &Expr{Op: ExprNot, Args: []*Expr{a}, Pos: x.Pos}
	}
	// and, or: an argument equal to the operation's unit is dropped, one equal to its zero
	// decides the whole (the arguments after it are never asked).
	unit, zero := ExprTrue, ExprFalse
	if x.Op == ExprOr {
		unit, zero = ExprFalse, ExprTrue
	}
	var args []*Expr
	same := true
	for _, a := range x.Args {
		r := a.Resolve(active)
		same = same && r == a
		if r.Op == unit {
			continue
		}
		if r.Op == zero {
			// a and false: the whole is decided, whatever a says (a guard asks nothing
			// of the machine, so that not asking it changes nothing).
			return &Expr{Op: zero, Pos: x.Pos}
		}
		args = append(args, r)
	}
	switch {
	case same && len(args) == len(x.Args):
		return x
	case len(args) == 0:
		return &Expr{Op: unit, Pos: x.Pos}
	case len(args) == 1:
		return args[0]
	}
	return &Expr{Op: x.Op, Args: args, Pos: x.Pos}
}
