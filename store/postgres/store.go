package postgres

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/fsmgen/fsmgen/fsmrt"
)

// Store is an fsmrt.Store in a PostgreSQL database, safe for concurrent use by any number
// of goroutines, processes and machines.
type Store struct {
	pool    *pgxpool.Pool
	ownPool bool // Open made the pool: Close closes it
	sql     statements
	index   indexStatements
	wake    *waker                 // the watches and the listening connection (wake.go)
	group   *fsmrt.CompletionGroup // WithGroupedCompletions (group.go), or nil
}

var _ fsmrt.Store = (*Store)(nil)

// Option configures New and Open.
type Option func(*options)

// options are what Options set.
type options struct {
	schema      string
	groupWithin time.Duration // WithGroupedCompletions
}

// DefaultSchema is the PostgreSQL schema of the store's tables unless WithSchema says
// otherwise.
const DefaultSchema = "public"

// maxIdentifier is the longest name PostgreSQL keeps, in bytes; it cuts longer ones.
const maxIdentifier = 63

// WithSchema keeps the store's tables in the PostgreSQL schema name (created when
// missing) instead of DefaultSchema, so that several programs share a database with a
// schema each. The name is used as it is, case included: it is quoted in SQL.
func WithSchema(name string) Option {
	return func(o *options) { o.schema = name }
}

// New returns a store on the caller's pool, first migrating the database to
// SchemaVersion (see the package documentation). It refuses a database migrated by a
// newer release with a *SchemaError. Close leaves the pool open.
func New(ctx context.Context, pool *pgxpool.Pool, opts ...Option) (*Store, error) {
	if pool == nil {
		return nil, errors.New("postgres store: nil pool")
	}
	o := options{schema: DefaultSchema}
	for _, opt := range opts {
		opt(&o)
	}
	if err := checkSchemaName(o.schema); err != nil {
		return nil, err
	}
	if err := migrate(ctx, pool, o.schema); err != nil {
		return nil, err
	}
	st := newStatements(o.schema)
	s := &Store{pool: pool, sql: st, index: newIndexStatements(o.schema), wake: &waker{prefix: st.wakePrefix, ping: listenPing}}
	s.group = s.newGroup(o.groupWithin)
	return s, nil
}

// Open connects to the database of dsn (a postgres:// URL or a key=value string, as
// pgxpool.ParseConfig reads it, pool settings included) with a pool of its own and
// returns a store on it, as New does. Close closes the pool.
func Open(ctx context.Context, dsn string, opts ...Option) (*Store, error) {
	pool, err := pgxpool.New(ctx, dsn)
	if err != nil {
		return nil, fmt.Errorf("postgres store: open: %w", err)
	}
	s, err := New(ctx, pool, opts...)
	if err != nil {
		pool.Close()
		return nil, err
	}
	s.ownPool = true
	return s, nil
}

// Close stops the store's listening connection (WatchWork) and closes the pool of a store
// made by Open, waiting for the connections in use to come back; a store made by New
// leaves its caller's pool open. A store made WithGroupedCompletions first stores the
// completions still queued; those it cannot store are lost, and their effects delivered
// again once their leases run out.
func (s *Store) Close() {
	_ = s.group.Close()
	if s.wake != nil {
		s.wake.close()
	}
	if s.ownPool {
		s.pool.Close()
	}
}

// checkSchemaName refuses a schema name PostgreSQL would not keep as it is.
func checkSchemaName(name string) error {
	switch {
	case name == "":
		return errors.New("postgres store: empty schema name")
	case len(name) > maxIdentifier:
		return fmt.Errorf("postgres store: schema name %q is longer than %d bytes", name, maxIdentifier)
	case strings.ContainsRune(name, 0):
		return fmt.Errorf("postgres store: schema name %q contains a NUL byte", name)
	}
	return nil
}

// failed wraps err, the failure of operation op on instance (machine, id).
func failed(op, machine, id string, err error) error {
	return fmt.Errorf("postgres store: %s %q %q: %w", op, machine, id, corrupt(err))
}
