package postgres

import (
	"context"
	"net/url"
	"testing"

	"github.com/fsmgen/fsmgen/fsmrt"
	"github.com/fsmgen/fsmgen/fsmrt/storetest"
)

// Every subtest opens a store of its own (a pool of its own) on one fresh database.
func TestConformance(t *testing.T) {
	dsn := newDatabase(t)
	storetest.RunComplete(t, func(t *testing.T) fsmrt.Store { return openStore(t, dsn) })
}

// One store serves every subtest.
func TestConformanceSharedStore(t *testing.T) {
	st := openStore(t, newDatabase(t))
	storetest.RunComplete(t, func(*testing.T) fsmrt.Store { return st })
}

// The tables live in a schema other than public, whose name needs quoting.
func TestConformanceOtherSchema(t *testing.T) {
	st := openStore(t, newDatabase(t), WithSchema(`Other "App"; x`))
	storetest.RunComplete(t, func(*testing.T) fsmrt.Store { return st })
}

// A database whose transactions are SERIALIZABLE reports lost races as serialization
// failures, which must come back as conflicts.
func TestConformanceSerializable(t *testing.T) {
	dsn := newDatabase(t)
	conn := connect(t, dsn)
	if _, err := conn.Exec(context.Background(), `DO $$ BEGIN
		EXECUTE format('ALTER DATABASE %I SET default_transaction_isolation = serializable', current_database());
	END $$`); err != nil {
		t.Fatal(err)
	}
	st := openStore(t, dsn)
	var level string
	if err := st.pool.QueryRow(context.Background(), "SHOW default_transaction_isolation").Scan(&level); err != nil || level != "serializable" {
		t.Fatalf("default_transaction_isolation = %q, %v", level, err)
	}
	storetest.RunComplete(t, func(*testing.T) fsmrt.Store { return st })
}

// Pools configured for other query modes, such as the simple protocol that some
// connection poolers need, work the same. Each mode has a database of its own: the suite's
// Find expects to find only the instances of its own run.
func TestConformanceQueryExecModes(t *testing.T) {
	for _, mode := range []string{"simple_protocol", "exec", "describe_exec", "cache_describe"} {
		t.Run(mode, func(t *testing.T) {
			u, err := url.Parse(newDatabase(t))
			if err != nil {
				t.Fatal(err)
			}
			q := u.Query()
			q.Set("default_query_exec_mode", mode)
			u.RawQuery = q.Encode()
			st := openStore(t, u.String())
			storetest.RunComplete(t, func(*testing.T) fsmrt.Store { return st })
		})
	}
}
