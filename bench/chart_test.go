package bench_test

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/fsmgen/fsmgen/bench/chart"
	"github.com/fsmgen/fsmgen/bench/chartact"
	"github.com/fsmgen/fsmgen/bench/chartflat"
	"github.com/fsmgen/fsmgen/bench/hand"
	"github.com/fsmgen/fsmgen/bench/specgen"
)

// The chart benchmark: bench/chart's statechart (specgen.Chart, 43 configurations, 19
// events) against its flat twin of the same size (bench/chartflat, specgen.ChartFlat). One
// op is one round of a fixed cycle of 12 events, each accepted, that ends where it began:
//
//   - nested: the statechart, from on.idle with the deep history holding where the last
//     round powered off (chartCycle). 8 of the 12 events are plain moves, one entry of the
//     table (a region's transition, or one declared on a parent state); 4 are macrosteps
//     the engine runs from the tables: admit (the lobby's final state, then the done
//     transition into the call's three regions), power off (recording the deep history),
//     power on (restoring it) and leave (ended, then its eventless transition to idle).
//   - nested-plain: the statechart within the call, 12 plain moves of its regions and of
//     transitions declared on their compound states (chartPlainCycle).
//   - nested-actions: nested with an entry and an exit action on the call (bench/chartact),
//     called through the generated hooks.
//   - flat: the flat twin, 12 plain transitions (six forward along its ring, six back).
//   - flat/table: the flat twin written by hand as an array lookup (hand.ChartFlat), the
//     floor.

// chartStep is an event of a cycle and the configuration after it.
type chartStep struct{ event, state string }

// chartCycle is the nested machine's cycle, from on.idle.
var chartCycle = []chartStep{
	{"join", "on.joining.devices"},
	{"ready", "on.joining.lobby"},
	{"admit", "on.call.audio.live.talking,on.call.video.camera_off,on.call.link.good"}, // done transition
	{"cam_on", "on.call.audio.live.talking,on.call.video.camera_on.plain,on.call.link.good"},
	{"degrade", "on.call.audio.live.talking,on.call.video.camera_on.plain,on.call.link.poor"},
	{"mute", "on.call.audio.muted,on.call.video.camera_on.plain,on.call.link.poor"}, // from audio.live
	{"share", "on.call.audio.muted,on.call.video.sharing,on.call.link.poor"},        // from video.camera_on
	{"power", "off"}, // from on: records the deep history
	{"power", "on.call.audio.muted,on.call.video.sharing,on.call.link.poor"}, // restores it
	{"improve", "on.call.audio.muted,on.call.video.sharing,on.call.link.good"},
	{"unmute", "on.call.audio.live.talking,on.call.video.sharing,on.call.link.good"},
	{"leave", "on.idle"}, // from call: ended, then the eventless transition
}

// chartPlainCycle is a cycle within the call, from its initial configuration (after join,
// ready, admit): no macrostep.
var chartPlainCycle = []chartStep{
	{"cam_on", "on.call.audio.live.talking,on.call.video.camera_on.plain,on.call.link.good"},
	{"degrade", "on.call.audio.live.talking,on.call.video.camera_on.plain,on.call.link.poor"},
	{"mute", "on.call.audio.muted,on.call.video.camera_on.plain,on.call.link.poor"},
	{"blur", "on.call.audio.muted,on.call.video.camera_on.blurred,on.call.link.poor"},
	{"share", "on.call.audio.muted,on.call.video.sharing,on.call.link.poor"},
	{"drop", "on.call.audio.muted,on.call.video.sharing,on.call.link.lost"},
	{"unshare", "on.call.audio.muted,on.call.video.camera_on.plain,on.call.link.lost"},
	{"restore", "on.call.audio.muted,on.call.video.camera_on.plain,on.call.link.good"},
	{"unmute", "on.call.audio.live.talking,on.call.video.camera_on.plain,on.call.link.good"},
	{"listen", "on.call.audio.live.listening,on.call.video.camera_on.plain,on.call.link.good"},
	{"cam_off", "on.call.audio.live.listening,on.call.video.camera_off,on.call.link.good"},
	{"talk", "on.call.audio.live.talking,on.call.video.camera_off,on.call.link.good"},
}

// chartHistory is what the deep history holds once a round has powered off.
const chartHistory = "on.call.audio.muted,on.call.video.sharing,on.call.link.poor"

