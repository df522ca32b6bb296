package postgres

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/fsmgen/fsmgen/fsmrt"
)

// The migrations are numbered 1, 2, ... and end at SchemaVersion.
func TestMigrationList(t *testing.T) {
	for i, m := range migrations {
		if m.version != i+1 || len(m.statements) == 0 {
			t.Errorf("migration %d: version %d, %d statements", i, m.version, len(m.statements))
		}
	}
	if last := migrations[len(migrations)-1].version; last != SchemaVersion {
		t.Errorf("the last migration is version %d, SchemaVersion %d", last, SchemaVersion)
	}
}

// schemaState describes what the store's tables in schema hold, to tell whether New
// changed anything: the relations and their columns, the versions recorded and the
// transaction that wrote each.
func schemaState(t *testing.T, conn *pgx.Conn, schema string) string {
	t.Helper()
	var state string
	err := conn.QueryRow(context.Background(), `
		SELECT coalesce(string_agg(c.relname || ':' || c.relkind::text || ':' || c.relnatts, ',' ORDER BY c.relname), '')
		FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
		WHERE n.nspname = $1`, schema).Scan(&state)
	if err != nil {
		t.Fatal(err)
	}
	var versions string
	if strings.Contains(state, "fsmgen_schema:") {
		err := conn.QueryRow(context.Background(), `SELECT string_agg(version || '@' || xmin::text, ',' ORDER BY version)
			FROM `+pgx.Identifier{schema, "fsmgen_schema"}.Sanitize()).Scan(&versions)
		if err != nil {
			t.Fatal(err)
		}
	}
	return state + " versions " + versions
}

// allVersions are the versions a database migrated by this code records: 1 to
// SchemaVersion.
func allVersions() []int {
	var vs []int
	for v := 1; v <= SchemaVersion; v++ {
		vs = append(vs, v)
	}
	return vs
}

// versions returns the versions recorded in fsmgen_schema of schema.
func versions(t *testing.T, conn *pgx.Conn, schema string) []int {
	t.Helper()
	rows, _ := conn.Query(context.Background(), `SELECT version FROM `+pgx.Identifier{schema, "fsmgen_schema"}.Sanitize()+` ORDER BY version`)
	vs, err := pgx.CollectRows(rows, pgx.RowTo[int])
	if err != nil {
		t.Fatal(err)
	}
	return vs
}

func TestMigrateFreshDatabase(t *testing.T) {
	ctx := context.Background()
	dsn := newDatabase(t)
	openStore(t, dsn)
	conn := connect(t, dsn)
	if vs := versions(t, conn, "public"); !reflect.DeepEqual(vs, allVersions()) {
		t.Fatalf("versions %v, want %v", vs, allVersions())
	}
	for _, name := range []string{
		"fsmgen_instances", "fsmgen_instances_state", "fsmgen_entries", entriesPrimaryKey, entriesKeyIndex,
		"fsmgen_effects", "fsmgen_effects_pkey", effectsPendingIndex, "fsmgen_deadlines", "fsmgen_deadlines_pkey", deadlinesDueIndex,
		deadlinesNameIndex, "fsmgen_counters", "fsmgen_counters_pkey", countersValueIndex,
	} {
		var found bool
		if err := conn.QueryRow(ctx, `SELECT to_regclass($1) IS NOT NULL`, "public."+name).Scan(&found); err != nil || !found {
			t.Errorf("relation %s: %v, %v", name, found, err)
		}
	}

	// Another store on the database, from another pool, changes nothing.
	before := schemaState(t, conn, "public")
	if _, err := New(ctx, newPool(t, dsn)); err != nil {
		t.Fatal(err)
	}
	if after := schemaState(t, conn, "public"); after != before {
		t.Errorf("New on a migrated database changed it:\n%s\nwas\n%s", after, before)
	}
}

// Workers starting at once on a new database all succeed; the schema is migrated once.
func TestMigrateConcurrently(t *testing.T) {
	ctx := context.Background()
	dsn := newDatabase(t)
	const workers = 8
	var wg sync.WaitGroup
	errs := make([]error, workers)
	for w := range workers {
		pool := newPool(t, dsn) // a process each
		wg.Go(func() {
			_, errs[w] = New(ctx, pool)
		})
	}
	wg.Wait()
	for w, err := range errs {
		if err != nil {
			t.Errorf("worker %d: %v", w, err)
		}
	}
	if vs := versions(t, connect(t, dsn), "public"); !reflect.DeepEqual(vs, allVersions()) {
		t.Errorf("versions %v, want %v", vs, allVersions())
	}
}

