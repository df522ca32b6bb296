// Command worker runs seed 004's build workflow (generated/build) on a durable store: the
// embedded SQLite file by default, PostgreSQL with -postgres. It reads commands on standard
// input, one per line, and prints every entry of the event log of the tasks it knows, in
// the seed's JSON format, on standard output, as they are committed, by it or by any other
// worker on the same store. In the background it handles the timeouts that fall due (the
// warn, alert and escalate levels of seed 004), once across all workers.
//
//	go run . -db build.db
//	go run . -postgres 'postgres://user@localhost/tasks'
//
// Commands:
//
//	create ID                        store a new task, in pending
//	fire ID EVENT ROLE [REASON...]   fire EVENT as ROLE (its actor), with a reason
//	timeout ID STATE DURATION        change a configurable timeout (implementing: 4h)
//	watch ID                         print the log of a task another worker created
//	advance DURATION                 move the clock on (with -speed 0)
//	quit                             stop (so does the end of the input)
//
// -speed N runs the clock N times faster than real time (600: ten minutes a second), and
// -speed 0 stops it at -start, for scripts and tests, which move it with advance.
// -inspect 127.0.0.1:8080 serves the inspector of the store's tasks and their metrics (for
// Prometheus, at /metrics); -traces FILE writes the spans of what the tasks do.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/fsmgen/fsmgen/examples/build/seedlog"
	"github.com/fsmgen/fsmgen/fsmrt"
	"github.com/fsmgen/fsmgen/generated/build"
	"github.com/fsmgen/fsmgen/store/postgres"
	"github.com/fsmgen/fsmgen/store/sqlite"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// run is the worker: flags in args, commands on stdin, the event log on stdout, what it
// does and what fails on stderr. It returns the exit code.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("worker", flag.ContinueOnError)
	fs.SetOutput(stderr)
	db := fs.String("db", "build.db", "SQLite file of the embedded store")
	dsn := fs.String("postgres", "", "PostgreSQL DSN (instead of -db)")
	tick := fs.Duration("tick", time.Second, "how often to look for timeouts due at most: the store wakes the worker when a timeout is armed, and it sleeps until the nearest falls due")
	speed := fs.Float64("speed", 1, "how much faster than real time the clock runs (0: stopped, see advance)")
	start := fs.String("start", "", "the clock's start, RFC 3339 (default: now)")
	inspectAddr := fs.String("inspect", "", "serve the inspector and the metrics on this loopback `address` (127.0.0.1:8080)")
	traces := fs.String("traces", "", "write the spans of every firing, commit, timer and effect to this `file`")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	clk := &clock{real: time.Now(), speed: *speed, at: time.Now().UTC().Truncate(time.Second)}
	if *start != "" {
		t, err := time.Parse(time.RFC3339, *start)
		if err != nil {
			fmt.Fprintf(stderr, "worker: -start: %v\n", err)
			return 2
		}
		clk.at = t
	}
	store, closeStore, err := open(ctx, *db, *dsn)
	if err != nil {
		fmt.Fprintf(stderr, "worker: %v\n", err)
		return 1
	}
	defer closeStore()
	stopOperating, err := operate(store, *inspectAddr, *traces, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "worker: %v\n", err)
		return 1
	}
	defer stopOperating()
	w := &worker{store: store, clock: clk, out: stdout, errs: stderr, seen: map[string]int64{}}
	fmt.Fprintf(stderr, "worker: ready (%s)\n", w.where(*db, *dsn))

	lines := make(chan string)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(stdin)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	// The timeouts are handled when the store says one may be due (fsmrt.Waiter: a commit
	// arming one, in this process or, on PostgreSQL, any other; the nearest falling due on
	// the worker's clock), at least every tick.
	ctx, cancel := context.WithCancel(ctx)
	waiter := fsmrt.NewWaiter(store, build.NewTask(build.TaskNopHooks{}).StoreName(), fsmrt.WaitOptions{Clock: clk, Poll: *tick})
	due, waited := make(chan struct{}, 1), make(chan struct{})
	defer func() {
		cancel()
		<-waited
		waiter.Close()
	}()
	go func() {
		defer close(waited)
		for waiter.Wait(ctx) == nil {
			select {
			case due <- struct{}{}:
			case <-ctx.Done():
				return
			}
		}
	}()
	for {
		select {
		case <-ctx.Done():
			return 0
		case <-due:
			w.schedule(ctx)
		case line, ok := <-lines:
			if !ok {
				return 0
			}
			if quit := w.command(ctx, line); quit {
				return 0
			}
			w.schedule(ctx)
		}
	}
}

// open opens the store: PostgreSQL when dsn is set, else the SQLite file.
func open(ctx context.Context, db, dsn string) (fsmrt.Store, func(), error) {
	if dsn != "" {
		s, err := postgres.Open(ctx, dsn)
		if err != nil {
			return nil, nil, err
		}
		return s, s.Close, nil
	}
	s, err := sqlite.Open(ctx, db)
	if err != nil {
		return nil, nil, err
	}
	return s, func() { s.Close() }, nil
}

// clock is the worker's clock: real time sped up, or stopped and moved by hand.
type clock struct {
	mu    sync.Mutex
	real  time.Time // when the worker started
	at    time.Time // the clock's time then (or now, when stopped)
	speed float64
}

// Now returns the clock's time.
func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.at.Add(time.Duration(float64(time.Since(c.real)) * c.speed))
}

