package sqlite

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"os"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/fsmgen/fsmgen/fsmrt"
)

// versionOf returns the schema version recorded in the store's database.
func versionOf(t *testing.T, s *Store) int {
	t.Helper()
	v, err := schemaVersion(context.Background(), s.db)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestMigrationsInOrder(t *testing.T) {
	if len(migrations) != SchemaVersion {
		t.Fatalf("%d migrations, SchemaVersion %d", len(migrations), SchemaVersion)
	}
	for i, m := range migrations {
		if m.version != i+1 || len(m.stmts) == 0 {
			t.Errorf("migration %d has version %d and %d statements", i, m.version, len(m.stmts))
		}
	}
}

func TestSchemaFresh(t *testing.T) {
	path := tempPath(t)
	s := openStore(t, path)
	if v := versionOf(t, s); v != SchemaVersion {
		t.Errorf("a new file is at schema version %d, want %d", v, SchemaVersion)
	}
	for _, name := range []string{"fsmgen_schema", "fsmgen_instances", "fsmgen_entries", "fsmgen_instances_state", "fsmgen_entries_idem_key",
		"fsmgen_effects", "fsmgen_effects_pending", "fsmgen_deadlines", "fsmgen_deadlines_due"} {
		var n int
		if err := s.db.QueryRow(`SELECT count(*) FROM sqlite_master WHERE name = ?`, name).Scan(&n); err != nil || n != 1 {
			t.Errorf("%s: %d, %v", name, n, err)
		}
	}
}

func TestSchemaReopen(t *testing.T) {
	path := tempPath(t)
	s, err := Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	commitN(t, s, "m", 3, 2)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = openStore(t, path)
	if v := versionOf(t, s); v != SchemaVersion {
		t.Errorf("reopened at schema version %d", v)
	}
	if l := mustLoad(t, s, "m"); l.Version != 3 || l.SnapshotSeq != 2 || len(l.Entries) != 1 {
		t.Errorf("reopened: %+v", l)
	}
	var rows int
	if err := s.db.QueryRow(`SELECT count(*) FROM fsmgen_schema`).Scan(&rows); err != nil || rows != 1 {
		t.Errorf("fsmgen_schema holds %d rows, %v", rows, err)
	}
}

func TestSchemaNewerRefused(t *testing.T) {
	path := tempPath(t)
	s, err := Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	commitN(t, s, "m", 2)
	mustExec(t, s, `UPDATE fsmgen_schema SET version = 99`)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	before, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	_, err = Open(context.Background(), path)
	var se *SchemaError
	if !errors.Is(err, ErrSchema) || !errors.As(err, &se) || se.Found != 99 || se.Want != SchemaVersion {
		t.Fatalf("opening a file of schema version 99: %v, want a SchemaError", err)
	}
	after, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(before, after) {
		t.Error("a refused open changed the file")
	}
	// New refuses it the same way.
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := New(context.Background(), db); !errors.As(err, &se) || se.Found != 99 {
		t.Errorf("New on a file of schema version 99: %v", err)
	}
	var version, entries int
	if err := db.QueryRow(`SELECT (SELECT version FROM fsmgen_schema), (SELECT count(*) FROM fsmgen_entries)`).Scan(&version, &entries); err != nil {
		t.Fatal(err)
	}
	if version != 99 || entries != 2 {
		t.Errorf("after refused opens: schema version %d, %d entries", version, entries)
	}
}

func TestSchemaCorruptVersion(t *testing.T) {
	path := tempPath(t)
	s := openStore(t, path)
	mustExec(t, s, `INSERT INTO fsmgen_schema (version) VALUES (1)`)
	if _, err := Open(context.Background(), path); !errors.Is(err, ErrCorrupt) {
		t.Errorf("two schema versions: %v, want ErrCorrupt", err)
	}
	mustExec(t, s, `DELETE FROM fsmgen_schema`)
	mustExec(t, s, `INSERT INTO fsmgen_schema (version) VALUES ('one')`)
	if _, err := Open(context.Background(), path); !errors.Is(err, ErrCorrupt) {
		t.Errorf("a text schema version: %v, want ErrCorrupt", err)
	}
}

func TestSchemaConcurrentOpens(t *testing.T) {
	for range 5 {
		path := tempPath(t)
		const n = 6
		var wg sync.WaitGroup
		stores := make([]*Store, n)
		errs := make([]error, n)
		for i := range n {
			wg.Go(func() { stores[i], errs[i] = Open(context.Background(), path) })
		}
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Fatalf("open %d of %d at once: %v", i, n, err)
			}
		}
		commitN(t, stores[0], "m", 1)
		for i, s := range stores {
			if v := versionOf(t, s); v != SchemaVersion {
				t.Errorf("store %d: schema version %d", i, v)
			}
			if l := mustLoad(t, s, "m"); l.Version != 1 {
				t.Errorf("store %d does not see the commit of store 0: %+v", i, l)
			}
			if err := s.Close(); err != nil {
				t.Error(err)
			}
		}
	}
}

