package main

import (
	"context"
	"errors"
	"testing"

	"github.com/fsmgen/fsmgen/fsmrt"
)

// TestFireUnknownTask: a task the store does not have (never created, or its database
// lost) is not fired as a new one: the command fails with fsmrt.ErrNotFound and stores
// nothing; created, it fires.
func TestFireUnknownTask(t *testing.T) {
	ctx := context.Background()
	store := fsmrt.NewMemoryStore()
	w := quietWorker(store)
	for _, cmd := range [][]string{{"fire", "TASK-9", "picked_up", "build_orchestrator"}, {"timeout", "TASK-9", "assigned", "1h"}} {
		if err := w.do(ctx, cmd); !errors.Is(err, fsmrt.ErrNotFound) {
			t.Errorf("%v on an unknown task = %v", cmd, err)
		}
	}
	if l, err := store.Load(ctx, "build.Task", "TASK-9"); err != nil || l.Version != 0 {
		t.Fatalf("the unknown task was stored: version %d, %v", l.Version, err)
	}
	if err := w.do(ctx, []string{"create", "TASK-9"}); err != nil {
		t.Fatal(err)
	}
	if err := w.do(ctx, []string{"fire", "TASK-9", "picked_up", "build_orchestrator"}); err != nil {
		t.Errorf("fire on a created task: %v", err)
	}
}
