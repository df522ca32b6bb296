// Package otel is fsmgen's OpenTelemetry adapter: an fsmrt.Observer that makes a span of
// every firing, store commit, deadline handled and effect delivered, linked to the
// caller's context, and keeps metrics whose labels are the spec's names only (machine,
// states, events, refusal kinds, deadline and effect names), never an instance's ID or a
// value from its context, so that their cardinality is bounded by the spec. It is a module
// of its own: a program that does not use it never downloads the OpenTelemetry SDK.
//
//	obs, err := otel.New(tracerProvider, meterProvider)
//	fsmrt.SetDefaultObserver(obs) // every machine made from now on
package otel

import (
	"context"
	"errors"
	"time"

	"github.com/fsmgen/fsmgen/fsmrt"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"
)

// Scope names the instrumentation scope of the spans and metrics.
const Scope = "github.com/fsmgen/fsmgen/otel"

// The attributes of spans and metrics.
const (
	AttrMachine  = attribute.Key("fsm.machine")
	AttrInstance = attribute.Key("fsm.instance") // spans only
	AttrFrom     = attribute.Key("fsm.from")
	AttrTo       = attribute.Key("fsm.to")
	AttrState    = attribute.Key("fsm.state")
	AttrEvent    = attribute.Key("fsm.event")
	AttrOutcome  = attribute.Key("fsm.outcome") // accepted, refused, failed
	AttrRefusal  = attribute.Key("fsm.refusal")
	AttrDeadline = attribute.Key("fsm.deadline")
	AttrEffect   = attribute.Key("fsm.effect")
)

// Observer is the adapter (fsmrt.Observer).
type Observer struct {
	tracer      trace.Tracer
	transitions metric.Int64Counter
	refusals    metric.Int64Counter
	commits     metric.Float64Histogram
	conflicts   metric.Int64Counter
	timerLag    metric.Float64Histogram
	effects     metric.Int64Counter
}

var _ fsmrt.Observer = (*Observer)(nil)

// New returns an Observer that makes its spans with tp and its metrics with mp.
func New(tp trace.TracerProvider, mp metric.MeterProvider) (*Observer, error) {
	m := mp.Meter(Scope)
	o := &Observer{tracer: tp.Tracer(Scope)}
	var errs []error
	add := func(err error) { errs = append(errs, err) }
	var err error
	o.transitions, err = m.Int64Counter("fsm.transitions", metric.WithDescription("Transitions accepted, by machine, from, to and event."))
	add(err)
	o.refusals, err = m.Int64Counter("fsm.refusals", metric.WithDescription("Firings refused or failed, by machine, state, event and kind."))
	add(err)
	o.commits, err = m.Float64Histogram("fsm.commit.duration", metric.WithUnit("s"), metric.WithDescription("How long the store took to commit a transition."))
	add(err)
	o.conflicts, err = m.Int64Counter("fsm.commit.conflicts", metric.WithDescription("Commits refused as conflicts (optimistic concurrency)."))
	add(err)
	o.timerLag, err = m.Float64Histogram("fsm.timer.lag", metric.WithUnit("s"), metric.WithDescription("From a deadline falling due to its handling."))
	add(err)
	o.effects, err = m.Int64Counter("fsm.effects", metric.WithDescription("Effects delivered or failed, by machine, effect and outcome."))
	add(err)
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return o, nil
}

// FireStart starts the firing's span, a child of the caller's.
func (o *Observer) FireStart(ctx context.Context, f *fsmrt.FireInfo) context.Context {
	ctx, _ = o.tracer.Start(ctx, "fire "+f.Event, trace.WithTimestamp(f.Start), trace.WithAttributes(
		AttrMachine.String(f.Machine), AttrInstance.String(f.ID), AttrFrom.String(f.From), AttrEvent.String(f.Event)))
	return ctx
}

// FireEnd ends the firing's span with its outcome, and counts it.
func (o *Observer) FireEnd(ctx context.Context, f *fsmrt.FireInfo) {
	span := trace.SpanFromContext(ctx)
	outcome := "accepted"
	switch {
	case f.Refusal == fsmrt.RefusalOther:
		outcome = "failed"
		span.RecordError(f.Err)
		span.SetStatus(codes.Error, f.Err.Error())
	case f.Refusal != "":
		outcome = "refused"
	}
	span.SetAttributes(AttrTo.String(f.To), AttrOutcome.String(outcome))
	if f.Refusal != "" {
		span.SetAttributes(AttrRefusal.String(f.Refusal))
	}
	span.End()
	if f.Accepted && f.Refusal == "" {
		o.transitions.Add(ctx, 1, metric.WithAttributes(AttrMachine.String(f.Machine), AttrFrom.String(f.From), AttrTo.String(f.To), AttrEvent.String(f.Event)))
		return
	}
	o.refusals.Add(ctx, 1, metric.WithAttributes(AttrMachine.String(f.Machine), AttrFrom.String(f.From), AttrEvent.String(f.Event), AttrRefusal.String(f.Refusal)))
}

// Commit records the commit as a span of the firing's and measures it.
func (o *Observer) Commit(ctx context.Context, c *fsmrt.CommitInfo) {
	end := time.Now()
	_, span := o.tracer.Start(ctx, "commit", trace.WithTimestamp(end.Add(-c.Took)), trace.WithAttributes(
		AttrMachine.String(c.Machine), AttrInstance.String(c.ID), attribute.Int64("fsm.seq", c.Seq)))
	if c.Err != nil {
		span.RecordError(c.Err)
		span.SetStatus(codes.Error, c.Err.Error())
	}
	span.End(trace.WithTimestamp(end))
	attrs := metric.WithAttributes(AttrMachine.String(c.Machine))
	o.commits.Record(ctx, c.Took.Seconds(), attrs)
	if errors.Is(c.Err, fsmrt.ErrStoreConflict) {
		o.conflicts.Add(ctx, 1, attrs)
	}
}

// Timer records a deadline handled, with its lag.
func (o *Observer) Timer(ctx context.Context, t *fsmrt.TimerInfo) {
	_, span := o.tracer.Start(ctx, "timer "+t.Name, trace.WithAttributes(
		AttrMachine.String(t.Machine), AttrInstance.String(t.ID), AttrDeadline.String(t.Name),
		attribute.String("fsm.due", t.Due.UTC().Format(time.RFC3339Nano))))
	if t.Err != nil {
		span.RecordError(t.Err)
		span.SetStatus(codes.Error, t.Err.Error())
	}
	span.End()
	o.timerLag.Record(ctx, t.Handled.Sub(t.Due).Seconds(), metric.WithAttributes(AttrMachine.String(t.Machine), AttrDeadline.String(t.Name)))
}

// Effect records an effect's delivery.
func (o *Observer) Effect(ctx context.Context, e *fsmrt.EffectInfo) {
	_, span := o.tracer.Start(ctx, "effect "+e.Effect, trace.WithAttributes(
		AttrMachine.String(e.Machine), AttrInstance.String(e.ID), AttrEffect.String(e.Effect), attribute.Int("fsm.attempt", e.Attempt)))
	outcome := "delivered"
	if e.Err != nil {
		outcome = "failed"
		span.RecordError(e.Err)
		span.SetStatus(codes.Error, e.Err.Error())
	}
	span.End()
	o.effects.Add(ctx, 1, metric.WithAttributes(AttrMachine.String(e.Machine), AttrEffect.String(e.Effect), AttrOutcome.String(outcome)))
}
