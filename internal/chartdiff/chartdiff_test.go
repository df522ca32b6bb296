package chartdiff

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fsmgen/fsmgen/internal/testtool"
)

// xstateDir is where the runner and its node_modules live.
const xstateDir = "testdata/xstate"

// needXState is NeedXState for this package's runner, installed first (npm ci from its
// lockfile) when node and npm are there but its node_modules is not.
func needXState(t *testing.T) {
	t.Helper()
	testtool.NodePackage(t, xstateDir, "xstate")
	NeedXState(t, xstateDir)
}

// hand completes a hand-written tree: it links parents and gives every state except the
// root and history nodes the actions "en_<name>" and "ex_<name>". The events are those the
// transitions use; guard "yes" is true and "no" false.
func hand(root *Node) *Chart {
	c := &Chart{Root: root, Guards: map[string]bool{"yes": true, "no": false}}
	var link func(n *Node)
	link = func(n *Node) {
		for _, t := range n.On {
			if t.Event != "" && !slices.Contains(c.Events, t.Event) {
				c.Events = append(c.Events, t.Event)
			}
		}
		for _, ch := range n.Children {
			ch.Parent = n
			if !ch.Kind.IsHistory() {
				ch.Entry = []string{"en_" + ch.Name}
				ch.Exit = []string{"ex_" + ch.Name}
			}
			link(ch)
		}
	}
	link(root)
	slices.Sort(c.Events)
	return c
}

func st(name string, k Kind, initial string, on []*Trans, children ...*Node) *Node {
	return &Node{Name: name, Kind: k, Initial: initial, On: on, Children: children}
}

func leaf(name string, on ...*Trans) *Node { return st(name, Atomic, "", on) }

func final(name string) *Node { return st(name, Final, "", nil) }

func hist(name string, k Kind, def string) *Node {
	return &Node{Name: name, Kind: k, Default: def}
}

func on(event, target string, reenter bool, actions ...string) *Trans {
	return &Trans{Event: event, Target: target, Reenter: reenter, Actions: actions}
}

func ons(ts ...*Trans) []*Trans { return ts }

func guarded(guard string, t *Trans) *Trans {
	t.Guard = guard
	return t
}

func always(guard, target string, reenter bool, actions ...string) *Trans {
	return &Trans{Always: true, Guard: guard, Target: target, Reenter: reenter, Actions: actions}
}

func onDone(target string, reenter bool, actions ...string) *Trans {
	return &Trans{Done: true, Target: target, Reenter: reenter, Actions: actions}
}

// handCase is a hand-written chart with what XState v5 does on one sequence. Each line of
// want is one observation: "config | actions", with " | done" once the machine is done.
type handCase struct {
	name   string
	chart  *Chart
	events []string
	want   []string
}

