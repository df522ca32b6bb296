package fsmrt

import (
	"fmt"
	"reflect"
	"testing"
	"time"
)

// TestFireDueChainOnSchedule: a late scheduler fires a chain of timeouts as they fell due:
// each expiry at its deadline, so that the state it enters counts its own timeout from
// there (draft expires into review at 10 minutes; review's expiry, 10 minutes on, pauses
// it at 20), where stamping them with the scheduler's time pushed the second one out by
// the scheduler's lag.
func TestFireDueChainOnSchedule(t *testing.T) {
	st := newStore()
	r, load := timerRig(st, draftTimesOut)
	if err := r.m.Create(bg, tIn{}); err != nil {
		t.Fatal(err)
	}
	late := t0.Add(2 * time.Hour) // the scheduler was down for two hours
	total := 0
	for range 10 {
		n, err := FireDue(bg, st, tStoreName, "s1", late, time.Minute, 10, load)
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			break
		}
		total += n
	}
	var got []string
	for _, e := range logOf(t, st) {
		got = append(got, fmt.Sprintf("%s %s->%s@%v", e.Kind, e.From, e.To, e.Timestamp.Sub(t0)))
	}
	want := []string{
		"MACHINE_CREATED draft->draft@0s",
		"TIMEOUT_INFO draft->draft@5m0s",
		"STATE_TRANSITION draft->review@10m0s",
		"TIMEOUT_WARNING review->review@18m0s",
		"STATE_TRANSITION review->paused@20m0s",
	}
	if !reflect.DeepEqual(got, want) || total != 4 {
		t.Errorf("log (%d handled)\n%v\nwant\n%v", total, got, want)
	}
}

// TestFireDueNeverBackInTime: an expiry handled after a later entry of its state (an
// internal transition at 12 minutes, the deadline at 10) is stamped at that entry, not
// before it: the log's times never go back, and it replays.
func TestFireDueNeverBackInTime(t *testing.T) {
	st := newStore()
	r, load := timerRig(st, draftTimesOut)
	if err := r.m.Create(bg, tIn{}); err != nil {
		t.Fatal(err)
	}
	r.fire(t, eComment, tIn{At: t0.Add(12 * time.Minute)}) // internal: draft's deadlines stay
	if n, err := FireDue(bg, st, tStoreName, "s1", t0.Add(30*time.Minute), time.Minute, 10, load); n != 2 || err != nil {
		t.Fatalf("FireDue = %d, %v", n, err)
	}
	log := logOf(t, st)
	for i := 1; i < len(log); i++ {
		if log[i].Timestamp.Before(log[i-1].Timestamp) {
			t.Errorf("entry %d at %v is before entry %d at %v", log[i].Seq, log[i].Timestamp, log[i-1].Seq, log[i-1].Timestamp)
		}
	}
	if e := log[len(log)-1]; e.Kind != KindTransition || e.Event != eSubmit || !e.Timestamp.Equal(t0.Add(12*time.Minute)) || e.Metadata["deadline"] != "" {
		t.Errorf("expiry entry %s %s at %v", e.Kind, e.Event, e.Timestamp.Sub(t0))
	}
	if _, err := load(bg, "doc-1"); err != nil {
		t.Errorf("replay: %v", err)
	}
}
