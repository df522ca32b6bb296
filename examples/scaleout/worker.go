package scaleout

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"time"

	"github.com/fsmgen/fsmgen/examples/scaleout/order"
	"github.com/fsmgen/fsmgen/fsmrt"
)

// machineName is the order machine's name in a store.
var machineName = order.NewOrder(order.OrderNopHooks{}).StoreName()

// Worker fires a list of planned events at the orders of a store, one at a time, with
// their idempotency keys, retrying those that lose a race (fsmrt.Retry); between events,
// every Tick, it handles the deadlines that fell due (fsmrt.FireDue) and delivers the
// effects left in the outbox (DeliverEffects). While it waits (for the next event of a
// paced list, or once its list is done) it sleeps with an fsmrt.Waiter until the store
// wakes it (a deadline armed or an effect nobody holds committed), the nearest deadline
// falls due, or Tick passed. It keeps the orders it has loaded in
// memory, and loads one again from the store only when a commit of it lost a race.
// A Worker is used by one goroutine.
type Worker struct {
	// Name names it as a claimer of effects and deadlines: unique per process.
	Name  string
	DB    *DB
	Clock Clock
	Plan  Plan
	Items []Item
	// Tick is how often (real time) it serves the timers and the outbox.
	Tick time.Duration
	// DeadlineLease and EffectLease are how long (the clock's time) what it claims
	// stays its own.
	DeadlineLease, EffectLease time.Duration
	// DeadlineBatch and EffectBatch are how many deadlines and effects it claims at a
	// time; a batch of deadlines should be handled within DeadlineLease, after which
	// another scheduler may claim them too (see doc.go).
	DeadlineBatch, EffectBatch int
	// Flaky makes the first delivery of some effects fail (see Flaky).
	Flaky bool
	// Rate, when not 0, paces the events: event k is fired no sooner than k/Rate seconds
	// after the clock's epoch, so that a worker started again after a kill catches up.
	Rate float64
	// Log receives what goes wrong that the worker gets over.
	Log io.Writer

	Stats   Stats
	hooks   *hooks
	cache   map[string]*order.Order
	carrier *order.Order // the hooks and the store, for DeliverEffects
	waiter  *fsmrt.Waiter
}

// Stats counts what a worker did.
type Stats struct {
	Worker int `json:"worker"`
	// Applied: events that made a transition; Answered: events the key answered
	// without one (a duplicate, or one another worker had fired first); Refused: key
	// conflicts refused.
	Applied  int `json:"applied"`
	Answered int `json:"answered"`
	Refused  int `json:"refused"`
	// Conflicts: commits that lost a race and were retried after a reload; Loads:
	// orders loaded (replayed) from the store; CatchUps: orders in memory brought up to
	// date with the entries other workers committed (fsmrt.CatchUp), instead of a load.
	Conflicts int `json:"conflicts"`
	Loads     int `json:"loads"`
	CatchUps  int `json:"catchUps"`
	// Timers: deadlines handled; Delivered: effects delivered, at their commit or from
	// the outbox; Errors: failures of the timers and the outbox, retried later.
	Timers    int `json:"timers"`
	Delivered int `json:"delivered"`
	Errors    int `json:"errors"`
	// StoreFailures: firings that failed in the store (a lost connection, a server
	// restarting) and were fired again (see storeRetries).
	StoreFailures int `json:"storeFailures"`
	// CPU is the processor time the process spent on its events.
	CPU time.Duration `json:"cpu"`
}

// hooks are the order's hooks in a worker: an added item is counted into the context,
// and the notify effect is delivered by recording it in the deliveries table.
type hooks struct {
	order.OrderNopHooks
	db        *DB
	delivered *int
	flaky     bool
}

// AddItem counts the item.
func (h *hooks) AddItem(_ context.Context, m *order.Order, _ order.OrderStep) {
	m.Context.Items++
}

// Notify delivers the effect: one more delivery of its key. When the hooks are flaky,
// some effects fail (see Flaky): those failing before delivery fail at their first
// attempt; those losing the answer lose the answer of their first delivery, whichever
// attempt made it (a worker killed between claiming an effect and delivering it spends
// an attempt that delivered nothing).
func (h *hooks) Notify(ctx context.Context, e order.OrderEffect) error {
	fault := NoFault
	if h.flaky {
		fault = Flaky(e.Key)
	}
	if fault == FailBefore && e.Attempt == 1 {
		return errFlaky
	}
	n, err := h.db.Deliver(ctx, e.Key, e.ID, e.Seq)
	if err != nil {
		return err
	}
	*h.delivered++
	if fault == LoseAck && n == 1 {
		return errFlaky
	}
	return nil
}

// Fault is how a flaky delivery's first attempt fails.
type Fault uint8

const (
	// NoFault: the delivery succeeds.
	NoFault Fault = iota
	// FailBefore: it fails before delivering; the outbox delivers it again.
	FailBefore
	// LoseAck: it delivers, then fails as if the receiver's answer were lost; the
	// outbox delivers it again, and the receiver sees it twice.
	LoseAck
)

