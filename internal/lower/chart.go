package lower

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/fsmgen/fsmgen/internal/ir"
	"github.com/fsmgen/fsmgen/spec"
)

// A spec is a statechart when a state nests states, is parallel or is a history state.
// Lowering then builds the state tree (ir.Chart) and compiles it into the flat machine
// every tool runs (flatten.go).

// chartState is what chart lowering keeps about the tree.
type chartState struct {
	c        *ir.Chart
	refs     map[string]*ir.Node // paths, and names that only one state has
	twice    map[string][]*ir.Node
	decl     map[*ir.Node]*spec.State
	bad      bool // a node or transition had errors: the graph checks are skipped
	done     map[*ir.Node]*ir.Event
	eventGo  *goNames
	doneUsed map[*ir.Node]bool
}

// isChart reports whether the spec is a statechart: it nests states, or uses what only
// statecharts have (parallel and history states, eventless and done transitions, reenter).
func isChart(f *spec.File) bool {
	for _, s := range f.States {
		if len(s.Children) > 0 || s.Parallel.Set || s.History.Set {
			return true
		}
	}
	for _, t := range f.Transitions {
		if t.Always.Set || t.Done.Set || t.Reenter.Set {
			return true
		}
	}
	return false
}

// unsupportedInChart names what a statechart cannot use yet, for the errors that say so.
const unsupportedInChart = "is not supported in a statechart (nested states) yet"

// declareNodes builds the tree of a statechart's states.
func (l *lowerer) declareNodes() {
	cs := &chartState{c: &ir.Chart{}, refs: map[string]*ir.Node{}, twice: map[string][]*ir.Node{},
		decl: map[*ir.Node]*spec.State{}, done: map[*ir.Node]*ir.Event{}, doneUsed: map[*ir.Node]bool{}}
	l.cs = cs
	root := &ir.Node{Kind: ir.NodeCompound}
	cs.c.Nodes = append(cs.c.Nodes, root)
	byName := map[string][]*ir.Node{}
	var walk func(parent *ir.Node, states []*spec.State)
	walk = func(parent *ir.Node, states []*spec.State) {
		for _, s := range states {
			n := &ir.Node{Index: len(cs.c.Nodes), Name: s.Name.Value, Path: s.Name.Value, Doc: s.Doc.Value, Pos: s.Name.Pos, Parent: parent}
			if parent != root {
				n.Path = parent.Path + "." + n.Name
			}
			if s.Broken {
				cs.bad = true
			}
			if !s.Name.Bad {
				l.printable("state name", s.Name)
				if strings.Contains(n.Name, ".") {
					l.ds.Errorf(s.Name.Pos, "state name %q holds a dot, which separates the states of a path in a statechart; rename it", n.Name)
					cs.bad = true
				}
			}
			switch {
			case s.History.Set:
				n.Kind, n.Deep = ir.NodeHistory, s.History.Value == "deep"
			case s.Parallel.Value:
				n.Kind = ir.NodeParallel
			case len(s.Children) > 0:
				n.Kind = ir.NodeCompound
			case s.Terminal.Value:
				n.Kind = ir.NodeFinal
			}
			cs.c.Nodes = append(cs.c.Nodes, n)
			parent.Children = append(parent.Children, n)
			cs.decl[n] = s
			cs.refs[n.Path] = n
			byName[n.Name] = append(byName[n.Name], n)
			walk(n, s.Children)
		}
	}
	walk(root, l.f.States)
	for name, ns := range byName {
		if len(ns) == 1 {
			if _, ok := cs.refs[name]; !ok {
				cs.refs[name] = ns[0]
			}
		} else if _, ok := cs.refs[name]; !ok {
			cs.twice[name] = ns
		}
	}
	l.m.Chart = cs.c
}

