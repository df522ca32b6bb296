package graph

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/fsmgen/fsmgen/internal/ir"
)

// A statechart (m.Chart != nil) is drawn from its state tree and its transitions as
// written, not from the configurations and microsteps lowering compiles them into.

// Chart is the drawing of a statechart: an identifier per node and the merged, labelled
// edges between nodes.
type Chart struct {
	Chart *ir.Chart
	// IDs holds each node's identifier, by node index: "s" and each run of ASCII letters
	// and digits in the node's path, each after a "_" ("s_a_x" for a.x, "s_shut_down" for
	// "shut: down"; the root's is ""). Two paths that come out the same are told apart by
	// a suffix "_2", "_3", ... in document order, and an identifier never ends in "_start"
	// or "_end" (Mermaid names the initial and final pseudo-states of a composite state by
	// its identifier and these suffixes). Identifiers are safe as they are in Mermaid and
	// in DOT.
	IDs []string
	// Edges are the transitions, one edge per (source, target) pair in order of first
	// appearance, with one label per transition as written (see ChartGroups); a targetless
	// transition is an edge from its source to itself. After them come the edges from
	// history states to their defaults, in document order.
	Edges []*ChartEdge
}

// ChartEdge is every transition between two nodes, merged.
type ChartEdge struct {
	From, To *ir.Node
	Labels   []string // plain spec text, unescaped
	Kind     EdgeKind // Normal, Internal, History (into a history node), Default
}

// BuildChart lays out a statechart's edges. It is deterministic: edges come in the order
// of the chart's transitions, then of its history nodes.
func BuildChart(c *ir.Chart) *Chart {
	g := &Chart{Chart: c, IDs: chartIDs(c)}
	index := map[[2]int]int{} // (from, to) node indexes -> position in g.Edges; looked up, never iterated
	add := func(from, to *ir.Node, label string, kind EdgeKind) {
		key := [2]int{from.Index, to.Index}
		i, ok := index[key]
		if !ok {
			i = len(g.Edges)
			index[key] = i
			g.Edges = append(g.Edges, &ChartEdge{From: from, To: to})
		}
		e := g.Edges[i]
		e.Kind |= kind
		for _, l := range e.Labels {
			if l == label {
				return
			}
		}
		e.Labels = append(e.Labels, label)
	}
	for _, ts := range ChartGroups(c) {
		t := ts[0]
		switch {
		case t.Target == nil:
			add(t.Source, t.Source, ChartLabel(ts), Internal)
		case t.Recall:
			// To the states the remembering target may go back to.
			for _, to := range c.Recalled(t.Target) {
				add(t.Source, to, ChartLabel(ts), History)
			}
		default:
			// An edge to each target (several: one in each region of a parallel state).
			for _, to := range t.AllTargets() {
				kind := Normal
				if to.Kind == ir.NodeHistory {
					kind = History
				}
				add(t.Source, to, ChartLabel(ts), kind)
			}
		}
	}
	for _, h := range c.History {
		if h.Kind != ir.NodeHistory {
			continue // a remembering state has no default
		}
		if to, label := HistoryDefault(h); to != nil {
			add(h, to, label, Default)
		}
	}
	return g
}

// HistoryDefault returns where history node h leads while it has recorded nothing, and
// the label of the edge there: its default ("default"), or else its parent's initial
// state ("default (initial)").
func HistoryDefault(h *ir.Node) (*ir.Node, string) {
	if h.Default != nil {
		return h.Default, "default"
	}
	if h.Parent != nil && h.Parent.Initial != nil {
		return h.Parent.Initial, "default (initial)"
	}
	return nil, ""
}

// ChartGroups groups the chart's transitions by the spec transition and source they come
// from: lowering makes one chart transition per source and event, and a spec transition
// with several events is drawn as one.
func ChartGroups(c *ir.Chart) [][]*ir.ChartTransition {
	var out [][]*ir.ChartTransition
	for _, t := range c.Transitions {
		if n := len(out); n > 0 {
			p := out[n-1][0]
			if p.Pos == t.Pos && p.Source == t.Source && slices.Equal(p.AllTargets(), t.AllTargets()) {
				out[n-1] = append(out[n-1], t)
				continue
			}
		}
		out = append(out, []*ir.ChartTransition{t})
	}
	return out
}