// A database migrated by a newer release is refused and left as it is.
func TestMigrateNewerSchema(t *testing.T) {
	ctx := context.Background()
	check := func(t *testing.T, dsn string) {
		t.Helper()
		conn := connect(t, dsn)
		before := schemaState(t, conn, "public")
		_, err := New(ctx, newPool(t, dsn))
		var se *SchemaError
		if !errors.As(err, &se) || !errors.Is(err, ErrSchema) || se.Found != 99 || se.Want != SchemaVersion {
			t.Fatalf("New on a schema at version 99: %v, want a SchemaError", err)
		}
		if _, err := Open(ctx, dsn); !errors.Is(err, ErrSchema) {
			t.Errorf("Open on a schema at version 99: %v", err)
		}
		if after := schemaState(t, conn, "public"); after != before {
			t.Errorf("a refused migration changed the database:\n%s\nwas\n%s", after, before)
		}
	}
	t.Run("migrated", func(t *testing.T) {
		dsn := newDatabase(t)
		openStore(t, dsn)
		if _, err := connect(t, dsn).Exec(ctx, `INSERT INTO fsmgen_schema (version) VALUES (99)`); err != nil {
			t.Fatal(err)
		}
		check(t, dsn)
	})
	t.Run("version table only", func(t *testing.T) {
		dsn := newDatabase(t)
		if _, err := connect(t, dsn).Exec(ctx, `CREATE TABLE fsmgen_schema (version int PRIMARY KEY);
			INSERT INTO fsmgen_schema VALUES (99)`); err != nil {
			t.Fatal(err)
		}
		check(t, dsn)
	})
}

// A worker whose role may not create anything opens a database already migrated: it
// only reads the version.
func TestMigrateUpToDateReadsOnly(t *testing.T) {
	ctx := context.Background()
	dsn := newDatabase(t)
	openStore(t, dsn)
	role := fmt.Sprintf("worker_%d", databases.Add(1)) // roles belong to the whole server
	if _, err := connect(t, dsn).Exec(ctx, strings.ReplaceAll(`CREATE ROLE worker LOGIN;
		GRANT USAGE ON SCHEMA public TO worker;
		GRANT SELECT ON fsmgen_schema TO worker;
		GRANT SELECT, INSERT, UPDATE ON fsmgen_instances, fsmgen_entries TO worker;
		GRANT SELECT, INSERT, UPDATE, DELETE ON fsmgen_effects, fsmgen_deadlines, fsmgen_counters TO worker`, "worker", role)); err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.User(role)
	st := openStore(t, u.String())
	mustCommit(t, st, "m", "i", 1, 2)
	if l := mustLoad(t, st, "m", "i"); l.Version != 2 {
		t.Errorf("loaded %+v", l)
	}
	c := testCommit("m", "i", 3, "", "{}")
	c.Effects, c.Rearm, c.Deadlines = []fsmrt.Effect{{Name: "send", Key: "k"}}, true, []fsmrt.Deadline{{Name: "expiry", At: time.Now()}}
	c.Counters = []fsmrt.CounterValue{{Name: "n", Value: 1}}
	if err := st.Commit(ctx, c); err != nil {
		t.Fatal(err)
	}
	if got, err := st.Find(ctx, fsmrt.Query{Machine: "m", Counter: "n", AtLeast: 1, Deadline: "expiry", Due: time.Now()}); err != nil || len(got) != 1 {
		t.Errorf("find: %v, %v", got, err)
	}
	if got, err := st.ClaimEffects(ctx, "m", "w", time.Now(), time.Minute, 10); err != nil || len(got) != 1 {
		t.Errorf("claim effects: %v, %v", got, err)
	}
	if got, err := st.ClaimDeadlines(ctx, "m", "w", time.Now(), time.Minute, 10); err != nil || len(got) != 1 {
		t.Errorf("claim deadlines: %v, %v", got, err)
	}
	c = testCommit("m", "i", 4, "", "{}")
	c.Fired = "expiry"
	if err := st.Commit(ctx, c); err != nil {
		t.Fatal(err)
	}
	// The same role cannot migrate a new schema.
	if _, err := New(ctx, st.pool, WithSchema("other")); err == nil || errors.Is(err, ErrSchema) {
		t.Errorf("a role without privileges migrated a new schema: %v", err)
	}
}

