package chartdiff

import (
	"fmt"
	"math/rand/v2"
)

// Options shape the charts Generate makes.
type Options struct {
	MaxDepth    int // >= 3: nesting depth of the tree (root children are depth 1)
	MaxChildren int // >= 2: children of a compound state, not counting history nodes
	Events      int // >= 1: events e0.. declared by the chart
	Guards      int // >= 2: guards g0.. (g0 is true, g1 false, the others random)
	// Spec keeps to what an fsmgen spec can say: the root (the spec's top level) is
	// compound, has no history states and no transitions of its own.
	Spec bool
}

// SpecOptions returns the options of the differential test against fsmgen.
func SpecOptions() Options {
	o := DefaultOptions()
	o.Spec = true
	return o
}

// DefaultOptions returns the options the differential test uses.
func DefaultOptions() Options {
	return Options{MaxDepth: 4, MaxChildren: 4, Events: 5, Guards: 3}
}

// Size bounds of a generated chart, in nodes below the root (history nodes included).
const (
	minNodes = 10
	maxNodes = 30
)

// Generate returns a random chart. The same r state and options give the same chart.
//
// Besides being well formed (Chart.Check), every chart
//   - has depth >= 3 and 10 to 30 nodes below the root; most have a parallel state (of 2 or 3
//     regions, each compound or atomic), many have shallow and deep history nodes (some with
//     a default), final states in compounds and regions, and top-level final states;
//   - has history nodes only as non-initial children of compound states, without actions or
//     transitions, and no transitions out of final states;
//   - has event transitions on any state, to any state or history node (itself, ancestors,
//     descendants, siblings, other regions) or to none, guarded or not, with reenter true and
//     false, and actions on many states and transitions;
//   - has eventless (always) transitions only on atomic states, always guarded and targeted,
//     and done transitions only on compound and parallel states (not the root) that can be
//     done: a final child in every region.
//
// Internal transitions (always and done transitions, taken within a macrostep) only move
// forward, so that no macrostep loops. Let eff be the target, or for a history node its
// parent (a history target may enter any state inside its parent, which can contain the
// source). Then:
//   - a done transition's eff lies after the source's whole subtree in document order, and
//     the least common ancestor of source and eff is not a parallel state;
//   - an always transition's eff lies after the whole top-level subtree of the source (the
//     root child that contains it), and the root is compound: it leaves one top-level child
//     for a later one.
//
// Without the rule, an always transition could enter a final state whose parent's onDone
// leads back to it, or an onDone could re-enter its own final child, forever. With it, the
// transition domain XState computes is the least common ancestor L of source and target (a
// compound state): the transition exits L's active child and enters a later child, and
// changes nothing outside L. Order configurations by comparing, at each compound state,
// the index of its active child first and the configuration below it next, and at each
// parallel state its regions componentwise: every internal transition with a target
// strictly increases the configuration in that order, and there are finitely many. Always
// transitions have targets; a targetless done transition only consumes its done event, and
// only entering a final state raises one. So every macrostep ends.
func Generate(r *rand.Rand, opt Options) *Chart {
	opt = opt.normalized()
	for {
		g := &gen{r: r, opt: opt, budget: minNodes + r.IntN(maxNodes-minNodes+1), init: map[*Node]*Node{}}
		wantParallel := r.IntN(10) < 8
		wantHistory := r.IntN(10) < 6
		root := &Node{Kind: Compound}
		if !opt.Spec && r.IntN(12) == 0 {
			root.Kind = Parallel
		}
		g.fill(root, 1)
		st := g.stats(root, 0)
		if st.nodes < minNodes || st.nodes > maxNodes || st.depth < 3 ||
			wantParallel && st.parallel == 0 || wantHistory && st.history == 0 {
			continue
		}
		return g.finish(root)
	}
}

func (o Options) normalized() Options {
	o.MaxDepth = max(o.MaxDepth, 3)
	o.MaxChildren = max(o.MaxChildren, 2)
	o.Events = max(o.Events, 1)
	o.Guards = max(o.Guards, 2)
	return o
}

type gen struct {
	r      *rand.Rand
	opt    Options
	budget int             // nodes wanted; nesting stops once reached
	count  int             // nodes made so far
	init   map[*Node]*Node // compound -> its initial child, named only at the end
}

type treeStats struct {
	nodes, depth, parallel, history int
}

func (g *gen) stats(n *Node, d int) treeStats {
	var s treeStats
	if n.Parent != nil {
		s.nodes = 1
		if !n.Kind.IsHistory() {
			s.depth = d
		}
	}
	if n.Kind == Parallel {
		s.parallel++
	}
	if n.Kind.IsHistory() {
		s.history++
	}
	for _, ch := range n.Children {
		cs := g.stats(ch, d+1)
		s.nodes += cs.nodes
		s.depth = max(s.depth, cs.depth)
		s.parallel += cs.parallel
		s.history += cs.history
	}
	return s
}

