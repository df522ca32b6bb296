// Package examples_test holds the tests that span the seed machines; each seed's own
// scenario tests, examples and benchmarks are in its directory.
package examples_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fsmgen/fsmgen/fsmrt"
	"github.com/fsmgen/fsmgen/generated/approval"
	"github.com/fsmgen/fsmgen/generated/build"
	"github.com/fsmgen/fsmgen/generated/cognitive"
	"github.com/fsmgen/fsmgen/generated/pipeline"
	"github.com/fsmgen/fsmgen/generated/review"
)

// invalidCase is one file of testdata/invalid: a snapshot that restoring must refuse, or an
// event log (after an optional snapshot) that replaying must refuse, with the error's text.
type invalidCase struct {
	Machine  string          `json:"machine"`
	Want     string          `json:"want"`
	Snapshot json.RawMessage `json:"snapshot"`
	Log      json.RawMessage `json:"log"`
}

// seedLoader restores or replays one seed machine from a case.
type seedLoader struct {
	restore func(snapshot []byte) error
	replay  func(c invalidCase) error
}

// loader builds the loader of one machine from its generated functions: decode and restore
// a snapshot; or keep the snapshot and the log in the machine's memory store and replay.
func loader[L, S fsmrt.Sequenced, M any](
	restore func(S) (M, error),
	newStore func() *fsmrt.MemoryStore[L, S],
	replay func(ctx context.Context, store fsmrt.Store[L, S], id string) (M, error),
) seedLoader {
	decode := func(b []byte) (S, error) {
		var s S
		return s, json.Unmarshal(b, &s)
	}
	return seedLoader{
		restore: func(b []byte) error {
			s, err := decode(b)
			if err == nil {
				_, err = restore(s)
			}
			return err
		},
		replay: func(c invalidCase) error {
			ctx := context.Background()
			store := newStore()
			if len(c.Snapshot) > 0 {
				s, err := decode(c.Snapshot)
				if err != nil {
					return err
				}
				if err := store.Save(ctx, "t", 0, s); err != nil {
					return err
				}
			}
			var log []L
			if err := json.Unmarshal(c.Log, &log); err != nil {
				return err
			}
			for _, e := range log {
				if err := store.Append(ctx, "t", e); err != nil {
					return err
				}
			}
			_, err := replay(ctx, store, "t")
			return err
		},
	}
}

var seedLoaders = map[string]seedLoader{
	"approval": loader(
		func(s approval.TaskSnapshot) (*approval.Task, error) {
			return approval.RestoreTask(s, approval.TaskNopHooks{})
		},
		approval.NewTaskMemoryStore,
		func(ctx context.Context, st approval.TaskStore, id string) (*approval.Task, error) {
			return approval.ReplayTask(ctx, st, id, approval.TaskNopHooks{})
		}),
	"build": loader(
		func(s build.TaskSnapshot) (*build.Task, error) { return build.RestoreTask(s, build.TaskNopHooks{}) },
		build.NewTaskMemoryStore,
		func(ctx context.Context, st build.TaskStore, id string) (*build.Task, error) {
			return build.ReplayTask(ctx, st, id, build.TaskNopHooks{})
		}),
	"cognitive": loader(
		func(s cognitive.TaskSnapshot) (*cognitive.Task, error) {
			return cognitive.RestoreTask(s, cognitive.TaskNopHooks{})
		},
		cognitive.NewTaskMemoryStore,
		func(ctx context.Context, st cognitive.TaskStore, id string) (*cognitive.Task, error) {
			return cognitive.ReplayTask(ctx, st, id, cognitive.TaskNopHooks{})
		}),
	"pipeline": loader(
		func(s pipeline.TaskSnapshot) (*pipeline.Task, error) {
			return pipeline.RestoreTask(s, pipeline.TaskNopHooks{})
		},
		pipeline.NewTaskMemoryStore,
		func(ctx context.Context, st pipeline.TaskStore, id string) (*pipeline.Task, error) {
			return pipeline.ReplayTask(ctx, st, id, pipeline.TaskNopHooks{})
		}),
	"review": loader(review.RestoreTask, review.NewTaskMemoryStore, review.ReplayTask),
}

// TestInvalidSnapshotsAndLogs: every snapshot and event log of testdata/invalid, each
// something the machine could never have written, is refused with a typed error
// (ErrInvalidSnapshot or ErrInvalidLog) that says what is wrong.
func TestInvalidSnapshotsAndLogs(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "invalid", "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no cases: %v", err)
	}
	for _, f := range files {
		t.Run(strings.TrimSuffix(filepath.Base(f), ".json"), func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			var c invalidCase
			if err := json.Unmarshal(data, &c); err != nil {
				t.Fatal(err)
			}
			l, ok := seedLoaders[c.Machine]
			if !ok || c.Want == "" {
				t.Fatalf("machine %q, want %q", c.Machine, c.Want)
			}
			sentinel := approval.ErrInvalidSnapshot
			if len(c.Log) > 0 {
				sentinel = approval.ErrInvalidLog
				err = l.replay(c)
			} else {
				err = l.restore(c.Snapshot)
			}
			if err == nil {
				t.Fatal("accepted")
			}
			if !errors.Is(err, sentinel) || !strings.Contains(err.Error(), c.Want) {
				t.Errorf("error %q (errors.Is %v: %v), want one containing %q", err, sentinel, errors.Is(err, sentinel), c.Want)
			}
		})
	}
}
