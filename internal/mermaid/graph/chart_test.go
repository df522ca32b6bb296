package graph

import (
	"strings"
	"testing"

	"github.com/fsmgen/fsmgen/internal/fixture"
	"github.com/fsmgen/fsmgen/internal/ir"
)

// TestChartIDs checks that identifiers are derived from paths, are unique (in document
// order, whatever the paths hold), and never end like the pseudo-states Mermaid derives
// from a composite state's identifier.
func TestChartIDs(t *testing.T) {
	paths := []string{"a b", "a_b", "a_b_2", "on", "p.r1.on", "p.r2.on", "x.start", "x.end", "x.start_", "%%", "日本", "Start", "a.b"}
	c := &ir.Chart{Nodes: []*ir.Node{{}}}
	for i, p := range paths {
		c.Nodes = append(c.Nodes, &ir.Node{Index: i + 1, Path: p})
	}
	want := []string{"", "s_a_b", "s_a_b_3", "s_a_b_2", "s_on", "s_p_r1_on", "s_p_r2_on", "s_x_start_", "s_x_end_", "s_x_start__2", "s", "s_2", "s_Start", "s_a_b_4"}
	if got := chartIDs(c); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("ids:\n got %q\nwant %q", got, want)
	}
}

// TestBuildChart lists the studio's edges, merged and labelled.
func TestBuildChart(t *testing.T) {
	g := BuildChart(fixture.Load(t, "../testdata/studio.fsm.yaml").Chart)
	var got []string
	for _, e := range g.Edges {
		got = append(got, e.From.Path+" -> "+e.To.Path+" "+strings.Join(e.Labels, " | "))
	}
	want := []string{
		"standby -> active.h power",
		"active -> standby power",
		"active.edit.draft -> active.edit.review submit",
		"active.edit.review -> active.mix always [approved, !busy; %% <i>] / count",
		"active.edit.review -> active.edit.back resume",
		"active.edit -> active.edit.draft polish (reenter)",
		"active.mix.left.on -> active.mix.left.off toggle",
		"active.edit.draft -> active.mix.left.on both_on (2 targets at once)",
		"active.edit.draft -> active.mix.right.on both_on (2 targets at once)",
		"active.edit.review -> active.mix.again remix",
		"active.mix.right.on -> active.mix.right.off toggle",
		"active.mix.left.off -> active.mix.left.set lock [ready | <b>]",
		"active.mix.right.off -> active.mix.right.set lock [(\"busy; %% <i>\" or not in(active.mix.left.on))]",
		"active.mix -> active.edit done",
		"active.mix -> active.mix reset | tick (internal)",
		`active -> active tick, save "it" --> [*] (internal) / count, log -> out`,
		"active -> shut: down <now> {x} lock [!busy; %% <i>]",
		"active.h -> active.edit.review default",
		"active.edit.back -> active.edit.review default",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("edges:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	kinds := map[string]EdgeKind{}
	for _, e := range g.Edges {
		kinds[e.From.Path+" -> "+e.To.Path] |= e.Kind
	}
	for edge, k := range map[string]EdgeKind{
		"standby -> active.h":                    History,
		"active -> active":                       Internal,
		"active.mix -> active.mix":               Normal | Internal,
		"active.h -> active.edit.review":         Default,
		"active.edit.review -> active.edit.back": History,
	} {
		if kinds[edge] != k {
			t.Errorf("%s: kind %b, want %b", edge, kinds[edge], k)
		}
	}
}

// TestChartLabel covers the notes of the label on what a transition exits and enters.
func TestChartLabel(t *testing.T) {
	a := &ir.Node{Index: 1, Name: "a", Path: "a", Kind: ir.NodeCompound}
	x := &ir.Node{Index: 2, Name: "x", Path: "a.x", Parent: a}
	b := &ir.Node{Index: 3, Name: "b", Path: "b"}
	ev := &ir.Event{Name: "go"}
	g := &ir.Guard{Name: "g"}
	for _, tc := range []struct {
		t    ir.ChartTransition
		want string
	}{
		{ir.ChartTransition{Source: a, Event: ev, Target: a, Reenter: true}, "go"},
		{ir.ChartTransition{Source: a, Event: ev, Target: a}, "go (no reenter)"},
		{ir.ChartTransition{Source: a, Event: ev, Target: x, Reenter: true}, "go (reenter)"},
		{ir.ChartTransition{Source: a, Event: ev, Target: x}, "go"},
		{ir.ChartTransition{Source: a, Event: ev, Target: b, Reenter: true}, "go"},
		{ir.ChartTransition{Source: a, Event: ev, Conds: []ir.Cond{{Guard: g}, {Guard: g, Negate: true}}}, "go [g, !g] (internal)"},
		{ir.ChartTransition{Source: a, Always: true, Conds: []ir.Cond{{Guard: g}}, Target: b, Actions: []*ir.Action{{Name: "p"}, {Name: "q"}}}, "always [g] / p, q"},
		{ir.ChartTransition{Source: a, Done: true, Target: b}, "done"},
	} {
		if got := ChartLabel([]*ir.ChartTransition{&tc.t}); got != tc.want {
			t.Errorf("ChartLabel(%+v) = %q, want %q", tc.t, got, tc.want)
		}
	}
}
