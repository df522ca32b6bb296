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
	if len(c.StartActions) > 0 {
		v.add("Start", int32s(actionIdx(c.StartActions)))
	}
	if len(c.StartRaise) > 0 {
		v.add("StartRaise", int32s(eventIdx(c.StartRaise)))
	}
	if g.starts() {
		v.add("Starts", True())
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

// chartMove is move for a statechart: transitions on the events the machine raises itself
// are refused to the program, and the table moves only where nothing follows the
// microstep (no history, no done event, no eventless transition in the configuration
// entered).
func (g *gen) chartMove(t *ir.Transition) bool {
	c := g.m.Chart
	return len(t.Mem) == 0 && len(t.Record) == 0 && len(t.Raise) == 0 &&
		(c.Always == nil || len(g.m.Lookup(t.Target.State, c.Always)) == 0)
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
