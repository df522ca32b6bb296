package scaleout

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"
)

// Disruptions of a run on PostgreSQL, besides the kills: the server restarted under the
// workers (every connection lost, the server away for a while, each worker connecting
// again: its pool, and its store's listening connection), and the connections of workers
// terminated by the server (pg_terminate_backend) while they run a statement or are in a
// transaction: a commit whose connection is lost between its writes and its COMMIT, or
// during the COMMIT, whose outcome the worker cannot know (postgres.ErrCommitUnknown).
// The worker fires the event again with its key, the order loaded afresh (storeRetries):
// the proof's checks then find each event applied once, every timer fired once and every
// effect delivered.

// sqlTerminate terminates the connections to the run's database of the workers that are
// in a transaction (running a statement of it, or between two: a commit between its
// writes and its COMMIT), and, when $1, the listening connections of their stores, and
// counts them: all, those in a transaction, those whose transaction had sent its writes
// and not its COMMIT yet (idle in transaction) or was committing, and the listening ones.
// The victims are picked first (MATERIALIZED): inlined, the planner may call
// pg_terminate_backend before the other conditions, the proof's own connection included.
const sqlTerminate = `WITH victims AS MATERIALIZED (
	SELECT pid, xact_start IS NOT NULL AS in_tx,
		state = 'idle in transaction' OR (state = 'active' AND query = 'commit') AS committing,
		query LIKE 'LISTEN %' AS listening
	FROM pg_stat_activity
	WHERE datname = current_database() AND pid <> pg_backend_pid() AND backend_type = 'client backend'
		AND (xact_start IS NOT NULL AND state IN ('active', 'idle in transaction')
			OR $1::bool AND state = 'idle' AND query LIKE 'LISTEN %')
), killed AS (
	SELECT in_tx, committing, listening FROM victims WHERE pg_terminate_backend(pid)
)
SELECT count(*), count(*) FILTER (WHERE in_tx), count(*) FILTER (WHERE committing),
	count(*) FILTER (WHERE listening)
FROM killed`

// terminateTries is how many times a round of terminations looks for a worker in a
// transaction before it gives up.
const terminateTries = 500

// Disrupted counts the disruptions of a run.
type Disrupted struct {
	Restarts int
	// Terminated connections: all of them, those in a transaction, those committing
	// (their writes sent and not their COMMIT, or their COMMIT running), and the
	// listening connections of the workers' stores.
	Terminated, InTransaction, Committing, Listening int
}

// nextDisruption returns the channel of the next disruption, nil when none is left.
func (r *Run) nextDisruption(rng *rand.Rand, rounds int) <-chan time.Time {
	if r.Kind != Postgres || rounds >= r.Restarts+r.Terminations {
		return nil
	}
	return time.After(time.Duration((0.3 + 1.4*rng.Float64()) * float64(r.DisruptEvery)))
}

// disrupt makes disruption number round: a restart or a round of terminations, the
// restarts spread among them.
func (r *Run) disrupt(ctx context.Context, db *DB, rng *rand.Rand, d *Disrupted, round int) error {
	left := r.Restarts + r.Terminations - round
	if restartsLeft := r.Restarts - d.Restarts; restartsLeft > 0 && rng.IntN(left) < restartsLeft {
		start := time.Now()
		if err := r.Restart(ctx); err != nil {
			return err
		}
		d.Restarts++
		db.pool.Reset() // the proof's own connections were lost too
		r.Logf("restarted the server (%v)", time.Since(start).Round(time.Millisecond))
		return nil
	}
	var all, inTx, committing, listening int
	for try := 0; try < terminateTries && inTx == 0; try++ {
		var a, t, c, l int
		err := db.pool.QueryRow(ctx, sqlTerminate, try == 0).Scan(&a, &t, &c, &l)
		if err != nil {
			// The proof's connection may be one a restart broke: the next round has another.
			r.Logf("terminate: %v", err)
			return nil
		}
		all, inTx, committing, listening = all+a, inTx+t, committing+c, listening+l
	}
	d.Terminated, d.InTransaction, d.Committing, d.Listening = d.Terminated+all, d.InTransaction+inTx, d.Committing+committing, d.Listening+listening
	r.Logf("terminated %d connections of the workers: %d in a transaction, %d committing, %d listening", all, inTx, committing, listening)
	return nil
}

// checkDisrupted returns an error when a run meant to disrupt did not: no restart, or
// no connection terminated in a transaction.
func (r *Run) checkDisrupted(d Disrupted) error {
	if r.Kind != Postgres {
		return nil
	}
	if d.Restarts < r.Restarts {
		return fmt.Errorf("%d restarts of the %d asked for", d.Restarts, r.Restarts)
	}
	if r.Terminations > 0 && d.InTransaction == 0 {
		return fmt.Errorf("%d connections terminated, none in a transaction", d.Terminated)
	}
	return nil
}
