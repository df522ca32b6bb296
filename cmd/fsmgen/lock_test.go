package main_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestLockCarriesStoredInstances is the evolution issue's scenario, as a user lives it with
// go generate: seed 003's spec generates code, which stores a task; then the spec gains
// one event and one transition (a change fsmgen diff calls compatible) and is generated
// again, with nothing else written by hand. Code of the new version loads the stored task
// and fires the new event on it; the version lock beside the spec is what tells it how,
// and generate --check fails once the lock is out of date.
func TestLockCarriesStoredInstances(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a module")
	}
	repo, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	write := func(rel, data string) { writeFile(t, dir, rel, data) }
	seed, err := os.ReadFile(filepath.Join(repo, "examples/review/review.fsm.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	spec := strings.Replace(string(seed), "package: review", "package: task", 1)
	write("go.mod", "module example.com/consumer\n\ngo 1.24\n\ntool github.com/fsmgen/fsmgen/cmd/fsmgen\n\n"+
		"require github.com/fsmgen/fsmgen v0.0.0\n\nreplace github.com/fsmgen/fsmgen => "+repo+"\n")
	write("task/task.fsm.yaml", spec)
	write("task/gen.go", "// Package task holds the review machine.\npackage task\n\n//go:generate go tool fsmgen generate task.fsm.yaml\n")
	run := func(args ...string) string { return goIn(t, dir, args...) }
	run("mod", "tidy")
	run("generate", "./...")
	lockPath := filepath.Join(dir, "task/task.fsm.lock")
	first, err := os.ReadFile(lockPath)
	if err != nil {
		t.Fatalf("generate wrote no version lock: %v", err)
	}

	// The code deployed first, kept to store a task with.
	code, err := os.ReadFile(filepath.Join(dir, "task/task_fsm.go"))
	if err != nil {
		t.Fatal(err)
	}
	write("old/task_fsm.go", string(code))

	// One event and one transition more, and nothing else.
	spec = strings.Replace(spec, "events:\n", "events:\n  nudge: { doc: A reminder to the blocked worker. }\n", 1)
	spec = strings.Replace(spec, "transitions:\n", "transitions:\n  - { from: blocked, on: nudge, internal: true }\n", 1)
	write("task/task.fsm.yaml", spec)
	run("tool", "fsmgen", "check", "task/task.fsm.yaml")
	run("generate", "./...")
	second, err := os.ReadFile(lockPath)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(second), "#") || len(second) <= len(first) || strings.Count(string(second), " 000000 lock ") != 2 {
		t.Fatalf("the lock does not record both versions:\n%s", second)
	}
	write("carry_test.go", `package consumer_test

import (
	"context"
	"testing"

	old "example.com/consumer/old"
	"example.com/consumer/task"
	"github.com/fsmgen/fsmgen/fsmrt"
)

func TestStoredTaskLoads(t *testing.T) {
	ctx := context.Background()
	store := fsmrt.NewMemoryStore()
	before := old.NewTask()
	before.ID = "TASK-1"
	before.SetStore(store)
	for _, e := range []old.Event{old.EventInProgress, old.EventBlocked} {
		if _, err := before.Fire(ctx, e); err != nil {
			t.Fatal(err)
		}
	}
	after, err := task.ReplayTask(ctx, store, "TASK-1")
	if err != nil {
		t.Fatalf("the new code does not load the stored task: %v", err)
	}
	if after.State() != task.StateBlocked || after.Seq() != before.Seq() {
		t.Fatalf("loaded in %v at %d, stored in %v at %d", after.State(), after.Seq(), before.State(), before.Seq())
	}
	after.SetStore(store)
	if _, err := after.Fire(ctx, task.EventNudge); err != nil {
		t.Fatalf("the new event: %v", err)
	}
	if _, err := after.Fire(ctx, task.EventInProgress); err != nil || after.State() != task.StateInProgress {
		t.Fatalf("resuming: %v, %v", err, after.State())
	}
	again, err := task.ReplayTask(ctx, store, "TASK-1")
	if err != nil || again.State() != task.StateInProgress {
		t.Fatalf("reloaded: %v, %v", err, again)
	}
}
`)
	run("vet", "./...")
	run("test", "./...")

	// The lock is part of what generate keeps: --check fails without it.
	check := func() (string, error) {
		cmd := exec.Command("go", "tool", "fsmgen", "generate", "--check", "task/task.fsm.yaml")
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod")
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	if out, err := check(); err != nil {
		t.Fatalf("generate --check after generate: %v\n%s", err, out)
	}
	if err := os.WriteFile(lockPath, first, 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := check(); err == nil || !strings.Contains(out, "does not record this version of the spec") {
		t.Errorf("generate --check with the lock of the first version: %v\n%s", err, out)
	}
	os.Remove(lockPath)
	if out, err := check(); err == nil || !strings.Contains(out, "missing: task/task.fsm.lock") {
		t.Errorf("generate --check without a lock: %v\n%s", err, out)
	}
}
