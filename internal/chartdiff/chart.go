// Package chartdiff is the XState half of a differential test of fsmgen's statecharts:
// random charts (Generate), event sequences to run them on (RandomSequences), their
// rendering as an XState v5 machine config (Chart.XStateConfig) and a runner that executes
// them in the real xstate npm package under node (RunXState).
//
// A Chart is an abstract model, independent of fsmgen's spec and IR, so that both sides of
// the comparison render from the same source.
package chartdiff

import (
	"fmt"
	"strings"
)

// Kind says what a chart node is.
type Kind int

const (
	Atomic         Kind = iota // no children
	Compound                   // has children, Initial names one
	Parallel                   // children are regions (each Compound or Atomic), all active at once, and history nodes
	Final                      // a final state (atomic)
	ShallowHistory             // history pseudo-state (a child of a Compound); no children
	DeepHistory                // like ShallowHistory, but restores the atomic descendants
)

// String names the kind as XState's type field does (both history kinds are "history").
func (k Kind) String() string {
	switch k {
	case Atomic:
		return "atomic"
	case Compound:
		return "compound"
	case Parallel:
		return "parallel"
	case Final:
		return "final"
	case ShallowHistory:
		return "shallow history"
	case DeepHistory:
		return "deep history"
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// IsHistory reports whether k is one of the history kinds.
func (k Kind) IsHistory() bool { return k == ShallowHistory || k == DeepHistory }

// Chart is a statechart: a tree of nodes under Root, the events it may receive and the
// fixed values of its guards.
type Chart struct {
	Root   *Node           // Kind Compound (or Parallel); Root.Name is "" and is not part of paths
	Events []string        // event names, e.g. "e0".."e4"
	Guards map[string]bool // guard name -> its fixed value
}

// Node is a state (or history pseudo-state) of a Chart.
type Node struct {
	Name        string // unique in the whole chart (so XState ids can be the name)
	Kind        Kind
	Initial     string   // Compound: the name of the initial child
	Children    []*Node  // document order
	Default     string   // history nodes: the path of the default target, "" = the parent's initial
	Entry, Exit []string // action names, unique in the chart, e.g. "en_s3", "ex_s3"
	On          []*Trans // transitions whose source is this node, document order
	Parent      *Node    // nil for Root
}

// Trans is a transition. Its source is the Node whose On holds it.
type Trans struct {
	Event   string   // "" when Always or Done
	Always  bool     // eventless
	Done    bool     // onDone of this (Compound or Parallel) node
	Guard   string   // "" = unguarded; else a key of Chart.Guards
	Target  string   // path of the target node from the root, names joined by "." ("" = targetless)
	More    []string // further targets: with Target, one in each of several regions of parallel states
	Reenter bool     // XState's reenter flag, always emitted explicitly
	Actions []string // unique names, e.g. "t7"
	Raise   []string // events raised for the machine itself, after the actions
	Expr    *Expr    // a guard expression, in place of Guard (nil: Guard)
	Delay   int      // a delayed transition (XState's after): its delay in milliseconds (0: none)
}

// Path returns the names from below Root to n joined by "."; "" for Root.
func (n *Node) Path() string {
	if n.Parent == nil {
		return ""
	}
	if p := n.Parent.Path(); p != "" {
		return p + "." + n.Name
	}
	return n.Name
}

// Child returns the child of n called name, or nil.
func (n *Node) Child(name string) *Node {
	for _, c := range n.Children {
		if c.Name == name {
			return c
		}
	}
	return nil
}

// Nodes returns every node of the chart in document order (pre-order), Root first.
func (c *Chart) Nodes() []*Node {
	var out []*Node
	var walk func(n *Node)
	walk = func(n *Node) {
		out = append(out, n)
		for _, ch := range n.Children {
			walk(ch)
		}
	}
	walk(c.Root)
	return out
}

// Lookup returns the node at path ("" is Root), or nil.
func (c *Chart) Lookup(path string) *Node {
	n := c.Root
	if path == "" {
		return n
	}
	for _, name := range strings.Split(path, ".") {
		if n = n.Child(name); n == nil {
			return nil
		}
	}
	return n
}

// Actions returns every action name of the chart: per node in document order its entry,
// exit and then its transitions' actions.
func (c *Chart) Actions() []string {
	var out []string
	for _, n := range c.Nodes() {
		out = append(out, n.Entry...)
		out = append(out, n.Exit...)
		for _, t := range n.On {
			out = append(out, t.Actions...)
		}
	}
	return out
}

// Check reports the first way in which c is not a well-formed chart: names missing or not
// unique, parents not linked, kinds with children they cannot have, initial states,
// history defaults, targets or guards that do not resolve, transitions on nodes that cannot
// have them. It does not check the generator's extra rules (see Generate).
func (c *Chart) Check() error {
	if c.Root == nil {
		return fmt.Errorf("chart has no root")
	}
	if c.Root.Name != "" || c.Root.Parent != nil {
		return fmt.Errorf("root must have no name and no parent")
	}
	if c.Root.Kind != Compound && c.Root.Kind != Parallel {
		return fmt.Errorf("root is %s, want compound or parallel", c.Root.Kind)
	}
	names := map[string]bool{}
	actions := map[string]bool{}
	addAction := func(where, a string) error {
		if a == "" {
			return fmt.Errorf("%s: empty action name", where)
		}
		if actions[a] {
			return fmt.Errorf("%s: action %q is not unique", where, a)
		}
		actions[a] = true
		return nil
	}
	events := map[string]bool{}
	for _, e := range c.Events {
		events[e] = true
	}
	for _, n := range c.Nodes() {
		where := "root"
		if n != c.Root {
			where = fmt.Sprintf("state %q", n.Path())
			if n.Name == "" || strings.ContainsAny(n.Name, ".#") {
				return fmt.Errorf("%s: bad name %q", where, n.Name)
			}
			if names[n.Name] {
				return fmt.Errorf("%s: name %q is not unique", where, n.Name)
			}
			names[n.Name] = true
		}
		for _, ch := range n.Children {
			if ch.Parent != n {
				return fmt.Errorf("%s: child %q does not link back to its parent", where, ch.Name)
			}
		}
		switch n.Kind {
		case Compound:
			init := n.Child(n.Initial)
			if init == nil {
				return fmt.Errorf("%s: initial %q is not a child", where, n.Initial)
			}
			if init.Kind.IsHistory() {
				return fmt.Errorf("%s: initial %q is a history node", where, n.Initial)
			}
		case Parallel:
			if len(n.Children) == 0 {
				return fmt.Errorf("%s: parallel state without regions", where)
			}
			for _, ch := range n.Children {
				if ch.Kind != Compound && ch.Kind != Atomic && !ch.Kind.IsHistory() {
					return fmt.Errorf("%s: region %q is %s", where, ch.Name, ch.Kind)
				}
			}
		default:
			if len(n.Children) > 0 {
				return fmt.Errorf("%s: %s state with children", where, n.Kind)
			}
		}
		if n.Kind != Compound && n.Initial != "" {
			return fmt.Errorf("%s: initial on a %s state", where, n.Kind)
		}
		if n.Kind.IsHistory() {
			if n.Parent == nil || n.Parent.Kind != Compound && n.Parent.Kind != Parallel {
				return fmt.Errorf("%s: history node outside a compound or parallel state", where)
			}
			if len(n.Entry)+len(n.Exit)+len(n.On) > 0 {
				return fmt.Errorf("%s: history node with actions or transitions", where)
			}
			if n.Default != "" {
				d := c.Lookup(n.Default)
				if d == nil || !isDescendant(d, n.Parent) || d.Kind.IsHistory() {
					return fmt.Errorf("%s: default %q is not a state inside %q", where, n.Default, n.Parent.Path())
				}
			}
		} else if n.Default != "" {
			return fmt.Errorf("%s: default on a %s state", where, n.Kind)
		}
		if n.Kind == Final && len(n.On) > 0 {
			return fmt.Errorf("%s: transition from a final state", where)
		}
		for _, a := range append(append([]string(nil), n.Entry...), n.Exit...) {
			if err := addAction(where, a); err != nil {
				return err
			}
		}
		for i, t := range n.On {
			tw := fmt.Sprintf("%s: transition %d", where, i)
			switch {
			case t.Always && t.Done:
				return fmt.Errorf("%s: both always and done", tw)
			case (t.Always || t.Done) && t.Delay > 0:
				return fmt.Errorf("%s: delayed and always or done", tw)
			case t.Always || t.Done || t.Delay > 0:
				if t.Event != "" {
					return fmt.Errorf("%s: event %q on an always, done or delayed transition", tw, t.Event)
				}
			default:
				if t.Event == "" {
					return fmt.Errorf("%s: no event", tw)
				}
				if !events[t.Event] && t.Event != "*" && !(strings.HasSuffix(t.Event, ".*") && events[strings.TrimSuffix(t.Event, ".*")]) {
					return fmt.Errorf("%s: event %q is not declared", tw, t.Event)
				}
			}
			if t.Done && n.Kind != Compound && n.Kind != Parallel {
				return fmt.Errorf("%s: done transition on a %s state", tw, n.Kind)
			}
			if t.Done && n == c.Root {
				return fmt.Errorf("%s: done transition on the root", tw)
			}
			if t.Guard != "" {
				if _, ok := c.Guards[t.Guard]; !ok {
					return fmt.Errorf("%s: guard %q is not declared", tw, t.Guard)
				}
			}
			if t.Expr != nil {
				if err := c.checkExpr(t.Expr); err != nil {
					return fmt.Errorf("%s: %w", tw, err)
				}
			}
			for _, target := range append([]string{t.Target}, t.More...) {
				if target != "" && c.Lookup(target) == nil {
					return fmt.Errorf("%s: target %q not found", tw, target)
				}
			}
			for _, a := range t.Actions {
				if err := addAction(tw, a); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// isDescendant reports whether n is a proper descendant of anc.
// Wildcard reports whether some transition of the chart is taken on "*", which takes
// every event, undeclared ones too in XState.
func (c *Chart) Wildcard() bool {
	return c.count(func(t *Trans) bool { return t.Event == "*" }) > 0
}

// count is the number of the chart's transitions for which keep holds.
func (c *Chart) count(keep func(*Trans) bool) int {
	n := 0
	var walk func(*Node)
	walk = func(x *Node) {
		for _, t := range x.On {
			if keep(t) {
				n++
			}
		}
		for _, ch := range x.Children {
			walk(ch)
		}
	}
	walk(c.Root)
	return n
}

func isDescendant(n, anc *Node) bool {
	for p := n.Parent; p != nil; p = p.Parent {
		if p == anc {
			return true
		}
	}
	return false
}

// Observation is what a run shows after one step (the start, or one event).
type Observation struct {
	Config  []string `json:"config"`  // sorted paths of the active atomic states (incl. final states)
	Done    bool     `json:"done"`    // the machine reached a top-level final state
	Actions []string `json:"actions"` // action names run, in order, during this step (nil/empty if none)
}

// Case is a chart and the event sequences to run it on.
type Case struct {
	Chart     *Chart
	Sequences [][]string // event sequences
}
