package otel_test

import (
	"context"
	"log/slog"
	"os"

	"github.com/fsmgen/fsmgen/fsmrt"
	"github.com/fsmgen/fsmgen/generated/review"
	fsmotel "github.com/fsmgen/fsmgen/otel"
)

// A program without an OpenTelemetry collector can still see what its machines do: the
// LogObserver writes it to a slog.Logger.
func ExampleLogObserver() {
	logger := slog.New(slog.NewTextHandler(os.Stdout, &slog.HandlerOptions{
		ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey {
				return slog.Attr{} // left out, so that the output is the same every run
			}
			return a
		},
	}))
	ctx := context.Background()
	m := review.NewTask()
	m.ID = "TASK-1"
	fsmrt.SetObserver(&m.Machine, fsmotel.LogObserver{Logger: logger})
	m.Fire(ctx, review.EventInProgress)
	m.Fire(ctx, review.EventCompleted)
	// Output:
	// level=INFO msg=fired fsm.machine=review.Task fsm.instance=TASK-1 fsm.from=not_started fsm.event=in_progress fsm.to=in_progress
	// level=WARN msg=refused fsm.machine=review.Task fsm.instance=TASK-1 fsm.from=in_progress fsm.event=completed fsm.to=in_progress fsm.refusal=invalid error="review: no transition from in_progress on completed"
}