// nodeRef resolves a state named by its path or by a name only one state has.
func (l *lowerer) nodeRef(n spec.Str) (*ir.Node, bool) {
	if ns := l.cs.twice[n.Value]; n.Set && !n.Bad && ns != nil {
		paths := make([]string, len(ns))
		for i, x := range ns {
			paths[i] = x.Path
		}
		l.ds.Errorf(n.Pos, "state name %q is ambiguous: it names %s; write the path of the one you mean", n.Value, strings.Join(paths, ", "))
		l.failed["state"] = true
		return nil, false
	}
	if n.Set && !n.Bad && l.cs.refs[n.Value] == nil {
		if x := l.cs.relative(n.Value); x != nil {
			return x, true
		}
	}
	return ref(l, "state", l.cs.refs, n)
}

// relative resolves a path that starts at a state named by its name alone
// (format.bold.off, where only one state is named format).
func (cs *chartState) relative(path string) *ir.Node {
	parts := strings.Split(path, ".")
	n := cs.refs[parts[0]]
	for _, p := range parts[1:] {
		if n == nil {
			return nil
		}
		var next *ir.Node
		for _, c := range n.Children {
			if c.Name == p {
				next = c
			}
		}
		n = next
	}
	return n
}

// resolveNodes checks the tree: kinds, initial states, history states and their defaults,
// and resolves entry and exit actions.
func (l *lowerer) resolveNodes() {
	cs := l.cs
	for _, n := range cs.c.Nodes[1:] {
		s := cs.decl[n]
		refuse := func(p spec.Pos, what string) {
			l.ds.Errorf(p, "%s %s", what, unsupportedInChart)
			cs.bad = true
		}
		if s.Remembers.Set {
			l.ds.Errorf(s.Remembers.Pos, "remembers is the history of a flat machine; in a statechart add a history state (history: shallow or deep) to the compound state and target it")
			cs.bad = true
		}
		if len(s.Requires) > 0 {
			refuse(s.Requires[0].Pos, "requires")
		}
		if s.Timeout != nil {
			refuse(s.Timeout.Pos, "timeout")
		}
		if len(s.Groups) > 0 {
			refuse(s.Groups[0].Pos, "groups")
		}
		for _, a := range s.Entry {
			if ac, ok := ref(l, "action", l.ac, a); ok {
				n.Entry = append(n.Entry, ac)
			}
		}
		for _, a := range s.Exit {
			if ac, ok := ref(l, "action", l.ac, a); ok {
				n.Exit = append(n.Exit, ac)
			}
		}
		switch n.Kind {
		case ir.NodeHistory:
			if s.History.Value != "shallow" && s.History.Value != "deep" && !s.History.Bad {
				l.ds.Errorf(s.History.Pos, "history must be shallow or deep, not %q", s.History.Value)
			}
			if len(s.Children) > 0 {
				l.ds.Errorf(s.StatesPos, "history state %q cannot have states of its own", n.Path)
			}
			if n.Parent.Kind != ir.NodeCompound || n.Parent.Parent == nil {
				l.ds.Errorf(s.History.Pos, "history state %q must be a state of a compound state, whose history it keeps, and %s", n.Path, where(n.Parent))
			}
			for _, what := range []struct {
				set bool
				p   spec.Pos
				key string
			}{{s.Initial.Value, s.Initial.Pos, "initial"}, {s.Terminal.Value, s.Terminal.Pos, "terminal"}, {s.Parallel.Value, s.Parallel.Pos, "parallel"}, {len(s.Entry) > 0, firstPos(s.Entry), "entry"}, {len(s.Exit) > 0, firstPos(s.Exit), "exit"}} {
				if what.set {
					l.ds.Errorf(what.p, "history state %q cannot be %s: it is never active itself", n.Path, keyWord(what.key))
					cs.bad = true
				}
			}
			if s.Default.Set {
				if d, ok := l.nodeRef(s.Default); ok {
					switch {
					case !d.IsDescendant(n.Parent) || d.Kind == ir.NodeHistory:
						l.ds.Errorf(s.Default.Pos, "default %q of history state %q must be a state within %q", d.Path, n.Path, n.Parent.Path)
						cs.bad = true
					default:
						n.Default = d
					}
				} else {
					cs.bad = true
				}
			}
			n.Slot = len(cs.c.History)
			cs.c.History = append(cs.c.History, n)
			continue
		case ir.NodeParallel:
			if len(s.Children) == 0 {
				l.ds.Errorf(s.Parallel.Pos, "parallel state %q has no regions: nest its regions under states", n.Path)
				cs.bad = true
			}
			if s.Terminal.Value {
				l.ds.Errorf(s.Terminal.Pos, "parallel state %q cannot be terminal; it is done when all its regions are", n.Path)
				cs.bad = true
			}
		case ir.NodeCompound:
			if s.Terminal.Value {
				l.ds.Errorf(s.Terminal.Pos, "compound state %q cannot be terminal; give it a terminal state of its own", n.Path)
				cs.bad = true
			}
		}
		if s.Default.Set {
			l.ds.Errorf(s.Default.Pos, "default belongs to history states; %q is not one", n.Path)
		}
	}
	// Initial states: one per compound state (the top level included), none among regions.
	for _, n := range cs.c.Nodes {
		if n.Kind != ir.NodeCompound && n.Kind != ir.NodeParallel {
			continue
		}
		var initials []*ir.Node
		for _, c := range n.Children {
			s := cs.decl[c]
			if !s.Initial.Value || c.Kind == ir.NodeHistory {
				continue
			}
			if n.Kind == ir.NodeParallel {
				l.ds.Errorf(s.Initial.Pos, "%q is a region of parallel state %q: every region is entered, so none is initial", c.Path, n.Path)
				cs.bad = true
				continue
			}
			initials = append(initials, c)
		}
		if n.Kind == ir.NodeParallel {
			for _, c := range n.Children {
				if c.Kind == ir.NodeFinal { // a history state's own check says where it belongs
					l.ds.Errorf(c.Pos, "%q cannot be a region of parallel state %q: a region is a state, or a compound state", c.Path, n.Path)
					cs.bad = true
				}
			}
			continue
		}
		switch {
		case len(initials) == 1:
			n.Initial = initials[0]
		case len(initials) > 1:
			for _, c := range initials[1:] {
				l.ds.Errorf(cs.decl[c].Initial.Pos, "state %q is also marked initial; %q is the first (exactly one state of %s is initial)", c.Path, initials[0].Path, where(n))
			}
			n.Initial = initials[0]
		case cs.bad || l.unsure["state"]:
		case n.Parent == nil:
			p := spec.Pos{File: l.f.Path, Line: 1, Col: 1}
			if len(l.f.States) > 0 {
				p = l.f.States[0].Name.Pos
			}
			l.ds.Errorf(p, "no initial state: mark one state with initial: true")
		default:
			l.ds.Errorf(n.Pos, "compound state %q has no initial state: mark one of its states with initial: true", n.Path)
		}
		if n.Initial == nil {
			cs.bad = true
		}
	}
}

