package storetest

import (
	"context"
	"maps"
	"testing"
	"time"

	"github.com/fsmgen/fsmgen/fsmrt"
)

// testCountByState: a store that counts by state (fsmrt.StateCounter) counts what Find
// lists, page aside, for every kind of condition and their combination.
func testCountByState(t *testing.T, s *suite) {
	sc := optional[fsmrt.StateCounter](t, s, "fsmrt.StateCounter")
	ctx := context.Background()
	// Nine instances: seqs 1 to 3 (states b, a, b), counters and deadlines by instance.
	for i := range 9 {
		id := s.id(string(rune('a' + i)))
		for seq := int64(1); seq <= int64(i%3)+1; seq++ {
			c := s.commit(id, seq, "", false)
			c.Counters = []fsmrt.CounterValue{{Name: "tries", Value: i + 1}}
			c.Rearm, c.Deadlines = true, []fsmrt.Deadline{dl("warn", at(int64(10*i)), "", 1)}
			if err := s.Commit(ctx, c); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, q := range []fsmrt.Query{
		{},
		{States: []string{"a"}},
		{States: []string{"a", "b", "c"}},
		{Deadline: "warn", Due: at(45)},
		{Counter: "tries", AtLeast: 4},
		{States: []string{"b"}, Deadline: "warn", Due: at(70), Counter: "tries", AtLeast: 2},
		{States: []string{"nowhere"}},
		{After: s.id("c"), Limit: 2}, // the page is not counted
	} {
		q.Machine = s.machine
		got, err := sc.CountByState(ctx, q)
		if err != nil {
			t.Fatalf("count %+v: %v", q, err)
		}
		all := q
		all.After, all.Limit = "", 0
		found, err := s.Find(ctx, all)
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]int{}
		for _, in := range found {
			want[in.State]++
		}
		if !maps.Equal(got, want) {
			t.Errorf("count %+v = %v; Find lists %v", q, got, want)
		}
	}
	other := fsmrt.Query{Machine: s.machine + ".other", Due: time.Now()}
	if got, err := sc.CountByState(ctx, other); err != nil || len(got) != 0 {
		t.Errorf("count of a machine with no instance: %v, %v", got, err)
	}
}