func TestWithSchema(t *testing.T) {
	ctx := context.Background()
	dsn := newDatabase(t)
	pool := newPool(t, dsn)
	for _, name := range []string{"", strings.Repeat("s", 64), "a\x00b"} {
		if _, err := New(ctx, pool, WithSchema(name)); err == nil {
			t.Errorf("schema %q accepted", name)
		}
	}
	public, err := New(ctx, pool)
	if err != nil {
		t.Fatal(err)
	}
	other, err := New(ctx, pool, WithSchema("Other"))
	if err != nil {
		t.Fatal(err)
	}
	mustCommit(t, public, "m", "i", 1, 2)
	mustCommit(t, other, "m", "i", 1, 1)
	if l := mustLoad(t, public, "m", "i"); l.Version != 2 {
		t.Errorf("public: %+v", l)
	}
	if l := mustLoad(t, other, "m", "i"); l.Version != 1 {
		t.Errorf("Other: %+v", l)
	}
	conn := connect(t, dsn)
	for _, schema := range []string{"public", "Other"} {
		if vs := versions(t, conn, schema); !reflect.DeepEqual(vs, allVersions()) {
			t.Errorf("schema %s: versions %v", schema, vs)
		}
	}
	// Closing a store made by New leaves the pool open.
	public.Close()
	if err := pool.Ping(ctx); err != nil {
		t.Errorf("the pool after Close of a store on it: %v", err)
	}
}

// The commit statements of the release of schema version 1, which wrote no last_at.
const (
	v1CommitFirst = `WITH created AS (
	INSERT INTO {schema}.fsmgen_instances
		(machine, id, spec, version, state, snapshot, snapshot_seq, updated_at)
	VALUES ($1::text, $2::text, $3::text, $4::bigint, $5::text, $13::bytea,
		CASE WHEN $13::bytea IS NULL THEN 0 ELSE $4::bigint END, now())
	ON CONFLICT (machine, id) DO NOTHING
	RETURNING 1
)
INSERT INTO {schema}.fsmgen_entries
	(machine, id, seq, kind, event, from_state, to_state, at, idem_key, data)
SELECT $1::text, $2::text, $4::bigint, $6::text, $7::text, $8::text, $9::text,
	$10::timestamptz, $11::text, $12::bytea
FROM created`
	v1CommitNext = `WITH moved AS (
	UPDATE {schema}.fsmgen_instances
	SET version = $4::bigint, state = $5::text, updated_at = now(),
		snapshot = COALESCE($13::bytea, snapshot),
		snapshot_seq = CASE WHEN $13::bytea IS NULL THEN snapshot_seq ELSE $4::bigint END
	WHERE machine = $1::text AND id = $2::text AND spec = $3::text AND version = $4::bigint - 1
	RETURNING 1
)
INSERT INTO {schema}.fsmgen_entries
	(machine, id, seq, kind, event, from_state, to_state, at, idem_key, data)
SELECT $1::text, $2::text, $4::bigint, $6::text, $7::text, $8::text, $9::text,
	$10::timestamptz, $11::text, $12::bytea
FROM moved`
)

// commitV1 commits c to schema as the release of schema version 1 did.
func commitV1(t *testing.T, pool *pgxpool.Pool, schema string, c *fsmrt.Commit) {
	t.Helper()
	sql := v1CommitNext
	if c.Version == 0 {
		sql = v1CommitFirst
	}
	tag, err := pool.Exec(context.Background(), qualifier(schema)(sql), commitArgs(c)...)
	if err != nil || tag.RowsAffected() != 1 {
		t.Fatalf("version 1 commit %d of %s %s: %v, %v", c.Entry.Seq, c.Machine, c.ID, tag, err)
	}
}

