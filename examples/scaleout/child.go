package scaleout

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"runtime/pprof"
	"strconv"
	"syscall"
	"time"

	"github.com/fsmgen/fsmgen/fsmrt"
)

// roleEnv names the role a copy of the running program plays (see Child).
const roleEnv = "SCALEOUT_ROLE"

// The roles of the processes of a run.
const (
	roleWorker = "worker"
	roleFloor  = "floor"
)

// Child runs this process as the role its environment names, if it names one: a copy of
// a test binary or of the bench command started by a Run. It reports whether it did, and
// the exit code. Call it first thing in TestMain or main.
func Child() (code int, ok bool) {
	role := os.Getenv(roleEnv)
	if role == "" {
		return 0, false
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	switch role {
	case roleWorker:
		return WorkerMain(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr), true
	case roleFloor:
		return FloorMain(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr), true
	}
	fmt.Fprintf(os.Stderr, "scaleout: unknown role %q\n", role)
	return 2, true
}

// command returns the command that starts a copy of this program in role.
func command(role string, args ...string) (*exec.Cmd, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(self, args...)
	cmd.Env = append(os.Environ(), roleEnv+"="+role)
	return cmd, nil
}

// storeFlags are the flags that name a database.
type storeFlags struct{ db, dsn *string }

// addStoreFlags defines the flags of a database, their names prefixed.
func addStoreFlags(fs *flag.FlagSet, prefix, what string) storeFlags {
	return storeFlags{
		db:  fs.String(prefix+"db", "", "SQLite file of the "+what),
		dsn: fs.String(prefix+"postgres", "", "PostgreSQL DSN of the "+what+" (instead of -"+prefix+"db)"),
	}
}

// open opens the database the flags name, its store grouping completions within group
// (Open).
func (f storeFlags) open(ctx context.Context, group ...time.Duration) (*DB, error) {
	switch {
	case *f.dsn != "":
		return Open(ctx, Postgres, *f.dsn, group...)
	case *f.db != "":
		return Open(ctx, SQLite, *f.db, group...)
	}
	return nil, fmt.Errorf("no database: give -db FILE or -postgres DSN")
}

// addPlanFlags defines the flags of a plan.
func addPlanFlags(fs *flag.FlagSet, p *Plan, index *int) {
	fs.Uint64Var(&p.Seed, "seed", 1, "seed of the plan")
	fs.IntVar(&p.Instances, "instances", 1000, "orders")
	fs.IntVar(&p.Events, "events", 50000, "events, over all the orders")
	fs.IntVar(&p.Workers, "workers", 1, "workers sharing the plan")
	fs.IntVar(index, "worker", 0, "this worker's index, from 0")
}

// checkPlan reports a plan and index the flags got wrong.
func checkPlan(p Plan, index int) error {
	switch {
	case p.Instances < 1 || p.Events < p.Instances:
		return fmt.Errorf("need at least one order, and an event per order")
	case p.Workers < 1 || index < 0 || index >= p.Workers:
		return fmt.Errorf("worker %d of %d", index, p.Workers)
	}
	return nil
}

// lines reads the lines of r into a channel, closed at the end of r.
func lines(r io.Reader) <-chan string {
	ch := make(chan string)
	go func() {
		defer close(ch)
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			ch <- sc.Text()
		}
	}()
	return ch
}

