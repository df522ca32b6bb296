package postgres

import (
	"bytes"
	"context"
	"errors"
	"net"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/fsmgen/fsmgen/fsmrt"
)

// lockInstance makes commits of instance (machine, id) wait: a transaction of a
// connection of its own locks its row, or, when the instance does not exist, inserts it
// without committing. release rolls that transaction back.
func lockInstance(t *testing.T, dsn, machine, id string, exists bool) (release func()) {
	t.Helper()
	ctx := context.Background()
	tx, err := connect(t, dsn).Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	sql := `INSERT INTO fsmgen_instances (machine, id, spec, version, state, last_at) VALUES ($1, $2, 'locker', 1, 'x', now())`
	if exists {
		sql = `SELECT 1 FROM fsmgen_instances WHERE machine = $1 AND id = $2 FOR UPDATE`
	}
	if tag, err := tx.Exec(ctx, sql, machine, id); err != nil || tag.RowsAffected() != 1 {
		t.Fatalf("lock %s %s: %v, %v", machine, id, tag, err)
	}
	return func() {
		if err := tx.Rollback(ctx); err != nil {
			t.Error(err)
		}
	}
}

// waitingCommit returns the process id of the server backend of a commit that waits for
// a lock.
func waitingCommit(t *testing.T, admin *pgx.Conn) int32 {
	t.Helper()
	const sql = `SELECT pid FROM pg_stat_activity
		WHERE datname = current_database() AND pid <> pg_backend_pid()
			AND wait_event_type = 'Lock' AND query LIKE '%fsmgen_entries%'`
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		var pid int32
		err := admin.QueryRow(context.Background(), sql).Scan(&pid)
		if err == nil {
			return pid
		}
		if !errors.Is(err, pgx.ErrNoRows) {
			t.Fatal(err)
		}
	}
	t.Fatal("no commit waits for the lock")
	return 0
}

// A commit whose connection is killed, or whose context is cancelled, while it waits in
// its transaction returns an error and writes nothing; the store goes on.
func TestInterruptedCommit(t *testing.T) {
	ctx := context.Background()
	dsn := newDatabase(t)
	st := openStore(t, dsn)
	admin := connect(t, dsn)
	for _, c := range []struct {
		name   string
		seq    int64 // of the commit interrupted
		cancel bool  // cancel the context instead of killing the connection
	}{
		{"killed first commit", 1, false},
		{"killed next commit", 3, false},
		{"cancelled first commit", 1, true},
		{"cancelled next commit", 3, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			const machine = "interrupted"
			id := c.name
			mustCommit(t, st, machine, id, 1, c.seq-1)
			before, beforeLog := mustLoad(t, st, machine, id), mustLog(t, st, machine, id)

			release := lockInstance(t, dsn, machine, id, c.seq > 1)
			cctx, cancel := context.WithCancel(ctx)
			defer cancel()
			done := make(chan error, 1)
			go func() { done <- st.Commit(cctx, testCommit(machine, id, c.seq, "k", `{"lost":true}`)) }()
			pid := waitingCommit(t, admin)
			if c.cancel {
				cancel()
			} else if _, err := admin.Exec(ctx, `SELECT pg_terminate_backend($1)`, pid); err != nil {
				t.Fatal(err)
			}
			err := <-done
			switch {
			case err == nil:
				t.Fatal("the interrupted commit succeeded")
			case errors.Is(err, fsmrt.ErrStoreConflict) || errors.Is(err, ErrCommitUnknown) || !strings.Contains(err.Error(), id):
				t.Errorf("the interrupted commit: %v", err)
			case c.cancel && !errors.Is(err, context.Canceled):
				t.Errorf("the cancelled commit: %v, want context.Canceled", err)
			}
			release()

			after, afterLog := mustLoad(t, st, machine, id), mustLog(t, st, machine, id)
			if after.Version != before.Version || after.State != before.State || len(afterLog) != len(beforeLog) {
				t.Errorf("the interrupted commit changed %+v into %+v", before, after)
			}
			// The same version and key commit now, after the interrupted transaction is gone.
			if err := st.Commit(ctx, testCommit(machine, id, c.seq, "k", `{"won":true}`)); err != nil {
				t.Fatalf("commit after the interrupted one: %v", err)
			}
			if log := mustLog(t, st, machine, id); len(log) != int(c.seq) || string(log[c.seq-1].Data) != `{"won":true}` {
				t.Errorf("log after the interrupted commit: %+v", log)
			}
		})
	}
}

