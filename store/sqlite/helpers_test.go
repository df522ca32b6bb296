package sqlite

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/fsmgen/fsmgen/fsmrt"
)

// tempPath returns the path of a database file in a new temporary directory.
func tempPath(t *testing.T) string {
	t.Helper()
	return filepath.Join(t.TempDir(), "fsm.db")
}

// openStore opens the store in file path, closed when the test ends.
func openStore(t *testing.T, path string, opts ...Option) *Store {
	t.Helper()
	s, err := Open(context.Background(), path, opts...)
	if err != nil {
		t.Fatalf("open %s: %v", path, err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("close %s: %v", path, err)
		}
	})
	return s
}

// mustExec runs a statement on the store's database, failing the test on an error.
func mustExec(t *testing.T, s *Store, query string, args ...any) {
	t.Helper()
	if _, err := s.db.ExecContext(context.Background(), query, args...); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
}

const testSpec = "sha256:test"

// t0 is the time of the first test entry.
var t0 = time.Date(2026, 3, 1, 12, 0, 0, 123456789, time.UTC)

// testCommit returns the commit of entry seq of instance ("test.M", id), going a -> b
// -> a ..., with a snapshot when snap.
func testCommit(id string, seq int64, key string, snap bool) *fsmrt.Commit {
	from, to := "a", "b"
	if seq%2 == 0 {
		from, to = "b", "a"
	}
	c := &fsmrt.Commit{
		Machine: "test.M", ID: id, Spec: testSpec, Version: seq - 1, State: to,
		Entry: fsmrt.Entry{
			Seq: seq, Kind: fsmrt.KindTransition, Event: "go_" + to, From: from, To: to,
			At: t0.Add(time.Duration(seq) * time.Second), Key: key,
			Data: fmt.Appendf(nil, `{"seq":%d}`, seq),
		},
	}
	if snap {
		c.Snapshot = fmt.Appendf(nil, `{"snap":%d}`, seq)
	}
	return c
}

// commitN commits entries 1 to n of instance id, a snapshot after each entry in snaps.
func commitN(t *testing.T, s fsmrt.Store, id string, n int64, snaps ...int64) {
	t.Helper()
	for seq := int64(1); seq <= n; seq++ {
		snap := false
		for _, k := range snaps {
			snap = snap || k == seq
		}
		if err := s.Commit(context.Background(), testCommit(id, seq, "", snap)); err != nil {
			t.Fatalf("commit %d of %s: %v", seq, id, err)
		}
	}
}

// mustLoad loads instance id of machine test.M, failing the test on an error.
func mustLoad(t *testing.T, s fsmrt.Store, id string) fsmrt.Loaded {
	t.Helper()
	l, err := s.Load(context.Background(), "test.M", id)
	if err != nil {
		t.Fatalf("load %s: %v", id, err)
	}
	return l
}
