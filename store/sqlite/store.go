package sqlite

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/fsmgen/fsmgen/fsmrt"

	msqlite "modernc.org/sqlite" // also registers the "sqlite" driver
	sqlite3 "modernc.org/sqlite/lib"
)

// Store is an fsmrt.Store in a SQLite database, safe for concurrent use. Make one with
// Open or New.
type Store struct {
	db *sql.DB
	// owned is whether Close closes db (Open opened it).
	owned bool
	// writer admits one write of this Store at a time (a commit, a claim, a
	// completion, a migration); the others wait here, where they can give up with their
	// context, rather than in SQLite's busy handler.
	writer chan struct{}
	// stmts are the statements prepared when the Store opened, by their text.
	stmts map[string]*sql.Stmt
	// keepWriter is whether the Store writes on a connection of its own, w, once taken
	// (writer.go); w is the Store's only while it holds the writer's turn.
	keepWriter bool
	w          *writer
	// busyTimeout is the connections' busy timeout; a write waits that long for the
	// store's earlier writes (lockWriter), or DefaultBusyTimeout if longer.
	busyTimeout time.Duration
	// hub wakes the watches of this process on the database file (wake.go).
	hub *fileHub
	// group queues the completions of delivered effects (WithGroupedCompletions), or is
	// nil.
	group *fsmrt.CompletionGroup
}

var _ fsmrt.Store = (*Store)(nil)

// DefaultBusyTimeout is how long a connection waits for a lock another connection or
// process holds before it fails with SQLITE_BUSY, unless WithBusyTimeout says otherwise.
const DefaultBusyTimeout = 10 * time.Second

// Option changes how Open opens the database.
type Option func(*config)

// config is what the options of Open set.
type config struct {
	busyTimeout time.Duration
	synchronous string
	create      bool          // WithCreate
	groupWithin time.Duration // WithGroupedCompletions
}

// WithBusyTimeout sets how long a connection waits for a lock another connection or
// process holds (PRAGMA busy_timeout, to the millisecond) before it fails with
// SQLITE_BUSY. Zero or less fails at once.
func WithBusyTimeout(d time.Duration) Option {
	return func(c *config) { c.busyTimeout = max(d, 0) }
}

// WithSynchronousNormal sets PRAGMA synchronous=NORMAL instead of FULL: commits are
// faster and the database still never corrupts, but the last commits before a power
// loss or an operating system crash may be lost (a crash of the program alone loses
// nothing).
func WithSynchronousNormal() Option {
	return func(c *config) { c.synchronous = "NORMAL" }
}

// Open opens the SQLite database in file path, creating it when missing, puts it in WAL
// mode, sets the other pragmas of the package documentation on every connection, and
// migrates its schema. It fails with a SchemaError, changing nothing, when the file's
// schema is newer than this code; with an error wrapping ErrCorrupt when the file is
// damaged (not a database, a table of the schema missing); and with ErrEmptyFile when
// the file is there and empty (0 bytes), unless WithCreate (corrupt.go).
func Open(ctx context.Context, path string, opts ...Option) (*Store, error) {
	if path == "" {
		return nil, errors.New("sqlite store: open: empty path")
	}
	cfg := config{busyTimeout: DefaultBusyTimeout, synchronous: "FULL"}
	for _, o := range opts {
		if o != nil {
			o(&cfg)
		}
	}
	dsn, err := dataSourceName(path, cfg)
	if err != nil {
		return nil, err
	}
	if err := newFile(ctx, path, cfg); err != nil {
		return nil, fmt.Errorf("sqlite store: open: %w", err)
	}
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("sqlite store: open %s: %w", path, err)
	}
	s := newStore(db)
	s.owned = true
	s.busyTimeout = cfg.busyTimeout
	s.group = s.newGroup(cfg.groupWithin)
	if err := s.setUp(ctx, cfg); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("sqlite store: open %s: %w", path, corrupt(err))
	}
	if err := s.joinHub(ctx); err != nil {
		_ = s.Close()
		return nil, fmt.Errorf("sqlite store: open %s: %w", path, corrupt(err))
	}
	return s, nil
}

