package sqlite

import (
	"context"
	"errors"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fsmgen/fsmgen/fsmrt"
)

// damaged is a database file of instances m0... with their logs, damaged by damage after
// the store that wrote it closed.
func damaged(t *testing.T, damage func(t *testing.T, path string)) string {
	t.Helper()
	path := tempPath(t)
	s, err := Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 40 {
		id := "m" + strings.Repeat("x", i)
		commitN(t, s, id, 5, 2)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	damage(t, path)
	return path
}

// overwrite writes n random bytes into the file at path from offset at.
func overwrite(t *testing.T, path string, at int64, n int) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b := make([]byte, n)
	rand.New(rand.NewSource(at)).Read(b)
	if _, err := f.WriteAt(b, at); err != nil {
		t.Fatal(err)
	}
}

// TestCorruptFile is the corpus of damaged database files: every read of one fails with
// an error wrapping ErrCorrupt (or Open refuses the file so), never the driver's bare error.
func TestCorruptFile(t *testing.T) {
	ctx := context.Background()
	cases := map[string]func(t *testing.T, path string){
		"a garbage page": func(t *testing.T, path string) {
			st, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			for at := int64(4096); at < st.Size(); at += 4096 * 2 {
				overwrite(t, path, at, 4096)
			}
		},
		"the last page garbage": func(t *testing.T, path string) {
			st, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			overwrite(t, path, st.Size()-4096, 4096)
		},
		"a garbage header": func(t *testing.T, path string) { overwrite(t, path, 0, 100) },
		"a schema row lost": func(t *testing.T, path string) {
			execOn(t, path, `PRAGMA writable_schema = ON`, `DELETE FROM sqlite_master WHERE name = 'fsmgen_entries'`)
		},
		"no schema version": func(t *testing.T, path string) { execOn(t, path, `DELETE FROM fsmgen_schema`) },
		"a table dropped":   func(t *testing.T, path string) { execOn(t, path, `DROP TABLE fsmgen_counters`) },
	}
	for name, damage := range cases {
		t.Run(name, func(t *testing.T) {
			path := damaged(t, damage)
			s, err := Open(ctx, path)
			if err != nil {
				if !errors.Is(err, ErrCorrupt) {
					t.Fatalf("open: %v, want ErrCorrupt", err)
				}
				return
			}
			defer s.Close()
			fails := 0
			check := func(what string, err error) {
				if err != nil {
					fails++
					if !errors.Is(err, ErrCorrupt) {
						t.Errorf("%s: %v, want ErrCorrupt", what, err)
					}
				}
			}
			for i := range 40 {
				id := "m" + strings.Repeat("x", i)
				_, err := s.Load(ctx, "test.M", id)
				check("load "+id, err)
				_, err = s.Log(ctx, "test.M", id, 0)
				check("log "+id, err)
			}
			_, err = s.Find(ctx, fsmrt.Query{Machine: "test.M"})
			check("find", err)
			// The scheduler's and the outbox's reads.
			_, err = s.ClaimDeadlines(ctx, "test.M", "o", t0.Add(1000*time.Hour), time.Minute, 10)
			check("claim deadlines", err)
			_, err = s.ClaimEffects(ctx, "test.M", "o", t0.Add(1000*time.Hour), time.Minute, 10)
			check("claim effects", err)
			if fails == 0 {
				t.Error("nothing read from the damaged file failed")
			}
		})
	}
}

// execOn runs statements on the database file at path through a store of its own.
func execOn(t *testing.T, path string, stmts ...string) {
	t.Helper()
	s, err := Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	conn, err := s.db.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	for _, q := range stmts {
		if _, err := conn.ExecContext(context.Background(), q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}

// TestEmptyFile: a database file of 0 bytes (truncated, or lost and made again empty) is
// refused with ErrEmptyFile, not opened as a new, empty store in which every instance is
// unknown; WithCreate makes one there. A path with no file is a new database, as before.
func TestEmptyFile(t *testing.T) {
	ctx := context.Background()
	path := tempPath(t)
	if err := os.WriteFile(path, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if s, err := Open(ctx, path); !errors.Is(err, ErrEmptyFile) || s != nil {
		t.Fatalf("open of an empty file: %v", err)
	}
	if st, err := os.Stat(path); err != nil || st.Size() != 0 {
		t.Errorf("the refused file changed: %v, %v", st, err)
	}
	s := openStore(t, path, WithCreate())
	commitN(t, s, "m", 1)
	if l := mustLoad(t, s, "m"); l.Version != 1 {
		t.Errorf("loaded %+v", l)
	}
	fresh := openStore(t, tempPath(t))
	commitN(t, fresh, "m", 1)
	// The database a new path gets was made aside: nothing is left beside it.
	entries, err := os.ReadDir(filepath.Dir(path))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if strings.Contains(e.Name(), ".new-") {
			t.Errorf("left behind: %s", e.Name())
		}
	}
}

// TestRowsDisagree: an instance row whose state is not the one its last entry entered is
// refused by Load with ErrCorrupt; an entry whose columns disagree with its data, or an
// instance row whose state disagrees with its snapshot, are refused by fsmrt's Replay
// (a LogError naming the instance).
func TestRowsDisagree(t *testing.T) {
	ctx := context.Background()
	s := openStore(t, tempPath(t))
	commitN(t, s, "m", 3, 1)
	mustExec(t, s, `UPDATE fsmgen_instances SET state = 'a' WHERE id = 'm'`)
	if _, err := s.Load(ctx, "test.M", "m"); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "test.M m") {
		t.Errorf("load of an instance row in another state than its last entry: %v", err)
	}
	commitN(t, s, "n", 2, 2)
	mustExec(t, s, `UPDATE fsmgen_instances SET state = 'b' WHERE id = 'n'`)
	if _, err := s.Load(ctx, "test.M", "n"); err != nil {
		t.Errorf("load of an instance whose last entry is its snapshot's: %v (fsmrt compares the snapshot)", err)
	}
}
