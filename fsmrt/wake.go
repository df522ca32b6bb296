package fsmrt

import (
	"context"
	"sync"
	"time"
)

// Schedulers (FireDue) and effect deliverers (DeliverEffects) run in the caller's loop.
// A loop that only polls either waits for its interval before it sees a deadline fall
// due or an effect committed, or asks the store for nothing most of the time. A store
// that implements Waker lets the loop sleep until there may be work instead: a commit
// that arms a deadline or writes an effect nobody holds wakes the loops watching its
// machine, and the store tells when the nearest deadline falls due or the nearest lease
// runs out. Waiter is that loop's sleep; with a store that is not a Waker it polls.

// Waker is implemented by a store that wakes those waiting for the work of a machine.
// It is a separate interface so that a Store written before it keeps compiling: Waiter
// tests for it with a type assertion.
type Waker interface {
	// WatchWork returns a watch on the work of machine: its channel receives, coalesced,
	// when a commit stored a deadline of machine or an effect of it that nobody holds
	// (and, for a store whose wake-ups may be lost, such as one whose connection broke,
	// whenever it cannot tell), until it is closed.
	WatchWork(machine string) WorkWatch
	// NextWork returns the earliest time, on the clock of those who claim, at which a
	// deadline of machine not handled falls due, or the lease of one of its deadlines or
	// undelivered effects runs out; an effect nobody holds gives its commit's time. ok is
	// false when there is none.
	NextWork(ctx context.Context, machine string) (at time.Time, ok bool, err error)
}

// WorkWatch is a store's watch on the work of one machine (Waker.WatchWork).
type WorkWatch interface {
	// C receives when there may be new work; a receive may be spurious.
	C() <-chan struct{}
	// Close stops the watch.
	Close()
}

// PacedClock is implemented by a Clock that runs at another pace than real time (a clock
// fast-forwarded for tests and simulations): RealTime returns how long, in real time, a
// span of the clock's time lasts. A Waiter sleeps that long for a deadline that far away.
type PacedClock interface {
	Clock
	RealTime(d time.Duration) time.Duration
}

// WaitOptions say how a Waiter waits.
type WaitOptions struct {
	// Clock is the clock the deadlines fall due on: the one the loop claims by (nil: the
	// system clock).
	Clock Clock
	// Poll is the longest a Wait sleeps (real time), the interval at which it polls when
	// the store wakes nobody, or cannot now (DefaultPoll when 0).
	Poll time.Duration
}

// DefaultPoll is a Waiter's polling interval unless WaitOptions.Poll says otherwise.
const DefaultPoll = time.Second

// Waiter sleeps a scheduler's or deliverer's loop until there may be work for one machine
// in a store: a wake-up from a store that is a Waker, the nearest deadline falling due (or
// lease running out), or the polling interval passed, whichever comes first. With a store
// that is not a Waker it sleeps the polling interval. A loop serves, then waits:
//
//	w := fsmrt.NewWaiter(store, machine, fsmrt.WaitOptions{Poll: time.Second})
//	defer w.Close()
//	for ctx.Err() == nil {
//		// FireDueWith and DeliverEffects until a batch comes back short
//		w.Wait(ctx)
//	}
//
// A wake-up that comes while the loop serves is kept for the next Wait, so none is
// lost. A Waiter is used by one goroutine at a time.
type Waiter struct {
	store   Store
	waker   Waker
	watch   WorkWatch
	machine string
	clock   Clock
	poll    time.Duration
	// last is the nearest work NextWork gave the last time it was in the past: the same
	// answer again means the work is someone else's to do (held, or being claimed), and
	// the Waiter does not spin on it.
	last time.Time
	// Wakes counts the Waits (and Readys) a wake-up ended, Timed those the nearest work
	// ended, and Polls those the polling interval ended.
	Wakes, Timed, Polls int
	// Ready's view between two questions to the store (wakeready.go): the nearest work
	// NextWork gave (when isNext), and when, in real time, Ready last asked.
	next   time.Time
	asked  time.Time
	isNext bool
	timer  *time.Timer
	once   sync.Once
}

