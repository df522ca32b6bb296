package scaleout

import (
	"fmt"
	"strconv"
	"time"
)

// Clock is the virtual clock every process of a run shares: it started at Start when the
// real clock read Epoch, and runs Speed times faster than real time, so that timeouts of
// minutes fall due within seconds. Each process computes it from the same three numbers,
// so processes started later (a worker restarted after a kill) read the same time. It
// returns whole microseconds, the precision the stores keep.
type Clock struct {
	Epoch time.Time // real time at the start
	Start time.Time // the clock's time then
	Speed float64
}

// Now returns the clock's time.
func (c Clock) Now() time.Time {
	elapsed := time.Duration(float64(time.Since(c.Epoch)) * c.Speed)
	return c.Start.Add(elapsed).Truncate(time.Microsecond)
}

// Args returns the command-line flags that give a process this clock (see ParseClock).
func (c Clock) Args() []string {
	return []string{
		"-epoch", strconv.FormatInt(c.Epoch.UnixNano(), 10),
		"-start", c.Start.UTC().Format(time.RFC3339Nano),
		"-speed", strconv.FormatFloat(c.Speed, 'g', -1, 64),
	}
}

// ParseClock builds the clock of the flags Args writes: the real epoch in Unix
// nanoseconds, the virtual start in RFC 3339 and the speed.
func ParseClock(epoch, start string, speed float64) (Clock, error) {
	ns, err := strconv.ParseInt(epoch, 10, 64)
	if err != nil {
		return Clock{}, fmt.Errorf("-epoch: %w", err)
	}
	at, err := time.Parse(time.RFC3339Nano, start)
	if err != nil {
		return Clock{}, fmt.Errorf("-start: %w", err)
	}
	if speed <= 0 {
		return Clock{}, fmt.Errorf("-speed must be positive, not %v", speed)
	}
	return Clock{Epoch: time.Unix(0, ns), Start: at.UTC(), Speed: speed}, nil
}

// RealTime returns how long, in real time, a span d of the clock's time lasts
// (fsmrt.PacedClock): a Waiter sleeps that long for a deadline d away.
func (c Clock) RealTime(d time.Duration) time.Duration {
	return time.Duration(float64(d) / c.Speed)
}
