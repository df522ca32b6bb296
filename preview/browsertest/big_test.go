package browsertest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/fsmgen/fsmgen/bench/specgen"
)

// loadBig serves a synthetic spec of n states (bench/specgen, as bench/scaling writes
// them: 20 events, 7 transitions per state) and loads the page in the browser, returning
// how long the browser took from the navigation's start until the page had drawn the
// diagram and run the session (performance.now() then, as the page records it).
func loadBig(tb testing.TB, b *tab, url string) time.Duration {
	tb.Helper()
	var ms float64
	err := chromedp.Run(b.ctx,
		chromedp.Navigate(url+"?t="+time.Now().Format("150405.000000000")),
		chromedp.Poll(`window.fsmgenPreview && window.fsmgenPreview.ready && window.fsmgenPreview.runs > 0 && window.fsmgenPreview.busy === 0`, nil, chromedp.WithPollingTimeout(2*time.Minute)),
		chromedp.Evaluate(`window.fsmgenPreview.loadedAt`, &ms),
	)
	if err != nil {
		tb.Fatal(err)
	}
	return time.Duration(ms * float64(time.Millisecond))
}

func bigSpec(tb testing.TB, n int) (dir, name string) {
	dir = tb.TempDir()
	name = "big.fsm.yaml"
	m := specgen.Synthetic("Big", "big", n, 20, 7)
	if err := os.WriteFile(filepath.Join(dir, name), m.YAML(), 0o644); err != nil {
		tb.Fatal(err)
	}
	return dir, name
}

// TestBigSpec loads the page of a 300-state spec and reports how long it took (the bar is
// under a second; BenchmarkLoad300 measures it too): every state drawn and the initial
// one highlighted.
func TestBigSpec(t *testing.T) {
	ctx := browser(t)
	dir, name := bigSpec(t, 300)
	url := serve(t, dir, name)
	p := &tab{t, ctx}
	loadBig(t, p, url) // a first load compiles Mermaid's script
	d := loadBig(t, p, url)
	s := p.shown()
	// Drawn around the active state: s000, the states a transition away, and [*].
	if s.Nodes < 5 || s.Nodes > 40 || len(s.Active) != 1 || s.Active[0] != "s0" || len(s.Allowed) == 0 {
		t.Errorf("%d state boxes, highlighted %v, %d events permitted", s.Nodes, s.Active, len(s.Allowed))
	}
	var note string
	if err := chromedp.Run(ctx, chromedp.Text("#big-text", &note, chromedp.ByQuery)); err != nil || !strings.Contains(note, "300 states") {
		t.Errorf("the note on the big diagram: %q (%v)", note, err)
	}
	t.Logf("the page of a 300-state spec (2,100 transitions) loaded in %v", d.Round(time.Millisecond))
	// A step later the diagram is drawn around the new state.
	renders := s.Renders
	s = p.fire(s.Allowed[0], false)
	if s.Renders != renders+1 || len(s.Active) != 1 || s.Active[0] != "s1" || !strings.Contains(s.Texts, "s001") {
		t.Errorf("after %s: %d renders, highlighted %v", s.Log, s.Renders, s.Active)
	}
}

// BenchmarkLoad300 measures the page's load of a 300-state spec in headless Chromium,
// from the navigation's start until the diagram is drawn and the session run.
func BenchmarkLoad300(b *testing.B) {
	ctx := browser(b)
	dir, name := bigSpec(b, 300)
	url := serve(b, dir, name)
	p := &tab{nil, ctx}
	loadBig(b, p, url)
	b.ResetTimer()
	var total time.Duration
	for i := 0; i < b.N; i++ {
		total += loadBig(b, p, url)
	}
	b.ReportMetric(float64(total.Milliseconds())/float64(b.N), "ms/load")
}