// ChartTrigger describes what fires a group of chart transitions (see ChartGroups): its
// events ("always" for an eventless transition, "done" for one taken when its source is
// done) and its conditions, as in "submit, save [ready, !busy]".
func ChartTrigger(ts []*ir.ChartTransition) string {
	t := ts[0]
	var trig string
	switch {
	case t.Always:
		trig = "always"
	case t.Done:
		trig = "done"
	default:
		var names []string
		for _, x := range ts {
			names = append(names, x.EventLabel())
		}
		trig = strings.Join(names, ", ")
	}
	if len(t.Conds) > 0 {
		var cs []string
		for _, c := range t.Conds {
			if c.Negate {
				cs = append(cs, "!"+c.Guard.Name)
			} else {
				cs = append(cs, c.Guard.Name)
			}
		}
		trig += " [" + strings.Join(cs, ", ") + "]"
	}
	return trig
}

// ChartLabel is the label of a group of chart transitions: the trigger, a note on what it
// exits and enters when that is not what its edge shows ("(internal)" for a targetless
// transition, "(history)" for one back to where a remembering state was entered from,
// "(reenter)" for one into a state within its source that re-enters the
// source, "(no reenter)" for one to its own source that does not), then "/ actions".
func ChartLabel(ts []*ir.ChartTransition) string {
	t := ts[0]
	parts := []string{ChartTrigger(ts)}
	switch {
	case t.Target == nil:
		parts = append(parts, "(internal)")
	case t.Recall:
		parts = append(parts, "(history)")
	case t.Reenter && t.Target != t.Source && t.Target.IsDescendant(t.Source):
		parts = append(parts, "(reenter)")
	case !t.Reenter && t.Target == t.Source:
		parts = append(parts, "(no reenter)")
	}
	if n := len(t.AllTargets()); n > 1 {
		parts = append(parts, fmt.Sprintf("(%d targets at once)", n))
	}
	if len(t.Actions)+len(t.Raise) > 0 {
		var names []string
		for _, a := range t.Actions {
			names = append(names, a.Name)
		}
		for _, e := range t.Raise {
			names = append(names, "raise "+e.Name)
		}
		parts = append(parts, "/ "+strings.Join(names, ", "))
	}
	return strings.Join(parts, " ")
}

// HistoryLabel is how a history node is drawn: "H" for shallow history, "H*" for deep.
func HistoryLabel(h *ir.Node) string {
	if h.Deep {
		return "H*"
	}
	return "H"
}

// chartIDs derives the identifiers of the nodes from their paths (see Chart.IDs).
func chartIDs(c *ir.Chart) []string {
	base := make([]string, len(c.Nodes))
	reserved := map[string]bool{} // looked up, never iterated
	for _, n := range c.Nodes[1:] {
		var b strings.Builder
		b.WriteString("s")
		gap := true
		for _, r := range n.Path {
			if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
				if gap {
					b.WriteByte('_')
				}
				b.WriteRune(r)
				gap = false
			} else {
				gap = true
			}
		}
		id := b.String()
		if strings.HasSuffix(id, "_start") || strings.HasSuffix(id, "_end") {
			id += "_"
		}
		base[n.Index] = id
		reserved[id] = true
	}
	ids := make([]string, len(c.Nodes))
	used := map[string]bool{} // looked up, never iterated
	for _, n := range c.Nodes[1:] {
		id := base[n.Index]
		for k := 2; used[id]; k++ {
			if x := base[n.Index] + "_" + strconv.Itoa(k); !reserved[x] && !used[x] {
				id = x
			}
		}
		used[id] = true
		ids[n.Index] = id
	}
	return ids
}
