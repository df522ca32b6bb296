package markdown

import (
	"slices"
	"strconv"
	"strings"

	"github.com/fsmgen/fsmgen/internal/ir"
)

// A statechart (m.Chart set) is documented from its state tree and its transitions as
// written; m.States and m.Transitions are then the configurations and microsteps lowering
// compiled them into, which only the facts mention.

func chartFacts(m *ir.Machine) []string {
	c := m.Chart
	var count [5]int // by ir.NodeKind
	for _, n := range c.Nodes[1:] {
		count[n.Kind]++
	}
	var kinds []string
	for _, k := range []ir.NodeKind{ir.NodeAtomic, ir.NodeCompound, ir.NodeParallel, ir.NodeFinal, ir.NodeHistory} {
		if count[k] > 0 {
			kinds = append(kinds, strconv.Itoa(count[k])+" "+k.String())
		}
	}
	st := "Statechart: " + plural(len(c.Nodes)-1, "state", "states") + " (" + strings.Join(kinds, ", ") + ")"
	if c.Nodes[0].Initial != nil {
		st += "; initial " + Code(c.Nodes[0].Initial.Path)
	}
	events, written := 0, 0
	for _, e := range m.Events {
		if !e.Internal {
			events++
		}
	}
	for i, t := range c.Transitions {
		if i == 0 || t.Pos != c.Transitions[i-1].Pos {
			written++
		}
	}
	return []string{
		"Go package: " + Code(m.Package),
		st,
		plural(len(m.States), "configuration", "configurations") + " (sets of active states) reachable",
		plural(events, "event", "events") + ", " + plural(written, "transition", "transitions") + " as written",
	}
}

// chartKind describes a node: its kind, "deep history" or "shallow history", and
// "region" for the children of a parallel state.
func chartKind(n *ir.Node) string {
	k := n.Kind.String()
	if n.Kind == ir.NodeHistory {
		k = "shallow history"
		if n.Deep {
			k = "deep history"
		}
	}
	if n.Parent != nil && n.Parent.Kind == ir.NodeParallel {
		k += " region"
	}
	return k
}

// chartStates is the state tree, one row per state in document order (a parent before its
// children), each named by its path.
func chartStates(m *ir.Machine) *Table {
	var rows [][]string
	for _, n := range m.Chart.Nodes[1:] {
		initial := ""
		if n.Parent.Initial == n {
			initial = "yes"
		}
		kind := chartKind(n)
		if n.Remembers {
			kind += ", remembers"
		}
		var groups []string
		for _, g := range n.Groups {
			groups = append(groups, CodeCell(g.Name))
		}
		rows = append(rows, []string{
			CodeCell(n.Path), kind, initial, strings.Join(groups, ", "), fieldList(n.Requires), actionList(n.Entry), actionList(n.Exit), Text(n.Doc),
		})
	}
	return table(2, []string{"State", "Kind", "Initial", "Groups", "Requires", "Entry", "Exit", "Description"}, rows)
}

// chartTrigger is what fires a chart transition: its event, "always" (eventless) or
// "done" (its source is done).
func chartTrigger(t *ir.ChartTransition) string {
	switch {
	case t.Always:
		return "always"
	case t.Done:
		return "done"
	}
	if t.Event == nil {
		return CodeCell(t.Descriptor)
	}
	return eventCell(t.Event)
}

// raiseList adds to a cell of actions the events a transition raises: "raise `e`".
func raiseList(actions string, raise []*ir.Event) string {
	for _, e := range raise {
		if actions != "" {
			actions += ", "
		}
		actions += "raise " + CodeCell(e.Name)
	}
	return actions
}

// chartTransitions lists the transitions as written, one row per source and trigger.
func chartTransitions(m *ir.Machine) *Table {
	var rows [][]string
	for _, t := range m.Chart.Transitions {
		to := "stays"
		switch {
		case t.Recall:
			to = recallCell(m.Chart, t.Target)
		case t.Target != nil:
			var cells []string
			for _, n := range t.AllTargets() {
				cell := CodeCell(n.Path)
				if n.Kind == ir.NodeHistory {
					cell += " (" + chartKind(n) + ")"
				}
				cells = append(cells, cell)
			}
			to = strings.Join(cells, " and ")
		}
		cp := ""
		if t.Checkpoint != nil {
			cp = CodeCell(t.Checkpoint.Name)
		}
		rows = append(rows, []string{
			CodeCell(t.Source.Path), chartTrigger(t), condText(t.Conds), to, reenterCell(t),
			raiseList(actionList(t.Actions), t.Raise), cp, Text(t.Doc), strconv.Itoa(t.Pos.Line),
		})
	}
	return table(2, []string{"From", "Trigger", "Guard", "To", "Reenter", "Actions", "Checkpoint", "Description", "Line"}, rows)
}

