package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"math/rand/v2"
	"net/http"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fsmgen/fsmgen/internal/ir"
	"github.com/fsmgen/fsmgen/preview"
)

// TestPreviewReplays: the fsmgen sim command the preview prints replays the session the
// page ran, exactly: random sessions on every seed and on statecharts (roles, policies,
// failing actions, hook guards changing from step to step, events refused on the way and
// at the end), each run by the preview's simulator and by sim with the printed arguments
// and --json, the steps, refusal, final state, configuration and counters compared.
func TestPreviewReplays(t *testing.T) {
	files, _ := filepath.Glob("../../examples/*/*.fsm.yaml")
	charts, _ := filepath.Glob("../lower/testdata/build/*.fsm.yaml")
	files = append(files, charts...)
	files = append(files, kitchen, "../mermaid/testdata/studio.fsm.yaml", "../gogen/testdata/hostile.fsm.yaml")
	sets := map[string][]preview.Setting{
		"approval.fsm.yaml": {{Field: "assignee_ids", Value: `["ana"]`}, {Field: "work_plan", Value: `["a","b","c"]`}, {Field: "deliverable", Value: "report"}, {Field: "review_checklist", Value: `["ok"]`}},
	}
	sessions, chartSessions, skipped := 0, 0, 0
	for _, path := range files {
		m, ds, err := loadFile(path)
		if err != nil || ds.HasErrors() {
			continue
		}
		rng := rand.New(rand.NewPCG(uint64(len(path)), 7))
		for n := 0; n < 25; n++ {
			s := randomSession(rng, m)
			s.Set = sets[filepath.Base(path)]
			// Grow the session a step at a time, as the page does, choosing among the
			// events the last run permits (and now and then another).
			var r *preview.Run
			for k := rng.IntN(12); k >= 0; k-- {
				r = preview.Simulate(m, path, s)
				var events []string
				if rng.IntN(5) > 0 && len(r.Allowed) > 0 {
					events = r.Allowed
				} else {
					events = append(r.Allowed, r.Refused...)
				}
				if len(events) == 0 {
					break
				}
				s = r.Session
				s.Now = randomGuards(rng, m)
				s.Steps = append(s.Steps, preview.Try{Event: events[rng.IntN(len(events))], Guards: s.Now})
			}
			r = preview.Simulate(m, path, s)
			if len(r.Unreplayable) > 0 {
				// Only a last refusal of an invalid payload, which sim does not check: the
				// command replays the rest.
				skipped++
			}
			sessions++
			if m.Chart != nil {
				chartSessions++
			}
			comparePreview(t, path, r)
		}
	}
	if sessions < 300 || chartSessions < 100 {
		t.Errorf("%d sessions replayed, %d of statecharts", sessions, chartSessions)
	}
	t.Logf("%d sessions replayed, %d of statecharts; %d ending with a payload refusal, which sim does not check", sessions, chartSessions, skipped)
}

func randomSession(rng *rand.Rand, m *ir.Machine) preview.Session {
	var s preview.Session
	if len(m.Roles) > 0 && rng.IntN(4) > 0 {
		s.Role = m.Roles[rng.IntN(len(m.Roles))].Name
	}
	for _, p := range m.Policies {
		if rng.IntN(2) == 0 {
			s.Policies = append(s.Policies, p.Name)
		}
	}
	for _, a := range m.Actions {
		if a.MayFail && rng.IntN(3) == 0 {
			s.Fail = append(s.Fail, a.Name)
		}
	}
	s.Guards = randomGuards(rng, m)
	s.Now = s.Guards
	return s
}

func randomGuards(rng *rand.Rand, m *ir.Machine) []string {
	var out []string
	for _, g := range m.Guards {
		if g.Kind == ir.Hook && rng.IntN(2) == 0 {
			out = append(out, g.Name)
		}
	}
	return out
}

