package specgen

import (
	"fmt"
	"slices"
	"strings"
)

// The statechart of the chart benchmark (bench/chart, written by bench/cmd/chartspec) and
// its flat twin (bench/chartflat): a machine of the same size, as many states as the chart
// has configurations, as many events as the program fires on it, and the same number of
// transitions from each state as the chart's configurations accept events.

// ChartNode is a state of a statechart: atomic without States, else compound (one of
// States active, the Initial one on entry) or, with Parallel, parallel (every one of
// States active, each a region). History makes it a history state of its parent ("shallow"
// or "deep"), never active.
type ChartNode struct {
	Name        string
	Initial     bool
	Terminal    bool
	Parallel    bool
	History     string
	Entry, Exit []string
	States      []*ChartNode
}

// ChartTransition is a transition of a statechart between states named by their paths
// (top-level state first, joined by "."): on event On, or eventless (Always), or when
// From is done (Done).
type ChartTransition struct {
	From, On, To string
	Always, Done bool
}

// Statechart is a statechart without guards: every transition is taken whenever its
// source is active and its event fires.
type Statechart struct {
	Name, Package, Doc string
	Events             []string // the events the program fires
	Actions            []string
	States             []*ChartNode // the top-level states, in document order
	Transitions        []ChartTransition
}

// Configuration is one configuration of a statechart: its active atomic states (paths, in
// document order) and the events the program fires that it accepts (indexes into Events).
type Configuration struct {
	Atomic  []string
	Accepts []int
}

// Chart is the statechart of the chart benchmark: a video-call client. Powered on, it
// joins a call (a lobby, then a done transition into the call) and in the call runs three
// regions at once, audio (muted, or live: talking or listening), video (camera off, camera
// on: plain or blurred, sharing the screen) and the network link (good, poor, lost). Power
// off remembers where the client was (a deep history state) and power on returns there;
// leaving the call passes through ended, which an eventless transition leaves for idle.
// Power, fail, leave, mute, cam_off and share are declared on compound states and hold in
// every state within them. States nest five levels deep (on.call.audio.live.talking); the
// chart has 43 configurations. No guards and no actions: every transition is a table entry.
func Chart() Statechart {
	return chart(false)
}

// ChartActions is Chart with an entry and an exit action on the call (start_media,
// stop_media), which the engine calls through the generated hooks.
func ChartActions() Statechart {
	return chart(true)
}

func chart(actions bool) Statechart {
	leaf := func(name string) *ChartNode { return &ChartNode{Name: name} }
	initial := func(n *ChartNode) *ChartNode { n.Initial = true; return n }
	compound := func(name string, states ...*ChartNode) *ChartNode {
		return &ChartNode{Name: name, States: states}
	}
	call := &ChartNode{Name: "call", Parallel: true, States: []*ChartNode{
		compound("audio",
			initial(compound("live", initial(leaf("talking")), leaf("listening"))),
			leaf("muted")),
		compound("video",
			initial(leaf("camera_off")),
			compound("camera_on", initial(leaf("plain")), leaf("blurred")),
			leaf("sharing")),
		compound("link", initial(leaf("good")), leaf("poor"), leaf("lost")),
	}}
	c := Statechart{
		Name: "Chart", Package: "chart",
		Doc: "A video-call client as a statechart for benchmarks, with nested, parallel and history states and done and eventless transitions.",
		Events: []string{
			"power", "join", "ready", "admit", "leave",
			"mute", "unmute", "talk", "listen",
			"cam_on", "cam_off", "blur", "share", "unshare",
			"degrade", "improve", "drop", "restore", "fail",
		},
		States: []*ChartNode{
			initial(leaf("off")),
			compound("on",
				&ChartNode{Name: "hist", History: "deep"},
				initial(leaf("idle")),
				compound("joining",
					initial(leaf("devices")), leaf("lobby"), &ChartNode{Name: "admitted", Terminal: true}),
				call,
				leaf("ended")),
			{Name: "done", Terminal: true},
		},
		Transitions: []ChartTransition{
			{From: "off", On: "power", To: "on.hist"},
			{From: "on", On: "power", To: "off"},
			{From: "on", On: "fail", To: "done"},
			{From: "on.idle", On: "join", To: "on.joining"},
			{From: "on.joining.devices", On: "ready", To: "on.joining.lobby"},
			{From: "on.joining.lobby", On: "admit", To: "on.joining.admitted"},
			{From: "on.joining", Done: true, To: "on.call"},
			{From: "on.call", On: "leave", To: "on.ended"},
			{From: "on.ended", Always: true, To: "on.idle"},
			{From: "on.call.audio.live", On: "mute", To: "on.call.audio.muted"},
			{From: "on.call.audio.muted", On: "unmute", To: "on.call.audio.live"},
			{From: "on.call.audio.live.talking", On: "listen", To: "on.call.audio.live.listening"},
			{From: "on.call.audio.live.listening", On: "talk", To: "on.call.audio.live.talking"},
			{From: "on.call.video.camera_off", On: "cam_on", To: "on.call.video.camera_on"},
			{From: "on.call.video.camera_on", On: "cam_off", To: "on.call.video.camera_off"},
			{From: "on.call.video.camera_on.plain", On: "blur", To: "on.call.video.camera_on.blurred"},
			{From: "on.call.video.camera_on", On: "share", To: "on.call.video.sharing"},
			{From: "on.call.video.sharing", On: "unshare", To: "on.call.video.camera_on"},
			{From: "on.call.link.good", On: "degrade", To: "on.call.link.poor"},
			{From: "on.call.link.poor", On: "improve", To: "on.call.link.good"},
			{From: "on.call.link.poor", On: "drop", To: "on.call.link.lost"},
			{From: "on.call.link.lost", On: "restore", To: "on.call.link.good"},
		},
	}
	if actions {
		c.Name, c.Package = "ChartActions", "chartact"
		c.Doc = "The chart benchmark's statechart with an entry and an exit action on the call."
		c.Actions = []string{"start_media", "stop_media"}
		call.Entry, call.Exit = []string{"start_media"}, []string{"stop_media"}
	}
	return c
}