// cutConn is a connection to the server that a test cuts when the client sends COMMIT.
type cutConn struct {
	net.Conn
	cut *atomic.Int32 // cutNone, cutBefore or cutAfter: when to cut the next COMMIT
}

// When a cutConn cuts the connection of a COMMIT.
const (
	cutNone   = iota
	cutBefore // before sending it: the server never gets it
	cutAfter  // once it is sent: the server commits, the client never hears
)

// commitMessage is the simple-protocol query pgx sends to commit a transaction.
var commitMessage = []byte("commit\x00")

// Write sends p, unless it is the COMMIT to cut.
func (c cutConn) Write(p []byte) (int, error) {
	if len(p) == 0 || p[0] != 'Q' || !bytes.HasSuffix(p, commitMessage) {
		return c.Conn.Write(p)
	}
	switch c.cut.Swap(cutNone) {
	case cutBefore:
		c.Conn.Close()
		return 0, errors.New("test: connection cut before the commit")
	case cutAfter:
		n, err := c.Conn.Write(p)
		c.Conn.Close()
		return n, err
	}
	return c.Conn.Write(p)
}

// A connection lost while the COMMIT is in flight leaves the outcome unknown, and Commit
// says so (ErrCommitUnknown); one lost before the COMMIT is sent writes nothing, and
// Commit says that it failed.
func TestCommitOutcomeUnknown(t *testing.T) {
	ctx := context.Background()
	dsn := newDatabase(t)
	var cut atomic.Int32
	st := openStoreWrapping(t, dsn, func(conn net.Conn) net.Conn { return cutConn{Conn: conn, cut: &cut} })
	check := openStore(t, dsn)

	mustCommit(t, st, "unknown", "m", 1, 1)
	cut.Store(cutBefore)
	err := st.Commit(ctx, testCommit("unknown", "m", 2, "", "{}"))
	if err == nil || errors.Is(err, ErrCommitUnknown) || errors.Is(err, fsmrt.ErrStoreConflict) {
		t.Errorf("a commit cut before the COMMIT was sent: %v, want a failure of known outcome", err)
	}
	if l := mustLoad(t, check, "unknown", "m"); l.Version != 1 {
		t.Errorf("a commit cut before the COMMIT was sent stored version %d", l.Version)
	}

	cut.Store(cutAfter)
	c := testCommit("unknown", "m", 2, "", "{}")
	c.Effects = []fsmrt.Effect{{Name: "send", Key: "k"}}
	err = st.Commit(ctx, c)
	if !errors.Is(err, ErrCommitUnknown) || !strings.Contains(err.Error(), "unknown") || !strings.Contains(err.Error(), `"m"`) {
		t.Errorf("a commit cut once the COMMIT was sent: %v, want ErrCommitUnknown", err)
	}
	// Here the server got the COMMIT: the transaction commits, whole.
	for deadline := time.Now().Add(10 * time.Second); mustLoad(t, check, "unknown", "m").Version != 2; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the commit the server got never showed")
		}
	}
	if es, err := check.ClaimEffects(ctx, "unknown", "w", time.Now(), time.Minute, 10); err != nil || len(es) != 1 {
		t.Errorf("the effects of the commit: %v, %v", es, err)
	}
	mustCommit(t, st, "unknown", "m", 3, 3)
}

