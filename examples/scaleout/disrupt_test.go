package scaleout

import (
	"context"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/fsmgen/fsmgen/store/postgres/pgtest"
)

// TestScaleOutDisrupted is the scale-out proof on PostgreSQL with the server disrupted
// under the workers besides the kills (disrupt.go): restarted (fast, then as a crash,
// alternately), every worker connecting again, and the connections of the workers that
// run a statement or are in a transaction terminated; and the workers connect through a
// CutProxy that loses the connection at one COMMIT in 40, before the server gets it or
// after it committed, the answer lost. Check then finds nothing lost or doubled. A short run by
// default; SCALEOUT_FULL=1 (make test-long) runs 4 workers, 1,000 orders and 20,000
// events with 3 restarts and 30 rounds of terminations.
func TestScaleOutDisrupted(t *testing.T) {
	sc := scenario{workers: 2, instances: 100, events: 2000, kills: 2, killEvery: 2 * time.Second, rate: 150}
	restarts, terminations, every := 1, 6, time.Second
	if full, _ := strconv.ParseBool(os.Getenv("SCALEOUT_FULL")); full {
		sc = scenario{workers: 4, instances: 1000, events: 20000, kills: 6, killEvery: 3 * time.Second, rate: 400}
		restarts, terminations, every = 3, 30, 500*time.Millisecond
	}
	// A restart as a crash loses the commits whose write-ahead log was still in the
	// server's memory when synchronous_commit is off (as pgtest runs by default): a worker
	// was told they were committed. The server runs with it on (and fsync still off: a
	// crash of the server, not of the machine, loses nothing the kernel was given).
	srv := pgtest.New(t, pgtest.Options{MaxConnections: 200, Settings: map[string]string{"synchronous_commit": "on"}})
	ctx := context.Background()
	dsn, err := srv.CreateDatabase(ctx, "orders")
	if err != nil {
		t.Fatal(err)
	}
	proxy, err := StartCutProxy(dsn, 40)
	if err != nil {
		t.Fatal(err)
	}
	defer proxy.Close()
	n := 0
	res := runDisrupted(t, dsn, sc, func(r *Run) {
		r.WorkerWhere = proxy.DSN(dsn)
		r.Restarts, r.Terminations, r.DisruptEvery = restarts, terminations, every
		r.Restart = func(ctx context.Context) error {
			n++
			return srv.Restart(ctx, n%2 == 0)
		}
	})
	t.Logf("disrupted: %+v", res.Disrupted)
	before, after := proxy.Cuts()
	t.Logf("connections lost mid-commit by the proxy: %d before the COMMIT reached the server, %d after it committed", before, after)
	if before == 0 || after == 0 {
		t.Errorf("the proxy cut %d COMMITs before the server got them and %d after: the run proves nothing of one of them", before, after)
	}
	failures := 0
	for _, s := range res.Stats {
		failures += s.StoreFailures
	}
	t.Logf("firings failed in the store and fired again (last processes): %d", failures)
}

// runDisrupted runs sc on PostgreSQL with the disruptions set by disrupt, and checks it as
// runScenario does.
func runDisrupted(t *testing.T, dsn string, sc scenario, disrupt func(r *Run)) Result {
	ctx := context.Background()
	r := &Run{
		Kind: Postgres, Where: dsn,
		Plan:  Plan{Seed: 2027, Instances: sc.instances, Events: sc.events, Workers: sc.workers},
		Speed: 60, Kills: sc.kills, KillEvery: sc.killEvery, Seed: uint64(sc.workers) + 100, Rate: sc.rate,
		Flaky: true,
		Logf:  t.Logf,
	}
	disrupt(r)
	db, err := r.Start(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	res, err := r.Workers(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("events in %v (%d entries), drained in %v, %d kills", res.Elapsed.Round(time.Millisecond), res.Entries,
		res.Drained.Round(time.Millisecond), res.Kills)
	checkRun(ctx, t, db, r, res)
	return res
}