// A database with tables of its own and no fsmgen tables (schema version 0) is migrated
// beside them, through New.
func TestSchemaNewOnOwnDatabase(t *testing.T) {
	path := tempPath(t)
	db, err := sql.Open("sqlite", path+"?_pragma=busy_timeout(5000)&_pragma=journal_mode(WAL)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`CREATE TABLE orders (id INTEGER PRIMARY KEY, total INTEGER); INSERT INTO orders VALUES (1, 42)`); err != nil {
		t.Fatal(err)
	}
	s, err := New(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	if v := versionOf(t, s); v != SchemaVersion {
		t.Errorf("schema version %d", v)
	}
	commitN(t, s, "m", 2)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	// Close left the caller's database open.
	var total int
	if err := db.QueryRow(`SELECT total FROM orders WHERE id = 1`).Scan(&total); err != nil || total != 42 {
		t.Errorf("the application's table after New and Close: %d, %v", total, err)
	}
	if l := mustLoad(t, s, "m"); l.Version != 2 {
		t.Errorf("loaded %+v", l)
	}
}

// withMigration appends m to the migrations until the test ends.
func withMigration(t *testing.T, m migration) {
	saved := migrations
	migrations = append(migrations[:len(migrations):len(migrations)], m)
	t.Cleanup(func() { migrations = saved })
}

// asVersion makes the code the code of schema version v, which knows the first v
// migrations only, until restore is called or the test ends.
func asVersion(t *testing.T, v int) (restore func()) {
	saved := migrations
	migrations = migrations[:v:v]
	restore = func() { migrations = saved }
	t.Cleanup(restore)
	return restore
}

// tableExists reports whether the store's database has table name.
func tableExists(t *testing.T, s *Store, name string) bool {
	t.Helper()
	var n int
	if err := s.db.QueryRow(`SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?`, name).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n == 1
}

// A file of an older schema gets the steps after its version, and keeps its data; code
// that does not know the new version then refuses the file.
func TestSchemaUpgrade(t *testing.T) {
	path := tempPath(t)
	s, err := Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	commitN(t, s, "m", 2)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	t.Run("Upgrade", func(t *testing.T) {
		withMigration(t, migration{version: SchemaVersion + 1, what: "a test table", stmts: []string{
			`CREATE TABLE fsmgen_test (machine TEXT NOT NULL, id TEXT NOT NULL)`,
			`CREATE INDEX fsmgen_test_id ON fsmgen_test (machine, id)`,
		}})
		s := openStore(t, path)
		if v := versionOf(t, s); v != SchemaVersion+1 || !tableExists(t, s, "fsmgen_test") {
			t.Errorf("after upgrading: schema version %d, table %v", v, tableExists(t, s, "fsmgen_test"))
		}
		if l := mustLoad(t, s, "m"); l.Version != 2 {
			t.Errorf("after upgrading: %+v", l)
		}
	})
	_, err = Open(context.Background(), path)
	var se *SchemaError
	if !errors.As(err, &se) || se.Found != SchemaVersion+1 || se.Want != SchemaVersion {
		t.Errorf("version %d code on a version %d file: %v", SchemaVersion, SchemaVersion+1, err)
	}
}

// A step that fails leaves the file as it was: no statement of the step stays.
func TestSchemaUpgradeFails(t *testing.T) {
	path := tempPath(t)
	s, err := Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	commitN(t, s, "m", 1)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	withMigration(t, migration{version: SchemaVersion + 1, what: "a broken step", stmts: []string{
		`CREATE TABLE fsmgen_test (machine TEXT NOT NULL)`,
		`CREATE INDEX fsmgen_test_id ON fsmgen_test (no_such_column)`,
	}})
	if _, err := Open(context.Background(), path); err == nil {
		t.Fatal("a broken migration succeeded")
	}
	migrations = migrations[:SchemaVersion] // the code of today again
	s = openStore(t, path)
	if v := versionOf(t, s); v != SchemaVersion || tableExists(t, s, "fsmgen_test") {
		t.Errorf("after a failed upgrade: schema version %d, table %v", v, tableExists(t, s, "fsmgen_test"))
	}
}

// A file of schema version 1 (instances and entries, no outbox, no deadlines), written by
// the code of that version, is migrated to the current version: its data intact, its
// instances going on with effects and deadlines.
func TestSchemaUpgradeFromV1(t *testing.T) {
	ctx := context.Background()
	path := tempPath(t)
	restore := asVersion(t, 1)
	s, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	commitN(t, s, "m", 5, 3)
	if err := s.Commit(ctx, testCommit("k", 1, "key-1", true)); err != nil {
		t.Fatal(err)
	}
	if v := versionOf(t, s); v != 1 || tableExists(t, s, "fsmgen_effects") || tableExists(t, s, "fsmgen_deadlines") {
		t.Fatalf("the version 1 code wrote schema version %d", v)
	}
	wantM, wantK := mustLoad(t, s, "m"), mustLoad(t, s, "k")
	wantLog, err := s.Log(ctx, "test.M", "m", 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	restore()

	s = openStore(t, path)
	if v := versionOf(t, s); v != SchemaVersion || !tableExists(t, s, "fsmgen_effects") || !tableExists(t, s, "fsmgen_deadlines") {
		t.Fatalf("after opening a version 1 file: schema version %d", v)
	}
	if got := mustLoad(t, s, "m"); !reflect.DeepEqual(got, wantM) {
		t.Errorf("instance m after the upgrade:\n got %+v\nwant %+v", got, wantM)
	}
	if got := mustLoad(t, s, "k"); !reflect.DeepEqual(got, wantK) {
		t.Errorf("instance k after the upgrade:\n got %+v\nwant %+v", got, wantK)
	}
	if log, err := s.Log(ctx, "test.M", "m", 0); err != nil || !reflect.DeepEqual(log, wantLog) {
		t.Errorf("log of m after the upgrade: %d entries, %v", len(log), err)
	}
	if e, ok, err := s.FindKey(ctx, "test.M", "k", "key-1"); err != nil || !ok || e.Seq != 1 {
		t.Errorf("key of k after the upgrade: %+v, %v, %v", e, ok, err)
	}
	// The instance goes on with the new tables.
	c := testCommit("m", 6, "", false)
	c.Effects = []fsmrt.Effect{{Name: "send", Key: "m/6/0", Data: []byte(`{}`)}}
	c.Rearm, c.Deadlines = true, []fsmrt.Deadline{{Name: "expiry", At: t0, State: "a", Event: "expire"}}
	if err := s.Commit(ctx, c); err != nil {
		t.Fatal(err)
	}
	if got, err := s.ClaimEffects(ctx, "test.M", "w", t0, time.Minute, 10); err != nil || len(got) != 1 {
		t.Errorf("effects after the upgrade: %+v, %v", got, err)
	}
	if got, err := s.ClaimDeadlines(ctx, "test.M", "w", t0, time.Minute, 10); err != nil || len(got) != 1 {
		t.Errorf("deadlines after the upgrade: %+v, %v", got, err)
	}
}

// Several processes opening a version 1 file at once upgrade it once.
func TestSchemaUpgradeFromV1Concurrent(t *testing.T) {
	for range 3 {
		path := tempPath(t)
		restore := asVersion(t, 1)
		s, err := Open(context.Background(), path)
		if err != nil {
			t.Fatal(err)
		}
		commitN(t, s, "m", 2)
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		restore()
		const n = 4
		var wg sync.WaitGroup
		stores := make([]*Store, n)
		errs := make([]error, n)
		for i := range n {
			wg.Go(func() { stores[i], errs[i] = Open(context.Background(), path) })
		}
		wg.Wait()
		for i := range n {
			if errs[i] != nil {
				t.Fatalf("open %d of %d at once: %v", i, n, errs[i])
			}
			if v := versionOf(t, stores[i]); v != SchemaVersion {
				t.Errorf("store %d: schema version %d", i, v)
			}
			if l := mustLoad(t, stores[i], "m"); l.Version != 2 {
				t.Errorf("store %d: %+v", i, l)
			}
			if err := stores[i].Close(); err != nil {
				t.Error(err)
			}
		}
	}
}
