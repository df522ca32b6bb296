package testgen

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/fsmgen/fsmgen/internal/ir"
	"github.com/fsmgen/fsmgen/internal/names"
)

// value is one field value in both representations: the JSON-decoded form the
// interpreter reads and the Go expression the generated test writes.
type value struct {
	json any
	goEx string
}

// GoEx is the Go expression of the value.
func (v value) GoEx() string { return v.goEx }

// enumConst is the Go constant of an enum field's value.
func enumConst(f *ir.Field, v string) string { return f.GoName + names.GoName(v) }

// scalarValue converts a number, string or bool to both forms for the field's kind.
func scalarValue(f *ir.Field, num float64, str string, b bool) value {
	switch f.Type.Kind {
	case ir.Int:
		n := int64(num)
		return value{json.Number(strconv.FormatInt(n, 10)), strconv.FormatInt(n, 10)}
	case ir.Float:
		s := strconv.FormatFloat(num, 'g', -1, 64)
		return value{json.Number(s), "float64(" + s + ")"}
	case ir.Duration:
		d := time.Duration(num)
		return value{d.String(), fmt.Sprintf("time.Duration(%d)", int64(d))}
	case ir.Bool:
		return value{b, strconv.FormatBool(b)}
	case ir.Enum:
		return value{str, enumConst(f, str)}
	case ir.Time:
		return value{"2026-01-02T03:04:05Z", "time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)"}
	}
	return value{str, strconv.Quote(str)}
}

// goodScalar is a scalar that meets the field's bounds.
func goodScalar(f *ir.Field) value {
	n := goodNumber(f)
	v := "ok"
	if f.Type.Kind == ir.Enum {
		v = f.Values[len(f.Values)-1]
	}
	return scalarValue(f, n, v, true)
}

// goodNumber is a number within the field's bounds: a round one where the bounds allow,
// else the one nearest a bound, else the middle (the checker refuses empty ranges).
func goodNumber(f *ir.Field) float64 {
	n, step := 1.0, 1.0
	if f.Type.Kind == ir.Duration {
		n, step = float64(time.Minute), float64(time.Second)
	}
	up := func(x float64) float64 { // the least value above x
		if f.Type.Kind == ir.Float {
			return math.Nextafter(x, math.Inf(1))
		}
		return x + 1
	}
	down := func(x float64) float64 {
		if f.Type.Kind == ir.Float {
			return math.Nextafter(x, math.Inf(-1))
		}
		return x - 1
	}
	cands := []float64{n}
	if f.Min.Set {
		cands = append(cands, f.Min.Num, f.Min.Num+step, up(f.Min.Num))
	}
	if f.Max.Set {
		cands = append(cands, f.Max.Num, f.Max.Num-step, down(f.Max.Num))
	}
	if f.Min.Set && f.Max.Set {
		mid := (f.Min.Num + f.Max.Num) / 2
		if f.Type.Kind != ir.Float {
			mid = math.Floor(mid)
		}
		cands = append(cands, mid)
	}
	for _, c := range cands {
		if !f.BelowMin(c) && !f.AboveMax(c) {
			return c
		}
	}
	return n
}

// collection builds a list or map of n copies of a scalar.
func collection(f *ir.Field, n int, s value) value {
	elem := goScalarType(f)
	if f.Type.List {
		list := make([]any, n)
		parts := make([]string, n)
		for i := range list {
			list[i], parts[i] = s.json, s.goEx
		}
		return value{list, "[]" + elem + "{" + strings.Join(parts, ", ") + "}"}
	}
	m := map[string]any{}
	parts := make([]string, n)
	for i := 0; i < n; i++ {
		k := fmt.Sprint("k", i)
		m[k] = s.json
		parts[i] = strconv.Quote(k) + ": " + s.goEx
	}
	return value{m, "map[string]" + elem + "{" + strings.Join(parts, ", ") + "}"}
}

