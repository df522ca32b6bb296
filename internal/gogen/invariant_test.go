package gogen_test

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/fsmgen/fsmgen/internal/gogen"
	"github.com/fsmgen/fsmgen/internal/interp"
	"github.com/fsmgen/fsmgen/internal/ir"
)

// boundaryValue is, for a field with bounds or item counts, a value at or just past one of
// them, or the zero value, which leaves a context field unset: the values the constraints
// decide on. ok is false for other fields, and for half the calls on these.
func boundaryValue(f *ir.Field, rng *rand.Rand) (any, bool) {
	if rng.IntN(2) == 0 {
		return nil, false
	}
	if f.Type.Collection() {
		if f.Type.Kind == ir.Duration || f.MinItems < 0 && f.MaxItems < 0 {
			return nil, false
		}
		var lengths []int
		for _, n := range []int{f.MinItems, f.MaxItems} {
			if n >= 0 {
				lengths = append(lengths, max(n-1, 0), n, n+1)
			}
		}
		good, _ := goodValue(f)
		var elem any
		switch x := good.(type) {
		case []any:
			elem = x[0]
		case map[string]any:
			elem = x["k0"]
		}
		n := lengths[rng.IntN(len(lengths))]
		if f.Type.List {
			list := []any{}
			for range n {
				list = append(list, elem)
			}
			return list, true
		}
		mp := map[string]any{}
		for i := range n {
			mp[fmt.Sprint("k", i)] = elem
		}
		return mp, true
	}
	if !f.Type.Kind.Numeric() || f.Type.Kind == ir.Duration || !f.Min.Set && !f.Max.Set {
		return nil, false // durations differ in JSON between the two sides
	}
	nums := []float64{0}
	for _, b := range []ir.Literal{f.Min, f.Max} {
		if b.Set {
			nums = append(nums, b.Num-1, b.Num, b.Num+1)
			if f.Type.Kind == ir.Float {
				nums = append(nums, b.Num-0.5, b.Num+0.5)
			}
		}
	}
	return json.Number(fmt.Sprint(nums[rng.IntN(len(nums))])), true
}

// invariantFigures checks what the interpreter's results say of the vectors' contexts:
// no step is accepted whose context breaks the constraints of a field it sets, which
// `fsmgen sim --set` refuses (interp.InvariantProblem), the generated code and the
// interpreter having agreed on each step. It returns how many steps set a field that
// breaks its constraints, how many were refused listing such a field, and how many were
// refused for their payload.
func invariantFigures(t *testing.T, m *ir.Machine, vs []vector, want [][]result) (breaking, refused, payload int) {
	t.Helper()
	for r, v := range vs {
		for s, st := range v {
			var broken []string
			for _, f := range m.Fields {
				if msg := interp.InvariantProblem(f, roundTrip(t, st.Context[f.Name])); msg != "" {
					broken = append(broken, f.Name)
				}
			}
			res := want[r][s]
			switch {
			case res.Reason == string(interp.InvalidPayload):
				payload++
			case len(broken) > 0 && res.Reason == "":
				t.Errorf("run %d step %d (%s): accepted with %s breaking their constraints", r, s, st.Event, strings.Join(broken, ", "))
			}
			if len(broken) == 0 {
				continue
			}
			breaking++
			for _, fe := range res.Errors {
				if res.Reason == string(interp.MissingArtifacts) && strings.Contains(","+strings.Join(broken, ",")+",", ","+fe.Field+",") {
					refused++
					break
				}
			}
		}
	}
	return breaking, refused, payload
}

// invariantSpec is the machine: a constraint on a context field no state requires,
// one on a list, and a payload's.
const invariantSpec = `version: 1
machine: Payment
package: payment
context:
  amount: { type: float, above: 0 }
  tags:   { type: "[]string", max_items: 2 }
  note:   { type: string, non_empty: true }
states:
  draft: { initial: true }
  paid:  { requires: [note], timeout: { after: 1h, on_expiry: lapse } }
  done:  { terminal: true }
events:
  edit: {}
  pay: {}
  lapse: {}
  refund:
    payload:
      cents: { type: int, min: 1 }
transitions:
  - { from: draft, on: edit, to: draft }
  - { from: draft, on: pay, to: paid }
  - { from: paid, on: refund, to: done }
  - { from: paid, on: lapse, to: done }
`

