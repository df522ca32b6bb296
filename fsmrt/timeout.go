package fsmrt

import (
	"math/bits"
	"time"
)

// Reached reports whether elapsed is at least pct percent of d, computed exactly for every
// duration Go can represent (no product overflows). A negative elapsed time (a clock that
// went back) reaches nothing, and neither does a timeout d <= 0 or pct <= 0.
func Reached(elapsed, d time.Duration, pct int) bool {
	if elapsed < 0 || d <= 0 || pct <= 0 {
		return false
	}
	// elapsed*100 >= d*pct, in 128 bits.
	eh, el := bits.Mul64(uint64(elapsed), 100)
	dh, dl := bits.Mul64(uint64(d), uint64(pct))
	return eh > dh || (eh == dh && el >= dl)
}

// Level returns the index of the highest of levels (percentages of the timeout d, in
// ascending order) that elapsed has reached, or -1 when it has reached none.
func Level(elapsed, d time.Duration, levels []int) int {
	for i := len(levels) - 1; i >= 0; i-- {
		if Reached(elapsed, d, levels[i]) {
			return i
		}
	}
	return -1
}
