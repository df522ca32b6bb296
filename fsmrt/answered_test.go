package fsmrt

import (
	"testing"
)

// TestAnswered: a firing answered by its idempotency key says so (Answered), where it
// returned the original target and no error, as a fresh acceptance does.
func TestAnswered(t *testing.T) {
	r := newRig()
	steps := []struct {
		e        tEvent
		key      string
		err      bool
		answered bool
	}{
		{eSubmit, "k1", false, false}, // accepted
		{eSubmit, "k1", false, true},  // the same key and event: answered
		{eComment, "", false, false},  // accepted, no key
		{eSubmit, "k1", false, true},  // answered, from review
		{eClose, "", true, true},      // refused: the last firing without an error was answered
		{eSubmit, "k2", true, true},   // refused (review does not take submit)
		{eComment, "k1", true, true},  // the key of another event: refused
		{eComment, "k3", false, false},
	}
	for i, s := range steps {
		_, err := r.m.FireWith(bg, s.e, tIn{Key: s.key, Role: rAdmin})
		if (err != nil) != s.err || r.m.Answered() != s.answered {
			t.Errorf("step %d: %s with %q: %v, answered %v, want %v", i, s.e, s.key, err, r.m.Answered(), s.answered)
		}
	}
	// Across processes: another machine loaded from the store answers a key of the log.
	st := newStore()
	r = newRig()
	r.m.SetStore(st)
	r.fire(t, eSubmit, tIn{Key: "k1"})
	l := attach(r.d)
	if err := Replay(bg, l.m, st, "doc-1", nil); err != nil {
		t.Fatal(err)
	}
	l.m.SetStore(st)
	if to, err := l.m.FireWith(bg, eSubmit, tIn{Key: "k1"}); to != sReview || err != nil || !l.m.Answered() || l.m.Seq() != 1 {
		t.Errorf("replayed machine: %s, %v, answered %v", to, err, l.m.Answered())
	}
	if _, err := l.m.Fire(bg, eComment); err != nil || l.m.Answered() {
		t.Errorf("after a transition: %v, answered %v", err, l.m.Answered())
	}
}
