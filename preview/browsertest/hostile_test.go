package browsertest

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// injected counts what a spec could have injected into the page: script elements beyond
// the page's two, images, frames, objects, and attributes that run script (on...,
// javascript: links); and window.pwned, which every hostile name tries to set.
const injected = `(() => {
	const all = [...document.querySelectorAll("*")];
	return {
		scripts: document.scripts.length,
		elements: document.querySelectorAll("img, iframe, object, embed, frame, base, meta[http-equiv]").length,
		handlers: all.filter(e => [...e.attributes].some(a => a.name.toLowerCase().startsWith("on") || /^\s*javascript:/i.test(a.value))).length,
		pwned: window.pwned === undefined ? "" : String(window.pwned),
	};
})()`

type injection struct {
	Scripts  int    `json:"scripts"`
	Elements int    `json:"elements"`
	Handlers int    `json:"handlers"`
	Pwned    string `json:"pwned"`
}

func (p *tab) checkClean(what string) {
	p.t.Helper()
	var got injection
	if err := chromedp.Run(p.ctx, chromedp.Evaluate(injected, &got)); err != nil {
		p.t.Fatal(err)
	}
	if got != (injection{Scripts: 2}) {
		p.t.Errorf("%s: the spec injected into the page: %+v", what, got)
	}
}

// TestHostileNames: a spec whose names and docs are script tags, event handlers, quotes
// and Mermaid directives is shown as text in the real browser: its names literally in
// the state, the buttons, the toggles, the log and the diagram; no script of it runs; its
// hostile event is fired, and the printed command (its quoting) replays in a shell. Then
// the project's hostile specs (the generator's, the diagram's, the checker's injection
// corpus), and a spec whose findings quote hostile names, each checked the same way.
func TestHostileNames(t *testing.T) {
	ctx := browser(t)
	dir := t.TempDir()
	data, err := os.ReadFile("testdata/inject.fsm.yaml")
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "inject.fsm.yaml"), data, 0o644)
	broken := strings.Replace(string(data), `to: "%%{init`, `to: "<script>window.pwned='finding'</script>%%{init`, 1)
	os.WriteFile(filepath.Join(dir, "broken.fsm.yaml"), []byte(broken), 0o644)
	specs := []string{"inject.fsm.yaml", "broken.fsm.yaml"}
	for _, s := range []string{"internal/gogen/testdata/hostile.fsm.yaml", "internal/mermaid/testdata/hostile.fsm.yaml", "internal/gogen/testdata/inject.fsm.yaml", "internal/gogen/testdata/names.fsm.yaml", "internal/mermaid/testdata/studio.fsm.yaml"} {
		sub := filepath.Join(dir, strconv.Itoa(len(specs)))
		os.Mkdir(sub, 0o755)
		specs = append(specs, filepath.Join(strconv.Itoa(len(specs)), copySpec(t, sub, s)))
	}
	url := serve(t, dir, specs...)

	const (
		state0 = `<script>window.pwned='state'</script>`
		state1 = `"><img src=x onerror="window.pwned='img'">`
		state2 = `%%{init: {"securityLevel": "loose"}}%% --> [*]`
		event0 = `</button><script>window.pwned='event'</script>`
		guard  = `<b onmouseover="window.pwned='guard'">g</b>`
		role   = `'; window.pwned='role'; '`
	)
	p := open(t, ctx, url)
	p.checkClean("inject.fsm.yaml")
	s := p.shown()
	if s.State != state0 || !slices.Equal(s.Refused, []string{event0, "click s0 call alert(1)", "b --> [*]"}) {
		t.Errorf("state %q, events %q", s.State, s.Refused)
	}
	for _, name := range []string{state0, state1, state2} {
		if !strings.Contains(s.Texts, name) {
			t.Errorf("the diagram lacks the text %q", name)
		}
	}
	var labels []string
	if err := chromedp.Run(ctx, chromedp.Evaluate(`[...document.querySelectorAll("#hooks label, #roles label, #context label")].map(l => l.textContent)`, &labels)); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{guard, role, "<i>f</i> (string) "} {
		if !slices.Contains(labels, want) {
			t.Errorf("no control labelled %q in %q", want, labels)
		}
	}
	// The event is refused without its guard, then without the role, then fired with both.
	s = p.fire(event0, true)
	if !strings.HasSuffix(s.Log[0], "(guard): "+state0+" on "+event0+": guard "+guard+" does not hold\nallowed: (none)") {
		t.Errorf("log %q", s.Log)
	}
	p.click(`#hooks input`)
	s = p.fire(event0, true)
	if !strings.Contains(s.Log[1], "(role): "+state0+" on "+event0+" is not permitted without a role; roles allowed: "+role) {
		t.Errorf("log %q", s.Log)
	}
	// With the role the session runs again: the tries refused stay tries, not fired.
	s = p.click(`#roles input[type=radio]:not([data-name=""])`)
	if want := "1: " + event0 + ": refused when tried, not fired (it would be accepted now)"; s.Log[1] != want || s.State != state0 {
		t.Errorf("after choosing the role: state %q, log %q", s.State, s.Log)
	}
	s = p.fire(event0, false)
	s = p.fire("b --> [*]", false)
	if s.State != state2 || s.Log[2] != "2: "+event0+": "+state0+" -> "+state1 {
		t.Errorf("state %q, log %q", s.State, s.Log)
	}
	p.checkClean("inject.fsm.yaml, after firing")
	out := replay(t, dir, s.Command)
	sameSteps(t, s.Log, out)
	if finalOf(out) != state2 {
		t.Errorf("the replay of %s ends in %q", s.Command, finalOf(out))
	}

	// The findings of the broken spec quote its names: as text.
	var finding string
	if err := chromedp.Run(ctx, chromedp.Navigate(url+"?1#spec=1"),
		chromedp.Poll(`document.querySelectorAll("#findings li.error").length > 0 && window.fsmgenPreview.busy === 0`, nil),
		chromedp.Evaluate(`document.querySelector("#findings li.error .message").textContent`, &finding)); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(finding, `"<script>window.pwned='finding'</script>%%{init: {\"securityLevel\": \"loose\"}}%% --> [*]"`) {
		t.Errorf("finding %q", finding)
	}
	p.checkClean("broken.fsm.yaml")

	for i := 2; i < len(specs); i++ {
		p := open(t, ctx, url+"?"+strconv.Itoa(i)+"#spec="+strconv.Itoa(i))
		p.checkClean(specs[i])
		var diagramError string
		chromedp.Run(ctx, chromedp.Evaluate(`document.querySelector("#diagram-error").hidden ? "" : document.querySelector("#diagram-error").textContent`, &diagramError))
		if diagramError != "" || p.shown().Nodes == 0 {
			t.Errorf("%s: the diagram is not drawn: %s", specs[i], diagramError)
		}
		// Every event permitted, fired in turn.
		for k := 0; k < 4; k++ {
			s := p.shown()
			if len(s.Allowed) == 0 {
				break
			}
			p.fire(s.Allowed[0], false)
		}
		p.checkClean(specs[i] + ", after firing")
	}
}
