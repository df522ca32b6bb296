package preview

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fsmgen/fsmgen/internal/mermaid"
	"github.com/fsmgen/fsmgen/internal/testtool"
	"golang.org/x/tools/txtar"
)

// TestMermaidCopy: the embedded mermaid.min.js and its licence are those of the mermaid
// package the repository's lockfile installs (internal/mermaid/testdata/mermaid-check),
// byte for byte, so that upgrading the lockfile without refreshing the copy (go generate
// ./preview) fails.
func TestMermaidCopy(t *testing.T) {
	dir := filepath.Join(testtool.Root(t), filepath.FromSlash(testtool.MermaidCheckDir))
	testtool.NodePackage(t, dir, "mermaid")
	pkg := filepath.Join(dir, "node_modules", "mermaid")
	want, err := os.ReadFile(filepath.Join(pkg, "dist", "mermaid.min.js"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(MermaidJS(), want) {
		t.Errorf("preview/assets/mermaid.min.js.gz (%d bytes decompressed) is not %s/dist/mermaid.min.js (%d bytes): run go generate ./preview", len(MermaidJS()), pkg, len(want))
	}
	license, err := os.ReadFile(filepath.Join(pkg, "LICENSE"))
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := assets.ReadFile("assets/mermaid-LICENSE"); !bytes.Equal(got, license) {
		t.Error("preview/assets/mermaid-LICENSE is not the package's LICENSE: run go generate ./preview")
	}
	var meta struct{ Version, License string }
	b, err := os.ReadFile(filepath.Join(pkg, "package.json"))
	if err == nil {
		err = json.Unmarshal(b, &meta)
	}
	if err != nil || meta.Version != MermaidVersion || meta.License != "MIT" {
		t.Errorf("the installed mermaid is %s (%s, %v); MermaidVersion says %s, the README says MIT", meta.Version, meta.License, err, MermaidVersion)
	}
}

func newServer(t *testing.T, specs map[string]string) (*Server, string) {
	t.Helper()
	dir := t.TempDir()
	var paths []string
	for name, body := range specs {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	s, err := New(paths...)
	if err != nil {
		t.Fatal(err)
	}
	return s, dir
}

const door = `version: 1
machine: Door
package: door
events: { open: {}, close: {} }
guards: { unlocked: {} }
states:
  closed: { initial: true }
  opened: {}
transitions:
  - { from: closed, on: open, to: opened, if: unlocked }
  - { from: opened, on: close, to: closed }
`

func get(t *testing.T, h http.Handler, url string, header ...string) *httptest.ResponseRecorder {
	t.Helper()
	r := httptest.NewRequest("GET", url, nil)
	for i := 0; i+1 < len(header); i += 2 {
		r.Header.Set(header[i], header[i+1])
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

// TestServeMermaid: mermaid.min.js is served compressed to a client that takes gzip, and
// decompressed to one that does not, the same bytes either way.
func TestServeMermaid(t *testing.T) {
	s, _ := newServer(t, map[string]string{"door.fsm.yaml": door})
	w := get(t, s, "http://127.0.0.1/assets/mermaid.min.js", "Accept-Encoding", "gzip, br")
	if w.Code != 200 || w.Header().Get("Content-Encoding") != "gzip" || !strings.HasPrefix(w.Header().Get("Content-Type"), "text/javascript") {
		t.Fatalf("gzip: %d %v", w.Code, w.Header())
	}
	zr, err := gzip.NewReader(w.Body)
	if err != nil {
		t.Fatal(err)
	}
	unzipped, _ := io.ReadAll(zr)
	plain := get(t, s, "http://127.0.0.1/assets/mermaid.min.js")
	if plain.Header().Get("Content-Encoding") != "" || !bytes.Equal(plain.Body.Bytes(), unzipped) || len(unzipped) < 1<<20 {
		t.Errorf("identity: %v, %d bytes; gzip gave %d", plain.Header(), plain.Body.Len(), len(unzipped))
	}
	if w.Header().Get("ETag") == plain.Header().Get("ETag") {
		t.Error("the compressed and the plain file share an ETag")
	}
	if got := get(t, s, "http://127.0.0.1/assets/mermaid-LICENSE"); !strings.Contains(got.Body.String(), "MIT License") {
		t.Errorf("licence: %q", got.Body.String())
	}
	if got := get(t, s, "http://127.0.0.1/assets/../preview.go"); got.Code == 200 {
		t.Errorf("a path outside the assets: %d", got.Code)
	}
}

// TestLoopbackOnly: a request addressed to another host (a DNS name rebound to 127.0.0.1)
// is refused; the page sets a policy that runs no script but its own.
func TestLoopbackOnly(t *testing.T) {
	s, _ := newServer(t, map[string]string{"door.fsm.yaml": door})
	for host, code := range map[string]int{"127.0.0.1:8080": 200, "localhost:1": 200, "[::1]:9": 200, "evil.example:8080": 421, "10.0.0.1": 421} {
		w := get(t, s, "http://"+host+"/")
		if w.Code != code {
			t.Errorf("Host %s: %d, want %d", host, w.Code, code)
		}
	}
	w := get(t, s, "http://127.0.0.1/")
	if csp := w.Header().Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self'") || strings.Contains(csp, "unsafe-eval") {
		t.Errorf("policy %q", csp)
	}
}

func simulate(t *testing.T, h http.Handler, i int, sess Session) (*Run, int) {
	t.Helper()
	body, _ := json.Marshal(SimRequest{Session: sess})
	r := httptest.NewRequest("POST", "http://127.0.0.1/api/sim?i="+strconv.Itoa(i), bytes.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	if w.Code != 200 {
		return nil, w.Code
	}
	var a SimAnswer
	if err := json.Unmarshal(w.Body.Bytes(), &a); err != nil {
		t.Fatalf("%v: %s", err, w.Body.String())
	}
	return a.Run, w.Code
}

// TestFollowsTheFile: a change of the file is taken at the next poll once the file has
// held still for settleTime: a new version, its findings, the machine of the last clean
// version kept while it has errors, and waiters woken.
func TestFollowsTheFile(t *testing.T) {
	s, dir := newServer(t, map[string]string{"door.fsm.yaml": door})
	path := filepath.Join(dir, "door.fsm.yaml")
	woke := make(chan SpecList, 1)
	go func() {
		w := get(t, s, "http://127.0.0.1/api/wait?gen=0")
		var l SpecList
		json.Unmarshal(w.Body.Bytes(), &l)
		woke <- l
	}()
	time.Sleep(50 * time.Millisecond)
	if s.Poll(false) {
		t.Fatal("Poll saw a change of an unchanged file")
	}
	os.WriteFile(path, []byte(strings.Replace(door, "to: closed }", "to: closd }", 1)), 0o644)
	time.Sleep(settleTime + 10*time.Millisecond)
	if !s.Poll(true) {
		t.Fatal("Poll missed the change")
	}
	select {
	case l := <-woke:
		if l.Gen != 1 || l.Specs[0].Version != 2 {
			t.Errorf("woken with %+v", l)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the waiter was not woken")
	}
	var v SpecView
	json.Unmarshal(get(t, s, "http://127.0.0.1/api/spec?i=0").Body.Bytes(), &v)
	if !v.Errors || !v.Stale || v.Machine == nil || len(v.Findings) != 1 || v.Findings[0].Line != 11 || !strings.Contains(v.Findings[0].Message, `"closd"`) {
		t.Errorf("after a typo: %+v", v)
	}
	if r, code := simulate(t, s, 0, Session{Steps: []Try{{Event: "close"}}}); code != 200 || r.Log[0].Refusal == nil {
		t.Errorf("the last clean machine does not run: %d %+v", code, r)
	}
	os.Remove(path)
	s.Poll(false)
	json.Unmarshal(get(t, s, "http://127.0.0.1/api/spec?i=0").Body.Bytes(), &v)
	if !v.Errors || !strings.Contains(v.Findings[0].Message, "cannot read the spec") {
		t.Errorf("a removed file: %+v", v.Findings)
	}
}

// TestSessionKeptAcrossEdits: a session whose names the new spec drops is run with what
// is left, and says what it dropped.
func TestSessionKeptAcrossEdits(t *testing.T) {
	s, _ := newServer(t, map[string]string{"door.fsm.yaml": door})
	sess := Session{Guards: []string{"unlocked", "gone"}, Now: []string{"unlocked"}, Role: "nobody", Policies: []string{"p"}, Fail: []string{"x"},
		Set: []Setting{{Field: "f", Value: "1"}}, Steps: []Try{{Event: "open", Guards: []string{"unlocked"}}, {Event: "slam"}, {Event: "close"}}}
	r, code := simulate(t, s, 0, sess)
	if code != 200 {
		t.Fatal(code)
	}
	if r.State != "closed" || len(r.Log) != 3 || r.Log[1].Refusal == nil || r.Log[1].Refusal.Reason != "unknown_event" || !r.Log[2].Accepted {
		t.Errorf("run %+v", r)
	}
	if len(r.Notes) != 5 || r.Session.Role != "" || len(r.Session.Guards) != 1 {
		t.Errorf("notes %q, session %+v", r.Notes, r.Session)
	}
	// The start's guards are the base; the steps that differ say so.
	if want := "fsmgen sim " + shellQuote(s.specs[0].path) + " --guard unlocked=true --guard unlocked@1=false --events open,close"; r.Command != want {
		t.Errorf("command %q, want %q", r.Command, want)
	}
	if r, _ := simulate(t, s, 0, Session{Steps: []Try{{Event: "open"}}}); !joined(r.Allowed, "") || r.Log[0].Refusal.Reason != "guard" || !strings.HasSuffix(r.Command, "--events open") {
		t.Errorf("a last refusal is replayed: %+v", r)
	}
}

func joined(got []string, want string) bool { return strings.Join(got, ",") == want }

// corpus returns the specs the project keeps as hostile or odd input: the checker's cases
// and fuzz corpus (internal/lower), the generator's test specs (internal/gogen), the
// diagram's (internal/mermaid), the seeds, and the kinds of input the loader's robustness
// tests make (spec).
func corpus(t *testing.T) map[string][]byte {
	t.Helper()
	root := testtool.Root(t)
	out := map[string][]byte{}
	glob := func(pattern string) []string {
		m, err := filepath.Glob(filepath.Join(root, filepath.FromSlash(pattern)))
		if err != nil || len(m) == 0 {
			t.Fatalf("no files %s (%v)", pattern, err)
		}
		return m
	}
	for _, pattern := range []string{"internal/lower/testdata/build/*.fsm.yaml", "internal/gogen/testdata/*.fsm.yaml", "internal/mermaid/testdata/*.fsm.yaml", "examples/*/*.fsm.yaml"} {
		for _, p := range glob(pattern) {
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			out[p] = b
		}
	}
	for _, p := range glob("internal/lower/testdata/check/*.txtar") {
		a, err := txtar.ParseFile(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range a.Files {
			if strings.HasSuffix(f.Name, ".yaml") {
				out[p+"/"+f.Name] = f.Data
			}
		}
	}
	for _, p := range glob("internal/lower/testdata/fuzz/FuzzLoad/*") {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(string(b), "\n") {
			if q, ok := strings.CutPrefix(line, "[]byte("); ok {
				s, err := strconv.Unquote(strings.TrimSuffix(q, ")"))
				if err != nil {
					t.Fatalf("%s: %v", p, err)
				}
				out[p] = []byte(s)
			}
		}
	}
	// The loader's hostile inputs (spec/robust_test.go): an alias bomb, nesting past the
	// limits, a file past the size limit, lines of a megabyte, NUL, invalid UTF-8, binary
	// junk.
	const header = "version: 1\nmachine: M\npackage: m\nstates:\n  a: { initial: true, terminal: true }\ntransitions: []\n"
	var bomb strings.Builder
	bomb.WriteString(header + "x:\n  l0: &l0 [a, a, a, a, a, a, a, a, a, a]\n")
	for i := 1; i < 30; i++ {
		bomb.WriteString("  l" + strconv.Itoa(i) + ": &l" + strconv.Itoa(i) + " [")
		for j := 0; j < 10; j++ {
			if j > 0 {
				bomb.WriteString(", ")
			}
			bomb.WriteString("*l" + strconv.Itoa(i-1))
		}
		bomb.WriteString("]\n")
	}
	out["spec: alias bomb"] = []byte(bomb.String())
	out["spec: nesting"] = []byte(header + "x: " + strings.Repeat("[", 20000) + strings.Repeat("]", 20000) + "\n")
	out["spec: too large"] = []byte(header + "doc: |\n" + strings.Repeat("  "+strings.Repeat("x", 1000)+"\n", 17000))
	out["spec: long line"] = []byte(header + "doc: " + strings.Repeat("<script>", 1<<17) + "\n")
	out["spec: NUL"] = []byte("version: 1\nmachine: M\x00\n")
	out["spec: invalid UTF-8"] = []byte("version: 1\nmachine: \xc3\x28\n")
	out["spec: PNG"] = []byte{0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n', 0, 0, 0, 0x0d}
	out["spec: empty"] = []byte{}
	return out
}

// TestCorpora: every spec of the corpora is served: its findings and, when it checks
// clean, its machine and a session that tries every event in every state it reaches,
// with every hook guard on and then off, every role; nothing fails, and no answer holds a
// character the page could take for markup (JSON escapes <, > and &).
func TestCorpora(t *testing.T) {
	specs := corpus(t)
	if len(specs) < 200 {
		t.Fatalf("only %d specs in the corpora", len(specs))
	}
	machines := 0
	for name, data := range specs {
		dir := t.TempDir()
		p := filepath.Join(dir, "spec.fsm.yaml")
		os.WriteFile(p, data, 0o644)
		s, err := New(p)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		w := get(t, s, "http://127.0.0.1/api/spec?i=0")
		if w.Code != 200 || strings.ContainsAny(w.Body.String(), "<>") {
			t.Errorf("%s: /api/spec: %d, or markup in %.300s", name, w.Code, w.Body.String())
			continue
		}
		var v SpecView
		if err := json.Unmarshal(w.Body.Bytes(), &v); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if v.Machine == nil {
			continue
		}
		machines++
		var hooks, roles []string
		for _, h := range v.Machine.Hooks {
			hooks = append(hooks, h.Name)
		}
		for _, r := range v.Machine.Roles {
			roles = append(roles, r.Name)
		}
		for _, role := range append([]string{""}, roles...) {
			for _, guards := range [][]string{hooks, nil} {
				sess := Session{Role: role, Guards: guards, Now: guards}
				for round := 0; round < 3; round++ {
					for _, e := range v.Machine.Events {
						sess.Steps = append(sess.Steps, Try{Event: e.Name, Guards: guards})
					}
				}
				r, code := simulate(t, s, 0, sess)
				if code != 200 || r == nil {
					t.Errorf("%s: /api/sim: %d", name, code)
					continue
				}
				if len(r.Log) != len(sess.Steps) || r.Command == "" || len(r.Active) == 0 {
					t.Errorf("%s: run %+v", name, r)
				}
			}
		}
	}
	if machines < 50 {
		t.Errorf("only %d specs of the corpora checked clean", machines)
	}
	t.Logf("%d specs, %d machines simulated", len(specs), machines)
}

// TestUnreplayable: what the command cannot say is said: a hook guard whose name sim's
// --guard reads otherwise (x@1=true is x at step 1; x@1@0=true reads right), and a last
// refusal of a payload.
func TestUnreplayable(t *testing.T) {
	s, _ := newServer(t, map[string]string{"at.fsm.yaml": `version: 1
machine: At
package: at
events:
  go: { payload: { n: { type: int, min: 1 } } }
guards: { "x@1": {} }
states:
  a: { initial: true }
  b: {}
transitions:
  - { from: a, on: go, to: b, if: "x@1" }
  - { from: b, on: go, to: a }
`})
	r, _ := simulate(t, s, 0, Session{Guards: []string{"x@1"}, Steps: []Try{{Event: "go", Guards: []string{"x@1"}, Payload: []Setting{{Field: "n", Value: "2"}}}, {Event: "go", Payload: []Setting{{Field: "n", Value: "3"}}}}})
	if r.State != "a" || len(r.Unreplayable) != 1 || !strings.Contains(r.Unreplayable[0], `"x@1" holding from the start`) || !strings.Contains(r.Command, "--guard x@1@1=false") {
		t.Errorf("state %s, unreplayable %q, %s", r.State, r.Unreplayable, r.Command)
	}
	r, _ = simulate(t, s, 0, Session{Steps: []Try{{Event: "go", Payload: []Setting{{Field: "n", Value: "0"}}}}})
	if r.Log[0].Refusal == nil || r.Log[0].Refusal.Reason != "payload" || len(r.Unreplayable) != 1 || strings.Contains(r.Command, "--events") {
		t.Errorf("payload refusal: %+v, %q, %s", r.Log[0].Refusal, r.Unreplayable, r.Command)
	}
	r, _ = simulate(t, s, 0, Session{Steps: []Try{{Event: "go", Payload: []Setting{{Field: "n", Value: "many"}}}}})
	if r.InputError == "" || len(r.Session.Steps) != 0 || len(r.Log) != 0 {
		t.Errorf("a payload that is not an int: %+v", r)
	}
}

// TestRefusedStaysATry: an event refused when tried is not fired when the session runs
// again under settings that would accept it; it shows as skipped, and the command leaves
// it out.
func TestRefusedStaysATry(t *testing.T) {
	s, _ := newServer(t, map[string]string{"door.fsm.yaml": door})
	r, _ := simulate(t, s, 0, Session{Steps: []Try{{Event: "open"}}})
	if !r.Session.Steps[0].Refused || r.Log[0].Refusal == nil {
		t.Fatalf("the refused try is not marked: %+v", r.Session.Steps)
	}
	sess := r.Session
	sess.Steps[0].Guards = []string{"unlocked"}
	sess.Now = []string{"unlocked"}
	sess.Steps = append(sess.Steps, Try{Event: "open", Guards: []string{"unlocked"}})
	r, _ = simulate(t, s, 0, sess)
	if !r.Log[0].Skipped || !r.Log[1].Accepted || r.State != "opened" || !strings.HasSuffix(r.Command, " --guard unlocked@0=true --events open") {
		t.Errorf("log %+v, state %s, command %s", r.Log, r.State, r.Command)
	}
}

// TestLocal: the diagram around each state of each seed and of the project's flat test
// specs is valid Mermaid (the real parser, with the checker's strict rules); it holds the
// state, and every arrow into and out of it, and no other arrow.
func TestLocal(t *testing.T) {
	check := testtool.MermaidCheck(t)
	root := testtool.Root(t)
	files, _ := filepath.Glob(filepath.Join(root, "examples", "*", "*.fsm.yaml"))
	more, _ := filepath.Glob(filepath.Join(root, "internal", "gogen", "testdata", "*.fsm.yaml"))
	tmp := t.TempDir()
	var out []string
	for _, path := range append(files, more...) {
		data, _ := os.ReadFile(path)
		m, _ := load(path, data)
		if m == nil || m.Chart != nil {
			continue
		}
		full := mermaid.StateDiagram(m)
		for _, s := range m.States {
			id := StateID(s)
			local := Local(full, []string{id})
			for _, l := range strings.Split(full, "\n") {
				arrow := strings.Contains(l, " --> ")
				mine := strings.HasPrefix(l, "    "+id+" --> ") || strings.Contains(l, " --> "+id+" ") || strings.HasSuffix(l, " --> "+id)
				if has := strings.Contains(local, l+"\n"); arrow && mine && !has {
					t.Errorf("%s around %s: lacks %q", path, s.Name, l)
				}
			}
			f := filepath.Join(tmp, strconv.Itoa(len(out))+".mmd")
			os.WriteFile(f, []byte(local), 0o644)
			out = append(out, f)
		}
	}
	if len(out) < 100 {
		t.Fatalf("only %d local diagrams", len(out))
	}
	cmd := exec.Command("node", append([]string{check, "--strict", "--quiet", "--expect", "stateDiagram"}, out...)...)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("check.mjs: %v\n%s", err, b)
	}
}

// TestWaitsForTheWriteToEnd: a change is not taken while the file was modified less than
// settleTime ago, however often the page polls (an editor writing in place truncates the
// file first: the empty spec must not be shown), and is taken once it held still.
func TestWaitsForTheWriteToEnd(t *testing.T) {
	s, dir := newServer(t, map[string]string{"door.fsm.yaml": door})
	path := filepath.Join(dir, "door.fsm.yaml")
	if err := os.WriteFile(path, nil, 0o644); err != nil { // truncated, not yet filled
		t.Fatal(err)
	}
	// Its modification time stays just now while the page polls.
	taken := false
	for end := time.Now().Add(3 * settleTime); time.Now().Before(end) && !taken; time.Sleep(settleTime / 10) {
		now := time.Now()
		if err := os.Chtimes(path, now, now); err != nil {
			t.Fatal(err)
		}
		if taken = s.Poll(true); taken && time.Since(now) < settleTime { // else this machine stalled
			t.Fatal("Poll took a file modified just now")
		}
	}
	time.Sleep(settleTime + 10*time.Millisecond)
	if !s.Poll(false) && !taken {
		t.Fatal("Poll missed the change once the file held still")
	}
	var v SpecView
	json.Unmarshal(get(t, s, "http://127.0.0.1/api/spec?i=0").Body.Bytes(), &v)
	if !v.Errors || !strings.Contains(v.Findings[0].Message, "empty") {
		t.Errorf("an emptied file, once still: %+v", v.Findings)
	}
}
