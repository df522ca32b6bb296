package otel

import (
	"context"
	"fmt"

	"github.com/fsmgen/fsmgen/fsmrt"
	"go.opentelemetry.io/otel/metric"
)

// Names returns the spec names of xs (a generated States(), say), for ObserveStore.
func Names[T fmt.Stringer](xs []T) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = x.String()
	}
	return out
}

// pageSize is how many instances a gauge's callback reads at a time.
const pageSize = 1000

// ObserveStore adds, for machine (its Spec.Name, "review.Task") stored in store, observable
// gauges read when metrics are collected: fsm.instances, the instances in each of states
// (the spec's states, labelled by name), and, when the store reads what it owes
// (fsmrt.PendingReader), fsm.outbox.depth, its effects not delivered yet, and
// fsm.deadlines.pending, its deadlines not handled yet. Each collection queries the store:
// collect as often as the store can afford.
func ObserveStore(mp metric.MeterProvider, store fsmrt.Store, machine string, states []string) error {
	m := mp.Meter(Scope)
	instances, err := m.Int64ObservableGauge("fsm.instances", metric.WithDescription("Stored instances, by machine and state."))
	if err != nil {
		return err
	}
	observables := []metric.Observable{instances}
	pending, reads := store.(fsmrt.PendingReader)
	var outbox, deadlines metric.Int64ObservableGauge
	if reads {
		if outbox, err = m.Int64ObservableGauge("fsm.outbox.depth", metric.WithDescription("Effects not delivered yet, by machine.")); err != nil {
			return err
		}
		if deadlines, err = m.Int64ObservableGauge("fsm.deadlines.pending", metric.WithDescription("Deadlines not handled yet, by machine.")); err != nil {
			return err
		}
		observables = append(observables, outbox, deadlines)
	}
	_, err = m.RegisterCallback(func(ctx context.Context, o metric.Observer) error {
		for _, s := range states {
			n, err := count(ctx, store, fsmrt.Query{Machine: machine, States: []string{s}})
			if err != nil {
				return err
			}
			o.ObserveInt64(instances, n, metric.WithAttributes(AttrMachine.String(machine), AttrState.String(s)))
		}
		if reads {
			effects, err := pending.PendingEffects(ctx, fsmrt.PendingQuery{Machine: machine})
			if err != nil {
				return err
			}
			o.ObserveInt64(outbox, int64(len(effects)), metric.WithAttributes(AttrMachine.String(machine)))
			dls, err := pending.PendingDeadlines(ctx, fsmrt.PendingQuery{Machine: machine})
			if err != nil {
				return err
			}
			o.ObserveInt64(deadlines, int64(len(dls)), metric.WithAttributes(AttrMachine.String(machine)))
		}
		return nil
	}, observables...)
	return err
}

// count counts the instances q selects, a page at a time.
func count(ctx context.Context, store fsmrt.Store, q fsmrt.Query) (int64, error) {
	q.Limit = pageSize
	var n int64
	for {
		page, err := store.Find(ctx, q)
		if err != nil {
			return 0, err
		}
		n += int64(len(page))
		if len(page) < pageSize {
			return n, nil
		}
		q.After = page[len(page)-1].ID
	}
}
