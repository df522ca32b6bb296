package graph

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/fsmgen/fsmgen/internal/fixture"
)

func TestDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{
		30 * time.Minute:                "30m",
		4 * time.Hour:                   "4h",
		90 * time.Minute:                "1h30m",
		90 * time.Second:                "1m30s",
		45 * time.Second:                "45s",
		500 * time.Millisecond:          "500ms",
		26*time.Hour + 5*time.Second:    "26h0m5s",
		time.Hour + 30*time.Millisecond: "1h0m0.03s",
	} {
		if got := Duration(d); got != want {
			t.Errorf("Duration(%v) = %q, want %q", d, got, want)
		}
	}
}

func TestOrdinal(t *testing.T) {
	var got []string
	for _, n := range []int{1, 2, 3, 4, 11, 12, 13, 21, 22, 23, 101, 111, 112} {
		got = append(got, Ordinal(n))
	}
	if s := strings.Join(got, " "); s != "1st 2nd 3rd 4th 11th 12th 13th 21st 22nd 23rd 101st 111th 112th" {
		t.Errorf("ordinals: %s", s)
	}
}

// TestBuild lists the door's edges in both history modes.
func TestBuild(t *testing.T) {
	m := fixture.Load(t, "../testdata/door.fsm.yaml")
	node := func(n Node) string {
		switch n.Kind {
		case StateNode:
			return m.States[n.Index].Name
		case ChoiceNode:
			return fmt.Sprintf("choice%d", n.Index)
		case HistoryNode:
			return "H(" + m.States[n.Index].Name + ")"
		case StartNode:
			return "start"
		}
		return "end"
	}
	dump := func(g *Graph) string {
		var b strings.Builder
		for _, e := range g.Edges {
			fmt.Fprintf(&b, "%s -> %s %b %q\n", node(e.From), node(e.To), e.Kind, e.Labels)
		}
		return b.String()
	}
	for _, tc := range []struct {
		opt  Options
		want string
	}{
		{Options{}, `start -> closed 1000000 []
closed -> open 1 ["push [unlocked] [!alarm] / beep reset tries"]
closed -> closed 1 ["push +tries"]
closed -> jammed 10000 ["push when tries reaches 3"]
closed -> locked 1 ["lock by keeper, admin (while night)"]
locked -> locked 10 ["knock (internal)"]
locked -> choice0 1 ["unlock"]
choice0 -> closed 100100 ["[unlocked]" "else (history of jammed)"]
jammed -> closed 100 ["kick (history)"]
open -> closed 1 ["slam"]
closed -> broken 1 ["smash"]
open -> broken 1 ["smash"]
locked -> broken 1 ["smash"]
jammed -> broken 1 ["smash"]
broken -> end 10000000 []
`},
		{Options{HistoryNodes: true}, `start -> closed 1000000 []
closed -> open 1 ["push [unlocked] [!alarm] / beep reset tries"]
closed -> closed 1 ["push +tries"]
closed -> jammed 10000 ["push when tries reaches 3"]
closed -> locked 1 ["lock by keeper, admin (while night)"]
locked -> locked 10 ["knock (internal)"]
locked -> choice0 1 ["unlock"]
choice0 -> closed 100000 ["[unlocked]"]
H(jammed) -> closed 1000 []
choice0 -> H(jammed) 100 ["else"]
jammed -> H(jammed) 100 ["kick"]
open -> closed 1 ["slam"]
closed -> broken 1 ["smash"]
open -> broken 1 ["smash"]
locked -> broken 1 ["smash"]
jammed -> broken 1 ["smash"]
broken -> end 10000000 []
`},
	} {
		g := Build(m, tc.opt)
		if got := dump(g); got != tc.want {
			t.Errorf("Build(%+v):\n%s\nwant:\n%s", tc.opt, got, tc.want)
		}
		if len(g.Choices) != 1 || g.Choices[0].From.Name != "locked" {
			t.Errorf("choices: %+v", g.Choices)
		}
	}
}
