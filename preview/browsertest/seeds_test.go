package browsertest

import (
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// machineOf reads the spec's machine as the page does (/api/spec).
type machineOf struct {
	Machine struct {
		States []struct{ Name, ID string }
	}
}

func specView(t *testing.T, url string, i int) machineOf {
	t.Helper()
	client := &http.Client{Timeout: 30 * time.Second}
	resp, err := client.Get(url + "api/spec?i=" + strconv.Itoa(i))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var v machineOf
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
	return v
}

func (v machineOf) id(t *testing.T, state string) string {
	t.Helper()
	for _, s := range v.Machine.States {
		if s.Name == state {
			return s.ID
		}
	}
	t.Fatalf("no state %q in %+v", state, v.Machine.States)
	return ""
}

// setInput types value into the input or select of the selector, as a user would, and
// waits for the session to run again.
func (p *tab) setInput(sel, value string) shown {
	p.t.Helper()
	before := p.shown().Runs
	js := `(() => { const i = document.querySelector(` + jsString(sel) + `); if (!i) return false; i.value = ` + jsString(value) + `; i.dispatchEvent(new Event("change")); return true; })()`
	var ok bool
	if err := chromedp.Run(p.ctx, chromedp.Evaluate(js, &ok)); err != nil || !ok {
		p.t.Fatalf("no input %s (%v)", sel, err)
	}
	p.waitRuns(before + 1)
	return p.shown()
}

// TestSeeds: each seed in its tab of one page: the diagram drawn with every state, the
// initial state highlighted, an event fired (seed 001 as a human, with the assignees set
// in the context; seed 000's task_created refused without its payload's input_text, then
// accepted with it), the new state highlighted and logged, and the printed command
// replayed by fsmgen sim to the same state.
func TestSeeds(t *testing.T) {
	ctx := browser(t)
	dir := t.TempDir()
	seeds, _ := filepath.Glob("../../examples/*/*.fsm.yaml")
	if len(seeds) != 5 {
		t.Fatalf("%d seeds", len(seeds))
	}
	var names []string
	for _, s := range seeds {
		names = append(names, copySpec(t, dir, strings.TrimPrefix(filepath.ToSlash(s), "../../")))
	}
	url := serve(t, dir, names...)
	for i, name := range names {
		t.Run(name, func(t *testing.T) {
			v := specView(t, url, i)
			p := open(t, ctx, url+"?tab="+strconv.Itoa(i)+"#spec="+strconv.Itoa(i))
			p.t = t
			s := p.shown()
			if s.Nodes < len(v.Machine.States) {
				t.Errorf("%d state boxes drawn for %d states", s.Nodes, len(v.Machine.States))
			}
			switch name {
			case "approval.fsm.yaml":
				if len(s.Allowed) != 0 {
					t.Errorf("permitted without a role: %v", s.Allowed)
				}
				s = p.click(`#roles input[data-name="human"]`)
				s = p.setInput(`#context [data-field="assignee_ids"]`, `["ana"]`)
				s = p.fire("ASSIGNED", false)
			case "cognitive.fsm.yaml":
				s = p.fire("task_created", false)
				if len(s.Log) != 2 || !strings.Contains(s.Log[1], "(payload): invalid payload for task_created: 1 field\ninput_text: ") {
					t.Errorf("without a payload: %q", s.Log)
				}
				if err := chromedp.Run(p.ctx, chromedp.SetValue(`#payloads fieldset[data-event="task_created"] input[data-field="input_text"]`, "hello", chromedp.ByQuery),
					chromedp.Evaluate(`document.querySelector('#payloads fieldset[data-event="task_created"] input[data-field="input_text"]').dispatchEvent(new Event("change"))`, nil)); err != nil {
					t.Fatal(err)
				}
				s = p.fire("task_created", false)
			case "build.fsm.yaml":
				s = p.click(`#roles input[data-name="build_orchestrator"]`)
				s = p.fire("picked_up", false)
			default:
				if len(s.Allowed) == 0 {
					t.Fatalf("nothing permitted at the start")
				}
				s = p.fire(s.Allowed[0], false)
			}
			last := s.Log[len(s.Log)-1]
			if !strings.Contains(last, " -> ") || strings.Contains(last, "refused") {
				t.Fatalf("the event was not accepted: %q", s.Log)
			}
			out := replay(t, dir, s.Command)
			if finalOf(out) != s.Sim {
				t.Errorf("the replay ends in %q, the page in %q:\n%s\n%s", finalOf(out), s.State, s.Command, out)
			}
			var want []string
			for _, st := range strings.Split(s.State, ", ") {
				want = append(want, v.id(t, st))
			}
			if !slices.Equal(s.Active, want) {
				t.Errorf("state %q highlighted as %v, want %v", s.State, s.Active, want)
			}
		})
	}
}

// TestStatechart: a statechart with nested and parallel states (and names that hold
// Mermaid's and HTML's syntax): the active atomic states highlighted, and the compound
// states around them marked; an eventless transition taken after a hook guard is turned
// on; an event whose name looks like an arrow and a list, fired and logged as text.
func TestStatechart(t *testing.T) {
	ctx := browser(t)
	dir := t.TempDir()
	spec := copySpec(t, dir, "internal/mermaid/testdata/studio.fsm.yaml")
	url := serve(t, dir, spec)
	v := specView(t, url, 0)
	p := open(t, ctx, url)
	s := p.fire("power", false)
	if s.State != "active.edit.review" || !slices.Equal(s.Active, []string{v.id(t, "active.edit.review")}) ||
		!slices.Equal(s.Within, []string{v.id(t, "active"), v.id(t, "active.edit")}) {
		t.Errorf("after power: %q, active %v, within %v", s.State, s.Active, s.Within)
	}
	s = p.click(`#hooks input[data-name="approved"]`)
	s = p.fire("resume", false)
	if s.State != "active.mix.left.on, active.mix.right.on" || !slices.Equal(s.Active, []string{v.id(t, "active.mix.left.on"), v.id(t, "active.mix.right.on")}) {
		t.Errorf("after resume: %q, active %v", s.State, s.Active)
	}
	for _, want := range []string{"active", "active.mix", "active.mix.left", "active.mix.right"} {
		if !slices.Contains(s.Within, v.id(t, want)) {
			t.Errorf("%s not marked around the active states: %v", want, s.Within)
		}
	}
	s = p.fire(`save "it" --> [*]`, false)
	if last := s.Log[len(s.Log)-1]; !strings.HasPrefix(last, `2: save "it" --> [*]: left.on,right.on -> left.on,right.on`) {
		t.Errorf("log %q", s.Log)
	}
	// The diagram shows the names and labels as the spec writes them.
	for _, text := range []string{"shut: down <now> {x}", `save "it" --> [*]`, "ready | <b>"} {
		if !strings.Contains(s.Texts, text) {
			t.Errorf("the diagram lacks the text %q", text)
		}
	}
	out := replay(t, dir, s.Command)
	sameSteps(t, s.Log, out)
	if !strings.Contains(s.Command, "--guard approved@1=true --guard approved@2=true") {
		t.Errorf("command %s", s.Command)
	}
}
