package storetest

import (
	"cmp"
	"context"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/fsmgen/fsmgen/fsmrt"
)

// testIndexRows: a store that reads its rows (fsmrt.IndexReader) returns those its
// commits wrote: the instance's state, version and time of its last entry, its counters
// (only those not zero, as the last commit that set them says), and its deadlines, those a
// scheduler handled marked so, those a rearm replaced gone.
func testIndexRows(t *testing.T, s *suite) {
	ir := optional[fsmrt.IndexReader](t, s, "fsmrt.IndexReader")
	ctx := context.Background()
	id := s.id("m")
	rows := func() fsmrt.IndexRows {
		t.Helper()
		r, err := ir.IndexRows(ctx, s.machine, id)
		if err != nil {
			t.Fatal(err)
		}
		slices.SortFunc(r.Counters, func(a, b fsmrt.CounterValue) int {
			return cmp.Or(cmp.Compare(a.Name, b.Name), cmp.Compare(a.State, b.State))
		})
		slices.SortFunc(r.Deadlines, func(a, b fsmrt.IndexDeadline) int { return cmp.Compare(a.Name, b.Name) })
		for i := range r.Deadlines {
			r.Deadlines[i].At = r.Deadlines[i].At.UTC()
		}
		r.Instance.UpdatedAt = r.Instance.UpdatedAt.UTC()
		return r
	}
	if r := rows(); !reflect.DeepEqual(r, fsmrt.IndexRows{}) {
		t.Fatalf("rows of an instance never committed: %+v", r)
	}
	c := s.commit(id, 1, "", false)
	c.Counters = []fsmrt.CounterValue{{Name: "tries", Value: 2}, {Name: "visits", State: "b", Value: 1}}
	c.Rearm, c.Deadlines = true, []fsmrt.Deadline{dl("warn", at(80), "", 1), dl("expiry", at(100), "expire", 0)}
	if err := s.Commit(ctx, c); err != nil {
		t.Fatal(err)
	}
	utc := func(ds ...fsmrt.Deadline) []fsmrt.IndexDeadline {
		var out []fsmrt.IndexDeadline
		for _, d := range ds {
			d.At = d.At.UTC().Truncate(time.Microsecond)
			out = append(out, fsmrt.IndexDeadline{Deadline: d})
		}
		slices.SortFunc(out, func(a, b fsmrt.IndexDeadline) int { return cmp.Compare(a.Name, b.Name) })
		return out
	}
	want := fsmrt.IndexRows{
		Instance:  fsmrt.Instance{ID: id, State: "b", Version: 1, UpdatedAt: at(1).UTC().Truncate(time.Microsecond)},
		Counters:  []fsmrt.CounterValue{{Name: "tries", Value: 2}, {Name: "visits", State: "b", Value: 1}},
		Deadlines: utc(dl("warn", at(80), "", 1), dl("expiry", at(100), "expire", 0)),
	}
	if r := rows(); !reflect.DeepEqual(r, want) {
		t.Fatalf("rows after the first commit:\n got %+v\nwant %+v", r, want)
	}
	// The warning handled: still a row, handled.
	if got := s.claimDue(t, "s", at(90)); len(got) != 1 {
		t.Fatalf("claimed %v", got)
	}
	c = s.commit(id, 2, "", false)
	c.Fired, c.Counters = "warn", []fsmrt.CounterValue{{Name: "tries", Value: 3}}
	if err := s.Commit(ctx, c); err != nil {
		t.Fatal(err)
	}
	want.Instance.State, want.Instance.Version, want.Instance.UpdatedAt = "a", 2, at(2).UTC().Truncate(time.Microsecond)
	want.Counters = []fsmrt.CounterValue{{Name: "tries", Value: 3}}
	want.Deadlines[1].Handled = true // expiry, warn: warn is second
	if r := rows(); !reflect.DeepEqual(r, want) {
		t.Fatalf("rows after the warning was handled:\n got %+v\nwant %+v", r, want)
	}
	// A rearm replaces them all.
	c = s.commit(id, 3, "", false)
	c.Counters = []fsmrt.CounterValue{{Name: "tries", Value: 3}}
	c.Rearm, c.Deadlines = true, []fsmrt.Deadline{dl("expiry", at(200), "expire", 0)}
	if err := s.Commit(ctx, c); err != nil {
		t.Fatal(err)
	}
	want.Instance.State, want.Instance.Version, want.Instance.UpdatedAt = "b", 3, at(3).UTC().Truncate(time.Microsecond)
	want.Deadlines = utc(dl("expiry", at(200), "expire", 0))
	if r := rows(); !reflect.DeepEqual(r, want) {
		t.Fatalf("rows after a rearm:\n got %+v\nwant %+v", r, want)
	}
}
