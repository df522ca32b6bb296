//go:build !fsmcover

package fsmrt

// coverOn is false without the build tag fsmcover: the engine's coverage calls, each
// behind it, are compiled away.
const coverOn = false

func coverWrite(CoverRecord) {}
