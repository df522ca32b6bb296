package postgres

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/fsmgen/fsmgen/fsmrt"
)

// Two stores on pools of their own, like two processes, race to commit every version of
// one instance: exactly one writer wins each, the others get typed conflicts.
func TestTwoStoresRace(t *testing.T) {
	ctx := context.Background()
	dsn := newDatabase(t)
	stores := []*Store{openStore(t, dsn), openStore(t, dsn)}
	const rounds, writersPerStore = 20, 4
	for seq := int64(1); seq <= rounds; seq++ {
		var wg sync.WaitGroup
		errs := make([]error, len(stores)*writersPerStore)
		for w := range errs {
			st := stores[w%len(stores)]
			wg.Go(func() {
				c := testCommit("race", "one", seq, fmt.Sprintf("key-%d", seq), fmt.Sprintf(`{"writer":%d}`, w))
				if w%3 == 0 {
					c.Snapshot = []byte(fmt.Sprintf(`{"seq":%d}`, seq))
				}
				errs[w] = st.Commit(ctx, c)
			})
		}
		wg.Wait()
		winner := -1
		for w, err := range errs {
			var ce *fsmrt.ConflictError
			var pgErr *pgconn.PgError
			switch {
			case err == nil && winner >= 0:
				t.Fatalf("version %d: writers %d and %d both won", seq, winner, w)
			case err == nil:
				winner = w
			case !errors.As(err, &ce) || !errors.Is(err, fsmrt.ErrStoreConflict) || errors.As(err, &pgErr):
				t.Fatalf("version %d: writer %d: %v, want a ConflictError", seq, w, err)
			case ce.Version != seq-1 || ce.Stored != seq || ce.Key != "" || ce.Machine != "race" || ce.ID != "one":
				t.Errorf("version %d: writer %d: %+v", seq, w, ce)
			}
		}
		if winner < 0 {
			t.Fatalf("version %d: nobody won", seq)
		}
		log, err := stores[int(seq)%2].Log(ctx, "race", "one", seq-1)
		if err != nil {
			t.Fatal(err)
		}
		if len(log) != 1 || string(log[0].Data) != fmt.Sprintf(`{"writer":%d}`, winner) {
			t.Fatalf("version %d: writer %d won, the log has %+v", seq, winner, log)
		}
	}
	for i, st := range stores {
		if l := mustLoad(t, st, "race", "one"); l.Version != rounds {
			t.Errorf("store %d loads version %d", i, l.Version)
		}
		if log := mustLog(t, st, "race", "one"); len(log) != rounds {
			t.Errorf("store %d: %d entries", i, len(log))
		}
	}
}