// Flaky returns the fault of the first delivery of the effect with key, in a run with
// flaky hooks: one effect in 20 fails before it is delivered, one in 20 loses its
// answer.
func Flaky(key string) Fault {
	h := fnv.New32a()
	h.Write([]byte(key))
	switch h.Sum32() % 20 {
	case 0:
		return FailBefore
	case 1:
		return LoseAck
	}
	return NoFault
}

// errFlaky is the error of a flaky delivery.
var errFlaky = errors.New("flaky delivery")

// retries is how many times an event that keeps losing races is tried.
const retries = 50

// init readies the worker's hooks and cache.
func (w *Worker) init() {
	if w.hooks != nil {
		return
	}
	w.hooks = &hooks{db: w.DB, delivered: &w.Stats.Delivered, flaky: w.Flaky}
	w.cache = map[string]*order.Order{}
	w.carrier = w.newOrder()
	w.carrier.SetStore(w.DB.Store)
	w.waiter = fsmrt.NewWaiter(w.DB.Store, machineName, fsmrt.WaitOptions{Clock: w.Clock, Poll: w.Tick})
}

// Close stops the worker's watch on the store.
func (w *Worker) Close() {
	if w.waiter != nil {
		w.waiter.Close()
	}
}

// Run fires the worker's events, serving the timers and the outbox in between: paced
// (Rate), while it waits for the next event's time, and at least every Tick; unpaced,
// whenever the Waiter says there may be work (a deadline it was told of falls due, or
// the store, asked once every Tick, says something is due).
func (w *Worker) Run(ctx context.Context) error {
	w.init()
	next := time.Now()
	for k, it := range w.Items {
		if w.Rate > 0 {
			at := w.Clock.Epoch.Add(time.Duration(float64(k) / w.Rate * float64(time.Second)))
			next = w.await(ctx, at, next)
		}
		if err := w.apply(ctx, it); err != nil {
			return err
		}
		switch {
		case w.Rate > 0 && !time.Now().Before(next):
			w.serve(ctx)
			next = time.Now().Add(w.Tick)
		case w.Rate <= 0 && w.waiter.Ready(ctx):
			for w.serve(ctx) && ctx.Err() == nil {
			}
		}
	}
	return ctx.Err()
}

// await waits until at, serving the timers and the outbox when next comes meanwhile, and
// then whenever the Waiter says there may be work. It returns when to serve them next.
func (w *Worker) await(ctx context.Context, at, next time.Time) time.Time {
	if now := time.Now(); !now.Before(next) && now.Before(at) {
		w.serve(ctx)
		next = time.Now().Add(w.Tick)
	}
	for time.Now().Before(at) && ctx.Err() == nil {
		wait, cancel := context.WithDeadline(ctx, at)
		err := w.waiter.Wait(wait)
		cancel()
		if err != nil {
			break
		}
		for w.serve(ctx) && ctx.Err() == nil {
		}
		next = time.Now().Add(w.Tick)
	}
	return next
}

// Linger serves the timers and the outbox until ctx is done, waiting in between until
// the Waiter says there may be work.
func (w *Worker) Linger(ctx context.Context) {
	w.init()
	for {
		for w.serve(ctx) && ctx.Err() == nil {
		}
		if w.waiter.Wait(ctx) != nil {
			return
		}
	}
}

// storeRetries is how many times an event whose firing failed in the store otherwise
// than by a lost race (a connection lost, mid-commit or not; a server restarting) is
// fired again, the order loaded afresh, after a pause that doubles from storePause up to
// a second: its key makes the new firing answer the first, if the first was committed
// after all.
const (
	storeRetries = 60
	storePause   = 20 * time.Millisecond
)