// A database of schema version 1, with instances in it, migrates to the current version
// when a store of this code opens it: the instances, logs, snapshots and keys stay as they
// were, each instance gets the time of its last entry, and the new tables work.
func TestMigrateFromVersion1(t *testing.T) {
	ctx := context.Background()
	for _, schema := range []string{DefaultSchema, "Old One"} {
		t.Run(schema, func(t *testing.T) {
			dsn := newDatabase(t)
			pool := newPool(t, dsn)
			if err := migrateTo(ctx, pool, schema, migrations[:1]); err != nil {
				t.Fatal(err)
			}
			conn := connect(t, dsn)
			if vs := versions(t, conn, schema); !reflect.DeepEqual(vs, []int{1}) {
				t.Fatalf("a version 1 database records %v", vs)
			}
			// What a release of schema version 1 writes: instances, entries, a snapshot
			// and a key, through the statements of version 1.
			for seq := int64(1); seq <= 3; seq++ {
				commitV1(t, pool, schema, testCommit("m", "a", seq, "", fmt.Sprintf(`{"seq":%d}`, seq)))
			}
			snap := testCommit("m", "a", 4, "key", `{"seq":4}`)
			snap.Snapshot = []byte(`{"state":"a"}`)
			commitV1(t, pool, schema, snap)
			commitV1(t, pool, schema, testCommit("m", "b", 1, "", "{}"))
			old := &Store{pool: pool, sql: newStatements(schema)} // reads as version 1 did
			before := map[string]fsmrt.Loaded{"a": mustLoad(t, old, "m", "a"), "b": mustLoad(t, old, "m", "b")}
			beforeLog := mustLog(t, old, "m", "a")

			st, err := New(ctx, pool, WithSchema(schema))
			if err != nil {
				t.Fatal(err)
			}
			if vs := versions(t, conn, schema); !reflect.DeepEqual(vs, allVersions()) {
				t.Fatalf("after migrating: versions %v, want %v", vs, allVersions())
			}
			for id, l := range before {
				if got := mustLoad(t, st, "m", id); !sameLoaded(got, l) {
					t.Errorf("instance %s after migrating:\n%+v\nwas\n%+v", id, got, l)
				}
			}
			if log := mustLog(t, st, "m", "a"); !sameEntries(log, beforeLog) {
				t.Errorf("log after migrating:\n%+v\nwas\n%+v", log, beforeLog)
			}
			if e, ok, err := st.FindKey(ctx, "m", "a", "key"); err != nil || !ok || e.Seq != 4 {
				t.Errorf("key after migrating: %+v, %v, %v", e, ok, err)
			}
			// Each instance has the time of its last entry.
			found, err := st.Find(ctx, fsmrt.Query{Machine: "m"})
			want := []fsmrt.Instance{
				{ID: "a", State: "a", Version: 4, UpdatedAt: snap.Entry.At},
				{ID: "b", State: "b", Version: 1, UpdatedAt: testCommit("m", "b", 1, "", "").Entry.At},
			}
			if err != nil || !sameInstances(found, want) {
				t.Errorf("find after migrating: %+v, %v, want %+v", found, err, want)
			}
			// The instances go on, with effects and deadlines.
			c := testCommit("m", "a", 5, "", "{}")
			c.Effects = []fsmrt.Effect{{Name: "send", Key: "a/5/0", Data: []byte("x")}}
			c.Rearm, c.Deadlines = true, []fsmrt.Deadline{{Name: "expiry", At: c.Entry.At, State: "b", Event: "expire"}}
			c.Counters = []fsmrt.CounterValue{{Name: "failures", State: "b", Value: 2}}
			if err := st.Commit(ctx, c); err != nil {
				t.Fatal(err)
			}
			if got, err := st.ClaimEffects(ctx, "m", "w", c.Entry.At, time.Minute, 10); err != nil || len(got) != 1 || got[0].Key != "a/5/0" {
				t.Errorf("claim effects after migrating: %+v, %v", got, err)
			}
			if got, err := st.ClaimDeadlines(ctx, "m", "w", c.Entry.At, time.Minute, 10); err != nil || len(got) != 1 || got[0].ID != "a" {
				t.Errorf("claim deadlines after migrating: %+v, %v", got, err)
			}
			c = testCommit("m", "a", 6, "", "{}")
			c.Fired = "expiry"
			if err := st.Commit(ctx, c); err != nil {
				t.Fatal(err)
			}
			found, err = st.Find(ctx, fsmrt.Query{Machine: "m", Deadline: "expiry", Due: c.Entry.At, Counter: "failures", AtLeast: 1})
			if err != nil || len(found) != 0 {
				t.Errorf("find after migrating: %+v, %v: the counters were cleared", found, err)
			}
			found, err = st.Find(ctx, fsmrt.Query{Machine: "m", Deadline: "expiry", Due: c.Entry.At})
			if want := []fsmrt.Instance{{ID: "a", State: "a", Version: 6, UpdatedAt: c.Entry.At}}; err != nil || !sameInstances(found, want) {
				t.Errorf("find after migrating: %+v, %v, want %+v", found, err, want)
			}
			// Opening it again changes nothing.
			before2 := schemaState(t, conn, schema)
			if _, err := New(ctx, pool, WithSchema(schema)); err != nil {
				t.Fatal(err)
			}
			if after := schemaState(t, conn, schema); after != before2 {
				t.Errorf("New on a migrated database changed it:\n%s\nwas\n%s", after, before2)
			}
		})
	}
}
