package importer

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestLargeImport imports rings of 5,000 states, on one line (XState) and one state a line
// (SCXML): before the checker's chart walk stopped visiting every event in every
// configuration, and positions were counted from the start of the line each time, they
// took minutes.
func TestLargeImport(t *testing.T) {
	if testing.Short() {
		t.Skip("imports large charts")
	}
	for _, c := range []struct {
		from Format
		path string
		data []byte
	}{{XState, "big.json", bigXState(5000)}, {SCXML, "big.scxml", bigSCXML(5000)}} {
		start := time.Now()
		done := make(chan struct{})
		go func() {
			defer close(done)
			if out, ds := Import(c.from, c.path, c.data, Options{}); out == nil {
				t.Errorf("%s: %v", c.path, ds)
			}
		}()
		select {
		case <-done:
			t.Logf("%s: %d bytes, 5,000 states: %v", c.path, len(c.data), time.Since(start))
		case <-time.After(60 * time.Second):
			t.Fatalf("%s: 5,000 states take more than a minute to import", c.path)
		}
	}
}

// A chart of more than MaxStates states is refused at the first state past the limit.
func TestTooManyStates(t *testing.T) {
	data := bigXState(MaxStates + 1)
	out, ds := Import(XState, "big.json", data, Options{})
	off := strings.Index(string(data), fmt.Sprintf(`"s%d":{`, MaxStates))
	want := fmt.Sprintf("big.json:1:%d: error: the statechart has more than 10000 states; the limit is 10000 (split it into machines of their own)\n", off+1)
	if out != nil || text(ds) != want {
		t.Errorf("findings\n%s\nwant\n%s", text(ds), want)
	}
	data = bigSCXML(MaxStates + 1)
	out, ds = Import(SCXML, "big.scxml", data, Options{})
	want = fmt.Sprintf("big.scxml:%d:1: error: the statechart has more than 10000 states; the limit is 10000 (split it into machines of their own)\n", MaxStates+2)
	if out != nil || text(ds) != want {
		t.Errorf("findings\n%s\nwant\n%s", text(ds), want)
	}
}

// bigXState is an XState config of n states in a ring, each left by its own event and by a
// shared one, on one line (as a minified config is).
func bigXState(n int) []byte {
	var b strings.Builder
	b.WriteString(`{"id":"big","initial":"s0","states":{`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"s%d":{"on":{"e%d":"s%d","reset":"s0"}}`, i, i, (i+1)%n)
	}
	b.WriteString("}}")
	return []byte(b.String())
}

// bigSCXML is the same ring as an SCXML document, one state a line.
func bigSCXML(n int) []byte {
	var b strings.Builder
	b.WriteString(`<scxml xmlns="http://www.w3.org/2005/07/scxml" version="1.0" name="big" initial="s0">` + "\n")
	for i := range n {
		fmt.Fprintf(&b, `<state id="s%d"><transition event="e%d" target="s%d"/><transition event="reset" target="s0"/></state>`+"\n", i, i, (i+1)%n)
	}
	b.WriteString("</scxml>\n")
	return []byte(b.String())
}

func BenchmarkImportXState(b *testing.B) {
	data := bigXState(benchStates)
	for b.Loop() {
		if out, ds := Import(XState, "big.json", data, Options{}); out == nil {
			b.Fatal(ds)
		}
	}
}

func BenchmarkImportSCXML(b *testing.B) {
	data := bigSCXML(benchStates)
	for b.Loop() {
		if out, ds := Import(SCXML, "big.scxml", data, Options{}); out == nil {
			b.Fatal(ds)
		}
	}
}

// benchStates is the size of the benchmarks' charts.
const benchStates = 4000
