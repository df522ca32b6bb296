package fsmrt

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// TestEffectErrorsRecorded: an effect whose hook fails, at commit or when DeliverEffects
// retries it, has its error recorded in the store, on the deliverer's clock, for an
// operator to read with PendingEffects; delivered, it is owed no more.
func TestEffectErrorsRecorded(t *testing.T) {
	st := newStore()
	r, e := effRig()
	r.m.SetStore(st)
	r.m.SetOwner("w1", time.Minute)
	e.fail = errors.New("connection refused")
	r.fire(t, eSubmit, tIn{})
	owed := func() []OwedEffect {
		t.Helper()
		es, err := st.PendingEffects(bg, PendingQuery{Machine: tStoreName})
		if err != nil {
			t.Fatal(err)
		}
		return es
	}
	es := owed()
	if len(es) != 2 || es[0].LastError != "connection refused" || !es[0].FailedAt.Equal(r.clk.t) || es[1].LastError != "connection refused" {
		t.Fatalf("after the commit's delivery failed: %+v", es)
	}
	// Retried later by another process, which fails otherwise: the last error is its.
	w, we := effRig()
	w.m.SetStore(st)
	w.clk.t = r.clk.t.Add(time.Hour)
	we.fail = errors.New(strings.Repeat("x", 5000))
	if n, err := w.m.DeliverEffects(bg, 10); n != 0 || !errors.Is(err, ErrEffect) {
		t.Fatalf("DeliverEffects = %d, %v", n, err)
	}
	es = owed()
	if len(es) != 2 || len(es[0].LastError) != MaxEffectError || !es[0].FailedAt.Equal(w.clk.t) || es[0].Attempts != 2 {
		t.Fatalf("after the retry failed: %d bytes at %v, attempt %d", len(es[0].LastError), es[0].FailedAt, es[0].Attempts)
	}
	we.fail = nil
	w.clk.t = w.clk.t.Add(time.Hour)
	if n, err := w.m.DeliverEffects(bg, 10); n != 2 || err != nil {
		t.Fatalf("DeliverEffects = %d, %v", n, err)
	}
	if es := owed(); len(es) != 0 {
		t.Errorf("delivered effects still owed: %+v", es)
	}
}

// TestEffectErrorText: an error's text is cut to MaxEffectError bytes on a character
// boundary.
func TestEffectErrorText(t *testing.T) {
	for _, c := range []struct {
		in   string
		want int
	}{{"short", 5}, {strings.Repeat("a", MaxEffectError), MaxEffectError}, {"a" + strings.Repeat("€", MaxEffectError), 1 + 3*((MaxEffectError-1)/3)}} {
		if got := EffectErrorText(c.in); len(got) != c.want || !strings.HasPrefix(c.in, got) {
			t.Errorf("%.10q...: %d bytes, want %d", c.in, len(got), c.want)
		}
	}
}
