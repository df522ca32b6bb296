package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"sync"
	"time"

	"github.com/fsmgen/fsmgen/fsmrt"
)

// Wake-ups (fsmrt.Waker). SQLite tells no other process about a commit, so the Stores
// wake one another within a process only: every Store of one process on the same
// database file shares a hub (sharedHubs, by the file's absolute path), and a commit that
// arms deadlines or writes effects nobody holds wakes the watches of its machine there,
// once committed. Waiters in other processes find such work at their polling interval
// (or when the nearest deadline they know of falls due). A transition committed in the
// caller's transaction (WithTx) wakes nobody: the store does not see that transaction
// commit; its deadlines and effects are found at the polling interval too.

// sharedHubs are the hubs of the database files open in this process: the one piece of
// state the package keeps outside a Store, so that two Stores on one file (two pools, a
// program's and a library's) wake each other as they would across PostgreSQL.
var sharedHubs = struct {
	sync.Mutex
	byFile map[string]*fileHub
}{byFile: map[string]*fileHub{}}

// fileHub is the hub of one database file, counted by the Stores using it.
type fileHub struct {
	fsmrt.WorkHub
	file string // "" for a database of one Store (in memory): not shared
	refs int
}

// sqlNextWork reads the earliest time (Unix microseconds) at which a claim of machine ?1
// may find work, as the claims read the tables: a deadline not handled falls due, or its
// lease runs out (a claim takes a lease that ended before its now: a microsecond after
// its end); an effect not delivered is free (its commit's time) or its lease runs out.
// A deadline's time is never before its at, so the deadlines after the first free one (in
// the order of the claims' index) cannot be earlier than it: only those up to it are read.
const sqlNextWork = `SELECT min(t) FROM (
	SELECT min(CASE WHEN owner IS NULL OR leased_until < at THEN at ELSE leased_until + 1 END) AS t
	FROM fsmgen_deadlines WHERE machine = ?1 AND handled_at IS NULL
		AND at <= coalesce((SELECT at FROM fsmgen_deadlines
			WHERE machine = ?1 AND handled_at IS NULL AND (owner IS NULL OR leased_until < at)
			ORDER BY at LIMIT 1), 9223372036854775807)
	UNION ALL
	SELECT min(CASE WHEN owner IS NULL THEN committed_at ELSE leased_until + 1 END)
	FROM fsmgen_effects WHERE machine = ?1 AND delivered_at IS NULL)`

var _ fsmrt.Waker = (*Store)(nil)

// joinHub gives the store the hub of its database file, shared with the other Stores of
// this process on it.
func (s *Store) joinHub(ctx context.Context) error {
	var file string
	if err := s.db.QueryRowContext(ctx, `SELECT file FROM pragma_database_list WHERE name = 'main'`).Scan(&file); err != nil {
		return fmt.Errorf("database file: %w", err)
	}
	if file != "" {
		if real, err := filepath.EvalSymlinks(file); err == nil {
			file = real
		}
	}
	sharedHubs.Lock()
	defer sharedHubs.Unlock()
	h := sharedHubs.byFile[file]
	if h == nil || file == "" {
		h = &fileHub{file: file}
		if file != "" {
			sharedHubs.byFile[file] = h
		}
	}
	h.refs++
	s.hub = h
	return nil
}

// leaveHub gives the store's hub back, when it closes.
func (s *Store) leaveHub() {
	if s.hub == nil {
		return
	}
	sharedHubs.Lock()
	defer sharedHubs.Unlock()
	if s.hub.refs--; s.hub.refs == 0 && s.hub.file != "" {
		delete(sharedHubs.byFile, s.hub.file)
	}
	s.hub = nil
}

// notify wakes the watches of c's machine in this process, after c committed, if c arms
// deadlines or writes effects that nobody holds.
func (s *Store) notify(c *fsmrt.Commit) {
	if s.hub != nil && fsmrt.CommitWakes(c) {
		s.hub.Notify(c.Machine)
	}
}

// InTx runs fn in a transaction of the caller's on the store's database (BeginTx), with the
// store as seen from it (WithTx), and commits it when fn returns nil, rolling it back
// otherwise (and when fn panics); once committed, it wakes the watches of this process on
// the machines whose transitions there armed deadlines or wrote effects (WatchWork), which
// a transaction committed by the caller cannot. It returns fn's error, or the commit's.
//
// The transaction is the store's turn to write: it runs on the store's writer connection
// (writer.go) once the store's earlier writes are done, and the store's other writes wait
// for it to end, as they wait for one another. So fn must not write through the store
// itself (only through st), nor call InTx again: such a write waits for fn, and fails with
// ErrWriterBusy after the busy timeout.
func (s *Store) InTx(ctx context.Context, fn func(tx *sql.Tx, st fsmrt.Store) error) error {
	var woke []string
	err := s.userTx(ctx, func(t *sql.Tx) error {
		return fn(t, &txStore{Store: s, tx: &tx{tx: t}, woke: &woke})
	})
	if err != nil {
		return err
	}
	if s.hub != nil {
		for _, m := range woke {
			s.hub.Notify(m)
		}
	}
	return nil
}

// WatchWork returns a watch on the work of machine (fsmrt.Waker): a commit of any Store of
// this process on the same file that arms deadlines of machine or writes effects of it
// nobody holds wakes it.
func (s *Store) WatchWork(machine string) fsmrt.WorkWatch {
	if s.hub == nil { // closed: nothing will wake it
		return new(fsmrt.WorkHub).Watch(machine)
	}
	return s.hub.Watch(machine)
}

// NextWork returns when a claim of machine may next find work (fsmrt.Waker), in one
// statement.
func (s *Store) NextWork(ctx context.Context, machine string) (time.Time, bool, error) {
	var at sql.NullInt64
	if err := s.db.QueryRowContext(ctx, sqlNextWork, machine).Scan(&at); err != nil {
		return time.Time{}, false, fmt.Errorf("sqlite store: next work of %s: %w", machine, corrupt(err))
	}
	if !at.Valid {
		return time.Time{}, false, nil
	}
	return time.UnixMicro(at.Int64), true, nil
}
