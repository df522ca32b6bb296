// Package bench compares the Go code fsmgen generates with github.com/looplab/fsm,
// github.com/qmuntal/stateless and a hand-written switch, on seed 003's machine (review,
// 7 states) and a synthetic 50-state, 20-event machine (big), which is also written by hand
// as a lookup table for reference; and a statechart of 43 configurations (chart, chartact
// with actions) against a flat machine of the same size (chartflat, and by hand as a
// table). The benchmarks and the tests that all the
// implementations agree are in this package's _test.go files; run.sh runs
// them with benchstat and writes BENCHMARKS.md at the repository root. It is its own
// module so that the main module never depends on the peers.
package bench
