// Command bench measures the scale-out proof's throughput: for each store (SQLite, and a
// PostgreSQL server it starts) and each number of worker processes N, it runs the plan's
// events with N workers (no kills, no flaky deliveries), checks the run as the test does,
// and writes the same log again with N floor processes, by hand, on fresh databases of the
// same server, twice: the same-work floor (the workers' whole commits, made again by
// scaleout.Redo, written by scaleout.SameWork) and the two-statement floor (one UPDATE ...
// WHERE version = $n and one INSERT of the entry). It writes the transitions a second of
// all three, and where the processor time went, to a Markdown file, RESULTS.md by default,
// keeping what follows the notes marker of the file as it was. make bench-durable runs it
// with -statements and copies its tables into BENCHMARKS.md.
//
//	go run ./cmd/bench                      # N = 1, 4, 8; 1,000 orders; 50,000 events
//	go run ./cmd/bench -n 1 -events 5000 -o -
//	go run ./cmd/bench -profile prof        # a CPU profile of each store's first worker
//	go run ./cmd/bench -statements          # and the PostgreSQL server's time by statement
package main

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/fsmgen/fsmgen/examples/scaleout"
	"github.com/fsmgen/fsmgen/store/postgres/pgtest"
)

func main() {
	if code, ok := scaleout.Child(); ok {
		os.Exit(code)
	}
	os.Exit(run(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
}

// config is what the flags set.
type config struct {
	out       string
	workers   []int
	stores    []string
	plan      scaleout.Plan
	profile   string
	split     scaleout.Plan // the plan of the breakdowns
	verbose   bool
	stderr    io.Writer
	started   time.Time
	pgVersion string
	// statements: -statements; statsDSN: the server's database that holds the
	// extension pg_stat_statements, once started with it.
	statements bool
	statsDSN   string
	count      int // -count
}

// run is the command; it returns the exit code.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	c, err := parse(args, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "bench: %v\n", err)
		return 2
	}
	rows, splits, err := c.measure(ctx)
	if err != nil {
		fmt.Fprintf(stderr, "bench: %v\n", err)
		return 1
	}
	if err := c.write(rows, splits, stdout); err != nil {
		fmt.Fprintf(stderr, "bench: %v\n", err)
		return 1
	}
	return 0
}

// parse reads the flags.
func parse(args []string, stderr io.Writer) (*config, error) {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	c := &config{stderr: stderr, started: time.Now()}
	fs.StringVar(&c.out, "o", "RESULTS.md", "the Markdown file to write (- for standard output)")
	n := fs.String("n", "1,4,8", "numbers of worker processes")
	fs.IntVar(&c.count, "count", 1, "how many times each row is measured: the rows of one round after another, each round workers then floors; a row shows the medians")
	stores := fs.String("stores", "sqlite,postgres", "stores to measure")
	fs.IntVar(&c.plan.Instances, "instances", 1000, "orders")
	fs.IntVar(&c.plan.Events, "events", 50000, "events")
	fs.Uint64Var(&c.plan.Seed, "seed", 2026, "seed of the plan")
	fs.StringVar(&c.profile, "profile", "", "directory for CPU profiles of the first process of each run: its first worker, and each floor's first process")
	fs.IntVar(&c.split.Instances, "breakdown-instances", 200, "orders of the breakdown of one process's transitions")
	fs.IntVar(&c.split.Events, "breakdown-events", 10000, "events of the breakdown (its fresh events are fired)")
	fs.BoolVar(&c.verbose, "v", false, "pass on what the processes write on their standard error")
	fs.BoolVar(&c.statements, "statements", false, "with PostgreSQL, load pg_stat_statements and write the server's time by statement, the workers' against the same-work floor's")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if c.count < 1 {
		return nil, fmt.Errorf("-count: %d", c.count)
	}
	if c.profile != "" {
		// The workers write their profiles there: make it, or the first worker fails.
		if err := os.MkdirAll(c.profile, 0o755); err != nil {
			return nil, fmt.Errorf("-profile: %w", err)
		}
	}
	c.split.Seed = c.plan.Seed
	for _, s := range strings.Split(*n, ",") {
		v, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || v < 1 {
			return nil, fmt.Errorf("-n: %q", s)
		}
		c.workers = append(c.workers, v)
	}
	for _, s := range strings.Split(*stores, ",") {
		if s != scaleout.SQLite && s != scaleout.Postgres {
			return nil, fmt.Errorf("-stores: %q (sqlite or postgres)", s)
		}
		c.stores = append(c.stores, s)
	}
	return c, nil
}

