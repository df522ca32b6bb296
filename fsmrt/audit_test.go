package fsmrt

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

// auditRig is a machine with timers and counters stored in a MemoryStore: created, its
// draft timeout's level and expiry armed; submitted and rejected once (a counter), back in
// draft with its deadlines armed again.
func auditRig(t *testing.T) (*rig, *tStore, func() *tMachine) {
	t.Helper()
	st := newStore()
	r := attach(richDef(withTimers, draftTimesOut))
	r.m.SetStore(st)
	if err := r.m.Create(bg, tIn{Actor: "ann"}); err != nil {
		t.Fatal(err)
	}
	r.m.Context.Title = "t"
	r.fire(t, eSubmit, tIn{Actor: "ann"})
	r.clk.add(time.Minute)
	r.fire(t, eReject, tIn{Role: rEditor, Actor: "bob"})
	return r, st, func() *tMachine { return attach(r.d).m }
}

// TestAuditAgrees: the rows a store keeps of a machine it wrote agree with its log.
func TestAuditAgrees(t *testing.T) {
	r, st, newMachine := auditRig(t)
	rows, err := st.IndexRows(bg, tStoreName, "doc-1")
	if err != nil || rows.Instance.Version != 3 || rows.Instance.State != "draft" || len(rows.Counters) == 0 || len(rows.Deadlines) != 2 {
		t.Fatalf("rows %+v, %v", rows, err)
	}
	if err := Audit(bg, st, "doc-1", newMachine); err != nil {
		t.Fatalf("audit of a store as the machine wrote it: %v", err)
	}
	// A level handled stays a row, handled: still in agreement.
	r.clk.add(6 * time.Minute)
	if n, err := FireDue(bg, st, tStoreName, "s", r.clk.Now(), time.Minute, 10, func(_ context.Context, id string) (*tMachine, error) {
		m := newMachine()
		if err := Replay(bg, m, st, id, nil); err != nil {
			return nil, err
		}
		m.SetStore(st)
		return m, nil
	}); err != nil || n != 1 {
		t.Fatalf("the level: %d handled, %v", n, err)
	}
	if err := Audit(bg, st, "doc-1", newMachine); err != nil {
		t.Fatalf("audit after a level was handled: %v", err)
	}
	// An ID the store never saw is not found.
	if err := Audit(bg, st, "nobody", newMachine); !errors.Is(err, ErrNotFound) {
		t.Errorf("audit of an unknown ID: %v", err)
	}
}

// TestAuditDisagrees: each row edited behind the store's back is found, with what the
// row says and what the log says.
func TestAuditDisagrees(t *testing.T) {
	for _, c := range []struct {
		name string
		edit func(in *memInstance)
		want string
	}{
		{"a counter", func(in *memInstance) { in.counters[0].Value += 4 }, `counter "rejections" is 5, the log says 1`},
		{"a counter gone", func(in *memInstance) { in.counters = in.counters[1:] }, `counter "rejections" is 0, the log says 1`},
		{"a counter added", func(in *memInstance) {
			in.counters = append(in.counters, CounterValue{Name: "comments", State: "review", Value: 2})
		}, `counter "comments" in "review" is 2, the log says 0`},
		{"a deadline moved", func(in *memInstance) { in.deadlines[0].At = in.deadlines[0].At.Add(-time.Hour) }, "falls due at"},
		{"a deadline gone", func(in *memInstance) { in.deadlines = in.deadlines[1:] }, "is missing, the log arms it at"},
		{"a deadline added", func(in *memInstance) {
			in.deadlines = append(in.deadlines, &memDeadline{Deadline: Deadline{Name: "level:alert", At: t0}})
		}, `deadline "level:alert" (at ` + t0.UTC().String() + `) is none the log arms`},
		{"the expiry's event", func(in *memInstance) {
			for _, d := range in.deadlines {
				if d.Name == deadlineExpiry {
					d.Event = "approve"
				}
			}
		}, `deadline expiry fires "approve", the log says "submit"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, st, newMachine := auditRig(t)
			c.edit(st.instances[[2]string{tStoreName, "doc-1"}])
			err := Audit(bg, st, "doc-1", newMachine)
			var ae *AuditError
			if !errors.As(err, &ae) || !errors.Is(err, ErrIndexDisagrees) || ae.ID != "doc-1" || ae.Version != 3 || len(ae.Disagreements) != 1 || !strings.Contains(ae.Disagreements[0], c.want) {
				t.Fatalf("audit = %v; want one disagreement saying %q", err, c.want)
			}
		})
	}
}

// TestAuditState: an instance row whose state was edited is refused by the replay Audit
// makes, as a LogError.
func TestAuditState(t *testing.T) {
	_, st, newMachine := auditRig(t)
	st.instances[[2]string{tStoreName, "doc-1"}].state = "approved"
	if err := Audit(bg, st, "doc-1", newMachine); !errors.Is(err, ErrInvalidLog) || !strings.Contains(err.Error(), "the store says the instance is in approved, its snapshot and log in draft") {
		t.Errorf("audit of an edited state: %v", err)
	}
}

// TestAuditNeedsIndexReader: a store that cannot read its rows is refused, saying so.
func TestAuditNeedsIndexReader(t *testing.T) {
	_, st, newMachine := auditRig(t)
	if err := Audit(bg, struct{ Store }{st}, "doc-1", newMachine); err == nil || !strings.Contains(err.Error(), "IndexReader") {
		t.Errorf("audit of a store without IndexRows: %v", err)
	}
}