// NewWaiter returns a Waiter on the work of machine (a Spec.Name) in store. Close it when
// done: it holds the store's watch.
func NewWaiter(store Store, machine string, o WaitOptions) *Waiter {
	w := &Waiter{store: store, machine: machine, clock: o.Clock, poll: o.Poll}
	if w.clock == nil {
		w.clock = SystemClock{}
	}
	if w.poll <= 0 {
		w.poll = DefaultPoll
	}
	if wk, ok := store.(Waker); ok {
		w.waker, w.watch = wk, wk.WatchWork(machine)
	}
	return w
}

// Woken reports whether the Waiter is woken by its store, rather than polling.
func (w *Waiter) Woken() bool { return w.waker != nil }

// Wait sleeps until there may be work, at most the polling interval, or until ctx is done
// (it then returns ctx's error). A store that fails to say when the nearest work is due
// makes it sleep the polling interval, or until woken.
func (w *Waiter) Wait(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	sleep := w.poll
	var wake <-chan struct{}
	timed := false
	if w.waker != nil {
		wake = w.watch.C()
		select {
		case <-wake: // work came while the loop served
			w.Wakes++
			return nil
		default:
		}
		if at, ok, err := w.waker.NextWork(ctx, w.machine); err == nil && ok {
			if d, due := w.until(at); due {
				w.Timed++
				return nil
			} else if d < sleep {
				sleep, timed = d, true
			}
		}
	}
	if w.timer == nil {
		w.timer = time.NewTimer(sleep)
	} else {
		w.timer.Reset(sleep)
	}
	select {
	case <-ctx.Done():
		w.timer.Stop()
		return ctx.Err()
	case <-wake:
		w.timer.Stop()
		w.Wakes++
	case <-w.timer.C:
		if timed {
			w.Timed++
		} else {
			w.Polls++
		}
	}
	return nil
}

// until returns how long, in real time, until the work due at at, or that it is due now:
// at is in the past and not the past work the Waiter saw last (which someone else holds).
func (w *Waiter) until(at time.Time) (time.Duration, bool) {
	now := w.clock.Now()
	if !at.After(now) {
		if at.Equal(w.last) {
			return w.poll, false
		}
		w.last = at
		return 0, true
	}
	d := at.Sub(now)
	if p, ok := w.clock.(PacedClock); ok {
		d = p.RealTime(d)
	}
	// A clock read to the microsecond: wake just after, not just before.
	return d + time.Millisecond, false
}

// Close stops the Waiter's watch.
func (w *Waiter) Close() {
	w.once.Do(func() {
		if w.watch != nil {
			w.watch.Close()
		}
		if w.timer != nil {
			w.timer.Stop()
		}
	})
}

// WorkHub is the in-process side of a Waker: the watches of one store (or of several
// handles on the same database in one process), and Notify to wake those of a machine.
// A store embeds one and calls Notify after each commit that stores a deadline or an
// effect nobody holds. The zero value is ready.
type WorkHub struct {
	mu      sync.Mutex
	watches map[string]map[*hubWatch]struct{}
}

// hubWatch is a watch of a WorkHub.
type hubWatch struct {
	hub     *WorkHub
	machine string
	c       chan struct{}
}

// Watch returns a watch on the work of machine that Notify(machine) and NotifyAll wake.
func (h *WorkHub) Watch(machine string) WorkWatch {
	w := &hubWatch{hub: h, machine: machine, c: make(chan struct{}, 1)}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.watches == nil {
		h.watches = map[string]map[*hubWatch]struct{}{}
	}
	if h.watches[machine] == nil {
		h.watches[machine] = map[*hubWatch]struct{}{}
	}
	h.watches[machine][w] = struct{}{}
	return w
}

// Notify wakes the watches of machine.
func (h *WorkHub) Notify(machine string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for w := range h.watches[machine] {
		w.wake()
	}
}

// NotifyAll wakes every watch: the store cannot tell what it missed.
func (h *WorkHub) NotifyAll() {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, ws := range h.watches {
		for w := range ws {
			w.wake()
		}
	}
}

// Watching returns how many watches are open.
func (h *WorkHub) Watching() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	for _, ws := range h.watches {
		n += len(ws)
	}
	return n
}

// wake makes the watch's channel ready, if it is not already.
func (w *hubWatch) wake() {
	select {
	case w.c <- struct{}{}:
	default:
	}
}

func (w *hubWatch) C() <-chan struct{} { return w.c }

func (w *hubWatch) Close() {
	h := w.hub
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.watches[w.machine], w)
	if len(h.watches[w.machine]) == 0 {
		delete(h.watches, w.machine)
	}
}
