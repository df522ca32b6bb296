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
// a snapshot; or hand the snapshot and the log to replay through a store that holds them as
// a corrupted database would, each stamped with the machine's spec.
func loader[S any, M any](
	spec string,
	restore func(S) (M, error),
	replay func(ctx context.Context, store fsmrt.Store, id string) (M, error),
) seedLoader {
	return seedLoader{
		restore: func(b []byte) error {
			var s S
			err := json.Unmarshal(b, &s)
			if err == nil {
				_, err = restore(s)
			}
			return err
		},
		replay: func(c invalidCase) error {
			l := fsmrt.Loaded{Spec: spec}
			if len(c.Snapshot) > 0 {
				snap, seq, err := stamp(c.Snapshot, spec)
				if err != nil {
					return err
				}
				l.Snapshot, l.SnapshotSeq, l.Version = snap, seq, seq
			}
			var log []json.RawMessage
			if err := json.Unmarshal(c.Log, &log); err != nil {
				return err
			}
			for _, raw := range log {
				data, seq, err := stamp(raw, spec)
				if err != nil {
					return err
				}
				var fields struct {
					Kind string `json:"event"`
					Key  string `json:"idempotencyKey"`
				}
				if err := json.Unmarshal(raw, &fields); err != nil {
					return err
				}
				l.Entries = append(l.Entries, fsmrt.Entry{Seq: seq, Kind: fields.Kind, Key: fields.Key, Data: data})
				l.Version = seq
			}
			_, err := replay(context.Background(), corpusStore{l: l}, "t")
			return err
		},
	}
}

// stamp adds the spec's fingerprint and the instance's id to a snapshot or log entry of the
// corpus, which names neither, and returns its sequence number.
func stamp(raw json.RawMessage, spec string) ([]byte, int64, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil {
		return nil, 0, err
	}
	var seq int64
	if err := json.Unmarshal(fields["seq"], &seq); fields["seq"] != nil && err != nil {
		return nil, 0, err
	}
	fields["spec"], _ = json.Marshal(spec)
	if _, ok := fields["id"]; ok || fields["version"] != nil {
		fields["id"] = json.RawMessage(`"t"`)
	}
	b, err := json.Marshal(fields)
	return b, seq, err
}

// corpusStore is a store that holds one instance as given. Its outbox and deadlines are
// never asked for.
type corpusStore struct {
	fsmrt.Store
	l fsmrt.Loaded
}

func (corpusStore) Commit(context.Context, *fsmrt.Commit) error { return errors.New("read only") }
func (s corpusStore) Load(context.Context, string, string) (fsmrt.Loaded, error) {
	return s.l, nil
}
func (s corpusStore) Log(_ context.Context, _, _ string, after int64) ([]fsmrt.Entry, error) {
	var out []fsmrt.Entry
	for _, e := range s.l.Entries {
		if e.Seq > after {
			out = append(out, e)
		}
	}
	return out, nil
}
func (corpusStore) FindKey(context.Context, string, string, string) (fsmrt.Entry, bool, error) {
	return fsmrt.Entry{}, false, nil
}

var seedLoaders = map[string]seedLoader{
	"approval": loader(approval.NewTask(approval.TaskNopHooks{}).Snapshot().Spec,
		func(s approval.TaskSnapshot) (*approval.Task, error) {
			return approval.RestoreTask(s, approval.TaskNopHooks{})
		},
		func(ctx context.Context, st fsmrt.Store, id string) (*approval.Task, error) {
			return approval.ReplayTask(ctx, st, id, approval.TaskNopHooks{})
		}),
	"build": loader(build.NewTask(build.TaskNopHooks{}).Snapshot().Spec,
		func(s build.TaskSnapshot) (*build.Task, error) { return build.RestoreTask(s, build.TaskNopHooks{}) },
		func(ctx context.Context, st fsmrt.Store, id string) (*build.Task, error) {
			return build.ReplayTask(ctx, st, id, build.TaskNopHooks{})
		}),
	"cognitive": loader(cognitive.NewTask(cognitive.TaskNopHooks{}).Snapshot().Spec,
		func(s cognitive.TaskSnapshot) (*cognitive.Task, error) {
			return cognitive.RestoreTask(s, cognitive.TaskNopHooks{})
		},
		func(ctx context.Context, st fsmrt.Store, id string) (*cognitive.Task, error) {
			return cognitive.ReplayTask(ctx, st, id, cognitive.TaskNopHooks{})
		}),
	"pipeline": loader(pipeline.NewTask(pipeline.TaskNopHooks{}).Snapshot().Spec,
		func(s pipeline.TaskSnapshot) (*pipeline.Task, error) {
			return pipeline.RestoreTask(s, pipeline.TaskNopHooks{})
		},
		func(ctx context.Context, st fsmrt.Store, id string) (*pipeline.Task, error) {
			return pipeline.ReplayTask(ctx, st, id, pipeline.TaskNopHooks{})
		}),
	"review": loader(review.NewTask().Snapshot().Spec, review.RestoreTask, review.ReplayTask),
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
