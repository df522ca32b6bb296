//go:build !race

package spec

const raceDetector = false
