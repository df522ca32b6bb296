package interp_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/fsmgen/fsmgen/internal/interp"
	"github.com/fsmgen/fsmgen/internal/ir"
	"github.com/fsmgen/fsmgen/internal/lower"
)

// TestTimersRegions: two regions wait each their own delays, each counted from when its
// state was entered; a transition of one region restarts none of the other's, and a delay
// fires once a stay (fsmrt's TestExpireNextRegions on the same chart).
func TestTimersRegions(t *testing.T) {
	spec := `version: 1
machine: Regions
package: regions
events: { mute: {}, back: {} }
states:
  call:
    initial: true
    parallel: true
    states:
      audio: { states: { live: { initial: true }, muted: {} } }
      video: { states: { "off": { initial: true }, "on": {} } }
  over: { terminal: true }
transitions:
  - { from: live, on: mute, to: muted }
  - { from: muted, on: back, to: live }
  - { from: live, after: 1m, to: over }
  - { from: "off", after: 30s, internal: true }
  - { from: "off", after: 90s, to: "on" }
`
	m, ds := lower.Load("regions.fsm.yaml", []byte(spec))
	if ds.HasErrors() {
		t.Fatalf("refused:\n%v", ds)
	}
	event := func(name string) *ir.Event {
		i := slices.IndexFunc(m.Events, func(e *ir.Event) bool { return e.Name == name })
		return m.Events[i]
	}
	x := interp.New(m)
	k := interp.NewTimers()
	if _, rej := x.Start(interp.Inputs{}); rej != nil {
		t.Fatal(rej)
	}
	var got []string
	wait := func(d time.Duration) {
		start := k.Now()
		for _, st := range k.Wait(x, d, interp.Inputs{}) {
			got = append(got, fmt.Sprintf("%s: %s -> %s", st.Event.Name, st.From.Name, st.To.Name))
		}
		if k.Now() != start+d {
			t.Fatalf("waited until %v, want %v", k.Now(), start+d)
		}
		got = append(got, fmt.Sprintf("until %v", k.Now()))
	}
	fire := func(name string) {
		st, rej := x.Fire(event(name), interp.Inputs{})
		if rej != nil {
			t.Fatalf("%s: %v", name, rej)
		}
		k.Moved(st)
		got = append(got, fmt.Sprintf("%s at %v: %s", name, k.Now(), st.To.Name))
	}
	wait(40 * time.Second) // off's 30s: internal
	wait(5 * time.Second)
	fire("mute") // at 45s: off keeps its clock
	wait(5 * time.Second)
	fire("back")           // at 50s: live's minute starts again
	wait(50 * time.Second) // to 100s: off's 90s from the start
	wait(9 * time.Second)  // to 109s: nothing (live's minute is at 110s)
	wait(6 * time.Second)
	want := []string{
		"off.after.30s: live,off -> live,off", "until 40s",
		"until 45s",
		"mute at 45s: muted,off",
		"until 50s",
		"back at 50s: live,off",
		"off.after.90s: live,off -> live,on", "until 1m40s",
		"until 1m49s",
		"live.after: live,on -> over", "until 1m55s",
	}
	if !slices.Equal(got, want) {
		t.Errorf("got\n%v\nwant\n%v", got, want)
	}
}
