package browsertest

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// shown is what the page shows of the simulation.
type shown struct {
	State   string   `json:"state"`
	Sim     string   `json:"sim"` // the state as fsmgen sim names it
	Active  []string `json:"active"`
	Within  []string `json:"within"`
	Log     []string `json:"log"`
	Allowed []string `json:"allowed"`
	Refused []string `json:"refused"`
	Command string   `json:"command"`
	Runs    int      `json:"runs"`
	Renders int      `json:"renders"`
	Texts   string   `json:"texts"` // the diagram's text
	Nodes   int      `json:"nodes"`
}

const readShown = `(() => ({
	state: document.querySelector("#state").textContent,
	sim: document.querySelector("#state").dataset.state,
	active: [...document.querySelectorAll("#diagram svg .active")].map(n => n.dataset.state),
	within: [...document.querySelectorAll("#diagram svg .within")].map(n => n.dataset.state),
	log: [...document.querySelectorAll("#log > li")].map(li => [li.querySelector(".line"), ...li.querySelectorAll(".detail")].map(n => n.textContent).join("\n")),
	allowed: [...document.querySelectorAll("#allowed button")].map(b => b.textContent),
	refused: [...document.querySelectorAll("#refused button")].map(b => b.textContent),
	command: document.querySelector("#command").textContent,
	runs: window.fsmgenPreview.runs,
	renders: window.fsmgenPreview.renders,
	texts: document.querySelector("#diagram svg") ? document.querySelector("#diagram svg").textContent : "",
	nodes: document.querySelectorAll("#diagram svg g.node").length,
}))()`

// tab is one page of the preview in the browser.
type tab struct {
	t   *testing.T
	ctx chromeCtx
}

type chromeCtx = context.Context

// open navigates to url and waits until the page has drawn its diagram and run its
// session.
func open(t *testing.T, ctx chromeCtx, url string) *tab {
	t.Helper()
	err := chromedp.Run(ctx,
		chromedp.Navigate(url),
		chromedp.Poll(`window.fsmgenPreview && window.fsmgenPreview.ready && window.fsmgenPreview.runs > 0 && window.fsmgenPreview.busy === 0`, nil, chromedp.WithPollingTimeout(60*time.Second)),
	)
	if err != nil {
		t.Fatalf("loading %s: %v", url, err)
	}
	return &tab{t, ctx}
}

func (p *tab) shown() shown {
	p.t.Helper()
	var s shown
	if err := chromedp.Run(p.ctx, chromedp.Evaluate(readShown, &s)); err != nil {
		p.t.Fatal(err)
	}
	return s
}

// fire clicks the button of event name (among the permitted ones, or the others when
// refused is true) and waits for the page to show the outcome.
func (p *tab) fire(name string, refused bool) shown {
	p.t.Helper()
	before := p.shown().Runs
	box := "#allowed"
	if refused {
		box = "#refused"
		if err := chromedp.Run(p.ctx, chromedp.Evaluate(`document.querySelector("#others").open = true`, nil)); err != nil {
			p.t.Fatal(err)
		}
	}
	var ok bool
	click := `(() => { const b = [...document.querySelectorAll("` + box + ` button")].find(b => b.textContent === ` + jsString(name) + `); if (!b) return false; b.click(); return true; })()`
	if err := chromedp.Run(p.ctx, chromedp.Evaluate(click, &ok)); err != nil {
		p.t.Fatal(err)
	}
	if !ok {
		p.t.Fatalf("no button %q in %s: %+v", name, box, p.shown())
	}
	p.waitRuns(before + 1)
	return p.shown()
}

func (p *tab) waitRuns(n int) {
	p.t.Helper()
	if err := chromedp.Run(p.ctx, chromedp.Poll(`window.fsmgenPreview.runs >= `+itoa(n)+` && window.fsmgenPreview.busy === 0`, nil, chromedp.WithPollingTimeout(30*time.Second))); err != nil {
		p.t.Fatalf("waiting for run %d: %v (%+v)", n, err, p.shown())
	}
}

