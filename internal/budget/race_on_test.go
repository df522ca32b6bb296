//go:build race

package budget

// raceDetector: the race detector slows single-threaded work about tenfold, so the tests
// sized for the inputs run smaller under it; make test runs them at full size
// without it, too.
const raceDetector = true
