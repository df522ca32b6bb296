package scaleout

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/fsmgen/fsmgen/store/postgres/pgtest"
)

// TestLatency runs the latency measurement's cases small (cmd/latency runs them at size
// and writes the table): with loops that poll and loops the store wakes, on SQLite and
// PostgreSQL, every deadline is handled and every effect delivered once, and the woken
// loops were woken. It asserts no time: the command reports them.
func TestLatency(t *testing.T) {
	ctx := context.Background()
	srv := pgtest.New(t, pgtest.Options{})
	for _, kind := range []string{SQLite, Postgres} {
		for _, woken := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/woken=%v", kind, woken), func(t *testing.T) {
				where := filepath.Join(t.TempDir(), "orders.db")
				if kind == Postgres {
					var err error
					if where, err = srv.CreateDatabase(ctx, fmt.Sprintf("latency_%v", woken)); err != nil {
						t.Fatal(err)
					}
				}
				ctx, cancel := context.WithTimeout(ctx, time.Minute)
				defer cancel()
				res, err := MeasureLatency(ctx, LatencyConfig{Kind: kind, Where: where, Workers: 2, Woken: woken,
					Poll: 50 * time.Millisecond, Holds: 5, Ships: 5, Spacing: 10 * time.Millisecond, Speed: 480})
				if err != nil {
					t.Fatal(err)
				}
				t.Logf("deadlines p50 %v p99 %v, effects p50 %v p99 %v; waits woken %d, timed %d, polled %d",
					Percentile(res.Deadlines, 50), Percentile(res.Deadlines, 99), Percentile(res.Effects, 50),
					Percentile(res.Effects, 99), res.Wakes, res.Timed, res.Polls)
				if len(res.Effects) != 5 {
					t.Errorf("%d effects delivered, want 5", len(res.Effects))
				}
				if woken != (res.Wakes > 0) {
					t.Errorf("woken loops: %v, but %d Waits ended by a wake-up", woken, res.Wakes)
				}
			})
		}
	}
}
