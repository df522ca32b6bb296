package postgres

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/fsmgen/fsmgen/fsmrt"
)

// deliveredAt returns the delivery time of each effect of instance ("grouped", id), in
// order; the zero time for one not delivered.
func deliveredAt(t *testing.T, dsn, id string) []time.Time {
	t.Helper()
	rows, err := connect(t, dsn).Query(context.Background(),
		`SELECT coalesce(delivered_at, 'epoch') FROM fsmgen_effects WHERE machine = 'grouped' AND id = $1 ORDER BY seq, idx`, id)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []time.Time
	for rows.Next() {
		var at time.Time
		if err := rows.Scan(&at); err != nil {
			t.Fatal(err)
		}
		if at.Equal(time.Unix(0, 0)) {
			at = time.Time{}
		}
		out = append(out, at.UTC())
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// commitEffects commits entry seq of ("grouped", id) with n effects leased to "w", and
// returns their ids.
func commitEffects(t *testing.T, st *Store, id string, seq int64, n int) []fsmrt.EffectID {
	t.Helper()
	c := testCommit("grouped", id, seq, "", "{}")
	c.Owner, c.LeaseUntil = "w", c.Entry.At.Add(time.Hour)
	var ids []fsmrt.EffectID
	for i := range n {
		c.Effects = append(c.Effects, fsmrt.Effect{Name: "send", Key: fmt.Sprintf("%s/%d/%d", id, seq, i)})
		ids = append(ids, fsmrt.EffectID{Machine: "grouped", ID: id, Seq: seq, Index: i})
	}
	if err := st.Commit(context.Background(), c); err != nil {
		t.Fatalf("commit %s %d: %v", id, seq, err)
	}
	return ids
}

// TestGroupedCompletions: with WithGroupedCompletions, a completion is stored by the
// store's next commit, of any instance, at the time it was given; a refused commit stores
// none and leaves them queued for the next one; Close stores those left.
func TestGroupedCompletions(t *testing.T) {
	ctx := context.Background()
	dsn := newDatabase(t)
	st, err := Open(ctx, dsn, WithGroupedCompletions(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ids := commitEffects(t, st, "a", 1, 2)
	delivered := time.Date(2026, 5, 6, 7, 8, 9, 123456000, time.UTC)
	if err := st.CompleteEffects(ctx, ids, delivered); err != nil {
		t.Fatal(err)
	}
	if got := deliveredAt(t, dsn, "a"); !got[0].IsZero() || !got[1].IsZero() {
		t.Fatalf("stored before any commit: %v", got)
	}

	// A refused commit (a conflict of the version) stores nothing.
	err = st.Commit(ctx, testCommit("grouped", "a", 5, "", "{}"))
	if !errors.Is(err, fsmrt.ErrStoreConflict) {
		t.Fatalf("a commit at the wrong version: %v", err)
	}
	if got := deliveredAt(t, dsn, "a"); !got[0].IsZero() {
		t.Fatalf("stored by a refused commit: %v", got)
	}

	// The next commit, of another instance, stores them.
	later := commitEffects(t, st, "b", 1, 1)
	if got := deliveredAt(t, dsn, "a"); !got[0].Equal(delivered) || !got[1].Equal(delivered) {
		t.Fatalf("after the next commit: %v, want both at %v", got, delivered)
	}
	if got := deliveredAt(t, dsn, "b"); !got[0].IsZero() {
		t.Fatalf("the committing instance's own effect: %v", got)
	}

	// Close stores those still queued.
	if err := st.CompleteEffects(ctx, later, delivered.Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	st.Close()
	if got := deliveredAt(t, dsn, "b"); !got[0].Equal(delivered.Add(time.Second)) {
		t.Fatalf("after Close: %v", got)
	}
}

// TestGroupedCompletionsWithin: with no commit to carry them, the completions queued are
// stored by themselves once the delay has passed, and no claim gets their effects.
func TestGroupedCompletionsWithin(t *testing.T) {
	ctx := context.Background()
	dsn := newDatabase(t)
	st := openStore(t, dsn, WithGroupedCompletions(50*time.Millisecond))
	ids := commitEffects(t, st, "a", 1, 3)
	delivered := time.Date(2026, 5, 6, 7, 8, 9, 0, time.UTC)
	if err := st.CompleteEffects(ctx, ids, delivered); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		got := deliveredAt(t, dsn, "a")
		if got[0].Equal(delivered) && got[1].Equal(delivered) && got[2].Equal(delivered) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("not stored after 20 s: %v", got)
		}
		time.Sleep(20 * time.Millisecond)
	}
	pending, err := st.ClaimEffects(ctx, "grouped", "x", delivered.Add(48*time.Hour), time.Minute, 10)
	if err != nil || len(pending) != 0 {
		t.Errorf("claimed after the completions were stored: %v, %v", describeEffects(pending), err)
	}
}
