package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const kitchen = "../interp/testdata/kitchen.fsm.yaml"

func run(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = Run(context.Background(), args, strings.NewReader(""), &out, &errb)
	return code, out.String(), errb.String()
}

func TestCheckExitCodes(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.fsm.yaml")
	os.WriteFile(bad, []byte("version: 1\nmachine: X\npackage: x\nstates: { a: { initial: true } }\ntransitions: []\n"), 0o644)

	if code, out, _ := run(t, "check", kitchen); code != ExitOK || out != "" {
		t.Errorf("clean spec: code %d, output %q", code, out)
	}
	code, out, _ := run(t, "check", bad)
	if code != ExitFindings || !strings.Contains(out, bad+":4:11: error: non-terminal state \"a\" has no outgoing transition") {
		t.Errorf("bad spec: code %d, output %q", code, out)
	}
	code, out, _ = run(t, "check", "--format", "json", bad)
	var list []map[string]any
	if code != ExitFindings || json.Unmarshal([]byte(out), &list) != nil || len(list) != 1 || list[0]["severity"] != "error" {
		t.Errorf("json: code %d, output %q", code, out)
	}
	if code, out, _ = run(t, "check", "--format", "github-actions", bad); !strings.HasPrefix(out, "::error file=") {
		t.Errorf("github-actions: code %d, output %q", code, out)
	}
	if code, _, errs := run(t, "check", filepath.Join(dir, "missing.yaml")); code != ExitUsage || !strings.Contains(errs, "missing.yaml") {
		t.Errorf("missing file: code %d, stderr %q", code, errs)
	}
	if code, _, _ := run(t, "check"); code != ExitUsage {
		t.Errorf("no files: code %d", code)
	}
	if code, _, _ := run(t, "check", "--format", "xml", kitchen); code != ExitUsage {
		t.Errorf("bad format: code %d", code)
	}
	if code, _, _ := run(t, "frobnicate"); code != ExitUsage {
		t.Errorf("unknown verb: code %d", code)
	}
}

func TestSchemaAndVersion(t *testing.T) {
	code, out, _ := run(t, "schema")
	var v map[string]any
	if code != ExitOK || json.Unmarshal([]byte(out), &v) != nil || v["$id"] == nil {
		t.Errorf("schema: code %d", code)
	}
	if code, out, _ := run(t, "version"); code != ExitOK || !strings.HasPrefix(out, "fsmgen ") {
		t.Errorf("version: %d %q", code, out)
	}
}

func TestSimText(t *testing.T) {
	code, out, errs := run(t, "sim", kitchen, "--as", "cook", "--set", `menu=["a","b"]`, "--set", "manager=ana",
		"--events", "open_up,order,cook,burn,burn,burn,inspected,pause,resume", "--guard", "hungry=true")
	want := `start: closed
0: open_up: closed -> open
1: order: open -> open
2: cook: open -> cooking
3: burn: cooking -> cooking
4: burn: cooking -> cooking
5: burn: cooking -> inspection
   burns reached its limit of 3: cooking -> cooking went to inspection instead
6: inspected: inspection -> cooking
7: pause: cooking -> paused
8: resume: paused -> cooking
final: cooking
counter burns: {}
counter orders: 1
counter retries: 0
counter visits: 0
`
	if code != ExitOK || out != want {
		t.Errorf("code %d stderr %q\n--- got\n%s--- want\n%s", code, errs, out, want)
	}
}

func TestSimJSONRejection(t *testing.T) {
	code, out, _ := run(t, "sim", kitchen, "--json", "--as", "chef", "--events", "open_up")
	if code != ExitFindings {
		t.Fatalf("code %d, want %d", code, ExitFindings)
	}
	var res SimResult
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err)
	}
	r := res.Rejected
	if r == nil || r.Reason != "artifacts" || r.Index != 0 || r.State != "closed" || len(r.Errors) != 2 ||
		r.Errors[0].Field != "menu" || r.Errors[0].Message != "A menu has 2 or 3 dishes" {
		t.Fatalf("rejection = %+v", r)
	}
	if res.Final != "closed" || len(res.Steps) != 0 {
		t.Errorf("final %s steps %v", res.Final, res.Steps)
	}
}

func TestSimPerStepGuardsAndUnknownEvent(t *testing.T) {
	base := []string{"sim", kitchen, "--as", "cook", "--set", `menu=["a","b"]`, "--set", "manager=ana", "--json",
		"--events", "open_up,order,cook,serve"}
	code, out, _ := run(t, append(base, "--guard", "hungry=true", "--guard", "fancy@3=true")...)
	var res SimResult
	json.Unmarshal([]byte(out), &res)
	if code != ExitOK || res.Final != "serving" {
		t.Errorf("per-step guard: code %d final %q", code, res.Final)
	}
	code, out, _ = run(t, "sim", kitchen, "--json", "--event", "opne_up")
	json.Unmarshal([]byte(out), &res)
	if code != ExitFindings || res.Rejected == nil || res.Rejected.Reason != "unknown_event" ||
		!strings.Contains(res.Rejected.Message, `did you mean "open_up"`) {
		t.Errorf("unknown event: code %d %+v", code, res.Rejected)
	}
}

func TestSimUsageErrors(t *testing.T) {
	for name, args := range map[string][]string{
		"unknown guard": {"sim", kitchen, "--events", "open_up", "--guard", "hungy=true"},
		"bad guard":     {"sim", kitchen, "--events", "open_up", "--guard", "hungry"},
		"unknown role":  {"sim", kitchen, "--events", "open_up", "--as", "cok"},
		"unknown field": {"sim", kitchen, "--events", "open_up", "--set", "mnu=[]"},
		"wrong type":    {"sim", kitchen, "--events", "open_up", "--set", "menu=3"},
		"bad enum":      {"sim", kitchen, "--events", "open_up", "--set", "level=frantic"},
		"two files":     {"sim", kitchen, kitchen, "--events", "open_up"},
	} {
		if code, _, errs := run(t, args...); code != ExitUsage || errs == "" {
			t.Errorf("%s: code %d stderr %q", name, code, errs)
		}
	}
}
