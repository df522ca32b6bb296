package testgen

import (
	"math"

	"github.com/fsmgen/fsmgen/internal/ir"
)

// under is a value of field f below the threshold th, which fails an at_least guard (and
// holds a below one): th less step, unless that breaks the field's lower bound, which
// every transition checks of a set field; then a value within the bounds below th when
// there is one: halfway from the bound for a float, the greatest below th for an integer,
// else the bound itself.
func under(f *ir.Field, th, step float64) float64 {
	n := th - step
	if !f.BelowMin(n) {
		return n
	}
	cands := []float64{math.Ceil(th) - 1, f.Min.Num}
	if f.Type.Kind == ir.Float {
		cands[0] = (f.Min.Num + th) / 2
	}
	for _, c := range cands {
		if c < th && !f.BelowMin(c) && !f.AboveMax(c) {
			return c
		}
	}
	return n
}
