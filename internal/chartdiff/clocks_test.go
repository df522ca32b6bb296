package chartdiff

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/fsmgen/fsmgen/internal/lower"
)

func delayed(ms int, target string, actions ...string) *Trans {
	return &Trans{Delay: ms, Target: target, Actions: actions}
}

// TestDelaysActiveTogether runs, in fsmgen's interpreter and in XState, a chart whose two
// regions and a state within one of them wait their own delays: each counts from when its
// state was entered; a transition of one region restarts none of the other's; delays due
// at the same instant fire in the order their states were entered (document order when at
// once); the compound state's delay is not restarted by its child's moves.
func TestDelaysActiveTogether(t *testing.T) {
	needXState(t)
	c := hand(st("", Compound, "p", nil,
		st("p", Parallel, "", ons(delayed(1000, "out", "tp")),
			st("a", Compound, "a1", ons(delayed(700, "", "ta")),
				leaf("a1", on("e0", "p.a.a2", false, "t0"), delayed(200, "p.a.a2", "d1")),
				leaf("a2", on("e1", "p.a.a1", false, "t1"))),
			st("b", Compound, "b1", nil,
				leaf("b1", delayed(200, "p.b.b2", "d2"), delayed(500, "", "d3")),
				leaf("b2", on("e2", "p.b.b1", false, "t2")))),
		leaf("out")))
	if err := c.Check(); err != nil {
		t.Fatal(err)
	}
	seqs := [][]string{
		// Both 200s at once: a's first (entered first, document order).
		{"+250", "e1", "+100", "+150", "e2", "+500", "+500"},
		// a moves at 100 and back at 150: a1's 200 from 150; b's from 0.
		{"+100", "e0", "+50", "e1", "+100", "+100", "+300", "+1000"},
		// Waiting through everything at once.
		{"+2000"},
	}
	m, ds := lower.Load("clocks.fsm.yaml", c.SpecYAML())
	if ds.HasErrors() {
		t.Fatalf("%v\n%s", ds, c.SpecYAML())
	}
	ours, kept, ok := RunFsmgen(m, c, seqs, "")
	if !ok || !reflect.DeepEqual(kept, seqs) {
		t.Fatalf("fsmgen did not run every sequence: %v", kept)
	}
	cases := []Case{{Chart: c, Sequences: seqs}}
	theirs, err := RunXState(context.Background(), xstateDir, cases)
	if err != nil {
		t.Fatal(err)
	}
	compared, diffs := Compare(cases, [][][]Observation{ours}, theirs)
	for _, d := range diffs {
		t.Errorf("sequence %d disagrees at step %d:\n%s", d.Sequence, d.Step, d.Trace)
	}
	// What both observed, spelled out for the first sequence.
	want := []string{
		"p.a.a1 p.b.b1 | en_p en_a en_a1 en_b en_b1",
		"p.a.a2 p.b.b2 | ex_a1 d1 en_a2 ex_b1 d2 en_b2",
		"p.a.a1 p.b.b2 | ex_a2 t1 en_a1",
	}
	for i, w := range want {
		if got := formatObs(ours[0][i]); strings.TrimSpace(got) != strings.TrimSpace(w) {
			t.Errorf("sequence 0 step %d: %s, want %s", i, got, w)
		}
	}
	t.Logf("%d observations compared", compared)
}

// TestDelaysEnteredInOrder: two regions' delays due at the same instant, of states entered
// at the same instant by two events (b1 again, then a1 again), fire in the order the states
// were entered, as XState schedules them: b's first, though a is first in document order.
func TestDelaysEnteredInOrder(t *testing.T) {
	needXState(t)
	c := hand(st("", Compound, "p", nil,
		st("p", Parallel, "", nil,
			st("a", Compound, "a1", nil,
				leaf("a1", on("ea", "p.a.a1", true, "ra"), delayed(200, "p.a.a2", "d1")),
				leaf("a2")),
			st("b", Compound, "b1", nil,
				leaf("b1", on("eb", "p.b.b1", true, "rb"), delayed(200, "p.b.b2", "d2")),
				leaf("b2")))))
	seqs := [][]string{{"+100", "eb", "ea", "+250"}}
	m, ds := lower.Load("clocks.fsm.yaml", c.SpecYAML())
	if ds.HasErrors() {
		t.Fatalf("%v\n%s", ds, c.SpecYAML())
	}
	ours, _, _ := RunFsmgen(m, c, seqs, "")
	cases := []Case{{Chart: c, Sequences: seqs}}
	theirs, err := RunXState(context.Background(), xstateDir, cases)
	if err != nil {
		t.Fatal(err)
	}
	_, diffs := Compare(cases, [][][]Observation{ours}, theirs)
	for _, d := range diffs {
		t.Errorf("disagrees at step %d:\n%s", d.Step, d.Trace)
	}
	if got, want := formatObs(ours[0][4]), "p.a.a2 p.b.b2 | ex_b1 d2 en_b2 ex_a1 d1 en_a2"; got != want {
		t.Errorf("after the wait: %s, want %s", got, want)
	}
}
