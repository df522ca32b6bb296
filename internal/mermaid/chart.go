package mermaid

import (
	"strings"

	"github.com/fsmgen/fsmgen/internal/ir"
	"github.com/fsmgen/fsmgen/internal/mermaid/graph"
)

// chartDiagram renders a statechart: its state tree as composite states, and its
// transitions as written (see StateDiagram).
//
// Mermaid puts a state inside the composite state whose block mentions it last, so an
// edge is written inside a block only when both its ends are children of that compound
// state; every other edge is written at the top level, where mentioning a state leaves it
// where it was declared.
func chartDiagram(m *ir.Machine) string {
	g := graph.BuildChart(m.Chart)
	w := &chartWriter{g: g, inner: make([][]*graph.ChartEdge, len(m.Chart.Nodes)), touched: make([]bool, len(m.Chart.Nodes))}
	var top []*graph.ChartEdge
	for _, e := range g.Edges {
		w.touched[e.From.Index], w.touched[e.To.Index] = true, true
		if p := e.From.Parent; p == e.To.Parent && p.Parent != nil && p.Kind == ir.NodeCompound {
			w.inner[p.Index] = append(w.inner[p.Index], e)
		} else {
			top = append(top, e)
		}
	}
	for _, n := range m.Chart.Nodes {
		if n.Initial != nil {
			w.touched[n.Initial.Index] = true
		}
		if n.Kind == ir.NodeFinal {
			w.touched[n.Index] = true
		}
	}
	root := m.Chart.Nodes[0]
	w.b.WriteString("stateDiagram-v2\n")
	for _, c := range root.Children {
		w.node(c, "    ")
	}
	w.ends(root, top, "    ")
	return w.b.String()
}

type chartWriter struct {
	g       *graph.Chart
	b       strings.Builder
	inner   [][]*graph.ChartEdge // by node index: the edges written inside its block
	touched []bool               // by node index: the node has an edge
}

func (w *chartWriter) id(n *ir.Node) string { return w.g.IDs[n.Index] }

// node writes the declaration of n, with the block of a compound or parallel state.
func (w *chartWriter) node(n *ir.Node, indent string) {
	id := w.id(n)
	switch n.Kind {
	case ir.NodeHistory:
		w.b.WriteString(indent + "state \"" + Escape(graph.HistoryLabel(n), true) + "\" as " + id + "\n")
	case ir.NodeCompound, ir.NodeParallel:
		w.b.WriteString(indent + "state \"" + Escape(n.Name, true) + "\" as " + id + " {\n")
		for i, c := range n.Children {
			if i > 0 && n.Kind == ir.NodeParallel {
				w.b.WriteString(indent + "    --\n")
			}
			w.node(c, indent+"    ")
		}
		w.ends(n, w.inner[n.Index], indent+"    ")
		w.b.WriteString(indent + "}\n")
	default:
		w.b.WriteString(indent + "state \"" + Escape(n.Name, true) + "\" as " + id + "\n")
		if !w.touched[n.Index] {
			// A bare box reads as a stray word to a reader (and to mermaid-check --strict).
			w.b.WriteString(indent + id + " : no transitions of its own\n")
		}
	}
}

// ends writes the edges inside the block of n (or at the top level for the root): the
// initial pseudo-state's edge, the given edges, and the edges of n's final states to the
// final pseudo-state.
func (w *chartWriter) ends(n *ir.Node, edges []*graph.ChartEdge, indent string) {
	if n.Initial != nil {
		w.b.WriteString(indent + "[*] --> " + w.id(n.Initial) + "\n")
	}
	for _, e := range edges {
		w.b.WriteString(indent + w.id(e.From) + " --> " + w.id(e.To))
		if len(e.Labels) > 0 {
			var ls []string
			for _, l := range e.Labels {
				ls = append(ls, Escape(l, false))
			}
			w.b.WriteString(" : " + strings.Join(ls, "<br>"))
		}
		w.b.WriteString("\n")
	}
	for _, c := range n.Children {
		if c.Kind == ir.NodeFinal {
			w.b.WriteString(indent + w.id(c) + " --> [*]\n")
		}
	}
}
