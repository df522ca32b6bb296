package postgres

import (
	"strings"

	"github.com/jackc/pgx/v5"
)

// The SQL of the store. Every table is named "{schema}.fsmgen_...": newStatements and
// migrate put the quoted schema name of the store in place of "{schema}".

// Names of the constraints and indexes whose violations Commit tells apart, and of the
// indexes the claims use.
const (
	entriesPrimaryKey   = "fsmgen_entries_pkey"
	entriesKeyIndex     = "fsmgen_entries_idem_key"
	effectsPendingIndex = "fsmgen_effects_pending"
	deadlinesDueIndex   = "fsmgen_deadlines_due"
	// The indexes of Find's conditions: on the state (of version 1), a deadline, a counter.
	instancesStateIndex = "fsmgen_instances_state"
	deadlinesNameIndex  = "fsmgen_deadlines_name"
	countersValueIndex  = "fsmgen_counters_value"
)

// Commit: one statement writes the instance (its last_at the entry's time) and appends the
// entry, the entry only when the instance was written. Both take the arguments of
// commitArgs:
//
//	$1 machine, $2 id, $3 spec, $4 seq (the new version), $5 state,
//	$6 kind, $7 event, $8 from, $9 to, $10 at, $11 idempotency key (NULL for none),
//	$12 entry data, $13 snapshot (NULL for none);
//
// sqlCommitNext one more, $14: the spec the commit migrates the instance from (NULL for
// none).
const (
	// sqlCommitFirst creates an instance at version 1; it writes nothing when the
	// instance exists.
	sqlCommitFirst = `WITH created AS (
	INSERT INTO {schema}.fsmgen_instances
		(machine, id, spec, version, state, snapshot, snapshot_seq, updated_at, last_at)
	VALUES ($1::text, $2::text, $3::text, $4::bigint, $5::text, $13::bytea,
		CASE WHEN $13::bytea IS NULL THEN 0 ELSE $4::bigint END, now(), $10::timestamptz)
	ON CONFLICT (machine, id) DO NOTHING
	RETURNING 1
)
INSERT INTO {schema}.fsmgen_entries
	(machine, id, seq, kind, event, from_state, to_state, at, idem_key, data)
SELECT $1::text, $2::text, $4::bigint, $6::text, $7::text, $8::text, $9::text,
	$10::timestamptz, $11::text, $12::bytea
FROM created`

	// sqlCommitNext moves an instance from version $4-1 to $4 under spec $3, or $14, which
	// $3 then replaces; it writes nothing when the instance is at another version or spec,
	// or missing.
	sqlCommitNext = `WITH moved AS (
	UPDATE {schema}.fsmgen_instances
	SET spec = $3::text, version = $4::bigint, state = $5::text, updated_at = now(), last_at = $10::timestamptz,
		snapshot = COALESCE($13::bytea, snapshot),
		snapshot_seq = CASE WHEN $13::bytea IS NULL THEN snapshot_seq ELSE $4::bigint END
	WHERE machine = $1::text AND id = $2::text AND spec IN ($3::text, $14::text) AND version = $4::bigint - 1
	RETURNING 1
)
INSERT INTO {schema}.fsmgen_entries
	(machine, id, seq, kind, event, from_state, to_state, at, idem_key, data)
SELECT $1::text, $2::text, $4::bigint, $6::text, $7::text, $8::text, $9::text,
	$10::timestamptz, $11::text, $12::bytea
FROM moved`

	// sqlStored reads what a refused commit found: the version and spec of an instance.
	sqlStored = `SELECT version, spec FROM {schema}.fsmgen_instances WHERE machine = $1 AND id = $2`
)

