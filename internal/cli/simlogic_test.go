package cli

import (
	"strings"
	"testing"
)

// TestSimGuardExpression: sim runs guard expressions from the hook guards given, and says
// of a --guard naming an expression that it is one.
func TestSimGuardExpression(t *testing.T) {
	spec := specFile(t, "logic.fsm.yaml", `version: 1
machine: M
package: m
events: { go: {} }
guards:
  loaded: {}
  blocked: {}
  ready: { and: [loaded, { not: blocked }] }
states:
  a: { initial: true }
  b: { terminal: true }
transitions:
  - { from: a, on: go, to: b, if: { or: [ready, blocked] } }
`)
	if code, out, _ := run(t, "sim", spec, "--events", "go", "--guard", "loaded=true"); code != ExitOK || !strings.Contains(out, "0: go: a -> b") {
		t.Errorf("loaded: code %d\n%s", code, out)
	}
	if code, out, _ := run(t, "sim", spec, "--events", "go"); code != ExitFindings || !strings.Contains(out, "guard (ready or blocked) does not hold") {
		t.Errorf("nothing holds: code %d\n%s", code, out)
	}
	want := `fsmgen: --guard "ready=true": guard "ready" is an expression (loaded and not blocked): set the hook guards it asks` + "\n"
	if code, _, stderr := run(t, "sim", spec, "--guard", "ready=true"); code != ExitUsage || stderr != want {
		t.Errorf("--guard ready: code %d, stderr %q", code, stderr)
	}
}