// invariantUse is a user's test of the generated machine.
const invariantUse = `package payment

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/fsmgen/fsmgen/fsmrt"
)

func TestAmountHoldsWheneverSet(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		amount float64
		errs   []FieldError
	}{
		{-5, []FieldError{{Field: "amount", Message: "amount must be above 0"}}},
		{0, nil}, // unset
		{5, nil},
	} {
		// Create commits the machine as it is.
		m := NewPayment()
		m.ID, m.Context.Amount = "p-1", c.amount
		m.SetStore(fsmrt.NewMemoryStore())
		if err := m.Create(ctx, PaymentInput{}); (err == nil) != (c.errs == nil) || err != nil && !errors.Is(err, ErrValidation) {
			t.Errorf("amount %v: Create: %v", c.amount, err)
		}
		m = NewPayment()
		m.Context.Amount = c.amount
		if got := m.Can(ctx, EventEdit); got != (c.errs == nil) {
			t.Errorf("amount %v: Can(edit) = %v", c.amount, got)
		}
		to, err := m.Fire(ctx, EventEdit)
		var ve *ValidationError
		switch {
		case c.errs == nil && err != nil:
			t.Errorf("amount %v: edit refused: %v", c.amount, err)
		case c.errs != nil && (!errors.As(err, &ve) || !reflect.DeepEqual(ve.Errors, c.errs) || to != StateDraft || m.Seq() != 0):
			t.Errorf("amount %v: edit gave %v, %v (seq %d), want a ValidationError listing %v", c.amount, to, err, m.Seq(), c.errs)
		}
		// Entering paid checks what it requires, and the amount with it.
		_, err = m.Fire(ctx, EventPay)
		want := append([]FieldError{{Field: "note", Message: "note is required"}}, c.errs...)
		if !errors.As(err, &ve) || !reflect.DeepEqual(ve.Errors, want) {
			t.Errorf("amount %v: pay gave %v, want %v", c.amount, err, want)
		}
	}
	// Lists: a set list meets its item counts; an empty one is unset.
	m := NewPayment()
	m.Context.Tags = []string{"a", "b", "c"}
	if _, err := m.Fire(ctx, EventEdit); !errors.Is(err, ErrValidation) || err.Error() != "payment: cannot enter draft: tags: tags must have at most 2 items (has 3)" {
		t.Errorf("3 tags: %v", err)
	}
	m.Context.Tags = []string{}
	if _, err := m.Fire(ctx, EventEdit); err != nil {
		t.Errorf("no tags: %v", err)
	}
	// A payload's constraints hold at every fire of its event: zero breaks min 1.
	m.Context.Note = "paid in full"
	if _, err := m.Fire(ctx, EventPay); err != nil {
		t.Fatal(err)
	}
	// An expiry is a transition like any other.
	m.Context.Amount = -5
	if fired, to, err := m.Expire(ctx, time.Now().Add(2*time.Hour)); fired || to != StatePaid || !errors.Is(err, ErrValidation) {
		t.Errorf("expiry with amount -5: %v, %v, %v", fired, to, err)
	}
	m.Context.Amount = 0
	if _, err := m.FireRefund(ctx, RefundPayload{}, PaymentInput{}); !errors.Is(err, ErrValidation) || m.State() != StatePaid {
		t.Errorf("refund of 0 cents: %v", err)
	}
	if _, err := m.FireRefund(ctx, RefundPayload{Cents: 1}, PaymentInput{}); err != nil {
		t.Errorf("refund of 1 cent: %v", err)
	}
}

func TestInvariantsAllocateNothing(t *testing.T) {
	ctx := context.Background()
	m := NewPayment()
	m.Context.Amount, m.Context.Tags = 5, []string{"a", "b"}
	if n := testing.AllocsPerRun(200, func() {
		if _, err := m.Fire(ctx, EventEdit); err != nil {
			t.Fatal(err)
		}
	}); n != 0 {
		t.Errorf("Fire with the constraints met: %v allocations, want 0", n)
	}
}
`