func handCases() []handCase {
	return []handCase{
		{
			// Both regions take e0 (document order: a's transition first). A transition
			// from one region into another has the parallel state as its domain: every
			// region is exited and entered again, the parallel state itself is not.
			name: "parallel",
			chart: hand(st("", Compound, "p", nil,
				st("p", Parallel, "", ons(on("e9", "out", false, "t9")),
					st("a", Compound, "a1", nil,
						leaf("a1", on("e0", "p.a.a2", false, "t0"), on("e1", "p.b.b2", false, "t1")),
						leaf("a2", on("e0", "p.a.a1", false, "t2"))),
					st("b", Compound, "b1", nil,
						leaf("b1", on("e0", "p.b.b2", false, "t3")),
						leaf("b2", on("e2", "p.b.b1", false, "t4")))),
				leaf("out", on("e0", "p.b.b2", false, "t5")))),
			events: []string{"e0", "e0", "e2", "e1", "e2", "e9", "e0", "zz"},
			want: []string{
				"p.a.a1 p.b.b1 | en_p en_a en_a1 en_b en_b1",
				"p.a.a2 p.b.b2 | ex_b1 ex_a1 t0 t3 en_a2 en_b2",
				"p.a.a1 p.b.b2 | ex_a2 t2 en_a1",
				"p.a.a1 p.b.b1 | ex_b2 t4 en_b1",
				"p.a.a1 p.b.b2 | ex_b1 ex_b ex_a1 ex_a t1 en_a en_a1 en_b en_b2",
				"p.a.a1 p.b.b1 | ex_b2 t4 en_b1",
				"out | ex_b1 ex_b ex_a1 ex_a ex_p t9 en_out",
				"p.a.a1 p.b.b2 | ex_out t5 en_p en_a en_a1 en_b en_b2",
				"p.a.a1 p.b.b2 |",
			},
		},
		{
			// hx's default is used until h is first left; then every history node holds
			// what h had when it was left last: the child (shallow) or the atomic states
			// (deep).
			name: "history",
			chart: hand(st("", Compound, "other", nil,
				st("h", Compound, "h1", ons(on("e2", "other", false, "t0")),
					st("h1", Compound, "h1a", nil,
						leaf("h1a", on("e0", "h.h1.h1b", false, "t1")),
						leaf("h1b")),
					leaf("h2", on("e0", "h.h1.h1b", false, "t2")),
					hist("hs", ShallowHistory, ""),
					hist("hd", DeepHistory, ""),
					hist("hx", ShallowHistory, "h.h2")),
				leaf("other", on("e3", "h.hs", false, "t3"), on("e4", "h.hd", false, "t4"), on("e5", "h.hx", false, "t5")))),
			events: []string{"e5", "e0", "e2", "e4", "e2", "e3", "e2", "e5"},
			want: []string{
				"other | en_other",
				"h.h2 | ex_other t5 en_h en_h2",
				"h.h1.h1b | ex_h2 t2 en_h1 en_h1b",
				"other | ex_h1b ex_h1 ex_h t0 en_other",
				"h.h1.h1b | ex_other t4 en_h en_h1 en_h1b",
				"other | ex_h1b ex_h1 ex_h t0 en_other",
				"h.h1.h1a | ex_other t3 en_h en_h1 en_h1a",
				"other | ex_h1a ex_h1 ex_h t0 en_other",
				"h.h1.h1a | ex_other t5 en_h en_h1 en_h1a",
			},
		},
		{
			name: "deep history through a parallel state",
			chart: hand(st("", Compound, "h", nil,
				st("h", Compound, "p", ons(on("e2", "out", false, "t0")),
					hist("hd", DeepHistory, ""),
					st("p", Parallel, "", nil,
						st("a", Compound, "a1", nil,
							leaf("a1", on("e0", "h.p.a.a2", false, "t1")),
							leaf("a2")),
						st("b", Compound, "b1", nil,
							leaf("b1", on("e1", "h.p.b.b2", false, "t2")),
							leaf("b2"))),
					hist("hs", ShallowHistory, "")),
				leaf("out", on("e3", "h.hs", false, "t3"), on("e4", "h.hd", false, "t4")))),
			events: []string{"e0", "e1", "e2", "e4", "e2", "e3"},
			want: []string{
				"h.p.a.a1 h.p.b.b1 | en_h en_p en_a en_a1 en_b en_b1",
				"h.p.a.a2 h.p.b.b1 | ex_a1 t1 en_a2",
				"h.p.a.a2 h.p.b.b2 | ex_b1 t2 en_b2",
				"out | ex_b2 ex_b ex_a2 ex_a ex_p ex_h t0 en_out",
				"h.p.a.a2 h.p.b.b2 | ex_out t4 en_h en_p en_a en_a2 en_b en_b2",
				"out | ex_b2 ex_b ex_a2 ex_a ex_p ex_h t0 en_out",
				"h.p.a.a1 h.p.b.b1 | ex_out t3 en_h en_p en_a en_a1 en_b en_b1",
			},
		},
		{
			// Entering af raises done for a, then (b being final already) for p, handled in
			// that order after the event's microstep. Reaching the top-level final state
			// runs the exit actions of every active state; later events do nothing.
			name: "parallel done",
			chart: hand(st("", Compound, "p", nil,
				st("p", Parallel, "", ons(onDone("next", false, "t0")),
					st("a", Compound, "a1", ons(onDone("", false, "t1")),
						leaf("a1", on("e0", "p.a.af", false, "t2")),
						final("af")),
					st("b", Compound, "b1", nil,
						leaf("b1", on("e1", "p.b.bf", false, "t3")),
						final("bf"))),
				leaf("next", on("e2", "fin", false, "t4")),
				final("fin"))),
			events: []string{"e1", "e0", "e2", "e0"},
			want: []string{
				"p.a.a1 p.b.b1 | en_p en_a en_a1 en_b en_b1",
				"p.a.a1 p.b.bf | ex_b1 t3 en_bf",
				"next | ex_a1 t2 en_af t1 ex_bf ex_b ex_af ex_a ex_p t0 en_next",
				"fin | ex_next t4 en_fin ex_fin | done",
				"fin | | done",
			},
		},
		{
			name: "parallel root",
			chart: hand(st("", Parallel, "", nil,
				st("a", Compound, "a1", nil,
					leaf("a1", on("e0", "a.af", false, "t0")),
					final("af")),
				st("b", Compound, "b1", nil,
					leaf("b1", on("e1", "b.bf", false, "t1")),
					final("bf")))),
			events: []string{"e0", "e1", "e0"},
			want: []string{
				"a.a1 b.b1 | en_a en_a1 en_b en_b1",
				"a.af b.b1 | ex_a1 t0 en_af",
				"a.af b.bf | ex_b1 t1 en_bf ex_bf ex_b ex_af ex_a | done",
				"a.af b.bf | | done",
			},
		},
		{
			// The first enabled always transition of a state wins; always transitions are
			// taken at start too.
			name: "always chain",
			chart: hand(st("", Compound, "y", nil,
				leaf("y", always("no", "z", false, "t0"), always("yes", "w", false, "t1")),
				leaf("w", always("yes", "v", true, "t2")),
				leaf("z"),
				leaf("v", on("e0", "y", false, "t3")))),
			events: []string{"e0"},
			want: []string{
				"v | en_y ex_y t1 en_w ex_w t2 en_v",
				"v | ex_v t3 en_y ex_y t1 en_w ex_w t2 en_v",
			},
		},
		{
			// Always transitions of two regions, enabled at once: the first in document
			// order wins and leaves the parallel state, so the other one is not taken.
			name: "always conflict",
			chart: hand(st("", Compound, "p", nil,
				st("p", Parallel, "", nil,
					st("a", Compound, "a1", nil,
						leaf("a1", on("e0", "p.a.a2", false, "t0")),
						leaf("a2", always("yes", "x", false, "t1"))),
					st("b", Compound, "b1", nil,
						leaf("b1", on("e0", "p.b.b2", false, "t2")),
						leaf("b2", always("yes", "y", false, "t3")))),
				leaf("x"),
				leaf("y"))),
			events: []string{"e0"},
			want: []string{
				"p.a.a1 p.b.b1 | en_p en_a en_a1 en_b en_b1",
				"x | ex_b1 ex_a1 t0 t2 en_a2 en_b2 ex_b2 ex_b ex_a2 ex_a ex_p t1 en_x",
			},
		},
		{
			// a1's e0 is guarded off, so a's runs; a1's targetless e1 takes precedence over
			// a's. Targetless transitions exit and enter nothing, whatever reenter says.
			name: "targetless",
			chart: hand(st("", Compound, "a", nil,
				st("a", Compound, "a1", ons(on("e0", "", false, "t0"), on("e1", "a.a2", false, "t1")),
					leaf("a1", guarded("no", on("e0", "", false, "t2")), on("e1", "", true, "t3")),
					leaf("a2")))),
			events: []string{"e0", "e1"},
			want: []string{
				"a.a1 | en_a en_a1",
				"a.a1 | t0",
				"a.a1 | t3",
			},
		},
		{
			// reenter false to a descendant or to itself keeps the source (a compound
			// self-target still resets its children to the initial state; an atomic one
			// only runs the actions); reenter true exits and enters the source.
			name: "reenter",
			chart: hand(st("", Compound, "p", nil,
				st("p", Compound, "p1", ons(on("e0", "p.p2", false, "t0"), on("e1", "p.p2", true, "t1"),
					on("e2", "p", false, "t2"), on("e3", "p", true, "t3"), on("e6", "q", false, "t6")),
					leaf("p1"),
					leaf("p2")),
				leaf("q", on("e4", "q", false, "t4"), on("e5", "q", true, "t5")))),
			events: []string{"e0", "e1", "e2", "e3", "e6", "e4", "e5"},
			want: []string{
				"p.p1 | en_p en_p1",
				"p.p2 | ex_p1 t0 en_p2",
				"p.p2 | ex_p2 ex_p t1 en_p en_p2",
				"p.p1 | ex_p2 t2 en_p1",
				"p.p1 | ex_p1 ex_p t3 en_p en_p1",
				"q | ex_p1 ex_p t6 en_q",
				"q | t4",
				"q | ex_q t5 en_q",
			},
		},
		{
			// A parallel source: with reenter false and a descendant target it stays, but
			// all its regions are exited and entered again. Its targetless e1 runs only
			// when no region has an enabled e1 transition (XState asks the regions first and
			// the ancestors of the parallel state only when none of them answers).
			name: "parallel source",
			chart: hand(st("", Compound, "p", nil,
				st("p", Parallel, "", ons(on("e0", "p.a.a2", false, "t0"), on("e1", "", false, "t1"), on("e2", "p.a.a2", true, "t2")),
					st("a", Compound, "a1", nil,
						leaf("a1", on("e1", "", false, "t3")),
						leaf("a2")),
					st("b", Compound, "b1", nil,
						leaf("b1", on("e3", "p.b.b2", false, "t4")),
						leaf("b2"))))),
			events: []string{"e1", "e3", "e0", "e1", "e3", "e2"},
			want: []string{
				"p.a.a1 p.b.b1 | en_p en_a en_a1 en_b en_b1",
				"p.a.a1 p.b.b1 | t3",
				"p.a.a1 p.b.b2 | ex_b1 t4 en_b2",
				"p.a.a2 p.b.b1 | ex_b2 ex_b ex_a1 ex_a t0 en_a en_a2 en_b en_b1",
				"p.a.a2 p.b.b1 | t1",
				"p.a.a2 p.b.b2 | ex_b1 t4 en_b2",
				"p.a.a2 p.b.b1 | ex_b2 ex_b ex_a2 ex_a ex_p t2 en_p en_a en_a2 en_b en_b1",
			},
		},
	}
}

