package importer

import (
	"strings"
	"testing"
	"time"

	"github.com/fsmgen/fsmgen/internal/lower"
)

// TestNamedDelays: a named delay of XState's after, given its value, is the configurable
// timeout of the state that waits it, whose expiry event its transitions take, beside the
// state's delays in milliseconds; without its value, or a second named delay on one
// state, it is refused at its key.
func TestNamedDelays(t *testing.T) {
	config := `{"id": "light", "initial": "green", "states": {
  "green": {"after": {"shortDelay": [{"target": "yellow", "guard": "busy"}, {"target": "red"}], "1000": {"actions": "tick"}}},
  "yellow": {"after": {"shortDelay": "red"}},
  "red": {"on": {"GO": "green"}}
}}`
	out, ds := Import(XState, "light.json", []byte(config), Options{Delays: map[string]time.Duration{"shortDelay": 1500 * time.Millisecond}})
	if len(ds) > 0 || out == nil {
		t.Fatalf("findings:\n%s", ds)
	}
	spec := string(out)
	for _, want := range []string{
		`green: { initial: true, timeout: { after: 1500ms, configurable: true, on_expiry: "after.shortDelay" } }`,
		`yellow: { timeout: { after: 1500ms, configurable: true, on_expiry: "after.shortDelay" } }`,
		`- { from: green, on: after.shortDelay, to: yellow, if: busy }`,
		`- { from: green, after: 1s, internal: true, do: [tick] }`,
	} {
		if !strings.Contains(spec, want) {
			t.Errorf("no %q in\n%s", want, spec)
		}
	}
	m, ds := lower.Load("light.fsm.yaml", out)
	if ds.HasErrors() {
		t.Fatal(ds)
	}
	for _, s := range m.States[:2] {
		if s.Timeout == nil || !s.Timeout.Configurable || s.Timeout.After != 1500*time.Millisecond || s.Timeout.OnExpiry.Name != "after.shortDelay" {
			t.Errorf("%s: timeout %+v", s.Name, s.Timeout)
		}
	}
	if len(m.States[0].Delays) != 1 || m.States[0].Delays[0].After != time.Second {
		t.Errorf("green's delays: %+v", m.States[0].Delays)
	}

	for _, c := range []struct{ config, want string }{
		{`{"initial": "a", "states": {"a": {"after": {"shortDelay": "b"}}, "b": {}}}`,
			"m.json:1:45: error: delay \"shortDelay\" is a named delay, whose value the machine's options define: give it to the import (--delay shortDelay=DURATION), which makes it the configurable timeout of \"a\"\n"},
		{`{"initial": "a", "states": {"a": {"after": {"x": "b", "y": "b"}}, "b": {}}}`,
			"m.json:1:55: error: state \"a\" waits the named delays \"x\" (1:45) and \"y\": a state has one timeout, which a named delay becomes\n"},
		// Named delays in two regions are two configurable timeouts, which a configuration
		// does not keep together (numbered delays may wait in both).
		{`{"type": "parallel", "states": {"a": {"initial": "a1", "states": {"a1": {"after": {"x": "a2"}}, "a2": {}}}, "b": {"initial": "b1", "states": {"b1": {"after": {"y": "b2"}}, "b2": {}}}}}`,
			"m.json:1:143: error: states \"machine.a.a1\" and \"machine.b.b1\" both time out and are active together, in \"a1,b1\": a configuration keeps one timeout; time out one of them, or a state around both (delayed transitions, after, may wait in both)\n"},
		{`{"initial": "a", "states": {"a": {"after": {"x-1": "b"}}, "b": {}}}`,
			"m.json:1:45: error: delay \"x-1\" is neither a number of milliseconds nor the name of a delay (letters, digits and _)\n"},
	} {
		_, ds := Import(XState, "m.json", []byte(c.config), Options{Delays: map[string]time.Duration{"x": time.Second, "y": time.Second, "x-1": time.Second}})
		if got := text(ds); got != c.want {
			t.Errorf("%s:\n%s want\n%s", c.config, got, c.want)
		}
	}
}
