package sqlite

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"reflect"
	"strings"
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
		"fsmgen_effects", "fsmgen_effects_pending", "fsmgen_deadlines", "fsmgen_deadlines_due",
		"fsmgen_deadlines_name", "fsmgen_counters", "fsmgen_counters_value"} {
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

// oldCommit writes c to a file of schema version v (1 or 2) as the code of that version
// did: the instance row (no last_at), its entry and, from version 2, its effects (free)
// and its deadlines (a rearm replaces them, a handled one is deleted).
func oldCommit(t *testing.T, s *Store, v int, c *fsmrt.Commit) {
	t.Helper()
	var snapSeq int64
	if c.Snapshot != nil {
		snapSeq = c.Entry.Seq
	}
	updated := time.Now().UnixMicro()
	if c.Version == 0 {
		mustExec(t, s, `INSERT INTO fsmgen_instances (machine, id, spec, version, state, snapshot, snapshot_seq, updated_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?)`, c.Machine, c.ID, c.Spec, c.Entry.Seq, c.State, c.Snapshot, snapSeq, updated)
	} else {
		mustExec(t, s, `UPDATE fsmgen_instances SET version = ?, state = ?, updated_at = ?,
			snapshot = CASE WHEN ? THEN ? ELSE snapshot END, snapshot_seq = CASE WHEN ? THEN ? ELSE snapshot_seq END
			WHERE machine = ? AND id = ? AND version = ?`,
			c.Entry.Seq, c.State, updated, snapSeq > 0, c.Snapshot, snapSeq > 0, snapSeq, c.Machine, c.ID, c.Version)
	}
	e := c.Entry
	mustExec(t, s, `INSERT INTO fsmgen_entries (machine, id, seq, kind, event, from_state, to_state, at, idem_key, data)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, c.Machine, c.ID, e.Seq, e.Kind, e.Event, e.From, e.To, e.At.UnixMicro(), nullString(e.Key), e.Data)
	if v < 2 {
		return
	}
	for i, x := range c.Effects {
		mustExec(t, s, `INSERT INTO fsmgen_effects (machine, id, seq, idx, name, idem_key, data, committed_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?)`, c.Machine, c.ID, e.Seq, i, x.Name, x.Key, x.Data, e.At.UnixMicro())
	}
	if c.Fired != "" {
		mustExec(t, s, `DELETE FROM fsmgen_deadlines WHERE machine = ? AND id = ? AND name = ?`, c.Machine, c.ID, c.Fired)
	}
	if c.Rearm {
		mustExec(t, s, `DELETE FROM fsmgen_deadlines WHERE machine = ? AND id = ?`, c.Machine, c.ID)
		for _, d := range c.Deadlines {
			mustExec(t, s, `INSERT INTO fsmgen_deadlines (machine, id, name, at, state, event, level) VALUES (?, ?, ?, ?, ?, ?, ?)`,
				c.Machine, c.ID, d.Name, d.At.UnixMicro(), d.State, d.Event, d.Level)
		}
	}
}

// oldFile returns a new file of schema version v, made by the code of that version, open
// by the current code (which reads it, but does not migrate it, until it is opened again).
func oldFile(t *testing.T, v int) (*Store, string) {
	t.Helper()
	path := tempPath(t)
	restore := asVersion(t, v)
	defer restore()
	s, err := Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	if got := versionOf(t, s); got != v {
		t.Fatalf("the version %d code wrote schema version %d", v, got)
	}
	return s, path
}

// A file of schema version 1 (instances and entries, no outbox, no deadlines), written by
// the code of that version, is migrated to the current version: its data intact, its
// instances going on with effects and deadlines.
func TestSchemaUpgradeFromV1(t *testing.T) {
	ctx := context.Background()
	s, path := oldFile(t, 1)
	for seq := int64(1); seq <= 5; seq++ {
		oldCommit(t, s, 1, testCommit("m", seq, "", seq == 3))
	}
	oldCommit(t, s, 1, testCommit("k", 1, "key-1", true))
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
	if got := findIDs(t, s, fsmrt.Query{}); !reflect.DeepEqual(got, []string{"k@1", "m@6"}) {
		t.Errorf("find after the upgrade: %v", got)
	}
}

// Several processes opening a version 1 file at once upgrade it once.
func TestSchemaUpgradeFromV1Concurrent(t *testing.T) {
	for range 3 {
		s, path := oldFile(t, 1)
		oldCommit(t, s, 1, testCommit("m", 1, "", false))
		oldCommit(t, s, 1, testCommit("m", 2, "", false))
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
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

// columnExists reports whether table has column name in the store's database.
func columnExists(t *testing.T, s *Store, table, name string) bool {
	t.Helper()
	var n int
	if err := s.db.QueryRow(`SELECT count(*) FROM pragma_table_info(?) WHERE name = ?`, table, name).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n == 1
}

// v2Data fills a file of schema version 2 as the code of that version would: instance m
// (4 entries, a snapshot after 2, a key, deadlines of which one was handled and one is
// leased), n (effects, one delivered, and a deadline) and p (no deadline).
func v2Data(t *testing.T, s *Store) {
	t.Helper()
	c := testCommit("m", 1, "", false)
	c.Rearm, c.Deadlines = true, []fsmrt.Deadline{
		{Name: "warn", At: t0.Add(10 * time.Second), State: "b", Level: 1},
		{Name: "escalate", At: t0.Add(20 * time.Second), State: "b", Level: 2},
		{Name: "expiry", At: t0.Add(time.Hour), State: "b", Event: "expire"},
	}
	oldCommit(t, s, 2, c)
	c = testCommit("m", 2, "", true)
	c.Fired = "warn"
	oldCommit(t, s, 2, c)
	oldCommit(t, s, 2, testCommit("m", 3, "key-3", false))
	oldCommit(t, s, 2, testCommit("m", 4, "", false))
	mustExec(t, s, `UPDATE fsmgen_deadlines SET owner = 'w1', leased_until = ? WHERE id = 'm' AND name = 'escalate'`, t0.Add(30*time.Minute).UnixMicro())
	c = withEffects(testCommit("n", 1, "", false), 2)
	c.Rearm, c.Deadlines = true, []fsmrt.Deadline{{Name: "expiry", At: t0.Add(5 * time.Second), State: "b", Event: "expire"}}
	oldCommit(t, s, 2, c)
	mustExec(t, s, `UPDATE fsmgen_effects SET delivered_at = ? WHERE id = 'n' AND idx = 0`, t0.UnixMicro())
	for seq := int64(1); seq <= 3; seq++ {
		oldCommit(t, s, 2, testCommit("p", seq, "", false))
	}
}

// v2Deadlines lists the deadlines with the columns of schema version 2.
const v2Deadlines = `SELECT machine, id, name, at, state, event, level, owner, leased_until
	FROM fsmgen_deadlines ORDER BY machine, id, name`

// A file of schema version 2, with data in it, is migrated to version 3 in one step: its
// instances, logs, outbox and deadlines (leases kept, none handled) intact, last_at taken
// from each instance's last entry, and the instances going on with handled deadlines,
// counters and Find.
func TestSchemaUpgradeFromV2(t *testing.T) {
	ctx := context.Background()
	s, path := oldFile(t, 2)
	v2Data(t, s)
	var loaded []fsmrt.Loaded
	var logs [][]fsmrt.Entry
	for _, id := range []string{"m", "n", "p"} {
		loaded = append(loaded, mustLoad(t, s, id))
		log, err := s.Log(ctx, "test.M", id, 0)
		if err != nil {
			t.Fatal(err)
		}
		logs = append(logs, log)
	}
	effects, deadlines := tableRows(t, s, allEffects), tableRows(t, s, v2Deadlines)
	if len(deadlines) != 3 || len(effects) != 2 {
		t.Fatalf("version 2 data: %d deadlines, %d effects", len(deadlines), len(effects))
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	s = openStore(t, path)
	if v := versionOf(t, s); v != SchemaVersion || !tableExists(t, s, "fsmgen_counters") ||
		!columnExists(t, s, "fsmgen_deadlines", "handled_at") || !columnExists(t, s, "fsmgen_instances", "last_at") ||
		!columnExists(t, s, "fsmgen_effects", "last_error") || !columnExists(t, s, "fsmgen_effects", "failed_at") {
		t.Fatalf("after opening a version 2 file: schema version %d", v)
	}
	for i, id := range []string{"m", "n", "p"} {
		if got := mustLoad(t, s, id); !reflect.DeepEqual(got, loaded[i]) {
			t.Errorf("instance %s after the upgrade:\n got %+v\nwant %+v", id, got, loaded[i])
		}
		if log, err := s.Log(ctx, "test.M", id, 0); err != nil || !reflect.DeepEqual(log, logs[i]) {
			t.Errorf("log of %s after the upgrade: %d entries, %v", id, len(log), err)
		}
	}
	if e, ok, err := s.FindKey(ctx, "test.M", "m", "key-3"); err != nil || !ok || e.Seq != 3 {
		t.Errorf("key of m after the upgrade: %+v, %v, %v", e, ok, err)
	}
	if got := tableRows(t, s, allEffects); !reflect.DeepEqual(got, effects) {
		t.Errorf("outbox after the upgrade: %q, was %q", got, effects)
	}
	if got := tableRows(t, s, v2Deadlines); !reflect.DeepEqual(got, deadlines) {
		t.Errorf("deadlines after the upgrade: %q, was %q", got, deadlines)
	}
	if got := tableRows(t, s, `SELECT count(*) FROM fsmgen_deadlines WHERE handled_at IS NOT NULL`); got[0] != "[0]" {
		t.Errorf("deadlines handled after the upgrade: %v", got)
	}
	// The claim's index is rebuilt over the deadlines not handled.
	if got := tableRows(t, s, `SELECT sql FROM sqlite_master WHERE name = 'fsmgen_deadlines_due'`); len(got) != 1 || !strings.Contains(got[0], "WHERE handled_at IS NULL") {
		t.Errorf("the claim's index after the upgrade: %q", got)
	}
	// last_at is the time of each instance's last entry; Find returns it.
	want := []string{
		fmt.Sprintf("[m %d]", t0.Add(4*time.Second).UnixMicro()),
		fmt.Sprintf("[n %d]", t0.Add(time.Second).UnixMicro()),
		fmt.Sprintf("[p %d]", t0.Add(3*time.Second).UnixMicro()),
	}
	if got := tableRows(t, s, `SELECT id, last_at FROM fsmgen_instances ORDER BY id`); !reflect.DeepEqual(got, want) {
		t.Errorf("last_at after the upgrade: %v, want %v", got, want)
	}
	found, err := s.Find(ctx, fsmrt.Query{Machine: "test.M", States: []string{"a"}})
	if err != nil || len(found) != 1 || found[0].ID != "m" || found[0].Version != 4 || !found[0].UpdatedAt.Equal(t0.Add(4*time.Second).Truncate(time.Microsecond)) {
		t.Errorf("find in a after the upgrade: %+v, %v", found, err)
	}
	if got := findIDs(t, s, fsmrt.Query{Deadline: "escalate", Due: t0.Add(20 * time.Second)}); !reflect.DeepEqual(got, []string{"m@4"}) {
		t.Errorf("find by deadline after the upgrade: %v", got)
	}
	if got := findIDs(t, s, fsmrt.Query{Deadline: "expiry", Due: t0.Add(time.Hour)}); !reflect.DeepEqual(got, []string{"m@4", "n@1"}) {
		t.Errorf("find by deadline after the upgrade: %v", got)
	}
	// The lease taken under version 2 holds; the other due deadline is claimed.
	if got := dueNames(t, s, "w2", t0.Add(10*time.Minute)); !reflect.DeepEqual(got, []string{"n/expiry"}) {
		t.Errorf("claimed after the upgrade: %v", got)
	}
	// The instances go on: m handles its escalation and counts.
	c := testCommit("m", 5, "", false)
	c.Fired, c.Counters = "escalate", []fsmrt.CounterValue{{Name: "failures", State: "a", Value: 2}}
	mustCommit(t, s, c)
	if got := dueNames(t, s, "w3", t0.Add(2*time.Hour)); !reflect.DeepEqual(got, []string{"n/expiry", "m/expiry"}) {
		t.Errorf("claimed after m handled its escalation, the leases ended: %v", got)
	}
	if got := findIDs(t, s, fsmrt.Query{Counter: "failures", AtLeast: 2, Deadline: "escalate", Due: t0.Add(time.Minute)}); !reflect.DeepEqual(got, []string{"m@5"}) {
		t.Errorf("find by counter and handled deadline: %v", got)
	}
}

// The step to version 3 is one transaction: when one of its statements fails (here, the
// application has a table of the name the step creates), the file stays at version 2 as
// it was, none of the step's changes kept; once the obstacle is gone, it migrates.
func TestSchemaUpgradeFromV2Fails(t *testing.T) {
	s, path := oldFile(t, 2)
	v2Data(t, s)
	mustExec(t, s, `CREATE TABLE fsmgen_counters (note TEXT)`)
	deadlines, instances := tableRows(t, s, `SELECT * FROM fsmgen_deadlines ORDER BY id, name`), tableRows(t, s, `SELECT * FROM fsmgen_instances ORDER BY id`)
	schema := tableRows(t, s, `SELECT type, name, sql FROM sqlite_master ORDER BY name`)
	if _, err := Open(context.Background(), path); err == nil || !strings.Contains(err.Error(), "schema version 3") {
		t.Fatalf("migrating over a table in the way: %v", err)
	}
	if v := versionOf(t, s); v != 2 {
		t.Errorf("after a failed migration: schema version %d", v)
	}
	if got := tableRows(t, s, `SELECT type, name, sql FROM sqlite_master ORDER BY name`); !reflect.DeepEqual(got, schema) {
		t.Errorf("a failed migration changed the schema:\n got %q\nwant %q", got, schema)
	}
	if got := tableRows(t, s, `SELECT * FROM fsmgen_deadlines ORDER BY id, name`); !reflect.DeepEqual(got, deadlines) {
		t.Errorf("a failed migration changed the deadlines: %q, was %q", got, deadlines)
	}
	if got := tableRows(t, s, `SELECT * FROM fsmgen_instances ORDER BY id`); !reflect.DeepEqual(got, instances) {
		t.Errorf("a failed migration changed the instances: %q, was %q", got, instances)
	}
	mustExec(t, s, `DROP TABLE fsmgen_counters`)
	s = openStore(t, path)
	if v := versionOf(t, s); v != SchemaVersion || !columnExists(t, s, "fsmgen_instances", "last_at") {
		t.Errorf("after removing the obstacle: schema version %d", v)
	}
}