// parseObs reads one line of handCase.want.
func parseObs(s string) Observation {
	parts := strings.Split(s, "|")
	o := Observation{Config: strings.Fields(parts[0])}
	if len(parts) > 1 {
		o.Actions = strings.Fields(parts[1])
	}
	if len(o.Actions) == 0 {
		o.Actions = nil
	}
	o.Done = len(parts) > 2 && strings.TrimSpace(parts[2]) == "done"
	return o
}

func formatObs(o Observation) string {
	s := strings.Join(o.Config, " ") + " | " + strings.Join(o.Actions, " ")
	if o.Done {
		s += " | done"
	}
	return s
}

func TestHandChartsInXState(t *testing.T) {
	needXState(t)
	hcs := handCases()
	var cases []Case
	for _, hc := range hcs {
		if err := hc.chart.Check(); err != nil {
			t.Fatalf("%s: %v", hc.name, err)
		}
		cases = append(cases, Case{Chart: hc.chart, Sequences: [][]string{hc.events}})
	}
	got, err := RunXState(context.Background(), xstateDir, cases)
	if err != nil {
		t.Fatal(err)
	}
	for i, hc := range hcs {
		var want []Observation
		for _, w := range hc.want {
			want = append(want, parseObs(w))
		}
		if !reflect.DeepEqual(got[i][0], want) {
			var b strings.Builder
			for j, o := range got[i][0] {
				ev := "start"
				if j > 0 {
					ev = hc.events[j-1]
				}
				fmt.Fprintf(&b, "\n  %-5s %s", ev, formatObs(o))
			}
			t.Errorf("%s: XState observed:%s\nwant:\n  %s", hc.name, b.String(), strings.Join(hc.want, "\n  "))
		}
	}
}