// apply fires one planned event, loading the order again after a lost race, and firing
// it again after a failure of the store.
func (w *Worker) apply(ctx context.Context, it Item) error {
	pause := storePause
	for try := 0; ; try++ {
		err := w.applyOnce(ctx, it)
		if err == nil || ctx.Err() != nil || try == storeRetries ||
			errors.Is(err, fsmrt.ErrStoreConflict) || errors.Is(err, fsmrt.ErrIdempotencyConflict) {
			return err
		}
		w.Stats.StoreFailures++
		if w.Log != nil {
			fmt.Fprintf(w.Log, "%s: fired again: %v\n", w.Name, err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(pause):
		}
		pause = min(2*pause, time.Second)
	}
}

// applyOnce fires one planned event, loading the order again after a lost race.
func (w *Worker) applyOnce(ctx context.Context, it Item) error {
	id := w.Plan.ID(it.Instance)
	tries := 0
	err := fsmrt.Retry(ctx, retries, func(ctx context.Context) error {
		if tries++; tries > 1 {
			w.Stats.Conflicts++
			w.refresh(ctx, id)
		}
		m, err := w.machine(ctx, id, it.Slot == 0 && tries == 1)
		if err != nil {
			return err
		}
		seq := m.Seq()
		if _, err := m.FireWith(ctx, it.Event, order.OrderInput{Key: it.Key, At: w.Clock.Now(), Actor: w.Name}); err != nil {
			return err
		}
		if m.Seq() > seq {
			w.Stats.Applied++
		} else {
			w.Stats.Answered++
		}
		return nil
	})
	if err != nil && it.Kind == KeyConflict && errors.Is(err, fsmrt.ErrIdempotencyConflict) {
		w.Stats.Refused++
		return nil
	}
	if err != nil {
		delete(w.cache, id)
		return fmt.Errorf("%s: %s with key %s: %w", id, it.Event, it.Key, err)
	}
	return nil
}

// machine returns order id, from memory or loaded from the store; an order the store
// does not have yet (Replay says fsmrt.ErrNotFound) is created. With first (its first
// event), the order is created at once, and loaded only when the store has it already (a
// worker started again, or the next worker got there first): a load less for each order.
func (w *Worker) machine(ctx context.Context, id string, first bool) (*order.Order, error) {
	if m, ok := w.cache[id]; ok {
		return m, nil
	}
	if first {
		m, err := w.create(ctx, id)
		if !errors.Is(err, fsmrt.ErrStoreConflict) {
			return m, err
		}
	}
	m, err := w.load(ctx, id)
	if errors.Is(err, fsmrt.ErrNotFound) {
		// Another worker may create it first: a conflict, and Retry loads it again.
		return w.create(ctx, id)
	}
	if err != nil {
		return nil, err
	}
	w.cache[id] = m
	return m, nil
}

// create creates order id in the store, and keeps it in memory.
func (w *Worker) create(ctx context.Context, id string) (*order.Order, error) {
	m := w.newOrder()
	m.ID = id
	m.SetStore(w.DB.Store)
	if err := m.Create(ctx, order.OrderInput{Actor: w.Name, At: w.Clock.Now(), Reason: "order opened"}); err != nil {
		return nil, err
	}
	w.cache[id] = m
	return m, nil
}

// refresh brings order id, found out of date in memory, up to date: with the entries
// other workers committed since its own (fsmrt.CatchUp), or else by loading it again.
func (w *Worker) refresh(ctx context.Context, id string) {
	m, ok := w.cache[id]
	if !ok {
		return
	}
	w.Stats.CatchUps++
	if err := fsmrt.CatchUp(ctx, &m.Machine, w.DB.Store); err != nil {
		delete(w.cache, id) // the next use loads it
	}
}

// newOrder returns a new order with the worker's hooks and clock. The clock is set
// before anything is loaded into it: setting a clock restarts the times it keeps.
func (w *Worker) newOrder() *order.Order {
	m := order.NewOrder(w.hooks)
	m.SetClock(w.Clock)
	m.SetOwner(w.Name, w.EffectLease)
	return m
}

// load replays order id from the store, ready to fire.
func (w *Worker) load(ctx context.Context, id string) (*order.Order, error) {
	w.Stats.Loads++
	m := w.newOrder()
	if err := fsmrt.Replay(ctx, &m.Machine, w.DB.Store, id, nil); err != nil {
		return nil, err
	}
	m.SetStore(w.DB.Store)
	return m, nil
}

// deadlineRounds is how many batches of deadlines a worker handles at a time.
const deadlineRounds = 8

// serve handles the deadlines due, a few small batches of them, and delivers one batch
// of the effects waiting in the outbox. It reports whether a batch was full: there may
// be more.
func (w *Worker) serve(ctx context.Context) bool {
	full := false
	for range deadlineRounds {
		n, err := fsmrt.FireDue(ctx, w.DB.Store, machineName, w.Name, w.Clock.Now(), w.DeadlineLease, w.DeadlineBatch, w.timerLoad)
		w.Stats.Timers += n
		w.failed("timers", err)
		if full = n >= w.DeadlineBatch; !full || err != nil {
			break
		}
	}
	d, err := w.carrier.DeliverEffects(ctx, w.EffectBatch) // the hook counts the deliveries
	w.failed("outbox", err)
	return full || d >= w.EffectBatch
}

// timerLoad gives FireDue the order a deadline belongs to: the one in memory, brought up
// to date first when FireDue found it out of date (another worker moved it on) and asks
// for it fresh.
func (w *Worker) timerLoad(ctx context.Context, id string) (*fsmrt.Machine[order.State, order.Event, fsmrt.NoRole, order.OrderContext, fsmrt.None], error) {
	if fsmrt.FreshLoad(ctx) {
		w.refresh(ctx, id)
	}
	if m, ok := w.cache[id]; ok {
		return &m.Machine, nil
	}
	m, err := w.load(ctx, id)
	if err != nil {
		return nil, err
	}
	w.cache[id] = m
	return &m.Machine, nil
}

// failed logs an error of the timers or the outbox; what failed is tried again later.
func (w *Worker) failed(what string, err error) {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, errFlaky) {
		return
	}
	w.Stats.Errors++
	if w.Log != nil {
		fmt.Fprintf(w.Log, "%s: %s: %v\n", w.Name, what, err)
	}
}
