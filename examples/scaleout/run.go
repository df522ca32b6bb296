package scaleout

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/fsmgen/fsmgen/examples/scaleout/order"
	"github.com/fsmgen/fsmgen/fsmrt"
)

// Run is one run of the proof on one database: Plan.Workers worker processes (copies of
// the running program, see Child) fire the plan's events, some of them killed with
// SIGKILL at random and started again; then the run waits until every timer has fired and
// every effect is delivered, and stops the workers.
type Run struct {
	Kind  string // SQLite or Postgres
	Where string // the SQLite file or the PostgreSQL DSN
	// WorkerWhere, when set, is the DSN the workers connect to instead of Where (a proxy
	// in front of the server: CutProxy).
	WorkerWhere string
	Plan        Plan
	// Speed is how much faster than real time the run's clock goes; the clock starts when
	// the workers do.
	Speed float64
	// Kills is how many times a worker is killed, each after a random pause of 0.3 to
	// 1.7 times KillEvery; the killed worker is started again at once, and fires its
	// whole list again.
	Kills     int
	KillEvery time.Duration
	// Seed makes the choice of kills repeatable (their timing is not).
	Seed uint64
	// Flaky makes the workers' first delivery of some effects fail (see Flaky).
	Flaky bool
	// Rate, when not 0, paces each worker's events (a second), so that a short run lasts
	// long enough for timers to fall due and kills to land.
	Rate float64
	// Together starts the workers' events at once, when every worker has opened the
	// store (for timing).
	Together bool
	// WorkerArgs, when set, returns more flags for worker index.
	WorkerArgs func(index int) []string
	// FloorArgs, when set, returns more flags for floor process index of the floor
	// that writes work (FloorEntries or FloorSameWork).
	FloorArgs func(work string, index int) []string
	// Drain bounds the wait for the timers and the outbox after the events.
	Drain time.Duration
	// Restarts and Terminations disrupt a run on PostgreSQL during the events, each after
	// a random pause of 0.3 to 1.7 times DisruptEvery (disrupt.go): Restarts times the
	// server is restarted with Restart, Terminations times the workers' connections that
	// run a statement or are in a transaction are terminated.
	Restart                func(ctx context.Context) error
	Restarts, Terminations int
	DisruptEvery           time.Duration
	// Logf receives what the processes write on their standard error, and progress.
	Logf func(format string, args ...any)

	clock Clock
}

// Result is what a run measured.
type Result struct {
	// Elapsed runs from the start of the events to the last worker done with them;
	// Entries is how many entries the store's log held then.
	Elapsed time.Duration
	Entries int64
	// Busy is the processor time the whole machine spent busy meanwhile (machineBusy):
	// the workers, the database server and anything else running.
	Busy time.Duration
	// Drained is how long the timers and the outbox took to drain after that.
	Drained time.Duration
	// Stats are those of the workers' last processes; Kills how many were killed.
	Stats []Stats
	Kills int
	// Disrupted counts the restarts and the connections terminated.
	Disrupted Disrupted
	// CPU is the processor time of every worker process of the run, killed ones
	// included.
	CPU time.Duration
}

// Start opens the database for the run, creates what the workers need in it and returns
// it; close it after the run and its checks.
func (r *Run) Start(ctx context.Context) (*DB, error) {
	db, err := Open(ctx, r.Kind, r.Where)
	if err != nil {
		return nil, err
	}
	if err := db.CreateDeliveries(ctx); err != nil {
		db.Close()
		return nil, err
	}
	return db, nil
}

// Workers runs the workers on db (from Start): their events with the kills, the drain of
// the timers and the outbox, and their stop.
func (r *Run) Workers(ctx context.Context, db *DB) (Result, error) {
	r.clock = Clock{Epoch: time.Now(), Start: time.Date(2026, 6, 1, 8, 0, 0, 0, time.UTC), Speed: r.Speed}
	f := r.fleet(roleWorker, r.workerArgs)
	defer f.stop()
	for i := range r.Plan.Workers {
		if err := f.start(i); err != nil {
			return Result{}, err
		}
	}
	var res Result
	start, err := f.begin(ctx, r.Together)
	busy := machineBusy()
	if err == nil {
		err = r.events(ctx, f, db, &res)
	}
	if err == nil {
		err = r.checkDisrupted(res.Disrupted)
	}
	if err == nil {
		res.Elapsed, res.Busy = time.Since(start), machineBusy()-busy
		res.Entries, err = db.Entries(ctx, machineName)
	}
	if err == nil {
		drained := time.Now()
		err = r.drain(ctx, f, db)
		res.Drained = time.Since(drained)
	}
	f.stop()
	res.CPU, res.Stats = f.cpu, f.stats
	if err == nil {
		err = f.failure
	}
	return res, err
}

