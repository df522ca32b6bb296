package scaleout

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/fsmgen/fsmgen/store/postgres/pgtest"
)

// A copy of the test binary started with the role variable set is a worker or a floor
// process of a run (see Child), or a scheduler of the timer-clock proof (timersMain).
func TestMain(m *testing.M) {
	if os.Getenv(roleEnv) == roleTimers {
		os.Exit(timersMain(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
	}
	if code, ok := Child(); ok {
		os.Exit(code)
	}
	os.Exit(m.Run())
}

// scenario is the size of a run of the proof.
type scenario struct {
	workers, instances, events int
	kills                      int
	killEvery                  time.Duration
	rate                       float64 // events a second per worker; 0: unpaced
}

// scenarios returns the runs of TestScaleOut: a short one by default, the acceptance bar
// (1, 4 and 8 workers; 1,000 orders; 50,000 events) with SCALEOUT_FULL=1.
func scenarios() []scenario {
	if full, _ := strconv.ParseBool(os.Getenv("SCALEOUT_FULL")); full {
		return []scenario{
			{workers: 1, instances: 1000, events: 50000, kills: 8, killEvery: 1200 * time.Millisecond},
			{workers: 4, instances: 1000, events: 50000, kills: 16, killEvery: 700 * time.Millisecond},
			{workers: 8, instances: 1000, events: 50000, kills: 24, killEvery: 450 * time.Millisecond},
		}
	}
	// Paced, so that its timers fall due during the events and the kills land in them.
	return []scenario{{workers: 2, instances: 100, events: 2000, kills: 4, killEvery: time.Second, rate: 200}}
}

// TestScaleOut is the scale-out proof: worker processes fire the plan's events at one
// store, duplicates, key conflicts and contended events among them, while timers fall due
// and workers are killed with SIGKILL and started again; once the timers and the outbox
// have drained, Check verifies every invariant. On SQLite and on a PostgreSQL server the
// test starts (which runs without fsync).
func TestScaleOut(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) {
		t.Run("same-work steps", func(t *testing.T) {
			dir := t.TempDir()
			checkSameWorkSteps(context.Background(), t, SQLite, filepath.Join(dir, "steps.db"), filepath.Join(dir, "floor.db"))
		})
		for _, sc := range scenarios() {
			t.Run(fmt.Sprintf("N=%d", sc.workers), func(t *testing.T) {
				dir := t.TempDir()
				runScenario(t, SQLite, filepath.Join(dir, "orders.db"), filepath.Join(dir, "floor.db"), sc)
			})
		}
	})
	t.Run("postgres", func(t *testing.T) {
		srv := pgtest.New(t, pgtest.Options{MaxConnections: 200})
		t.Run("same-work steps", func(t *testing.T) {
			ctx := context.Background()
			where, err := srv.CreateDatabase(ctx, "steps")
			if err != nil {
				t.Fatal(err)
			}
			floor, err := srv.CreateDatabase(ctx, "steps_floor")
			if err != nil {
				t.Fatal(err)
			}
			checkSameWorkSteps(ctx, t, Postgres, where, floor)
		})
		for _, sc := range scenarios() {
			t.Run(fmt.Sprintf("N=%d", sc.workers), func(t *testing.T) {
				dsn, err := srv.CreateDatabase(context.Background(), fmt.Sprintf("orders_%d", sc.workers))
				if err != nil {
					t.Fatal(err)
				}
				floor, err := srv.CreateDatabase(context.Background(), fmt.Sprintf("floor_%d", sc.workers))
				if err != nil {
					t.Fatal(err)
				}
				runScenario(t, Postgres, dsn, floor, sc)
			})
		}
	})
}

// runScenario runs sc on the database where of kind and checks it, then writes its log
// again with the same-work floor on the empty database floor, which must then hold what
// the workers wrote (checkSameWork).
func runScenario(t *testing.T, kind, where, floor string, sc scenario) {
	ctx := context.Background()
	r := &Run{
		Kind: kind, Where: where,
		Plan:  Plan{Seed: 2026, Instances: sc.instances, Events: sc.events, Workers: sc.workers},
		Speed: 60, Kills: sc.kills, KillEvery: sc.killEvery, Seed: uint64(sc.workers), Rate: sc.rate,
		Flaky: true,
		Logf:  t.Logf,
	}
	db, err := r.Start(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	res, err := r.Workers(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("events in %v (%d entries, %.0f/s), drained in %v, %d kills, worker CPU %v",
		res.Elapsed.Round(time.Millisecond), res.Entries, float64(res.Entries)/res.Elapsed.Seconds(),
		res.Drained.Round(time.Millisecond), res.Kills, res.CPU.Round(time.Millisecond))
	checkRun(ctx, t, db, r, res)
	checkSameWork(ctx, t, r, db, floor)
}

// checkRun checks what a run of r's workers did and left in db: each worker's account
// (checkStats) and the store against the plan (Check), which must find no problem and
// have seen timers fire and effects delivered.
func checkRun(ctx context.Context, t *testing.T, db *DB, r *Run, res Result) {
	t.Helper()
	checkStats(t, r.Plan, res.Stats)
	rep, err := Check(ctx, db, r.Plan, r.Flaky)
	if err != nil {
		t.Fatal(err)
	}
	t.Log(rep)
	for _, p := range rep.Problems {
		t.Error(p)
	}
	if rep.Dropped > 0 {
		t.Errorf("and %d more problems", rep.Dropped)
	}
	if rep.Stays == 0 || rep.Effects == 0 {
		t.Errorf("no timer fired or no effect delivered: the run proves nothing of them")
	}
}

// checkStats checks what the last process of each worker says it did: every event of
// its list fired, answered by its key or, for a key conflict, refused.
func checkStats(t *testing.T, p Plan, stats []Stats) {
	t.Helper()
	for w, s := range stats {
		items := p.ForWorker(w)
		conflicts := 0
		for _, it := range items {
			if it.Kind == KeyConflict {
				conflicts++
			}
		}
		t.Logf("worker %d: %+v", w, s)
		if s.Applied+s.Answered+s.Refused != len(items) || s.Refused != conflicts {
			t.Errorf("worker %d: %d applied, %d answered, %d refused; its list has %d events, %d key conflicts",
				w, s.Applied, s.Answered, s.Refused, len(items), conflicts)
		}
	}
}