func goScalarType(f *ir.Field) string {
	switch f.Type.Kind {
	case ir.Int:
		return "int"
	case ir.Float:
		return "float64"
	case ir.Bool:
		return "bool"
	case ir.Duration:
		return "time.Duration"
	case ir.Time:
		return "time.Time"
	case ir.Enum:
		return f.GoName
	}
	return "string"
}

// good is a value that meets every constraint of the field.
func good(f *ir.Field) value {
	s := goodScalar(f)
	if !f.Type.Collection() {
		return s
	}
	n := 1
	if f.MinItems > n {
		n = f.MinItems
	}
	if f.MaxItems >= 0 && f.MaxItems < n {
		n = f.MaxItems
	}
	return collection(f, n, s)
}

// zeroValue is the field's zero value.
func zeroValue(f *ir.Field) value {
	switch {
	case f.Type.List:
		return value{[]any{}, "nil"}
	case f.Type.Map:
		return value{map[string]any{}, "nil"}
	}
	switch f.Type.Kind {
	case ir.String:
		return value{"", `""`}
	case ir.Bool:
		return value{false, "false"}
	case ir.Time:
		return value{"0001-01-01T00:00:00Z", "time.Time{}"}
	case ir.Duration:
		return value{"0s", "0"}
	case ir.Enum:
		if f.Unset() {
			return value{nil, f.GoName + "Unset"}
		}
		return value{f.Values[0], enumConst(f, f.Values[0])}
	}
	return value{json.Number("0"), "0"}
}

// violation is a named bad value of a field.
type violation struct {
	name string
	v    value
}

// violations lists values that fail each constraint of the field, one per branch of the
// generated check: the zero value (when it is refused), too few and too many items, below
// the minimum, above the maximum, an enum out of range.
func violations(f *ir.Field, zeroRefused bool) []violation {
	var out []violation
	if zeroRefused && !(f.Type.Kind == ir.Enum && !f.Type.Collection() && !f.Unset()) {
		out = append(out, violation{"zero", zeroValue(f)})
	}
	s := goodScalar(f)
	if f.NonEmpty && !(zeroRefused && (f.Type.Collection() || f.Type.Kind == ir.String)) {
		if f.Type.Collection() {
			out = append(out, violation{"empty", collection(f, 0, s)})
		} else {
			out = append(out, violation{"empty", value{"", `""`}})
		}
	}
	if f.Type.Collection() {
		if f.MinItems >= 2 || (f.MinItems == 1 && !zeroRefused) {
			out = append(out, violation{"too few items", collection(f, f.MinItems-1, s)})
		}
		if f.MaxItems >= 0 {
			out = append(out, violation{"too many items", collection(f, f.MaxItems+1, s)})
		}
		return out
	}
	if f.Type.Kind.Numeric() {
		step := 1.0
		if f.Type.Kind == ir.Duration {
			step = float64(time.Second)
		}
		// The bound itself when it is exclusive, else a step past it; never the zero value
		// when that is refused as missing (the zero case covers it).
		if f.Min.Set {
			n, name := f.Min.Num-step, "below min"
			if f.MinExclusive {
				n, name = f.Min.Num, "not above"
			}
			if n == 0 && zeroRefused {
				n = f.Min.Num - 2*step
			}
			out = append(out, violation{name, scalarValue(f, n, "", false)})
		}
		if f.Max.Set {
			n, name := f.Max.Num+step, "above max"
			if f.MaxExclusive {
				n, name = f.Max.Num, "not below"
			}
			if n == 0 && zeroRefused {
				n = f.Max.Num + 2*step
			}
			out = append(out, violation{name, scalarValue(f, n, "", false)})
		}
	}
	if f.Type.Kind == ir.Enum {
		n := len(f.Values)
		if f.Unset() {
			n++ // 0 is unset, the values are 1..n
		}
		out = append(out, violation{"out of range", value{"\x00not a value", fmt.Sprintf("%s(%d)", f.GoName, n)}})
	}
	return out
}
