package storetest

import (
	"context"
	"fmt"
	"reflect"
	"testing"

	"github.com/fsmgen/fsmgen/fsmrt"
)

// testFindIdleAndEffects: Find's conditions on the time of an instance's last entry
// (IdleSince) and on its effects (pending, failing), alone and with the others, and
// CountByState's counts of them for a store that counts.
func testFindIdleAndEffects(t *testing.T, s *suite) {
	ctx := context.Background()
	// a: 1 entry, its effect pending. b: 2 entries, its effect failing (where the store
	// keeps errors). c: 3 entries, its effect delivered. d: 4 entries, no effect.
	a, b, c, d := s.id("a"), s.id("b"), s.id("c"), s.id("d")
	for i, id := range []string{a, b, c} {
		last := int64(i) + 1
		for seq := int64(1); seq <= last; seq++ {
			effects := 0
			if seq == last {
				effects = 1
			}
			s.commitEffects(t, id, seq, effects, "", at(0))
		}
	}
	s.commitAll(t, d, 4)
	rec, keeps := s.Store.(fsmrt.EffectErrorRecorder)
	if keeps {
		if err := rec.RecordEffectError(ctx, fsmrt.EffectID{Machine: s.machine, ID: b, Seq: 2, Index: 0}, "down", at(20)); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.CompleteEffects(ctx, []fsmrt.EffectID{{Machine: s.machine, ID: c, Seq: 3, Index: 0}}, at(30)); err != nil {
		t.Fatal(err)
	}
	failing := []string{b + "@2"}
	if !keeps {
		failing = []string{}
	}
	for _, tc := range []struct {
		name string
		q    fsmrt.Query
		want []string
	}{
		// Entries are at(seq): idle since at(2) are those whose last entry is at(1) or at(2).
		{"idle", fsmrt.Query{IdleSince: at(2)}, []string{a + "@1", b + "@2"}},
		{"idle, to the microsecond", fsmrt.Query{IdleSince: at(2).Add(-1000)}, []string{a + "@1"}},
		{"idle, all", fsmrt.Query{IdleSince: at(4)}, []string{a + "@1", b + "@2", c + "@3", d + "@4"}},
		{"pending", fsmrt.Query{Effects: fsmrt.EffectsPending}, []string{a + "@1", b + "@2"}},
		{"failing", fsmrt.Query{Effects: fsmrt.EffectsFailing}, failing},
		{"pending, idle, in b", fsmrt.Query{Effects: fsmrt.EffectsPending, IdleSince: at(3), States: []string{"b"}}, []string{a + "@1"}},
		{"pending, paged", fsmrt.Query{Effects: fsmrt.EffectsPending, After: a, Limit: 1}, []string{b + "@2"}},
	} {
		q := tc.q
		q.Machine = s.machine
		got, err := s.Find(ctx, q)
		if err != nil {
			t.Fatalf("find %s: %v", tc.name, err)
		}
		ids := []string{}
		for _, in := range got {
			ids = append(ids, fmt.Sprintf("%s@%d", in.ID, in.Version))
		}
		if !reflect.DeepEqual(ids, tc.want) {
			t.Errorf("find %s = %v, want %v", tc.name, ids, tc.want)
		}
		if sc, ok := s.Store.(fsmrt.StateCounter); ok {
			n, err := sc.CountByState(ctx, q)
			if err != nil {
				t.Fatal(err)
			}
			all := q
			all.After, all.Limit = "", 0
			listed, _ := s.Find(ctx, all)
			if total := sum(n); total != len(listed) {
				t.Errorf("count %s = %v, Find lists %d", tc.name, n, len(listed))
			}
		}
	}
}

func sum(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}