// workerArgs returns the flags of worker index.
func (r *Run) workerArgs(index int) []string {
	where := r.Where
	if r.WorkerWhere != "" {
		where = r.WorkerWhere
	}
	args := append(storeArgs(r.Kind, where, ""), planArgs(r.Plan, index)...)
	args = append(args, r.clock.Args()...)
	args = append(args, "-linger")
	if r.Together {
		args = append(args, "-wait")
	}
	if r.Flaky {
		args = append(args, "-flaky")
	}
	if r.Rate > 0 {
		args = append(args, "-rate", strconv.FormatFloat(r.Rate, 'g', -1, 64))
	}
	if r.WorkerArgs != nil {
		args = append(args, r.WorkerArgs(index)...)
	}
	return args
}

// storeArgs returns the flags naming database where of kind, their names prefixed.
func storeArgs(kind, where, prefix string) []string {
	if kind == Postgres {
		return []string{"-" + prefix + "postgres", where}
	}
	return []string{"-" + prefix + "db", where}
}

// planArgs returns the flags of plan p for worker index.
func planArgs(p Plan, index int) []string {
	return []string{
		"-seed", strconv.FormatUint(p.Seed, 10), "-instances", strconv.Itoa(p.Instances),
		"-events", strconv.Itoa(p.Events), "-workers", strconv.Itoa(p.Workers), "-worker", strconv.Itoa(index),
	}
}

// events waits until every worker is done with its events, killing workers meanwhile,
// and disrupting the server.
func (r *Run) events(ctx context.Context, f *fleet, db *DB, res *Result) error {
	rng := rand.New(rand.NewPCG(r.Seed, 7))
	var kill <-chan time.Time
	if r.Kills > 0 {
		kill = time.After(r.pause(rng))
	}
	rounds := 0
	disrupt := r.nextDisruption(rng, rounds)
	for !f.allDone() {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-disrupt:
			if err := r.disrupt(ctx, db, rng, &res.Disrupted, rounds); err != nil {
				return err
			}
			rounds++
			disrupt = r.nextDisruption(rng, rounds)
		case ev := <-f.events:
			if err := f.handle(ev); err != nil {
				return err
			}
		case <-kill:
			if i, ok := f.pickRunning(rng); ok {
				if err := f.kill(i); err != nil {
					return err
				}
				res.Kills++
			}
			kill = nil
			if res.Kills < r.Kills {
				kill = time.After(r.pause(rng))
			}
		}
	}
	return nil
}

// pause returns the time until the next kill.
func (r *Run) pause(rng *rand.Rand) time.Duration {
	return time.Duration((0.3 + 1.4*rng.Float64()) * float64(r.KillEvery))
}

// drain waits until no order is held, no deadline is left to handle and no effect to
// deliver, the workers serving the timers and the outbox meanwhile.
func (r *Run) drain(ctx context.Context, f *fleet, db *DB) error {
	limit := r.Drain
	if limit <= 0 {
		limit = 2 * time.Minute
	}
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	poll := time.NewTicker(50 * time.Millisecond)
	defer poll.Stop()
	for {
		select {
		case <-ctx.Done():
			held, effects, deadlines, _ := outstanding(context.Background(), db)
			return fmt.Errorf("not drained after %v: %d orders held, %d effects and %d deadlines pending", limit, held, effects, deadlines)
		case ev := <-f.events:
			if err := f.handle(ev); err != nil {
				return err
			}
		case <-poll.C:
			held, effects, deadlines, err := outstanding(ctx, db)
			if err != nil && r.Restarts+r.Terminations == 0 {
				return err
			}
			if err != nil { // a connection of the proof's a disruption broke: the pool drops it
				r.Logf("drain: %v", err)
				continue
			}
			if held == 0 && effects == 0 && deadlines == 0 {
				return nil
			}
		}
	}
}