func where(n *ir.Node) string {
	switch {
	case n.Parent == nil:
		return "it is at the top level"
	case n.Kind == ir.NodeParallel:
		return fmt.Sprintf("%q is a parallel state", n.Path)
	}
	return fmt.Sprintf("%q", n.Path)
}

func keyWord(key string) string {
	switch key {
	case "entry", "exit":
		return "given " + key + " actions"
	}
	return key
}

func firstPos(list []spec.Str) spec.Pos {
	if len(list) == 0 {
		return spec.Pos{}
	}
	return list[0].Pos
}

// doneEvent returns the internal event a node's done raises.
func (l *lowerer) doneEvent(n *ir.Node) *ir.Event {
	if e := l.cs.done[n]; e != nil {
		return e
	}
	e := &ir.Event{Index: len(l.m.Events), Name: "done.state." + n.Path, Internal: true,
		Doc: "Raised when " + n.Path + " is done."}
	l.m.Events = append(l.m.Events, e)
	l.cs.done[n] = e
	n.Done = e
	return e
}

// resolveChartTransitions resolves the transitions of a statechart: one chart transition
// per source state and event.
func (l *lowerer) resolveChartTransitions() {
	cs := l.cs
	for _, t := range l.f.Transitions {
		if t.Broken {
			cs.bad = true
		}
		refuse := func(set bool, p spec.Pos, what string) {
			if set {
				l.ds.Errorf(p, "%s %s", what, unsupportedInChart)
				cs.bad = true
			}
		}
		refuse(len(t.By) > 0, byPos(t), "by (roles)")
		refuse(len(t.Increment) > 0, firstPos(t.Increment), "increment")
		refuse(len(t.Reset) > 0, firstPos(t.Reset), "reset")
		refuse(t.Checkpoint.Set, t.Checkpoint.Pos, "checkpoint")
		// What is refused is not reported unused either.
		for kind, set := range map[string]bool{"role": len(t.By) > 0, "counter": len(t.Increment)+len(t.Reset) > 0, "checkpoint": t.Checkpoint.Set} {
			l.failed[kind] = l.failed[kind] || set
		}
		refuse(len(t.Choose) > 0 || t.ChooseBad, t.ChoosePos, "choose")
		if t.To.History.Set {
			l.ds.Errorf(t.To.Pos, "to: {history: ...} is the history of a flat machine; in a statechart target a history state (history: shallow or deep) of the compound state")
			cs.bad = true
			continue
		}

		// Sources.
		var sources []*ir.Node
		switch {
		case t.From.Bad:
			cs.bad = true
		case t.From.Group.Set:
			refuse(true, t.From.Group.Pos, "from: {group: ...}")
		case t.From.Any:
			except := map[*ir.Node]bool{}
			for _, e := range t.From.Except {
				if n, ok := l.nodeRef(e); ok {
					except[n] = true
				} else {
					cs.bad = true
				}
			}
			for _, n := range cs.c.Nodes[1:] {
				if n.Kind == ir.NodeAtomic && !except[n] {
					sources = append(sources, n)
				}
			}
		default:
			for _, s := range t.From.States {
				n, ok := l.nodeRef(s)
				if !ok {
					cs.bad = true
					continue
				}
				switch n.Kind {
				case ir.NodeHistory:
					l.ds.Errorf(s.Pos, "transition leaves history state %q, which is never active itself", n.Path)
					cs.bad = true
					continue
				case ir.NodeFinal:
					l.ds.Errorf(s.Pos, "transition leaves terminal state %q", n.Path)
					cs.bad = true
					continue
				}
				sources = append(sources, n)
			}
		}

		// Target.
		var target *ir.Node
		switch {
		case t.To.Bad:
			cs.bad = true
		case t.To.State.Set:
			if t.Internal.Value {
				l.ds.Errorf(t.Internal.Pos, "a transition has either to or internal: true, not both")
				cs.bad = true
			}
			n, ok := l.nodeRef(t.To.State)
			if !ok {
				cs.bad = true
				continue
			}
			target = n
		case t.Internal.Value:
		case len(t.Choose) == 0 && !t.ChooseBad:
			l.ds.Errorf(t.Pos, "transition has no target: give to, or internal: true to stay")
			cs.bad = true
		}
		if t.From.Any && target != nil {
			// As in a flat machine, "any" does not include the target itself.
			sources = slices.DeleteFunc(sources, func(n *ir.Node) bool { return n == target })
		}
		if t.Reenter.Set && target == nil {
			l.ds.Errorf(t.Reenter.Pos, "reenter needs a target: a transition without one (internal) exits and enters nothing")
		}

		// Triggers.
		var events []*ir.Event
		always, done := t.Always.Value, t.Done.Value
		switch {
		case always && done:
			l.ds.Errorf(t.Done.Pos, "a transition is eventless (always) or taken when its source is done (done), not both")
			cs.bad = true
			continue
		case (always || done) && t.OnSet:
			key, p := "always", t.Always.Pos
			if done {
				key, p = "done", t.Done.Pos
			}
			l.ds.Errorf(p, "a transition with %s: true has no event: remove on", key)
			cs.bad = true
		case always:
			if cs.c.Always == nil {
				cs.c.Always = &ir.Event{Index: len(l.m.Events), Name: "always", Internal: true, Doc: "Eventless transitions."}
				l.m.Events = append(l.m.Events, cs.c.Always)
			}
			events = []*ir.Event{cs.c.Always}
		case done:
		case t.OnBad:
			cs.bad = true
		case t.OnSet:
			for _, n := range t.On {
				if e, ok := ref(l, "event", l.ev, n); ok {
					events = append(events, e)
				} else {
					cs.bad = true
				}
			}
		case target != nil:
			if e := l.ev[target.Name]; e != nil {
				l.used[any(e)] = true
				events = []*ir.Event{e}
			}
		}
		conds, known := l.conds(t.If, t.Unless)
		if !known {
			cs.bad = true
		}
		var actions []*ir.Action
		for _, a := range t.Do {
			if ac, ok := ref(l, "action", l.ac, a); ok {
				actions = append(actions, ac)
			}
		}
		for _, src := range sources {
			evs := events
			if done {
				if src.Kind != ir.NodeCompound && src.Kind != ir.NodeParallel {
					l.ds.Errorf(t.Done.Pos, "done: %q is not a compound or parallel state, so it is never done", src.Path)
					cs.bad = true
					continue
				}
				evs = []*ir.Event{l.doneEvent(src)}
			}
			reenter := target == src
			if t.Reenter.Set {
				reenter = t.Reenter.Value
			} else if target != nil && target != src && target.IsDescendant(src) && (len(src.Entry) > 0 || len(src.Exit) > 0 || hasHistory(src)) {
				l.ds.Warnf(t.To.Pos, "transition from %q to %q, a state within it, does not exit and re-enter %q, so its exit and entry actions do not run and its history is not recorded (as in XState; SCXML would re-enter it): add reenter: true to re-enter it, or reenter: false to say so", src.Path, target.Path, src.Path)
			}
			for _, e := range evs {
				ct := &ir.ChartTransition{Index: len(cs.c.Transitions), Pos: t.Pos, Doc: t.Doc.Value, Source: src, Event: e,
					Always: always, Done: done, Conds: conds, Target: target, Reenter: reenter, Actions: actions}
				cs.c.Transitions = append(cs.c.Transitions, ct)
			}
		}
	}
}