// Names PostgreSQL cannot keep in text are invalid commits; reads of them fail.
func TestUnstorableNames(t *testing.T) {
	ctx := context.Background()
	st := openStore(t, newDatabase(t))
	for name, change := range map[string]func(c *fsmrt.Commit){
		"NUL in id":            func(c *fsmrt.Commit) { c.ID = "a\x00b" },
		"invalid UTF-8 in id":  func(c *fsmrt.Commit) { c.ID = "a\xffb" },
		"NUL in state":         func(c *fsmrt.Commit) { c.State = "a\x00b" },
		"invalid UTF-8 in key": func(c *fsmrt.Commit) { c.Entry.Key = "\xff" },
		"NUL in an effect":     func(c *fsmrt.Commit) { c.Effects = []fsmrt.Effect{{Name: "send", Key: "a\x00b"}} },
		"invalid UTF-8 in an owner": func(c *fsmrt.Commit) {
			c.Effects, c.Owner, c.LeaseUntil = []fsmrt.Effect{{Name: "send", Key: "k"}}, "\xff", time.Now()
		},
		"NUL in a deadline": func(c *fsmrt.Commit) {
			c.Rearm, c.Deadlines = true, []fsmrt.Deadline{{Name: "expiry", At: time.Now(), Event: "a\x00b"}}
		},
	} {
		c := testCommit("names", "fine", 1, "", "{}")
		change(c)
		if err := st.Commit(ctx, c); !errors.Is(err, fsmrt.ErrInvalidCommit) {
			t.Errorf("%s: %v, want ErrInvalidCommit", name, err)
		}
	}
	if _, err := st.Load(ctx, "names", "a\x00b"); err == nil {
		t.Error("load of an id with a NUL byte succeeded")
	}
	if l := mustLoad(t, st, "names", "fine"); l.Version != 0 {
		t.Errorf("a refused commit stored %+v", l)
	}
	mustCommit(t, st, "names", "fine", 1, 2)
}

// Nil and empty bytes, odd times and empty names come back as the MemoryStore gives them
// back.
func TestLikeMemoryStore(t *testing.T) {
	ctx := context.Background()
	pg, mem := openStore(t, newDatabase(t)), fsmrt.NewMemoryStore()
	commits := []*fsmrt.Commit{
		testCommit("like", "m", 1, "", ""),
		testCommit("like", "m", 2, "k", ""),
		testCommit("like", "m", 3, "", "x"),
		testCommit("like", "m", 4, "", "y"),
	}
	commits[0].Entry.Data, commits[0].Snapshot, commits[0].Entry.At = nil, []byte{}, time.Time{}
	commits[1].Entry.Data, commits[1].Entry.At = []byte{}, time.Date(1969, 7, 20, 20, 17, 40, 1500, time.FixedZone("X", -5*3600))
	commits[2].Entry.Event, commits[2].Entry.From, commits[2].Entry.To = "", "", ""
	commits[2].Entry.At = time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC)
	commits[3].Snapshot = []byte(" ")
	for i, c := range commits {
		for _, st := range []fsmrt.Store{pg, mem} {
			if err := st.Commit(ctx, c); err != nil {
				t.Fatalf("commit %d: %v", i+1, err)
			}
		}
		want, got := mustLoad(t, mem, "like", "m"), mustLoad(t, pg, "like", "m")
		if !sameLoaded(got, want) {
			t.Errorf("after commit %d: loaded\n%#v\nwant\n%#v", i+1, got, want)
		}
	}
	want, got := mustLog(t, mem, "like", "m"), mustLog(t, pg, "like", "m")
	if !sameEntries(got, want) {
		t.Errorf("log\n%#v\nwant\n%#v", got, want)
	}
	we, wok, _ := mem.FindKey(ctx, "like", "m", "k")
	ge, gok, err := pg.FindKey(ctx, "like", "m", "k")
	if err != nil || gok != wok || !sameEntries([]fsmrt.Entry{ge}, []fsmrt.Entry{we}) {
		t.Errorf("find key: %#v, %v, %v; want %#v", ge, gok, err, we)
	}
}

// sameLoaded compares loaded instances, times by the instant.
func sameLoaded(a, b fsmrt.Loaded) bool {
	ea, eb := a.Entries, b.Entries
	a.Entries, b.Entries = nil, nil
	return sameEntries(ea, eb) && (ea == nil) == (eb == nil) &&
		a.Version == b.Version && a.Spec == b.Spec && a.State == b.State && a.SnapshotSeq == b.SnapshotSeq &&
		string(a.Snapshot) == string(b.Snapshot) && (a.Snapshot == nil) == (b.Snapshot == nil)
}

// sameEntries compares entries, times by the instant, nil data apart from empty data.
func sameEntries(a, b []fsmrt.Entry) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := a[i], b[i]
		if !x.At.Equal(y.At) || (x.Data == nil) != (y.Data == nil) || string(x.Data) != string(y.Data) {
			return false
		}
		x.At, y.At, x.Data, y.Data = time.Time{}, time.Time{}, nil, nil
		if !reflect.DeepEqual(x, y) {
			return false
		}
	}
	return true
}
