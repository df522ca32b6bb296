package evolve_test

import (
	"context"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	v5 "github.com/fsmgen/fsmgen/examples/evolve/v5"
	"github.com/fsmgen/fsmgen/fsmrt"
	"github.com/fsmgen/fsmgen/store/postgres"
	"github.com/fsmgen/fsmgen/store/postgres/pgtest"
	"github.com/fsmgen/fsmgen/store/sqlite"
)

// specOf returns the fingerprint ticket id is stored under.
func specOf(t *testing.T, store fsmrt.Store, id string) string {
	t.Helper()
	l, err := store.Load(context.Background(), "ticket.Ticket", id)
	if err != nil {
		t.Fatal(err)
	}
	return l.Spec
}

// testMigrate: the tickets of versions 1 to 4 moved to version 5 in batches: a dry run
// first (nothing changes, the report says what would move, by older spec and state), then
// the run, then a second run that finds nothing left to move.
func testMigrate(t *testing.T, store fsmrt.Store) {
	ctx := context.Background()
	wants := storeChain(t, store)
	spec5 := v5.NewTicket(v5.TicketNopHooks{}).Snapshot().Spec
	dry, err := v5.MigrateTickets(ctx, store, v5.TicketNopHooks{}, fsmrt.MigrateOptions{Batch: 3, DryRun: true})
	if err != nil || dry.Checked != len(wants) || dry.Moved != len(wants) || dry.Current != 0 || len(dry.Refused) != 0 || len(dry.Before) != 4 {
		t.Fatalf("dry run: %+v, %v", dry, err)
	}
	for id := range wants {
		if specOf(t, store, id) == spec5 {
			t.Fatalf("the dry run moved %s", id)
		}
	}
	r, err := v5.MigrateTickets(ctx, store, v5.TicketNopHooks{}, fsmrt.MigrateOptions{Batch: 3})
	if err != nil || r.Moved != len(wants) || len(r.Refused) != 0 {
		t.Fatalf("run: %+v, %v", r, err)
	}
	if r.After[v5.StateWaiting.String()] != 3 || r.Before[v1Spec()]["triage"] != 1 {
		t.Errorf("report: before %v, after %v", r.Before, r.After)
	}
	for id, w := range wants {
		if specOf(t, store, id) != spec5 {
			t.Errorf("%s not under version 5", id)
		}
		m, err := v5.ReplayTicket(ctx, store, id, v5.TicketNopHooks{})
		if err != nil || m.Migrated() != "" || m.State() != w.state || m.CountHandovers() != w.handovers {
			t.Errorf("%s after the run: %v, %v", id, m, err)
		}
	}
	again, err := v5.MigrateTickets(ctx, store, v5.TicketNopHooks{}, fsmrt.MigrateOptions{})
	if err != nil || again.Moved != 0 || again.Current != len(wants) {
		t.Errorf("second run: %+v, %v", again, err)
	}
}

func v1Spec() string { s, _ := fingerprints(); return s }

// killAfter is when run round of the killed migration is killed: at a random point of its
// first 150 ms (it checks a ticket every 20 ms or so), for the first 20 runs; never after.
func killAfter(rng *rand.Rand, round int) time.Duration {
	if round >= 20 {
		return time.Hour
	}
	return time.Duration(rng.IntN(150)) * time.Millisecond
}

func TestMigrateMemory(t *testing.T) { testMigrate(t, fsmrt.NewMemoryStore()) }

func TestMigrateSQLite(t *testing.T) {
	store, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "tickets.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	testMigrate(t, store)
}

