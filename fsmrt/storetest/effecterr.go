package storetest

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/fsmgen/fsmgen/fsmrt"
)

// testEffectErrors: a store that keeps effects' errors (fsmrt.EffectErrorRecorder) returns
// the last one recorded, and when, with the effect while it is owed; at most
// fsmrt.MaxEffectError bytes of it, on a character boundary; nothing for an effect
// delivered; nothing once the effect is delivered.
func testEffectErrors(t *testing.T, s *suite) {
	rec := optional[fsmrt.EffectErrorRecorder](t, s, "fsmrt.EffectErrorRecorder")
	pr := optional[fsmrt.PendingReader](t, s, "fsmrt.PendingReader")
	ctx := context.Background()
	a := s.id("a")
	s.commitEffects(t, a, 1, 2, "", time.Time{})
	first := fsmrt.EffectID{Machine: s.machine, ID: a, Seq: 1, Index: 0}
	second := fsmrt.EffectID{Machine: s.machine, ID: a, Seq: 1, Index: 1}
	owed := func() map[int]fsmrt.OwedEffect {
		t.Helper()
		es, err := pr.PendingEffects(ctx, fsmrt.PendingQuery{Machine: s.machine, ID: a})
		if err != nil {
			t.Fatal(err)
		}
		out := map[int]fsmrt.OwedEffect{}
		for _, e := range es {
			out[e.Index] = e
		}
		return out
	}
	if o := owed(); o[0].LastError != "" || !o[0].FailedAt.IsZero() {
		t.Fatalf("an effect never failed has an error: %+v", o[0])
	}
	t1, t2 := at(5), at(9)
	for _, e := range []struct {
		id  fsmrt.EffectID
		err string
		at  time.Time
	}{{first, "connection refused", t1}, {first, "503 Service Unavailable: «try later»", t2}, {second, strings.Repeat("é", fsmrt.MaxEffectError), t1}} {
		if err := rec.RecordEffectError(ctx, e.id, e.err, e.at); err != nil {
			t.Fatal(err)
		}
	}
	o := owed()
	if o[0].LastError != "503 Service Unavailable: «try later»" || !o[0].FailedAt.Equal(t2.Truncate(time.Microsecond)) {
		t.Errorf("the last error: %q at %v, want the second at %v", o[0].LastError, o[0].FailedAt, t2)
	}
	if long := o[1].LastError; len(long) > fsmrt.MaxEffectError || len(long) < fsmrt.MaxEffectError-1 || strings.Trim(long, "é") != "" {
		t.Errorf("a long error kept as %d bytes (%q...)", len(long), long[:min(len(long), 8)])
	}
	// Delivered, it is owed no more; a late error changes nothing.
	if err := s.CompleteEffects(ctx, []fsmrt.EffectID{first}, at(10)); err != nil {
		t.Fatal(err)
	}
	if err := rec.RecordEffectError(ctx, first, "late", at(11)); err != nil {
		t.Fatal(err)
	}
	if o := owed(); len(o) != 1 || o[1].LastError == "" {
		t.Errorf("after the first was delivered: %+v", o)
	}
	// An effect not in the outbox is no error.
	if err := rec.RecordEffectError(ctx, fsmrt.EffectID{Machine: s.machine, ID: s.id("none"), Seq: 1}, "x", at(12)); err != nil {
		t.Errorf("the error of an effect not in the outbox: %v", err)
	}
}