// The statements a commit sends after its write, in the same batch and transaction, each
// only when the commit has something for it. Each writes only when the write changed the
// instance (sqlWritten), so that after a refused write they do nothing before the rollback.
// All take $1 machine and $2 id.
const (
	// sqlWritten holds when this transaction wrote instance ($1, $2): the row version it
	// sees was created by its own transaction.
	sqlWritten = `EXISTS (SELECT 1 FROM {schema}.fsmgen_instances
	WHERE machine = $1::text AND id = $2::text AND xmin = pg_current_xact_id_if_assigned()::xid)`

	// sqlInsertEffects writes the effects of entry $3 (at $4) to the outbox, leased to
	// owner $5 until $6 (both NULL for none): $7 names, $8 keys, $9 data, the index of each
	// its position.
	sqlInsertEffects = `INSERT INTO {schema}.fsmgen_effects
	(machine, id, seq, idx, name, idem_key, data, owner, leased_until, attempts, committed_at)
SELECT $1::text, $2::text, $3::bigint, (f.ord - 1)::int, f.name, f.idem_key, f.data,
	$5::text, $6::timestamptz, CASE WHEN $5::text IS NULL THEN 0 ELSE 1 END, $4::timestamptz
FROM unnest($7::text[], $8::text[], $9::bytea[]) WITH ORDINALITY AS f(name, idem_key, data, ord)
WHERE ` + sqlWritten

	// sqlHandleFired records deadline $3, the one the commit handles, handled at $4 (the
	// entry's time): it stays, for Find, until the next rearm, but no claim takes it again.
	// No row updated means the instance no longer has it, or has handled it already.
	sqlHandleFired = `UPDATE {schema}.fsmgen_deadlines SET handled_at = $4::timestamptz
WHERE machine = $1::text AND id = $2::text AND name = $3::text AND handled_at IS NULL AND ` + sqlWritten

	// sqlDisarm removes the deadlines of the instance, before a rearm.
	sqlDisarm = `DELETE FROM {schema}.fsmgen_deadlines
WHERE machine = $1::text AND id = $2::text AND ` + sqlWritten

	// sqlArm writes the deadlines of a rearm, not leased: $3 names, $4 times, $5 states,
	// $6 events, $7 levels.
	sqlArm = `INSERT INTO {schema}.fsmgen_deadlines (machine, id, name, at, state, event, level)
SELECT $1::text, $2::text, d.name, d.at, d.state, d.event, d.level
FROM unnest($3::text[], $4::timestamptz[], $5::text[], $6::text[], $7::int[]) AS d(name, at, state, event, level)
WHERE ` + sqlWritten

	// sqlClearCounters removes the counters of the instance, which every commit replaces.
	sqlClearCounters = `DELETE FROM {schema}.fsmgen_counters
WHERE machine = $1::text AND id = $2::text AND ` + sqlWritten

	// sqlChangeCounters writes the counters a commit changed (fsmrt.Commit.CountersDelta):
	// $3 names, $4 states, $5 values, a zero value deleting its row.
	sqlChangeCounters = `WITH c AS (
	SELECT c.name, c.state, c.value FROM unnest($3::text[], $4::text[], $5::bigint[]) AS c(name, state, value)
	WHERE ` + sqlWritten + `
), gone AS (
	DELETE FROM {schema}.fsmgen_counters t USING c
	WHERE t.machine = $1::text AND t.id = $2::text AND t.name = c.name AND t.state = c.state AND c.value = 0
)
INSERT INTO {schema}.fsmgen_counters (machine, id, name, state, value)
SELECT $1::text, $2::text, c.name, c.state, c.value FROM c WHERE c.value <> 0
ON CONFLICT (machine, id, name, state) DO UPDATE SET value = excluded.value`

	// sqlSetCounters writes the counters of the commit: $3 names, $4 states, $5 values.
	sqlSetCounters = `INSERT INTO {schema}.fsmgen_counters (machine, id, name, state, value)
SELECT $1::text, $2::text, c.name, c.state, c.value
FROM unnest($3::text[], $4::text[], $5::bigint[]) AS c(name, state, value)
WHERE ` + sqlWritten
)

