package postgres

import (
	"context"
	"fmt"
	"net"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/fsmgen/fsmgen/fsmrt"
	"github.com/fsmgen/fsmgen/store/postgres/pgtest"
)

// One PostgreSQL server serves the whole test binary (pgtest.Shared), started by the
// first test that needs it and stopped by TestMain; every test works in a database of its
// own.
var databases atomic.Int64

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) == "crash" { // a process of TestCommitInCallersTxCrash
		err := crashChild(os.Getenv("FSMGEN_POSTGRES_TEST_DSN"))
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	pgtest.StopShared()
	os.Exit(code)
}

// newDatabase creates an empty database for t and returns its DSN.
func newDatabase(t testing.TB) string {
	t.Helper()
	name := fmt.Sprintf("test_%d", databases.Add(1))
	dsn, err := pgtest.Shared(t).CreateDatabase(context.Background(), name)
	if err != nil {
		t.Fatal(err)
	}
	return dsn
}

// newPool returns a pool on dsn, closed when t ends.
func newPool(t testing.TB, dsn string) *pgxpool.Pool {
	t.Helper()
	pool, err := pgxpool.New(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return pool
}

// openStore opens a store on dsn, closed when t ends.
func openStore(t testing.TB, dsn string, opts ...Option) *Store {
	t.Helper()
	st, err := Open(context.Background(), dsn, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Close)
	return st
}

// connect returns a connection to dsn, closed when t ends.
func connect(t testing.TB, dsn string) *pgx.Conn {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

const testSpec = "sha256:test"

// testCommit returns the commit of entry seq of instance (machine, id), going a -> b ->
// a ..., with idempotency key key ("" for none) and entry data data.
func testCommit(machine, id string, seq int64, key, data string) *fsmrt.Commit {
	from, to := "a", "b"
	if seq%2 == 0 {
		from, to = "b", "a"
	}
	return &fsmrt.Commit{
		Machine: machine, ID: id, Spec: testSpec, Version: seq - 1, State: to,
		Entry: fsmrt.Entry{
			Seq: seq, Kind: fsmrt.KindTransition, Event: "go_" + to, From: from, To: to,
			At: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC).Add(time.Duration(seq) * time.Second), Key: key,
			Data: []byte(data),
		},
	}
}

// mustCommit commits entries from to to of (machine, id).
func mustCommit(t testing.TB, st fsmrt.Store, machine, id string, from, to int64) {
	t.Helper()
	for seq := from; seq <= to; seq++ {
		if err := st.Commit(context.Background(), testCommit(machine, id, seq, "", fmt.Sprintf(`{"seq":%d}`, seq))); err != nil {
			t.Fatalf("commit %d of %s %s: %v", seq, machine, id, err)
		}
	}
}

// mustLoad loads (machine, id).
func mustLoad(t testing.TB, st fsmrt.Store, machine, id string) fsmrt.Loaded {
	t.Helper()
	l, err := st.Load(context.Background(), machine, id)
	if err != nil {
		t.Fatalf("load %s %s: %v", machine, id, err)
	}
	return l
}

// mustLog returns the whole log of (machine, id).
func mustLog(t testing.TB, st fsmrt.Store, machine, id string) []fsmrt.Entry {
	t.Helper()
	log, err := st.Log(context.Background(), machine, id, 0)
	if err != nil {
		t.Fatalf("log %s %s: %v", machine, id, err)
	}
	return log
}

// openStoreWrapping opens a store on dsn whose connections to the server, the listening
// one included, are those wrap makes of the connections it dials; closed when t ends.
func openStoreWrapping(t testing.TB, dsn string, wrap func(net.Conn) net.Conn) *Store {
	t.Helper()
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		t.Fatal(err)
	}
	var d net.Dialer
	cfg.ConnConfig.DialFunc = func(ctx context.Context, network, addr string) (net.Conn, error) {
		conn, err := d.DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return wrap(conn), nil
	}
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	st, err := New(context.Background(), pool)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Close)
	return st
}