// comparePreview runs the command r prints (with --json) and compares its result with r.
func comparePreview(t *testing.T, path string, r *preview.Run) {
	t.Helper()
	if r.Args[0] != "sim" || r.Args[1] != path || r.Command != "fsmgen "+shellJoinForTest(r.Args) {
		t.Fatalf("command %q, args %q", r.Command, r.Args)
	}
	code, out, stderr := run(t, append(r.Args, "--json")...)
	var res SimResult
	if err := json.Unmarshal([]byte(out), &res); err != nil || stderr != "" {
		t.Fatalf("%s: exit %d, %v, stderr %s", r.Command, code, err, stderr)
	}
	fail := func(format string, args ...any) {
		t.Helper()
		b, _ := json.MarshalIndent(r, "", " ")
		t.Fatalf("%s\n%s: "+format+"\npreview run:\n%s\nsim:\n%s", append([]any{r.Command, path}, append(args, b, out)...)...)
	}
	var accepted []preview.Entry
	for _, e := range r.Log {
		if e.Accepted {
			accepted = append(accepted, e)
		}
	}
	if len(accepted) != len(res.Steps) {
		fail("%d steps accepted, sim %d", len(accepted), len(res.Steps))
	}
	for i, e := range accepted {
		st := res.Steps[i]
		if e.Event != st.Event || e.From != st.From || e.To != st.To || e.Line != st.Line || e.Limit != st.Limit ||
			!reflect.DeepEqual(e.Wrote, st.Wrote) || !slices.Equal(e.Config, st.Configuration) || !slices.Equal(e.Actions, st.Actions) {
			fail("step %d: %+v, sim %+v", i, e, st)
		}
	}
	var last *preview.Refusal
	if n := len(r.Log); n > 0 && r.Log[n-1].Refusal != nil && r.Log[n-1].Refusal.Reason != "payload" {
		last = r.Log[n-1].Refusal
	}
	if r.Start != nil && r.Start.Refusal != nil {
		last = r.Start.Refusal
	}
	switch rj := res.Rejected; {
	case (rj == nil) != (last == nil):
		fail("refusal %+v, sim %+v", last, rj)
	case rj != nil:
		if rj.Reason != last.Reason || rj.Message != last.Message || rj.State != last.State || !slices.Equal(rj.AllowedTransitions, last.Allowed) ||
			!slices.Equal(rj.Actions, last.Actions) || !reflect.DeepEqual(rj.Errors, last.Errors) {
			fail("refusal %+v, sim %+v", last, rj)
		}
	}
	config := r.Config
	if r.Start != nil && r.Start.Refusal != nil {
		config = nil // sim prints no configuration for a statechart that could not start
	}
	if res.Final != r.State || !slices.Equal(res.Configuration, config) {
		fail("final %s %v, sim %s %v", r.State, r.Config, res.Final, res.Configuration)
	}
	a, _ := json.Marshal(r.Counters)
	b, _ := json.Marshal(res.Counters)
	if !bytes.Equal(a, b) {
		fail("counters %s, sim %s", a, b)
	}
}

// shellJoinForTest quotes as a POSIX shell reads it back (the preview's quoting).
func shellJoinForTest(args []string) string {
	var out []string
	for _, a := range args {
		if regexp.MustCompile(`^[A-Za-z0-9_@%+=:,./-]+$`).MatchString(a) {
			out = append(out, a)
		} else {
			out = append(out, "'"+strings.ReplaceAll(a, "'", `'\''`)+"'")
		}
	}
	return strings.Join(out, " ")
}

// syncBuffer is a bytes.Buffer that the command writes while the test reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}
func (s *syncBuffer) String() string { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

// TestPreviewVerb: fsmgen preview serves the page on loopback and prints its URL, until
// interrupted; it refuses another address, no spec and an unreadable one.
func TestPreviewVerb(t *testing.T) {
	for _, c := range []struct {
		args   []string
		stderr string
	}{
		{[]string{"--listen", "0.0.0.0:0", kitchen}, "fsmgen: --listen: 0.0.0.0:0 is not a loopback address: the preview has no authentication; serve it on 127.0.0.1, [::1] or localhost\n"},
		{[]string{"--listen", "192.168.1.1:80", kitchen}, "fsmgen: --listen: 192.168.1.1:80 is not a loopback address: the preview has no authentication; serve it on 127.0.0.1, [::1] or localhost\n"},
		{nil, "fsmgen: preview needs at least one spec file\n"},
		{[]string{"missing.fsm.yaml"}, "fsmgen: missing.fsm.yaml: no such file or directory\n"},
	} {
		code, _, stderr := run(t, append([]string{"preview"}, c.args...)...)
		if code != ExitUsage || stderr != c.stderr {
			t.Errorf("preview %q: exit %d, stderr %q; want 2, %q", c.args, code, stderr, c.stderr)
		}
	}

	ctx, cancel := context.WithCancel(context.Background())
	var stdout, stderr syncBuffer
	done := make(chan int, 1)
	go func() { done <- Run(ctx, []string{"preview", kitchen}, strings.NewReader(""), &stdout, &stderr) }()
	re := regexp.MustCompile(`^fsmgen preview: serving 1 spec\(s\) at (http://127\.0\.0\.1:[0-9]+/)\n$`)
	var url string
	for i := 0; i < 200 && url == ""; i++ {
		if m := re.FindStringSubmatch(stdout.String()); m != nil {
			url = m[1]
		}
		time.Sleep(25 * time.Millisecond)
	}
	if url == "" {
		cancel()
		t.Fatalf("no URL printed: %q %q", stdout.String(), stderr.String())
	}
	client := &http.Client{Timeout: 30 * time.Second}
	resp, err := client.Get(url + "api/specs")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(body), `"path":"`+kitchen+`"`) {
		t.Errorf("/api/specs: %s", body)
	}
	// A page waiting for a change does not hold up the interrupt (the server's shutdown
	// would time out, and fsmgen exit 2).
	waiting := make(chan error, 1)
	go func() {
		resp, err := client.Get(url + "api/wait?gen=0")
		if err == nil {
			resp.Body.Close()
		}
		waiting <- err
	}()
	time.Sleep(100 * time.Millisecond)
	cancel()
	select {
	case code := <-done:
		if code != ExitOK || stderr.String() != "" {
			t.Errorf("exit %d, stderr %q", code, stderr.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatal("fsmgen preview did not stop when interrupted")
	}
}
