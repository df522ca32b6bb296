package postgres

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/fsmgen/fsmgen/fsmrt"
)

// committer is what the benchmarks measure: Store.Commit, or the floor.
type committer func(ctx context.Context, c *fsmrt.Commit) error

// BenchmarkCommit measures Store.Commit against its floor, a hand-written transaction
// of one UPDATE ... WHERE version = $n (one INSERT for a new instance) and one INSERT of
// the entry, on the same tables: one instance committed version after version, and one
// instance per goroutine committed in parallel.
func BenchmarkCommit(b *testing.B) {
	dsn := newDatabase(b)
	st := openStore(b, dsn)
	floor := newFloor(st.pool)
	for _, c := range []struct {
		name   string
		commit committer
	}{{"store", st.Commit}, {"floor", floor.commit}} {
		b.Run(c.name+"/serial", func(b *testing.B) { benchSerial(b, c.commit) })
		b.Run(c.name+"/parallel", func(b *testing.B) { benchParallel(b, c.commit) })
	}
}

var benchInstances atomic.Int64

// benchSerial commits versions 1 to b.N of a new instance.
func benchSerial(b *testing.B, commit committer) {
	ctx := context.Background()
	id := fmt.Sprint("serial-", benchInstances.Add(1))
	b.ReportAllocs()
	for seq := int64(1); seq <= int64(b.N); seq++ {
		if err := commit(ctx, testCommit("bench", id, seq, "", `{"event":"go"}`)); err != nil {
			b.Fatal(err)
		}
	}
}

// benchParallel commits versions of a new instance in every goroutine.
func benchParallel(b *testing.B, commit committer) {
	ctx := context.Background()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		id := fmt.Sprint("parallel-", benchInstances.Add(1))
		for seq := int64(1); pb.Next(); seq++ {
			if err := commit(ctx, testCommit("bench", id, seq, "", `{"event":"go"}`)); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// floor is the least a commit can do: begin, write the instance at its version, insert
// the entry, commit.
type floor struct{ pool *pgxpool.Pool }

func newFloor(pool *pgxpool.Pool) *floor { return &floor{pool: pool} }

const (
	floorCreate = `INSERT INTO fsmgen_instances (machine, id, spec, version, state, updated_at, last_at)
		VALUES ($1, $2, $3, $4, $5, now(), $6)`
	floorUpdate = `UPDATE fsmgen_instances SET version = $4, state = $5, updated_at = now(), last_at = $6
		WHERE machine = $1 AND id = $2 AND spec = $3 AND version = $4 - 1`
	floorEntry = `INSERT INTO fsmgen_entries (machine, id, seq, kind, event, from_state, to_state, at, idem_key, data)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`
)

var errFloorConflict = errors.New("floor: version conflict")

func (f *floor) commit(ctx context.Context, c *fsmrt.Commit) error {
	return pgx.BeginFunc(ctx, f.pool, func(tx pgx.Tx) error {
		sql := floorUpdate
		if c.Version == 0 {
			sql = floorCreate
		}
		tag, err := tx.Exec(ctx, sql, c.Machine, c.ID, c.Spec, c.Entry.Seq, c.State, c.Entry.At)
		if err != nil {
			return err
		}
		if tag.RowsAffected() != 1 {
			return errFloorConflict
		}
		e := &c.Entry
		var key any
		if e.Key != "" {
			key = e.Key
		}
		_, err = tx.Exec(ctx, floorEntry, c.Machine, c.ID, e.Seq, e.Kind, e.Event, e.From, e.To, e.At, key, e.Data)
		return err
	})
}
