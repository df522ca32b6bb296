package scaleout

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"hash/fnv"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fsmgen/fsmgen/examples/scaleout/order"
	"github.com/fsmgen/fsmgen/fsmrt"
	"github.com/fsmgen/fsmgen/store/postgres/pgtest"
)

// The timer-clock proof: scheduler processes run the generated FireDueOrderTimersWith and
// DeliverEffects on a clock far from the wall clock (a year ahead, a year behind), sped up,
// while the orders' holds expire and release them, each release notifying the customer (an
// effect). Deliveries are slow, and the first one of some effects fails. Every effect must
// be delivered exactly once: none while its first delivery runs (the lease of an effect a
// timer's transition schedules runs on the scheduler's clock, as the other processes claim
// by), and a failed one again once that lease has run out.

// roleTimers is the role of a scheduler process of the proof (see timersMain).
const roleTimers = "timers"

// timerClockSpeed is how much faster than real time the proof's clock runs: the holds'
// 4-minute timeouts expire within 4 seconds.
const timerClockSpeed = 60

// timerHooks are an order's hooks in a scheduler process: a delivery takes a while (so
// that another claimer could step in), and the first attempt of one effect in three fails
// before it delivers.
type timerHooks struct {
	order.OrderNopHooks
	db *DB
}

// Notify delivers the effect, slowly; see timerHooks.
func (h *timerHooks) Notify(ctx context.Context, e order.OrderEffect) error {
	time.Sleep(30 * time.Millisecond) // two clock seconds of a two-minute lease
	if e.Attempt == 1 && failsFirst(e.Key) {
		return errFlaky
	}
	_, err := h.db.Deliver(ctx, e.Key, e.ID, e.Seq)
	return err
}

// failsFirst reports whether the first delivery of the effect with key fails.
func failsFirst(key string) bool {
	h := fnv.New32a()
	h.Write([]byte(key))
	return h.Sum32()%3 == 0
}

