package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSimSetConstraints: --set refuses a value that breaks the field's bounds, as a usage
// error, except for a field some state requires (entering that state reports it).
func TestSimSetConstraints(t *testing.T) {
	for _, c := range []struct {
		name   string
		args   []string
		code   int
		stderr string
	}{
		{"above max", []string{"--set", "heat=300.5"}, ExitUsage, "fsmgen: --set heat=300.5: heat must be at most 300\n"},
		{"below min", []string{"--set", "heat=-1"}, ExitUsage, "fsmgen: --set heat=-1: heat must be at least 0\n"},
		{"at max", []string{"--set", "heat=300"}, ExitFindings, ""},
		{"required field, too few items", []string{"--set", `menu=["a"]`}, ExitFindings, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			args := append([]string{"sim", kitchen, "--as", "chef", "--events", "open_up"}, c.args...)
			code, _, stderr := run(t, args...)
			if code != c.code || stderr != c.stderr {
				t.Errorf("code %d, stderr %q; want %d, %q", code, stderr, c.code, c.stderr)
			}
		})
	}
}

// TestSimRefusalText: a refusal with no allowed event says so, and a role refusal without
// --as says there is no role.
func TestSimRefusalText(t *testing.T) {
	code, out, _ := run(t, "sim", kitchen, "--events", "open_up")
	want := `start: closed
0: open_up: refused in closed (role): closed on open_up is not permitted without a role; roles allowed: cook, chef
   allowed: (none)
final: closed
`
	if code != ExitFindings || !strings.HasPrefix(out, want) {
		t.Errorf("code %d\n--- got\n%s--- want prefix\n%s", code, out, want)
	}
	code, out, _ = run(t, "sim", kitchen, "--json", "--events", "open_up")
	var res SimResult
	if err := json.Unmarshal([]byte(out), &res); err != nil || code != ExitFindings {
		t.Fatalf("code %d, %v", code, err)
	}
	if r := res.Rejected; r == nil || r.AllowedTransitions == nil || len(r.AllowedTransitions) != 0 || !strings.Contains(out, `"allowedTransitions": []`) {
		t.Errorf("JSON rejection %+v: want an empty allowedTransitions list", r)
	}
}

// TestSimLimitSummary: a limit that redirects writes its summary into the context, which the
// target's requirements see; sim prints it under the step and later steps keep it.
func TestSimLimitSummary(t *testing.T) {
	spec := filepath.Join(t.TempDir(), "loop.fsm.yaml")
	os.WriteFile(spec, []byte(`version: 1
machine: Loop
package: loop
context:
  reason: { type: string, non_empty: true }
counters:
  cycles: { max: 1, then: blocked, summary: reason }
states:
  work: { initial: true }
  review: {}
  blocked: { requires: [reason] }
transitions:
  - { from: work, to: review }
  - { from: review, to: work, increment: cycles }
  - { from: blocked, to: work }
`), 0o644)
	code, out, _ := run(t, "sim", spec, "--events", "review,work,review,work,work")
	want := `start: work
0: review: work -> review
1: work: review -> work
2: review: work -> review
3: work: review -> blocked
   reason = "cycles reached its maximum of 1: review -> work went to blocked instead"
4: work: blocked -> work
final: work
counter cycles: 0
`
	if code != ExitOK || out != want {
		t.Errorf("code %d\n--- got\n%s--- want\n%s", code, out, want)
	}
}

// TestSimFail: --fail makes an action marked may_fail fail: the event is refused
// (action_failed) with the actions run, the failed one last; an action that cannot fail,
// or no action, is a usage error.
func TestSimFail(t *testing.T) {
	spec := filepath.Join(t.TempDir(), "fail.fsm.yaml")
	body := `version: 1
machine: M
package: m
events: { go: {} }
actions:
  log: {}
  charge: { may_fail: true }
states:
  a: { initial: true, exit: [log] }
  b: { terminal: true }
transitions:
  - { from: a, on: go, to: b, do: [charge] }
`
	if err := os.WriteFile(spec, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, _ := run(t, "sim", spec, "--json", "--events", "go", "--fail", "charge")
	var res SimResult
	if err := json.Unmarshal([]byte(out), &res); err != nil || code != ExitFindings {
		t.Fatalf("code %d, %v\n%s", code, err, out)
	}
	if r := res.Rejected; r == nil || r.Reason != "action_failed" || res.Final != "a" || strings.Join(r.Actions, ",") != "log,charge" {
		t.Errorf("rejection %+v, final %s", r, res.Final)
	}
	if code, _, _ := run(t, "sim", spec, "--events", "go"); code != ExitOK {
		t.Errorf("without --fail: code %d", code)
	}
	for _, c := range []struct{ action, stderr string }{
		{"log", `fsmgen: --fail: action "log" cannot fail: mark it may_fail` + "\n"},
		{"chrge", `fsmgen: --fail: no action "chrge" (did you mean "charge"?)` + "\n"},
	} {
		if code, _, stderr := run(t, "sim", spec, "--fail", c.action); code != ExitUsage || stderr != c.stderr {
			t.Errorf("--fail %s: code %d, stderr %q", c.action, code, stderr)
		}
	}
}

// TestSimShowsLimitRedirect: a step that a counter's limit sent elsewhere says which limit
// and where the transition would have gone, in text and in JSON.
func TestSimShowsLimitRedirect(t *testing.T) {
	spec := specFile(t, "order.fsm.yaml", `version: 1
machine: Order
package: order
counters:
  retries: { max: 1, then: cancelled }
states:
  pending: { initial: true }
  processing: {}
  cancelled: { terminal: true }
events: { process: {}, retry: {} }
transitions:
  - { from: pending, on: process, to: processing, increment: retries }
  - { from: processing, on: retry, to: pending }
`)
	code, out, _ := run(t, "sim", spec, "--events", "process,retry,process")
	want := "2: process: pending -> cancelled\n   retries reached its maximum of 1: pending -> processing went to cancelled instead\n"
	if code != ExitOK || !strings.Contains(out, want) {
		t.Errorf("exit %d:\n%s\nwant\n%s", code, out, want)
	}
	_, out, _ = run(t, "sim", spec, "--json", "--events", "process,retry,process")
	var res SimResult
	if err := json.Unmarshal([]byte(out), &res); err != nil || len(res.Steps) != 3 ||
		res.Steps[2].Limit != "retries reached its maximum of 1: pending -> processing went to cancelled instead" || res.Steps[0].Limit != "" {
		t.Errorf("JSON (%v):\n%s", err, out)
	}
}

// TestSimLimitRefusalSaysTheMaximum: a counter written max: 1 refuses the increment past it
// saying "its maximum of 1", as the spec writes it (and as the generated code says).
func TestSimLimitRefusalSaysTheMaximum(t *testing.T) {
	spec := specFile(t, "order.fsm.yaml", `version: 1
machine: Order
package: order
counters:
  retries: { max: 1 }
states:
  pending: { initial: true }
  processing: {}
events: { process: {}, retry: {} }
transitions:
  - { from: pending, on: process, to: processing, increment: retries }
  - { from: processing, on: retry, to: pending }
`)
	code, out, _ := run(t, "sim", spec, "--events", "process,retry,process")
	if code != ExitFindings || !strings.Contains(out, "counter retries reached its maximum of 1") {
		t.Errorf("exit %d:\n%s", code, out)
	}
}

// specFile writes a spec into a temporary directory of t under name and returns its path.
func specFile(t *testing.T, name, spec string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(spec), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}
