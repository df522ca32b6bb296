//go:build !race

package allocs

// Race reports whether the race detector is on: it allocates for its own bookkeeping, so
// allocation counts are asserted only without it (make test runs them so).
const Race = false
