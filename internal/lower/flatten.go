package lower

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/fsmgen/fsmgen/internal/ir"
	"github.com/fsmgen/fsmgen/internal/names"
)

// Flattening compiles a statechart into a flat machine. A configuration (the set of active
// states) becomes a state; for each configuration and event, the chart's selection of
// transitions becomes an ordered list of flat candidates, each with the conjunction of
// guards that makes the chart select exactly those transitions, so that "the first
// candidate whose conditions hold" (the flat machine's rule) picks what the chart picks.
// A candidate whose targets read history memory comes once per value the memory can hold,
// with a condition on it. Each candidate's microstep (exits, transition actions, entries,
// history recorded, done events raised) is computed here once.
//
// The semantics are XState v5's (docs/spec.md says where it differs from SCXML): an event
// is offered to the innermost states first; a parallel state offers it to every region, in
// document order, and takes its own transitions only when no region takes one; eventless
// transitions are selected per active atomic state, innermost first; conflicting
// transitions (whose exits overlap) are resolved in favour of the first selected, unless
// the later one is nested in the earlier's source.

// maxConfigs bounds the configurations a statechart may have.
const maxConfigs = 20000

// maxOutcomes bounds the candidate selections of one configuration and event.
const maxOutcomes = 4096

type config []bool // by node index: active

func (c config) key() string {
	b := make([]byte, (len(c)+7)/8)
	for i, on := range c {
		if on {
			b[i/8] |= 1 << (i % 8)
		}
	}
	return string(b)
}

func (c config) clone() config { return append(config(nil), c...) }

type memory []int // by history slot: the value recorded (0: none)

type outcome struct {
	sel   []*ir.ChartTransition
	conds []ir.Cond
}

type flattener struct {
	l       *lowerer
	c       *ir.Chart
	byEvent []map[int][]*ir.ChartTransition // [node][event index] in order; sparse: a node has few events
	events  [][]int                         // [node]: the indexes of the events it has transitions on
	values  []map[string]int                // by slot: value key -> value
	configs []config
	index   map[string]int
	states  []*ir.State
	grew    bool // a pass found a configuration or a history value
	emit    bool
	taken   map[*ir.ChartTransition]bool
	lost    map[*ir.ChartTransition]bool // preempted somewhere (and reported)
	broke   map[*ir.ChartTransition]bool // reported for leading to an invalid configuration
	warned  map[[2]*ir.ChartTransition]bool
	clocks  map[[2]*ir.Node]bool // pairs of states with timeouts found active together
	stop    bool
}

// flatten compiles the chart (when it has no errors) into l.m's states and transitions.
func (l *lowerer) flatten() {
	if l.cs.bad || l.ds.HasErrors() {
		return
	}
	c := l.cs.c
	f := &flattener{l: l, c: c, index: map[string]int{}, taken: map[*ir.ChartTransition]bool{}, lost: map[*ir.ChartTransition]bool{}, broke: map[*ir.ChartTransition]bool{}, warned: map[[2]*ir.ChartTransition]bool{}, clocks: map[[2]*ir.Node]bool{}}
	// Done events: a compound state with a final state is done when it is entered; a
	// parallel state whose regions all have one is done when they all are.
	for _, n := range c.Nodes[1:] {
		if n.Kind == ir.NodeFinal && n.Parent.Parent != nil {
			l.doneEvent(n.Parent)
		}
	}
	for _, n := range c.Nodes {
		if n.Kind == ir.NodeParallel && parallelCanFinish(n) {
			l.doneEvent(n)
		}
	}
	f.byEvent = make([]map[int][]*ir.ChartTransition, len(c.Nodes))
	f.events = make([][]int, len(c.Nodes))
	offer := func(t *ir.ChartTransition, e int) {
		n := t.Source.Index
		if f.byEvent[n] == nil {
			f.byEvent[n] = map[int][]*ir.ChartTransition{}
		}
		if len(f.byEvent[n][e]) == 0 {
			f.events[n] = append(f.events[n], e)
		}
		f.byEvent[n][e] = append(f.byEvent[n][e], t)
	}
	for _, t := range c.Transitions {
		if t.Event != nil {
			offer(t, t.Event.Index)
		}
	}
	// A wildcard transition is offered every event it matches (but the eventless one),
	// after the source's transitions on that very event, longer descriptors first, each
	// length in document order (XState's candidates).
	var wild []*ir.ChartTransition
	for _, t := range c.Transitions {
		if t.Event == nil {
			wild = append(wild, t)
		}
	}
	slices.SortStableFunc(wild, func(a, b *ir.ChartTransition) int { return len(b.Descriptor) - len(a.Descriptor) })
	for _, t := range wild {
		for _, e := range l.m.Events {
			if e != c.Always && ir.Matches(t.Descriptor, e) {
				offer(t, e.Index)
			}
		}
	}
	f.values = make([]map[string]int, len(c.History))
	for i := range f.values {
		f.values[i] = map[string]int{}
	}
	c.Values = make([][][]*ir.Node, len(c.History))

	for _, n := range c.Nodes {
		if len(n.Delays) > 0 {
			c.Clocks = append(c.Clocks, n)
		}
	}
	start := make(config, len(c.Nodes))
	startMem := make(memory, len(c.History))
	r := f.enterInitial(start, startMem)
	f.add(r.cfg)
	for pass := 0; ; pass++ {
		f.grew = false
		f.explore()
		if f.stop {
			return
		}
		if !f.grew {
			break
		}
	}
	// The states, in the order found; then the transitions, in a last pass.
	goNames := map[string]bool{}
	short := l.cs.shortNames()
	for i, cf := range f.configs {
		atomic := f.atomic(cf)
		st := &ir.State{Index: i, Name: configName(atomic, short), Pos: atomic[0].Pos, Initial: i == 0, Terminal: f.isDone(cf), Config: atomic}
		if len(atomic) == 1 {
			st.Doc = atomic[0].Doc
		}
		st.Clock = f.clock(cf, st.Name)
		if st.Clock != nil {
			st.Timeout = st.Clock.Timeout
		}
		for j, on := range cf {
			if on {
				st.Delays = append(st.Delays, c.Nodes[j].Delays...)
			}
		}
		// The Go name joins the active states' shortest unambiguous names:
		// StateTalkingCameraOffGood for on.call.audio.live.talking,on.call.video.camera_off,...
		id := names.GoName(strings.NewReplacer(".", "_", ",", "_").Replace(st.Name))
		if id == "" || !names.StartsWithLetter(id) {
			id = "S" + id
		}
		for k := 2; goNames[id]; k++ {
			id = strings.TrimRightFunc(id, func(r rune) bool { return r >= '0' && r <= '9' }) + strconv.Itoa(k)
		}
		goNames[id] = true
		st.GoName = id
		// A configuration is in the groups of its active states.
		for j, on := range cf {
			if !on {
				continue
			}
			for _, g := range c.Nodes[j].Groups {
				if !st.InGroup(g) {
					st.Groups = append(st.Groups, g)
				}
			}
		}
		sort.Slice(st.Groups, func(a, b int) bool { return st.Groups[a].Index < st.Groups[b].Index })
		for _, g := range st.Groups {
			g.States = append(g.States, st)
		}
		f.states = append(f.states, st)
	}
	l.m.States = f.states
	l.m.Initial = f.states[0]
	for _, n := range c.Nodes[1:] {
		if n.Kind == ir.NodeCompound || n.Kind == ir.NodeParallel {
			if id := names.GoName(strings.ReplaceAll(short[n], ".", "_")); id != "" && names.StartsWithLetter(id) {
				n.GoName = id
			}
		}
	}
	c.StartActions, c.StartRaise = r.actions, r.raise
	f.emit = true
	f.explore()
	f.check()
	f.order()
}

