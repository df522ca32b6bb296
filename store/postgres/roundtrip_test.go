package postgres

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/fsmgen/fsmgen/fsmrt"
)

// countingConn counts the writes to a connection: pgx writes once per round trip.
type countingConn struct {
	net.Conn
	writes *atomic.Int64
}

// Write counts a write.
func (c countingConn) Write(p []byte) (int, error) {
	c.writes.Add(1)
	return c.Conn.Write(p)
}

// countingPool returns a pool of one connection on dsn whose writes are counted.
func countingPool(t *testing.T, dsn string, writes *atomic.Int64) *pgxpool.Pool {
	t.Helper()
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		t.Fatal(err)
	}
	cfg.MaxConns = 1
	cfg.ShouldPing = func(context.Context, pgxpool.ShouldPingParams) bool { return false }
	var d net.Dialer
	cfg.ConnConfig.DialFunc = func(ctx context.Context, network, addr string) (net.Conn, error) {
		conn, err := d.DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return countingConn{Conn: conn, writes: writes}, nil
	}
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return pool
}

// Once its statements are prepared, a commit is two round trips, whatever it writes (the
// effects, the deadline it handles, the rearm and the counters go in the batch of its
// write); a refusal of the version costs one more, to read why; a read, a find, a claim and
// a completion is one.
func TestRoundTrips(t *testing.T) {
	ctx := context.Background()
	var writes atomic.Int64
	st, err := New(ctx, countingPool(t, newDatabase(t), &writes))
	if err != nil {
		t.Fatal(err)
	}
	roundTrips := func(f func() error) int64 {
		t.Helper()
		before := writes.Load()
		if err := f(); err != nil {
			t.Fatal(err)
		}
		return writes.Load() - before
	}
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	dls := []fsmrt.Deadline{{Name: "warn", At: now, State: "b", Level: 1}, {Name: "expiry", At: now.Add(time.Hour), State: "b", Event: "expire"}}
	// commit commits entry seq of id, changed by with.
	commit := func(id string, seq int64, with func(c *fsmrt.Commit)) func() error {
		return func() error {
			c := testCommit("trips", id, seq, "", "{}")
			with(c)
			return st.Commit(ctx, c)
		}
	}
	plain := func(*fsmrt.Commit) {}
	effects := func(c *fsmrt.Commit) {
		c.Effects = []fsmrt.Effect{{Name: "send", Key: c.ID + "/1", Data: []byte("{}")}, {Name: "mail", Key: c.ID + "/2"}}
		c.Owner, c.LeaseUntil = "me", now.Add(time.Minute)
	}
	arm := func(c *fsmrt.Commit) { c.Rearm, c.Deadlines = true, dls }
	fire := func(c *fsmrt.Commit) { c.Fired = "warn" }
	fireAndArm := func(c *fsmrt.Commit) { c.Fired = "expiry"; arm(c); effects(c) }
	disarm := func(c *fsmrt.Commit) { c.Rearm = true }
	count := func(c *fsmrt.Commit) {
		c.Counters = []fsmrt.CounterValue{{Name: "failures", State: "a", Value: 2}, {Name: "total", Value: int(c.Entry.Seq)}}
	}
	countAndArm := func(c *fsmrt.Commit) { arm(c); count(c) }
	everything := func(c *fsmrt.Commit) { fireAndArm(c); count(c) }
	fireExpiry := func(c *fsmrt.Commit) { c.Fired = "expiry" }
	fireNone := func(c *fsmrt.Commit) { c.Fired = "none" }
	load := func() error { _, err := st.Load(ctx, "trips", "a"); return err }
	log := func() error { _, err := st.Log(ctx, "trips", "a", 0); return err }
	findKey := func() error { _, _, err := st.FindKey(ctx, "trips", "a", "k"); return err }
	find := func(q fsmrt.Query) func() error {
		return func() error {
			q.Machine = "trips"
			_, err := st.Find(ctx, q)
			return err
		}
	}
	findAll := find(fsmrt.Query{})
	findEvery := find(fsmrt.Query{States: []string{"a", "b"}, Deadline: "warn", Due: now, Counter: "total", AtLeast: 1, After: "a", Limit: 10})
	refusedWith := func(id string, seq int64, with func(c *fsmrt.Commit), want error) func() error {
		return func() error {
			if err := commit(id, seq, with)(); !errors.Is(err, want) {
				return fmt.Errorf("commit %d of %s: %v, want %v", seq, id, err, want)
			}
			return nil
		}
	}
	refused := refusedWith("a", 2, plain, fsmrt.ErrStoreConflict)
	claimEffects := func() error { _, err := st.ClaimEffects(ctx, "trips", "w", now, time.Minute, 10); return err }
	claimNone := func() error { _, err := st.ClaimEffects(ctx, "trips", "w", now, time.Minute, 0); return err }
	complete := func() error {
		return st.CompleteEffects(ctx, []fsmrt.EffectID{{Machine: "trips", ID: "a", Seq: 3}, {Machine: "trips", ID: "a", Seq: 3, Index: 1}}, now)
	}
	claimDeadlines := func() error { _, err := st.ClaimDeadlines(ctx, "trips", "w", now, time.Minute, 10); return err }
	// Prepare every statement.
	for _, f := range []func() error{
		commit("a", 1, plain), commit("a", 2, plain), commit("a", 3, effects), commit("a", 4, arm), commit("a", 5, fire),
		commit("a", 6, arm), commit("a", 7, fireAndArm), commit("a", 8, disarm), commit("a", 9, countAndArm),
		commit("a", 10, everything), commit("a", 11, fireExpiry),
		load, log, findKey, findAll, findEvery, refused, refusedWith("a", 12, fireNone, fsmrt.ErrStoreConflict),
		claimEffects, complete, claimDeadlines,
	} {
		roundTrips(f)
	}
	for _, c := range []struct {
		what string
		f    func() error
		want int64
	}{
		{"first commit", commit("b", 1, plain), 2},
		{"next commit", commit("b", 2, plain), 2},
		{"first commit with effects", commit("c", 1, effects), 2},
		{"commit with effects", commit("b", 3, effects), 2},
		{"commit arming deadlines", commit("b", 4, arm), 2},
		{"commit handling a deadline", commit("b", 5, fire), 2},
		{"commit handling a deadline, rearming, with effects", commit("b", 6, fireAndArm), 2},
		{"commit disarming", commit("b", 7, disarm), 2},
		{"commit arming, with counters", commit("b", 8, countAndArm), 2},
		{"commit handling a deadline, rearming, with effects and counters", commit("b", 9, everything), 2},
		{"commit handling a deadline, clearing the counters", commit("b", 10, fireExpiry), 2},
		{"refused commit", refused, 3},
		{"commit refused: no such deadline", refusedWith("b", 11, fireNone, fsmrt.ErrStoreConflict), 2},
		{"commit refused: the deadline handled already", refusedWith("b", 11, fireExpiry, fsmrt.ErrStoreConflict), 2},
		{"load", load, 1},
		{"log", log, 1},
		{"find key", findKey, 1},
		{"find", findAll, 1},
		{"find by every condition", findEvery, 1},
		{"claim effects", claimEffects, 1},
		{"claim no effects", claimNone, 0},
		{"complete effects", complete, 1},
		{"claim deadlines", claimDeadlines, 1},
	} {
		if got := roundTrips(c.f); got != c.want {
			t.Errorf("%s: %d round trips, want %d", c.what, got, c.want)
		}
	}
}
