package fsmrt

import (
	"reflect"
	"testing"
)

type boundsCtx struct {
	Amount float64
	Tries  int
	Tags   []string
}

var testBounds = []Bound[boundsCtx]{
	{Field: "amount", Value: func(c *boundsCtx) float64 { return c.Amount }, Max: 100, Has: BoundAbove | BoundBelow, Low: "amount must be above 0", High: "amount must be below 100"},
	{Field: "tries", Value: func(c *boundsCtx) float64 { return float64(c.Tries) }, Min: 1, Max: 3, Has: BoundMin | BoundMax, Low: "too few", High: "too many"},
	{Field: "tags", Value: func(c *boundsCtx) float64 { return float64(len(c.Tags)) }, Min: 2, Max: 3, Has: BoundMin | BoundMax | BoundItems},
}

// TestCheckBounds: a set field past a bound is reported with its message (a count of items
// with the count), each field once, in order; an unset field (zero) meets every bound.
func TestCheckBounds(t *testing.T) {
	for _, c := range []struct {
		ctx  boundsCtx
		want []FieldError
	}{
		{boundsCtx{}, nil},
		{boundsCtx{Amount: 5, Tries: 2, Tags: []string{"a", "b"}}, nil},
		{boundsCtx{Amount: -5}, []FieldError{{"amount", "amount must be above 0"}}},
		{boundsCtx{Amount: 100, Tries: 4}, []FieldError{{"amount", "amount must be below 100"}, {"tries", "too many"}}},
		{boundsCtx{Tries: -1, Tags: []string{"a"}}, []FieldError{{"tries", "too few"}, {"tags", "tags must have at least 2 items (has 1)"}}},
		{boundsCtx{Tags: []string{"a", "b", "c", "d"}}, []FieldError{{"tags", "tags must have at most 3 items (has 4)"}}},
	} {
		if got := CheckBounds(&c.ctx, testBounds, nil); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%+v: %v, want %v", c.ctx, got, c.want)
		}
	}
	ok := boundsCtx{Amount: 5, Tries: 2, Tags: []string{"a", "b"}}
	if n := testing.AllocsPerRun(100, func() { CheckBounds(&ok, testBounds, nil) }); n != 0 {
		t.Errorf("bounds met: %v allocations, want 0", n)
	}
}