// clock returns the active state of configuration cf (named name) whose timeout the
// configuration has, else the first active state with delays (nil: none). Each state with
// delays counts them on a clock of its own (Chart.Clocks), but a configuration keeps one
// timeout: two states with timeouts active together are refused, once per pair.
func (f *flattener) clock(cf config, name string) *ir.Node {
	var clock, waits *ir.Node
	for i, on := range cf {
		n := f.c.Nodes[i]
		if !on {
			continue
		}
		if waits == nil && len(n.Delays) > 0 {
			waits = n
		}
		if n.Timeout == nil {
			continue
		}
		if clock == nil {
			clock = n
			continue
		}
		if pair := [2]*ir.Node{clock, n}; !f.clocks[pair] {
			f.clocks[pair] = true
			f.l.ds.Errorf(f.l.cs.timeoutPos[n], "states %q and %q both time out and are active together, in %q: a configuration keeps one timeout; time out one of them, or a state around both (delayed transitions, after, may wait in both)", clock.Path, n.Path, name)
		}
	}
	if clock == nil {
		return waits
	}
	// A state's delays restart when it is entered; a timeout counting on across such a
	// restart would have its levels armed again, or those already due lost, as schedulers
	// happened to handle them. Delays may wait beside a timeout only in the timeout's own
	// state or the states around it, which are never entered without it.
	for i, on := range cf {
		n := f.c.Nodes[i]
		if !on || len(n.Delays) == 0 || n == clock || clock.IsDescendant(n) {
			continue
		}
		if pair := [2]*ir.Node{clock, n}; !f.clocks[pair] {
			f.clocks[pair] = true
			f.l.ds.Errorf(f.l.cs.timeoutPos[n], "state %q waits (delayed transitions) while %q times out, in %q: a timeout cannot count on while delays restart within it or beside it; wait in %q or a state around it, or use delayed transitions (after) in both", n.Path, clock.Path, name, clock.Path)
		}
	}
	return clock
}

// configName names a configuration by its active atomic states' shortest unambiguous paths
// (short), joined by ",": "reasoning" for active.reasoning when no other state is named
// reasoning. A name never holds a comma, so a configuration's name is never a state's.
func configName(atomic []*ir.Node, short map[*ir.Node]string) string {
	parts := make([]string, len(atomic))
	for i, n := range atomic {
		parts[i] = short[n]
	}
	return strings.Join(parts, ",")
}

