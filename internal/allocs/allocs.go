// Package allocs counts the allocations of one call exactly, for the examples' tests of
// what firing an event costs.
package allocs

import "testing"

// Once returns the number of allocations of one call of do on a value setup builds, counted
// exactly: testing.AllocsPerRun with a single run (after its warm-up call), each call on a
// value of its own built before counting starts. An average over many runs would hide an
// allocation that happens only some of the time, such as a slice growing.
func Once[M any](setup func() M, do func(M)) float64 {
	ms := []M{setup(), setup()}
	i := 0
	return testing.AllocsPerRun(1, func() {
		do(ms[i])
		i++
	})
}
