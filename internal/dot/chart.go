package dot

import (
	"strings"

	"github.com/fsmgen/fsmgen/internal/ir"
	"github.com/fsmgen/fsmgen/internal/mermaid/graph"
)

// chartGraph renders a statechart (see Graph). Node identifiers come from graph.Chart
// (s_ and the state's path); a compound or parallel state is the cluster cluster_<id>
// holding, when an edge starts or ends at the state, an invisible anchor node <id> that the
// edge is drawn from or to, clipped at the cluster (ltail, lhead); the initial marker of a
// compound state is the point i_<id>.
func chartGraph(m *ir.Machine) string {
	c := m.Chart
	g := graph.BuildChart(c)
	w := &chartWriter{g: g, anchored: make([]bool, len(c.Nodes))}
	for _, e := range g.Edges {
		w.anchored[e.From.Index], w.anchored[e.To.Index] = true, true
	}
	for _, n := range c.Nodes {
		if n.Initial != nil {
			w.anchored[n.Initial.Index] = true
		}
	}
	w.b.WriteString(Header + "\n")
	w.b.WriteString("digraph " + Quote(m.Name) + " {\n")
	attrs := "graph [label=" + Quote(m.Name) + ", labelloc=t, fontname=\"Helvetica\", compound=true"
	if doc := strings.TrimSpace(m.Doc); doc != "" {
		attrs += ", tooltip=" + Quote(doc)
	}
	w.line("\t", attrs+"];")
	w.line("\t", "node [shape=box, style=\"rounded,filled\", fillcolor=\"#f5f5ff\", fontname=\"Helvetica\", fontsize=12];")
	w.line("\t", "edge [fontname=\"Helvetica\", fontsize=10];")
	w.b.WriteString("\n")

	root := c.Nodes[0]
	w.line("\t", "start [shape=point, style=filled, fillcolor=black, width=0.2, label=\"\", tooltip=\"initial\"];")
	for _, n := range root.Children {
		w.node(n, "\t")
	}
	w.b.WriteString("\n")

	for _, n := range c.Nodes {
		if n.Initial == nil {
			continue
		}
		from := "start"
		if n != root {
			from = initialID(w.id(n))
		}
		w.edge(from, nil, n.Initial, nil)
	}
	for _, e := range g.Edges {
		var attrs []string
		if len(e.Labels) > 0 {
			attrs = append(attrs, "label="+Quote(strings.Join(e.Labels, "\n")))
		}
		if e.Kind == graph.Default {
			attrs = append(attrs, "style=dashed")
		}
		w.edge(w.id(e.From), e.From, e.To, attrs)
	}
	w.b.WriteString("}\n")
	return w.b.String()
}

type chartWriter struct {
	g        *graph.Chart
	b        strings.Builder
	anchored []bool // by node index: an edge starts or ends at the node (its anchor, for a composite state)
}

func (w *chartWriter) id(n *ir.Node) string { return w.g.IDs[n.Index] }

func (w *chartWriter) line(indent, s string) { w.b.WriteString(indent + s + "\n") }

func initialID(id string) string { return "i_" + id }
func clusterID(id string) string { return "cluster_" + id }

// composite reports whether n is drawn as a cluster.
func composite(n *ir.Node) bool { return n.Kind == ir.NodeCompound || n.Kind == ir.NodeParallel }

// node writes n: a node, or a cluster with its children. A region of a parallel state is
// a dashed cluster; an atomic region is one too, around its node.
func (w *chartWriter) node(n *ir.Node, indent string) {
	id := w.id(n)
	region := n.Parent != nil && n.Parent.Kind == ir.NodeParallel
	style := "rounded"
	if region {
		style += ",dashed"
	}
	tooltip := n.Path
	if doc := strings.TrimSpace(n.Doc); doc != "" {
		tooltip = doc
	}
	if !composite(n) {
		if region {
			w.line(indent, "subgraph "+clusterID(id)+" {")
			w.line(indent+"\t", "graph [label=\"\", style=\""+style+"\", tooltip="+Quote("region "+n.Path)+"];")
			w.leaf(n, indent+"\t")
			w.line(indent, "}")
			return
		}
		w.leaf(n, indent)
		return
	}
	w.line(indent, "subgraph "+clusterID(id)+" {")
	in := indent + "\t"
	w.line(in, "graph [label="+Quote(n.Name)+", style=\""+style+"\", tooltip="+Quote(tooltip)+"];")
	if w.anchored[n.Index] {
		w.line(in, id+" [shape=point, style=invis, width=0.01, height=0.01, label=\"\"];")
	}
	if n.Kind == ir.NodeCompound {
		w.line(in, initialID(id)+" [shape=point, style=filled, fillcolor=black, width=0.15, label=\"\", tooltip="+Quote("initial of "+n.Path)+"];")
	}
	for _, c := range n.Children {
		w.node(c, in)
	}
	w.line(indent, "}")
}

// leaf writes an atomic, final or history node.
func (w *chartWriter) leaf(n *ir.Node, indent string) {
	id := w.id(n)
	var attrs []string
	switch n.Kind {
	case ir.NodeHistory:
		what := "shallow history of " + n.Parent.Path + ": back to its last active state"
		if n.Deep {
			what = "deep history of " + n.Parent.Path + ": back to its last active states, all the way down"
		}
		attrs = append(attrs, "shape=circle", "style=\"\"", "label="+Quote(graph.HistoryLabel(n)), "width=0.4", "fixedsize=true", "tooltip="+Quote(what))
	case ir.NodeFinal:
		attrs = append(attrs, "shape=doublecircle", "style=filled", "label="+Quote(n.Name))
	default:
		attrs = append(attrs, "label="+Quote(n.Name))
	}
	if doc := strings.TrimSpace(n.Doc); doc != "" && n.Kind != ir.NodeHistory {
		attrs = append(attrs, "tooltip="+Quote(doc))
	}
	w.line(indent, id+" ["+strings.Join(attrs, ", ")+"];")
}

// edge writes an edge from the node from (or the pseudo-node named tail when from is
// nil) to the node to. An edge from or to a composite state is clipped at its cluster,
// unless the other end lies within it (Graphviz cannot clip an edge at a cluster holding
// both its ends).
func (w *chartWriter) edge(tail string, from, to *ir.Node, attrs []string) {
	if from != nil && composite(from) && to != from && !to.IsDescendant(from) {
		attrs = append(attrs, "ltail="+clusterID(w.id(from)))
	}
	if composite(to) && to != from && (from == nil || !from.IsDescendant(to)) {
		attrs = append(attrs, "lhead="+clusterID(w.id(to)))
	}
	s := tail + " -> " + w.id(to)
	if len(attrs) > 0 {
		s += " [" + strings.Join(attrs, ", ") + "]"
	}
	w.line("\t", s+";")
}
