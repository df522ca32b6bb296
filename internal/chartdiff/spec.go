package chartdiff

import (
	"fmt"
	"sort"
	"strings"
)

// SpecYAML renders the chart as an fsmgen spec: the same states, in the same order, with
// every transition written with its source's path, in document order of the sources, so
// that each state's transitions on an event keep their order. Guards are hook guards (the
// caller supplies Chart.Guards as their values) and actions are plain actions.
func (c *Chart) SpecYAML() []byte {
	var b strings.Builder
	b.WriteString("version: 1\nmachine: Diff\npackage: diff\n")
	var actions []string
	var walk func(n *Node)
	var trans []string
	walk = func(n *Node) {
		actions = append(actions, n.Entry...)
		actions = append(actions, n.Exit...)
		for _, t := range n.On {
			actions = append(actions, t.Actions...)
			trans = append(trans, transitionYAML(n, t))
		}
		for _, ch := range n.Children {
			walk(ch)
		}
	}
	walk(c.Root)
	if len(c.Guards) > 0 {
		names := make([]string, 0, len(c.Guards))
		for g := range c.Guards {
			names = append(names, g)
		}
		sort.Strings(names)
		fmt.Fprintf(&b, "guards: {%s}\n", joinDecls(names))
	}
	if len(actions) > 0 {
		fmt.Fprintf(&b, "actions: {%s}\n", joinDecls(actions))
	}
	if len(c.Events) > 0 {
		fmt.Fprintf(&b, "events: {%s}\n", joinDecls(c.Events))
	}
	b.WriteString("states:\n")
	for _, ch := range c.Root.Children {
		stateYAML(&b, c.Root, ch, 1)
	}
	if len(trans) == 0 {
		b.WriteString("transitions: []\n")
	} else {
		b.WriteString("transitions:\n")
		for _, t := range trans {
			b.WriteString("  - " + t + "\n")
		}
	}
	return []byte(b.String())
}

func joinDecls(names []string) string {
	parts := make([]string, len(names))
	for i, n := range names {
		parts[i] = fmt.Sprintf(" %q: {}", n)
	}
	return strings.Join(parts, ",") + " "
}

func stateYAML(b *strings.Builder, parent, n *Node, depth int) {
	ind := strings.Repeat("  ", depth)
	fmt.Fprintf(b, "%s%q:\n", ind, n.Name)
	ind += "  "
	fmt.Fprintf(b, "%sdoc: %q\n", ind, n.Path())
	if parent.Kind == Compound && parent.Initial == n.Name {
		fmt.Fprintf(b, "%sinitial: true\n", ind)
	}
	switch n.Kind {
	case Parallel:
		fmt.Fprintf(b, "%sparallel: true\n", ind)
	case Final:
		fmt.Fprintf(b, "%sterminal: true\n", ind)
	case ShallowHistory, DeepHistory:
		kind := "shallow"
		if n.Kind == DeepHistory {
			kind = "deep"
		}
		fmt.Fprintf(b, "%shistory: %s\n", ind, kind)
		if n.Default != "" {
			fmt.Fprintf(b, "%sdefault: %q\n", ind, n.Default)
		}
	}
	if len(n.Entry) > 0 {
		fmt.Fprintf(b, "%sentry: [%s]\n", ind, quoted(n.Entry))
	}
	if len(n.Exit) > 0 {
		fmt.Fprintf(b, "%sexit: [%s]\n", ind, quoted(n.Exit))
	}
	if len(n.Children) > 0 {
		fmt.Fprintf(b, "%sstates:\n", ind)
		for _, ch := range n.Children {
			stateYAML(b, n, ch, depth+2)
		}
	}
}

func quoted(names []string) string {
	parts := make([]string, len(names))
	for i, n := range names {
		parts[i] = fmt.Sprintf("%q", n)
	}
	return strings.Join(parts, ", ")
}

func transitionYAML(n *Node, t *Trans) string {
	parts := []string{fmt.Sprintf("from: %q", n.Path())}
	switch {
	case t.Always:
		parts = append(parts, "always: true")
	case t.Done:
		parts = append(parts, "done: true")
	case t.Delay > 0:
		parts = append(parts, fmt.Sprintf("after: %dms", t.Delay))
	default:
		parts = append(parts, fmt.Sprintf("on: %q", t.Event))
	}
	if t.Target == "" {
		parts = append(parts, "internal: true")
	} else {
		to := fmt.Sprintf("%q", t.Target)
		if len(t.More) > 0 {
			to = "[" + quoted(append([]string{t.Target}, t.More...)) + "]"
		}
		parts = append(parts, "to: "+to, fmt.Sprintf("reenter: %t", t.Reenter))
	}
	if t.Guard != "" {
		parts = append(parts, fmt.Sprintf("if: %q", t.Guard))
	}
	if t.Expr != nil {
		parts = append(parts, "if: "+t.Expr.Spec())
	}
	if len(t.Actions) > 0 {
		parts = append(parts, fmt.Sprintf("do: [%s]", quoted(t.Actions)))
	}
	if len(t.Raise) > 0 {
		parts = append(parts, fmt.Sprintf("raise: [%s]", quoted(t.Raise)))
	}
	return "{ " + strings.Join(parts, ", ") + " }"
}
