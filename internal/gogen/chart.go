package gogen

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	. "github.com/dave/jennifer/jen"
	"github.com/fsmgen/fsmgen/internal/ir"
	"github.com/fsmgen/fsmgen/internal/names"
)

// A statechart's code is a flat machine's: its states are the chart's configurations and
// its transitions the microsteps (lower's flattening). What it adds is emitted here: the
// Node type naming the chart's states, State.In, and the fsmrt.Chart of the def.

// external lists the events the program fires: a statechart raises the others itself
// (eventless transitions, done events), which come last.
func (g *gen) external() []*ir.Event {
	var out []*ir.Event
	for _, e := range g.m.Events {
		if !e.Internal {
			out = append(out, e)
		}
	}
	return out
}

// chartNodes lists the chart's states the Node type names, in document order: every node
// but the root and the history states (which are never active).
func (g *gen) chartNodes() []*ir.Node {
	var out []*ir.Node
	for _, n := range g.m.Chart.Nodes[1:] {
		if n.Kind != ir.NodeHistory {
			out = append(out, n)
		}
	}
	return out
}

// nodes emits Node, its constants and names, and State.In.
func (g *gen) nodes(f *File) {
	ns := g.chartNodes()
	en := enumSpec{Type: "Node", What: "chart state", Prefix: "Node", Count: "NumNodes",
		Doc: "Node is a state of the " + g.m.Name + " statechart, named by its path. A State is a configuration: the set of chart states active at once (State.In)."}
	seen := map[string]bool{}
	for _, n := range ns {
		id := names.GoName(strings.ReplaceAll(n.Path, ".", "_"))
		if id == "" || !names.StartsWithLetter(id) {
			id = "N" + id
		}
		for k := 2; seen[id]; k++ {
			id = strings.TrimRightFunc(id, func(r rune) bool { return r >= '0' && r <= '9' }) + strconv.Itoa(k)
		}
		seen[id] = true
		en.Names = append(en.Names, n.Path)
		en.GoNames = append(en.GoNames, id)
		en.Docs = append(en.Docs, strings.TrimSpace(fmt.Sprintf("%s. %s", kindDoc(n), n.Doc)))
	}
	g.enum(f, en)
	f.Comment("// In reports whether the chart state n is active in the configuration s.")
	f.Func().Params(Id("s").Id("State")).Id("In").Params(Id("n").Id("Node")).Bool().Add(inline(
		Return(Qual(rt, "In").Call(Op("&").Id("def"), Id("s"), Int().Parens(Id("n"))))))
	f.Line()
	for i, n := range ns {
		if n.GoName == "" {
			continue
		}
		f.Comment(comment(fmt.Sprintf("Is%s reports whether the %s state %s is active in s.", n.GoName, n.Kind, quoted(n.Path))))
		f.Func().Params(Id("s").Id("State")).Id("Is" + n.GoName).Params().Bool().Add(inline(Return(Id("s").Dot("In").Call(Id("Node" + en.GoNames[i])))))
		f.Line()
	}
}

// kindDoc says what kind of chart state n is, for its constant's doc.
func kindDoc(n *ir.Node) string {
	switch n.Kind {
	case ir.NodeCompound:
		return "Compound, entered at " + n.Initial.Name
	case ir.NodeParallel:
		return "Parallel"
	case ir.NodeFinal:
		return "Final"
	}
	return "Atomic"
}

// chartDef is the def's fsmrt.Chart.
func (g *gen) chartDef(actionIdx func([]*ir.Action) []int) *Statement {
	m, c := g.m, g.m.Chart
	ns := g.chartNodes()
	words := (len(ns) + 63) / 64
	pos := map[*ir.Node]int{}
	for i, n := range ns {
		pos[n] = i
	}
	var v fields
	v.add("External", Lit(len(g.external())))
	always := -1
	if c.Always != nil {
		always = c.Always.Index
	}
	v.add("Always", Lit(always))
	v.add("Nodes", Id("nodeNames").Dot("List"))
	v.add("Words", Lit(words))
	v.add("Active", Index().Uint64().ValuesFunc(func(rows *Group) {
		for _, s := range m.States {
			bits := make([]uint64, words)
			for _, a := range s.Config {
				for n := a; n != nil && n.Parent != nil; n = n.Parent {
					i := pos[n]
					bits[i/64] |= 1 << (i % 64)
				}
			}
			row := make([]Code, words)
			for i, b := range bits {
				row[i] = Lit(b)
			}
			rows.Line().List(row...)
		}
		rows.Line()
	}))
	if len(c.History) > 0 {
		v.add("History", Index().String().ValuesFunc(func(l *Group) {
			for _, h := range c.History {
				l.Lit(h.Path)
			}
		}))
		v.add("Values", Index().Index().String().ValuesFunc(func(rows *Group) {
			for _, vals := range c.Values {
				rows.Line().ValuesFunc(func(l *Group) {
					for _, nodes := range vals {
						l.Lit(ir.ConfigName(nodes))
					}
				})
			}
			rows.Line()
		}))
	}
	if g.remembers {
		// By configuration, the slot of the remembering state active in it; by slot, the
		// configuration each value goes back to.
		byName := map[string]int{} // by the paths of its active states
		for _, s := range m.States {
			byName[ir.ConfigName(s.Config)] = s.Index
		}
		remember := make([]int, len(m.States))
		for _, s := range m.States {
			remember[s.Index] = -1
			for _, h := range c.History {
				if h.Remembers && slices.ContainsFunc(s.Config, func(n *ir.Node) bool { return n == h || n.IsDescendant(h) }) {
					remember[s.Index] = h.Slot
					break
				}
			}
		}
		v.add("Remember", int32s(remember))
		v.add("Recall", Index().Index().Int32().ValuesFunc(func(rows *Group) {
			for _, h := range c.History {
				rows.Line().ValuesFunc(func(l *Group) {
					if !h.Remembers {
						return
					}
					for _, nodes := range c.Values[h.Slot] {
						l.Lit(byName[ir.ConfigName(nodes)])
					}
				})
			}
			rows.Line()
		}))
	}
	if len(c.StartActions) > 0 {
		v.add("Start", int32s(actionIdx(c.StartActions)))
	}
	if len(c.StartRaise) > 0 {
		v.add("StartRaise", int32s(eventIdx(c.StartRaise)))
	}
	if g.starts() {
		v.add("Starts", True())
	}
	if len(c.Clocks) > 0 {
		var idx []int
		for _, n := range c.Clocks {
			idx = append(idx, n.Index)
		}
		v.add("Clocks", int32s(idx))
	}
	return Op("&").Qual(rt, "Chart").Values(func() []Code {
		out := make([]Code, len(v))
		for i, x := range v {
			out[i] = Line().Add(x)
		}
		return append(out, Line())
	}()...)
}

