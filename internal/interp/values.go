package interp

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/fsmgen/fsmgen/internal/ir"
)

// fieldValue is the field's value in the context, else its default, else nil. An enum
// without a default starts at its first value.
func fieldValue(f *ir.Field, in Inputs) any {
	if f.Index < len(in.Context) && in.Context[f.Index] != nil {
		return in.Context[f.Index]
	}
	if f.Type.Collection() {
		return nil
	}
	if f.Default.Set {
		switch f.Type.Kind {
		case ir.Int, ir.Float:
			return json.Number(fmt.Sprint(f.Default.Num))
		case ir.Bool:
			return f.Default.Bool
		case ir.Duration:
			return time.Duration(f.Default.Num).String()
		}
		return f.Default.Str
	}
	if f.Type.Kind == ir.Enum && len(f.Values) > 0 && !f.Unset() {
		return f.Values[0]
	}
	return nil
}

// number reads a numeric field value; durations are strings such as "15m" (nanoseconds).
func number(f *ir.Field, v any) (float64, bool) {
	switch x := v.(type) {
	case json.Number:
		n, err := x.Float64()
		return n, err == nil
	case float64:
		return x, true
	case string:
		if f.Type.Kind == ir.Duration {
			d, err := time.ParseDuration(x)
			return float64(d), err == nil
		}
	case nil:
		return 0, true
	}
	return 0, false
}

func equal(f *ir.Field, v any, lit ir.Literal) bool {
	switch f.Type.Kind {
	case ir.Bool:
		b, _ := v.(bool)
		return b == lit.Bool
	case ir.Int, ir.Float, ir.Duration:
		n, ok := number(f, v)
		return ok && n == lit.Num
	}
	s, _ := v.(string)
	return s == lit.Str
}

// contains reports whether the list value v holds the literal.
func contains(f *ir.Field, v any, lit ir.Literal) bool {
	switch x := v.(type) {
	case []any:
		for _, e := range x {
			if equal(f, e, lit) {
				return true
			}
		}
	case []string:
		for _, e := range x {
			if equal(f, e, lit) {
				return true
			}
		}
	}
	return false
}

// length is the number of elements of a list value (0 when absent).
func length(v any) int {
	switch x := v.(type) {
	case []any:
		return len(x)
	case []string:
		return len(x)
	}
	return 0
}

// CheckValue reports whether a decoded JSON value fits the field's type.
func CheckValue(f *ir.Field, v any) error {
	if v == nil {
		return nil
	}
	switch {
	case f.Type.List:
		list, ok := v.([]any)
		if !ok {
			return fmt.Errorf("%s is %s: want a JSON array", f.Name, f.Type)
		}
		for _, x := range list {
			if err := checkScalar(f, x); err != nil {
				return err
			}
		}
		return nil
	case f.Type.Map:
		m, ok := v.(map[string]any)
		if !ok {
			return fmt.Errorf("%s is %s: want a JSON object", f.Name, f.Type)
		}
		for _, x := range m {
			if err := checkScalar(f, x); err != nil {
				return err
			}
		}
		return nil
	}
	return checkScalar(f, v)
}

func checkScalar(f *ir.Field, v any) error {
	bad := func(want string) error { return fmt.Errorf("%s is %s: %v is not %s", f.Name, f.Type, v, want) }
	switch f.Type.Kind {
	case ir.Int:
		n, ok := v.(json.Number)
		if !ok {
			return bad("an integer")
		}
		if _, err := n.Int64(); err != nil {
			return bad("an integer")
		}
	case ir.Float:
		if _, ok := v.(json.Number); !ok {
			return bad("a number")
		}
	case ir.Bool:
		if _, ok := v.(bool); !ok {
			return bad("true or false")
		}
	case ir.Duration:
		s, ok := v.(string)
		if _, err := time.ParseDuration(s); !ok || err != nil {
			return bad("a duration such as 15m")
		}
	case ir.Time:
		s, ok := v.(string)
		if _, err := time.Parse(time.RFC3339, s); !ok || err != nil {
			return bad("an RFC 3339 time")
		}
	case ir.Enum:
		s, ok := v.(string)
		if !ok || f.EnumIndex(s) < 0 {
			return bad("one of " + strings.Join(f.Values, ", "))
		}
	case ir.String:
		if _, ok := v.(string); !ok {
			return bad("a string")
		}
	}
	return nil
}

// requirements checks fields a transition requires of the context (ir.Transition.Required).
func (x *Machine) requirements(fields []*ir.Field, in Inputs) []FieldError {
	var out []FieldError
	for _, f := range fields {
		if msg := fieldProblem(f, fieldValue(f, in), false); msg != "" {
			if f.Message != "" {
				msg = f.Message
			}
			out = append(out, FieldError{Field: f.Name, Message: msg})
		}
	}
	return out
}

// fieldProblem describes why a field's value is missing or invalid, or "". A context field
// a state requires must not be the zero value; a payload field only when it is required.
func fieldProblem(f *ir.Field, v any, payload bool) string {
	if v == nil && f.Type.Kind == ir.Enum && !f.Type.Collection() && len(f.Values) > 0 && !f.Unset() {
		v = f.Values[0] // an enum's zero value is its first value, unless it has an unset one
	}
	n := -1
	if v == nil && (f.Type.Collection() || f.Type.Kind == ir.String) {
		n = 0
	}
	switch x := v.(type) {
	case []any:
		n = len(x)
	case map[string]any:
		n = len(x)
	case string:
		if f.Type.Kind == ir.String {
			n = len(x)
		}
	}
	if zero(f, v) && (!payload || f.Required) {
		return f.Name + " is required"
	}
	if f.NonEmpty && n == 0 {
		return f.Name + " must not be empty"
	}
	if f.Type.Collection() {
		return itemsProblem(f, n)
	}
	if f.Type.Kind.Numeric() {
		num, ok := number(f, v)
		if !ok {
			return f.Name + " is not a number"
		}
		if msg := rangeProblem(f, num); msg != "" {
			return msg
		}
	}
	if f.Type.Kind == ir.Enum {
		if s, _ := v.(string); f.EnumIndex(s) < 0 {
			return f.Name + " must be one of " + strings.Join(f.Values, ", ")
		}
	}
	return ""
}

// itemsProblem describes how a collection of n items breaks min_items or max_items, or "".
func itemsProblem(f *ir.Field, n int) string {
	if f.MinItems >= 0 && n < f.MinItems {
		return fmt.Sprintf("%s must have at least %d items (has %d)", f.Name, f.MinItems, n)
	}
	if f.MaxItems >= 0 && n > f.MaxItems {
		return fmt.Sprintf("%s must have at most %d items (has %d)", f.Name, f.MaxItems, n)
	}
	return ""
}

// rangeProblem describes how a number breaks min or max (or above or below), or "".
func rangeProblem(f *ir.Field, num float64) string {
	if f.BelowMin(num) {
		return f.MinProblem()
	}
	if f.AboveMax(num) {
		return f.MaxProblem()
	}
	return ""
}

// zero reports whether v is absent or the zero value of the field's type.
func zero(f *ir.Field, v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case string:
		if !f.Type.Collection() {
			switch f.Type.Kind {
			case ir.Time:
				t, err := time.Parse(time.RFC3339, x)
				return err == nil && t.IsZero()
			case ir.Duration:
				d, err := time.ParseDuration(x)
				return err == nil && d == 0
			}
		}
		return x == ""
	case bool:
		return !x
	case json.Number:
		f, err := x.Float64()
		return err == nil && f == 0
	case []any:
		return len(x) == 0
	case map[string]any:
		return len(x) == 0
	}
	return false
}