// TestMigratePostgres: the same on PostgreSQL; then four runs at once over a fresh
// database move every ticket exactly once between them.
func TestMigratePostgres(t *testing.T) {
	ctx := context.Background()
	srv := pgtest.New(t, pgtest.Options{})
	dsn, err := srv.CreateDatabase(ctx, "migrate")
	if err != nil {
		t.Fatal(err)
	}
	store, err := postgres.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	t.Run("batches", func(t *testing.T) { testMigrate(t, store) })

	dsn2, err := srv.CreateDatabase(ctx, "migrate2")
	if err != nil {
		t.Fatal(err)
	}
	store2, err := postgres.Open(ctx, dsn2)
	if err != nil {
		t.Fatal(err)
	}
	defer store2.Close()
	wants := storeChain(t, store2)
	var wg sync.WaitGroup
	reports := make([]fsmrt.MigrateReport, 4)
	errs := make([]error, 4)
	for i := range reports {
		wg.Add(1)
		go func() {
			defer wg.Done()
			st, err := postgres.Open(ctx, dsn2)
			if err != nil {
				errs[i] = err
				return
			}
			defer st.Close()
			reports[i], errs[i] = v5.MigrateTickets(ctx, st, v5.TicketNopHooks{}, fsmrt.MigrateOptions{Batch: 2})
		}()
	}
	wg.Wait()
	moved := 0
	for i, r := range reports {
		if errs[i] != nil || len(r.Refused) != 0 || r.Moved+r.Current != len(wants) {
			t.Errorf("run %d: %+v, %v", i, r, errs[i])
		}
		moved += r.Moved
	}
	if moved != len(wants) {
		t.Errorf("%d moves between the runs for %d tickets", moved, len(wants))
	}
}

// TestMigrateKilled: the migrate program, killed at random points, leaves every ticket
// under exactly one version (5, or the one it was stored under), and run again until it
// ends, it moves them all.
func TestMigrateKilled(t *testing.T) {
	ctx := context.Background()
	db := filepath.Join(t.TempDir(), "tickets.db")
	store, err := sqlite.Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	wants := storeChain(t, store)
	before := map[string]string{}
	for id := range wants {
		before[id] = specOf(t, store, id)
	}
	store.Close()
	bin := filepath.Join(t.TempDir(), "migrate")
	if out, err := exec.Command("go", "build", "-o", bin, "./migrate").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	spec5 := v5.NewTicket(v5.TicketNopHooks{}).Snapshot().Spec
	rng := rand.New(rand.NewPCG(7, 7))
	kills := 0
	for round := 0; ; round++ {
		if round > 40 {
			t.Fatal("the migration did not finish in 40 runs")
		}
		cmd := exec.Command(bin, "-db", db, "-batch", "1", "-pause", "20ms")
		var out strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		var err error
		select {
		case err = <-done:
		case <-time.After(killAfter(rng, round)):
			cmd.Process.Kill()
			<-done
			kills++
			err = nil
		}
		if err != nil {
			t.Fatalf("run %d: %v\n%s", round, err, out.String())
		}
		st, err := sqlite.Open(ctx, db)
		if err != nil {
			t.Fatal(err)
		}
		left := 0
		for id := range wants {
			switch spec := specOf(t, st, id); spec {
			case spec5:
			case before[id]:
				left++
			default:
				t.Fatalf("after run %d, %s is under %s, neither its own spec nor version 5's", round, id, spec)
			}
		}
		st.Close()
		if left == 0 && strings.Contains(out.String(), "checked") {
			t.Logf("done after %d runs, %d of them killed", round+1, kills)
			break
		}
	}
	if kills == 0 {
		t.Error("no run was killed: the test proves nothing")
	}
}

// TestMigrateCommand: fsmgen migrate, the command of the SQLite store's fsmgen, run in
// this module on an SQLite file with tickets of versions 1 to 4: a dry run says what
// would move and moves nothing, the run moves them all, a second run finds nothing left.
func TestMigrateCommand(t *testing.T) {
	ctx := context.Background()
	db := filepath.Join(t.TempDir(), "tickets.db")
	store, err := sqlite.Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	wants := storeChain(t, store)
	store.Close()
	open := func() (fsmrt.Store, func()) {
		st, err := sqlite.Open(ctx, db)
		if err != nil {
			t.Fatal(err)
		}
		return st, func() { st.Close() }
	}
	migrateCommand(t, fsmgenWith(t, "store/sqlite"), db, wants, open)
}

