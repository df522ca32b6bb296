package pipeline_test

import (
	"context"
	"testing"
	"time"

	"github.com/fsmgen/fsmgen/fsmrt"
	"github.com/fsmgen/fsmgen/generated/pipeline"
)

// benchPhases has more phases forever: phase_succeeded advances to the next one, an internal
// transition of executing.
type benchPhases struct{ pipeline.TaskNopHooks }

func (benchPhases) HasMorePhases(context.Context, *pipeline.Task, pipeline.TaskStep) bool {
	return true
}

// BenchmarkFireCheckpointStore measures a transition of seed 002's machine with a store:
// the checkpoint on every transition (the hook, then a snapshot encoded and saved) and the
// event log entry (the context encoded, the entry appended), with the time passed in.
func BenchmarkFireCheckpointStore(b *testing.B) {
	ctx := context.Background()
	m := pipeline.NewTask(benchPhases{})
	m.ID = "bench"
	m.SetStore(fsmrt.NewMemoryStore())
	in := pipeline.TaskInput{At: time.Unix(0, 0)}
	m.Context.Confidence = 0.9
	for _, e := range []pipeline.Event{pipeline.EventStart, pipeline.EventClassified, pipeline.EventRouted} {
		if _, err := m.FireWith(ctx, e, in); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := m.FireWith(ctx, pipeline.EventPhaseSucceeded, in); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkFireCheckpoint is the same transition without a store: the checkpoint hook only,
// and the clock read for the time of the transition.
func BenchmarkFireCheckpoint(b *testing.B) {
	ctx := context.Background()
	m := pipeline.NewTask(benchPhases{})
	m.Context.Confidence = 0.9
	for _, e := range []pipeline.Event{pipeline.EventStart, pipeline.EventClassified, pipeline.EventRouted} {
		if _, err := m.Fire(ctx, e); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := m.Fire(ctx, pipeline.EventPhaseSucceeded); err != nil {
			b.Fatal(err)
		}
	}
}