// TestInvariantExample: a constraint on a context field that no state requires holds
// whenever the field is set, in the generated code and in the interpreter (fsmgen sim)
// alike: amount -5 is refused, 0 (unset) and 5 are not.
func TestInvariantExample(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a module")
	}
	path := filepath.Join(t.TempDir(), "payment.fsm.yaml")
	must(t, os.WriteFile(path, []byte(invariantSpec), 0o644))
	m := loadSpec(t, path)
	// The interpreter.
	edit := m.Events[0]
	for amount, want := range map[string]string{"-5": "amount must be above 0", "0": "", "5": ""} {
		x := interp.New(m)
		ctx := make([]any, len(m.Fields))
		ctx[0] = json.Number(amount)
		_, rej := x.Fire(edit, interp.Inputs{Context: ctx})
		switch {
		case want == "" && rej != nil:
			t.Errorf("interpreter, amount %s: %v", amount, rej)
		case want != "" && (rej == nil || rej.Reason != interp.MissingArtifacts || len(rej.Errors) != 1 || rej.Errors[0] != interp.FieldError{Field: "amount", Message: want}):
			t.Errorf("interpreter, amount %s: %+v, want %q", amount, rej, want)
		}
	}
	// The generated code, as a user tests it.
	code, err := gogen.Generate(m, path)
	must(t, err)
	mod := newModule(t)
	mod.write("payment/"+gogen.Filename(path), code)
	mod.write("payment/use_test.go", []byte(invariantUse))
	out := mod.run(t, nil, "test", "-count=1", "-v", "./payment")
	for _, name := range []string{"TestAmountHoldsWheneverSet", "TestInvariantsAllocateNothing"} {
		if !regexp.MustCompile(`(?m)^--- PASS: ` + name).Match(out) {
			t.Fatalf("%s did not pass:\n%s", name, out)
		}
	}
}

// startSpec is a statechart whose start does something (its initial state's entry
// action), with a bounded context field.
const startSpec = `version: 1
machine: Meter
package: meter
context:
  level: { type: int, min: 0, max: 10 }
actions: { light: {} }
events: { stop: {} }
states:
  run:
    initial: true
    states:
      low: { initial: true, entry: [light] }
  done: { terminal: true }
transitions:
  - { from: run, on: stop, to: done }
`

// startUse starts the machine with the level past its bound, then within it.
const startUse = `package meter

import (
	"context"
	"errors"
	"testing"
)

type hooks struct {
	MeterNopHooks
	lit int
}

func (h *hooks) Light(context.Context, *Meter, MeterStep) { h.lit++ }

func TestStartChecksBounds(t *testing.T) {
	ctx := context.Background()
	h := &hooks{}
	m := NewMeter(h)
	m.Context.Level = 11
	var ve *ValidationError
	if err := m.Start(ctx); !errors.As(err, &ve) || len(ve.Errors) != 1 || ve.Errors[0] != (FieldError{Field: "level", Message: "level must be at most 10"}) || m.Started() || h.lit != 0 {
		t.Fatalf("start at level 11: %v (started %v, lit %d)", err, m.Started(), h.lit)
	}
	if _, err := m.Fire(ctx, EventStop); !errors.Is(err, ErrValidation) || m.Started() {
		t.Fatalf("stop before a start at level 11: %v", err)
	}
	m.Context.Level = 10
	if _, err := m.Fire(ctx, EventStop); err != nil || !m.Started() || h.lit != 1 || m.State() != StateDone {
		t.Fatalf("stop at level 10: %v (started %v, lit %d, in %v)", err, m.Started(), h.lit, m.State())
	}
}
`

// TestInvariantStart: a statechart's start checks the bounds of the fields set, in the
// interpreter and in the generated code alike.
func TestInvariantStart(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a module")
	}
	path := filepath.Join(t.TempDir(), "meter.fsm.yaml")
	must(t, os.WriteFile(path, []byte(startSpec), 0o644))
	m := loadSpec(t, path)
	for level, want := range map[string]string{"11": "level must be at most 10", "10": ""} {
		x := interp.New(m)
		_, rej := x.Start(interp.Inputs{Context: []any{json.Number(level)}})
		switch {
		case want == "" && rej != nil:
			t.Errorf("interpreter, level %s: %v", level, rej)
		case want != "" && (rej == nil || rej.Reason != interp.MissingArtifacts || len(rej.Errors) != 1 || rej.Errors[0].Message != want):
			t.Errorf("interpreter, level %s: %+v, want %q", level, rej, want)
		}
	}
	code, err := gogen.Generate(m, path)
	must(t, err)
	mod := newModule(t)
	mod.write("meter/"+gogen.Filename(path), code)
	mod.write("meter/use_test.go", []byte(startUse))
	out := mod.run(t, nil, "test", "-count=1", "-v", "./meter")
	if !regexp.MustCompile(`(?m)^--- PASS: TestStartChecksBounds`).Match(out) {
		t.Fatalf("TestStartChecksBounds did not pass:\n%s", out)
	}
}