// WorkerMain is the worker program: it fires worker -worker's share of the plan at the
// store, serving the timers and the outbox meanwhile, and prints "ready" once the store
// is open and "done" with its Stats in JSON once every event is fired. With -wait it
// starts only on a line of standard input; with -linger it goes on serving the timers and
// the outbox after its events, until standard input closes. It returns the exit code.
func WorkerMain(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("worker", flag.ContinueOnError)
	fs.SetOutput(stderr)
	where := addStoreFlags(fs, "", "store")
	var p Plan
	var index int
	addPlanFlags(fs, &p, &index)
	epoch := fs.String("epoch", "", "real time the clock starts, Unix nanoseconds (default: now)")
	start := fs.String("start", "", "the clock's time at -epoch, RFC 3339 (default: now)")
	speed := fs.Float64("speed", 60, "how much faster than real time the clock runs")
	tick := fs.Duration("tick", 20*time.Millisecond, "how often the timers and the outbox are served")
	deadlineLease := fs.Duration("deadline-lease", 30*time.Second, "lease of a claimed deadline (clock time)")
	effectLease := fs.Duration("effect-lease", time.Minute, "lease of a claimed effect (clock time)")
	deadlineBatch := fs.Int("deadline-batch", 4, "deadlines claimed at a time: handled well within their lease")
	effectBatch := fs.Int("effect-batch", 50, "effects claimed at a time")
	rate := fs.Float64("rate", 0, "events a second at most (0: as fast as the store takes them)")
	flaky := fs.Bool("flaky", false, "fail the first delivery of some effects (see Flaky)")
	wait := fs.Bool("wait", false, "wait for a line on standard input before starting")
	linger := fs.Bool("linger", false, "after the events, serve the timers and the outbox until standard input closes")
	cpuprofile := fs.String("cpuprofile", "", "write a CPU profile of the events to this file")
	group := fs.Duration("group-completions", 100*time.Millisecond, "store the completions of effects delivered with the next commit, or within this (real time; 0: each at once)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	now := time.Now()
	if *epoch == "" {
		*epoch = strconv.FormatInt(now.UnixNano(), 10)
	}
	if *start == "" {
		*start = now.UTC().Format(time.RFC3339Nano)
	}
	clock, err := ParseClock(*epoch, *start, *speed)
	if err == nil {
		err = checkPlan(p, index)
	}
	if err != nil {
		fmt.Fprintf(stderr, "worker: %v\n", err)
		return 2
	}
	db, err := openRetrying(ctx, where, stderr, *group)
	if err == nil {
		defer db.Close()
	}
	if err != nil {
		fmt.Fprintf(stderr, "worker: %v\n", err)
		return 1
	}
	w := &Worker{
		Name: fmt.Sprintf("worker-%d/%d/%s", index, os.Getpid(), strconv.FormatInt(now.UnixNano(), 36)),
		DB:   db, Clock: clock, Plan: p, Items: p.ForWorker(index),
		Tick: *tick, DeadlineLease: *deadlineLease, EffectLease: *effectLease, DeadlineBatch: *deadlineBatch, EffectBatch: *effectBatch,
		Rate: *rate, Flaky: *flaky, Log: stderr,
		Stats: Stats{Worker: index},
	}
	defer w.Close()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if *wait || *linger {
		if !await(ctx, cancel, lines(stdin), *wait, stdout) {
			return 1
		}
	}
	cpu := cpuTime()
	if err := runEvents(ctx, w, *cpuprofile); err != nil {
		fmt.Fprintf(stderr, "worker: %v\n", err)
		return 1
	}
	w.Stats.CPU = cpuTime() - cpu
	b, _ := json.Marshal(w.Stats)
	fmt.Fprintf(stdout, "done %s\n", b)
	if *linger {
		w.Linger(ctx)
	}
	return 0
}

// await prints "ready" and, when wait, waits for a line of in; the end of in then
// cancels the process's work. It reports whether to go on.
func await(ctx context.Context, cancel func(), in <-chan string, wait bool, stdout io.Writer) bool {
	fmt.Fprintln(stdout, "ready")
	if wait {
		select {
		case _, ok := <-in:
			if !ok {
				return false
			}
		case <-ctx.Done():
			return false
		}
	}
	go func() {
		for range in {
		}
		cancel()
	}()
	return true
}

// runEvents runs the worker's events, profiling them into the file profile if named.
func runEvents(ctx context.Context, w *Worker, profile string) error {
	return profiled(profile, func() error { return w.Run(ctx) })
}

// profiled runs fn, profiling its CPU into the file profile if named.
func profiled(profile string, fn func() error) error {
	if profile == "" {
		return fn()
	}
	f, err := os.Create(profile)
	if err != nil {
		return err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		return errors.Join(err, f.Close())
	}
	err = fn()
	pprof.StopCPUProfile()
	return errors.Join(err, f.Close())
}

// FloorMain is the floor's process: it reads from the source database the logs of the
// orders worker -worker owns, as a run of the workers left them, prints "ready", and,
// on a line of standard input, commits every entry of them again to the target database
// by hand, the orders interleaved as the workers fire them, and prints "done" and the
// number of commits. With -work entries it writes the two statements of DB.FloorCommit;
// with -work same the whole commits the workers made (Redo), as SameWork writes them. It
// returns the exit code.
func FloorMain(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("floor", flag.ContinueOnError)
	fs.SetOutput(stderr)
	target := addStoreFlags(fs, "", "target")
	source := addStoreFlags(fs, "source-", "source")
	var p Plan
	var index int
	addPlanFlags(fs, &p, &index)
	cpuprofile := fs.String("cpuprofile", "", "write a CPU profile of the commits to this file")
	work := fs.String("work", FloorEntries, "what the floor writes: "+FloorEntries+" (two statements) or "+FloorSameWork+" (the workers' whole commits)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	err := checkPlan(p, index)
	if err == nil && *work != FloorEntries && *work != FloorSameWork {
		err = fmt.Errorf("-work %q: %s or %s", *work, FloorEntries, FloorSameWork)
	}
	if err != nil {
		fmt.Fprintf(stderr, "floor: %v\n", err)
		return 2
	}
	commits, err := floorCommits(ctx, source, p, index, *work == FloorSameWork)
	if err != nil {
		fmt.Fprintf(stderr, "floor: reading the source: %v\n", err)
		return 1
	}
	db, err := target.open(ctx)
	if err != nil {
		fmt.Fprintf(stderr, "floor: %v\n", err)
		return 1
	}
	defer db.Close()
	write := db.FloorCommit
	if *work == FloorSameWork {
		sw, err := NewSameWork(ctx, db)
		if err != nil {
			fmt.Fprintf(stderr, "floor: %v\n", err)
			return 1
		}
		defer sw.Close()
		write = sw.Commit
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if !await(ctx, cancel, lines(stdin), true, stdout) {
		return 1
	}
	cpu := cpuTime()
	err = profiled(*cpuprofile, func() error {
		for i := range commits {
			if err := write(ctx, &commits[i]); err != nil {
				return fmt.Errorf("%s %d: %w", commits[i].ID, commits[i].Entry.Seq, err)
			}
		}
		return nil
	})
	if err != nil {
		fmt.Fprintf(stderr, "floor: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "done {\"commits\":%d,\"cpu\":%d}\n", len(commits), cpuTime()-cpu)
	return 0
}

// The floors: what a floor process writes (FloorMain's -work).
const (
	FloorEntries  = "entries" // the entries, two statements each (DB.FloorCommit)
	FloorSameWork = "same"    // the workers' whole commits (Redo, SameWork)
)

// floorCommits reads the logs of the orders worker index owns from the source database
// and returns their commits, interleaved: the first entry of each order, then the second
// of each, and so on. With same they are the commits the workers made (Redo); else a
// commit carries the entry, and the order's last snapshot where the store's commit
// carried one (every transition and the creation; not a timeout level).
func floorCommits(ctx context.Context, source storeFlags, p Plan, index int, same bool) ([]fsmrt.Commit, error) {
	db, err := source.open(ctx)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	var byOrder [][]fsmrt.Commit
	for i := range p.Instances {
		if p.Owner(i) != index {
			continue
		}
		var cs []fsmrt.Commit
		var err error
		if same {
			cs, err = Redo(ctx, db.Store, p.ID(i), time.Minute)
		} else {
			cs, err = orderCommits(ctx, db.Store, p.ID(i))
		}
		if err != nil {
			return nil, err
		}
		byOrder = append(byOrder, cs)
	}
	var out []fsmrt.Commit
	for slot := 0; ; slot++ {
		more := false
		for _, cs := range byOrder {
			if slot < len(cs) {
				out, more = append(out, cs[slot]), true
			}
		}
		if !more {
			return out, nil
		}
	}
}

// orderCommits returns the commits of the log of order id, as the floor writes them.
func orderCommits(ctx context.Context, store fsmrt.Store, id string) ([]fsmrt.Commit, error) {
	l, err := store.Load(ctx, machineName, id)
	if err != nil {
		return nil, err
	}
	log, err := store.Log(ctx, machineName, id, 0)
	if err != nil {
		return nil, err
	}
	out := make([]fsmrt.Commit, len(log))
	for i, e := range log {
		c := fsmrt.Commit{Machine: machineName, ID: id, Spec: l.Spec, Version: e.Seq - 1, State: e.To, Entry: e}
		if e.Kind == fsmrt.KindTransition || e.Kind == fsmrt.KindCreated {
			c.Snapshot = l.Snapshot
		}
		out[i] = c
	}
	return out, nil
}

// openRetrying opens the worker's database and creates its deliveries table, trying again
// for a while when that fails (a server restarting, a connection terminated: see
// disrupt.go), as a worker started again at such a time must.
func openRetrying(ctx context.Context, where storeFlags, stderr io.Writer, group time.Duration) (*DB, error) {
	pause := storePause
	for try := 0; ; try++ {
		db, err := where.open(ctx, group)
		if err == nil {
			if err = db.CreateDeliveries(ctx); err == nil {
				return db, nil
			}
			db.Close()
		}
		if try == storeRetries || ctx.Err() != nil {
			return nil, err
		}
		fmt.Fprintf(stderr, "worker: open again: %v\n", err)
		time.Sleep(pause)
		pause = min(2*pause, time.Second)
	}
}
