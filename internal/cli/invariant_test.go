package cli

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/fsmgen/fsmgen/internal/interp"
)

// TestSimInvariant: a constraint on a context field that no state requires holds whenever
// the field is set: --set refuses amount -5 before any event, as every transition of the
// generated code does; 0 leaves the field unset and 5 meets it. A field a state requires is
// refused by the first transition, with its {field, message} list, though that transition
// does not enter the state.
func TestSimInvariant(t *testing.T) {
	spec := specFile(t, "payment.fsm.yaml", `version: 1
machine: Payment
package: payment
context:
  amount: { type: float, above: 0 }
  items:  { type: "[]string", min_items: 2 }
states:
  draft: { initial: true }
  paid:  { requires: [items], terminal: true }
events: { edit: {}, pay: {} }
transitions:
  - { from: draft, on: edit, to: draft }
  - { from: draft, on: pay, to: paid }
`)
	for _, c := range []struct {
		set    string
		code   int
		stderr string
	}{
		{"amount=-5", ExitUsage, "fsmgen: --set amount=-5: amount must be above 0\n"},
		{"amount=0", ExitOK, ""},
		{"amount=5", ExitOK, ""},
	} {
		code, _, stderr := run(t, "sim", spec, "--set", c.set, "--events", "edit")
		if code != c.code || stderr != c.stderr {
			t.Errorf("--set %s: code %d, stderr %q; want %d, %q", c.set, code, stderr, c.code, c.stderr)
		}
	}
	code, out, _ := run(t, "sim", spec, "--json", "--set", `items=["a"]`, "--events", "edit")
	var res SimResult
	if err := json.Unmarshal([]byte(out), &res); err != nil || code != ExitFindings || res.Rejected == nil {
		t.Fatalf("code %d, %v:\n%s", code, err, out)
	}
	want := []interp.FieldError{{Field: "items", Message: "items must have at least 2 items (has 1)"}}
	if r := res.Rejected; r.Reason != "artifacts" || !reflect.DeepEqual(r.Errors, want) {
		t.Errorf("edit with one item: %+v, want artifacts %v", r, want)
	}
}
