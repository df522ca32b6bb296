package otel

import (
	"context"
	"log/slog"

	"github.com/fsmgen/fsmgen/fsmrt"
)

// LogObserver is an fsmrt.Observer that writes what machines do to a slog.Logger instead
// of spans and metrics: a record per firing (Info when accepted, Warn when refused or
// failed), per commit that failed, per deadline handled and per effect (Warn when it
// failed), with the same attributes as the spans. It keeps nothing and needs no SDK; the
// logger's handler decides where they go (JSON on standard error, say).
type LogObserver struct {
	Logger *slog.Logger
}

var _ fsmrt.Observer = LogObserver{}

// FireStart passes the context on.
func (o LogObserver) FireStart(ctx context.Context, _ *fsmrt.FireInfo) context.Context { return ctx }

// FireEnd logs the firing.
func (o LogObserver) FireEnd(ctx context.Context, f *fsmrt.FireInfo) {
	level, msg := slog.LevelInfo, "fired"
	attrs := []slog.Attr{slog.String(string(AttrMachine), f.Machine), slog.String(string(AttrInstance), f.ID),
		slog.String(string(AttrFrom), f.From), slog.String(string(AttrEvent), f.Event), slog.String(string(AttrTo), f.To)}
	if f.Refusal != "" {
		level, msg = slog.LevelWarn, "refused"
		if f.Refusal == fsmrt.RefusalOther {
			msg = "failed"
		}
		attrs = append(attrs, slog.String(string(AttrRefusal), f.Refusal), slog.String("error", f.Err.Error()))
	}
	o.Logger.LogAttrs(ctx, level, msg, attrs...)
}

// Commit logs a commit that failed (a conflict, a store error).
func (o LogObserver) Commit(ctx context.Context, c *fsmrt.CommitInfo) {
	if c.Err == nil {
		return
	}
	o.Logger.LogAttrs(ctx, slog.LevelWarn, "commit failed", slog.String(string(AttrMachine), c.Machine),
		slog.String(string(AttrInstance), c.ID), slog.Int64("fsm.seq", c.Seq), slog.String("error", c.Err.Error()))
}

// Timer logs a deadline handled, with its lag.
func (o LogObserver) Timer(ctx context.Context, t *fsmrt.TimerInfo) {
	level := slog.LevelInfo
	attrs := []slog.Attr{slog.String(string(AttrMachine), t.Machine), slog.String(string(AttrInstance), t.ID),
		slog.String(string(AttrDeadline), t.Name), slog.Duration("fsm.lag", t.Handled.Sub(t.Due))}
	if t.Err != nil {
		level = slog.LevelWarn
		attrs = append(attrs, slog.String("error", t.Err.Error()))
	}
	o.Logger.LogAttrs(ctx, level, "deadline handled", attrs...)
}

// Effect logs an effect delivered or failed.
func (o LogObserver) Effect(ctx context.Context, e *fsmrt.EffectInfo) {
	level, msg := slog.LevelInfo, "effect delivered"
	attrs := []slog.Attr{slog.String(string(AttrMachine), e.Machine), slog.String(string(AttrInstance), e.ID),
		slog.String(string(AttrEffect), e.Effect), slog.Int("fsm.attempt", e.Attempt)}
	if e.Err != nil {
		level, msg = slog.LevelWarn, "effect failed"
		attrs = append(attrs, slog.String("error", e.Err.Error()))
	}
	o.Logger.LogAttrs(ctx, level, msg, attrs...)
}
