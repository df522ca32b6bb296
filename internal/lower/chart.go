package lower

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
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
	short    map[*ir.Node]string // shortPaths of the nodes, once needed (shortNames)
	bad      bool                // a node or transition had errors: the graph checks are skipped
	done     map[*ir.Node]*ir.Event
	eventGo  *goNames
	groupGo  *goNames
	doneUsed map[*ir.Node]bool
	// expiryPos is where each state's timeout names its on_expiry event, timeoutPos where it
	// is declared (its after, for a delayed transition's).
	expiryPos, timeoutPos map[*ir.Node]spec.Pos
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
	cs.groupGo = l.newGoNames("group", false)
	cs.expiryPos, cs.timeoutPos = map[*ir.Node]spec.Pos{}, map[*ir.Node]spec.Pos{}
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
		if s.Remembers.Value {
			if n.Kind == ir.NodeHistory {
				l.ds.Errorf(s.Remembers.Pos, "history state %q cannot remember: it is never entered itself", n.Path)
				cs.bad = true
			} else {
				n.Remembers = true
			}
		}
		for _, r := range s.Requires {
			if n.Kind == ir.NodeHistory {
				l.ds.Errorf(r.Pos, "history state %q cannot require fields: it is never entered itself", n.Path)
				cs.bad = true
				break
			}
			if fd, ok := ref(l, "context field", l.fi, r); ok && !slices.Contains(n.Requires, fd) {
				n.Requires = append(n.Requires, fd)
			}
		}
		if n.Delays = l.delaysOf(n.Path); len(n.Delays) > 0 {
			cs.timeoutPos[n] = n.Delays[0].Pos
		}
		if a := l.afters[n.Path]; a != nil && a.ev != nil && s.Timeout == nil {
			n.Timeout = l.timeout(&ir.State{Name: n.Path}, a.timeout())
			cs.expiryPos[n], cs.timeoutPos[n] = a.after.Pos, a.after.Pos
		} else if s.Timeout != nil {
			if why := cannotTimeOut(n); why != "" {
				l.ds.Errorf(s.Timeout.Pos, "%s state %q cannot time out: %s", n.Kind, n.Path, why)
				cs.bad = true
			} else {
				n.Timeout = l.timeout(&ir.State{Name: n.Path}, s.Timeout)
				cs.timeoutPos[n] = s.Timeout.Pos
				if n.Timeout.OnExpiry != nil {
					cs.expiryPos[n] = s.Timeout.OnExpiry.Pos
				}
			}
		}
		for _, g := range s.Groups {
			if g.Bad {
				continue
			}
			if n.Kind == ir.NodeHistory {
				l.ds.Errorf(g.Pos, "history state %q cannot be in a group: it is never active itself", n.Path)
				cs.bad = true
				break
			}
			gr := l.gr[g.Value]
			if gr == nil {
				gr = &ir.Group{Index: len(l.m.Groups), Name: g.Value, GoName: cs.groupGo.add(g)}
				l.m.Groups = append(l.m.Groups, gr)
				l.gr[g.Value] = gr
				l.groupPos[gr] = g.Pos
			}
			if !slices.Contains(n.Groups, gr) {
				n.Groups = append(n.Groups, gr)
			}
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
			if n.Parent.Kind != ir.NodeCompound && n.Parent.Kind != ir.NodeParallel || n.Parent.Parent == nil {
				l.ds.Errorf(s.History.Pos, "history state %q must be a state of a compound or parallel state, whose history it keeps, and %s", n.Path, where(n.Parent))
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
	// Remembering states own the memory slots after the history states'.
	for _, n := range cs.c.Nodes[1:] {
		if n.Remembers {
			n.Slot = len(cs.c.History)
			cs.c.History = append(cs.c.History, n)
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
// per source state, event and choice (a choose becomes one transition per choice, in
// order, each with the transition's guards and its own: the first whose guards hold is
// taken, as of transitions written one after the other).
func (l *lowerer) resolveChartTransitions() {
	cs := l.cs
	for _, t := range l.f.Transitions {
		if t.Broken {
			cs.bad = true
		}
		if len(t.By) > 0 && (t.Always.Value || t.Done.Value) {
			l.ds.Errorf(byPos(t), "an eventless or done transition is taken by the machine itself, which no role fires: remove by")
			cs.bad = true
		}
		roles, ok := l.roleRules(t.By)
		if !ok {
			cs.bad = true
		}
		var inc, reset []*ir.Counter
		for _, n := range t.Increment {
			co, ok := ref(l, "counter", l.co, n)
			if !ok {
				cs.bad = true
				continue
			}
			if co.Limit > 0 && (t.Always.Value || t.Done.Value) {
				l.ds.Errorf(n.Pos, "counter %q has a limit, which refuses the event whose macrostep reaches it: in a statechart only a transition on an event may increment it yet, not an eventless or done transition", co.Name)
				cs.bad = true
			}
			inc = append(inc, co)
		}
		for _, n := range t.Reset {
			if co, ok := ref(l, "counter", l.co, n); ok {
				reset = append(reset, co)
			} else {
				cs.bad = true
			}
		}
		if t.ChooseBad {
			cs.bad = true
			continue
		}
		chooseSet := len(t.Choose) > 0
		if chooseSet && (t.To.Set || t.Internal.Value) {
			p, what := t.To.Pos, "to"
			if !t.To.Set {
				p, what = t.Internal.Pos, "internal: true"
			}
			l.ds.Errorf(p, "transition has both choose and %s; keep one", what)
			cs.bad = true
			continue
		}

		// Sources.
		var sources []*ir.Node
		switch {
		case t.From.Bad:
			cs.bad = true
		case t.From.Any || t.From.Group.Set:
			except := map[*ir.Node]bool{}
			for _, e := range t.From.Except {
				if n, ok := l.nodeRef(e); ok {
					except[n] = true
				} else {
					cs.bad = true
				}
			}
			if t.From.Any {
				for _, n := range cs.c.Nodes[1:] {
					if n.Kind == ir.NodeAtomic && !except[n] {
						sources = append(sources, n)
					}
				}
				break
			}
			g, ok := ref(l, "group", l.gr, t.From.Group)
			if !ok {
				cs.bad = true
				continue
			}
			for _, n := range cs.c.Nodes[1:] {
				if !slices.Contains(n.Groups, g) || except[n] {
					continue
				}
				if n.Kind == ir.NodeFinal {
					l.ds.Errorf(t.From.Group.Pos, "transition leaves terminal state %q (a member of group %q; add except: [%s])", n.Path, g.Name, n.Path)
					cs.bad = true
					continue
				}
				sources = append(sources, n)
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

		// Triggers.
		var events []*ir.Event
		var descs []string // wildcard descriptors
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
		case t.After.Set:
			if e := l.afterEv[t]; e != nil {
				events = []*ir.Event{e}
			} else {
				cs.bad = true
			}
		case t.OnBad:
			cs.bad = true
		case t.OnSet:
			for _, n := range t.On {
				if isDescriptor(n.Value) && l.ev[n.Value] == nil {
					if l.descriptor(n) {
						descs = append(descs, n.Value)
					} else {
						cs.bad = true
					}
					continue
				}
				if e, ok := ref(l, "event", l.ev, n); ok {
					events = append(events, e)
				} else {
					cs.bad = true
				}
			}
		case chooseSet || t.To.History.Set || len(t.To.More) > 0:
			p, what := t.To.Pos, "a history target"
			switch {
			case chooseSet:
				p, what = t.ChoosePos, "choose"
			case len(t.To.More) > 0:
				what = "a transition with several targets"
			}
			l.ds.Errorf(p, "a transition without on takes its event from its target state, so %s needs on: EVENT", what)
			cs.bad = true
		case t.To.State.Set:
			if n := cs.refs[t.To.State.Value]; n != nil {
				if e := l.ev[n.Name]; e != nil {
					l.used[any(e)] = true
					events = []*ir.Event{e}
				}
			}
		}
		var only *ir.Node // the source the never-true check answers in against
		if len(sources) == 1 {
			only = sources[0]
		}
		conds, known := l.exprConds(t.If, t.Unless, t.IfExpr, t.UnlessExpr, only)
		if !known {
			cs.bad = true
		}
		var actions []*ir.Action
		for _, a := range t.Do {
			if ac, ok := ref(l, "action", l.ac, a); ok {
				actions = append(actions, ac)
			}
		}
		var raise []*ir.Event
		for _, r := range t.Raise {
			if e, ok := ref(l, "event", l.ev, r); ok {
				raise = append(raise, e)
			} else {
				cs.bad = true
			}
		}
		var cp *ir.Checkpoint
		if t.Checkpoint.Set {
			if c, ok := ref(l, "checkpoint", l.cp, t.Checkpoint); ok {
				cp = c
			} else {
				cs.bad = true
			}
		}

		// Targets: the transition's, or one per choice.
		type branch struct {
			pos      spec.Pos
			doc      string
			conds    []ir.Cond
			to       spec.Target
			internal bool
		}
		var branches []branch
		if chooseSet {
			for _, ch := range t.Choose {
				bc, known := l.exprConds(ch.If, ch.Unless, ch.IfExpr, ch.UnlessExpr, only)
				if !known {
					cs.bad = true
				}
				all, ok := andConds(conds, bc)
				if !ok {
					l.ds.Errorf(ch.Pos, "choice can never be taken: it asks a guard to hold and to fail at once")
					cs.bad = true
					continue
				}
				doc := ch.Doc.Value
				if doc == "" {
					doc = t.Doc.Value
				}
				branches = append(branches, branch{pos: ch.Pos, doc: doc, conds: all, to: ch.To})
			}
		} else {
			if t.To.Set && t.Internal.Value {
				l.ds.Errorf(t.Internal.Pos, "a transition has either to or internal: true, not both")
				cs.bad = true
			}
			if !t.To.Set && !t.Internal.Value {
				l.ds.Errorf(t.Pos, "transition has no target: give to, or internal: true to stay")
				cs.bad = true
				continue
			}
			branches = []branch{{pos: t.Pos, doc: t.Doc.Value, conds: conds, to: t.To, internal: t.Internal.Value && !t.To.Set}}
		}
		for _, b := range branches {
			target, recall, ok := l.chartTarget(b.to, b.internal)
			if !ok {
				cs.bad = true
				continue
			}
			var targets []*ir.Node
			if target != nil {
				if targets, ok = l.moreTargets(b.to, target); !ok {
					cs.bad = true
					continue
				}
			}
			srcs := sources
			if t.From.Any && target != nil && !recall {
				// As in a flat machine, "any" does not include the targets themselves.
				srcs = slices.DeleteFunc(slices.Clone(sources), func(n *ir.Node) bool { return slices.Contains(targets, n) })
			}
			if t.Reenter.Set && target == nil {
				l.ds.Errorf(t.Reenter.Pos, "reenter needs a target: a transition without one (internal) exits and enters nothing")
			}
			for _, src := range srcs {
				evs := events
				if done {
					if src.Kind != ir.NodeCompound && src.Kind != ir.NodeParallel {
						l.ds.Errorf(t.Done.Pos, "done: %q is not a compound or parallel state, so it is never done", src.Path)
						cs.bad = true
						continue
					}
					evs = []*ir.Event{l.doneEvent(src)}
				}
				reenter := target == src && !recall
				if t.Reenter.Set {
					reenter = t.Reenter.Value
				} else if target != nil && !recall && target != src && target.IsDescendant(src) && (len(src.Entry) > 0 || len(src.Exit) > 0 || hasHistory(src)) {
					l.ds.Warnf(b.to.Pos, "transition from %q to %q, a state within it, does not exit and re-enter %q, so its exit and entry actions do not run and its history is not recorded (as in XState; SCXML would re-enter it): add reenter: true to re-enter it, or reenter: false to say so", src.Path, target.Path, src.Path)
				}
				for _, e := range evs {
					ct := &ir.ChartTransition{Index: len(cs.c.Transitions), Pos: b.pos, Doc: b.doc, Source: src, Event: e,
						Always: always, Done: done, Conds: b.conds, Target: target, Targets: targets, Recall: recall, Reenter: reenter, Actions: actions, Raise: raise, Checkpoint: cp,
						Increment: inc, Reset: reset, Roles: roles}
					cs.c.Transitions = append(cs.c.Transitions, ct)
				}
				if done {
					continue
				}
				for _, d := range descs {
					ct := &ir.ChartTransition{Index: len(cs.c.Transitions), Pos: b.pos, Doc: b.doc, Source: src, Descriptor: d,
						Conds: b.conds, Target: target, Targets: targets, Recall: recall, Reenter: reenter, Actions: actions, Raise: raise, Checkpoint: cp,
						Increment: inc, Reset: reset, Roles: roles}
					cs.c.Transitions = append(cs.c.Transitions, ct)
				}
			}
		}
	}
}

// chartTarget resolves a chart transition's target: a state (nil when internal), or the
// configuration a remembering state was entered from (recall).
func (l *lowerer) chartTarget(to spec.Target, internal bool) (target *ir.Node, recall, ok bool) {
	switch {
	case to.Bad:
		return nil, false, false
	case internal:
		return nil, false, true
	case to.History.Set:
		n, ok := l.nodeRef(to.History)
		if !ok {
			return nil, false, false
		}
		if !n.Remembers {
			if n.Kind == ir.NodeHistory {
				l.ds.Errorf(to.History.Pos, "%q is a history state: target it as a state (to: %s); to: {history: ...} names a state with remembers: true", n.Path, n.Path)
			} else {
				l.ds.Errorf(to.History.Pos, "history target %q does not remember: add remembers: true to the state, or target a history state (history: shallow or deep) of a compound state", n.Path)
			}
			return nil, false, false
		}
		return n, true, true
	case to.State.Set:
		n, ok := l.nodeRef(to.State)
		return n, false, ok
	}
	return nil, false, false
}

// isDescriptor reports whether a name written in on is meant as a wildcard descriptor ("*",
// "error.*"): it holds a *. A declared event of that name is the event instead.
func isDescriptor(name string) bool { return strings.Contains(name, "*") }

// descriptor checks a wildcard descriptor: "*" alone, or "a.b.*" (a prefix of whole tokens,
// no other *), matching at least one declared event.
func (l *lowerer) descriptor(n spec.Str) bool {
	d := n.Value
	prefix := strings.TrimSuffix(d, ".*")
	for _, tok := range strings.Split(prefix, ".") {
		if d != "*" && (tok == "" || strings.Contains(tok, "*")) {
			l.ds.Errorf(n.Pos, "event descriptor %q: a wildcard is \"*\" alone or a name followed by .* (\"error.*\"), with no other *", d)
			return false
		}
	}
	matched := false
	for _, e := range l.m.Events {
		if ir.Matches(d, e) {
			l.used[any(e)] = true
			matched = true
		}
	}
	if matched || d == "*" {
		return true
	}
	l.ds.Errorf(n.Pos, "event descriptor %q matches no event: declare an event %q or one whose name starts with %q", d, prefix, prefix+".")
	return false
}

// moreTargets resolves the targets after the first (a list to: [a, b]) and returns them
// all, first first. Several targets must lie in different regions of parallel states: no
// two in one compound state, none within another, so that together they are one
// configuration (as XState and SCXML require).
func (l *lowerer) moreTargets(to spec.Target, first *ir.Node) ([]*ir.Node, bool) {
	targets := []*ir.Node{first}
	ok := true
	for _, name := range to.More {
		n, found := l.nodeRef(name)
		if !found {
			ok = false
			continue
		}
		for _, x := range targets {
			switch {
			case x == n:
				l.ds.Errorf(name.Pos, "%q is a target twice", n.Path)
				ok = false
			case n.IsDescendant(x) || x.IsDescendant(n):
				l.ds.Errorf(name.Pos, "targets %q and %q cannot both be entered: one lies within the other; target the inner one", x.Path, n.Path)
				ok = false
			default:
				if a := commonAncestor(x, n); a == nil || a.Kind != ir.NodeParallel {
					where := "the machine"
					if a != nil && a.Parent != nil {
						where = strconv.Quote(a.Path)
					}
					l.ds.Errorf(name.Pos, "targets %q and %q cannot both be entered: they are in the same region (%s, where one state is active at a time); several targets go one into each region of a parallel state", x.Path, n.Path, where)
					ok = false
				}
			}
		}
		if found {
			targets = append(targets, n)
		}
	}
	return targets, ok
}

// commonAncestor is the nearest state that both a and b lie strictly within (the root when
// none other).
func commonAncestor(a, b *ir.Node) *ir.Node {
	for p := a.Parent; p != nil; p = p.Parent {
		if b.IsDescendant(p) {
			return p
		}
	}
	return nil
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
	for _, c := range f.Counters {
		refuse(c.PerState.Value, c.PerState.Pos, "per_state (a count per configuration)")
	}
}

// cannotTimeOut says why state n cannot have a timeout ("" when it can): a history state is
// never active, and a final state is where its parent is done.
func cannotTimeOut(n *ir.Node) string {
	switch n.Kind {
	case ir.NodeHistory:
		return "it is never active itself"
	case ir.NodeFinal:
		return "it is where its parent is done, and nothing leaves it"
	}
	return ""
}

// sortNodes sorts nodes into document order.
func sortNodes(ns []*ir.Node) {
	sort.Slice(ns, func(i, j int) bool { return ns[i].Index < ns[j].Index })
}
