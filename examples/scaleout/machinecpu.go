package scaleout

import (
	"os"
	"strconv"
	"strings"
	"time"
)

// machineBusy returns the processor time every CPU of the machine has spent busy so far
// (user, nice, system, interrupts, steal: not idle, not waiting for I/O), from Linux's
// /proc/stat; 0 where there is none. Its difference over a phase says how much of the
// machine the phase used, its own processes, the database server and everything else
// together.
func machineBusy() time.Duration {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0
	}
	line, _, _ := strings.Cut(string(b), "\n")
	fields := strings.Fields(line)
	if len(fields) < 9 || fields[0] != "cpu" {
		return 0
	}
	var ticks int64
	for i, f := range fields[1:9] {
		if i == 3 || i == 4 { // idle, iowait
			continue
		}
		n, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			return 0
		}
		ticks += n
	}
	// The kernel counts in USER_HZ, 100 a second on every Linux architecture Go runs on.
	return time.Duration(ticks) * 10 * time.Millisecond
}
