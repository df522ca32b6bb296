package browsertest

import (
	"context"
	"net/url"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/fsmgen/fsmgen/inspect/inspecttest"
)

// chromium returns the path of a Chromium to drive: $FSMGEN_CHROMIUM, else the first of
// the usual names on PATH. Without one the test is skipped with the command that
// installs it, or fails when CI is true (CI installs it and must never skip).
func chromium(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("FSMGEN_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	const msg = "no Chromium found (chromium, chromium-browser, google-chrome on PATH, or FSMGEN_CHROMIUM); install it (Debian: apt-get install -y chromium)"
	if ci, _ := strconv.ParseBool(os.Getenv("CI")); ci {
		t.Fatalf("%s (CI is set, so the test may not be skipped)", msg)
	}
	t.Skip("skipping: " + msg)
	return ""
}

// browser starts a headless Chromium with a fresh profile and returns a tab's context.
// A JavaScript dialog (alert, confirm) opening in it fails the test: nothing the pages
// show may run.
func browser(t *testing.T) context.Context {
	path := chromium(t)
	// The profile is removed once Chromium is gone: its helper processes may still write
	// there for a moment after it is told to stop, which t.TempDir's removal would fail on.
	profile, err := os.MkdirTemp("", "inspect-chromium-")
	if err != nil {
		t.Fatal(err)
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(path),
		chromedp.Flag("headless", true),
		chromedp.Flag("no-sandbox", true),
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("no-first-run", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.NoDefaultBrowserCheck,
		chromedp.UserDataDir(profile),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelTab := chromedp.NewContext(actx)
	ctx, cancelTime := context.WithTimeout(ctx, 2*time.Minute)
	t.Cleanup(func() {
		cancelTime()
		cancelTab()
		cancelAlloc()
		for i := 0; ; i++ {
			if err := os.RemoveAll(profile); err == nil || i == 50 {
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
	})
	var dialogs atomic.Int32
	chromedp.ListenTarget(ctx, func(ev any) {
		if d, ok := ev.(*page.EventJavascriptDialogOpening); ok {
			dialogs.Add(1)
			t.Errorf("a dialog opened: %q", d.Message)
			go chromedp.Run(ctx, page.HandleJavaScriptDialog(false))
		}
	})
	if err := chromedp.Run(ctx); err != nil {
		t.Fatalf("starting %s: %v", path, err)
	}
	return ctx
}

// TestBrowser loads the inspector over a real SQLite file in headless Chromium: the
// overview, then by its links the machine, the tasks under CTO review and one of them,
// checking what the page shows; then the hostile instance, whose names show as text.
func TestBrowser(t *testing.T) {
	ctx := browser(t)
	srv, s := inspecttest.Server(t, sqliteStore(t))

	var states, pastAlert, state, actor, reason, current string
	var boxes, taken int
	err := chromedp.Run(ctx,
		chromedp.Navigate(srv.URL+"/"),
		chromedp.Click(`#machines a`, chromedp.ByQuery, chromedp.NodeVisible),
		chromedp.WaitVisible(`#states`, chromedp.ByQuery),
		chromedp.Evaluate(`document.querySelectorAll("svg g.state").length`, &boxes),
		chromedp.Text(`tr[data-state="cto_intervention"] td.n`, &states, chromedp.ByQuery),
		chromedp.Text(`td[data-level="alert"]`, &pastAlert, chromedp.ByQuery),
		// The box of cto_intervention on the diagram links to its instances.
		chromedp.Click(`svg g.state[data-state="cto_intervention"] rect`, chromedp.ByQuery),
		chromedp.WaitVisible(`#instances`, chromedp.ByQuery),
		chromedp.Click(`#instances a`, chromedp.ByQuery),
		chromedp.WaitVisible(`#timeline`, chromedp.ByQuery),
		chromedp.Text(`#state`, &state, chromedp.ByQuery),
		chromedp.Evaluate(`[...document.querySelectorAll("#timeline td.actor")].pop().textContent`, &actor),
		chromedp.Evaluate(`[...document.querySelectorAll("#timeline td.actor")].pop().nextElementSibling.textContent`, &reason),
		chromedp.Evaluate(`document.querySelector("svg g.state.current").dataset.state`, &current),
		chromedp.Evaluate(`document.querySelectorAll("svg g.edge.taken").length`, &taken),
	)
	if err != nil {
		t.Fatal(err)
	}
	if boxes != 12 {
		t.Errorf("the diagram shows %d states, want 12", boxes)
	}
	if states != "1" {
		t.Errorf("cto_intervention shows %q instances, want 1", states)
	}
	if pastAlert != "7" {
		t.Errorf("past alert: %q, want 7", pastAlert)
	}
	if state != "cto_intervention" || current != "cto_intervention" {
		t.Errorf("the task's state: %q, on the diagram %q; want cto_intervention", state, current)
	}
	if actor != s.Actor || reason != s.Reason {
		t.Errorf("last entry by %q because %q, want %q because %q", actor, reason, s.Actor, s.Reason)
	}
	// pending→assigned→planning, planning's own loop, planning→cto_intervention.
	if taken != 4 {
		t.Errorf("%d arrows on the task's path, want 4", taken)
	}

	// The hostile instance: every name is text, nothing runs, no element is injected.
	var id, hostileState, hostileActor, effect string
	var injected int
	err = chromedp.Run(ctx,
		chromedp.Navigate(srv.URL+"/instance?m="+url.QueryEscape(inspecttest.HostileMachine)+"&id="+url.QueryEscape(inspecttest.HostileID)),
		chromedp.WaitVisible(`#timeline`, chromedp.ByQuery),
		chromedp.Evaluate(`document.querySelector("#id").textContent`, &id),
		chromedp.Evaluate(`document.querySelector("#state").textContent`, &hostileState),
		chromedp.Evaluate(`document.querySelector("#timeline td.actor").textContent`, &hostileActor),
		chromedp.Evaluate(`document.querySelector("#effects tr:nth-child(2) td").textContent`, &effect),
		chromedp.Evaluate(`document.querySelectorAll("script, img, iframe, b[onmouseover], svg[onload]").length`, &injected),
	)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ got, want string }{
		{id, inspecttest.HostileID}, {hostileState, inspecttest.HostileState},
		{hostileActor, inspecttest.HostileActor}, {effect, inspecttest.HostileEffect},
	} {
		if c.got != c.want {
			t.Errorf("shown %q, want the text %q", c.got, c.want)
		}
	}
	if injected != 0 {
		t.Errorf("%d elements injected by the data", injected)
	}
	var title string
	if err := chromedp.Run(ctx, chromedp.Title(&title)); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(title, inspecttest.HostileID) {
		t.Errorf("title %q lacks the ID as text", title)
	}
}