// starts reports whether starting the statechart does something: entry actions, done
// events, or an eventless transition from the initial configuration.
func (g *gen) starts() bool {
	c := g.m.Chart
	return len(c.StartActions) > 0 || len(c.StartRaise) > 0 || c.Always != nil && len(g.m.Lookup(g.m.Initial, c.Always)) > 0
}

// settles reports whether a microstep may be followed by others: the chart has eventless
// transitions or done events.
func (g *gen) settles() bool {
	return g.m.Chart != nil && slices.ContainsFunc(g.m.Events, func(e *ir.Event) bool { return e.Internal })
}

// chartMove is move for a statechart, for the single unguarded candidate t of a pair: the
// configuration the table moves to when nothing happens but moving (no actions, no history
// read or recorded, and what follows the microstep decided by the tables and as plain),
// else nil.
func (g *gen) chartMove(t *ir.Transition) *ir.State {
	then, ok := g.fold(t)
	if !ok || len(t.Mem) > 0 {
		return nil
	}
	end := t.Target.State
	for _, x := range append([]*ir.Transition{t}, then...) {
		if len(x.Actions) > 0 || len(x.Record) > 0 || x.Checkpoint != nil || len(x.Increment)+len(x.Reset) > 0 || len(x.Requires) > 0 {
			return nil
		}
		end = x.Target.State
	}
	return end
}

// foldLimit bounds the microsteps fold follows after a transition.
const foldLimit = 64

// fold returns the microsteps that follow t, when the tables alone decide them: the
// eventless transitions and done events the engine's macrostep would take after t (the
// same order: eventless first, selected again only after a microstep that changed
// something, then the next raised event), each the first candidate of its pair and one
// without guards or history conditions, so always taken. ok is false when some step of
// the macrostep depends on guards or history, or it goes on past foldLimit: the engine
// then runs it.
func (g *gen) fold(t *ir.Transition) (then []*ir.Transition, ok bool) {
	m, c := g.m, g.m.Chart
	state := t.Target.State
	queue := append([]*ir.Event(nil), t.Raise...)
	decided := func(ts []*ir.Transition) bool { return len(ts[0].Conds) == 0 && len(ts[0].Mem) == 0 }
	again := true
	for !state.Terminal {
		if len(then) >= foldLimit {
			return nil, false
		}
		if again && c.Always != nil {
			if ts := m.Lookup(state, c.Always); len(ts) > 0 {
				if !decided(ts) {
					return nil, false
				}
				x := ts[0]
				then, queue, again, state = append(then, x), append(queue, x.Raise...), x.Changes, x.Target.State
				continue
			}
		}
		if len(queue) == 0 {
			break
		}
		e := queue[0]
		queue = queue[1:]
		if ts := m.Lookup(state, e); len(ts) > 0 {
			if !decided(ts) {
				return nil, false
			}
			x := ts[0]
			then, queue, state = append(then, x), append(queue, x.Raise...), x.Target.State
		}
		again = true
	}
	return then, true
}

// eventIdx lists the events' indexes.
func eventIdx(es []*ir.Event) []int {
	var out []int
	for _, e := range es {
		out = append(out, e.Index)
	}
	return out
}

// memories is a slice literal of history conditions or records.
func memories(ms []ir.MemCond) *Statement {
	return Index().Qual(rt, "Memory").ValuesFunc(func(l *Group) {
		for _, x := range ms {
			l.Values(Id("Slot").Op(":").Lit(x.Slot), Id("Value").Op(":").Lit(x.Value))
		}
	})
}

// mayFail reports whether some action may fail (its hook returns an error).
func (g *gen) mayFail() bool {
	return slices.ContainsFunc(g.m.Actions, func(a *ir.Action) bool { return a.MayFail })
}