// click clicks the element of the selector and waits for the session to run again.
func (p *tab) click(sel string) shown {
	p.t.Helper()
	before := p.shown().Runs
	if err := chromedp.Run(p.ctx, chromedp.Click(sel, chromedp.ByQuery)); err != nil {
		p.t.Fatalf("clicking %s: %v", sel, err)
	}
	p.waitRuns(before + 1)
	return p.shown()
}

// replay runs the command the page prints in a shell, in dir, with the fsmgen the test
// built first on the PATH, and returns its output.
func replay(t *testing.T, dir, command string) string {
	t.Helper()
	cmd := exec.Command("sh", "-c", command)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "PATH="+filepath.Dir(buildFsmgen(t))+string(os.PathListSeparator)+os.Getenv("PATH"))
	out, err := cmd.Output()
	if _, exit := err.(*exec.ExitError); err != nil && !exit {
		t.Fatalf("%s: %v", command, err)
	}
	return string(out)
}

var indexRE = regexp.MustCompile(`^-?[0-9]+: `)

// sameSteps compares the page's log (its accepted steps, and its last refusal) with what
// fsmgen sim printed, leaving out the step numbers: the page numbers every event tried,
// sim only those it fires.
func sameSteps(t *testing.T, log []string, sim string) {
	t.Helper()
	var page []string
	for i, l := range log {
		first, _, _ := strings.Cut(l, "\n")
		if strings.HasPrefix(first, "start") || strings.HasSuffix(first, ", not fired (it would be accepted now)") {
			continue
		}
		if strings.Contains(first, ": refused in ") {
			if i != len(log)-1 {
				continue
			}
			page = append(page, indexRE.ReplaceAllString(l, ""))
			continue
		}
		page = append(page, indexRE.ReplaceAllString(first, ""))
	}
	var out []string
	lines := strings.Split(strings.TrimSpace(sim), "\n")
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		if strings.HasPrefix(l, "start:") || strings.HasPrefix(l, "final:") || strings.HasPrefix(l, "counter ") || strings.HasPrefix(l, "   ") {
			continue
		}
		if strings.Contains(l, ": refused in ") {
			// The refusal's detail lines follow it.
			for i+1 < len(lines) && strings.HasPrefix(lines[i+1], "   ") {
				i++
				l += "\n" + strings.TrimSpace(lines[i])
			}
		}
		out = append(out, indexRE.ReplaceAllString(l, ""))
	}
	if !slices.Equal(page, out) {
		t.Errorf("the page's steps and the replay's differ:\npage:\n%s\nsim:\n%s", strings.Join(page, "\n"), strings.Join(out, "\n"))
	}
}

func finalOf(sim string) string {
	for _, l := range strings.Split(sim, "\n") {
		if s, ok := strings.CutPrefix(l, "final: "); ok {
			return s
		}
	}
	return ""
}

