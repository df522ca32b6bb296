//go:build !unix

package scaleout

import "time"

// cpuTime returns 0: the processor time of a process is read on Unix only.
func cpuTime() time.Duration { return 0 }