// row is one line of the results: a store, a number of workers, the workers' run and
// both floors.
type row struct {
	store   string
	workers int
	run     scaleout.Result
	// same is the same-work floor, floor the two-statement one.
	same, floor scaleout.FloorResult
	report      *scaleout.Report
	// server: the server's execution time by statement (-statements), the workers'
	// database's and the same-work floor's.
	server, floorServer []statementTime
}

// measured is a line of the results: a store and a number of workers, measured -count
// times (its runs, in order).
type measured struct {
	store   string
	workers int
	runs    []row
}

// median returns the median of f over the runs (the mean of the two middle ones for an
// even count).
func (m *measured) median(f func(row) float64) float64 {
	v := make([]float64, len(m.runs))
	for i, r := range m.runs {
		v[i] = f(r)
	}
	slices.Sort(v)
	if len(v)%2 == 1 {
		return v[len(v)/2]
	}
	return (v[len(v)/2-1] + v[len(v)/2]) / 2
}

// sameRatio is a run's ratio of the workers' rate to the same-work floor's.
func sameRatio(r row) float64 { return r.rate() / r.sameRate() }

// floorRatio is a run's ratio of the workers' rate to the two-statement floor's.
func floorRatio(r row) float64 { return r.rate() / r.floorRate() }

// mid returns the run whose same-work ratio is the median (the lower middle one for an
// even count): the run the detailed tables show.
func (m *measured) mid() row {
	runs := slices.Clone(m.runs)
	slices.SortStableFunc(runs, func(a, b row) int { return cmp.Compare(sameRatio(a), sameRatio(b)) })
	return runs[(len(runs)-1)/2]
}

// rate returns the workers' transitions a second.
func (r row) rate() float64 { return float64(r.run.Entries) / r.run.Elapsed.Seconds() }

// floorRate returns the two-statement floor's transitions a second.
func (r row) floorRate() float64 { return floorRate(r.floor) }

// sameRate returns the same-work floor's transitions a second.
func (r row) sameRate() float64 { return floorRate(r.same) }

// floorRate returns a floor's transitions a second.
func floorRate(f scaleout.FloorResult) float64 { return float64(f.Commits) / f.Elapsed.Seconds() }

// workersCPU returns the processor time of the workers' processes during the events.
func (r row) workersCPU() time.Duration {
	var sum time.Duration
	for _, s := range r.run.Stats {
		sum += s.CPU
	}
	return sum
}

// breakdown is a store's Breakdown.
type breakdown struct {
	store string
	scaleout.Breakdown
}