// Claims and completions. Each runs in a READ COMMITTED transaction of its own, begun and
// committed in the same round trip as its statement (sqlBeginReadCommitted ... sqlEnd),
// whatever isolation the database defaults to: FOR UPDATE SKIP LOCKED then skips the rows
// other claimers hold, and rechecks those they changed, instead of failing to serialize.
const (
	sqlBeginReadCommitted = `BEGIN ISOLATION LEVEL READ COMMITTED`

	// sqlClaimEffects leases to owner $2 until $4 at most $5 effects of machine $1 not
	// delivered and not leased at $3, oldest commit first. The materialized CTE picks and
	// locks them once; the rows other claimers hold are skipped.
	sqlClaimEffects = `WITH picked AS MATERIALIZED (
	SELECT machine, id, seq, idx FROM {schema}.fsmgen_effects
	WHERE machine = $1::text AND delivered_at IS NULL
		AND (leased_until IS NULL OR leased_until < $3::timestamptz)
	ORDER BY committed_at, id COLLATE "C", seq, idx
	LIMIT $5::bigint
	FOR UPDATE SKIP LOCKED
), claimed AS (
	UPDATE {schema}.fsmgen_effects e
	SET owner = $2::text, leased_until = $4::timestamptz, attempts = e.attempts + 1
	FROM picked p
	WHERE e.machine = p.machine AND e.id = p.id AND e.seq = p.seq AND e.idx = p.idx
	RETURNING e.committed_at, e.id, e.seq, e.idx, e.name, e.idem_key, e.data, e.attempts
)
SELECT id, seq, idx, name, idem_key, data, attempts FROM claimed
ORDER BY committed_at, id COLLATE "C", seq, idx`

	// sqlCompleteEffects records delivered the effects named by the arrays $1 machines,
	// $2 ids, $3 seqs, $4 indexes, each at its time of $5, unless they already are.
	sqlCompleteEffects = `UPDATE {schema}.fsmgen_effects e SET delivered_at = d.at
FROM unnest($1::text[], $2::text[], $3::bigint[], $4::int[], $5::timestamptz[]) AS d(machine, id, seq, idx, at)
WHERE e.machine = d.machine AND e.id = d.id AND e.seq = d.seq AND e.idx = d.idx
	AND e.delivered_at IS NULL`

	// sqlClaimDeadlines leases to owner $2 until $4 at most $5 deadlines of machine $1 due
	// at $3, not handled and not leased then, earliest first, as sqlClaimEffects does.
	sqlClaimDeadlines = `WITH picked AS MATERIALIZED (
	SELECT machine, id, name FROM {schema}.fsmgen_deadlines
	WHERE machine = $1::text AND at <= $3::timestamptz AND handled_at IS NULL
		AND (leased_until IS NULL OR leased_until < $3::timestamptz)
	ORDER BY at, id COLLATE "C", name COLLATE "C"
	LIMIT $5::bigint
	FOR UPDATE SKIP LOCKED
), claimed AS (
	UPDATE {schema}.fsmgen_deadlines d
	SET owner = $2::text, leased_until = $4::timestamptz
	FROM picked p
	WHERE d.machine = p.machine AND d.id = p.id AND d.name = p.name
	RETURNING d.id, d.name, d.at, d.state, d.event, d.level
)
SELECT id, name, at, state, event, level FROM claimed
ORDER BY at, id COLLATE "C", name COLLATE "C"`
)

// Reads. Entries are read as the columns scanEntry scans.
const (
	// sqlBeginSnapshot starts the transaction in which Load reads an instance and its
	// entries at one point in time.
	sqlBeginSnapshot = `BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY`
	// sqlEnd ends it.
	sqlEnd = `COMMIT`

	// sqlInstance reads an instance.
	sqlInstance = `SELECT version, spec, state, snapshot, snapshot_seq
FROM {schema}.fsmgen_instances WHERE machine = $1 AND id = $2`

	// sqlEntriesAfterSnapshot reads the entries of an instance after its snapshot.
	sqlEntriesAfterSnapshot = `SELECT e.seq, e.kind, e.event, e.from_state, e.to_state, e.at,
	COALESCE(e.idem_key, ''), e.data
FROM {schema}.fsmgen_entries e
JOIN {schema}.fsmgen_instances i ON i.machine = e.machine AND i.id = e.id
WHERE e.machine = $1 AND e.id = $2 AND e.seq > i.snapshot_seq
ORDER BY e.seq`

	// sqlLog reads the entries of an instance after seq $3.
	sqlLog = `SELECT seq, kind, event, from_state, to_state, at, COALESCE(idem_key, ''), data
FROM {schema}.fsmgen_entries
WHERE machine = $1 AND id = $2 AND seq > $3
ORDER BY seq`

	// sqlFindKey reads the entry of an instance that used idempotency key $3.
	sqlFindKey = `SELECT seq, kind, event, from_state, to_state, at, COALESCE(idem_key, ''), data
FROM {schema}.fsmgen_entries
WHERE machine = $1 AND id = $2 AND idem_key = $3`
)

