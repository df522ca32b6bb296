// Package sqlite is the embedded default store of fsmgen: an fsmrt.Store kept in one
// SQLite database file, through the pure-Go driver modernc.org/sqlite, so that a program
// using it needs no C toolchain. It is its own module: programs that do not import it
// never download the driver.
//
// # Opening
//
//	st, err := sqlite.Open(ctx, "machines.db")
//	if err != nil {
//		return err
//	}
//	defer st.Close()
//
// Open creates the file when it is missing, puts it in WAL mode, sets the other pragmas
// below on every connection of its pool and brings the schema up to date. A file that is
// there but empty (0 bytes: a database truncated or lost) is refused with ErrEmptyFile
// unless opened WithCreate, and a damaged one (not a database, pages SQLite cannot read,
// a table of the schema missing) with an error wrapping ErrCorrupt, as every operation's
// error is when SQLite finds the file damaged. A program
// that opens its own *sql.DB (its own data source name and pragmas, a database shared with
// its own tables) hands it to New instead, which only migrates the schema; the caller
// then owns the pragmas and closes the database itself.
//
// # Pragmas
//
//   - journal_mode=WAL: readers never block the writer nor the writer readers, and a
//     commit appends to the write-ahead log instead of rewriting pages in place. It is a
//     lasting setting of the file, which Open makes when the file does not have it yet.
//   - busy_timeout (10 s by default, WithBusyTimeout): a connection that finds the
//     database locked by another connection or process waits that long for the lock
//     before it fails with SQLITE_BUSY, so several processes can share the file.
//   - foreign_keys=on: SQLite enforces the references between tables the schema
//     declares (an effect's entry, a deadline's instance).
//   - synchronous=FULL: a commit has reached the disk when Commit returns, through a
//     power loss as well as a crash of the program. WithSynchronousNormal relaxes it to
//     NORMAL, which in WAL mode still never corrupts the database but may lose the last
//     commits when the machine (not only the program) goes down.
//
// # Schema
//
// The tables are prefixed fsmgen_, so they can live beside an application's own:
//
//	fsmgen_schema(version)                     the schema version of the file
//	fsmgen_instances(machine, id,              one row per instance; last_at is the
//	    spec, version, state,                  time of its last entry
//	    snapshot, snapshot_seq,
//	    updated_at, last_at)                   (index on machine, state)
//	fsmgen_entries(machine, id, seq,           the event log, one row per entry
//	    kind, event, from_state, to_state,
//	    at, idem_key, data)                    (unique index on machine, id, idem_key)
//	fsmgen_effects(machine, id, seq, idx,      the outbox, one row per effect: the
//	    name, idem_key, data,                  idx-th effect of entry seq
//	    owner, leased_until, attempts,
//	    delivered_at, committed_at)            (index on machine, committed_at, id,
//	                                           seq, idx of those not delivered)
//	fsmgen_deadlines(machine, id, name,        the deadlines armed by the last
//	    at, state, event, level,               rearm, one row per deadline of an
//	    owner, leased_until, handled_at)       instance (index on machine, at, id,
//	                                           name of those not handled; index on
//	                                           machine, name, at)
//	fsmgen_counters(machine, id, name, state,  the counters that are not zero after
//	    value)                                 the last commit; state is empty but
//	                                           for a per-state counter (index on
//	                                           machine, name, value)
//
// Times (at, updated_at, last_at, leased_until, delivered_at, committed_at, handled_at)
// are unix microseconds; entries, snapshots and effects' data are kept byte for byte as
// BLOBs. An effect references its entry, a deadline and a counter their instance. The
// schema is versioned: the code carries an ordered list of migrations (version 1:
// instances and entries; version 2: effects and deadlines; version 3: handled
// deadlines, counters, last_at, and the indexes of Find), and opening a file of an older
// version applies the missing ones in one transaction, while a file of a newer version
// than the code knows is refused with a SchemaError and left untouched. Several
// processes opening an older file at once migrate it once. The step to version 3 fills
// last_at from each instance's last entry and keeps the deadlines and their leases, none
// of them handled (version 2 deleted a deadline once handled).
//
// # Concurrency
//
// Every write is one transaction that takes SQLite's write lock at its start (BEGIN
// IMMEDIATE). The writes of one Store (commits, claims, completions, and the transactions
// of InTx) queue in the process for their turn, so they do not spin on the lock, and run
// on one connection the Store keeps for them, their statements prepared on it once: so
// SQLite's cache of pages on that connection stays warm from one write to the next, which
// a write on another connection would empty. Write your own rows in the store's file in a
// transaction of InTx for the same reasons (a database handed to New and limited to one
// connection is written through its pool instead). The reads by key run on the pool, their
// statements prepared once when the Store opens. A Commit's first statement
// inserts a new instance, or moves a stored one from the version it expects under its
// spec, or under the spec it migrates the instance from (Commit.Migrated), which its spec
// then replaces; the entry's unique index refuses a used idempotency key, and the
// deadline it handles must be found not handled. The first of these that finds nothing
// says why the commit is refused (the instance's spec and version are read only then),
// and the transaction is rolled back: a refused commit writes nothing. The counters are
// upserted, each written only when its value changed, and not touched at all by a commit
// whose transition changed none (Commit.CountersKept). Load reads the instance and its
// log in one read transaction, a consistent snapshot that never waits for the writer.
//
// # Claims
//
// Effects wait in the outbox until they are delivered; deadlines wait until a
// scheduler handles them. Both are handed out by lease. A commit made by an owner
// writes its effects leased to it (their first attempt counted), so that it delivers
// them at once; other effects are written free. ClaimEffects and ClaimDeadlines each run
// in one write transaction: they select the rows that are free (never leased, or leased
// until before now; for deadlines, also due), in the order they hand them out (effects
// by their entry's time, instance, seq and position; deadlines by time, instance and
// name) up to the limit, walking an index in that order, and set owner and
// leased_until (and count the attempt of an effect) before they commit. Since SQLite
// admits one writer at a time to the file, claimers in any number of goroutines or
// processes never get the same row while its lease runs. CompleteEffects sets
// delivered_at, once: a delivered effect is never claimed again. A store opened
// WithGroupedCompletions(d) queues the completions instead, and stores them in the
// transaction of its next commit (or by themselves after d, or at Close), saving a write
// transaction after each transition whose effects were delivered at commit; a crash loses
// those queued, and their effects are delivered again once their leases run out. A commit that rearms
// replaces the instance's deadlines, leases, handled ones and all; a commit that handles
// a deadline sets its handled_at (the time of the commit's entry), after which no claim
// gets it, but Find still sees it until the next rearm; it is refused with a
// ConflictError when the deadline is gone or handled already.
//
// SQLite has one writer at a time per database file. This store suits one process, or
// several processes on one machine sharing the file (on a local disk: the locks and the
// write-ahead log's shared memory do not work over network file systems). Many workers
// on many machines want the PostgreSQL store.
//
// # Wake-ups
//
// The store is an fsmrt.Waker within a process, so that schedulers and deliverers
// (fsmrt.Waiter) sleep until there is work rather than poll: the Stores of one process on
// one file share a hub, and a commit that arms deadlines or writes effects nobody holds
// wakes the watches of its machine there (WatchWork) once committed, as does InTx for the
// transitions committed in its transaction. SQLite tells other processes nothing: their
// Waiters find such work at their polling interval, or when the nearest deadline they
// knew of falls due (NextWork, one statement).
//
// # Find
//
// Find is one SELECT, put together from the conditions the query sets, every value a
// parameter. Each condition is a subquery that searches its own index for the IDs that
// meet it: the state in fsmgen_instances_state, a deadline due by then (handled or not)
// in fsmgen_deadlines_name, a counter at least a value (in any state) in
// fsmgen_counters_value. The instances of those IDs are read by primary key in ID order,
// so the result needs no sort, and After and Limit page through it:
//
//	SELECT i.id, i.state, i.version, i.last_at FROM fsmgen_instances AS i
//	WHERE i.machine = ?
//	  AND i.id IN (SELECT s.id FROM fsmgen_instances AS s WHERE s.machine = ? AND s.state IN (?))
//	  AND i.id IN (SELECT d.id FROM fsmgen_deadlines AS d WHERE d.machine = ? AND d.name = ? AND d.at <= ?)
//	  AND i.id IN (SELECT c.id FROM fsmgen_counters AS c WHERE c.machine = ? AND c.name = ? AND c.value >= ?)
//	  AND i.id > ?
//	ORDER BY i.id
//	LIMIT ?
//
// SQLite plans it (EXPLAIN QUERY PLAN) as:
//
//	SEARCH i USING INDEX sqlite_autoindex_fsmgen_instances_1 (machine=? AND id=?)
//	LIST SUBQUERY 1
//	    SEARCH s USING INDEX fsmgen_instances_state (machine=? AND state=?)
//	LIST SUBQUERY 2
//	    SEARCH d USING INDEX fsmgen_deadlines_name (machine=? AND name=? AND at<?)
//	    CREATE BLOOM FILTER
//	LIST SUBQUERY 3
//	    SEARCH c USING INDEX fsmgen_counters_value (machine=? AND name=? AND value>?)
//	    CREATE BLOOM FILTER
//
// Its work grows with the IDs the conditions select, not with the number of instances
// of the machine (though each call, each page too, lists them all); a query with no
// condition walks the machine's instances by primary key from After, up to Limit.
package sqlite