// measure measures every store: its runs with each number of workers, and the
// breakdown of one process's transitions.
func (c *config) measure(ctx context.Context) ([]*measured, []breakdown, error) {
	dir, err := os.MkdirTemp("", "scaleout-bench-")
	if err != nil {
		return nil, nil, err
	}
	defer os.RemoveAll(dir)
	var rows []*measured
	var splits []breakdown
	for _, store := range c.stores {
		var databases func(name string) (string, error)
		var drop func(name string) error // a database measured, to give its disk back
		switch store {
		case scaleout.SQLite:
			databases = func(name string) (string, error) { return filepath.Join(dir, name+".db"), nil }
			drop = func(name string) error {
				var errs []error
				for _, suffix := range []string{".db", ".db-wal", ".db-shm"} {
					if err := os.Remove(filepath.Join(dir, name+suffix)); err != nil && !errors.Is(err, os.ErrNotExist) {
						errs = append(errs, err)
					}
				}
				return errors.Join(errs...)
			}
		case scaleout.Postgres:
			opts := pgtest.Options{MaxConnections: 200}
			if c.statements {
				opts.Settings = map[string]string{"shared_preload_libraries": "'pg_stat_statements'"}
			}
			srv, err := pgtest.Start(ctx, opts)
			if err != nil {
				return nil, nil, err
			}
			defer srv.Stop()
			if c.statements {
				c.statsDSN = srv.DSN
				if err := execOn(ctx, srv.DSN, "CREATE EXTENSION pg_stat_statements"); err != nil {
					return nil, nil, err
				}
			}
			c.pgVersion = serverVersion(ctx, srv.DSN)
			databases = func(name string) (string, error) { return srv.CreateDatabase(ctx, name) }
			drop = func(name string) error { return execOn(ctx, srv.DSN, "DROP DATABASE "+pgx.Identifier{name}.Sanitize()) }
		}
		lines := make([]*measured, len(c.workers))
		for i, n := range c.workers {
			lines[i] = &measured{store: store, workers: n}
			rows = append(rows, lines[i])
		}
		for round := range c.count {
			for i, n := range c.workers {
				r, err := c.one(ctx, store, n, databases)
				if err != nil {
					return nil, nil, fmt.Errorf("%s, N=%d, round %d: %w", store, n, round+1, err)
				}
				lines[i].runs = append(lines[i].runs, r)
				for _, name := range []string{"orders_%d", "same_%d", "floor_%d"} {
					if err := drop(fmt.Sprintf(name, n)); err != nil {
						return nil, nil, fmt.Errorf("%s, N=%d: %w", store, n, err)
					}
				}
			}
		}
		b, err := scaleout.Decompose(ctx, store, c.split, databases)
		if err != nil {
			return nil, nil, fmt.Errorf("%s, breakdown: %w", store, err)
		}
		fmt.Fprintf(c.stderr, "%s breakdown: %+v\n", store, b)
		splits = append(splits, breakdown{store, b})
	}
	return rows, splits, nil
}

// one measures store with n workers, on databases named by databases.
func (c *config) one(ctx context.Context, store string, n int, databases func(name string) (string, error)) (res row, err error) {
	p := c.plan
	p.Workers = n
	source, err := databases(fmt.Sprintf("orders_%d", n))
	if err != nil {
		return row{}, err
	}
	target, err := databases(fmt.Sprintf("floor_%d", n))
	if err != nil {
		return row{}, err
	}
	same, err := databases(fmt.Sprintf("same_%d", n))
	if err != nil {
		return row{}, err
	}
	r := &scaleout.Run{Kind: store, Where: source, Plan: p, Speed: 60, Together: true, Logf: c.logf}
	if c.profile != "" {
		r.WorkerArgs = func(index int) []string {
			if index > 0 {
				return nil
			}
			return []string{"-cpuprofile", filepath.Join(c.profile, fmt.Sprintf("%s-%d.pprof", store, n))}
		}
		r.FloorArgs = func(work string, index int) []string {
			if index > 0 {
				return nil
			}
			return []string{"-cpuprofile", filepath.Join(c.profile, fmt.Sprintf("%s-%d-floor-%s.pprof", store, n, work))}
		}
	}
	res = row{store: store, workers: n}
	var ran func() error // once the workers are done, before the check reads their database
	if c.statsDSN != "" && store == scaleout.Postgres {
		if err := execOn(ctx, c.statsDSN, "SELECT pg_stat_statements_reset()"); err != nil {
			return res, err
		}
		// The workers' database is read after the run, by the check and by the floors
		// (their commits are made again from its log): its statements are taken before.
		ran = func() (err error) {
			res.server, err = c.serverTimes(ctx, fmt.Sprintf("orders_%d", n))
			return err
		}
		defer func() {
			if err == nil {
				res.floorServer, err = c.serverTimes(ctx, fmt.Sprintf("same_%d", n))
			}
		}()
	}
	if res.run, res.report, err = c.runWorkers(ctx, r, ran); err != nil {
		return res, err
	}
	for _, f := range []struct {
		work, where string
		into        *scaleout.FloorResult
	}{{scaleout.FloorSameWork, same, &res.same}, {scaleout.FloorEntries, target, &res.floor}} {
		if err := c.prepare(ctx, store, f.where); err != nil {
			return res, err
		}
		if *f.into, err = r.Floor(ctx, f.work, source, f.where); err != nil {
			return res, fmt.Errorf("floor %s: %w", f.work, err)
		}
	}
	fmt.Fprintf(c.stderr, "%s N=%d: %.0f transitions/s (%d in %v), same-work floor %.0f/s (%d in %v), two-statement floor %.0f/s (%d in %v)\n", store, n,
		res.rate(), res.run.Entries, res.run.Elapsed.Round(time.Millisecond),
		res.sameRate(), res.same.Commits, res.same.Elapsed.Round(time.Millisecond),
		res.floorRate(), res.floor.Commits, res.floor.Elapsed.Round(time.Millisecond))
	return res, nil
}