// New returns a Store on db, a SQLite database the caller opened and configured (see
// the pragmas of the package documentation), after migrating its schema. It fails with
// a SchemaError when the database's schema is newer than this code. Closing the Store
// leaves db open.
func New(ctx context.Context, db *sql.DB) (*Store, error) {
	if db == nil {
		return nil, errors.New("sqlite store: nil database")
	}
	s := newStore(db)
	if err := s.readBusyTimeout(ctx); err != nil {
		return nil, fmt.Errorf("sqlite store: %w", corrupt(err))
	}
	if err := s.migrate(ctx); err != nil {
		return nil, fmt.Errorf("sqlite store: %w", corrupt(err))
	}
	if err := checkSchema(ctx, db); err != nil {
		return nil, fmt.Errorf("sqlite store: %w", err)
	}
	if err := s.prepare(ctx); err != nil {
		return nil, fmt.Errorf("sqlite store: %w", err)
	}
	if err := s.joinHub(ctx); err != nil {
		_ = s.Close()
		return nil, fmt.Errorf("sqlite store: %w", corrupt(err))
	}
	return s, nil
}

// setUp makes the database Open opened ready: in WAL mode, with the current schema. A
// database of a newer schema is refused before anything changes.
func (s *Store) setUp(ctx context.Context, cfg config) error {
	if _, err := s.currentSchema(ctx); err != nil {
		return err
	}
	if err := enableWAL(ctx, s.db, cfg.busyTimeout); err != nil {
		return err
	}
	if err := s.migrate(ctx); err != nil {
		return err
	}
	if err := checkSchema(ctx, s.db); err != nil {
		return err
	}
	return s.prepare(ctx)
}

// enableWAL switches the database to WAL mode, which lasts: it is a setting of the file,
// kept for every later connection. The switch takes an exclusive lock that SQLite does
// not wait for under busy_timeout (the statement already reads the file), so when
// several processes open a new file at once, it is retried here for up to timeout.
func enableWAL(ctx context.Context, db *sql.DB, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for delay := time.Millisecond; ; delay = min(2*delay, 50*time.Millisecond) {
		var mode string
		err := db.QueryRowContext(ctx, `PRAGMA journal_mode = WAL`).Scan(&mode)
		switch {
		case err == nil && !strings.EqualFold(mode, "wal"):
			return fmt.Errorf("journal mode is %s, not wal", mode)
		case err == nil:
			return nil
		case !busy(err) || time.Now().Add(delay).After(deadline):
			return fmt.Errorf("set journal mode to wal: %w", err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(delay):
		}
	}
}

// readBusyTimeout sets the store's busy timeout to that of a connection of its database.
func (s *Store) readBusyTimeout(ctx context.Context) error {
	var ms int64
	if err := s.db.QueryRowContext(ctx, `PRAGMA busy_timeout`).Scan(&ms); err != nil {
		return fmt.Errorf("read the busy timeout: %w", err)
	}
	s.busyTimeout = time.Duration(ms) * time.Millisecond
	return nil
}

// busy reports whether err is SQLite's SQLITE_BUSY: a lock another connection holds.
func busy(err error) bool {
	var e *msqlite.Error
	return errors.As(err, &e) && e.Code()&0xff == sqlite3.SQLITE_BUSY
}

// newStore returns a Store on db.
func newStore(db *sql.DB) *Store {
	return &Store{db: db, writer: make(chan struct{}, 1), keepWriter: keepsWriter(db), busyTimeout: DefaultBusyTimeout}
}

// Close closes the statements the Store prepared, and the database when Open opened it; a
// Store from New leaves the database to the caller.
func (s *Store) Close() error {
	err := s.group.Close()
	s.leaveHub()
	err = errors.Join(err, s.closeWriter(), s.closeStatements())
	if !s.owned {
		return err
	}
	return errors.Join(err, s.db.Close())
}

// dataSourceName returns the driver's name for the database in file path with the
// pragmas of cfg: a file URI, so that any file name works.
func dataSourceName(path string, cfg config) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", fmt.Errorf("sqlite store: open %s: %w", path, err)
	}
	p := filepath.ToSlash(abs)
	if !strings.HasPrefix(p, "/") {
		p = "/" + p // a volume name: file:///C:/dir/file
	}
	// SQLite decodes %HH in a URI's path and ends the path at '?' or '#'.
	p = strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23").Replace(p)
	q := url.Values{}
	q.Set("_busy_timeout", strconv.FormatInt(cfg.busyTimeout.Milliseconds(), 10))
	q.Set("_foreign_keys", "1")
	q.Set("_synchronous", cfg.synchronous)
	return "file://" + p + "?" + q.Encode(), nil
}

