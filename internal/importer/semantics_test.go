package importer

import (
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/fsmgen/fsmgen/internal/interp"
	"github.com/fsmgen/fsmgen/internal/ir"
	"github.com/fsmgen/fsmgen/internal/lower"
)

// run imports a fixture, runs it in the interpreter from its start through events with the
// given hook guards holding, and returns what each step shows: the configuration, "done"
// when the machine is, and the actions run; a refusal as its reason.
func run(t *testing.T, fixture string, guards []string, events ...string) []string {
	t.Helper()
	data, err := os.ReadFile(fixture)
	if err != nil {
		t.Fatal(err)
	}
	from, _ := FormatOf(fixture)
	spec, ds := Import(from, fixture, data, Options{})
	if spec == nil {
		t.Fatalf("refused:\n%s", text(ds))
	}
	m, ds := lower.Load(fixture+".fsm.yaml", spec)
	if ds.HasErrors() {
		t.Fatalf("the spec is refused:\n%s", text(ds))
	}
	return runMachine(t, m, func(g *ir.Guard) bool { return slices.Contains(guards, g.Name) }, events)
}

func runMachine(t *testing.T, m *ir.Machine, guard func(*ir.Guard) bool, events []string) []string {
	t.Helper()
	in := interp.Inputs{Guard: guard}
	x := interp.New(m)
	show := func(s *ir.State, as []*ir.Action) string {
		out := ir.ConfigName(s.Config) // the paths, not the short names
		if s.Terminal {
			out += " done"
		}
		for i, a := range as {
			if i == 0 {
				out += " /"
			}
			out += " " + a.Name
		}
		return out
	}
	st, rej := x.Start(in)
	if rej != nil {
		return []string{"start: " + string(rej.Reason)}
	}
	out := []string{show(st.To, st.Actions)}
	for _, name := range events {
		var e *ir.Event
		for _, ev := range m.Events {
			if ev.Name == name && !ev.Internal {
				e = ev
			}
		}
		if e == nil { // an event no transition names: no state takes it
			out = append(out, name+": invalid_transition in "+ir.ConfigName(x.State.Config))
			continue
		}
		st, rej := x.Fire(e, in)
		if rej != nil {
			out = append(out, name+": "+string(rej.Reason)+" in "+ir.ConfigName(x.State.Config))
			continue
		}
		out = append(out, show(st.To, st.Actions))
	}
	return out
}

func want(t *testing.T, got []string, want ...string) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Errorf("got\n  %s\nwant\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
}

// TestXStateSemantics runs imported XState machines and expects what XState v5 does: a
// transition to its own source or to a state within it does not re-enter the source
// unless reenter: true; a guarded transition falls through to the next; a compound state
// whose final state is entered takes onDone; deep history restores the atomic states of
// regions; the machine's own transitions apply in every state and leave nothing of the
// machine; a final state of the machine ends it.
func TestXStateSemantics(t *testing.T) {
	const light = "testdata/xstate/light.json"
	want(t, run(t, light, nil, "TIMER", "TIMER", "PED_COUNTDOWN", "RESTART", "RESTART_HARD", "BUTTON", "TIMER", "PED_COUNTDOWN"),
		"green / startTimer",
		"yellow",
		"red.walk / logChange startTimer",
		"red.wait",
		"red.walk / logChange",               // red -> red: only red.wait is left, red is not
		"red.walk / stopCrossing startTimer", // reenter: true
		"red.walk / logChange",               // no target: nothing exited or entered
		"red.wait",                           // crossingClear fails: the next, to .wait
		"PED_COUNTDOWN: guard in red.wait")
	want(t, run(t, light, []string{"crossingClear"}, "TIMER", "TIMER", "PED_COUNTDOWN", "PED_COUNTDOWN"),
		"green / startTimer",
		"yellow",
		"red.walk / logChange startTimer",
		"red.wait",
		"green / stopCrossing startTimer") // red.stop is final: red is done, onDone to green

	const editor = "testdata/xstate/editor.json"
	// Not dirty: the eventless transition leaves typing at once.
	want(t, run(t, editor, nil), "editor.editing.saved / connect")
	want(t, run(t, editor, []string{"dirty"}, "FORMAT", "BOLD", "PAUSE", "PING", "RESUME", "RESET", "PING", "CLOSE", "RESET"),
		"editor.editing.text.typing / connect",
		"editor.editing.text.format.bold.off,editor.editing.text.format.italic.off",
		"editor.editing.text.format.bold.on,editor.editing.text.format.italic.off",
		"editor.paused",
		"editor.paused / pong",
		"editor.editing.text.format.bold.on,editor.editing.text.format.italic.off", // deep history
		"editor.editing.text.typing / clear",                                       // the machine's RESET: connect does not run again
		"PING: invalid_transition in editor.editing.text.typing",
		"closed done",
		"RESET: invalid_transition in closed") // the machine is done: its own RESET is not taken
}