// runWorkers runs the workers of r, then ran if not nil, and checks the run.
func (c *config) runWorkers(ctx context.Context, r *scaleout.Run, ran func() error) (scaleout.Result, *scaleout.Report, error) {
	db, err := r.Start(ctx)
	if err != nil {
		return scaleout.Result{}, nil, err
	}
	defer db.Close()
	res, err := r.Workers(ctx, db)
	if err == nil && ran != nil {
		err = ran()
	}
	if err != nil {
		return res, nil, err
	}
	rep, err := scaleout.Check(ctx, db, r.Plan, false)
	if err == nil && len(rep.Problems) > 0 {
		err = fmt.Errorf("the run fails its checks: %s", strings.Join(rep.Problems, "; "))
	}
	return res, rep, err
}

// prepare creates the store's tables in the floor's database.
func (c *config) prepare(ctx context.Context, store, where string) error {
	db, err := scaleout.Open(ctx, store, where)
	if err != nil {
		return err
	}
	db.Close()
	return nil
}

// logf passes on what the processes write, with -v.
func (c *config) logf(format string, args ...any) {
	if c.verbose {
		fmt.Fprintf(c.stderr, format+"\n", args...)
	}
}

// serverVersion returns the PostgreSQL server's version.
func serverVersion(ctx context.Context, dsn string) string {
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return "?"
	}
	defer conn.Close(ctx)
	var v string
	if conn.QueryRow(ctx, "SHOW server_version").Scan(&v) != nil {
		return "?"
	}
	return v
}

// notesMarker starts the part of the results file that the command keeps as it was.
const notesMarker = "<!-- notes: everything below this line is kept when the command rewrites the file -->"

// write writes the results file (or standard output), keeping the notes of the old file.
func (c *config) write(rows []*measured, splits []breakdown, stdout io.Writer) error {
	var b bytes.Buffer
	c.table(&b, rows)
	c.breakdowns(&b, splits)
	c.statementsTable(&b, rows)
	if c.out == "-" {
		_, err := stdout.Write(b.Bytes())
		return err
	}
	old, err := os.ReadFile(c.out)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	if _, notes, ok := bytes.Cut(old, []byte(notesMarker)); ok {
		b.WriteString("\n" + notesMarker)
		b.Write(notes)
	} else {
		b.WriteString("\n" + notesMarker + "\n")
	}
	return os.WriteFile(c.out, b.Bytes(), 0o644)
}

