package lsp

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"github.com/fsmgen/fsmgen/internal/testtool"
)

// syntheticSpec writes the synthetic machine of bench/specgen (Synthetic: n states, e
// events, perState transitions a state, the states a ring through the forward
// transitions, every non-terminal state failing to the last), which the generation
// scaling measurement uses; bench is a module of its own, so its generator is mirrored
// here (TestSyntheticSpecIsSpecgens checks the copy against bench/big/big.fsm.yaml).
func syntheticSpec(name, pkg string, n, e, perState int) string {
	offsets := []struct{ event, target int }{{0, 1}, {1, -1}, {5, 7}, {11, 20}, {15, 33}, {3, 12}, {8, 41}, {13, 26}, {17, 45}}
	var b strings.Builder
	states := make([]string, n)
	events := make([]string, e)
	for i := range states {
		states[i] = fmt.Sprintf("s%0*d", len(fmt.Sprint(n-1)), i)
	}
	for j := range events {
		events[j] = fmt.Sprintf("e%0*d", len(fmt.Sprint(e-1)), j)
	}
	type tr struct{ from, ev, to int }
	var trs []tr
	ring, k := n-1, e-1
	plain := max(1, min(perState-1, len(offsets), k))
	for i := range ring {
		used, targets := map[int]bool{}, map[int]bool{}
		for _, o := range offsets[:plain] {
			ev, to := (i+o.event)%k, ((i+o.target)%ring+ring)%ring
			if used[ev] || targets[to] || to == i {
				continue
			}
			used[ev], targets[to] = true, true
			trs = append(trs, tr{i, ev, to})
		}
		trs = append(trs, tr{i, e - 1, n - 1})
	}
	fmt.Fprintf(&b, "version: 1\nmachine: %s\npackage: %s\ndoc: A synthetic machine of %d states, %d events and %d transitions for benchmarks.\nstates:\n", name, pkg, n, e, len(trs))
	for i, s := range states {
		switch i {
		case 0:
			fmt.Fprintf(&b, "  %s: { initial: true }\n", s)
		case n - 1:
			fmt.Fprintf(&b, "  %s: { terminal: true }\n", s)
		default:
			fmt.Fprintf(&b, "  %s: {}\n", s)
		}
	}
	b.WriteString("events:\n")
	for _, ev := range events {
		fmt.Fprintf(&b, "  %s: {}\n", ev)
	}
	b.WriteString("transitions:\n")
	for _, t := range trs {
		fmt.Fprintf(&b, "  - { from: %s, on: %s, to: %s }\n", states[t.from], events[t.ev], states[t.to])
	}
	return b.String()
}

// BenchmarkKeystrokeDiagnostics measures, on specs of 100 and 1,000 states (bench/specgen's
// synthetic machine as bench/scaling writes it: 20 events, 7 transitions a state; 6,993
// transitions for 1,000 states), the time from a keystroke (a letter typed into the last
// transition's target, the incremental change an editor sends) to the diagnostics of the
// new text. The aim is under 300 ms. Two ways of typing:
//
//   - pause: a keystroke after a quiet spell, as one typed and looked at;
//   - burst: five keystrokes 20 ms apart (fast typing), timed from the last.
//
// The time includes the debounce (DefaultDebounce), which a spec whose check takes longer
// than it (the 1,000 states) waits after every keystroke. cpu-ms/op is the CPU time the
// process spent a measured keystroke or burst (the checks, mostly): on a busy machine
// (other processes on the cores) the latency grows, the CPU time not.
func BenchmarkKeystrokeDiagnostics(b *testing.B) {
	for _, n := range []int{100, 1000} {
		for _, burst := range []int{1, 5} {
			name := fmt.Sprintf("states=%d/pause", n)
			if burst > 1 {
				name = fmt.Sprintf("states=%d/burst", n)
			}
			b.Run(name, func(b *testing.B) { benchKeystrokes(b, n, burst) })
		}
	}
}

func benchKeystrokes(b *testing.B, n, burst int) {
	spec := syntheticSpec("Scale", "scale", n, 20, 7)
	// As fsmgen lsp runs the server: a process of its own, with the collector set to trade
	// memory for time (lsp.GCPercent).
	defer debug.SetGCPercent(debug.SetGCPercent(GCPercent))
	c := newClient(b, Options{})
	uri := c.open(filepath.Join(b.TempDir(), "scale.fsm.yaml"), spec)
	c.waitDiags(uri, 1)
	// Letters typed into the last transition's target: each version a text not seen before.
	at := newText(spec).position(strings.LastIndex(spec, " }"))
	v, typed := 1, 0
	key := func() {
		v++
		ch := contentChange{Range: &Range{Start: at, End: at}, Text: string(rune('a' + typed%26))}
		typed++
		at.Character++
		c.send("textDocument/didChange", didChangeParams{TextDocument: versionedTextDocumentIdentifier{URI: uri, Version: v},
			ContentChanges: []contentChange{ch}})
	}
	var worst, total time.Duration
	cpu := cpuTime()
	for b.Loop() {
		b.StopTimer()
		for range burst - 1 {
			key()
			time.Sleep(20 * time.Millisecond)
		}
		b.StartTimer()
		start := time.Now()
		key()
		ds := c.waitDiags(uri, v)
		took := time.Since(start)
		b.StopTimer()
		worst, total = max(worst, took), total+took
		if len(ds) == 0 {
			b.Fatalf("version %d: no finding on the misspelt state", v)
		}
		// A quiet spell before the next keystroke (the checks thrown away end).
		c.srv.Wait()
		time.Sleep(DefaultDebounce)
		b.StartTimer()
	}
	b.ReportMetric(float64(total.Microseconds())/1000/float64(b.N), "ms/keystroke")
	b.ReportMetric(float64(worst.Microseconds())/1000, "worst-ms")
	b.ReportMetric(float64((cpuTime()-cpu).Microseconds())/1000/float64(b.N), "cpu-ms/op")
	b.ReportMetric(float64(len(spec)), "spec-bytes")
}

// TestSyntheticSpecIsSpecgens: the copy of bench/specgen's generator writes what it writes:
// the big benchmark machine's spec (specgen.Big, 50 states, 20 events, 6 transitions a
// state), committed as bench/big/big.fsm.yaml, after its generated-file header.
func TestSyntheticSpecIsSpecgens(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(testtool.Root(t), "bench", "big", "big.fsm.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	_, want, _ := strings.Cut(string(b), "\n")
	if got := syntheticSpec("Big", "big", 50, 20, 6); got != want {
		t.Errorf("syntheticSpec differs from bench/big/big.fsm.yaml:\n%s", got)
	}
}
