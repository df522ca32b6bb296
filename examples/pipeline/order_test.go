package pipeline_test

import (
	"context"
	"errors"
	"testing"

	"github.com/fsmgen/fsmgen/generated/pipeline"
)

// TestSeed002OutOfOrder: the pipeline's steps come in order. A new task cannot be routed
// before it is classified, nor a phase succeed before the task runs: each is refused with
// an InvalidTransitionError, and the task stays where it was.
func TestSeed002OutOfOrder(t *testing.T) {
	ctx := context.Background()
	m := pipeline.NewTask(seedNewRunner("plan"))
	for _, e := range []pipeline.Event{pipeline.EventRouted, pipeline.EventPhaseSucceeded} {
		var ite *pipeline.InvalidTransitionError
		if _, err := m.Fire(ctx, e); !errors.As(err, &ite) || m.State() != pipeline.StateCreated {
			t.Errorf("%s on a new task: %v, now %s", e, err, m.State())
		}
	}
}
