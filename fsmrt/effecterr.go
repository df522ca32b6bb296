package fsmrt

import (
	"context"
	"log/slog"
	"time"
	"unicode/utf8"
)

// EffectErrorRecorder is implemented by a Store that keeps, for an operator, the error of
// each effect's last failed delivery: the machine records it when the effect's hook fails
// (at commit or in DeliverEffects), and PendingEffects returns it (OwedEffect.LastError,
// FailedAt) until the effect is delivered. It is a separate interface so that a Store
// written before it keeps compiling. MemoryStore and the SQLite and PostgreSQL stores
// implement it, and fsmrt/storetest checks it of every store that does.
type EffectErrorRecorder interface {
	// RecordEffectError records err (at most MaxEffectError bytes of it) as the last error
	// of effect id, failed at at. An effect delivered, or not in the outbox, is left as
	// it is.
	RecordEffectError(ctx context.Context, id EffectID, err string, at time.Time) error
}

// MaxEffectError is the most of an error's text a store keeps for an effect: a receiver's
// error can be a whole response body.
const MaxEffectError = 1 << 10

// EffectErrorText returns err's text cut to MaxEffectError bytes, on a character boundary,
// as a store keeps it.
func EffectErrorText(err string) string {
	if len(err) <= MaxEffectError {
		return err
	}
	cut := MaxEffectError
	for cut > 0 && !utf8.RuneStart(err[cut]) {
		cut--
	}
	return err[:cut]
}

// recordEffectError records the error of effect id in the machine's store when it keeps
// them; a failure to record is logged, never returned: the delivery's own error is what
// counts.
func (m *Machine[S, E, R, C, X]) recordEffectError(ctx context.Context, id EffectID, err error) {
	rec, ok := m.store.(EffectErrorRecorder)
	if !ok {
		return
	}
	if rerr := rec.RecordEffectError(ctx, id, EffectErrorText(err.Error()), m.clockNow()); rerr != nil && m.logger != nil {
		m.logger.LogAttrs(ctx, slog.LevelWarn, "effect error not recorded", slog.String("machine", m.def.Spec.Machine),
			slog.String("id", id.ID), slog.Int64("seq", id.Seq), slog.String("error", rerr.Error()))
	}
}

var _ EffectErrorRecorder = (*MemoryStore)(nil)

// RecordEffectError records the last error of effect id (EffectErrorRecorder).
func (s *MemoryStore) RecordEffectError(ctx context.Context, id EffectID, err string, at time.Time) error {
	if e := ctx.Err(); e != nil {
		return e
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	in, ok := s.instances[[2]string{id.Machine, id.ID}]
	if !ok {
		return nil
	}
	for _, e := range in.effects {
		if e.EffectID == id && e.delivered.IsZero() {
			e.lastError, e.failedAt = EffectErrorText(err), at.Truncate(time.Microsecond)
		}
	}
	return nil
}