func hasHistory(n *ir.Node) bool {
	for _, c := range n.Children {
		if c.Kind == ir.NodeHistory {
			return true
		}
	}
	return false
}

func byPos(t *spec.Transition) spec.Pos {
	if len(t.By) > 0 {
		return t.By[0].Pos
	}
	return t.Pos
}

// refuseInChart reports the top-level declarations a statechart cannot use yet.
func (l *lowerer) refuseInChart() {
	f := l.f
	refuse := func(set bool, p spec.Pos, what string) {
		if set {
			l.ds.Errorf(p, "%s %s", what, unsupportedInChart)
			l.cs.bad = true
		}
	}
	refuse(len(f.Counters) > 0, counterPos(f), "counters")
	refuse(len(f.Checkpoints) > 0, checkpointPos(f), "checkpoints")
	l.failed["counter"] = l.failed["counter"] || len(f.Counters) > 0
	l.failed["checkpoint"] = l.failed["checkpoint"] || len(f.Checkpoints) > 0
	refuse(f.Idempotent.Value, f.Idempotent.Pos, "idempotent")
	refuse(len(f.TimeoutLevels) > 0, f.LevelsPos, "timeout_levels")
}

func counterPos(f *spec.File) spec.Pos {
	if len(f.Counters) > 0 {
		return f.Counters[0].Name.Pos
	}
	return spec.Pos{}
}

func checkpointPos(f *spec.File) spec.Pos {
	if len(f.Checkpoints) > 0 {
		return f.Checkpoints[0].Name.Pos
	}
	return spec.Pos{}
}

// sortNodes sorts nodes into document order.
func sortNodes(ns []*ir.Node) {
	sort.Slice(ns, func(i, j int) bool { return ns[i].Index < ns[j].Index })
}