// outstanding returns how many orders are held, and how many effects and deadlines are
// pending.
func outstanding(ctx context.Context, db *DB) (held int, effects, deadlines int64, err error) {
	found, err := order.FindOrders(ctx, db.Store, fsmrt.Query{States: []string{order.StateHeld.String()}})
	if err != nil {
		return 0, 0, 0, err
	}
	effects, deadlines, err = db.Pending(ctx, machineName)
	return len(found), effects, deadlines, err
}

// FloorResult is what a run of the floor measured.
type FloorResult struct {
	// Elapsed runs from the start of the commits to the last process done with them.
	Elapsed time.Duration
	Commits int64
	// CPU is the processor time the floor processes spent on their commits.
	CPU time.Duration
	// Busy is the processor time the whole machine spent busy meanwhile (machineBusy).
	Busy time.Duration
}

// Floor runs the floor work (FloorEntries or FloorSameWork) on target: Plan.Workers
// processes commit by hand, each the logs of the orders a worker owns, as source (a
// database a run of the workers filled, of the same kind) holds them, all starting
// together.
func (r *Run) Floor(ctx context.Context, work, source, target string) (FloorResult, error) {
	f := r.fleet(roleFloor, func(index int) []string {
		args := append(storeArgs(r.Kind, target, ""), storeArgs(r.Kind, source, "source-")...)
		args = append(append(args, "-work", work), planArgs(r.Plan, index)...)
		if r.FloorArgs != nil {
			args = append(args, r.FloorArgs(work, index)...)
		}
		return args
	})
	defer f.stop()
	for i := range r.Plan.Workers {
		if err := f.start(i); err != nil {
			return FloorResult{}, err
		}
	}
	start, err := f.begin(ctx, true)
	busy := machineBusy()
	for err == nil && !f.allDone() {
		select {
		case <-ctx.Done():
			err = ctx.Err()
		case ev := <-f.events:
			err = f.handle(ev)
		}
	}
	res := FloorResult{Elapsed: time.Since(start), Busy: machineBusy() - busy}
	f.stop()
	for _, line := range f.lines {
		var d struct {
			Commits int64
			CPU     time.Duration
		}
		if json.Unmarshal([]byte(line), &d) == nil {
			res.Commits += d.Commits
			res.CPU += d.CPU
		}
	}
	return res, errors.Join(err, f.failure)
}

// fleet is the processes of one role in a run, each known by its index; a process killed
// and started again keeps its index under a new generation.
type fleet struct {
	r      *Run
	role   string
	args   func(index int) []string
	events chan event
	procs  []*proc
	live   int
	done   []bool
	ready  int
	lines  []string // what each process printed after "done"
	stats  []Stats
	cpu    time.Duration
	// failure is the first process that ended on its own before it was stopped.
	failure  error
	stopping bool
}

// proc is a process of a fleet.
type proc struct {
	gen   int
	cmd   *exec.Cmd
	stdin io.WriteCloser
	// last is the last line it wrote on its standard error, for the error of a process
	// that failed.
	mu   sync.Mutex
	last string
}

// event is a line a process printed, or its end.
type event struct {
	index, gen int
	line       string
	exited     bool
	err        error
	cmd        *exec.Cmd
}

// fleet returns an empty fleet of role whose process index gets args(index).
func (r *Run) fleet(role string, args func(index int) []string) *fleet {
	n := r.Plan.Workers
	return &fleet{
		r: r, role: role, args: args, events: make(chan event, 256),
		procs: make([]*proc, n), done: make([]bool, n), lines: make([]string, n), stats: make([]Stats, n),
	}
}

// start starts process index (again: a new generation).
func (f *fleet) start(index int) error {
	gen := 0
	if p := f.procs[index]; p != nil {
		gen = p.gen + 1
	}
	cmd, err := command(f.role, f.args(index)...)
	if err != nil {
		return err
	}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return err
	}
	p := &proc{gen: gen, cmd: cmd, stdin: stdin}
	cmd.Stdout = &lineWriter{emit: func(l string) { f.events <- event{index: index, gen: gen, line: l} }}
	cmd.Stderr = &lineWriter{emit: func(l string) {
		p.mu.Lock()
		p.last = l
		p.mu.Unlock()
		f.r.Logf("%s %d: %s", f.role, index, l)
	}}
	if err := cmd.Start(); err != nil {
		return err
	}
	f.procs[index] = p
	f.live++
	go func() {
		err := cmd.Wait()
		f.events <- event{index: index, gen: gen, exited: true, err: err, cmd: cmd}
	}()
	return nil
}