// ChartFlat is the flat twin of Chart: a machine of as many states as Chart has
// configurations and as many events as it has, where state i has as many transitions as
// configuration i accepts events (Shaped). The initial configuration is state 0, the
// terminal one the last.
func ChartFlat() Machine {
	c := Chart()
	var counts []int
	for _, cf := range c.Configurations() {
		counts = append(counts, len(cf.Accepts))
	}
	return Shaped("ChartFlat", "chartflat", counts, len(c.Events))
}

// shapedOffsets are the event offsets and target offsets of Shaped's transitions, in the
// order a state takes them: forward, back, then jumps. Unlike Synthetic's they do not
// collide on ChartFlat's ring of 42 states, so each state gets the transitions it asks for.
var shapedOffsets = []struct{ event, target int }{
	{0, 1},
	{1, -1},
	{5, 2},
	{11, 5},
	{15, 9},
	{3, 14},
	{8, 20},
	{13, 27},
	{17, 35},
}

// Shaped returns a flat machine of len(perState) states and e events where state i has
// perState[i] transitions, built as Synthetic builds its machines: the non-terminal states
// form a ring through their first ("forward") transition, a state with two or more
// transitions has the last event ("fail") to the terminal state, and the others are a
// "back" transition and jumps. The last state must be the only one with no transition; a
// state has at most len(shapedOffsets)+1. It panics when the offsets would drop a
// transition, so that the shape is exact.
func Shaped(name, pkg string, perState []int, e int) Machine {
	n := len(perState)
	if n < 3 || e < 2 || perState[n-1] != 0 {
		panic("specgen: Shaped needs at least 3 states, 2 events and a last state without transitions")
	}
	m := Machine{Name: name, Package: pkg}
	width := len(fmt.Sprint(n - 1))
	for i := range n {
		m.States = append(m.States, fmt.Sprintf("s%0*d", width, i))
	}
	ewidth := len(fmt.Sprint(e - 1))
	for j := range e {
		m.Events = append(m.Events, fmt.Sprintf("e%0*d", ewidth, j))
	}
	ring, k := n-1, e-1
	for i, c := range perState[:ring] {
		if c < 1 || c > len(shapedOffsets)+1 {
			panic(fmt.Sprintf("specgen: state %d of Shaped asks for %d transitions", i, c))
		}
		plain := c
		if c >= 2 {
			plain = c - 1 // and fail
		}
		used, targets := map[int]bool{}, map[int]bool{}
		for _, o := range shapedOffsets[:plain] {
			ev := (i + o.event) % k
			to := ((i+o.target)%ring + ring) % ring
			if used[ev] || targets[to] || to == i {
				panic(fmt.Sprintf("specgen: Shaped cannot give state %d of %d its %d transitions on %d events", i, n, c, e))
			}
			used[ev], targets[to] = true, true
			m.Transitions = append(m.Transitions, Transition{From: i, Event: ev, To: to})
		}
		if c >= 2 {
			m.Transitions = append(m.Transitions, Transition{From: i, Event: e - 1, To: n - 1})
		}
	}
	return m
}

