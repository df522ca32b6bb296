package pgtest

import (
	"context"
	"fmt"
	"strconv"
)

// Restart stops the server and starts it again on the same port and data, for tests of
// what clients do when their server goes away mid-work: every connection is closed,
// the transactions in progress are rolled back, and clients must connect again. With
// immediate, the server stops without a checkpoint (as if it crashed) and recovers from
// its write-ahead log on the way up; else it stops fast (rolling back what runs, and
// writing a checkpoint). It returns once the server accepts connections again.
func (s *Server) Restart(ctx context.Context, immediate bool) error {
	mode := "fast"
	if immediate {
		mode = "immediate"
	}
	if _, err := s.run(ctx, s.bins.pgCtl, "stop", "-D", s.dataDir(), "-m", mode, "-w", "-t", "60"); err != nil {
		return fmt.Errorf("pgtest: restart: stop: %w\nserver log:\n%s", err, s.logTail())
	}
	if _, err := s.run(ctx, s.bins.pgCtl, "start", "-w", "-t", "60", "-D", s.dataDir(),
		"-l", s.logFile(), "-o", "-p "+strconv.Itoa(s.Port)); err != nil {
		return fmt.Errorf("pgtest: restart: start: %w\nserver log:\n%s", err, s.logTail())
	}
	return s.waitReady(ctx)
}