// TestMigrateCommandPostgres: the same with the PostgreSQL store's fsmgen.
func TestMigrateCommandPostgres(t *testing.T) {
	ctx := context.Background()
	srv := pgtest.New(t, pgtest.Options{})
	dsn, err := srv.CreateDatabase(ctx, "migratecmd")
	if err != nil {
		t.Fatal(err)
	}
	store, err := postgres.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	wants := storeChain(t, store)
	migrateCommand(t, fsmgenWith(t, "store/postgres"), dsn, wants, func() (fsmrt.Store, func()) { return store, func() {} })
}

// migrateCommand runs bin's fsmgen migrate on the store dsn names, holding wants.
func migrateCommand(t *testing.T, bin, db string, wants map[string]chainWant, open func() (fsmrt.Store, func())) {
	t.Helper()
	run := func(args ...string) string {
		t.Helper()
		out, err := exec.Command(bin, append([]string{"migrate", "--store", db}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("fsmgen migrate %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	out := run("--dry-run", "v5/ticket.fsm.yaml")
	if !strings.Contains(out, "ticket.Ticket: checked 10, already current 0, would move 10, refused 0") || !strings.Contains(out, "triage 1") || !strings.Contains(out, "after: ") {
		t.Fatalf("dry run:\n%s", out)
	}
	spec5 := v5.NewTicket(v5.TicketNopHooks{}).Snapshot().Spec
	st, done := open()
	for id := range wants {
		if specOf(t, st, id) == spec5 {
			t.Fatalf("the dry run moved %s", id)
		}
	}
	done()
	if out := run("v5/ticket.fsm.yaml"); !strings.Contains(out, "moved 10, refused 0") {
		t.Fatalf("run:\n%s", out)
	}
	if out := run("v5/ticket.fsm.yaml"); !strings.Contains(out, "already current 10, moved 0") {
		t.Fatalf("second run:\n%s", out)
	}
	st, done = open()
	defer done()
	for id := range wants {
		if specOf(t, st, id) != spec5 {
			t.Errorf("%s not under version 5", id)
		}
	}
	if left, _ := filepath.Glob("fsmgen_migrate_*"); len(left) > 0 {
		t.Errorf("the command left %v behind", left)
	}
}

// TestMigrateCommandKilled: fsmgen migrate, killed (SIGKILL, it and what it started) at
// random points, leaves every ticket under exactly one version, and run again, finishes.
func TestMigrateCommandKilled(t *testing.T) {
	ctx := context.Background()
	db := filepath.Join(t.TempDir(), "tickets.db")
	store, err := sqlite.Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	wants := storeChain(t, store)
	before := map[string]string{}
	for id := range wants {
		before[id] = specOf(t, store, id)
	}
	store.Close()
	bin := fsmgenWith(t, "store/sqlite")
	spec5 := v5.NewTicket(v5.TicketNopHooks{}).Snapshot().Spec
	rng := rand.New(rand.NewPCG(11, 11))
	kills := 0
	for round := 0; round < 8; round++ {
		cmd := exec.Command(bin, "migrate", "--store", db, "--batch", "1", "v5/ticket.fsm.yaml")
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case <-done:
		case <-time.After(time.Duration(500+rng.IntN(2500)) * time.Millisecond):
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-done
			kills++
		}
		st, err := sqlite.Open(ctx, db)
		if err != nil {
			t.Fatal(err)
		}
		for id := range wants {
			if spec := specOf(t, st, id); spec != spec5 && spec != before[id] {
				t.Fatalf("after run %d, %s is under %s", round, id, spec)
			}
		}
		st.Close()
	}
	out, err := exec.Command(bin, "migrate", "--store", db, "v5/ticket.fsm.yaml").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "refused 0") {
		t.Fatalf("the last run: %v\n%s", err, out)
	}
	st, err := sqlite.Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for id := range wants {
		if specOf(t, st, id) != spec5 {
			t.Errorf("%s not under version 5 after the last run", id)
		}
	}
	left, _ := filepath.Glob("fsmgen_migrate_*")
	for _, d := range left {
		os.RemoveAll(d) // a killed run cannot remove what it generated
	}
	t.Logf("%d of 8 runs killed; %d directories of killed runs removed", kills, len(left))
}
