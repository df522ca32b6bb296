package scaleout

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/fsmgen/fsmgen/examples/scaleout/order"
	"github.com/fsmgen/fsmgen/fsmrt"
	"github.com/fsmgen/fsmgen/store/postgres"
	"github.com/fsmgen/fsmgen/store/sqlite"
)

// The latency of the timers and the outbox: how long after a deadline falls due it is
// handled, and how long after an effect nobody holds is committed it is delivered, with
// schedulers and deliverers that poll the store at an interval (as the workers did) or
// that a store which is an fsmrt.Waker wakes (fsmrt.Waiter, the polling interval their
// fallback). MeasureLatency runs one case: a producer holds orders (each hold arms three
// deadlines: remind, late and the expiry that releases it) and ships others in a
// transaction of its own (the notify effect of the shipping is then nobody's until a
// deliverer claims it), paced, while Workers goroutines, each with a store of its own (a
// pool of its own on PostgreSQL, a Store of its own on the SQLite file), serve the timers
// and the outbox in a loop until everything is done.

// LatencyConfig is one case of the measurement.
type LatencyConfig struct {
	Kind, Where string // the store (SQLite or Postgres) and its file or DSN
	Workers     int
	// Woken: the loops wait with an fsmrt.Waiter on the store; else on the store hidden
	// behind a plain fsmrt.Store, which wakes nobody (the Waiter then polls).
	Woken bool
	// Poll is the polling interval, and the fallback of the woken loops.
	Poll time.Duration
	// Holds and Ships are how many orders are held and shipped, one of each every Spacing
	// (real time).
	Holds, Ships int
	Spacing      time.Duration
	// Speed is the pace of the shared clock: the 4 minutes of held last 4m/Speed.
	Speed float64
}

// LatencyResult is what a case measured, in real time.
type LatencyResult struct {
	Deadlines, Effects []time.Duration
	// Wakes, Timed and Polls count the Waits of the loops ended by a wake-up, by the
	// nearest deadline and by the polling interval.
	Wakes, Timed, Polls int
}

// Percentile returns the p-th percentile (0 < p <= 100) of ds, by the nearest rank.
func Percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	i := int(float64(len(s))*p/100+0.5) - 1
	return s[min(max(i, 0), len(s)-1)]
}

// plainStore hides what a store implements beyond fsmrt.Store: a Waiter on it polls.
type plainStore struct{ fsmrt.Store }

// latencyRun is the shared state of one case.
type latencyRun struct {
	cfg   LatencyConfig
	clock Clock
	mu    sync.Mutex
	// committed and delivered are the real times of the shippings' commits and of their
	// effects' first deliveries, by order.
	committed, delivered map[string]time.Time
	deadlines            []time.Duration
	wakes, timed, polls  int
}