var (
	chartEvents      = chartEventsOf(chartCycle, chart.ParseEvent)
	chartPlainEvents = chartEventsOf(chartPlainCycle, chart.ParseEvent)
	chartActEvents   = chartEventsOf(chartCycle, chartact.ParseEvent)
	chartFlatSpec    = specgen.ChartFlat()
	// The flat cycle starts in chartFlatStart, in the run of call configurations, all of
	// which have a back transition.
	chartFlatStart                 = 5
	chartFlatPath, chartFlatStates = flatCycle(chartFlatSpec, chartFlatStart, len(chartCycle))
	chartFlatEvents                = mapIdx(chartFlatPath, func(i int) chartflat.Event { return chartflat.Event(i) })
	chartFlatHand                  = mapIdx(chartFlatPath, func(i int) hand.BigEvent { return hand.BigEvent(i) })
)

func chartEventsOf[E any](cycle []chartStep, parse func(string) (E, error)) []E {
	out := make([]E, len(cycle))
	for i, c := range cycle {
		out[i] = must(parse(c.event))
	}
	return out
}

// flatCycle returns the events of a cycle of n (even) transitions of m from state start:
// n/2 forward along the ring, n/2 back; and the state after each.
func flatCycle(m specgen.Machine, start, n int) (events, states []int) {
	find := func(from, to int) int {
		for _, t := range m.Transitions {
			if t.From == from && t.To == to {
				return t.Event
			}
		}
		panic("bench: the flat twin has no transition for the cycle")
	}
	s := start
	for range n / 2 {
		events, s = append(events, find(s, s+1)), s+1
		states = append(states, s)
	}
	for range n / 2 {
		events, s = append(events, find(s, s-1)), s-1
		states = append(states, s)
	}
	return events, states
}

// newChart returns the nested machine at the start of its cycle: on.idle, after one round,
// so that the deep history holds what every later round restores.
func newChart(tb testing.TB) *chart.Chart {
	m := chart.NewChart()
	for _, e := range append([]chart.Event{chart.EventPower}, chartEvents...) {
		if _, err := m.Fire(ctx, e); err != nil {
			tb.Fatal(err)
		}
	}
	return m
}

// newChartInCall returns the nested machine at the start of chartPlainCycle, in the call.
func newChartInCall(tb testing.TB) *chart.Chart {
	m := newChart(tb)
	for _, e := range chartEvents[:3] {
		if _, err := m.Fire(ctx, e); err != nil {
			tb.Fatal(err)
		}
	}
	return m
}

// mediaHooks counts the call's entry and exit actions.
type mediaHooks struct{ starts, stops int }

func (h *mediaHooks) StartMedia(context.Context, *chartact.ChartActions, chartact.ChartActionsStep) {
	h.starts++
}

func (h *mediaHooks) StopMedia(context.Context, *chartact.ChartActions, chartact.ChartActionsStep) {
	h.stops++
}

func newChartActions(tb testing.TB, h *mediaHooks) *chartact.ChartActions {
	m := chartact.NewChartActions(h)
	for _, e := range append([]chartact.Event{chartact.EventPower}, chartActEvents...) {
		if _, err := m.Fire(ctx, e); err != nil {
			tb.Fatal(err)
		}
	}
	return m
}

func newChartFlat(tb testing.TB) *chartflat.ChartFlat {
	m, err := chartflat.RestoreChartFlat(chartflat.ChartFlatSnapshot{Version: 1, State: chartflat.State(chartFlatStart)})
	if err != nil {
		tb.Fatal(err)
	}
	return m
}

func newChartFlatHand() *hand.ChartFlat {
	m := &hand.ChartFlat{}
	m.SetState(hand.BigState(chartFlatStart))
	return m
}

func BenchmarkChart(b *testing.B) {
	for _, r := range []struct {
		machine, impl string
		run           func(b *testing.B)
	}{
		{"nested", "fsmgen", func(b *testing.B) {
			m := newChart(b)
			for b.Loop() {
				for _, e := range chartEvents {
					if _, err := m.Fire(ctx, e); err != nil {
						b.Fatal(err)
					}
				}
			}
		}},
		{"nested-plain", "fsmgen", func(b *testing.B) {
			m := newChartInCall(b)
			for b.Loop() {
				for _, e := range chartPlainEvents {
					if _, err := m.Fire(ctx, e); err != nil {
						b.Fatal(err)
					}
				}
			}
		}},
		{"nested-actions", "fsmgen", func(b *testing.B) {
			m := newChartActions(b, &mediaHooks{})
			for b.Loop() {
				for _, e := range chartActEvents {
					if _, err := m.Fire(ctx, e); err != nil {
						b.Fatal(err)
					}
				}
			}
		}},
		{"flat", "fsmgen", func(b *testing.B) {
			m := newChartFlat(b)
			for b.Loop() {
				for _, e := range chartFlatEvents {
					if _, err := m.Fire(ctx, e); err != nil {
						b.Fatal(err)
					}
				}
			}
		}},
		{"flat", "table", func(b *testing.B) {
			m := newChartFlatHand()
			for b.Loop() {
				for _, e := range chartFlatHand {
					if _, err := m.Fire(e); err != nil {
						b.Fatal(err)
					}
				}
			}
		}},
	} {
		b.Run("machine="+r.machine+"/impl="+r.impl, func(b *testing.B) {
			b.ReportAllocs()
			r.run(b)
		})
	}
}