// timersMain is a scheduler process: on the store and clock its flags name, it handles the
// orders' deadlines as they fall due and delivers the effects the outbox holds, every tick,
// until standard input closes. It prints "ready" once the store is open.
func timersMain(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("timers", flag.ContinueOnError)
	fs.SetOutput(stderr)
	where := addStoreFlags(fs, "", "store")
	epoch := fs.String("epoch", "", "real time the clock starts, Unix nanoseconds")
	start := fs.String("start", "", "the clock's time at -epoch, RFC 3339")
	speed := fs.Float64("speed", timerClockSpeed, "how much faster than real time the clock runs")
	name := fs.String("name", "timers", "the claimer's name")
	lease := fs.Duration("lease", 2*time.Minute, "lease of deadlines and effects (clock time)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	clock, err := ParseClock(*epoch, *start, *speed)
	if err != nil {
		fmt.Fprintf(stderr, "timers: %v\n", err)
		return 2
	}
	ctx := context.Background()
	db, err := where.open(ctx)
	if err != nil {
		fmt.Fprintf(stderr, "timers: %v\n", err)
		return 1
	}
	defer db.Close()
	hooks := &timerHooks{db: db}
	carrier := order.NewOrder(hooks)
	carrier.SetStore(db.Store)
	carrier.SetClock(clock)
	carrier.SetOwner(*name, *lease)
	opts := fsmrt.TimerOptions{Clock: clock, Owner: *name, Lease: *lease, Limit: 4}
	done := make(chan struct{})
	go func() {
		io.Copy(io.Discard, stdin)
		close(done)
	}()
	fmt.Fprintln(stdout, "ready")
	for {
		// A pass runs to its end, its deliveries included, once begun.
		if _, err := order.FireDueOrderTimersWith(ctx, db.Store, hooks, opts); err != nil {
			fmt.Fprintf(stderr, "%s: timers: %v\n", *name, err)
		}
		if _, err := carrier.DeliverEffects(ctx, 10); err != nil && !strings.Contains(err.Error(), errFlaky.Error()) {
			fmt.Fprintf(stderr, "%s: outbox: %v\n", *name, err)
		}
		select {
		case <-done:
			return 0
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// TestTimerEffectsOnTheCallersClock runs the timer-clock proof on SQLite and on a
// PostgreSQL server the test starts, with the clock a year ahead of the wall clock and a
// year behind it.
func TestTimerEffectsOnTheCallersClock(t *testing.T) {
	offsets := []struct {
		name   string
		offset time.Duration
	}{{"ahead", 365 * 24 * time.Hour}, {"behind", -365 * 24 * time.Hour}}
	t.Run("sqlite", func(t *testing.T) {
		for _, o := range offsets {
			t.Run(o.name, func(t *testing.T) {
				runTimerClock(t, SQLite, filepath.Join(t.TempDir(), "orders.db"), o.offset)
			})
		}
	})
	t.Run("postgres", func(t *testing.T) {
		srv := pgtest.New(t, pgtest.Options{})
		for _, o := range offsets {
			t.Run(o.name, func(t *testing.T) {
				dsn, err := srv.CreateDatabase(context.Background(), "timers_"+o.name)
				if err != nil {
					t.Fatal(err)
				}
				runTimerClock(t, Postgres, dsn, o.offset)
			})
		}
	})
}

// runTimerClock puts orders on hold on the database where of kind, on a clock offset from
// the wall clock, runs three scheduler processes until every release has been delivered,
// and checks the deliveries.
func runTimerClock(t *testing.T, kind, where string, offset time.Duration) {
	const orders, schedulers = 24, 3
	ctx := context.Background()
	now := time.Now()
	clock := Clock{Epoch: now, Start: now.Add(offset).UTC().Truncate(time.Microsecond), Speed: timerClockSpeed}
	db, err := Open(ctx, kind, where)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.CreateDeliveries(ctx); err != nil {
		t.Fatal(err)
	}
	for i := range orders {
		m := order.NewOrder(&timerHooks{db: db})
		m.ID = fmt.Sprintf("order-%02d", i)
		m.SetClock(clock)
		m.SetStore(db.Store)
		if err := m.Create(ctx, order.OrderInput{Actor: "test"}); err != nil {
			t.Fatal(err)
		}
		if _, err := m.Fire(ctx, order.EventHold); err != nil {
			t.Fatal(err)
		}
	}
	args := []string{"-" + map[string]string{SQLite: "db", Postgres: "postgres"}[kind], where}
	args = append(args, clock.Args()...)
	var stdins []io.WriteCloser
	var waits []func() error
	for i := range schedulers {
		cmd, err := command(roleTimers, append(args, "-name", fmt.Sprint("scheduler-", i))...)
		if err != nil {
			t.Fatal(err)
		}
		var stderr strings.Builder
		cmd.Stderr = &stderr
		stdin, err := cmd.StdinPipe()
		if err != nil {
			t.Fatal(err)
		}
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		stdins = append(stdins, stdin)
		waits = append(waits, func() error {
			err := cmd.Wait()
			if s := stderr.String(); s != "" {
				t.Logf("scheduler %d:\n%s", i, s)
			}
			return err
		})
		if sc := bufio.NewScanner(stdout); !sc.Scan() || sc.Text() != "ready" {
			t.Fatalf("scheduler %d did not start", i)
		}
	}
	stop := func() {
		for _, in := range stdins {
			in.Close()
		}
		for i, wait := range waits {
			if err := wait(); err != nil {
				t.Errorf("scheduler %d: %v", i, err)
			}
		}
		stdins, waits = nil, nil
	}
	defer stop()

	// Every order is released (the hold expires at 4 minutes, 4 seconds of real time) and
	// its release's effect delivered: nothing left in the outbox, none of the deadlines.
	pending := db.Store.(fsmrt.PendingReader)
	machine := order.NewOrder(order.OrderNopHooks{}).StoreName()
	deadline := time.Now().Add(40 * time.Second)
	for {
		effects, err := pending.PendingEffects(ctx, fsmrt.PendingQuery{Machine: machine})
		if err != nil {
			t.Fatal(err)
		}
		deadlines, err := pending.PendingDeadlines(ctx, fsmrt.PendingQuery{Machine: machine})
		if err != nil {
			t.Fatal(err)
		}
		d, err := db.Deliveries(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(effects) == 0 && len(deadlines) == 0 && len(d) == orders {
			break
		}
		if time.Now().After(deadline) {
			var owed []string
			for _, e := range effects {
				owed = append(owed, fmt.Sprintf("%s/%d (%d attempts, leased to %s until %v)", e.ID, e.Seq, e.Attempts, e.Owner, e.LeaseUntil.Sub(clock.Now()).Round(time.Second)))
			}
			t.Fatalf("after 40s (clock %v): %d of %d releases delivered, %d deadlines and %d effects owed: %v",
				clock.Now().Sub(clock.Start).Round(time.Second), len(d), orders, len(deadlines), len(effects), owed)
		}
		time.Sleep(50 * time.Millisecond)
	}
	stop()

	d, err := db.Deliveries(ctx)
	if err != nil {
		t.Fatal(err)
	}
	failed := 0
	for key, v := range d {
		if v.Count != 1 {
			t.Errorf("%s delivered %d times", key, v.Count)
		}
		if failsFirst(key) {
			failed++
		}
	}
	if failed == 0 {
		t.Errorf("no first delivery failed: the proof proves nothing of a failed delivery claimed again")
	}
	// Each order was released once, by its hold's expiry, stamped at the deadline.
	for i := range orders {
		m := order.NewOrder(order.OrderNopHooks{})
		m.ID = fmt.Sprintf("order-%02d", i)
		m.SetStore(db.Store)
		log, err := m.EventLog(ctx, 0)
		if err != nil {
			t.Fatal(err)
		}
		var kinds []string
		for _, e := range log {
			k := e.Kind
			if e.Kind == fsmrt.KindTransition {
				k = e.Event.String()
			}
			kinds = append(kinds, k)
		}
		if want := "MACHINE_CREATED hold TIMEOUT_REMIND TIMEOUT_LATE release"; strings.Join(kinds, " ") != want {
			t.Errorf("%s: log %v, want %s", m.ID, kinds, want)
			continue
		}
		if held, released := log[1].Timestamp, log[4].Timestamp; !released.Equal(held.Add(4 * time.Minute)) {
			t.Errorf("%s: held at %v, released at %v", m.ID, held, released)
		}
	}
	t.Logf("%d releases delivered, %d of them after a failed first delivery", len(d), failed)
}
