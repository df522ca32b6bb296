package fsmrt

import (
	"context"
	"time"
)

// TimerOptions says how a scheduler handles the deadlines that have fallen due
// (FireDueWith, the generated FireDue<Machine>TimersWith): on which clock, as which
// claimer, for how long, how many at a time. The zero value is the system clock, this
// process, DefaultLease and no deadline at all (set Limit).
//
// Every lease is measured on Clock: a claim made at Clock's now runs out at now+lease on
// the same clock, and whoever claims after it (FireDue, DeliverEffects) compares that end
// with its own clock. Processes that share a store must therefore share a clock: the
// system clock, or one fast-forwarded the same way in each (examples/scaleout's Clock).
type TimerOptions struct {
	// Clock is the caller's clock: the deadlines due at its Now are claimed, and the
	// machines loaded to handle them read it for the lease of the effects their
	// transitions schedule and the time of those effects' delivery. Nil: the system
	// clock.
	Clock Clock
	// Owner names the claimer of the deadlines and of those effects ("": this process's
	// host, pid and start time).
	Owner string
	// Lease is how long, on Clock, a claimed deadline stays the Owner's before another
	// scheduler may claim it (DefaultLease when 0): long enough to handle Limit of them.
	Lease time.Duration
	// EffectLease is how long, on Clock, the effects of a transition an expiry fires stay
	// the Owner's while it delivers them, before DeliverEffects in any process may claim
	// them (Lease when 0).
	EffectLease time.Duration
	// Limit is how many deadlines to claim at most.
	Limit int
}

// StoppedClock is a Clock that always reads the same time: the time a scheduler was
// given as now (the generated FireDue<Machine>Timers).
type StoppedClock time.Time

// Now returns the clock's time.
func (c StoppedClock) Now() time.Time { return time.Time(c) }

// FireDueWith claims the deadlines of machines named machine (a Spec.Name) due at
// o.Clock's now and handles each once, as FireDue does, the machines load gives reading
// o.Clock and claiming the effects of the transitions they fire as o.Owner for
// o.EffectLease: the effects' leases run on the clock the deadlines fell due on, which
// DeliverEffects in other processes claims by (with the same clock and SetOwner).
func FireDueWith[S StateType, E, R EnumType, C, X any](ctx context.Context, store Store, machine string, o TimerOptions,
	load func(ctx context.Context, id string) (*Machine[S, E, R, C, X], error)) (int, error) {
	clock := o.Clock
	if clock == nil {
		clock = SystemClock{}
	}
	owner, lease := o.Owner, o.EffectLease
	if owner == "" {
		owner = processOwner
	}
	if lease <= 0 {
		lease = o.Lease
	}
	return FireDue(ctx, store, machine, owner, clock.Now(), o.Lease, o.Limit, func(ctx context.Context, id string) (*Machine[S, E, R, C, X], error) {
		m, err := load(ctx, id)
		if err == nil && m != nil {
			m.clock, m.owner, m.lease = clock, owner, lease
		}
		return m, err
	})
}