// order puts the configurations in document order (by their active atomic states, first
// to last) and the transitions in the order of their configurations, each configuration's
// in the order found, which is their priority.
func (f *flattener) order() {
	m := f.l.m
	before := func(a, b *ir.State) bool {
		for i := 0; i < len(a.Config) && i < len(b.Config); i++ {
			if a.Config[i] != b.Config[i] {
				return a.Config[i].Index < b.Config[i].Index
			}
		}
		return len(a.Config) < len(b.Config)
	}
	sort.SliceStable(m.States, func(i, j int) bool { return before(m.States[i], m.States[j]) })
	for i, s := range m.States {
		s.Index = i
	}
	sort.SliceStable(m.Transitions, func(i, j int) bool { return m.Transitions[i].From[0].Index < m.Transitions[j].From[0].Index })
	for i, t := range m.Transitions {
		t.Index = i
	}
}

// shortNames returns shortPaths of the chart's states, computed once.
func (cs *chartState) shortNames() map[*ir.Node]string {
	if cs.short == nil {
		cs.short = shortPaths(cs.c.Nodes[1:])
	}
	return cs.short
}

// shortPaths maps each node to the shortest end of its path (its name, or its parent's
// name and its own, ...) that no other node's path ends with.
func shortPaths(nodes []*ir.Node) map[*ir.Node]string {
	ends := map[string]int{} // how many nodes' paths end with it
	for _, n := range nodes {
		parts := strings.Split(n.Path, ".")
		for k := range parts {
			ends[strings.Join(parts[k:], ".")]++
		}
	}
	out := make(map[*ir.Node]string, len(nodes))
	for _, n := range nodes {
		parts := strings.Split(n.Path, ".")
		out[n] = n.Path
		for k := len(parts) - 1; k >= 0; k-- {
			if end := strings.Join(parts[k:], "."); ends[end] == 1 {
				out[n] = end
				break
			}
		}
	}
	return out
}

func parallelCanFinish(p *ir.Node) bool {
	for _, r := range p.Children {
		if r.Kind == ir.NodeHistory {
			continue
		}
		ok := false
		switch r.Kind {
		case ir.NodeCompound:
			for _, c := range r.Children {
				ok = ok || c.Kind == ir.NodeFinal
			}
		case ir.NodeParallel:
			ok = parallelCanFinish(r)
		}
		if !ok {
			return false
		}
	}
	return true
}

func (f *flattener) add(c config) int {
	k := c.key()
	if i, ok := f.index[k]; ok {
		return i
	}
	if len(f.configs) >= maxConfigs {
		if !f.stop {
			f.stop = true
			f.l.ds.Errorf(f.c.Nodes[1].Pos, "the statechart has more than %d configurations (sets of active states); split its parallel regions into separate machines", maxConfigs)
		}
		return 0
	}
	f.index[k] = len(f.configs)
	f.configs = append(f.configs, c)
	f.grew = true
	return len(f.configs) - 1
}

func (f *flattener) atomic(c config) []*ir.Node {
	var out []*ir.Node
	for i, on := range c {
		if on && f.c.Nodes[i].Atomic() {
			out = append(out, f.c.Nodes[i])
		}
	}
	return out
}

// isDone reports whether the machine is done in c: a top-level final state is active.
func (f *flattener) isDone(c config) bool {
	for _, n := range f.c.Nodes[0].Children {
		if n.Kind == ir.NodeFinal && c[n.Index] {
			return true
		}
	}
	return false
}

// explore visits every configuration known (those found on the way too), computing every
// microstep from it; with emit it also records them as flat transitions.
func (f *flattener) explore() {
	m := f.l.m
	for i := 0; i < len(f.configs) && !f.stop; i++ {
		cf := f.configs[i]
		if f.isDone(cf) {
			continue
		}
		// Only the events some active state has a transition on can select anything (for
		// the others every state's own candidates are "none"): in event order, as before.
		for _, ei := range f.eventsOf(cf) {
			e := m.Events[ei]
			var outs []outcome
			if e == f.c.Always {
				outs = f.eventless(cf)
			} else {
				outs = f.selectFor(f.c.Nodes[0], cf, e)
				if n := len(outs); n > 0 && outs[n-1].sel == nil {
					outs = outs[:n-1]
				}
			}
			if len(outs) > maxOutcomes {
				f.stop = true
				f.l.ds.Errorf(f.c.Nodes[1].Pos, "the statechart has more than %d ways to take event %q in configuration %q; split its parallel regions into separate machines", maxOutcomes, e.Name, ir.ConfigName(f.atomic(cf)))
				return
			}
			for _, o := range outs {
				f.variants(i, cf, e, o)
			}
		}
	}
}

