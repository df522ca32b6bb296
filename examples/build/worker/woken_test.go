package main

import (
	"path/filepath"
	"testing"
	"time"
)

// TestTimeoutsWoken: a worker whose polling interval is an hour still reports a timeout's
// warning when it falls due: the task's commit arming the timeout wakes its loop, which
// then sleeps until the nearest deadline (on the worker's clock, here 600 times real
// time: the warning of planning's 15 minutes, at 80 %, 1.2 s after the transition).
func TestTimeoutsWoken(t *testing.T) {
	w := startWorkerArgs(t, "-db", filepath.Join(t.TempDir(), "build.db"), "-speed", "600", "-tick", "1h")
	began := time.Now()
	w.send("create TASK-1", "fire TASK-1 picked_up build_orchestrator picked up")
	w.expect("STATE_TRANSITION")
	w.send("watch TASK-1")
	w.expect("TIMEOUT_WARN")
	t.Logf("the warning came %v after the task was picked up", time.Since(began).Round(time.Millisecond))
}
