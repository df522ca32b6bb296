package scaleout

import (
	"fmt"
	"math/rand/v2"

	"github.com/fsmgen/fsmgen/examples/scaleout/order"
)

// Plan is the workload of a run, the same in every process that computes it: Events
// events spread over Instances orders, shared out among Workers workers. Seed makes it
// deterministic: a worker restarted after a kill is given the same list again.
type Plan struct {
	Seed      uint64
	Instances int
	Events    int
	Workers   int
}

// Kind says what a planned event is to the idempotency keys.
type Kind uint8

const (
	// Fresh is an event with a key of its own: it must be applied exactly once.
	Fresh Kind = iota
	// Duplicate repeats an earlier event of the order, key and event alike: the key
	// answers it without a second transition.
	Duplicate
	// KeyConflict reuses the key of an earlier event of the order with another event: it
	// must be refused (an idempotency conflict) and never applied.
	KeyConflict
)

// The make-up of an order's events, in percent.
const (
	duplicatePercent   = 8  // of the events after the first
	keyConflictPercent = 4  // of the events after the first
	contendedPercent   = 10 // of the fresh events: fired by two workers at once
	holdPercent        = 5  // of the fresh events; the rest are adds and advances
	advancePercent     = 38
)

// Item is one planned event.
type Item struct {
	// Instance is the order's index, Slot the event's position among its events.
	Instance, Slot int
	Key            string
	Event          order.Event
	Kind           Kind
	// Contended says the event is also given to the next worker, which fires it
	// concurrently: one of the two commits it, the other loses a race or finds the key.
	Contended bool
}

// ID returns the ID of order i.
func (p Plan) ID(i int) string { return fmt.Sprintf("order-%05d", i) }

// Owner returns the worker that owns order i: the one that fires all its events.
func (p Plan) Owner(i int) int { return i % max(p.Workers, 1) }

// count returns how many events order i has.
func (p Plan) count(i int) int {
	n := p.Events / p.Instances
	if i < p.Events%p.Instances {
		n++
	}
	return n
}

// Items returns the events of order i, in the order its owner fires them.
func (p Plan) Items(i int) []Item {
	rng := rand.New(rand.NewPCG(p.Seed, uint64(i)))
	n := p.count(i)
	items := make([]Item, 0, n)
	var fresh []int // the positions of the fresh events so far
	for k := range n {
		it := Item{Instance: i, Slot: k}
		switch r := rng.IntN(100); {
		case len(fresh) > 0 && r < duplicatePercent:
			o := items[fresh[rng.IntN(len(fresh))]]
			it.Key, it.Event, it.Kind = o.Key, o.Event, Duplicate
		case len(fresh) > 0 && r < duplicatePercent+keyConflictPercent:
			o := items[fresh[rng.IntN(len(fresh))]]
			it.Key, it.Event, it.Kind = o.Key, otherEvent(rng, o.Event), KeyConflict
		default:
			it.Key = fmt.Sprintf("%s/%d", p.ID(i), k)
			it.Event, it.Kind = freshEvent(rng), Fresh
			it.Contended = rng.IntN(100) < contendedPercent
			fresh = append(fresh, k)
		}
		items = append(items, it)
	}
	return items
}

// freshEvent draws the event of a fresh item.
func freshEvent(rng *rand.Rand) order.Event {
	switch r := rng.IntN(100); {
	case r < holdPercent:
		return order.EventHold
	case r < holdPercent+advancePercent:
		return order.EventAdvance
	}
	return order.EventAdd
}

// otherEvent draws an event a worker fires that is not e.
func otherEvent(rng *rand.Rand, e order.Event) order.Event {
	fired := []order.Event{order.EventAdd, order.EventAdvance, order.EventHold}
	for {
		if o := fired[rng.IntN(len(fired))]; o != e {
			return o
		}
	}
}

// ForWorker returns the events worker w fires, in order: the events of the orders it owns
// and the contended events of the orders the worker before it owns, interleaved so that
// every order moves on throughout the run (the first event of each order, then the second
// of each, ...).
func (p Plan) ForWorker(w int) []Item {
	prev := (w + p.Workers - 1) % p.Workers
	var byOrder [][]Item
	for i := range p.Instances {
		switch p.Owner(i) {
		case w, prev:
			byOrder = append(byOrder, p.Items(i))
		default:
			byOrder = append(byOrder, nil)
		}
	}
	var out []Item
	for slot := 0; ; slot++ {
		more := false
		for i, items := range byOrder {
			if slot >= len(items) {
				continue
			}
			more = true
			it := items[slot]
			if p.Owner(i) == w {
				out = append(out, it)
			}
			if it.Contended && p.Owner(i) == prev {
				out = append(out, it)
			}
		}
		if !more {
			return out
		}
	}
}

// Fresh returns the fresh events of order i by key: what its log must hold, each once.
func (p Plan) Fresh(i int) map[string]order.Event {
	out := map[string]order.Event{}
	for _, it := range p.Items(i) {
		if it.Kind == Fresh {
			out[it.Key] = it.Event
		}
	}
	return out
}