func TestXStateConfig(t *testing.T) {
	c := hand(st("", Compound, "a", ons(on("e0", "b", true)),
		st("a", Compound, "a2", ons(onDone("b", false, "t0")),
			hist("h", DeepHistory, "a.a1"),
			leaf("a2", guarded("yes", on("e1", "", false, "t1")), on("e2", "a.a1", false), on("e1", "a.h", true, "t2", "t3")),
			final("a1")),
		st("b", Parallel, "", nil,
			leaf("r1", always("no", "c", false)),
			leaf("r2")),
		final("c")))
	got, err := c.XStateConfig()
	if err != nil {
		t.Fatal(err)
	}
	want := `{"initial":"a","on":{"e0":[{"target":"#b","reenter":true}]},"states":{` +
		`"a":{"id":"a","initial":"a2","entry":["en_a"],"exit":["ex_a"],"onDone":[{"target":"#b","actions":["t0"],"reenter":false}],"states":{` +
		`"h":{"id":"h","type":"history","history":"deep","target":"#a1"},` +
		`"a2":{"id":"a2","entry":["en_a2"],"exit":["ex_a2"],"on":{` +
		`"e1":[{"guard":"yes","actions":["t1"],"reenter":false},{"target":"#h","actions":["t2","t3"],"reenter":true}],` +
		`"e2":[{"target":"#a1","reenter":false}]}},` +
		`"a1":{"id":"a1","type":"final","entry":["en_a1"],"exit":["ex_a1"]}}},` +
		`"b":{"id":"b","type":"parallel","entry":["en_b"],"exit":["ex_b"],"states":{` +
		`"r1":{"id":"r1","entry":["en_r1"],"exit":["ex_r1"],"always":[{"target":"#c","guard":"no","reenter":false}]},` +
		`"r2":{"id":"r2","entry":["en_r2"],"exit":["ex_r2"]}}},` +
		`"c":{"id":"c","type":"final","entry":["en_c"],"exit":["ex_c"]}}}`
	if string(got) != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}

	c.Root.On[0].Target = "nowhere"
	if _, err := c.XStateConfig(); err == nil || !strings.Contains(err.Error(), `target "nowhere" not found`) {
		t.Errorf("bad target: err = %v", err)
	}
}