// TestChartCycles: every event of each cycle is accepted and lands where the cycle says,
// the nested machine's macrosteps record and restore the deep history and run the call's
// actions, and each cycle ends where it began.
func TestChartCycles(t *testing.T) {
	m := newChart(t)
	h := &mediaHooks{}
	a := newChartActions(t, h)
	h.starts, h.stops = 0, 0
	for i, c := range chartCycle {
		for _, got := range []string{chartPaths(must(m.Fire(ctx, chartEvents[i]))), chartPaths(must(chart.ParseState(must(a.Fire(ctx, chartActEvents[i])).String())))} {
			if got != c.state {
				t.Fatalf("nested step %d (%s): %s, want %s", i, c.event, got, c.state)
			}
		}
		if i == 7 {
			for _, hist := range []map[string]string{m.Snapshot().History, a.Snapshot().History} {
				if hist["on.hist"] != chartHistory {
					t.Fatalf("nested step %d (%s): history %v, want on.hist %s", i, c.event, hist, chartHistory)
				}
			}
		}
	}
	// The call is entered on admit and on power on, left on power off and on leave.
	if h.starts != 2 || h.stops != 2 {
		t.Errorf("a round ran start_media %d times and stop_media %d times, want 2 and 2", h.starts, h.stops)
	}

	p := newChartInCall(t)
	if got, want := chartPaths(p.State()), chartPlainCycle[len(chartPlainCycle)-1].state; got != want {
		t.Fatalf("nested-plain starts in %s, want %s", got, want)
	}
	for i, c := range chartPlainCycle {
		if got := chartPaths(must(p.Fire(ctx, chartPlainEvents[i]))); got != c.state {
			t.Fatalf("nested-plain step %d (%s): %s, want %s", i, c.event, got, c.state)
		}
	}

	f, ft := newChartFlat(t), newChartFlatHand()
	if len(chartFlatEvents) != len(chartCycle) || len(chartPlainCycle) != len(chartCycle) {
		t.Fatalf("cycles of %d (flat), %d (nested-plain) and %d (nested) events", len(chartFlatEvents), len(chartPlainCycle), len(chartCycle))
	}
	for i, e := range chartFlatEvents {
		to, toHand := must(f.Fire(ctx, e)), must(ft.Fire(chartFlatHand[i]))
		if int(to) != chartFlatStates[i] || int(toHand) != chartFlatStates[i] {
			t.Fatalf("flat step %d (%s): fsmgen %s, table s%02d, want s%02d", i, e, to, toHand, chartFlatStates[i])
		}
	}
	if int(f.State()) != chartFlatStart {
		t.Errorf("the flat cycle ends in %s, want s%02d", f.State(), chartFlatStart)
	}
}

// TestChartAllocs: Fire allocates nothing on the nested machine, macrosteps included
// (done and eventless transitions, recording and restoring the deep history), with and
// without actions, nor on the flat twin and the table. (A new machine's first macrostep
// grows its queue of raised events and its list of microsteps: newChart has taken one.)
func TestChartAllocs(t *testing.T) {
	m, p, a := newChart(t), newChartInCall(t), newChartActions(t, &mediaHooks{})
	f, ft := newChartFlat(t), newChartFlatHand()
	for _, c := range []struct {
		name  string
		round func()
	}{
		{"nested", func() {
			for _, e := range chartEvents {
				if _, err := m.Fire(ctx, e); err != nil {
					panic(err)
				}
			}
		}},
		{"nested-plain", func() {
			for _, e := range chartPlainEvents {
				if _, err := p.Fire(ctx, e); err != nil {
					panic(err)
				}
			}
		}},
		{"nested-actions", func() {
			for _, e := range chartActEvents {
				if _, err := a.Fire(ctx, e); err != nil {
					panic(err)
				}
			}
		}},
		{"flat", func() {
			for _, e := range chartFlatEvents {
				if _, err := f.Fire(ctx, e); err != nil {
					panic(err)
				}
			}
		}},
		{"table", func() {
			for _, e := range chartFlatHand {
				if _, err := ft.Fire(e); err != nil {
					panic(err)
				}
			}
		}},
	} {
		if n := testing.AllocsPerRun(100, c.round); n != 0 {
			t.Errorf("%s: %v allocations per round of %d events, want 0", c.name, n, len(chartCycle))
			if c.name == "nested" {
				chartAllocSteps(t, m)
			}
		}
	}
}

