package mermaid

import (
	"strings"
	"testing"

	"github.com/fsmgen/fsmgen/internal/dot"
	"github.com/fsmgen/fsmgen/internal/fixture"
	"github.com/fsmgen/fsmgen/internal/markdown"
)

// TestAfterLabels: the diagrams and the document show a delayed transition as "after D",
// not by the event its timeout raises, in a flat machine and in a statechart.
func TestAfterLabels(t *testing.T) {
	for _, c := range []struct {
		spec            string
		mermaid, dotted string
		row             string
	}{
		{"../lower/testdata/build/after.fsm.yaml", "s1 --> s2 : after 1m30s / beep", `[label="after 1m30s / beep"]`, "| `opened` | after `1m30s` |"},
		{"../lower/testdata/build/chart_after.fsm.yaml", "s_active_ringing --> s_idle : after 30s [busy]", `[label="after 30s [busy]"]`, "| `active.ringing` | after `30s` | `busy` |"},
		{"../lower/testdata/build/chart_clocks.fsm.yaml", "s_sending --> s_failed : after 5m", `label="after 5m"`, "| `sending` | after `5m` |"},
		// Several delays on one state, each its own event.
		{"../lower/testdata/build/delays.fsm.yaml", "s0 --> s3 : after 30s [busy]<br>after 2m", `[label="after 10s (internal) / log"]`, "| `ringing` | after `2m` |"},
		{"../lower/testdata/build/chart_delays.fsm.yaml", "s_call_camera_on --> s_over : after 2m", `[label="after 30s [busy]", ltail=cluster_s_active]`, "| `active` | after `5m` |"},
		// Delays of states active together: two regions, a compound state and its child.
		{"../lower/testdata/build/chart_delays_parallel.fsm.yaml", "s_call_camera_off --> s_call_camera_on : after 10s", `s_call_audio_live -> s_over [label="after 30s"]`, "| `call.audio.live` | after `1m` | `idle` |"},
		{"../lower/testdata/build/chart_delays_parallel.fsm.yaml", "s_box_inner --> s_box_inner : after 5s (internal)", `s_idle -> s_box [label="after 1s", lhead=cluster_s_box]`, "| `idle` | after `1s` | `box` |"},
	} {
		m := fixture.Load(t, c.spec)
		diagram := StateDiagram(m)
		doc, err := markdown.Document(m, diagram)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(diagram, c.mermaid) || !strings.Contains(dot.Graph(m), c.dotted) || !strings.Contains(string(doc), c.row) {
			t.Errorf("%s: no %q in\n%s\nor no %q in the DOT graph, or no row %q in the document", c.spec, c.mermaid, diagram, c.dotted, c.row)
		}
		for _, line := range strings.Split(diagram, "\n") {
			if strings.Contains(line, "-->") && strings.Contains(line, ".after") {
				t.Errorf("%s: a transition is labelled by the timeout's event: %s", c.spec, line)
			}
		}
	}
}