func TestRunXStateReportsTheCase(t *testing.T) {
	needXState(t)
	ok := hand(st("", Compound, "a", nil, leaf("a")))
	// Well formed, but an eventless loop: XState gives up, and so does the runner.
	loop := hand(st("", Compound, "a", nil,
		leaf("a", always("yes", "b", false)),
		leaf("b", always("yes", "a", false))))
	_, err := RunXState(context.Background(), xstateDir, []Case{
		{Chart: ok, Sequences: [][]string{{"zz"}}},
		{Chart: loop, Sequences: [][]string{{}}},
	})
	if err == nil || !strings.Contains(err.Error(), "case 1: sequence 0 step 0") || strings.Contains(err.Error(), "case 0") {
		t.Errorf("err = %v, want one naming case 1", err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := RunXState(ctx, xstateDir, []Case{{Chart: ok}}); err == nil {
		t.Error("no error with a cancelled context")
	}
}

func TestGenerateDeterministic(t *testing.T) {
	for seed := range uint64(20) {
		var outs [2][]byte
		for i := range outs {
			r := rand.New(rand.NewPCG(seed, 7))
			c := Generate(r, DefaultOptions())
			b, err := c.XStateConfig()
			if err != nil {
				t.Fatalf("seed %d: %v", seed, err)
			}
			seqs := RandomSequences(r, c, 5, 10)
			outs[i] = fmt.Appendf(b, "\n%q\n%v\n%v", c.Events, c.Guards, seqs)
		}
		if !bytes.Equal(outs[0], outs[1]) {
			t.Fatalf("seed %d: two runs differ:\n%s\n%s", seed, outs[0], outs[1])
		}
	}
}

// checkGenerated checks the rules Generate promises beyond Chart.Check.
func checkGenerated(c *Chart, opt Options) error {
	if err := c.Check(); err != nil {
		return err
	}
	nodes := c.Nodes()
	if n := len(nodes) - 1; n < minNodes || n > maxNodes {
		return fmt.Errorf("%d nodes", n)
	}
	idx := map[*Node]int{}
	for i, n := range nodes {
		idx[n] = i
	}
	// last returns the largest document index in n's subtree.
	last := func(n *Node) int {
		i := idx[n]
		for i+1 < len(nodes) && isDescendant(nodes[i+1], n) {
			i++
		}
		return i
	}
	depth := 0
	for _, n := range nodes {
		d := 0
		for p := n; p.Parent != nil; p = p.Parent {
			d++
		}
		if d > opt.MaxDepth {
			return fmt.Errorf("%q: depth %d", n.Path(), d)
		}
		if !n.Kind.IsHistory() {
			depth = max(depth, d)
		}
		if n.Parent != nil && n.Name != fmt.Sprintf("s%d", idx[n]-1) {
			return fmt.Errorf("%q: not named in document order", n.Path())
		}
		if regions := len(slices.DeleteFunc(slices.Clone(n.Children), func(ch *Node) bool { return ch.Kind.IsHistory() })); n.Kind == Parallel && (regions < 2 || regions > 3) {
			return fmt.Errorf("%q: %d regions", n.Path(), regions)
		}
		if n.Kind.IsHistory() && n.Parent.Initial == n.Name {
			return fmt.Errorf("%q: initial history", n.Path())
		}
		if n.Parent == nil && len(n.Entry)+len(n.Exit) > 0 {
			return fmt.Errorf("root with actions")
		}
		for i, t := range n.On {
			if n.Kind.IsHistory() || n.Kind == Final {
				return fmt.Errorf("%q: transition from a %s state", n.Path(), n.Kind)
			}
			var eff *Node
			if t.Target != "" {
				eff = c.Lookup(t.Target)
				if eff.Kind.IsHistory() {
					eff = eff.Parent
				}
			}
			switch {
			case t.Always:
				if n.Kind != Atomic || t.Guard == "" && t.Expr == nil || t.Target == "" || c.Root.Kind != Compound {
					return fmt.Errorf("%q: always transition %d: not guarded, targeted and on an atomic state", n.Path(), i)
				}
				top := n
				for top.Parent != c.Root {
					top = top.Parent
				}
				if idx[eff] <= last(top) {
					return fmt.Errorf("%q: always transition %d to %q does not leave for a later top-level state", n.Path(), i, t.Target)
				}
			case t.Done:
				if !canBeDone(n) {
					return fmt.Errorf("%q: done transition on a state that cannot be done", n.Path())
				}
				if eff != nil && (idx[eff] <= last(n) || lca(n, eff).Kind == Parallel) {
					return fmt.Errorf("%q: done transition %d to %q does not move forward", n.Path(), i, t.Target)
				}
			}
		}
	}
	if depth < 3 {
		return fmt.Errorf("depth %d", depth)
	}
	return nil
}

func TestGenerateInvariants(t *testing.T) {
	opt := DefaultOptions()
	const charts = 500
	var have struct {
		parallel, history, shallow, deep, historyDefault, topFinal, regionFinal            int
		always, done, parallelDone, targetless, reenter, noReenter, guardTrue, guardFalse  int
		toHistory, toSelf, toAncestor, toDescendant, acrossRegions, rootHandles, sameEvent int
		entry, exit, transActions                                                          int
	}
	for seed := range uint64(charts) {
		c := Generate(rand.New(rand.NewPCG(seed, 1)), opt)
		if err := checkGenerated(c, opt); err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		var f struct {
			parallel, history, shallow, deep, historyDefault, topFinal, regionFinal            bool
			always, done, parallelDone, targetless, reenter, noReenter, guardTrue, guardFalse  bool
			toHistory, toSelf, toAncestor, toDescendant, acrossRegions, rootHandles, sameEvent bool
			entry, exit, transActions                                                          bool
		}
		for _, n := range c.Nodes() {
			switch n.Kind {
			case Parallel:
				f.parallel = true
			case ShallowHistory:
				f.history, f.shallow = true, true
			case DeepHistory:
				f.history, f.deep = true, true
			case Final:
				f.topFinal = f.topFinal || n.Parent == c.Root
				f.regionFinal = f.regionFinal || n.Parent.Parent != nil && n.Parent.Parent.Kind == Parallel
			}
			f.historyDefault = f.historyDefault || n.Default != ""
			f.entry = f.entry || len(n.Entry) > 0
			f.exit = f.exit || len(n.Exit) > 0
			f.rootHandles = f.rootHandles || n == c.Root && len(n.On) > 0
			for i, tr := range n.On {
				f.always = f.always || tr.Always
				f.done = f.done || tr.Done
				f.parallelDone = f.parallelDone || tr.Done && n.Kind == Parallel
				f.targetless = f.targetless || tr.Target == ""
				f.reenter = f.reenter || tr.Reenter
				f.noReenter = f.noReenter || !tr.Reenter
				f.transActions = f.transActions || len(tr.Actions) > 0
				f.sameEvent = f.sameEvent || i > 0 && tr.Event != "" && tr.Event == n.On[i-1].Event
				if tr.Guard != "" {
					f.guardTrue = f.guardTrue || c.Guards[tr.Guard]
					f.guardFalse = f.guardFalse || !c.Guards[tr.Guard]
				}
				if tr.Target == "" {
					continue
				}
				m := c.Lookup(tr.Target)
				f.toHistory = f.toHistory || m.Kind.IsHistory()
				f.toSelf = f.toSelf || m == n
				f.toAncestor = f.toAncestor || isDescendant(n, m)
				f.toDescendant = f.toDescendant || isDescendant(m, n)
				if a := lca(n, m); a.Kind == Parallel && a != n && a != m {
					f.acrossRegions = true
				}
			}
		}
		count := func(p *int, b bool) {
			if b {
				*p++
			}
		}
		count(&have.parallel, f.parallel)
		count(&have.history, f.history)
		count(&have.shallow, f.shallow)
		count(&have.deep, f.deep)
		count(&have.historyDefault, f.historyDefault)
		count(&have.topFinal, f.topFinal)
		count(&have.regionFinal, f.regionFinal)
		count(&have.always, f.always)
		count(&have.done, f.done)
		count(&have.parallelDone, f.parallelDone)
		count(&have.targetless, f.targetless)
		count(&have.reenter, f.reenter)
		count(&have.noReenter, f.noReenter)
		count(&have.guardTrue, f.guardTrue)
		count(&have.guardFalse, f.guardFalse)
		count(&have.toHistory, f.toHistory)
		count(&have.toSelf, f.toSelf)
		count(&have.toAncestor, f.toAncestor)
		count(&have.toDescendant, f.toDescendant)
		count(&have.acrossRegions, f.acrossRegions)
		count(&have.rootHandles, f.rootHandles)
		count(&have.sameEvent, f.sameEvent)
		count(&have.entry, f.entry)
		count(&have.exit, f.exit)
		count(&have.transActions, f.transActions)
	}
	// The share of charts that must have each feature.
	for _, w := range []struct {
		name string
		n    int
		min  float64
	}{
		{"a parallel state", have.parallel, 0.8},
		{"a history node", have.history, 0.8},
		{"a shallow history node", have.shallow, 0.6},
		{"a deep history node", have.deep, 0.6},
		{"a history default", have.historyDefault, 0.5},
		{"a top-level final state", have.topFinal, 0.5},
		{"a final state in a region", have.regionFinal, 0.5},
		{"an always transition", have.always, 0.5},
		{"a done transition", have.done, 0.6},
		{"a done transition of a parallel state", have.parallelDone, 0.1},
		{"a targetless transition", have.targetless, 0.8},
		{"reenter true", have.reenter, 0.9},
		{"reenter false", have.noReenter, 0.9},
		{"a true guard", have.guardTrue, 0.5},
		{"a false guard", have.guardFalse, 0.5},
		{"a transition to a history node", have.toHistory, 0.7},
		{"a self-transition", have.toSelf, 0.6},
		{"a transition to an ancestor", have.toAncestor, 0.6},
		{"a transition to a descendant", have.toDescendant, 0.8},
		{"a transition across regions", have.acrossRegions, 0.5},
		{"a transition on the root", have.rootHandles, 0.9},
		{"two transitions for one event on a state", have.sameEvent, 0.7},
		{"entry actions", have.entry, 0.9},
		{"exit actions", have.exit, 0.9},
		{"transition actions", have.transActions, 0.9},
	} {
		if share := float64(w.n) / charts; share < w.min {
			t.Errorf("%s in %.0f%% of the charts, want at least %.0f%%", w.name, 100*share, 100*w.min)
		}
	}
}

func TestRandomSequences(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	c := Generate(r, DefaultOptions())
	seqs := RandomSequences(r, c, 40, 12)
	if len(seqs) != 40 {
		t.Fatalf("%d sequences", len(seqs))
	}
	zz := 0
	for _, s := range seqs {
		if len(s) != 12 {
			t.Fatalf("sequence of %d events", len(s))
		}
		for _, e := range s {
			switch {
			case e == "zz":
				zz++
			case !slices.Contains(c.Events, e):
				t.Fatalf("event %q is not the chart's", e)
			}
		}
	}
	if zz == 0 || zz > 480/4 {
		t.Errorf("%d of 480 events are zz", zz)
	}
}

// TestGeneratedChartsInXState runs what the differential test runs: 300 charts, 30
// sequences of 10 events each (fewer with -short). XState must accept every chart and
// settle after every step; the observations must be consistent.
func TestGeneratedChartsInXState(t *testing.T) {
	needXState(t)
	charts, seqs := 300, 30
	if testing.Short() {
		charts, seqs = 40, 10
	}
	var cases []Case
	for seed := range uint64(charts) {
		r := rand.New(rand.NewPCG(seed, 3))
		c := Generate(r, DefaultOptions())
		cases = append(cases, Case{Chart: c, Sequences: RandomSequences(r, c, seqs, 10)})
	}
	start := time.Now()
	res, err := RunXState(context.Background(), xstateDir, cases)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d charts x %d sequences of 10 events in XState: %v", charts, seqs, time.Since(start))
	done := 0
	for i, cr := range res {
		for j, run := range cr {
			for k, o := range run {
				if len(o.Config) == 0 || !slices.IsSorted(o.Config) {
					t.Fatalf("case %d sequence %d step %d: config %q", i, j, k, o.Config)
				}
				if k > 0 && run[k-1].Done && (!o.Done || len(o.Actions) > 0 || !slices.Equal(o.Config, run[k-1].Config)) {
					t.Fatalf("case %d sequence %d step %d: %+v after done", i, j, k, o)
				}
			}
			if run[len(run)-1].Done {
				done++
			}
		}
	}
	if done == 0 || done == charts*seqs {
		t.Errorf("%d of %d runs end done", done, charts*seqs)
	}
}