// MeasureLatency runs one case on an empty database: the producer's holds and
// shippings, and the workers' loops until every deadline is handled and every effect
// delivered (or ctx ends).
func MeasureLatency(ctx context.Context, cfg LatencyConfig) (LatencyResult, error) {
	if cfg.Workers < 1 || cfg.Speed <= 0 || cfg.Poll <= 0 {
		return LatencyResult{}, errors.New("latency: workers, speed and poll must be positive")
	}
	r := &latencyRun{cfg: cfg, committed: map[string]time.Time{}, delivered: map[string]time.Time{},
		clock: Clock{Epoch: time.Now(), Start: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), Speed: cfg.Speed}}
	producer, err := Open(ctx, cfg.Kind, cfg.Where)
	if err != nil {
		return LatencyResult{}, err
	}
	defer producer.Close()
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	var wg sync.WaitGroup
	errs := make(chan error, cfg.Workers+1)
	for w := range cfg.Workers {
		db, err := Open(ctx, cfg.Kind, cfg.Where)
		if err != nil {
			return LatencyResult{}, err
		}
		defer db.Close()
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := r.serve(ctx, db, fmt.Sprintf("w%d", w)); err != nil && ctx.Err() == nil {
				errs <- err
			}
		}()
	}
	if err := r.produce(ctx, producer); err != nil {
		return LatencyResult{}, err
	}
	// Until every hold is released and every shipping delivered.
	for {
		effects, deadlines, err := producer.Pending(ctx, machineName)
		if err != nil {
			return LatencyResult{}, err
		}
		r.mu.Lock()
		done := effects == 0 && deadlines == 0 && len(r.delivered) == cfg.Ships
		r.mu.Unlock()
		if done {
			break
		}
		select {
		case err := <-errs:
			return LatencyResult{}, err
		case <-ctx.Done():
			return LatencyResult{}, ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
	stop()
	wg.Wait()
	res := LatencyResult{Deadlines: r.deadlines, Wakes: r.wakes, Timed: r.timed, Polls: r.polls}
	for id, at := range r.delivered {
		res.Effects = append(res.Effects, max(at.Sub(r.committed[id]), 0))
	}
	if want := 3 * cfg.Holds; len(res.Deadlines) != want {
		return res, fmt.Errorf("latency: %d deadlines handled, want %d", len(res.Deadlines), want)
	}
	return res, nil
}

// produce holds and ships the orders, one of each every Spacing: a hold is fired as the
// workers fire events; a shipping (checkout -> shipped, whose notify effect is then in
// the outbox, nobody's) is committed in a transaction of the producer's own.
func (r *latencyRun) produce(ctx context.Context, db *DB) error {
	hooks := &latencyHooks{run: r}
	fresh := func(id string) (*order.Order, error) {
		m := order.NewOrder(hooks)
		m.SetClock(r.clock)
		m.ID = id
		m.SetStore(db.Store)
		return m, m.Create(ctx, order.OrderInput{At: r.clock.Now()})
	}
	next := time.Now()
	for i := range max(r.cfg.Holds, r.cfg.Ships) {
		if d := time.Until(next); d > 0 {
			time.Sleep(d)
		}
		next = next.Add(r.cfg.Spacing)
		if i < r.cfg.Holds {
			m, err := fresh(fmt.Sprintf("hold-%04d", i))
			if err == nil {
				_, err = m.FireWith(ctx, order.EventHold, order.OrderInput{At: r.clock.Now()})
			}
			if err != nil {
				return fmt.Errorf("hold %d: %w", i, err)
			}
		}
		if i < r.cfg.Ships {
			id := fmt.Sprintf("ship-%04d", i)
			m, err := fresh(id)
			if err == nil {
				_, err = m.FireWith(ctx, order.EventAdvance, order.OrderInput{At: r.clock.Now()})
			}
			if err == nil {
				err = r.ship(ctx, db, m)
			}
			if err != nil {
				return fmt.Errorf("ship %d: %w", i, err)
			}
		}
	}
	return nil
}

// ship fires the shipping of m in a transaction of the producer's and records when it
// committed.
func (r *latencyRun) ship(ctx context.Context, db *DB, m *order.Order) error {
	fire := func(st fsmrt.Store) error {
		m.SetStore(st)
		_, err := m.FireWith(ctx, order.EventAdvance, order.OrderInput{At: r.clock.Now()})
		m.SetStore(db.Store)
		return err
	}
	switch s := db.Store.(type) {
	case *sqlite.Store:
		if err := s.InTx(ctx, func(_ *sql.Tx, st fsmrt.Store) error { return fire(st) }); err != nil {
			return err
		}
	case *postgres.Store:
		tx, err := db.pool.Begin(ctx)
		if err != nil {
			return err
		}
		if err := fire(s.WithTx(tx)); err != nil {
			_ = tx.Rollback(ctx)
			return err
		}
		if err := tx.Commit(ctx); err != nil {
			return err
		}
	default:
		return fmt.Errorf("latency: no transactions of the caller's on %T", db.Store)
	}
	r.mu.Lock()
	r.committed[m.ID] = time.Now()
	r.mu.Unlock()
	return nil
}

// latencyHooks record the first delivery of each shipping's effect.
type latencyHooks struct {
	order.OrderNopHooks
	run *latencyRun
}

func (h *latencyHooks) Notify(_ context.Context, e order.OrderEffect) error {
	if e.Event != order.EventAdvance {
		return nil // a release's, delivered by the scheduler that fired it
	}
	now := time.Now()
	h.run.mu.Lock()
	defer h.run.mu.Unlock()
	if _, ok := h.run.delivered[e.ID]; !ok {
		h.run.delivered[e.ID] = now
	}
	return nil
}

// latencyObserver records how late each deadline was handled, in real time.
type latencyObserver struct{ run *latencyRun }

func (o *latencyObserver) FireStart(ctx context.Context, _ *fsmrt.FireInfo) context.Context {
	return ctx
}
func (o *latencyObserver) FireEnd(context.Context, *fsmrt.FireInfo)  {}
func (o *latencyObserver) Commit(context.Context, *fsmrt.CommitInfo) {}
func (o *latencyObserver) Effect(context.Context, *fsmrt.EffectInfo) {}

func (o *latencyObserver) Timer(_ context.Context, t *fsmrt.TimerInfo) {
	if t.Err != nil {
		return
	}
	late := o.run.clock.RealTime(t.Handled.Sub(t.Due))
	o.run.mu.Lock()
	o.run.deadlines = append(o.run.deadlines, late)
	o.run.mu.Unlock()
}

// serve is one worker's loop: the deadlines due and the effects free, batch after batch
// until a batch comes back short, then a Wait.
func (r *latencyRun) serve(ctx context.Context, db *DB, name string) error {
	const batch = 16
	hooks := &latencyHooks{run: r}
	observer := &latencyObserver{run: r}
	carrier := order.NewOrder(hooks)
	carrier.SetClock(r.clock)
	carrier.SetOwner(name, time.Minute)
	carrier.SetStore(db.Store)
	var st fsmrt.Store = db.Store
	if !r.cfg.Woken {
		st = plainStore{db.Store}
	}
	waiter := fsmrt.NewWaiter(st, machineName, fsmrt.WaitOptions{Clock: r.clock, Poll: r.cfg.Poll})
	defer func() {
		waiter.Close()
		r.mu.Lock()
		r.wakes, r.timed, r.polls = r.wakes+waiter.Wakes, r.timed+waiter.Timed, r.polls+waiter.Polls
		r.mu.Unlock()
	}()
	load := func(ctx context.Context, id string) (*fsmrt.Machine[order.State, order.Event, fsmrt.NoRole, order.OrderContext, fsmrt.None], error) {
		m := order.NewOrder(hooks)
		m.SetClock(r.clock)
		if err := fsmrt.Replay(ctx, &m.Machine, db.Store, id, nil); err != nil {
			return nil, err
		}
		m.SetStore(db.Store)
		fsmrt.SetObserver(&m.Machine, observer)
		return &m.Machine, nil
	}
	opts := fsmrt.TimerOptions{Clock: r.clock, Owner: name, Lease: time.Minute, Limit: batch}
	for ctx.Err() == nil {
		for {
			n, err := fsmrt.FireDueWith(ctx, db.Store, machineName, opts, load)
			if err != nil && !errors.Is(err, fsmrt.ErrStoreConflict) && ctx.Err() == nil {
				return err
			}
			if n < batch {
				break
			}
		}
		for {
			n, err := carrier.DeliverEffects(ctx, batch)
			if err != nil && ctx.Err() == nil {
				return err
			}
			if n < batch {
				break
			}
		}
		if err := waiter.Wait(ctx); err != nil {
			return nil
		}
	}
	return nil
}
