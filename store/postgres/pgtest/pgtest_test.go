package pgtest

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

func TestServer(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	srv := New(t, Options{Settings: map[string]string{"work_mem": "'8MB'", "application_name": "'pgtest'"}})
	if srv.Port <= 0 || !strings.Contains(srv.DSN, "@127.0.0.1:") {
		t.Fatalf("port %d, DSN %q", srv.Port, srv.DSN)
	}

	conn, err := pgx.Connect(ctx, srv.DSN)
	if err != nil {
		t.Fatal(err)
	}
	var version string
	if err := conn.QueryRow(ctx, "select version()").Scan(&version); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(version, "PostgreSQL ") {
		t.Errorf("version() = %q", version)
	}
	var fsync string
	if err := conn.QueryRow(ctx, "show fsync").Scan(&fsync); err != nil || fsync != "off" {
		t.Errorf("fsync = %q, %v; want off", fsync, err)
	}
	for name, want := range map[string]string{"work_mem": "8MB", "application_name": "pgtest"} {
		var got string
		if err := conn.QueryRow(ctx, "select current_setting($1)", name).Scan(&got); err != nil || got != want {
			t.Errorf("%s = %q, %v; want %q (Options.Settings)", name, got, err, want)
		}
	}
	if _, err := conn.Exec(ctx, "create table t (id int primary key, name text not null)"); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, "insert into t values ($1, $2)", 1, "héllo"); err != nil {
		t.Fatal(err)
	}
	var name string
	if err := conn.QueryRow(ctx, "select name from t where id = $1", 1).Scan(&name); err != nil || name != "héllo" {
		t.Fatalf("read back %q, %v", name, err)
	}
	if err := conn.Close(ctx); err != nil {
		t.Fatal(err)
	}

	dsn2, err := srv.CreateDatabase(ctx, "second db")
	if err != nil {
		t.Fatal(err)
	}
	conn2, err := pgx.Connect(ctx, dsn2)
	if err != nil {
		t.Fatal(err)
	}
	var db string
	if err := conn2.QueryRow(ctx, "select current_database()").Scan(&db); err != nil || db != "second db" {
		t.Errorf("current_database() = %q, %v", db, err)
	}
	if err := conn2.Close(ctx); err != nil {
		t.Fatal(err)
	}

	srv.Stop()
	if _, err := os.Stat(srv.Dir); !os.IsNotExist(err) {
		t.Errorf("after Stop, stat %s: %v; want not exist", srv.Dir, err)
	}
	cctx, ccancel := context.WithTimeout(ctx, 5*time.Second)
	defer ccancel()
	if conn, err := pgx.Connect(cctx, srv.DSN); err == nil {
		conn.Close(ctx)
		t.Error("connect after Stop succeeded")
	}
	srv.Stop() // again, and once more by the cleanup registered by New
	if err := srv.Close(); err != nil {
		t.Errorf("Close after Stop: %v", err)
	}
}

// A server that cannot start reports the server log and leaves nothing running.
func TestStartFailure(t *testing.T) {
	if testing.Short() {
		t.Skip("runs initdb")
	}
	if _, err := findBinaries(); err != nil {
		notInstalled(t, err)
	}
	_, err := Start(context.Background(), Options{MaxConnections: 1 << 30})
	if err == nil {
		t.Fatal("Start with an invalid max_connections succeeded")
	}
	if !strings.Contains(err.Error(), "max_connections") {
		t.Errorf("error does not include the server log: %v", err)
	}
}

// Settings that would write something else than one line of postgresql.conf are refused.
func TestSettingsRefused(t *testing.T) {
	for _, settings := range []map[string]string{
		{"": "1"},
		{"work_mem = '1MB'\nfsync": "on"},
		{"work mem": "'1MB'"},
		{"work_mem": "'1MB'\nfsync = on"},
		{"work_mem": "'1MB'\r"},
	} {
		if lines, err := settingLines(settings); err == nil {
			t.Errorf("settingLines(%q) = %q, want an error", settings, lines)
		}
	}
	lines, err := settingLines(map[string]string{"b.x": "2", "a_1": "'one'"})
	if want := "a_1 = 'one'\nb.x = 2\n"; err != nil || lines != want {
		t.Errorf("settingLines = %q, %v; want %q", lines, err, want)
	}
}

func TestVersionOrder(t *testing.T) {
	for _, c := range []struct {
		a, b string
		less bool
	}{
		{"9.6", "15", true},
		{"15", "9.6", false},
		{"13", "15", true},
		{"15", "15", false},
		{"9", "9.6", true},
	} {
		a, okA := parseVersion(c.a)
		b, okB := parseVersion(c.b)
		if !okA || !okB {
			t.Fatalf("parseVersion(%q, %q) failed", c.a, c.b)
		}
		if got := versionLess(a, b); got != c.less {
			t.Errorf("versionLess(%s, %s) = %v, want %v", c.a, c.b, got, c.less)
		}
	}
	if _, ok := parseVersion("main"); ok {
		t.Error(`parseVersion("main") succeeded`)
	}
}

func TestMain(m *testing.M) {
	code := m.Run()
	StopShared()
	os.Exit(code)
}

// sharedDatabases numbers the databases TestShared creates: the shared server outlives
// one run of the test (-count).
var sharedDatabases atomic.Int64

// Every test of the binary gets the same shared server, which serves a database each.
func TestShared(t *testing.T) {
	srv := Shared(t)
	var again *Server
	t.Run("another test", func(t *testing.T) { again = Shared(t) })
	if again != srv {
		t.Fatalf("Shared returned %p, then %p", srv, again)
	}
	dsn, err := srv.CreateDatabase(context.Background(), fmt.Sprint("shared_", sharedDatabases.Add(1)))
	if err != nil {
		t.Fatal(err)
	}
	conn, err := pgx.Connect(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var one int
	if err := conn.QueryRow(context.Background(), "select 1").Scan(&one); err != nil || one != 1 {
		t.Errorf("select 1: %d, %v", one, err)
	}
}

// TestRestart: a server restarted (fast, then immediate) accepts connections on the same
// port and keeps what was committed; a connection of before the restart is closed.
func TestRestart(t *testing.T) {
	ctx := context.Background()
	srv := New(t, Options{})
	conn, err := pgx.Connect(ctx, srv.DSN)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, `CREATE TABLE kept (n int); INSERT INTO kept VALUES (1)`); err != nil {
		t.Fatal(err)
	}
	for _, immediate := range []bool{false, true} {
		if err := srv.Restart(ctx, immediate); err != nil {
			t.Fatal(err)
		}
		if _, err := conn.Exec(ctx, `SELECT 1`); err == nil {
			t.Fatalf("a connection of before the restart (immediate %v) still works", immediate)
		}
		conn, err = pgx.Connect(ctx, srv.DSN)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(ctx)
		var n int
		if err := conn.QueryRow(ctx, `SELECT n FROM kept`).Scan(&n); err != nil || n != 1 {
			t.Fatalf("after the restart (immediate %v): %d, %v", immediate, n, err)
		}
	}
}