// recallCell describes a transition back to where remembering state n was entered from:
// "history of `suspended`: `a.b` or `a.c`".
func recallCell(c *ir.Chart, n *ir.Node) string {
	to := recalled(c, n, CodeCell)
	x := "history of " + CodeCell(n.Path)
	if len(to) > 0 {
		x += ": " + strings.Join(to, " or ")
	}
	return x
}

// reenterCell says whether a transition to its source, or to a state within it, exits
// and re-enters the source; it is empty where that cannot matter.
func reenterCell(t *ir.ChartTransition) string {
	switch {
	case t.Target == nil || t.Recall || t.Target != t.Source && !t.Target.IsDescendant(t.Source):
		return ""
	case t.Reenter:
		return "yes"
	}
	return "no"
}

// chartMove names a chart transition: "`a` → `b` on `e`", "`a` (stays) on `e`", with
// "always" or "when done" for the internal triggers; code is Code, or CodeCell in a table.
func chartMove(t *ir.ChartTransition, code func(string) string) string {
	x := code(t.Source.Path)
	if t.Recall {
		x += " → history of " + code(t.Target.Path)
	} else if t.Target != nil {
		var to []string
		for _, n := range t.AllTargets() {
			to = append(to, code(n.Path))
		}
		x += " → " + strings.Join(to, " and ")
	} else {
		x += " (stays)"
	}
	switch {
	case t.Always:
		return x + " always"
	case t.Done:
		return x + " when done"
	}
	return x + " on " + code(t.EventName())
}

// chartActions lists where each action runs: entering and leaving states, and transitions.
func chartActions(m *ir.Machine) *Table {
	var rows [][]string
	for _, a := range m.Actions {
		var where []string
		for _, n := range m.Chart.Nodes[1:] {
			if slices.Contains(n.Entry, a) {
				where = append(where, "entering "+CodeCell(n.Path))
			}
			if slices.Contains(n.Exit, a) {
				where = append(where, "leaving "+CodeCell(n.Path))
			}
		}
		for _, t := range m.Chart.Transitions {
			if slices.Contains(t.Actions, a) {
				where = append(where, chartMove(t, CodeCell))
			}
		}
		rows = append(rows, []string{CodeCell(a.Name), Text(a.Doc), strings.Join(where, ", ")})
	}
	return table(2, []string{"Action", "Description", "Runs on"}, rows)
}

// chartHistory describes each history state: what it restores, its default, and the
// transitions that target it.
func chartHistory(m *ir.Machine) []string {
	var out []string
	for _, h := range m.Chart.History {
		if h.Remembers {
			out = append(out, chartRemembers(m, h))
			continue
		}
		p := h.Parent
		x := "History state " + Code(h.Path) + " (" + chartKind(h) + " of " + Code(p.Path) + "): entering it restores "
		if h.Deep {
			x += "the states last active within " + Code(p.Path) + ", all the way down"
		} else {
			x += "the child of " + Code(p.Path) + " last active"
		}
		switch {
		case h.Default != nil:
			x += "; while nothing is recorded it enters its default " + Code(h.Default.Path)
		case p.Initial != nil:
			x += "; while nothing is recorded it enters the initial state " + Code(p.Initial.Path)
		}
		x += "."
		var by []string
		for _, t := range m.Chart.Transitions {
			if t.Target == h {
				by = append(by, chartMove(t, Code)+" (line "+strconv.Itoa(t.Pos.Line)+")")
			}
		}
		if len(by) > 0 {
			x += " Targeted by " + strings.Join(by, ", ") + "."
		}
		out = append(out, x)
	}
	return out
}

// chartRemembers describes a remembering state: what it remembers, and the transitions
// that go back there.
func chartRemembers(m *ir.Machine, h *ir.Node) string {
	x := "State " + Code(h.Path) + " remembers the states active when it was entered"
	if to := recalled(m.Chart, h, Code); len(to) > 0 {
		x += " (" + strings.Join(to, " or ") + ")"
	}
	x += "; a transition to its history goes back to them, and is not taken while it remembers nothing."
	var by []string
	for _, t := range m.Chart.Transitions {
		if t.Recall && t.Target == h {
			by = append(by, chartMove(t, Code)+" (line "+strconv.Itoa(t.Pos.Line)+")")
		}
	}
	if len(by) > 0 {
		x += " Taken by " + strings.Join(by, ", ") + "."
	}
	return x
}

// recalled lists the paths of the states a transition to remembering state n's history
// can go back to, each through code (Code, or CodeCell in a table).
func recalled(c *ir.Chart, n *ir.Node, code func(string) string) []string {
	var out []string
	for _, x := range c.Recalled(n) {
		out = append(out, code(x.Path))
	}
	return out
}
