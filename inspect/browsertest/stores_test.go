package browsertest

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/fsmgen/fsmgen/fsmrt"
	"github.com/fsmgen/fsmgen/inspect/inspecttest"
	"github.com/fsmgen/fsmgen/store/postgres"
	"github.com/fsmgen/fsmgen/store/postgres/pgtest"
	"github.com/fsmgen/fsmgen/store/sqlite"
)

// One PostgreSQL server serves the test binary (pgtest.Shared); TestMain stops it.
func TestMain(m *testing.M) {
	code := m.Run()
	pgtest.StopShared()
	os.Exit(code)
}

// sqliteStore opens a new SQLite file for t.
func sqliteStore(t *testing.T) fsmrt.Store {
	t.Helper()
	s, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "inspect.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// pgtestDSN creates a new database named name on the shared PostgreSQL server.
func pgtestDSN(t *testing.T, name string) (string, error) {
	t.Helper()
	return pgtest.Shared(t).CreateDatabase(context.Background(), name)
}

// postgresStore opens a new database named name on the shared PostgreSQL server.
func postgresStore(t *testing.T, name string) fsmrt.Store {
	t.Helper()
	ctx := context.Background()
	dsn, err := pgtest.Shared(t).CreateDatabase(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	s, err := postgres.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

// TestSQLite checks the inspector's pages over a real SQLite file.
func TestSQLite(t *testing.T) {
	inspecttest.Run(t, sqliteStore(t))
}

// TestPostgreSQL checks the inspector's pages over a real PostgreSQL server.
func TestPostgreSQL(t *testing.T) {
	inspecttest.Run(t, postgresStore(t, "inspect_pages"))
}
