package cover

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/fsmgen/fsmgen/internal/dot"
	"github.com/fsmgen/fsmgen/internal/gogen"
	"github.com/fsmgen/fsmgen/internal/ir"
	"github.com/fsmgen/fsmgen/internal/markdown"
	"github.com/fsmgen/fsmgen/internal/mermaid"
	"github.com/fsmgen/fsmgen/internal/mermaid/graph"
)

// overlay is what a diagram marks: the states never reached (flat machines: by index)
// and, by the node they leave from (a flat state's index, or a statechart's top-level
// node), what was never taken.
type overlay struct {
	unreached []int
	notes     []note
}

type note struct {
	id   string // the node's ID in the diagram
	text []string
}

// overlayOf collects what r found never exercised, as diagram node IDs; ids maps a
// statechart's node index to its ID.
func overlayOf(m *ir.Machine, r *Report, chartIDs []string) overlay {
	var o overlay
	byNode := map[string]int{} // note index by node ID; looked up, never iterated
	add := func(id, text string) {
		i, ok := byNode[id]
		if !ok {
			i = len(o.notes)
			byNode[id] = i
			o.notes = append(o.notes, note{id: id})
		}
		o.notes[i].text = append(o.notes[i].text, text)
	}
	for i, it := range r.Items {
		switch {
		case it.Kind == States && !it.Covered && m.Chart == nil:
			o.unreached = append(o.unreached, m.States[i].Index)
		case it.Kind == Transitions && !it.Covered && m.Chart == nil:
			t := m.Transitions[it.Transition]
			add("s"+strconv.Itoa(t.From[0].Index), "never taken: "+describe(t))
		case it.Kind == Transitions && !it.Covered:
			ct := m.Chart.Transitions[it.Transition]
			top := ct.Source
			for top.Parent != nil && top.Parent.Parent != nil {
				top = top.Parent
			}
			add(chartIDs[top.Index], "never taken: "+describeChart(ct))
		}
	}
	return o
}

// Diagram returns the diagram of m (kind "mermaid" or "dot") with what r found never
// exercised marked: states never reached outlined in red, and beside each state, a note
// listing the transitions leaving it that were never taken. name is the file to write it
// to: <name>.cover.mmd or <name>.cover.dot.
func Diagram(kind string, m *ir.Machine, r *Report) (name string, data []byte) {
	base := gogen.Base(r.Spec)
	var ids []string
	if m.Chart != nil {
		ids = graph.BuildChart(m.Chart).IDs
	}
	o := overlayOf(m, r, ids)
	if kind == "dot" {
		return base + ".cover.dot", []byte(dotOverlay(m, o))
	}
	return base + ".cover.mmd", []byte(mermaidOverlay(m, o))
}

// mermaidOverlay is the Mermaid diagram with the overlay: a classDef for states never
// reached, and notes.
func mermaidOverlay(m *ir.Machine, o overlay) string {
	var b strings.Builder
	b.WriteString(mermaid.StateDiagram(m))
	for i, n := range o.notes {
		var lines []string
		for _, t := range n.text {
			lines = append(lines, mermaid.Escape(t, false))
		}
		side := "left"
		if i%2 == 1 {
			side = "right"
		}
		b.WriteString("    note " + side + " of " + n.id + " : " + strings.Join(lines, "<br>") + "\n")
	}
	if len(o.unreached) > 0 {
		b.WriteString("    classDef uncovered stroke:#c62828,stroke-width:3px,stroke-dasharray:5 5\n")
		var ids []string
		for _, s := range o.unreached {
			ids = append(ids, "s"+strconv.Itoa(s))
		}
		b.WriteString("    class " + strings.Join(ids, ",") + " uncovered\n")
	}
	return b.String()
}

// dotOverlay is the DOT graph with the overlay: states never reached outlined in red
// (their node statements again, with the attributes that mark them), and note nodes.
func dotOverlay(m *ir.Machine, o overlay) string {
	g := dot.Graph(m)
	end := strings.LastIndex(g, "}")
	var b strings.Builder
	b.WriteString(g[:end])
	for _, s := range o.unreached {
		fmt.Fprintf(&b, "\ts%d [color=\"#c62828\", penwidth=2, style=\"rounded,filled,dashed\"];\n", s)
	}
	for i, n := range o.notes {
		id := "uncovered" + strconv.Itoa(i)
		fmt.Fprintf(&b, "\t%s [shape=note, style=filled, fillcolor=\"#ffebee\", fontsize=10, label=%s];\n", id, dot.Quote(strings.Join(n.text, "\n")))
		fmt.Fprintf(&b, "\t%s -> %s [style=dotted, arrowhead=none, color=\"#c62828\", constraint=false];\n", n.id, id)
	}
	b.WriteString(g[end:])
	return b.String()
}

// Markdown returns a report of every spec: its totals by kind, what was never exercised
// at its position, and its Mermaid diagram with the overlay.
func Markdown(reports []*Report) []byte {
	var b bytes.Buffer
	b.WriteString("# Machine coverage\n\n")
	b.WriteString("What the tests never exercised of each machine (fsmgen cover).\n\n")
	b.WriteString("| Spec | Machine | Covered | ")
	for _, k := range Kinds {
		b.WriteString(markdown.Text(k) + " | ")
	}
	b.WriteString("\n|---|---|---|")
	for range Kinds {
		b.WriteString("---|")
	}
	b.WriteString("\n")
	for _, r := range reports {
		by, all := r.Totals()
		fmt.Fprintf(&b, "| %s | %s | %.1f%% | ", markdown.CodeCell(filepath.ToSlash(r.Spec)), markdown.CodeCell(r.Machine), all.Percent())
		for _, k := range Kinds {
			t := by[k]
			fmt.Fprintf(&b, "%d/%d | ", t.Covered, t.All)
		}
		b.WriteString("\n")
	}
	for _, r := range reports {
		fmt.Fprintf(&b, "\n## %s\n\n", markdown.Text(r.Machine+" ("+filepath.ToSlash(r.Spec)+")"))
		un := r.Uncovered()
		if len(un) == 0 {
			b.WriteString("Everything was exercised.\n")
			continue
		}
		for _, it := range un {
			fmt.Fprintf(&b, "- %s: %s\n", markdown.Code(it.Pos.String()), markdown.Text(it.What))
		}
		if r.diagram != "" {
			b.WriteString("\n```mermaid\n" + r.diagram + "```\n")
		}
	}
	return b.Bytes()
}
