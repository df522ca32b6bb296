package fsmrt

import (
	"context"
	"time"
)

// Ready reports, without sleeping, whether there may be work now, for a loop that is busy
// with other work (firing events) and serves its deadlines and effects in between: the
// nearest work the store named last falls due, or, once every polling interval, the store
// says there is work due (NextWork). A wake-up makes no difference to a busy loop but
// which answer it gets at the next interval; what the Waiter knows is due needs no
// question. With a store that is not a Waker it says yes once every polling interval. An
// error from the store says yes: the loop's claims will see.
func (w *Waiter) Ready(ctx context.Context) bool {
	if w.isNext && !w.next.After(w.clock.Now()) {
		w.isNext = false // the loop serves it now; what is due after it, the store says
		w.Timed++
		return true
	}
	now := time.Now()
	if now.Sub(w.asked) < w.poll {
		return false
	}
	w.asked = now
	if w.waker == nil {
		w.Polls++
		return true
	}
	select {
	case <-w.watch.C():
		w.Wakes++
	default:
		w.Polls++
	}
	w.isNext = false
	at, ok, err := w.waker.NextWork(ctx, w.machine)
	switch {
	case err != nil:
		return true
	case !ok:
		return false
	}
	if _, due := w.until(at); due {
		return true
	}
	if !at.After(w.clock.Now()) {
		return false // due, but someone else's: the same work as last time
	}
	w.next, w.isNext = at, true
	return false
}
