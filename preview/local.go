package preview

import (
	"regexp"
	"slices"
	"strings"

	"github.com/fsmgen/fsmgen/internal/ir"
)

// Mermaid lays a diagram out with dagre, whose time grows much faster than the number of
// arrows. Measured in headless Chromium on 2 CPUs, whole diagrams of bench/specgen's
// synthetic machines: 60 states and 177 transitions 1.8 s, 50 states and 294 transitions
// 2.9 s, 300 states and 2,100 transitions 94 s; the seeds (13 to 28 arrows) well under a
// second. A flat machine with more than bigStates states or bigEdges arrows is drawn
// around its active state (Local): the page of the 300-state machine loads in 0.3 s. The
// page draws the whole diagram on request.
const (
	bigStates = 60
	bigEdges  = 100
)

// isBig reports whether the page draws the machine around its active state.
func isBig(m *ir.Machine, diagram string) bool {
	return m.Chart == nil && (len(m.States) > bigStates || strings.Count(diagram, " --> ") > bigEdges)
}

var (
	declRE  = regexp.MustCompile(`^    state (?:"[^"]*" as )?([A-Za-z0-9_]+)(?: <<choice>>)?$`)
	edgeRE  = regexp.MustCompile(`^    (\[\*\]|[A-Za-z0-9_]+) --> (\[\*\]|[A-Za-z0-9_]+)(?: : .*)?$`)
	ownRE   = regexp.MustCompile(`^    ([A-Za-z0-9_]+) : `)
	noteRE  = regexp.MustCompile(`^    note (?:right|left) of ([A-Za-z0-9_]+) : `)
	classRE = regexp.MustCompile(`^    class ([A-Za-z0-9_,]+) ([A-Za-z0-9_]+)$`)
)

// Local is the part of a flat machine's diagram (diagram, as package mermaid writes it)
// around the states active: them, the states one transition into or out of them (through
// a choice point), and the arrows among these.
func Local(diagram string, active []string) string {
	lines := strings.Split(strings.TrimSuffix(diagram, "\n"), "\n")
	type edge struct{ from, to string }
	var edges []edge
	for _, l := range lines {
		if m := edgeRE.FindStringSubmatch(l); m != nil {
			edges = append(edges, edge{m[1], m[2]})
		}
	}
	keep := map[string]bool{"[*]": true}
	for _, a := range active {
		keep[a] = true
	}
	choice := func(id string) bool { return strings.HasPrefix(id, "c") }
	var near []string
	for _, e := range edges {
		switch {
		case slices.Contains(active, e.from) && e.to != "[*]":
			near = append(near, e.to)
		case slices.Contains(active, e.to) && e.from != "[*]":
			near = append(near, e.from)
		}
	}
	for _, id := range near {
		keep[id] = true
	}
	// Through a choice point next to an active state, the states it leads to.
	for _, e := range edges {
		if choice(e.from) && keep[e.from] && e.to != "[*]" && slices.ContainsFunc(edges, func(x edge) bool { return x.to == e.from && slices.Contains(active, x.from) }) {
			keep[e.to] = true
		}
	}
	var b strings.Builder
	for i, l := range lines {
		if i == 0 {
			b.WriteString(l + "\n")
			continue
		}
		var id string
		if m := declRE.FindStringSubmatch(l); m != nil {
			id = m[1]
		} else if m := edgeRE.FindStringSubmatch(l); m != nil {
			if keep[m[1]] && keep[m[2]] && !(m[1] == "[*]" && m[2] == "[*]") {
				b.WriteString(l + "\n")
			}
			continue
		} else if m := noteRE.FindStringSubmatch(l); m != nil {
			id = m[1]
		} else if m := ownRE.FindStringSubmatch(l); m != nil {
			id = m[1]
		} else if m := classRE.FindStringSubmatch(l); m != nil {
			var ids []string
			for _, x := range strings.Split(m[1], ",") {
				if keep[x] {
					ids = append(ids, x)
				}
			}
			if len(ids) > 0 {
				b.WriteString("    class " + strings.Join(ids, ",") + " " + m[2] + "\n")
			}
			continue
		} else {
			b.WriteString(l + "\n") // classDef
			continue
		}
		if keep[id] {
			b.WriteString(l + "\n")
		}
	}
	return b.String()
}