// table writes the heading and the tables of the results.
func (c *config) table(w io.Writer, rows []*measured) {
	fmt.Fprintf(w, "# Scale-out results\n\n")
	fmt.Fprintf(w, "Written by `make bench-durable` (`go run ./cmd/bench` in examples/scaleout; this run: %v; the\n", time.Since(c.started).Round(time.Second))
	fmt.Fprintf(w, "flags are in cmd/bench/main.go). Each row: N worker processes fire the plan (%d orders,\n", c.plan.Instances)
	fmt.Fprintf(w, "%d events, seed %d; duplicates, key conflicts, contended events, timers and effects as in\n", c.plan.Events, c.plan.Seed)
	fmt.Fprintf(w, "the test, no kills) at a fresh database, and the run passes every check of the test;\n")
	fmt.Fprintf(w, "*transitions/s* is the log entries committed until the last worker was done, over that\n")
	fmt.Fprintf(w, "time. Then, on fresh databases of the same server, N processes write the same log again\n")
	fmt.Fprintf(w, "by hand, each the orders of one worker, in turn:\n\n")
	fmt.Fprintf(w, "- *same-work floor*: the whole commits the workers made (made again from their log by\n")
	fmt.Fprintf(w, "  scaleout.Redo, every entry equal to the stored one byte for byte), each in one\n")
	fmt.Fprintf(w, "  transaction of hand-written SQL (scaleout.SameWork): the instance by compare-and-set on\n")
	fmt.Fprintf(w, "  its version with its snapshot, the entry with its idempotency key, the outbox rows, the\n")
	fmt.Fprintf(w, "  deadline handled, the deadlines disarmed and armed, the counters changed; on PostgreSQL\n")
	fmt.Fprintf(w, "  one batch and the COMMIT (two round trips, as the store), on SQLite statements prepared\n")
	fmt.Fprintf(w, "  once. The proof's tests check that it leaves the very rows the workers left.\n")
	fmt.Fprintf(w, "- *two-statement floor*: one UPDATE ... WHERE version = $n (an INSERT for a new order) and\n")
	fmt.Fprintf(w, "  one INSERT of the entry, nothing else.\n\n")
	var setups []string
	if slices.Contains(c.stores, scaleout.Postgres) {
		pg := fmt.Sprintf("PostgreSQL %s runs with fsync, synchronous_commit and full_page_writes off", c.pgVersion)
		if c.statements {
			pg += " and pg_stat_statements loaded (-statements)"
		}
		setups = append(setups, pg)
	}
	if slices.Contains(c.stores, scaleout.SQLite) {
		setups = append(setups, "SQLite runs in WAL mode with synchronous=NORMAL")
	}
	fmt.Fprintf(w, "%s; the floors alike.\n\n", strings.Join(setups, "; "))
	fmt.Fprintf(w, "Each row was measured %d times, in rounds: every row once, then every row again. The rates\n", c.count)
	fmt.Fprintf(w, "are the medians of the runs; each ratio is the median of the runs' ratios, each of a run\n")
	fmt.Fprintf(w, "against the floors measured right after it; *each run* lists the same-work ratios in\n")
	fmt.Fprintf(w, "round order. The tables after this one show the run of the median same-work ratio.\n\n")
	fmt.Fprintf(w, "| date | machine | Go | N | store | transitions/s | same-work floor/s | ratio | two-statement floor/s | ratio | each run |\n")
	fmt.Fprintf(w, "|---|---|---|---:|---|---:|---:|---:|---:|---:|---|\n")
	date, machine := c.started.UTC().Format("2006-01-02"), machineName()
	for _, m := range rows {
		var each []string
		for _, r := range m.runs {
			each = append(each, fmt.Sprintf("%.2f", sameRatio(r)))
		}
		fmt.Fprintf(w, "| %s | %s | %s | %d | %s | %.0f | %.0f | %.2fx | %.0f | %.2fx | %s |\n", date, machine, runtime.Version(),
			m.workers, m.store, m.median(row.rate), m.median(row.sameRate), m.median(sameRatio),
			m.median(row.floorRate), m.median(floorRatio), strings.Join(each, ", "))
	}
	fmt.Fprintf(w, "\nWhere the processor time goes, a transition: *processes* is the worker (floor) processes\n")
	fmt.Fprintf(w, "(for SQLite, the database engine is in them); *machine* is every CPU of the machine busy\n")
	fmt.Fprintf(w, "meanwhile (/proc/stat): the processes, the PostgreSQL server, this command, anything else.\n")
	fmt.Fprintf(w, "*busy* is that time over the wall time of the %d CPUs: near 100%%, the row is held by the\n", runtime.NumCPU())
	fmt.Fprintf(w, "processors the workers share with the server.\n\n")
	fmt.Fprintf(w, "| N | store | run | transitions | wall | processes | machine | busy |\n")
	fmt.Fprintf(w, "|---:|---|---|---:|---:|---:|---:|---:|\n")
	for _, m := range rows {
		r := m.mid()
		phases := []struct {
			name        string
			n           int64
			wall, procs time.Duration
			busy        time.Duration
		}{
			{"workers", r.run.Entries, r.run.Elapsed, r.workersCPU(), r.run.Busy},
			{"same-work floor", r.same.Commits, r.same.Elapsed, r.same.CPU, r.same.Busy},
			{"two-statement floor", r.floor.Commits, r.floor.Elapsed, r.floor.CPU, r.floor.Busy},
		}
		for _, p := range phases {
			per := func(d time.Duration) string {
				return fmt.Sprintf("%d µs", (d / time.Duration(max(p.n, 1))).Microseconds())
			}
			fmt.Fprintf(w, "| %d | %s | %s | %d | %v | %s | %s | %.0f%% |\n", r.workers, r.store, p.name, p.n,
				p.wall.Round(time.Millisecond), per(p.procs), per(p.busy),
				100*p.busy.Seconds()/(p.wall.Seconds()*float64(runtime.NumCPU())))
		}
	}
	fmt.Fprintf(w, "\nWhat the workers did (entries: at the end of the events; the timers' last entries follow):\n\n")
	fmt.Fprintf(w, "| N | store | entries | conflicts retried | loads | catch-ups | timers | effects |\n")
	fmt.Fprintf(w, "|---:|---|---:|---:|---:|---:|---:|---:|\n")
	for _, m := range rows {
		r := m.mid()
		var s scaleout.Stats
		for _, x := range r.run.Stats {
			s.Conflicts, s.Loads, s.CatchUps, s.Timers, s.Delivered = s.Conflicts+x.Conflicts, s.Loads+x.Loads, s.CatchUps+x.CatchUps, s.Timers+x.Timers, s.Delivered+x.Delivered
		}
		fmt.Fprintf(w, "| %d | %s | %d | %d | %d | %d | %d | %d |\n", r.workers, r.store, r.run.Entries,
			s.Conflicts, s.Loads, s.CatchUps, s.Timers, s.Delivered)
	}
}