func (g *gen) add(parent *Node, k Kind) *Node {
	n := &Node{Kind: k, Parent: parent}
	parent.Children = append(parent.Children, n)
	g.count++
	return n
}

// fill gives n (Compound or Parallel, at depth d-1) its children at depth d.
func (g *gen) fill(n *Node, d int) {
	r := g.r
	if n.Kind == Parallel {
		for range 2 + r.IntN(2) {
			k := Compound
			if d >= g.opt.MaxDepth || r.IntN(6) == 0 {
				k = Atomic
			}
			reg := g.add(n, k)
			if k == Compound {
				g.fill(reg, d+1)
			}
		}
		// History of the parallel state: it remembers every region.
		if n.Parent != nil {
			g.history(n, 3)
		}
		return
	}

	for range 2 + r.IntN(g.opt.MaxChildren-1) {
		k := g.childKind(d)
		ch := g.add(n, k)
		if k == Compound || k == Parallel {
			g.fill(ch, d+1)
		}
	}
	// Final children: regions mostly get one so that their parallel state can be done, and
	// the root mostly gets one so that the machine can be.
	hasFinal := false
	for _, ch := range n.Children {
		hasFinal = hasFinal || ch.Kind == Final
	}
	if !hasFinal && (n.Parent == nil && r.IntN(10) < 6 || n.Parent != nil && n.Parent.Kind == Parallel && r.IntN(10) < 7) {
		g.add(n, Final)
	}

	// The initial child: never history or final.
	var cands []*Node
	for _, ch := range n.Children {
		if ch.Kind != Final {
			cands = append(cands, ch)
		}
	}
	if len(cands) == 0 {
		n.Children[0].Kind = Atomic
		cands = n.Children[:1]
	}
	init := cands[0]
	if r.IntN(5) < 2 {
		init = cands[r.IntN(len(cands))]
	}
	g.init[n] = init

	// History children, at random places among the others (the root gets them rarely: it is
	// only left by a reentering transition of its own).
	p := 4
	if n.Parent == nil {
		p = 1
		if g.opt.Spec {
			p = 0
		}
	}
	g.history(n, p)
}

// history gives n a shallow and a deep history child, each with probability p in 10, at
// random places among its children.
func (g *gen) history(n *Node, p int) {
	r := g.r
	for _, k := range []Kind{ShallowHistory, DeepHistory} {
		if r.IntN(10) < p {
			h := &Node{Kind: k, Parent: n}
			g.count++
			i := r.IntN(len(n.Children) + 1)
			n.Children = append(n.Children[:i], append([]*Node{h}, n.Children[i:]...)...)
		}
	}
}

// childKind picks the kind of a child of a compound state at depth d.
func (g *gen) childKind(d int) Kind {
	nest := d < g.opt.MaxDepth && g.count < g.budget
	w := []struct {
		k Kind
		w int
	}{{Atomic, 6}, {Final, 2}, {Compound, 0}, {Parallel, 0}}
	if nest {
		w[2].w, w[3].w = 4, 2
	}
	total := 0
	for _, x := range w {
		total += x.w
	}
	i := g.r.IntN(total)
	for _, x := range w {
		if i < x.w {
			return x.k
		}
		i -= x.w
	}
	panic("unreachable")
}

