package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"time"

	msqlite "modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// A database file can be damaged outside the store: a disk or copy that garbles pages, a
// file truncated, a table dropped or a row edited by hand. What the store finds of that
// is an error wrapping ErrCorrupt (or, for a file of 0 bytes, ErrEmptyFile), from Open and
// from every read, and never the driver's bare error:
//   - SQLite's own word that the file is damaged (SQLITE_CORRUPT, "database disk image
//     is malformed"; SQLITE_NOTADB, "file is not a database"), wherever it comes;
//   - a table or index of the schema missing, checked when the store opens;
//   - rows that do not hold what Commit writes (read.go): a value of the wrong type, a
//     gap in a log, a snapshot out of place, an instance row whose state is not the one
//     its last entry entered.
//
// What is not checked, because it would cost every commit or every read more than the
// row it guards: the counters rows (Find's conditions on counters believe them), the
// deadlines' times (Find and the claims believe them), an instance row's state when its
// last entry is before the snapshot Load reads (fsmrt's Replay compares it with the
// snapshot's), and pages SQLite never reads (PRAGMA integrity_check reads them all).

// ErrEmptyFile says the database file exists and holds nothing (0 bytes): a database
// truncated or lost. Open refuses it, unless asked WithCreate, rather than make a new
// database there, in which every instance the lost one held would be unknown.
var ErrEmptyFile = errors.New("empty database file")

// WithCreate lets Open make a new database in a file of 0 bytes (ErrEmptyFile without
// it). A path with no file is made a new database without it.
func WithCreate() Option {
	return func(c *config) { c.create = true }
}

// corrupt returns err wrapping ErrCorrupt when SQLite says the file is damaged
// (SQLITE_CORRUPT, SQLITE_NOTADB); otherwise err.
func corrupt(err error) error {
	var e *msqlite.Error
	if err == nil || errors.Is(err, ErrCorrupt) || !errors.As(err, &e) {
		return err
	}
	switch e.Code() & 0xff {
	case sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB:
		return fmt.Errorf("%w: %w", ErrCorrupt, err)
	}
	return err
}

// schemaObject finds the tables and indexes the migrations create.
var schemaObject = regexp.MustCompile(`(?i)^\s*CREATE\s+(?:UNIQUE\s+)?(TABLE|INDEX)\s+(\w+)`)

// checkSchema returns an error wrapping ErrCorrupt when a table or index of the schema
// (the latest version's) is missing from the database.
func checkSchema(ctx context.Context, q querier) error {
	want := map[string]string{"fsmgen_schema": "table"}
	for _, m := range migrations[:latest()] {
		for _, stmt := range m.stmts {
			if f := schemaObject.FindStringSubmatch(stmt); f != nil {
				want[f[2]] = map[string]string{"TABLE": "table", "INDEX": "index"}[f[1]]
			}
		}
	}
	err := eachRow(ctx, q, `SELECT type, name FROM sqlite_master WHERE name LIKE 'fsmgen%'`, nil, func(rows *sql.Rows) error {
		var typ, name string
		if err := scan(rows, &typ, &name); err != nil {
			return err
		}
		if want[name] == typ {
			delete(want, name)
		}
		return nil
	})
	if err != nil {
		return corrupt(err)
	}
	for name, typ := range want {
		return fmt.Errorf("%w: the %s %s of schema version %d is missing", ErrCorrupt, typ, name, latest())
	}
	return nil
}

// newFile makes sure Open finds a database in file path, or refuses it: a path with no
// file gets a new, empty database, written aside and linked into place whole (so that
// another process opening the path at once never sees it empty); a file of 0 bytes is
// refused with ErrEmptyFile unless cfg.create. When the file system cannot do that (no
// hard links, a directory that is not there), it leaves the driver to create the file as
// it opens it, or to fail.
func newFile(ctx context.Context, path string, cfg config) error {
	st, err := os.Stat(path)
	switch {
	case err == nil && st.Mode().IsRegular() && st.Size() == 0 && !cfg.create:
		return fmt.Errorf("%w: %s is 0 bytes: a database truncated or lost (open it WithCreate to make a new one there)", ErrEmptyFile, path)
	case err == nil || !errors.Is(err, fs.ErrNotExist):
		return nil
	}
	aside := filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".new-"+strconv.Itoa(os.Getpid())+"-"+strconv.FormatInt(time.Now().UnixNano(), 36))
	f, err := os.OpenFile(aside, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o666)
	if err != nil {
		return nil
	}
	f.Close()
	defer func() {
		for _, suffix := range []string{"", "-wal", "-shm"} {
			_ = os.Remove(aside + suffix)
		}
	}()
	dsn, err := dataSourceName(aside, cfg)
	if err != nil {
		return nil
	}
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil
	}
	// WAL mode is written in the file's header: the file is a database from then on.
	err = enableWAL(ctx, db, cfg.busyTimeout)
	if cerr := db.Close(); err != nil || cerr != nil {
		return nil
	}
	// Of several processes creating the file at once, one links it; the others find it.
	_ = os.Link(aside, path)
	return nil
}
