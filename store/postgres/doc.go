// Package postgres is the PostgreSQL adapter of fsmrt.Store: the machines of a program,
// persisted in one database that any number of workers, on any number of machines,
// share. It talks to PostgreSQL through pgx v5 and passes the conformance suite
// fsmrt/storetest.
//
// It is a module of its own (github.com/fsmgen/fsmgen/store/postgres), so that programs
// that do not use PostgreSQL never download pgx.
//
// # Opening
//
// Open connects with a pool of its own, which Close closes:
//
//	st, err := postgres.Open(ctx, "postgres://app@db.example/app")
//	if err != nil { ... }
//	defer st.Close()
//
// New uses a pool the program already has (a *pgxpool.Pool) and leaves it open. Both
// migrate the database first. WithSchema keeps the tables in another PostgreSQL schema
// than "public", so that several programs share a database:
//
//	st, err := postgres.New(ctx, pool, postgres.WithSchema("billing"))
//
// It needs PostgreSQL 13 or later.
//
// # Schema
//
// Every table is named fsmgen_...:
//
//	fsmgen_schema     (version int)                     the versions migrated
//	fsmgen_instances  (machine, id, spec, version, state, snapshot bytea, snapshot_seq,
//	                   updated_at, last_at)             one row per instance,
//	                   primary key (machine, id), indexed by (machine, state)
//	fsmgen_entries    (machine, id, seq, kind, event, from_state, to_state, at,
//	                   idem_key, data bytea)            the event logs,
//	                   primary key (machine, id, seq), unique (machine, id, idem_key)
//	                   where idem_key is not null
//	fsmgen_effects    (machine, id, seq, idx, name, idem_key, data bytea, owner,
//	                   leased_until, attempts, delivered_at, committed_at)
//	                                                    the outbox (version 2),
//	                   primary key (machine, id, seq, idx), indexed by (machine,
//	                   committed_at, id, seq, idx) where delivered_at is null
//	fsmgen_deadlines  (machine, id, name, at, state, event, level, owner,
//	                   leased_until, handled_at)        the deadlines (version 2),
//	                   primary key (machine, id, name), indexed by (machine, at, id,
//	                   name) where handled_at is null, and by (machine, name, at)
//	fsmgen_counters   (machine, id, name, state, value bigint)
//	                                                    the counters (version 2),
//	                   primary key (machine, id, name, state), indexed by (machine,
//	                   name, value)
//
// An instance's version is the seq of its last entry, snapshot_seq the seq its snapshot
// was taken after (0 with no snapshot), last_at the time of its last entry (what Find
// returns as UpdatedAt; updated_at is when the server wrote the row). Entries, snapshots
// and effects' data are bytea, not jsonb: the bytes the engine wrote come back exactly,
// nil apart from empty. An effect is the idx-th of entry seq, committed_at its entry's
// time; owner and leased_until say who holds it and until when (NULL: nobody), attempts
// counts the deliveries tried, and delivered_at is set once it is delivered. The deadlines
// of an instance are those its last rearm armed: a commit that handles one sets its
// handled_at (the time of the commit's entry), and the deadline stays, for Find, until the
// next rearm replaces them all. The counters of an instance are those its last commit
// reported (the ones that are not zero); state is empty but for a per-state counter, and
// a commit without counters clears them. Times are timestamptz, kept to the microsecond.
// Names (machines, ids, states, events, keys) are text: valid UTF-8 without NUL bytes;
// Commit refuses others as invalid commits (fsmrt.ErrInvalidCommit).
//
// Delivered effects stay in fsmgen_effects, out of the claim index; the store never
// deletes them. A program that does not want them kept deletes the old ones itself:
//
//	DELETE FROM fsmgen_effects WHERE delivered_at < now() - interval '30 days'
//
// # Migrations
//
// The schema is versioned: the code carries an ordered list of migrations, and
// fsmgen_schema records the versions applied: version 1 the instances and their logs;
// version 2 the outbox, the deadlines, the counters and last_at, which the step to it
// fills in from each instance's last entry. New and Open bring the database up to
// SchemaVersion in one transaction that holds a transaction-level advisory lock
// (pg_advisory_xact_lock) on a fixed key, reading the version again once it holds the
// lock: workers starting at once migrate it once, and the others wait and find it done.
// A database already at SchemaVersion is only read. A database a newer release migrated
// is refused with a *SchemaError (errors.Is ErrSchema) and left as it is: upgrade the
// program instead. Migrating needs the privilege to create tables in the schema, and the
// schema itself when it is missing.
//
// # Concurrency
//
// Concurrency is optimistic: every worker may load and commit any instance, and no lock
// is held between a Load and a Commit. A commit names the version it moves the instance
// from, and one transaction writes the instance only at that version, then appends the
// entry, or writes nothing. Of several workers committing one version of an instance,
// exactly one wins; the others get a *fsmrt.ConflictError (errors.Is
// fsmrt.ErrStoreConflict), as does a commit reusing an idempotency key of the instance,
// and a commit under another spec than the stored one a *fsmrt.SpecMismatchError, unless
// it migrates the instance from the stored spec (Commit.Migrated): the same statement
// then stores the instance under the commit's spec.
// Refusals change nothing: load the machine again and fire again (fsmrt's Retry does).
// Databases configured for REPEATABLE READ or SERIALIZABLE transactions report some lost
// races as serialization failures; Commit returns those as conflicts too, among them a
// commit that handles or rearms deadlines a claim leased while the commit ran.
//
// A commit is two round trips, whatever it writes: the begin and the writes, sent
// together in one batch, then the commit, held back until the writes are known to have
// succeeded. The first write is one statement that moves the instance (its spec,
// version, state, last_at and snapshot) and appends the entry; the effects (one multi-row
// INSERT), the deadline the commit handles (an UPDATE of its handled_at), the rearm (a
// DELETE and a multi-row INSERT) and the counters (a DELETE and, when there are any, a
// multi-row INSERT) follow in the same batch, each writing only when the first wrote the
// instance. A commit that handles a deadline the instance does not have, or has handled
// already, is rolled back and refused with a *fsmrt.ConflictError naming the deadline; a
// refusal of the version, the spec or the key takes precedence over it, and costs one
// more round trip, to read why. A cancelled context or a connection lost before the
// commit is sent therefore writes nothing, even when the server goes on with the writes.
// One lost while the commit is in flight leaves the outcome unknown, as with any
// database: Commit then returns an error matching ErrCommitUnknown, and the caller loads
// the instance to find out. Load reads the instance and its entries in one round trip.
//
// # Claims
//
// ClaimEffects and ClaimDeadlines lease work to one claimer at a time, each in one
// statement and one round trip, in a READ COMMITTED transaction of its own (begun and
// committed in the same batch) whatever the database's default isolation. The statement
// picks the rows in the claim order with SELECT ... ORDER BY ... LIMIT n FOR UPDATE SKIP
// LOCKED, in a materialized CTE, and leases them with an UPDATE joined to it, RETURNING
// what was claimed: claimers running at once, in any number of processes, skip the rows
// another holds instead of waiting for it, and never get the same effect or deadline. The
// claim indexes give the rows in claim order, so that a claim reads about as many rows as
// it takes (EXPLAIN: Limit, LockRows, Index Scan using fsmgen_effects_pending, or
// fsmgen_deadlines_due); delivered effects and handled deadlines are out of them. Ids and
// names are ordered bytewise (COLLATE "C"), as the other stores order them, whatever the
// database's collation. CompleteEffects records a batch of effects delivered in one
// UPDATE over unnest'ed arrays, in one round trip. A program that delivers the effects of
// each transition at once (a machine with an owner) spends that round trip after every
// transition with effects; a store made WithGroupedCompletions(d) queues the completions
// instead and stores them in the batch of its next commit, of any instance (or by
// themselves after d, or at Close). A crash loses those queued, and their effects are
// delivered again once their leases run out: delivery stays at least once.
//
// # Wake-ups
//
// The store is an fsmrt.Waker, so that schedulers and deliverers (fsmrt.Waiter) sleep
// until there is work rather than poll. A commit that arms deadlines, or writes effects
// nobody holds (a transition committed in the caller's transaction, WithTx), sends a
// NOTIFY on channel fsmgen_work in its own transaction: PostgreSQL delivers it to every
// listener once, and only if, the transaction commits. A store with watches (WatchWork)
// LISTENs on a connection of its own, made from the pool's configuration; it connects
// again after a loss, pausing 50 ms, then twice as long up to 2 s, and wakes every watch
// when it loses or regains the connection, since what was committed meanwhile went
// unheard; meanwhile the Waiters poll at their interval. NextWork reads, in one
// statement, the nearest time a claim may find work: a deadline due, a lease ending, an
// effect free. A NOTIFY costs its commit: BenchmarkCommitNotify measures +38 to +44% on
// a commit that arms a deadline on a 2-CPU machine shared with the server and a listener.
//
// # Find
//
// Find is one SELECT, in one round trip, read at one point in time: the statement for
// the conditions the query sets (one of 32, each prepared once per connection), every
// value a parameter. With every condition set it is:
//
//	SELECT i.id, i.state, i.version, i.last_at
//	FROM fsmgen_instances i
//	WHERE i.machine = $1::text
//		AND i.state = ANY ($2::text[])
//		AND EXISTS (SELECT FROM fsmgen_deadlines d
//			WHERE d.machine = i.machine AND d.id = i.id AND d.name = $3::text AND d.at <= $4::timestamptz)
//		AND EXISTS (SELECT FROM fsmgen_counters c
//			WHERE c.machine = i.machine AND c.id = i.id AND c.name = $5::text AND c.value >= $6::bigint)
//		AND i.id COLLATE "C" > $7::text
//	ORDER BY i.id COLLATE "C"
//	LIMIT $8::bigint
//
// A deadline counts whether it is handled or not, a counter in any state. Each condition
// searches its index: the states fsmgen_instances_state (machine, state), the deadline
// fsmgen_deadlines_name (machine, name, at), the counter fsmgen_counters_value (machine,
// name, value). On 9,000 instances of 3 machines, ANALYZEd, the plans for the values and
// the generic plans of the prepared statements are alike (EXPLAIN, generic plans shown):
//
//	find by state:
//	Sort
//	  Sort Key: id COLLATE "C"
//	  ->  Bitmap Heap Scan on fsmgen_instances i
//	        Recheck Cond: ((machine = $1) AND (state = ANY ($2)))
//	        ->  Bitmap Index Scan on fsmgen_instances_state
//	              Index Cond: ((machine = $1) AND (state = ANY ($2)))
//
//	find by deadline:
//	Sort
//	  Sort Key: i.id COLLATE "C"
//	  ->  Hash Join
//	        Hash Cond: (i.id = d.id)
//	        ->  Bitmap Heap Scan on fsmgen_instances i
//	              Recheck Cond: (machine = $1)
//	              ->  Bitmap Index Scan on fsmgen_instances_state
//	                    Index Cond: (machine = $1)
//	        ->  Hash
//	              ->  Bitmap Heap Scan on fsmgen_deadlines d
//	                    Recheck Cond: ((machine = $1) AND (name = $2) AND (at <= $3))
//	                    ->  Bitmap Index Scan on fsmgen_deadlines_name
//	                          Index Cond: ((machine = $1) AND (name = $2) AND (at <= $3))
//
//	find by counter:
//	Sort
//	  Sort Key: i.id COLLATE "C"
//	  ->  Hash Semi Join
//	        Hash Cond: (i.id = c.id)
//	        ->  Bitmap Heap Scan on fsmgen_instances i
//	              Recheck Cond: (machine = $1)
//	              ->  Bitmap Index Scan on fsmgen_instances_state
//	                    Index Cond: (machine = $1)
//	        ->  Hash
//	              ->  Bitmap Heap Scan on fsmgen_counters c
//	                    Recheck Cond: ((machine = $1) AND (name = $2) AND (value >= $3))
//	                    ->  Bitmap Index Scan on fsmgen_counters_value
//	                          Index Cond: ((machine = $1) AND (name = $2) AND (value >= $3))
//
// With more instances per machine than a condition selects (100,000, of which a few
// hundred), the planner rather reads the ids from the condition's index and looks each
// instance up by primary key (Nested Loop; Index Scan using fsmgen_instances_pkey). With
// several conditions it starts from the most selective and checks the others by primary
// key: for the statement above, the state and counter indexes joined by a Hash Semi
// Join, then Index Scan using fsmgen_deadlines_pkey for the deadline. Ids are
// compared and ordered bytewise, whatever the database's collation, and no index keeps
// them in that order: the instances selected are sorted (a top-N sort under a limit), so
// that a query with no condition, and each of its pages, reads every instance of the
// machine. TestFindPlansUseIndexes logs these plans.
package postgres