// finish names the tree in document order and adds the actions and transitions.
func (g *gen) finish(root *Node) *Chart {
	r := g.r
	c := &Chart{Root: root, Guards: map[string]bool{}}
	for i := range g.opt.Events {
		c.Events = append(c.Events, fmt.Sprintf("e%d", i))
	}
	// Dotted events, for wildcard descriptors: x.* matches x, x.a and x.b.
	wild := r.IntN(3) == 0
	if wild {
		c.Events = append(c.Events, "x", "x.a", "x.b")
	}
	var guards []string
	for i := range g.opt.Guards {
		name := fmt.Sprintf("g%d", i)
		guards = append(guards, name)
		switch i {
		case 0:
			c.Guards[name] = true
		case 1:
			c.Guards[name] = false
		default:
			c.Guards[name] = r.IntN(2) == 0
		}
	}

	nodes := c.Nodes()
	idx := make(map[*Node]int, len(nodes))  // document order
	last := make(map[*Node]int, len(nodes)) // the largest index in the node's subtree
	for i, n := range nodes {
		idx[n] = i
		if n.Parent != nil {
			n.Name = fmt.Sprintf("s%d", i-1)
		}
	}
	for i := len(nodes) - 1; i >= 0; i-- {
		n := nodes[i]
		last[n] = max(last[n], i)
		if n.Parent != nil {
			last[n.Parent] = max(last[n.Parent], last[n])
		}
	}
	for _, n := range nodes {
		if n.Kind == Compound {
			n.Initial = g.init[n].Name
		}
	}

	// History defaults: any state inside the parent, or the parent's initial.
	for _, n := range nodes {
		if !n.Kind.IsHistory() || r.IntN(10) < 6 {
			continue
		}
		var cands []*Node
		for _, m := range nodes {
			if !m.Kind.IsHistory() && isDescendant(m, n.Parent) {
				cands = append(cands, m)
			}
		}
		n.Default = cands[r.IntN(len(cands))].Path()
	}

	// Entry and exit actions.
	for _, n := range nodes {
		if n.Parent == nil || n.Kind.IsHistory() {
			continue
		}
		if r.IntN(10) < 6 {
			n.Entry = []string{"en_" + n.Name}
		}
		if r.IntN(10) < 5 {
			n.Exit = []string{"ex_" + n.Name}
		}
	}

	// Transitions.
	nt := 0
	actions := func() []string {
		var out []string
		for range []int{0, 0, 0, 1, 1, 2}[r.IntN(6)] {
			out = append(out, fmt.Sprintf("t%d", nt))
			nt++
		}
		return out
	}
	guard := func() string { return guards[r.IntN(len(guards))] }
	targets := nodes[1:]
	for _, n := range nodes {
		if n.Kind == Final || n.Kind.IsHistory() {
			continue
		}
		k := r.IntN(3)
		if n.Parent == nil {
			k = 1 + r.IntN(2)
			if g.opt.Spec {
				k = 0
			}
		}
		for i := range k {
			t := &Trans{Event: c.Events[r.IntN(len(c.Events))]}
			if i > 0 && r.IntN(3) == 0 {
				t.Event = n.On[i-1].Event // several transitions for one event, by priority
			} else if wild && r.IntN(4) == 0 {
				// A wildcard descriptor. "*" matches done events too: on an atomic state
				// only, which entering a final state exits, so that no done event it takes
				// can raise itself again.
				t.Event = "x.*"
				if n.Kind == Atomic && r.IntN(2) == 0 {
					t.Event = "*"
				}
			}
			if r.IntN(3) == 0 {
				t.Guard = guard()
			}
			if r.IntN(7) != 0 {
				t.Target = g.eventTarget(n, targets).Path()
				if r.IntN(5) == 0 {
					if ts := g.regionTargets(nodes); len(ts) > 1 {
						t.Target, t.More = ts[0], ts[1:]
					}
				}
			}
			t.Reenter = r.IntN(2) == 0
			t.Actions = actions()
			// An event raised for the machine itself, by a transition that moves on to a
			// later top-level state (as always transitions do), so that raising ends.
			if t.Target != "" && len(t.More) == 0 && root.Kind == Compound && n.Parent != nil && r.IntN(4) == 0 {
				top := n
				for top.Parent != root {
					top = top.Parent
				}
				if idx[effective(c.Lookup(t.Target))] > last[top] {
					t.Raise = []string{c.Events[r.IntN(len(c.Events))]}
				}
			}
			n.On = append(n.On, t)
		}

		// Always transitions: see Generate for the rule.
		if n.Kind == Atomic && root.Kind == Compound && r.IntN(3) == 0 {
			top := n
			for top.Parent != root {
				top = top.Parent
			}
			var cands []*Node
			for _, m := range targets {
				if idx[effective(m)] > last[top] {
					cands = append(cands, m)
				}
			}
			for range min(len(cands), 1+r.IntN(2)) {
				t := &Trans{
					Always:  true,
					Guard:   guard(),
					Target:  cands[r.IntN(len(cands))].Path(),
					Reenter: r.IntN(2) == 0,
					Actions: actions(),
				}
				n.On = append(n.On, t)
			}
		}

		// Done transitions: see Generate for the rule.
		if canBeDone(n) && r.IntN(10) < 6 {
			var cands []*Node
			for _, m := range targets {
				e := effective(m)
				if idx[e] > last[n] && lca(n, e).Kind != Parallel {
					cands = append(cands, m)
				}
			}
			cnt := 1 + r.IntN(2)
			for i := range cnt {
				t := &Trans{Done: true, Reenter: r.IntN(2) == 0, Actions: actions()}
				if i < cnt-1 || r.IntN(3) == 0 { // a later one can only be taken after a guarded one
					t.Guard = guard()
				}
				if len(cands) > 0 && r.IntN(4) != 0 {
					t.Target = cands[r.IntN(len(cands))].Path()
				}
				n.On = append(n.On, t)
			}
		}
	}
	g.logic(c)
	g.delays(c)
	return c
}