// eventsOf lists, in event order, the indexes of the events that the states active in c have
// transitions on, and the eventless event when the chart has one.
func (f *flattener) eventsOf(c config) []int {
	var out []int
	for i, on := range c {
		if on {
			out = append(out, f.events[i]...)
		}
	}
	if f.c.Always != nil {
		out = append(out, f.c.Always.Index)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// variants computes the microstep of o for every value of the history memory its targets
// read.
func (f *flattener) variants(from int, cf config, e *ir.Event, o outcome) {
	var slots []int
	for _, t := range o.sel {
		for _, n := range t.AllTargets() {
			if (n.Kind == ir.NodeHistory || t.Recall) && !slices.Contains(slots, n.Slot) {
				slots = append(slots, n.Slot)
			}
		}
	}
	sort.Ints(slots)
	mem := make(memory, len(f.c.History))
	var rec func(k int, conds []ir.MemCond)
	rec = func(k int, conds []ir.MemCond) {
		if k == len(slots) {
			f.microstep(from, cf, mem, e, o, conds)
			return
		}
		s := slots[k]
		v0 := 0
		if f.c.History[s].Remembers {
			v0 = 1 // a remembering state that remembers nothing is not gone back to
		}
		for v := v0; v <= len(f.c.Values[s]); v++ {
			mem[s] = v
			rec(k+1, append(conds[:len(conds):len(conds)], ir.MemCond{Slot: s, Value: v}))
		}
		mem[s] = 0
	}
	rec(0, nil)
}

// own lists the candidates of node n itself for event e: its transitions in order, and
// "none" unless one of them is unguarded.
func (f *flattener) own(n *ir.Node, c config, e *ir.Event) []outcome {
	var out []outcome
	for _, t := range f.byEvent[n.Index][e.Index] {
		conds, ok := f.l.resolveIn(t.Conds, f.isActive(c))
		if !ok {
			continue
		}
		out = append(out, outcome{sel: []*ir.ChartTransition{t}, conds: conds})
		if len(conds) == 0 {
			return out
		}
	}
	return append(out, outcome{})
}

// selectFor lists, in priority order, what XState selects for e in the subtree of n (which
// is active in c). The list is complete: its last entry has no conditions.
func (f *flattener) selectFor(n *ir.Node, c config, e *ir.Event) []outcome {
	switch n.Kind {
	case ir.NodeCompound:
		for _, ch := range n.Children {
			if c[ch.Index] {
				sub := f.selectFor(ch, c, e)
				if last := sub[len(sub)-1]; last.sel == nil {
					return append(sub[:len(sub)-1], f.own(n, c, e)...)
				}
				return sub
			}
		}
	case ir.NodeParallel:
		var regions [][]outcome
		for _, ch := range n.Children {
			if ch.Kind != ir.NodeHistory && c[ch.Index] {
				regions = append(regions, f.selectFor(ch, c, e))
			}
		}
		combos := product(regions, false)
		if last := combos[len(combos)-1]; last.sel == nil {
			return append(combos[:len(combos)-1], f.own(n, c, e)...)
		}
		return combos
	}
	return f.own(n, c, e)
}

// product combines lists of outcomes lexicographically: the first combination whose
// conditions hold is the first outcome of each list whose conditions hold. With dedupe a
// transition selected twice is taken once. Combinations that cannot hold are left out, and
// so is everything after one without conditions.
func product(lists [][]outcome, dedupe bool) []outcome {
	out := []outcome{{}}
	for _, list := range lists {
		var next []outcome
		for _, a := range out {
			for _, b := range list {
				conds, ok := andConds(a.conds, b.conds)
				if !ok {
					continue
				}
				sel := append(a.sel[:len(a.sel):len(a.sel)], b.sel...)
				if dedupe {
					sel = uniq(sel)
				}
				next = append(next, outcome{sel: sel, conds: conds})
				if len(b.conds) == 0 {
					break // the later outcomes of list are tried only when b fails, which it never does
				}
			}
			if len(next) > maxOutcomes {
				return next
			}
			if len(next) > 0 && len(next[len(next)-1].conds) == 0 {
				break // nor are the later combinations
			}
		}
		out = next
	}
	return out
}

func uniq(ts []*ir.ChartTransition) []*ir.ChartTransition {
	var out []*ir.ChartTransition
	for _, t := range ts {
		if !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	return out
}

// andConds is the conjunction of a and b, without repeats; ok is false when it can never
// hold (a guard and its negation).
func andConds(a, b []ir.Cond) ([]ir.Cond, bool) {
	out := a[:len(a):len(a)]
	for _, x := range b {
		dup := false
		for _, y := range out {
			if y.Guard == x.Guard {
				if y.Negate != x.Negate {
					return nil, false
				}
				dup = true
			}
		}
		if !dup {
			out = append(out, x)
		}
	}
	return out, true
}

// eventless lists the eventless selections of c: for each active atomic state in document
// order, the first always transition whose guards hold, from the state outwards.
func (f *flattener) eventless(c config) []outcome {
	var lists [][]outcome
	for _, a := range f.atomic(c) {
		var list []outcome
		complete := false
		for s := a; s != nil && !complete; s = s.Parent {
			for _, t := range f.byEvent[s.Index][f.c.Always.Index] {
				conds, ok := f.l.resolveIn(t.Conds, f.isActive(c))
				if !ok {
					continue
				}
				list = append(list, outcome{sel: []*ir.ChartTransition{t}, conds: conds})
				if len(conds) == 0 {
					complete = true
					break
				}
			}
		}
		if !complete {
			list = append(list, outcome{})
		}
		lists = append(lists, list)
	}
	var out []outcome
	for _, o := range product(lists, true) {
		if len(o.sel) > 0 {
			out = append(out, o)
		}
	}
	return out
}

// effectiveTargets are the states a transition targets, history resolved against mem.
func (f *flattener) effectiveTargets(t *ir.ChartTransition, mem memory) []*ir.Node {
	n := t.Target
	if n == nil {
		return nil
	}
	if t.Recall {
		if v := mem[n.Slot]; v > 0 {
			return f.c.Values[n.Slot][v-1]
		}
		return nil
	}
	var out []*ir.Node
	for _, n := range t.AllTargets() {
		switch {
		case n.Kind != ir.NodeHistory:
			out = append(out, n)
		case mem[n.Slot] > 0:
			out = append(out, f.c.Values[n.Slot][mem[n.Slot]-1]...)
		default:
			out = append(out, historyDefault(n))
		}
	}
	return out
}

// raised is what a microstep raises, in the order XState queues it: the events its
// transitions raise (their actions run before the entries), then the done events the
// entries raise.
func raised(ts []*ir.ChartTransition, done []*ir.Event) []*ir.Event {
	var out []*ir.Event
	for _, t := range ts {
		out = append(out, t.Raise...)
	}
	return append(out, done...)
}

// historyDefault is where history state h leads while it has recorded nothing: its
// default, else its parent's initial state, or for a parallel parent the parent itself
// (every region at its initial state), as XState does.
func historyDefault(h *ir.Node) *ir.Node {
	switch {
	case h.Default != nil:
		return h.Default
	case h.Parent.Kind == ir.NodeParallel:
		return h.Parent
	}
	return h.Parent.Initial
}

// domain is the transition's domain: the state whose descendants it exits and enters
// (nil: the whole machine, root included).
func (f *flattener) domain(t *ir.ChartTransition, mem memory) *ir.Node {
	targets := f.effectiveTargets(t, mem)
	if !t.Reenter {
		within := true
		for _, x := range targets {
			within = within && (x == t.Source || x.IsDescendant(t.Source))
		}
		if within {
			return t.Source
		}
	}
	all := append(targets[:len(targets):len(targets)], t.Source)
	for a := all[0].Parent; a != nil; a = a.Parent {
		ok := true
		for _, x := range all[1:] {
			ok = ok && x.IsDescendant(a)
		}
		if ok {
			return a
		}
	}
	if t.Reenter {
		return nil
	}
	return f.c.Nodes[0]
}

func (f *flattener) exitSet(ts []*ir.ChartTransition, c config, mem memory) config {
	out := make(config, len(c))
	for _, t := range ts {
		if t.Target == nil {
			continue
		}
		d := f.domain(t, mem)
		if t.Reenter && d == t.Source {
			out[d.Index] = true
		}
		for i, on := range c {
			if on && f.c.Nodes[i].IsDescendant(d) {
				out[i] = true
			}
		}
	}
	return out
}

func intersects(a, b config) bool {
	for i := range a {
		if a[i] && b[i] {
			return true
		}
	}
	return false
}

// removeConflicts keeps, of transitions whose exits overlap, the first selected, unless a
// later one's source lies within the earlier one's.
func (f *flattener) removeConflicts(ts []*ir.ChartTransition, c config, mem memory) []*ir.ChartTransition {
	var kept []*ir.ChartTransition
	for _, t1 := range ts {
		preempted := false
		var drop []*ir.ChartTransition
		for _, t2 := range kept {
			if intersects(f.exitSet([]*ir.ChartTransition{t1}, c, mem), f.exitSet([]*ir.ChartTransition{t2}, c, mem)) {
				if t1.Source.IsDescendant(t2.Source) {
					drop = append(drop, t2)
				} else {
					preempted = true
					f.conflict(t1, t2)
					break
				}
			}
		}
		if preempted {
			continue
		}
		var next []*ir.ChartTransition
		for _, t := range kept {
			dropped := false
			for _, d := range drop {
				dropped = dropped || d == t
			}
			if !dropped {
				next = append(next, t)
			}
		}
		kept = append(next, t1)
	}
	return kept
}

// conflict warns, once, that t1 is preempted by t2.
func (f *flattener) conflict(t1, t2 *ir.ChartTransition) {
	k := [2]*ir.ChartTransition{t1, t2}
	if !f.emit || f.warned[k] {
		return
	}
	f.warned[k] = true
	f.lost[t1] = true
	f.l.ds.Warnf(t1.Pos, "transition from %q on %s is preempted by the transition at %d:%d from %q when both are taken at once: they leave the same states, and the first in document order wins%s", t1.Source.Path, eventName(t1), t2.Pos.Line, t2.Pos.Col, t2.Source.Path, entryOrderNote(t1, t2))
}

func eventName(t *ir.ChartTransition) string {
	switch {
	case t.Always:
		return "always"
	case t.Done:
		return "done"
	}
	return strconv.Quote(t.EventName())
}

// entry is the result of entering states.
type entry struct {
	cfg      config
	mem      memory
	actions  []*ir.Action
	raise    []*ir.Event
	requires []*ir.Field // what the states entered require, in document order
	requirer *ir.Node    // the first state entered that requires fields
	done     bool
}

type entrySet struct {
	f     *flattener
	mem   memory
	on    []bool
	order []*ir.Node
}

func (s *entrySet) add(n *ir.Node) {
	if !s.on[n.Index] {
		s.on[n.Index] = true
		s.order = append(s.order, n)
	}
}

func (s *entrySet) hasDescendantOf(n *ir.Node) bool {
	for _, x := range s.order {
		if x.IsDescendant(n) {
			return true
		}
	}
	return false
}

func (s *entrySet) descendants(n *ir.Node) {
	switch n.Kind {
	case ir.NodeHistory:
		var restored []*ir.Node
		if v := s.mem[n.Slot]; v > 0 {
			restored = s.f.c.Values[n.Slot][v-1]
		} else {
			restored = []*ir.Node{historyDefault(n)}
		}
		for _, x := range restored {
			s.add(x)
			s.descendants(x)
		}
		for _, x := range restored {
			s.ancestors(properAncestors(x, n.Parent), nil, false)
		}
	case ir.NodeCompound:
		s.add(n.Initial)
		s.descendants(n.Initial)
	case ir.NodeParallel:
		for _, ch := range n.Children {
			if ch.Kind != ir.NodeHistory && !s.hasDescendantOf(ch) {
				s.add(ch)
				s.descendants(ch)
			}
		}
	}
}

// ancestors enters ancs (those within domain d, unless all), completing parallel states.
func (s *entrySet) ancestors(ancs []*ir.Node, d *ir.Node, bounded bool) {
	for _, a := range ancs {
		if !bounded || a.IsDescendant(d) {
			s.add(a)
		}
		if a.Kind == ir.NodeParallel {
			for _, ch := range a.Children {
				if ch.Kind != ir.NodeHistory && !s.hasDescendantOf(ch) {
					s.add(ch)
					s.descendants(ch)
				}
			}
		}
	}
}

// properAncestors lists n's ancestors from its parent up to, not including, to (all of
// them when to is nil).
func properAncestors(n, to *ir.Node) []*ir.Node {
	var out []*ir.Node
	if n == to {
		return nil
	}
	for a := n.Parent; a != nil && a != to; a = a.Parent {
		out = append(out, a)
	}
	return out
}

// enter enters the entry set of ts into c (which the exits have left), running entry
// actions in document order and raising done events.
func (f *flattener) enter(set *entrySet, c config, mem memory) entry {
	r := entry{cfg: c, mem: mem}
	order := append([]*ir.Node(nil), set.order...)
	sortNodes(order)
	completed := map[*ir.Node]bool{}
	for _, n := range order {
		c[n.Index] = true
		r.actions = append(r.actions, n.Entry...)
		if len(n.Requires) > 0 && r.requirer == nil {
			r.requirer = n
		}
		for _, fd := range n.Requires {
			if !slices.Contains(r.requires, fd) {
				r.requires = append(r.requires, fd)
			}
		}
		if n.Kind != ir.NodeFinal {
			continue
		}
		parent := n.Parent
		marker := parent.Parent
		if parent.Kind == ir.NodeParallel {
			marker = parent
		}
		if parent.Kind == ir.NodeCompound && parent.Parent != nil {
			r.raise = append(r.raise, parent.Done)
		}
		for marker != nil && marker.Kind == ir.NodeParallel && !completed[marker] && f.inFinal(c, marker) {
			completed[marker] = true
			r.raise = append(r.raise, marker.Done)
			marker = marker.Parent
		}
		if marker == nil {
			r.done = true
		}
	}
	if r.done {
		// XState runs the exit actions of every active state when the machine is done.
		for i := len(c) - 1; i >= 0; i-- {
			if c[i] {
				r.actions = append(r.actions, f.c.Nodes[i].Exit...)
			}
		}
	}
	return r
}

func (f *flattener) inFinal(c config, n *ir.Node) bool {
	switch n.Kind {
	case ir.NodeCompound:
		for _, ch := range n.Children {
			if ch.Kind == ir.NodeFinal && c[ch.Index] {
				return true
			}
		}
		return false
	case ir.NodeParallel:
		for _, ch := range n.Children {
			if ch.Kind != ir.NodeHistory && !f.inFinal(c, ch) {
				return false
			}
		}
		return true
	}
	return n.Kind == ir.NodeFinal
}

// enterInitial enters the initial configuration.
func (f *flattener) enterInitial(c config, mem memory) entry {
	set := &entrySet{f: f, mem: mem, on: make([]bool, len(c))}
	set.add(f.c.Nodes[0])
	set.descendants(f.c.Nodes[0])
	return f.enter(set, c, mem)
}

// microstep takes the transitions of o from configuration cf with memory mem (the value
// conditions memConds say so) and records the result.
func (f *flattener) microstep(from int, cf config, mem memory, e *ir.Event, o outcome, memConds []ir.MemCond) {
	ts := f.removeConflicts(o.sel, cf, mem)
	exits := f.exitSet(ts, cf, mem)
	c := cf.clone()
	newMem := append(memory(nil), mem...)
	var record []ir.MemCond
	var actions []*ir.Action
	changedHistory := false
	for i := len(exits) - 1; i >= 0; i-- {
		if !exits[i] {
			continue
		}
		s := f.c.Nodes[i]
		for _, h := range s.Children {
			if h.Kind != ir.NodeHistory {
				continue
			}
			changedHistory = true
			var val []*ir.Node
			for j, on := range cf {
				x := f.c.Nodes[j]
				if on && ((h.Deep && x.Atomic() && x.IsDescendant(s)) || (!h.Deep && x.Parent == s)) {
					val = append(val, x)
				}
			}
			v := f.value(h.Slot, val)
			newMem[h.Slot] = v
			record = append(record, ir.MemCond{Slot: h.Slot, Value: v})
		}
	}
	for i := len(exits) - 1; i >= 0; i-- {
		if exits[i] {
			actions = append(actions, f.c.Nodes[i].Exit...)
			c[i] = false
		}
	}
	for _, t := range ts {
		actions = append(actions, t.Actions...)
	}
	set := &entrySet{f: f, mem: newMem, on: make([]bool, len(c))}
	for _, t := range ts {
		d := f.domain(t, newMem)
		switch {
		case t.Recall:
			for _, x := range f.effectiveTargets(t, newMem) {
				set.add(x)
			}
		case t.Target != nil:
			for _, s := range t.AllTargets() {
				if s.Kind != ir.NodeHistory && (t.Source != s || t.Source != d || t.Reenter) {
					set.add(s)
				}
			}
			for _, s := range t.AllTargets() {
				set.descendants(s)
			}
		}
		for _, s := range f.effectiveTargets(t, newMem) {
			ancs := properAncestors(s, d)
			if d != nil && d.Kind == ir.NodeParallel {
				ancs = append(ancs, d)
			}
			bounded := !(t.Source.Parent == nil && t.Reenter) && d != nil
			set.ancestors(ancs, d, bounded)
		}
	}
	r := f.enter(set, c, newMem)
	if f.invalid(ts, r.cfg) {
		return
	}
	// A remembering state entered remembers the configuration it was entered from.
	for _, h := range f.c.History {
		if h.Remembers && !cf[h.Index] && r.cfg[h.Index] {
			changedHistory = true
			v := f.value(h.Slot, f.atomic(cf))
			newMem[h.Slot] = v
			record = append(record, ir.MemCond{Slot: h.Slot, Value: v})
		}
	}
	to := f.add(r.cfg)
	if !f.emit {
		return
	}
	for _, t := range ts {
		f.taken[t] = true
	}
	if e.Internal && r.requirer != nil {
		kind := "eventless"
		if ts[0].Done {
			kind = "done"
		}
		f.l.ds.Errorf(ts[0].Pos, "this %s transition enters %q, which requires context fields, but the machine takes it by itself and cannot refuse it for a missing field; enter %q on an event instead", kind, r.requirer.Path, r.requirer.Path)
		f.stop = true
	}
	changed := changedHistory || cf.key() != r.cfg.key()
	pos := o.sel[0].Pos
	if len(ts) > 0 {
		pos = ts[0].Pos
	}
	clock := f.states[to].Clock
	ft := &ir.Transition{Index: len(f.l.m.Transitions), Pos: pos, From: []*ir.State{f.states[from]}, Events: []*ir.Event{e},
		Conds: o.conds, Target: ir.Target{Kind: ir.Fixed, State: f.states[to]}, Actions: append(actions, r.actions...),
		Taken: ts, Mem: memConds, Record: record, Raise: raised(ts, r.raise), Changes: changed, Requires: r.requires,
		KeepsClock: clock != nil && cf[clock.Index] && !set.on[clock.Index]}
	for _, n := range f.c.Clocks {
		if set.on[n.Index] {
			ft.Enters = append(ft.Enters, n)
		}
	}
	for _, t := range ts {
		if t.Checkpoint != nil && ft.Checkpoint == nil {
			ft.Checkpoint = t.Checkpoint // the first of the microstep's
		}
		for _, c := range t.Increment {
			if c.Limit > 0 && slices.Contains(ft.Increment, c) {
				f.l.ds.Errorf(t.Pos, "counter %q would be incremented twice in one microstep, by this transition and another taken with it, which its limit cannot check yet; increment it in one of them", c.Name)
				f.stop = true
			}
			ft.Increment = append(ft.Increment, c)
		}
		ft.Reset = append(ft.Reset, t.Reset...)
		if len(t.Roles) == 0 {
			continue
		}
		if len(ft.Roles) > 0 && !slices.Equal(ft.Roles, t.Roles) {
			f.l.ds.Errorf(t.Pos, "this transition and the one at %d:%d are taken together but name different roles (by); give them the same roles, or take them on different events", ts[0].Pos.Line, ts[0].Pos.Col)
			f.stop = true
		}
		ft.Roles = t.Roles
	}
	f.l.m.Transitions = append(f.l.m.Transitions, ft)
}

// invalid reports (once per transition) a microstep that would leave the configuration
// invalid: a compound state with two active states or none, a parallel state without one
// of its regions, a state active without its parent. XState's exits and entries do not
// always match: entering a history state's default (or what it recorded) also enters the
// states between it and the history's parent, with their other regions, even those the
// transition did not leave; a transition of one region to itself leaves every region, which
// another region's transition within itself does not enter again. XState goes on in such a
// configuration; fsmgen refuses the spec.
func (f *flattener) invalid(ts []*ir.ChartTransition, c config) bool {
	problem := ""
	for _, n := range f.c.Nodes {
		if !c[n.Index] {
			continue
		}
		if n.Parent != nil && !c[n.Parent.Index] {
			problem = fmt.Sprintf("%q active without %q", n.Path, n.Parent.Path)
			break
		}
		// The first two active children and the first missing one (no list: a state may
		// have thousands of children, and this runs for every microstep).
		var active [2]*ir.Node
		var missing *ir.Node
		nActive := 0
		for _, ch := range n.Children {
			switch {
			case ch.Kind == ir.NodeHistory:
			case c[ch.Index]:
				if nActive < 2 {
					active[nActive] = ch
				}
				nActive++
			case missing == nil:
				missing = ch
			}
		}
		switch {
		case n.Kind == ir.NodeCompound && nActive > 1:
			problem = fmt.Sprintf("%q in both %q and %q at once", n.Path, active[0].Path, active[1].Path)
		case n.Kind == ir.NodeCompound && nActive == 0:
			problem = fmt.Sprintf("%q active in none of its states", n.Path)
		case n.Kind == ir.NodeParallel && missing != nil:
			problem = fmt.Sprintf("parallel state %q without its region %q", n.Path, missing.Path)
		}
		if problem != "" {
			break
		}
	}
	if problem == "" {
		return false
	}
	t, hint := ts[len(ts)-1], "write them so that one of them leaves the states the other enters, or take them on different events"
	for _, x := range ts {
		if x.Target != nil && x.Target.Kind == ir.NodeHistory {
			t, hint = x, fmt.Sprintf("target the history state from outside %q, or a state instead", x.Target.Parent.Path)
		}
	}
	if len(ts) == 1 && t.Target.Kind != ir.NodeHistory {
		hint = "target a state outside the region instead"
	}
	if !f.broke[t] {
		f.broke[t] = true
		var others []string
		for _, x := range ts {
			if x != t {
				others = append(others, fmt.Sprintf("%d:%d", x.Pos.Line, x.Pos.Col))
			}
		}
		with := ""
		if len(others) > 0 {
			with = ", taken with the transition at " + strings.Join(others, " and ") + ","
		}
		target := "stay"
		if t.Target != nil {
			target = "go to " + strconv.Quote(t.Target.Path)
		}
		f.l.ds.Errorf(t.Pos, "transition from %q on %s to %s would%s leave %s, an invalid configuration (XState goes on in it); %s", t.Source.Path, eventName(t), strings.TrimPrefix(target, "go to "), with, problem, hint)
	}
	f.stop = true // the spec is refused: stop
	return true
}

// value interns the history value val of slot s.
func (f *flattener) value(s int, val []*ir.Node) int {
	var b strings.Builder
	for _, n := range val {
		fmt.Fprintf(&b, "%d,", n.Index)
	}
	k := b.String()
	if v, ok := f.values[s][k]; ok {
		return v
	}
	f.c.Values[s] = append(f.c.Values[s], val)
	v := len(f.c.Values[s])
	f.values[s][k] = v
	f.grew = true
	return v
}

// check reports what the compiled chart shows: states never active, transitions never
// taken.
func (f *flattener) check() {
	active := make([]bool, len(f.c.Nodes))
	for _, cf := range f.configs {
		for i, on := range cf {
			active[i] = active[i] || on
		}
	}
	init := f.states[0].Config
	for _, n := range f.c.Nodes[1:] {
		if n.Kind != ir.NodeHistory && !active[n.Index] {
			f.l.ds.Errorf(n.Pos, "state %q is unreachable from the initial configuration %q", n.Path, ir.ConfigName(init))
		}
	}
	// A timeout's expiry event must take the state somewhere, in every configuration the
	// state is active in (reported once per state).
	reported := map[*ir.Node]bool{}
	for _, st := range f.states {
		if st.Timeout == nil || st.Timeout.OnExpiry == nil || reported[st.Clock] {
			continue
		}
		ev, takes := st.Timeout.OnExpiry, false
		for _, t := range f.l.m.Transitions {
			takes = takes || t.From[0] == st && t.Events[0] == ev
		}
		if !takes {
			n := st.Clock
			reported[n] = true
			in := ""
			if len(st.Config) > 1 || st.Config[0] != n {
				in = fmt.Sprintf(" in %q", st.Name)
			}
			f.l.ds.Errorf(f.l.cs.expiryPos[n], "timeout of state %q fires %q, which %q and the states around it do not take%s", n.Path, ev.Name, n.Path, in)
		}
	}
	// An error that stopped the last pass left the transitions after it unvisited.
	for _, t := range f.c.Transitions {
		if !f.taken[t] && !f.lost[t] && active[t.Source.Index] && !f.stop {
			f.l.ds.Warnf(t.Pos, "transition from %q on %s is never taken: %s%s", t.Source.Path, eventName(t), f.whyNotTaken(t), inClause(t))
		}
	}
}

func (f *flattener) whyNotTaken(t *ir.ChartTransition) string {
	switch {
	case t.Done:
		return "its source is never done"
	case t.Always:
		return "an eventless transition of a state within it, or an earlier one, is always taken first"
	}
	return "the states within its source handle the event first, or an earlier transition always holds"
}
