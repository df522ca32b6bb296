package sqlite

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/fsmgen/fsmgen/fsmrt"
)

// deliveredTimes returns the delivery time of each effect of instance id, in order, in
// Unix microseconds; 0 for one not delivered.
func deliveredTimes(t *testing.T, s *Store, id string) []int64 {
	t.Helper()
	rows, err := s.db.QueryContext(context.Background(),
		`SELECT coalesce(delivered_at, 0) FROM fsmgen_effects WHERE machine = 'test.M' AND id = ? ORDER BY seq, idx`, id)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []int64
	for rows.Next() {
		var at int64
		if err := rows.Scan(&at); err != nil {
			t.Fatal(err)
		}
		out = append(out, at)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// commitEffects commits entry seq of id with n effects leased to "w", and returns their
// ids.
func commitEffects(t *testing.T, s *Store, id string, seq int64, n int) []fsmrt.EffectID {
	t.Helper()
	c := testCommit(id, seq, "", false)
	c.Owner, c.LeaseUntil = "w", c.Entry.At.Add(time.Hour)
	var ids []fsmrt.EffectID
	for i := range n {
		c.Effects = append(c.Effects, fsmrt.Effect{Name: "send", Key: fmt.Sprintf("%s/%d/%d", id, seq, i)})
		ids = append(ids, fsmrt.EffectID{Machine: "test.M", ID: id, Seq: seq, Index: i})
	}
	if err := s.Commit(context.Background(), c); err != nil {
		t.Fatalf("commit %s %d: %v", id, seq, err)
	}
	return ids
}

// TestGroupedCompletions: opened WithGroupedCompletions, the store stores a completion
// with its next commit, of any instance, at the time it was given; a refused commit
// stores none and leaves them queued; Close stores those left; with no commit, they are
// stored by themselves after the delay.
func TestGroupedCompletions(t *testing.T) {
	ctx := context.Background()
	path := tempPath(t)
	s, err := Open(ctx, path, WithGroupedCompletions(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ids := commitEffects(t, s, "a", 1, 2)
	delivered := time.Date(2026, 5, 6, 7, 8, 9, 123456000, time.UTC)
	if err := s.CompleteEffects(ctx, ids, delivered); err != nil {
		t.Fatal(err)
	}
	if got := deliveredTimes(t, s, "a"); got[0] != 0 || got[1] != 0 {
		t.Fatalf("stored before any commit: %v", got)
	}
	if err := s.Commit(ctx, testCommit("a", 5, "", false)); !errors.Is(err, fsmrt.ErrStoreConflict) {
		t.Fatalf("a commit at the wrong version: %v", err)
	}
	if got := deliveredTimes(t, s, "a"); got[0] != 0 {
		t.Fatalf("stored by a refused commit: %v", got)
	}
	later := commitEffects(t, s, "b", 1, 1)
	want := delivered.UnixMicro()
	if got := deliveredTimes(t, s, "a"); got[0] != want || got[1] != want {
		t.Fatalf("after the next commit: %v, want both %d", got, want)
	}
	if got := deliveredTimes(t, s, "b"); got[0] != 0 {
		t.Fatalf("the committing instance's own effect: %v", got)
	}
	if err := s.CompleteEffects(ctx, later, delivered.Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s2 := openStore(t, path, WithGroupedCompletions(20*time.Millisecond))
	if got := deliveredTimes(t, s2, "b"); got[0] != want+1e6 {
		t.Fatalf("after Close: %v", got)
	}

	// No commit: stored by themselves after the delay.
	more := commitEffects(t, s2, "c", 1, 1)
	if err := s2.CompleteEffects(ctx, more, delivered); err != nil {
		t.Fatal(err)
	}
	for start := time.Now(); deliveredTimes(t, s2, "c")[0] != want; time.Sleep(10 * time.Millisecond) {
		if time.Since(start) > 20*time.Second {
			t.Fatal("not stored after 20 s")
		}
	}
}