// TestReviewSession clicks through seed 003 (review): the events, a refusal, the state
// highlighted and the log; replays the printed command with fsmgen sim; then edits the
// spec file and watches the page follow, keeping the session.
func TestReviewSession(t *testing.T) {
	ctx := browser(t)
	dir := t.TempDir()
	spec := copySpec(t, dir, "examples/review/review.fsm.yaml")
	p := open(t, ctx, serve(t, dir, spec))

	s := p.shown()
	if s.State != "not_started" || !slices.Equal(s.Active, []string{"s0"}) {
		t.Fatalf("at the start: state %q, highlighted %v; want not_started, s0", s.State, s.Active)
	}
	if s.Nodes < 7 {
		t.Errorf("the diagram has %d state boxes, want 7", s.Nodes)
	}
	if want := []string{"in_progress", "blocked"}; !slices.Equal(s.Allowed, want) {
		t.Errorf("permitted at the start: %v, want %v", s.Allowed, want)
	}
	for _, e := range []string{"in_progress", "pending_review", "under_review"} {
		s = p.fire(e, false)
	}
	if s.State != "under_review" || !slices.Equal(s.Active, []string{"s3"}) {
		t.Errorf("after three events: state %q, highlighted %v; want under_review, s3", s.State, s.Active)
	}
	s = p.fire("final_review", true)
	want := "3: final_review: refused in under_review (guard): under_review on final_review: guard reviews_complete does not hold\nallowed: review_submitted, security_review_submitted"
	if len(s.Log) != 4 || s.Log[3] != want {
		t.Errorf("the log after the refusal:\n%s\nwant last\n%s", strings.Join(s.Log, "\n"), want)
	}
	if s.State != "under_review" {
		t.Errorf("a refusal moved the machine to %q", s.State)
	}
	out := replay(t, dir, s.Command)
	sameSteps(t, s.Log, out)
	s = p.fire("review_submitted", false)
	s = p.fire("final_review", false)
	if s.State != "final_review" || !slices.Equal(s.Active, []string{"s4"}) {
		t.Errorf("state %q, highlighted %v; want final_review, s4", s.State, s.Active)
	}
	if !strings.Contains(s.Command, "--events in_progress,pending_review,under_review,review_submitted,final_review") {
		t.Errorf("replay command %q", s.Command)
	}
	out = replay(t, dir, s.Command)
	sameSteps(t, s.Log, out)
	if finalOf(out) != s.Sim {
		t.Errorf("the replay ends in %q, the page in %q:\n%s", finalOf(out), s.State, out)
	}

	// Undo takes back the last event; reset goes back to the start.
	s = p.click("#undo")
	if s.State != "under_review" || len(s.Log) != 5 {
		t.Errorf("after undo: state %q, %d log entries", s.State, len(s.Log))
	}
	s = p.fire("final_review", false)

	// The spec file changes: a new terminal state after final_review. The page draws it,
	// and the session stays where it was.
	path := filepath.Join(dir, spec)
	data, _ := os.ReadFile(path)
	edited := strings.Replace(string(data), "  blocked:        { doc: Task cannot proceed due to blocker. }\n",
		"  blocked:        { doc: Task cannot proceed due to blocker. }\n  archived:       { terminal: true, doc: Kept for the record. }\n", 1)
	edited += "  - { from: final_review, to: archived }\n"
	if edited == string(data)+"  - { from: final_review, to: archived }\n" {
		t.Fatal("the edit did not apply")
	}
	renders := s.Renders
	start := time.Now()
	if err := os.WriteFile(path, []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Run(ctx, chromedp.Poll(`window.fsmgenPreview.renders > `+itoa(renders)+` && window.fsmgenPreview.busy === 0 && [...document.querySelectorAll("#allowed button")].some(b => b.textContent === "archived")`, nil, chromedp.WithPollingTimeout(30*time.Second))); err != nil {
		t.Fatalf("the page did not follow the edit: %v (%+v)", err, p.shown())
	}
	t.Logf("the page showed the edited spec %v after it was written", time.Since(start).Round(time.Millisecond))
	s = p.shown()
	if s.State != "final_review" || len(s.Log) != 6 || !strings.Contains(s.Texts, "archived") {
		t.Errorf("after the edit: state %q, %d log entries, diagram has archived: %v", s.State, len(s.Log), strings.Contains(s.Texts, "archived"))
	}
	s = p.fire("archived", false)
	if s.State != "archived" || !slices.Equal(s.Active, []string{"s7"}) {
		t.Errorf("state %q, highlighted %v; want archived, s7", s.State, s.Active)
	}

	// A typo: the findings say where; the diagram and simulator stay on the last clean
	// version.
	if err := os.WriteFile(path, []byte(strings.Replace(edited, "to: archived }", "to: archivd }", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	var finding string
	if err := chromedp.Run(ctx,
		chromedp.Poll(`document.querySelectorAll("#findings li.error").length > 0 && window.fsmgenPreview.busy === 0`, nil, chromedp.WithPollingTimeout(30*time.Second)),
		chromedp.Evaluate(`document.querySelector("#findings li.error").textContent`, &finding),
	); err != nil {
		t.Fatalf("no finding shown: %v", err)
	}
	line := strings.Count(edited, "\n")
	if !strings.HasPrefix(finding, spec+":"+itoa(line)+":") || !strings.Contains(finding, `"archivd"`) {
		t.Errorf("finding %q, want one at line %d about archivd", finding, line)
	}
	var stale bool
	if err := chromedp.Run(ctx, chromedp.Evaluate(`!document.querySelector("#stale").hidden`, &stale)); err != nil || !stale {
		t.Errorf("the stale note is not shown (%v)", err)
	}
	s = p.click("#reset")
	if s.State != "not_started" || len(s.Log) != 0 {
		t.Errorf("after reset: state %q, log %v", s.State, s.Log)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

// jsString is s as a JavaScript string literal.
func jsString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// TestStartsBroken: a spec with errors from the start shows its findings and no diagram;
// once fixed, the page draws and runs it. The tabs switch between the specs.
func TestStartsBroken(t *testing.T) {
	ctx := browser(t)
	dir := t.TempDir()
	review := copySpec(t, dir, "examples/review/review.fsm.yaml")
	const door = "version: 1\nmachine: Door\npackage: door\nstates:\n  closed: { initial: true }\n  opened: {}\ntransitions:\n  - { from: closed, to: opened }\n  - { from: opened, to: closd }\n"
	path := filepath.Join(dir, "door.fsm.yaml")
	os.WriteFile(path, []byte(door), 0o644)
	url := serve(t, dir, "door.fsm.yaml", review)
	if err := chromedp.Run(ctx, chromedp.Navigate(url), chromedp.Poll(`window.fsmgenPreview && window.fsmgenPreview.ready && window.fsmgenPreview.busy === 0`, nil, chromedp.WithPollingTimeout(60*time.Second))); err != nil {
		t.Fatal(err)
	}
	var finding string
	var hidden bool
	if err := chromedp.Run(ctx, chromedp.Text("#findings li.error", &finding, chromedp.ByQuery),
		chromedp.Evaluate(`document.querySelector("#sim").hidden && document.querySelector("#picture").hidden`, &hidden)); err != nil {
		t.Fatal(err)
	}
	if finding != `door.fsm.yaml:9:25: error: unknown state "closd" (did you mean "closed"?)` || !hidden {
		t.Errorf("finding %q, simulator hidden %v", finding, hidden)
	}
	os.WriteFile(path, []byte(strings.Replace(door, "closd", "closed", 1)), 0o644)
	if err := chromedp.Run(ctx, chromedp.Poll(`!document.querySelector("#sim").hidden && window.fsmgenPreview.runs > 0 && window.fsmgenPreview.busy === 0`, nil, chromedp.WithPollingTimeout(30*time.Second))); err != nil {
		t.Fatalf("the fixed spec is not run: %v", err)
	}
	p := &tab{t, ctx}
	if s := p.fire("opened", false); s.State != "opened" || !slices.Equal(s.Active, []string{"s1"}) {
		t.Errorf("state %q, highlighted %v", s.State, s.Active)
	}
	// The second tab: seed 003 with a session of its own; back to the first, its session.
	s := p.click(`.spec-tab[data-spec="1"]`)
	if s.State != "not_started" || len(s.Log) != 0 {
		t.Errorf("the second tab: state %q, log %q", s.State, s.Log)
	}
	s = p.click(`.spec-tab[data-spec="0"]`)
	if s.State != "opened" || len(s.Log) != 1 {
		t.Errorf("back to the first tab: state %q, log %q", s.State, s.Log)
	}
}
