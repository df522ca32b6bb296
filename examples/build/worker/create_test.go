package main

import (
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/fsmgen/fsmgen/fsmrt"
)

// TestCreateTwice: creating a task that exists says so in the worker's terms (it said
// "store conflict"), and leaves the task as it was.
func TestCreateTwice(t *testing.T) {
	ctx := context.Background()
	store := fsmrt.NewMemoryStore()
	w := quietWorker(store)
	if err := w.do(ctx, []string{"create", "TASK-1"}); err != nil {
		t.Fatal(err)
	}
	err := w.do(ctx, []string{"create", "TASK-1"})
	if err == nil || !strings.Contains(err.Error(), "task TASK-1 exists already") || strings.Contains(err.Error(), "conflict") {
		t.Errorf("a second create: %v", err)
	}
	if l, err := store.Load(ctx, "build.Task", "TASK-1"); err != nil || l.Version != 1 {
		t.Errorf("the task after a second create: version %d, %v", l.Version, err)
	}
}

// quietWorker is a worker on store whose clock stands at 08:00 and whose output goes
// nowhere, for commands run one by one.
func quietWorker(store fsmrt.Store) *worker {
	return &worker{store: store, clock: &clock{real: time.Now(), at: time.Date(2026, 6, 1, 8, 0, 0, 0, time.UTC)},
		out: io.Discard, errs: io.Discard, seen: map[string]int64{}}
}