// TestSCXMLSemantics runs imported SCXML documents and expects what SCXML does where it
// differs from XState: an external transition to its source, or to a state within it,
// exits and re-enters the source; an internal one to a state within does not.
func TestSCXMLSemantics(t *testing.T) {
	const light = "testdata/scxml/light.scxml"
	want(t, run(t, light, []string{"carsWaiting"}, "TIMER", "TIMER", "PED_COUNTDOWN", "RESTART", "BUTTON", "TIMER", "PED_COUNTDOWN"),
		"green / startTimer",
		"yellow",
		"red.walk / logChange startTimer",
		"red.wait",
		"red.walk / stopCrossing logChange startTimer", // internal to itself: still re-entered
		"red.walk / logChange",
		"red.wait / stopCrossing startTimer", // external into red: red is re-entered
		"PED_COUNTDOWN: guard in red.wait")   // cond="!carsWaiting"
	want(t, run(t, light, nil, "TIMER", "TIMER", "PED_COUNTDOWN", "PED_COUNTDOWN"),
		"green / startTimer",
		"yellow",
		"red.walk / logChange startTimer",
		"red.wait",
		"green / stopCrossing startTimer") // done.state.red

	const player = "testdata/scxml/player.scxml"
	want(t, run(t, player, nil, "power", "eject", "reload", "stop_all", "configure", "louder", "shuffle", "pause", "back", "tick", "power", "power"),
		"off",
		"on.playing / wake",
		"on.loading",              // type="internal": on is not left
		"on.loading / sleep wake", // external: on is left and entered again
		"on.playing / sleep wake",
		"on.settings.volume.quiet,on.settings.shuffle.linear / sleep wake",
		"on.settings.volume.loud,on.settings.shuffle.linear",
		"on.settings.volume.loud,on.settings.shuffle.random",
		"pause: invalid_transition in on.settings.volume.loud,on.settings.shuffle.random",
		"on.playing",           // deep history: what configure left; on itself stays
		"on.playing / advance", // cond="not atEnd", no target
		"off / sleep",
		"on.playing / wake")
	// Loaded: the eventless transition leaves loading at once; at the end, on is done.
	want(t, run(t, player, []string{"loaded", "atEnd"}, "power", "eject", "tick"),
		"off",
		"on.playing / wake",
		"on.playing",
		"ended done / sleep goodbye")
}

// TestGuardLogicSemantics: the media player's guards, written with XState's and, or, not
// and stateIn and with SCXML's !, &&, ||, parentheses and In, decide alike.
func TestGuardLogicSemantics(t *testing.T) {
	for fixture, root := range map[string]string{"testdata/xstate/media.json": "media", "testdata/scxml/media.scxml": "player"} {
		at := func(video, audio string) string {
			return root + ".video." + video + "," + root + ".audio." + audio
		}
		want(t, run(t, fixture, []string{"loaded"}, "mute", "play", "mute", "stop", "mute"),
			at("stopped", "loud"),
			"mute: invalid_transition in "+at("stopped", "loud"), // not in playing: no transition
			at("playing", "loud"),  // loaded and not blocked
			at("playing", "muted"), // in playing
			at("stopped", "muted"), // unless loaded: audio stays muted
			at("stopped", "loud"))  // not (blocked and in stopped)
		want(t, run(t, fixture, []string{"loaded", "blocked"}, "play"),
			at("stopped", "loud"),
			"play: guard in "+at("stopped", "loud"))
	}
}
