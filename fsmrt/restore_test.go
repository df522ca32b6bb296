package fsmrt_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/fsmgen/fsmgen/fsmrt"
)

func TestSnapshotAndLogErrors(t *testing.T) {
	sp := &fsmrt.Spec{Package: "review"}
	se := fsmrt.InvalidSnapshot(sp, "counters.reviews", "-1 is negative")
	if got, want := se.Error(), "review: restore: counters.reviews: -1 is negative"; got != want {
		t.Errorf("SnapshotError = %q, want %q", got, want)
	}
	if !errors.Is(fmt.Errorf("load: %w", se), fsmrt.ErrInvalidSnapshot) || errors.Is(se, fsmrt.ErrInvalidLog) || errors.Is(se, fsmrt.ErrRefused) {
		t.Error("SnapshotError matches the wrong sentinels")
	}
	cause := errors.New("the log has a gap")
	le := fsmrt.InvalidLog(sp, "task-1", 7, cause)
	if got, want := le.Error(), "review: replay task-1: seq 7: the log has a gap"; got != want {
		t.Errorf("LogError = %q, want %q", got, want)
	}
	if !errors.Is(le, fsmrt.ErrInvalidLog) || !errors.Is(le, cause) || errors.Is(le, fsmrt.ErrInvalidSnapshot) {
		t.Error("LogError matches the wrong errors")
	}
	var target *fsmrt.LogError
	if !errors.As(fmt.Errorf("x: %w", le), &target) || target.Seq != 7 || target.ID != "task-1" {
		t.Errorf("errors.As LogError: %+v", target)
	}
}

func TestRequireJSON(t *testing.T) {
	sp := &fsmrt.Spec{Package: "review"}
	for _, c := range []struct {
		in, want string
	}{
		{`{"version": 1, "state": "a"}`, ""},
		{`{"version": 1}`, "review: restore: state: missing"},
		{`{"version": 1, "state": null}`, "review: restore: state: null"},
		{`{"version": null, "state": "a"}`, "review: restore: version: null"},
		{`{"version": 1, "state":  null }`, "review: restore: state: null"},
		{`[1, 2]`, ""},        // not an object: left for json.Unmarshal
		{`null`, ""},          // no object at all
		{`{"version": 1`, ""}, // broken: left for json.Unmarshal
		{`{"state": 0, "version": 2}`, ""},
	} {
		err := fsmrt.RequireJSON(sp, []byte(c.in), "version", "state")
		got := ""
		if err != nil {
			got = err.Error()
			if !errors.Is(err, fsmrt.ErrInvalidSnapshot) {
				t.Errorf("%s: %v is not ErrInvalidSnapshot", c.in, err)
			}
		}
		if got != c.want {
			t.Errorf("RequireJSON(%s) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestDecodeSnapshot(t *testing.T) {
	sp := &fsmrt.Spec{Package: "review"}
	var v struct {
		Version int    `json:"version"`
		State   string `json:"state"`
	}
	if err := fsmrt.DecodeSnapshot(sp, []byte(`{"version": 1, "state": "a"}`), &v); err != nil || v.Version != 1 || v.State != "a" {
		t.Errorf("decoded %+v, %v", v, err)
	}
	for in, want := range map[string]string{
		`{"version": 1}`:               "review: restore: state: missing",
		`{"version": "1", "state": 2}`: "review: restore: (json): json: cannot unmarshal",
		`{"version": 1`:                "review: restore: (json): unexpected end of JSON input",
	} {
		err := fsmrt.DecodeSnapshot(sp, []byte(in), &v)
		if err == nil || !errors.Is(err, fsmrt.ErrInvalidSnapshot) || len(err.Error()) < len(want) || err.Error()[:len(want)] != want {
			t.Errorf("DecodeSnapshot(%s) = %v, want %q...", in, err, want)
		}
	}
}