// regionTargets picks several targets of one transition: a state (or a region itself) in
// each of two or more regions of a parallel state, in document order, or nil when the
// chart has no parallel state.
func (g *gen) regionTargets(nodes []*Node) []string {
	r := g.r
	var pars []*Node
	for _, n := range nodes {
		if n.Kind == Parallel && n.Parent != nil {
			pars = append(pars, n)
		}
	}
	if len(pars) == 0 {
		return nil
	}
	p := pars[r.IntN(len(pars))]
	var regions []*Node
	for _, ch := range p.Children {
		if !ch.Kind.IsHistory() && r.IntN(3) != 0 {
			regions = append(regions, ch)
		}
	}
	var out []string
	for _, reg := range regions {
		cands := []*Node{reg}
		for _, m := range nodes {
			if isDescendant(m, reg) && !m.Kind.IsHistory() {
				cands = append(cands, m)
			}
		}
		out = append(out, cands[r.IntN(len(cands))].Path())
	}
	return out
}

// eventTarget picks the target of an event transition on n: itself, an ancestor, a
// descendant, a sibling, a history node or any node.
func (g *gen) eventTarget(n *Node, all []*Node) *Node {
	r := g.r
	var cands []*Node
	switch r.IntN(8) {
	case 0:
		if n.Parent != nil {
			cands = []*Node{n}
		}
	case 1:
		for p := n.Parent; p != nil && p.Parent != nil; p = p.Parent {
			cands = append(cands, p)
		}
	case 2:
		for _, m := range all {
			if isDescendant(m, n) {
				cands = append(cands, m)
			}
		}
	case 3:
		if n.Parent != nil {
			for _, m := range n.Parent.Children {
				if m != n {
					cands = append(cands, m)
				}
			}
		}
	case 4:
		for _, m := range all {
			if m.Kind.IsHistory() {
				cands = append(cands, m)
			}
		}
	}
	if len(cands) == 0 {
		cands = all
	}
	t := cands[r.IntN(len(cands))]
	if t.Kind == Final && t.Parent.Parent == nil && r.IntN(3) != 0 {
		// A top-level final state ends the run: let most sequences go on for longer.
		t = cands[r.IntN(len(cands))]
	}
	return t
}

// effective is what a transition to n enters at least: n, or for a history node its parent.
func effective(n *Node) *Node {
	if n.Kind.IsHistory() {
		return n.Parent
	}
	return n
}

// lca returns the least common ancestor of a and b (either may be an ancestor of the other).
func lca(a, b *Node) *Node {
	for x := a; x != nil; x = x.Parent {
		if x == b || isDescendant(b, x) {
			return x
		}
	}
	return nil
}

// canBeDone reports whether n may get done transitions: a compound with a final child, or a
// parallel state whose regions all are; never the root.
func canBeDone(n *Node) bool {
	if n.Parent == nil {
		return false
	}
	switch n.Kind {
	case Compound:
		return hasFinalChild(n)
	case Parallel:
		for _, reg := range n.Children {
			if !reg.Kind.IsHistory() && (reg.Kind != Compound || !hasFinalChild(reg)) {
				return false
			}
		}
		return true
	}
	return false
}

func hasFinalChild(n *Node) bool {
	for _, ch := range n.Children {
		if ch.Kind == Final {
			return true
		}
	}
	return false
}

// RandomSequences returns n event sequences of the given length, drawn from c.Events and
// now and then the undeclared event "zz", which no state handles (none for a chart with a
// "*" transition, which XState's takes: a generated machine has no undeclared events).
func RandomSequences(r *rand.Rand, c *Chart, n, length int) [][]string {
	out := make([][]string, n)
	undeclared := !c.Wildcard()
	for i := range out {
		seq := make([]string, length)
		for j := range seq {
			if len(c.Events) == 0 || r.IntN(12) == 0 && undeclared {
				seq[j] = "zz"
			} else {
				seq[j] = c.Events[r.IntN(len(c.Events))]
			}
		}
		out[i] = seq
	}
	return out
}

// AddJumps makes every state of c reachable, so that the checker accepts it (a random
// chart leaves some unreachable, which the checker refuses): the initial top-level state
// gets a transition on an event of its own to each state. No state within it handles those
// events, so each is taken whenever the machine is in it, as it is at the start. It returns
// the events it added.
func AddJumps(r *rand.Rand, c *Chart) []string {
	var top *Node
	for _, n := range c.Root.Children {
		if n.Name == c.Root.Initial {
			top = n
		}
	}
	if top == nil || top.Kind == Final {
		return nil
	}
	var jumps []string
	for _, n := range c.Nodes()[1:] {
		e := fmt.Sprintf("j%d", len(jumps))
		jumps = append(jumps, e)
		c.Events = append(c.Events, e)
		top.On = append(top.On, &Trans{Event: e, Target: n.Path(), Reenter: r.IntN(2) == 0})
	}
	return jumps
}