// breakdowns writes the table of the breakdowns.
func (c *config) breakdowns(w io.Writer, splits []breakdown) {
	if len(splits) == 0 {
		return
	}
	fmt.Fprintf(w, "\nWhere the time of a transition goes, in one process (scaleout.Decompose): the %d orders'\n", c.split.Instances)
	fmt.Fprintf(w, "fresh events of a plan of %d events, and their creations, committed five ways, each on a\n", c.split.Events)
	fmt.Fprintf(w, "fresh database: their entries by hand (the two-statement floor); the very same commits by\n")
	fmt.Fprintf(w, "hand (the same-work floor) and through Store.Commit; fired by machines kept in memory,\n")
	fmt.Fprintf(w, "without keys; and with their idempotency keys. Time a transition (and transitions/s).\n\n")
	fmt.Fprintf(w, "| store | transitions | two-statement floor | same-work floor | Store.Commit | FireWith, no key | FireWith, key |\n")
	fmt.Fprintf(w, "|---|---:|---:|---:|---:|---:|---:|\n")
	for _, s := range splits {
		fmt.Fprintf(w, "| %s | %d | %s | %s | %s | %s | %s |\n", s.store, s.Transitions,
			perTransition(s.Floor), perTransition(s.SameWork), perTransition(s.Commit), perTransition(s.FireNoKey), perTransition(s.Fire))
	}
}

