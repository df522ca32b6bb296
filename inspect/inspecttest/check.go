package inspecttest

import (
	"context"
	"html/template"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fsmgen/fsmgen/fsmrt"
	"github.com/fsmgen/fsmgen/generated/build"
	"github.com/fsmgen/fsmgen/inspect"
)

// Server seeds store (SeedBuild and SeedHostile) and serves the inspector of the build and
// hostile machines over it, its pages measured at Now, two instances a page.
func Server(t testing.TB, store fsmrt.Store) (*httptest.Server, Seeded) {
	t.Helper()
	ctx := context.Background()
	seeded, err := SeedBuild(ctx, store)
	if err != nil {
		t.Fatalf("seeding the build tasks: %v", err)
	}
	if err := SeedHostile(ctx, store); err != nil {
		t.Fatalf("seeding the hostile instance: %v", err)
	}
	h, err := inspect.New(store, build.NewTask(nil).Describe(), HostileDescription())
	if err != nil {
		t.Fatal(err)
	}
	h.Now = func() time.Time { return Now }
	h.PageSize = 2
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv, seeded
}

// Get returns the body of page path (relative to the server's root), failing t unless
// the status is want.
func Get(t testing.TB, srv *httptest.Server, path string, want int) string {
	t.Helper()
	resp, err := http.Get(srv.URL + "/" + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != want {
		t.Fatalf("GET %s: %s, want %d:\n%s", path, resp.Status, want, b)
	}
	return string(b)
}

// Run checks the inspector's pages over store, which it seeds: what an operator reads off
// them (which tasks are past their alert level, which are under CTO review, what happened
// to one task, which effects are pending), and that hostile names and data are shown as
// text. Every store runs it: the memory store here, SQLite and PostgreSQL in their modules.
func Run(t *testing.T, store fsmrt.Store) {
	srv, s := Server(t, store)
	m := url.QueryEscape("build.Task")

	t.Run("overview", func(t *testing.T) {
		body := Get(t, srv, "", 200)
		want(t, body, `<a href="machine?m=build.Task">build.Task</a></td><td class="n">9</td>`)
	})

	t.Run("machine", func(t *testing.T) {
		body := Get(t, srv, "machine?m="+m, 200)
		// pending: the five old tasks and the fresh one; the five old are past every level.
		want(t, body, `<tr data-state="pending"><td><a href="instances?m=build.Task&amp;state=pending">pending</a></td><td class="n">6</td><td>1h0m0s</td>`+
			`<td class="n"><a href="instances?level=warn&amp;m=build.Task&amp;state=pending">5</a></td>`+
			`<td class="n"><a href="instances?level=alert&amp;m=build.Task&amp;state=pending">5</a></td>`+
			`<td class="n"><a href="instances?level=escalate&amp;m=build.Task&amp;state=pending">5</a></td></tr>`)
		want(t, body, `<tr data-state="cto_intervention"><td><a href="instances?m=build.Task&amp;state=cto_intervention">cto_intervention</a></td><td class="n">1</td>`)
		want(t, body, `<tr data-state="completed"><td><a href="instances?m=build.Task&amp;state=completed">completed</a> <span class="muted">(terminal)</span></td><td class="n">1</td>`)
		// The planning task has 2 failures in planning.
		want(t, body, `<td>failures <span class="muted">(per state)</span></td><td class="n">3</td><td>≥1: <b>1</b> ≥2: <b>1</b> ≥3: <b>0</b> </td>`)
		// The diagram: a box per state with its count, an arrow per move.
		want(t, body, `data-state="pending"><title>pending</title>`)
		if n := strings.Count(body, `<g class="state`); n != 12 {
			t.Errorf("the diagram has %d states, want 12", n)
		}
		want(t, body, `<text class="label"`)
		want(t, body, `>approach_rejected</text>`)
		// No effect in the build machine's outbox.
		want(t, body, `<table id="outbox"><tr><th>instance</th><th>effect</th><th>entry</th><th>key</th><th>attempts</th><th>claimed by</th><th>last error</th></tr>
<tr><td colspan="7" class="muted">none</td></tr></table>`)
	})

	t.Run("list past alert, paged", func(t *testing.T) {
		var ids []string
		link := "instances?m=" + m + "&level=alert"
		for page := 0; link != ""; page++ {
			if page > 5 {
				t.Fatal("more pages than instances")
			}
			body := Get(t, srv, link, 200)
			for _, x := range regexp.MustCompile(`<tr><td><a href="instance\?[^"]*">([^<]*)</a></td>`).FindAllStringSubmatch(body, -1) {
				ids = append(ids, x[1])
			}
			link = ""
			if x := regexp.MustCompile(`<a href="([^"]*)" id="next">`).FindStringSubmatch(body); x != nil {
				link = strings.ReplaceAll(x[1], "&amp;", "&")
			}
		}
		// The old pending tasks, and those in planning (30m) and under CTO review (1h) since
		// 09:05: in ID order; not the fresh task nor the completed one.
		if w := slices.Concat(s.Pending, []string{s.CTO, s.Planning}); !slices.Equal(ids, w) {
			t.Errorf("past alert: %q, want %q", ids, w)
		}
	})

	t.Run("list idle", func(t *testing.T) {
		// The fresh task was created at 10:50: idle for 5 minutes at 11:00, not for 30.
		body := Get(t, srv, "instances?m="+m+"&state=pending&idle=5m&after="+s.Pending[len(s.Pending)-1], 200)
		want(t, body, `>`+s.Fresh+`</a></td><td>pending</td>`)
		want(t, body, `nothing happened for <b>5m</b>`)
		body = Get(t, srv, "instances?m="+m+"&state=pending&idle=30m&after="+s.Pending[len(s.Pending)-1], 200)
		if strings.Contains(body, s.Fresh) {
			t.Errorf("the fresh task is listed idle for 30 minutes")
		}
		// The old ones are, a page at a time, the filter kept by the next page's link.
		body = Get(t, srv, "instances?m="+m+"&state=pending&idle=30m", 200)
		want(t, body, `>`+s.Pending[0]+`</a>`)
		want(t, body, `idle=30m`)
	})

	t.Run("list under CTO review", func(t *testing.T) {
		body := Get(t, srv, "instances?m="+m+"&state=cto_intervention", 200)
		want(t, body, `>`+s.CTO+`</a></td><td>cto_intervention</td>`)
		if strings.Contains(body, s.Planning) {
			t.Errorf("the planning task is listed under CTO review")
		}
	})

	t.Run("instance", func(t *testing.T) {
		body := Get(t, srv, "instance?m="+m+"&id="+s.CTO, 200)
		want(t, body, `<td id="state">cto_intervention</td>`)
		want(t, body, `<td class="actor">`+s.Actor+`</td><td>`+s.Reason+`</td>`)
		want(t, body, `<td>approach_rejected</td><td>planning → cto_intervention</td>`)
		// Its deadlines: cto_intervention's timeout levels, armed when it entered at 09:05.
		want(t, body, `<tr><td>level:warn <span class="warn">(due)</span></td><td>cto_intervention</td><td>2026-03-02 09:53:00Z (1h7m0s ago)</td>`)
		want(t, body, `<tr><td>level:escalate <span class="warn">(due)</span></td><td>cto_intervention</td><td>2026-03-02 10:35:00Z (25m0s ago)</td>`)
		// The fresh task's first level is still ahead.
		fresh := Get(t, srv, "instance?m="+m+"&id="+s.Fresh, 200)
		want(t, fresh, `<tr><td>level:warn</td><td>pending</td><td>2026-03-02 11:38:00Z (in 38m0s)</td>`)
		// Its path on the diagram, and where it is.
		want(t, body, `<g class="state visited current" data-state="cto_intervention">`)
		want(t, body, `<g class="state visited" data-state="planning">`)
		want(t, body, `<g class="edge taken"><title>approach_rejected</title>`)
		if strings.Contains(body, `data-state="completed"><title>completed</title><rect`) && strings.Contains(body, `visited" data-state="completed"`) {
			t.Error("completed is on the CTO task's path")
		}
		// The counters as the generated code replays them.
		body = Get(t, srv, "instance?m="+m+"&id="+s.Planning, 200)
		want(t, body, `<tr><td>failures</td><td>planning</td><td class="n">2</td></tr>`)
	})

	t.Run("not found", func(t *testing.T) {
		Get(t, srv, "instance?m="+m+"&id=nobody", 404)
		Get(t, srv, "machine?m=nothing", 404)
		Get(t, srv, "instances?m="+m+"&state=nowhere", 400)
	})

	t.Run("read-only", func(t *testing.T) {
		resp, err := http.Post(srv.URL+"/instance?m="+m+"&id="+s.CTO, "text/plain", nil)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusMethodNotAllowed {
			t.Errorf("POST: %s, want 405", resp.Status)
		}
	})

	t.Run("hostile", func(t *testing.T) {
		hm := url.QueryEscape(HostileMachine)
		pages := map[string]string{
			"overview": Get(t, srv, "", 200),
			"machine":  Get(t, srv, "machine?m="+hm, 200),
			"list":     Get(t, srv, "instances?m="+hm+"&state="+url.QueryEscape(HostileState), 200),
			"instance": Get(t, srv, "instance?m="+hm+"&id="+url.QueryEscape(HostileID), 200),
			"error":    Get(t, srv, "instance?m="+hm+"&id="+url.QueryEscape(HostileState), 404),
		}
		for name, body := range pages {
			for _, tag := range []string{"<script", "<img", "<iframe", "<svg onload", "<b onmouseover", `"><b>`} {
				if strings.Contains(body, tag) {
					t.Errorf("%s page: %q is markup:\n%s", name, tag, body)
				}
			}
		}
		esc := template.HTMLEscapeString
		want(t, pages["machine"], esc(HostileState))
		want(t, pages["machine"], esc(HostileEvent))
		want(t, pages["machine"], esc(HostileCounter))
		want(t, pages["list"], esc(HostileID))
		// The machine's outbox: the effect claimed once and not delivered, by its instance.
		want(t, pages["machine"], `<td>`+esc(HostileEffect)+`</td><td class="n">1.0</td><td><code>`+esc(HostileKey+"/0")+`</code></td><td class="n">1</td>`)
		// Which effects are failing, and why: the error of its last delivery.
		want(t, pages["machine"], `<tr class="failing"><td><a href=`)
		want(t, pages["machine"], `<span class="warn">`+esc(HostileError)+`</span> <span class="muted">at 2026-03-02 09:01:30Z</span>`)
		body := pages["instance"]
		for _, x := range []string{HostileID, HostileActor, HostileReason, HostileKey, HostileEffect, `worker-&#34;&gt;&lt;b&gt;`} {
			if !strings.Contains(body, esc(x)) && !strings.Contains(body, x) {
				t.Errorf("instance page: %q not shown", x)
			}
		}
		want(t, body, `alert(&#39;context&#39;)`)
		// The effect, claimed once and not delivered.
		want(t, body, `<td class="n">1.0</td><td><code>`+esc(HostileKey+"/0")+`</code></td><td class="n">1</td>`)
		want(t, body, `<span class="warn">`+esc(HostileError)+`</span>`)
		// The instances whose effects fail, listed and counted.
		want(t, Get(t, srv, "instances?m="+hm+"&effects=failing", 200), esc(HostileID))
		want(t, Get(t, srv, "instances?m="+hm+"&effects=pending", 200), esc(HostileID))
		want(t, pages["machine"], `owe effects, <a href="instances?effects=failing&amp;m=`+url.QueryEscape(HostileMachine)+`" class="warn">1</a> of them failing.`)
		Get(t, srv, "instances?m="+hm+"&effects=sometimes", 400)
		Get(t, srv, "instances?m="+hm+"&idle=forever", 400)
		want(t, body, `<tr><td>level:warn <span class="warn">(due)</span></td>`)
	})
}

func want(t *testing.T, body, s string) {
	t.Helper()
	if !strings.Contains(body, s) {
		t.Errorf("the page lacks %s\n--- page:\n%s", s, body)
	}
}
