//go:build !race

// The race detector allocates for its own bookkeeping, so these counts hold only without
// it: make test runs them in a build without -race.

package approval_test

import (
	"context"
	"testing"

	"github.com/fsmgen/fsmgen/generated/approval"
	"github.com/fsmgen/fsmgen/internal/allocs"
)

// TestAllocs counts exactly what one call allocates on seed 001's machine: roles, policies,
// required fields, action hooks, a review-cycle limit and idempotency keys.
func TestAllocs(t *testing.T) {
	ctx := context.Background()
	intern := approval.TaskInput{Role: approval.RoleIntern}
	// The machine's own cost: hooks that do nothing (seedHooks record what they did).
	restore := func(c approval.TaskContext) *approval.Task {
		m, err := approval.RestoreTask(approval.TaskSnapshot{Version: 1, ID: "TASK-1", State: approval.StateInProgress, Context: c}, approval.TaskNopHooks{})
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	inProgress := func() *approval.Task { return restore(seedComplete()) }
	keyed := func() *approval.Task {
		m := inProgress()
		seedFire(t, m, approval.EventReview, approval.TaskInput{Role: approval.RoleIntern, Key: "req-1"}, approval.StateReview)
		return m
	}
	bare := func() *approval.Task { return restore(approval.TaskContext{}) }
	for _, c := range []struct {
		name  string
		setup func() *approval.Task
		do    func(*approval.Task)
		want  float64
	}{
		// REVIEW requires a deliverable and a checklist, which the context has; the action
		// hooks do nothing.
		{"valid FireWith (roles, required fields, actions)", inProgress, func(m *approval.Task) { m.FireWith(ctx, approval.EventReview, intern) }, 0},
		// The first key creates the machine's window of keys: its map (header and first
		// group) and the list of keys in the order they came.
		{"valid FireWith with a new idempotency key", inProgress, func(m *approval.Task) {
			m.FireWith(ctx, approval.EventReview, approval.TaskInput{Role: approval.RoleIntern, Key: "req-1"})
		}, 3},
		{"retried key: the original result", keyed, func(m *approval.Task) {
			m.FireWith(ctx, approval.EventReview, approval.TaskInput{Role: approval.RoleIntern, Key: "req-1"})
		}, 0},
		// The conflict names the key and the original event, so it is built for the refusal.
		{"refused: key used for another event", keyed, func(m *approval.Task) {
			m.FireWith(ctx, approval.EventBlocked, approval.TaskInput{Role: approval.RoleSystem, Key: "req-1"})
		}, 1},
		{"refused FireWith (no transition)", inProgress, func(m *approval.Task) { m.FireWith(ctx, approval.EventDone, intern) }, 0},
		// The PermissionError names the role.
		{"refused FireWith (role)", inProgress, func(m *approval.Task) { m.FireWith(ctx, approval.EventBlocked, intern) }, 0},
		// The ValidationError lists every missing field with its message and the events
		// accepted instead: the error, the field list as it grows, the event list.
		{"refused FireWith (required fields)", bare, func(m *approval.Task) { m.FireWith(ctx, approval.EventReview, intern) }, 5},
	} {
		if got := allocs.Once(c.setup, c.do); got != c.want {
			t.Errorf("%s: %v allocations, want %v", c.name, got, c.want)
		}
	}
}