// perTransition writes the time of a transition and the rate it makes.
func perTransition(d time.Duration) string {
	return fmt.Sprintf("%d µs (%.0f/s)", d.Microseconds(), float64(time.Second)/float64(max(d, 1)))
}

// machineName describes the machine: its processor and how many of them.
func machineName() string {
	model := runtime.GOARCH
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				model = strings.TrimSpace(v)
				break
			}
		}
	}
	return fmt.Sprintf("%s, %d CPUs, %s", model, runtime.NumCPU(), runtime.GOOS)
}

// execOn runs sql on the database dsn.
func execOn(ctx context.Context, dsn, sql string) error {
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, sql)
	return err
}

// statementTime is the server's execution time of one statement in one database.
type statementTime struct {
	query string
	calls int64
	ms    float64
}

// serverTimes returns the execution time of the statements run in database since
// pg_stat_statements was last reset, longest first.
func (c *config) serverTimes(ctx context.Context, database string) ([]statementTime, error) {
	conn, err := pgx.Connect(ctx, c.statsDSN)
	if err != nil {
		return nil, err
	}
	defer conn.Close(ctx)
	rows, err := conn.Query(ctx, `SELECT s.query, s.calls, s.total_exec_time
		FROM pg_stat_statements s JOIN pg_database d ON d.oid = s.dbid
		WHERE d.datname = $1 ORDER BY s.total_exec_time DESC`, database)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	space := regexp.MustCompile(`\s+`)
	var out []statementTime
	for rows.Next() {
		var st statementTime
		if err := rows.Scan(&st.query, &st.calls, &st.ms); err != nil {
			return nil, err
		}
		st.query = strings.ReplaceAll(space.ReplaceAllString(strings.TrimSpace(st.query), " "), `"public".`, "")
		out = append(out, st)
	}
	return out, rows.Err()
}

// statementsTable writes, for each row measured with -statements, the server's execution
// time a transition by statement, the workers' and the same-work floor's: the statements that took
// 1% of their database's time or more, and the rest together.
func (c *config) statementsTable(w io.Writer, rows []*measured) {
	first := true
	for _, m := range rows {
		r := m.mid()
		if r.server == nil && r.floorServer == nil {
			continue
		}
		if first {
			fmt.Fprintf(w, "\nThe server's execution time a transition (pg_stat_statements, with -statements), by\n"+
				"statement, the workers' database against the same-work floor's: statements that took 1%% of\n"+
				"their database's time or more, in full up to 100 characters.\n")
			first = false
		}
		for _, side := range []struct {
			who     string
			times   []statementTime
			entries int64
		}{{"workers", r.server, r.run.Entries}, {"same-work floor", r.floorServer, r.same.Commits}} {
			var total float64
			for _, st := range side.times {
				total += st.ms
			}
			per := func(ms float64) string {
				return fmt.Sprintf("%.1f µs", ms*1000/float64(max(side.entries, 1)))
			}
			fmt.Fprintf(w, "\n%s, N=%d, %s: %s a transition in all (%d transitions)\n\n| calls | a transition | statement |\n|---:|---:|---|\n",
				r.store, r.workers, side.who, per(total), side.entries)
			var rest float64
			for _, st := range side.times {
				if st.ms < total/100 {
					rest += st.ms
					continue
				}
				q := st.query
				if len(q) > 100 {
					q = q[:100] + "…"
				}
				fmt.Fprintf(w, "| %d | %s | `%s` |\n", st.calls, per(st.ms), strings.ReplaceAll(q, "|", "\\|"))
			}
			fmt.Fprintf(w, "| | %s | the others |\n", per(rest))
		}
	}
}