// inTx runs fn in a transaction on one connection of the pool, begun with begin
// ("BEGIN" or "BEGIN IMMEDIATE"): committed when fn returns nil and ctx is not done by
// then, rolled back otherwise. Once it commits, the commit is not cancelled.
func (s *Store) inTx(ctx context.Context, begin string, fn func(*sql.Conn) error) (err error) {
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, begin); err != nil {
		return err
	}
	if err = fn(conn); err == nil {
		err = ctx.Err()
	}
	if err == nil {
		if _, err = conn.ExecContext(context.WithoutCancel(ctx), "COMMIT"); err == nil {
			return nil
		}
	}
	rollback(conn)
	return err
}

// rollback ends the transaction of conn. When that fails (an interrupted statement or a
// failed COMMIT may have ended the transaction already, or left it in an unknown
// state), the connection is dropped from the pool rather than handed to another caller
// in the middle of a transaction.
func rollback(conn *sql.Conn) {
	if _, err := conn.ExecContext(context.Background(), "ROLLBACK"); err != nil {
		_ = conn.Raw(func(any) error { return driver.ErrBadConn })
	}
}

// migrationTx runs fn, a migration, in a transaction that takes SQLite's write lock at its
// start (BEGIN IMMEDIATE), once the earlier writers of this Store are done: committed
// when fn returns nil, rolled back otherwise. Writers in other processes wait for the
// lock in SQLite's busy handler, up to the busy timeout. (The other writes run in
// writeTx, on the statements prepared once the schema is there.)
func (s *Store) migrationTx(ctx context.Context, fn func(*sql.Conn) error) error {
	if err := s.lockWriter(ctx); err != nil {
		return err
	}
	defer s.unlockWriter()
	return s.inTx(ctx, "BEGIN IMMEDIATE", fn)
}

// lockWriter waits for this Store's turn to write, or for ctx to be done, for at most
// the busy timeout, and never less than DefaultBusyTimeout: then it fails with
// ErrWriterBusy. The caller calls unlockWriter when it is done writing.
func (s *Store) lockWriter(ctx context.Context) error {
	select {
	case s.writer <- struct{}{}:
		return nil
	default:
	}
	limit := max(s.busyTimeout, minTurnWait)
	wait := time.NewTimer(limit)
	defer wait.Stop()
	select {
	case s.writer <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-wait.C:
		return fmt.Errorf("%w (%v)", ErrWriterBusy, limit)
	}
}

// minTurnWait is the least a write waits for the store's earlier writes (lockWriter).
var minTurnWait = DefaultBusyTimeout

// ErrWriterBusy is the error of a write that waited longer than the busy timeout (and
// than DefaultBusyTimeout) for the store's earlier writes, in this process, to end: the
// in-process counterpart of SQLITE_BUSY. A transaction of InTx that writes through the store itself, rather than
// through the store it is given, waits for itself and ends this way.
var ErrWriterBusy = errors.New("sqlite store: the store's earlier write did not end within the busy timeout")

// unlockWriter lets the next writer of this Store in.
func (s *Store) unlockWriter() { <-s.writer }