// begin waits, when together, until every process is ready and tells them all to go. It
// returns when the processes started their work.
func (f *fleet) begin(ctx context.Context, together bool) (time.Time, error) {
	if !together {
		return time.Now(), nil
	}
	for f.ready < len(f.procs) {
		select {
		case <-ctx.Done():
			return time.Time{}, ctx.Err()
		case ev := <-f.events:
			if err := f.handle(ev); err != nil {
				return time.Time{}, err
			}
		}
	}
	for _, p := range f.procs {
		if _, err := io.WriteString(p.stdin, "go\n"); err != nil {
			return time.Time{}, err
		}
	}
	return time.Now(), nil
}

// handle takes in an event: a process ready, done, or ended.
func (f *fleet) handle(ev event) error {
	p := f.procs[ev.index]
	if ev.exited {
		f.live--
		if st := ev.cmd.ProcessState; st != nil {
			f.cpu += st.UserTime() + st.SystemTime()
		}
		if ev.gen == p.gen && !f.stopping && (!f.done[ev.index] || f.role == roleWorker) {
			p.mu.Lock()
			last := p.last
			p.mu.Unlock()
			err := fmt.Errorf("%s %d ended before it was stopped: %v (its last line: %q)", f.role, ev.index, ev.err, last)
			f.failure = firstErr(f.failure, err)
			return err
		}
		return nil
	}
	if ev.gen != p.gen {
		return nil // a killed process's last words
	}
	switch line := ev.line; {
	case line == "ready":
		f.ready++
	case strings.HasPrefix(line, "done "):
		f.done[ev.index] = true
		f.lines[ev.index] = strings.TrimPrefix(line, "done ")
		if f.role == roleWorker {
			return json.Unmarshal([]byte(f.lines[ev.index]), &f.stats[ev.index])
		}
	}
	return nil
}

// firstErr returns the first of its errors that is not nil.
func firstErr(a, b error) error {
	if a != nil {
		return a
	}
	return b
}

// allDone reports whether every process printed "done".
func (f *fleet) allDone() bool {
	for _, d := range f.done {
		if !d {
			return false
		}
	}
	return true
}

// pickRunning picks a process that is not done yet.
func (f *fleet) pickRunning(rng *rand.Rand) (int, bool) {
	var running []int
	for i, d := range f.done {
		if !d {
			running = append(running, i)
		}
	}
	if len(running) == 0 {
		return 0, false
	}
	return running[rng.IntN(len(running))], true
}

// kill kills process index with SIGKILL and starts it again.
func (f *fleet) kill(index int) error {
	p := f.procs[index]
	if err := p.cmd.Process.Kill(); err != nil {
		return err
	}
	p.stdin.Close()
	f.r.Logf("killed %s %d (pid %d)", f.role, index, p.cmd.Process.Pid)
	return f.start(index)
}

// stop ends every process: it closes their standard input, which ends a lingering worker,
// and waits for them, killing those still there after a while. It is safe to call again.
func (f *fleet) stop() {
	f.stopping = true
	for _, p := range f.procs {
		if p != nil {
			p.stdin.Close()
		}
	}
	grace := time.After(30 * time.Second)
	for f.live > 0 {
		select {
		case ev := <-f.events:
			f.handle(ev)
		case <-grace:
			for _, p := range f.procs {
				if p != nil {
					p.cmd.Process.Kill()
				}
			}
			grace = nil
		}
	}
}

// lineWriter hands each line written to it to emit.
type lineWriter struct {
	mu   sync.Mutex
	buf  []byte
	emit func(line string)
}

// Write buffers b and emits the lines it completes.
func (w *lineWriter) Write(b []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(w.buf, b...)
	for {
		i := bytes.IndexByte(w.buf, '\n')
		if i < 0 {
			return len(b), nil
		}
		w.emit(string(w.buf[:i]))
		w.buf = w.buf[i+1:]
	}
}