// RealTime returns how long, in real time, a span d of the clock's time lasts
// (fsmrt.PacedClock); for a stopped clock, longer than any wait (only advance moves it).
func (c *clock) RealTime(d time.Duration) time.Duration {
	if c.speed <= 0 {
		return time.Duration(math.MaxInt64 / 2)
	}
	return time.Duration(float64(d) / c.speed)
}

// advance moves the clock on by d.
func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.at = c.at.Add(d)
}

// worker holds what the commands and the scheduler share.
type worker struct {
	store fsmrt.Store
	clock *clock
	out   io.Writer
	errs  io.Writer
	seen  map[string]int64 // the tasks watched, and the last entry printed of each
	order []string
}

// where says which store the worker uses.
func (w *worker) where(db, dsn string) string {
	if dsn != "" {
		return "PostgreSQL"
	}
	return "SQLite " + db
}

// load builds task id from the store, ready to fire. A task the store does not have is
// not made anew (an empty or lost database would make every task one): it is an error
// matching fsmrt.ErrNotFound, and "create ID" makes it.
func (w *worker) load(ctx context.Context, id string) (*build.Task, error) {
	m, err := build.ReplayTask(ctx, w.store, id, build.TaskNopHooks{})
	if errors.Is(err, fsmrt.ErrNotFound) {
		return nil, fmt.Errorf("no task %s: create it first: %w", id, err)
	}
	if err != nil {
		return nil, err
	}
	w.ready(m)
	return m, nil
}

// ready gives a task the worker's store and clock.
func (w *worker) ready(m *build.Task) {
	m.SetStore(w.store)
	m.SetClock(w.clock)
}

// command runs one command line; it reports whether to stop.
func (w *worker) command(ctx context.Context, line string) bool {
	f := strings.Fields(line)
	if len(f) == 0 || strings.HasPrefix(f[0], "#") {
		return false
	}
	err := w.do(ctx, f)
	if errors.Is(err, errQuit) {
		return true
	}
	if err != nil {
		fmt.Fprintf(w.errs, "worker: %s: %v\n", line, err)
	}
	return false
}

var errQuit = errors.New("quit")

// do runs a command's fields.
func (w *worker) do(ctx context.Context, f []string) error {
	switch {
	case f[0] == "quit":
		return errQuit
	case f[0] == "create" && len(f) == 2:
		m := build.NewTask(build.TaskNopHooks{})
		m.ID = f[1]
		w.ready(m)
		w.watch(f[1])
		err := m.Create(ctx, build.TaskInput{Actor: "user", Reason: "task created"})
		if errors.Is(err, fsmrt.ErrStoreConflict) {
			// The store has it already: say so in the worker's terms, not the store's.
			return fmt.Errorf("task %s exists already (created before, by this worker or another); fire its events, or create another ID", f[1])
		}
		return err
	case f[0] == "fire" && len(f) >= 4:
		e, err := build.ParseEvent(f[2])
		if err != nil {
			return err
		}
		r, err := build.ParseRole(f[3])
		if err != nil {
			return err
		}
		w.watch(f[1])
		in := build.TaskInput{Role: r, Actor: "@" + f[3], Reason: strings.Join(f[4:], " ")}
		// Another worker may commit first: load again and fire again.
		return fsmrt.Retry(ctx, 3, func(ctx context.Context) error {
			m, err := w.load(ctx, f[1])
			if err != nil {
				return err
			}
			_, err = m.FireWith(ctx, e, in)
			return err
		})
	case f[0] == "timeout" && len(f) == 4:
		s, err := build.ParseState(f[2])
		if err != nil {
			return err
		}
		d, err := time.ParseDuration(f[3])
		if err != nil {
			return err
		}
		return fsmrt.Retry(ctx, 3, func(ctx context.Context) error {
			m, err := w.load(ctx, f[1])
			if err != nil {
				return err
			}
			return m.SetTimeout(s, d)
		})
	case f[0] == "watch" && len(f) == 2:
		w.watch(f[1])
		return nil
	case f[0] == "advance" && len(f) == 2:
		d, err := time.ParseDuration(f[1])
		if err != nil {
			return err
		}
		w.clock.advance(d)
		return nil
	}
	return fmt.Errorf("unknown command (create, fire, timeout, watch, advance, quit)")
}

// watch adds task id to those whose log the worker prints.
func (w *worker) watch(id string) {
	if _, ok := w.seen[id]; !ok {
		w.seen[id] = 0
		w.order = append(w.order, id)
	}
}

// schedule handles the timeouts due, then prints what is new in the watched logs. The
// scheduler runs on the worker's clock, the one its leases are measured on. A batch that
// handled some deadlines may leave more: it goes on, past a deadline that failed (left
// for a later pass), until a batch handles none.
func (w *worker) schedule(ctx context.Context) {
	for {
		n, err := build.FireDueTaskTimersWith(ctx, w.store, build.TaskNopHooks{}, fsmrt.TimerOptions{Clock: w.clock, Limit: 100})
		if err != nil {
			fmt.Fprintf(w.errs, "worker: timeouts: %v\n", err)
		}
		if n == 0 {
			break
		}
	}
	for _, id := range w.order {
		m := build.NewTask(build.TaskNopHooks{})
		m.ID = id
		m.SetStore(w.store)
		log, err := m.EventLog(ctx, w.seen[id])
		if err != nil {
			fmt.Fprintf(w.errs, "worker: log of %s: %v\n", id, err)
			continue
		}
		for _, e := range log {
			b, err := json.Marshal(seedlog.Of(e)) // the seed's event format
			if err != nil {
				fmt.Fprintf(w.errs, "worker: %v\n", err)
				break
			}
			fmt.Fprintf(w.out, "%s\n", b)
			w.seen[id] = e.Seq
		}
	}
}
