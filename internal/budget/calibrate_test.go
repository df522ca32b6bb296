//go:build calibrate

package budget

// Tools for refitting the constants of estimate.go when an emitter changes, built only
// with the calibrate tag (they print measurements; they assert nothing):
//
//	go test -tags calibrate ./internal/budget -run TestEmitterCost -measure 300 -v
//	go test -tags calibrate ./internal/budget -run TestConstructCost -v

import (
	"flag"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fsmgen/fsmgen/internal/ir"
	"github.com/fsmgen/fsmgen/internal/lower"
)

var (
	measure = flag.Int("measure", 300, "time each emitter on a wide spec of this many states and events")
	only    = flag.String("only", "", "with -measure: only these steps (comma-separated: lower,go,tests,mermaid,markdown,dot)")
)

// TestEmitterCost lowers the wide spec of the report (every event from every state) and
// runs each emitter on it, with its time, the bytes it allocated and the largest heap seen.
func TestEmitterCost(t *testing.T) {
	n := *measure
	src := wideSpec(n, n)
	t.Logf("spec: %d states, %d events, %d bytes", n, n, len(src))
	step := func(name string, f func() int64) {
		if *only != "" && !strings.Contains(","+*only+",", ","+name+",") {
			return
		}
		var ms runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&ms)
		before := ms.TotalAlloc
		stop, peak := make(chan bool), make(chan uint64)
		go func() {
			var top uint64
			var s runtime.MemStats
			for {
				runtime.ReadMemStats(&s)
				top = max(top, s.HeapInuse)
				select {
				case <-stop:
					peak <- top
					return
				case <-time.After(20 * time.Millisecond):
				}
			}
		}()
		start := time.Now()
		size := f()
		took := time.Since(start)
		close(stop)
		top := <-peak
		runtime.ReadMemStats(&ms)
		t.Logf("%-8s %7.2fs %12d bytes out %7d MB allocated %7d MB peak heap", name, took.Seconds(), size, (ms.TotalAlloc-before)>>20, top>>20)
	}
	var m *ir.Machine
	step("lower", func() int64 {
		m, _ = lower.Load("wide.fsm.yaml", src)
		return 0
	})
	if m == nil {
		m, _ = lower.Load("wide.fsm.yaml", src)
	}
	step("estimate", func() int64 { return Of(m, kinds).Total() })
	for _, k := range kinds {
		step(k, func() int64 { return emitted(t, k, m) })
	}
}

// TestConstructCost prints, for a small machine and for each construct added to it alone,
// what each output takes, next to the estimate: the source of the constants of
// estimate.go.
func TestConstructCost(t *testing.T) {
	const small = `version: 1
machine: M
package: m
%TOP%
states:
  a: { initial: true %A% }
  b: { %B% }
  c: { %C% }
events:
  go: { %EV% }
  stop: {}
transitions:
  - { from: a, on: go, to: b %T1% }
  - { from: b, on: stop, to: c %T2% }
%T3%`
	variants := []struct {
		name string
		repl []string
	}{
		{"small", nil},
		{"idempotent", []string{"%TOP%", "idempotent: true"}},
		{"history", []string{"%TOP%", "record_history: true"}},
		{"counter", []string{"%TOP%", "counters: { n: {} }", "%T1%", ", increment: n"}},
		{"per_state", []string{"%TOP%", "counters: { n: { per_state: true } }", "%T1%", ", increment: n"}},
		{"limit", []string{"%TOP%", "counters: { n: { limit: 2, then: c } }", "%T1%", ", increment: n"}},
		{"timeout", []string{"%B%", "timeout: 30m"}},
		{"on_expiry", []string{"%B%", "timeout: { after: 30m, on_expiry: stop }"}},
		{"remembers", []string{"%B%", "remembers: true", "%T3%", "  - { from: c, on: go, to: { history: b } }\n"}},
		{"hook guard", []string{"%TOP%", "guards: { g: {} }", "%T1%", ", if: g"}},
		{"field guard", []string{"%TOP%", "context: { x: { type: int } }\nguards: { g: { field: x, at_least: 2 } }", "%T1%", ", if: g"}},
		{"role", []string{"%TOP%", "roles: { r: {} }", "%T1%", ", by: [r]"}},
		{"action", []string{"%TOP%", "actions: { x: {} }", "%T1%", ", do: [x]"}},
		{"effect", []string{"%TOP%", "actions: { x: { effect: true } }", "%T1%", ", do: [x]"}},
		{"checkpoint", []string{"%TOP%", "checkpoints: { cp: { save: [state] } }", "%T1%", ", checkpoint: cp"}},
		{"every", []string{"%TOP%", "checkpoints: { cp: { every_transition: true, save: [state] } }"}},
		{"context", []string{"%TOP%", "context: { x: { type: string } }"}},
		{"enum", []string{"%TOP%", "context: { x: { type: enum, values: [p, q, r] } }"}},
		{"payload", []string{"%EV%", "payload: { x: { type: int } }"}},
		{"requires", []string{"%TOP%", "context: { x: { type: string } }", "%B%", "requires: [x]"}},
		{"group", []string{"%A%", ", groups: [gg]", "%B%", "groups: [gg]"}},
		{"entry", []string{"%TOP%", "actions: { x: {} }", "%B%", "entry: [x]"}},
	}
	var firstGot, firstEst []int64
	for _, v := range variants {
		s := small
		if v.name != "remembers" {
			s = strings.Replace(s, "%C%", "terminal: true", 1)
		}
		for i := 0; i+1 < len(v.repl); i += 2 {
			s = strings.Replace(s, v.repl[i], v.repl[i+1], 1)
		}
		for _, k := range []string{"%TOP%", "%A%", "%B%", "%C%", "%EV%", "%T1%", "%T2%", "%T3%"} {
			s = strings.ReplaceAll(s, k, "")
		}
		m, ds := lower.Load("m.fsm.yaml", []byte(s))
		if m == nil {
			t.Fatalf("%s: %v\n%s", v.name, ds, s)
		}
		est := Of(m, kinds)
		var line []string
		for i, k := range kinds {
			got, want := emitted(t, k, m), est.Parts[i].Bytes
			if v.name == "small" {
				firstGot, firstEst = append(firstGot, got), append(firstEst, want)
				line = append(line, k+" "+strconv.FormatInt(got, 10)+"/"+strconv.FormatInt(want, 10))
				continue
			}
			line = append(line, k+" +"+strconv.FormatInt(got-firstGot[i], 10)+"/"+strconv.FormatInt(want-firstEst[i], 10))
		}
		t.Logf("%-11s %s", v.name, strings.Join(line, "  "))
	}
}