// Find: one statement, sqlFindSelect followed by the parts of the conditions the query
// sets, in this order, then sqlFindOrder and, with a limit, sqlFindLimit. Each "$?" is a
// parameter, numbered in the order they come (see findStatement). Every condition is
// backed by an index: the state by fsmgen_instances_state, the deadline by
// fsmgen_deadlines_name, the counter by fsmgen_counters_value. Ids are compared and
// ordered bytewise (COLLATE "C"), as the other stores order them.
const (
	sqlFindSelect = `SELECT i.id, i.state, i.version, i.last_at
FROM {schema}.fsmgen_instances i
WHERE i.machine = $?::text`
	// sqlFindStates: in one of the states of the array.
	sqlFindStates = `
	AND i.state = ANY ($?::text[])`
	// sqlFindDeadline: a deadline of the name, handled or not, due at or before the time.
	sqlFindDeadline = `
	AND EXISTS (SELECT FROM {schema}.fsmgen_deadlines d
		WHERE d.machine = i.machine AND d.id = i.id AND d.name = $?::text AND d.at <= $?::timestamptz)`
	// sqlFindCounter: a counter of the name, in any state, at least the value.
	sqlFindCounter = `
	AND EXISTS (SELECT FROM {schema}.fsmgen_counters c
		WHERE c.machine = i.machine AND c.id = i.id AND c.name = $?::text AND c.value >= $?::bigint)`
	// sqlFindAfter: ids after the one given.
	sqlFindAfter = `
	AND i.id COLLATE "C" > $?::text`
	sqlFindOrder = `
ORDER BY i.id COLLATE "C"`
	sqlFindLimit = `
LIMIT $?::bigint`
)

// statements are the SQL statements of a store, on the tables of its schema.
type statements struct {
	commitFirst, commitNext, stored  string
	insertEffects, handleFired       string
	disarm, arm                      string
	clearCounters, setCounters       string
	changeCounters                   string
	instance, entriesAfterSnapshot   string
	log, findKey                     string
	claimEffects, completeEffects    string
	claimDeadlines                   string
	pendingEffects, pendingDeadlines string
	notify, nextWork                 string
	// wakePrefix starts the payload of the store's NOTIFYs (wake.go).
	wakePrefix string
	// find holds Find's statement for each set of conditions (see findConditions).
	find [findVariants]string
}

// newStatements returns the statements on the tables of schema.
func newStatements(schema string) statements {
	q := qualifier(schema)
	st := statements{
		commitFirst:          q(sqlCommitFirst),
		commitNext:           q(sqlCommitNext),
		stored:               q(sqlStored),
		insertEffects:        q(sqlInsertEffects),
		handleFired:          q(sqlHandleFired),
		disarm:               q(sqlDisarm),
		arm:                  q(sqlArm),
		clearCounters:        q(sqlClearCounters),
		setCounters:          q(sqlSetCounters),
		changeCounters:       q(sqlChangeCounters),
		instance:             q(sqlInstance),
		entriesAfterSnapshot: q(sqlEntriesAfterSnapshot),
		log:                  q(sqlLog),
		findKey:              q(sqlFindKey),
		claimEffects:         q(sqlClaimEffects),
		completeEffects:      q(sqlCompleteEffects),
		claimDeadlines:       q(sqlClaimDeadlines),
		pendingEffects:       q(sqlPendingEffects),
		pendingDeadlines:     q(sqlPendingDeadlines),
		notify:               q(sqlNotify),
		nextWork:             q(sqlNextWork),
		wakePrefix:           pgx.Identifier{schema}.Sanitize() + ".",
	}
	for set := range findConditions(findVariants) {
		st.find[set] = q(findStatement(set))
	}
	return st
}

// qualifier returns the function that puts the quoted name of schema in place of
// "{schema}" in SQL.
func qualifier(schema string) func(sql string) string {
	r := strings.NewReplacer("{schema}", pgx.Identifier{schema}.Sanitize())
	return r.Replace
}