// Configurations lists the configurations of c in document order (the product of the
// regions of a parallel state, the first region varying slowest) with the events each
// accepts: those on which a transition leaves one of its active states. Every
// configuration of Chart is reachable, so these are the generated code's States.
func (c Statechart) Configurations() []Configuration {
	var configs func(prefix string, n *ChartNode) [][]string
	configs = func(prefix string, n *ChartNode) [][]string {
		path := prefix + n.Name
		switch {
		case len(n.States) == 0:
			return [][]string{{path}}
		case n.Parallel:
			out := [][]string{nil}
			for _, r := range n.States {
				var next [][]string
				for _, head := range out {
					for _, tail := range configs(path+".", r) {
						next = append(next, append(slices.Clone(head), tail...))
					}
				}
				out = next
			}
			return out
		}
		var out [][]string
		for _, s := range n.States {
			if s.History == "" {
				out = append(out, configs(path+".", s)...)
			}
		}
		return out
	}
	var out []Configuration
	for _, top := range c.States {
		for _, atomic := range configs("", top) {
			active := map[string]bool{}
			for _, a := range atomic {
				for p := a; ; {
					active[p] = true
					i := strings.LastIndexByte(p, '.')
					if i < 0 {
						break
					}
					p = p[:i]
				}
			}
			cf := Configuration{Atomic: atomic}
			for e, name := range c.Events {
				if slices.ContainsFunc(c.Transitions, func(t ChartTransition) bool { return t.On == name && active[t.From] }) {
					cf.Accepts = append(cf.Accepts, e)
				}
			}
			out = append(out, cf)
		}
	}
	return out
}

// Name returns the configuration's name as fsmgen writes it: its atomic states joined by
// commas.
func (cf Configuration) Name() string { return strings.Join(cf.Atomic, ",") }

// YAML writes the statechart as an fsmgen spec (version 1).
func (c Statechart) YAML() []byte {
	var b strings.Builder
	b.WriteString("# Code generated by bench/specgen. DO NOT EDIT.\n")
	fmt.Fprintf(&b, "version: 1\nmachine: %s\npackage: %s\n", c.Name, c.Package)
	fmt.Fprintf(&b, "doc: %s\n", c.Doc)
	b.WriteString("events:\n")
	for _, e := range c.Events {
		fmt.Fprintf(&b, "  %s: {}\n", e)
	}
	if len(c.Actions) > 0 {
		b.WriteString("actions:\n")
		for _, a := range c.Actions {
			fmt.Fprintf(&b, "  %s: {}\n", a)
		}
	}
	b.WriteString("states:\n")
	var node func(n *ChartNode, indent string)
	node = func(n *ChartNode, indent string) {
		var attrs []string
		if n.Initial {
			attrs = append(attrs, "initial: true")
		}
		if n.Terminal {
			attrs = append(attrs, "terminal: true")
		}
		if n.History != "" {
			attrs = append(attrs, "history: "+n.History)
		}
		if n.Parallel {
			attrs = append(attrs, "parallel: true")
		}
		if len(n.Entry) > 0 {
			attrs = append(attrs, "entry: ["+strings.Join(n.Entry, ", ")+"]")
		}
		if len(n.Exit) > 0 {
			attrs = append(attrs, "exit: ["+strings.Join(n.Exit, ", ")+"]")
		}
		switch {
		case len(n.States) == 0 && len(attrs) == 0:
			fmt.Fprintf(&b, "%s%s: {}\n", indent, n.Name)
			return
		case len(n.States) == 0:
			fmt.Fprintf(&b, "%s%s: { %s }\n", indent, n.Name, strings.Join(attrs, ", "))
			return
		}
		fmt.Fprintf(&b, "%s%s:\n", indent, n.Name)
		for _, a := range attrs {
			fmt.Fprintf(&b, "%s  %s\n", indent, a)
		}
		fmt.Fprintf(&b, "%s  states:\n", indent)
		for _, s := range n.States {
			node(s, indent+"    ")
		}
	}
	for _, s := range c.States {
		node(s, "  ")
	}
	b.WriteString("transitions:\n")
	for _, t := range c.Transitions {
		trigger := "on: " + t.On
		switch {
		case t.Always:
			trigger = "always: true"
		case t.Done:
			trigger = "done: true"
		}
		fmt.Fprintf(&b, "  - { from: %s, %s, to: %s }\n", t.From, trigger, t.To)
	}
	return []byte(b.String())
}
