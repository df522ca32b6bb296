package ir

import (
	"sort"
	"strings"
)

// Chart is the state tree of a machine whose spec nests states (a statechart). Lowering
// compiles it into the flat machine every tool runs: each reachable configuration (set of
// active states) becomes a State, and each way an event can be taken in a configuration (the
// transitions the chart selects, under the guards that decide it, for each value of the
// history it reads) becomes a Transition, whose Actions are the exit, transition and entry
// actions of the whole microstep in order. The Chart keeps the tree for the emitters that
// draw it and for the checker's messages. A flat spec has none.
type Chart struct {
	// Nodes are the states in document order (pre-order); Nodes[0] is the root, which the
	// spec does not name.
	Nodes []*Node
	// Transitions are the spec's transitions as written, one per source node and event.
	Transitions []*ChartTransition
	// History lists the history nodes, then the remembering states (Node.Remembers); each
	// owns a memory slot (Node.Slot).
	History []*Node
	// Values lists, by slot, what each history node can hold: Values[slot][v-1] is value
	// v, the nodes it restores (the active atomic descendants of its parent for deep
	// history, the active child for shallow; for a remembering state, the active atomic
	// states of the configuration it was entered from). Value 0 is "nothing recorded yet".
	Values [][][]*Node
	// Always is the internal event eventless transitions are keyed on (nil without any).
	Always *Event
	// Start is what starting the machine does after entering the initial configuration:
	// the entry actions in order and the internal events raised (done events).
	StartActions []*Action
	StartRaise   []*Event
	// Clocks are the states with delays of their own (Node.Delays), in document order: each
	// keeps a clock, restarted when the state is entered (Transition.Enters), which its
	// delays count on whatever the other states do.
	Clocks []*Node
}

// NodeKind says what a chart node is.
type NodeKind int

const (
	NodeAtomic   NodeKind = iota // no children
	NodeCompound                 // children, one active at a time, entered at Initial
	NodeParallel                 // children are regions, all active at once
	NodeFinal                    // a final state: its parent is done
	NodeHistory                  // a history pseudo-state
)

// String names the kind as docs and messages do.
func (k NodeKind) String() string {
	return [...]string{"atomic", "compound", "parallel", "final", "history"}[k]
}

// Node is a state of a chart.
type Node struct {
	Index    int    // document order; 0 is the root
	Name     string // the key the spec declares it under ("" for the root)
	Path     string // the names from the root down, joined by "."
	Kind     NodeKind
	Deep     bool // a deep history node
	Doc      string
	Pos      Pos
	Parent   *Node
	Children []*Node // document order, history nodes included
	Initial  *Node   // NodeCompound: the child entered by default
	Default  *Node   // NodeHistory: where a history that recorded nothing leads (nil: the parent's initial)
	Entry    []*Action
	Exit     []*Action
	Slot     int    // NodeHistory, and a remembering state: its memory slot
	Done     *Event // the internal done event of a compound or parallel node, when used
	// Remembers says the state remembers the configuration it was entered from, which a
	// transition to {history: state} goes back to (as a flat machine's remembering state).
	Remembers bool
	Groups    []*Group
	// Timeout is the state's timeout (nil: none); every configuration it is active in has
	// it (State.Clock), counted from when the state was entered.
	Timeout *Timeout
	// Delays are the state's own delays (State.Delays), counted from when it was entered.
	Delays []*Delay
	// Requires are the context fields entering the state requires.
	Requires []*Field
	// GoName names a compound or parallel state in the generated State.Is<GoName>, which
	// reports whether it is active: its shortest unambiguous path ("" for other nodes).
	GoName string
}

// Atomic reports whether the node has no active children (atomic and final nodes).
func (n *Node) Atomic() bool { return n.Kind == NodeAtomic || n.Kind == NodeFinal }

// IsDescendant reports whether n lies strictly below a; every node lies below nil.
func (n *Node) IsDescendant(a *Node) bool {
	if a == nil {
		return true
	}
	for p := n.Parent; p != nil; p = p.Parent {
		if p == a {
			return true
		}
	}
	return false
}

// ChartTransition is a transition as the spec writes it on a chart node.
type ChartTransition struct {
	Index  int
	Pos    Pos
	Doc    string
	Source *Node
	Event  *Event // the triggering event: a declared one, Chart.Always, or a node's Done (nil: Descriptor)
	// Descriptor is, for a transition on a wildcard ("*": every event; "error.*": error and
	// every event whose name starts with "error."), the descriptor as written; flattening
	// offers the transition every event it matches, after the source's transitions on that
	// very event, longer descriptors first (as XState does).
	Descriptor string
	Always     bool
	Done       bool
	Conds      []Cond
	Target     *Node // nil: targetless (nothing is exited or entered)
	// Targets are every target, Target first: more than one only for a transition into
	// several regions of parallel states, one state in each.
	Targets []*Node
	// Recall says the target is the configuration Target, a remembering state, was last
	// entered from (to: {history: state}); nothing remembered, the transition is not taken.
	Recall  bool
	Reenter bool
	Actions []*Action
	// Raise are the events the transition raises for the machine itself, in order.
	Raise      []*Event
	Checkpoint *Checkpoint
	Increment  []*Counter
	Reset      []*Counter
	Roles      []RoleRule // who may fire it (none: anyone); only on an event's transition
}

// EventName is the event the transition is taken on, or its wildcard descriptor.
func (t *ChartTransition) EventName() string {
	if t.Event == nil {
		return t.Descriptor
	}
	return t.Event.Name
}

// EventLabel is EventName as diagrams show it ("after 30s" for a delayed transition).
func (t *ChartTransition) EventLabel() string {
	if t.Event == nil {
		return t.Descriptor
	}
	return t.Event.Label()
}

// Matches reports whether wildcard descriptor d matches event e: "*" every event, "a.b.*"
// a.b and every event whose name starts with "a.b.". An internal event (a done event) is
// matched by "*" alone, as XState matches its own done events' names by no prefix of ours.
func Matches(d string, e *Event) bool {
	if d == "*" {
		return true
	}
	prefix, ok := strings.CutSuffix(d, ".*")
	return ok && !e.Internal && (e.Name == prefix || strings.HasPrefix(e.Name, prefix+"."))
}

// AllTargets lists the transition's targets, Target first (none: targetless).
func (t *ChartTransition) AllTargets() []*Node {
	if len(t.Targets) > 0 {
		return t.Targets
	}
	if t.Target != nil {
		return []*Node{t.Target}
	}
	return nil
}

// Recalled lists the states a transition to {history: n} (n a remembering state) can go
// back to: the active atomic states of the configurations n can remember, in document order.
func (c *Chart) Recalled(n *Node) []*Node {
	var out []*Node
	seen := map[*Node]bool{}
	for _, v := range c.Values[n.Slot] {
		for _, x := range v {
			if !seen[x] {
				seen[x] = true
				out = append(out, x)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Index < out[j].Index })
	return out
}

// ConfigName names a configuration by its active atomic states: their paths joined by
// ",". A name never holds a comma, so a configuration's name is never a state's.
func ConfigName(atomic []*Node) string {
	paths := make([]string, len(atomic))
	for i, n := range atomic {
		paths[i] = n.Path
	}
	return strings.Join(paths, ",")
}

// MemCond is a condition on history memory: slot Slot holds value Value.
type MemCond struct {
	Slot, Value int
}
