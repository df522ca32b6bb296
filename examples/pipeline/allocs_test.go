//go:build !race

// The race detector allocates for its own bookkeeping, so these counts hold only without
// it: make test runs them in a build without -race.

package pipeline_test

import (
	"context"
	"testing"
	"time"

	"github.com/fsmgen/fsmgen/fsmrt"
	"github.com/fsmgen/fsmgen/generated/pipeline"
	"github.com/fsmgen/fsmgen/internal/allocs"
)

// TestAllocs counts exactly what one call allocates on seed 002's machine: field guards,
// counters with limits, a checkpoint on every transition, with and without a store.
func TestAllocs(t *testing.T) {
	ctx := context.Background()
	in := pipeline.TaskInput{At: time.Unix(0, 0)}
	executing := func(store bool) func() *pipeline.Task {
		return func() *pipeline.Task {
			m := pipeline.NewTask(benchPhases{})
			m.ID = "allocs"
			if store {
				m.SetStore(fsmrt.NewMemoryStore())
			}
			m.Context.Confidence = 0.9
			for _, e := range []pipeline.Event{pipeline.EventStart, pipeline.EventClassified, pipeline.EventRouted} {
				if _, err := m.FireWith(ctx, e, in); err != nil {
					t.Fatal(err)
				}
			}
			return m
		}
	}
	for _, c := range []struct {
		name  string
		setup func() *pipeline.Task
		do    func(*pipeline.Task)
		want  float64
	}{
		// The checkpoint hook runs on every transition; without a store nothing is encoded.
		{"valid FireWith with a checkpoint", executing(false), func(m *pipeline.Task) { m.FireWith(ctx, pipeline.EventPhaseSucceeded, in) }, 0},
		{"valid FireWith, counter and limit", executing(false), func(m *pipeline.Task) { m.FireWith(ctx, pipeline.EventPhaseFailed, in) }, 0},
		{"refused FireWith (no transition)", executing(false), func(m *pipeline.Task) { m.FireWith(ctx, pipeline.EventStart, in) }, 0},
		// With the memory store: only the store's copies of the log entry and of the
		// counters for queries. The machine encodes the context, the entry and the snapshot
		// into buffers and builds the commit in a struct that it reuses from one transition
		// to the next (a store keeps nothing of a commit), and the store writes the snapshot
		// over the last one.
		{"valid FireWith with a checkpoint and a store", executing(true), func(m *pipeline.Task) { m.FireWith(ctx, pipeline.EventPhaseSucceeded, in) }, 2},
		{"refused FireWith with a store", executing(true), func(m *pipeline.Task) { m.FireWith(ctx, pipeline.EventStart, in) }, 0},
	} {
		if got := allocs.Once(c.setup, c.do); got != c.want {
			t.Errorf("%s: %v allocations, want %v", c.name, got, c.want)
		}
	}
}