// chartAllocSteps names the events of the nested cycle that allocate, macrosteps in
// particular. It is a diagnosis for a failed count, not a count: the process's malloc
// counter also sees what other goroutines allocate at the same instant.
func chartAllocSteps(t *testing.T, m *chart.Chart) {
	t.Helper()
	ctx := context.Background()
	var before, after runtime.MemStats
	for i, e := range chartEvents {
		runtime.ReadMemStats(&before)
		_, err := m.Fire(ctx, e)
		runtime.ReadMemStats(&after)
		if err != nil {
			t.Fatal(err)
		}
		if n := after.Mallocs - before.Mallocs; n != 0 {
			t.Logf("nested step %d (%s): %d allocations", i, chartCycle[i].event, n)
		}
	}
}

// TestChartSameSize: the flat twin has as many states as the statechart has configurations,
// as many events as the program fires on it, and the same number of transitions from each
// state as the configurations accept events; specgen's configurations are the generated
// code's States, and accept the events specgen says.
func TestChartSameSize(t *testing.T) {
	c := specgen.Chart()
	configs := c.Configurations()
	for _, n := range []struct {
		what      string
		got, want int
	}{
		{"chart's states", chart.NumStates, len(configs)},
		{"chartact's states", chartact.NumStates, len(configs)},
		{"chartflat's states", chartflat.NumStates, len(configs)},
		{"chart's events", chart.NumEvents, len(c.Events)},
		{"chartflat's events", chartflat.NumEvents, len(c.Events)},
		{"chartflat's transitions", len(chartFlatSpec.Transitions), 0},
	} {
		if n.what == "chartflat's transitions" {
			for _, cf := range configs {
				n.want += len(cf.Accepts)
			}
		}
		if n.got != n.want {
			t.Fatalf("%s: %d, want %d", n.what, n.got, n.want)
		}
	}
	var nested, flat, want []int
	for _, cf := range configs {
		s, err := chartState(cf.Name())
		if err != nil {
			t.Fatalf("specgen's configuration %s is not a State: %v", cf.Name(), err)
		}
		m := must(chart.RestoreChart(chart.ChartSnapshot{Version: 1, State: s}))
		var got []int
		for _, e := range m.Permitted(ctx, nil) {
			got = append(got, int(e))
		}
		if !slices.Equal(got, cf.Accepts) {
			t.Errorf("%s accepts %v, specgen says %v", s, got, cf.Accepts)
		}
		nested = append(nested, len(got))
		want = append(want, len(cf.Accepts))
	}
	for s := range chartflat.State(chartflat.NumStates) {
		m := must(chartflat.RestoreChartFlat(chartflat.ChartFlatSnapshot{Version: 1, State: s}))
		flat = append(flat, len(m.Permitted(ctx, nil)))
	}
	if !slices.Equal(flat, want) || !slices.Equal(nested, want) {
		t.Errorf("transitions by state: chart %v, chartflat %v, want %v", nested, flat, want)
	}
}

// chartPaths names a configuration of the chart by the paths of its active atomic states,
// joined by "," (as specgen does; its State's name joins their shortest unambiguous names).
func chartPaths(s chart.State) string {
	var active []string
	for n := range chart.Node(chart.NumNodes) {
		if s.In(n) {
			active = append(active, n.String())
		}
	}
	var out []string
	for _, p := range active {
		if !slices.ContainsFunc(active, func(q string) bool { return strings.HasPrefix(q, p+".") }) {
			out = append(out, p)
		}
	}
	return strings.Join(out, ",")
}

// chartState is the configuration of the chart chartPaths names paths.
func chartState(paths string) (chart.State, error) {
	for _, s := range chart.States() {
		if chartPaths(s) == paths {
			return s, nil
		}
	}
	return 0, fmt.Errorf("no configuration %s", paths)
}
