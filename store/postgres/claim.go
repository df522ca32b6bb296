package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/fsmgen/fsmgen/fsmrt"
)

// ClaimEffects leases to owner, until now+lease, at most limit effects of machine that are
// not delivered and not leased (or whose lease ran out before now), oldest commit first
// (the entry's time, then id, sequence number and position), counting the attempt
// (fsmrt.Store.ClaimEffects). It is one statement in one round trip: it picks and locks the
// effects with FOR UPDATE SKIP LOCKED and leases them, so that claimers running at once, in
// any number of processes, never get the same effect and never wait for each other.
func (s *Store) ClaimEffects(ctx context.Context, machine, owner string, now time.Time, lease time.Duration, limit int) ([]fsmrt.PendingEffect, error) {
	if limit <= 0 {
		return nil, ctx.Err()
	}
	var out []fsmrt.PendingEffect
	scan := func(rows pgx.Rows) error {
		for rows.Next() {
			p := fsmrt.PendingEffect{EffectID: fsmrt.EffectID{Machine: machine}}
			if err := rows.Scan(&p.ID, &p.Seq, &p.Index, &p.Name, &p.Key, &p.Data, &p.Attempts); err != nil {
				return err
			}
			out = append(out, p)
		}
		return rows.Err()
	}
	err := s.readCommitted(ctx, func(b *pgx.Batch) {
		b.Queue(s.sql.claimEffects, machine, owner, micro(now), micro(now.Add(lease)), limit).Query(scan)
	})
	if err != nil {
		return nil, fmt.Errorf("postgres store: claim effects of %q: %w", machine, err)
	}
	return out, nil
}

// CompleteEffects records the effects ids delivered at now (fsmrt.Store.CompleteEffects),
// in one statement and one round trip. Effects already recorded delivered are left as they
// are; ids of no effect are ignored. A store made WithGroupedCompletions queues them
// instead, for its next commit (group.go).
func (s *Store) CompleteEffects(ctx context.Context, ids []fsmrt.EffectID, now time.Time) error {
	if len(ids) == 0 {
		return ctx.Err()
	}
	if s.group.Add(ids, now) {
		return nil
	}
	return s.complete(ctx, completionArgs(ids, func(int) time.Time { return now }))
}

// complete runs the statement of CompleteEffects on its arguments (completionArgs).
func (s *Store) complete(ctx context.Context, args []any) error {
	err := s.readCommitted(ctx, func(b *pgx.Batch) { b.Queue(s.sql.completeEffects, args...) })
	if err != nil {
		return fmt.Errorf("postgres store: complete %d effects: %w", len(args[0].([]string)), err)
	}
	return nil
}

// completionArgs returns the arguments of sqlCompleteEffects: the effects ids, each
// delivered at at(i).
func completionArgs(ids []fsmrt.EffectID, at func(i int) time.Time) []any {
	machines, instances := make([]string, len(ids)), make([]string, len(ids))
	seqs, indexes, times := make([]int64, len(ids)), make([]int32, len(ids)), make([]time.Time, len(ids))
	for i, id := range ids {
		machines[i], instances[i], seqs[i], indexes[i], times[i] = id.Machine, id.ID, id.Seq, int32(id.Index), micro(at(i))
	}
	return []any{machines, instances, seqs, indexes, times}
}

// ClaimDeadlines leases to owner, until now+lease, at most limit deadlines of machine that
// are due (At <= now), not handled, and not leased (or whose lease ran out before now),
// earliest first, then by id and name (fsmrt.Store.ClaimDeadlines). Like ClaimEffects, it
// is one statement in one round trip, with FOR UPDATE SKIP LOCKED.
func (s *Store) ClaimDeadlines(ctx context.Context, machine, owner string, now time.Time, lease time.Duration, limit int) ([]fsmrt.DueDeadline, error) {
	if limit <= 0 {
		return nil, ctx.Err()
	}
	var out []fsmrt.DueDeadline
	scan := func(rows pgx.Rows) error {
		for rows.Next() {
			d := fsmrt.DueDeadline{Machine: machine}
			var level int32
			if err := rows.Scan(&d.ID, &d.Name, &d.At, &d.State, &d.Event, &level); err != nil {
				return err
			}
			d.Level = int(level)
			out = append(out, d)
		}
		return rows.Err()
	}
	err := s.readCommitted(ctx, func(b *pgx.Batch) {
		b.Queue(s.sql.claimDeadlines, machine, owner, micro(now), micro(now.Add(lease)), limit).Query(scan)
	})
	if err != nil {
		return nil, fmt.Errorf("postgres store: claim deadlines of %q: %w", machine, err)
	}
	return out, nil
}

// readCommitted runs the statements queue queues in a READ COMMITTED transaction, begun and
// committed in the same batch: one round trip. A failure leaves the connection in the
// transaction: the pool then closes it, and the server rolls back.
func (s *Store) readCommitted(ctx context.Context, queue func(b *pgx.Batch)) error {
	var b pgx.Batch
	b.Queue(sqlBeginReadCommitted)
	queue(&b)
	b.Queue(sqlEnd)
	return s.pool.SendBatch(ctx, &b).Close()
}
