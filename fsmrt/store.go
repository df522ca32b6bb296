package fsmrt

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
)

// Store persists machines of one generated type: an append-only event log of every
// accepted transition (entries of type L), and the snapshot (of type S) taken at the last
// checkpoint. It is the seam for database adapters; a generated package names it
// (review.TaskStore is Store[review.TaskLogEntry, review.TaskSnapshot]).
//
// Optimistic concurrency: log entries carry consecutive sequence numbers (1, 2, 3, ...)
// per machine ID, and Append refuses an entry whose sequence number is not the next one;
// Save replaces the stored snapshot only if the stored one has sequence number prev (0
// when none is stored). A refusal wraps ErrStoreConflict: another writer got there first,
// so reload the machine and fire again.
//
// Entries are never changed or deleted: a snapshot does not replace the entries it
// covers, and Load returns the entries after it. A database adapter keeps one row per entry
// with the key (id, seq), so that a second writer of the same seq fails on the key, and one
// snapshot row per id, replaced by an update conditional on its seq (an insert when prev is
// 0); Load reads the snapshot and the entries after it in one transaction. Append and Save
// are separate calls: after a failure between them the log is ahead of the snapshot, which
// Load and replaying handle.
type Store[L, S any] interface {
	// Append adds an entry to the log of machine id if its sequence number is the next one.
	Append(ctx context.Context, id string, e L) error
	// Save stores a snapshot of machine id taken at a checkpoint, in place of the stored
	// one if that has sequence number prev.
	Save(ctx context.Context, id string, prev int64, s S) error
	// Load returns the last snapshot saved (ok false when none is) and the log entries
	// after it, in order.
	Load(ctx context.Context, id string) (s S, ok bool, log []L, err error)
	// Log returns the entries of the log of machine id with a sequence number greater than
	// after, in order: the whole log when after is 0.
	Log(ctx context.Context, id string, after int64) ([]L, error)
}

// Sequenced is a log entry or a snapshot: it knows its sequence number.
type Sequenced interface {
	Sequence() int64
}

// ErrStoreConflict is what a Store returns when another writer got there first.
var ErrStoreConflict = errors.New("fsm: store version conflict")

// StoreError says the store refused or failed to persist an accepted transition (Op is
// "append" or "save", Seq the transition's sequence number). The transition has happened
// in memory: reload the machine from the store before firing again.
type StoreError struct {
	Op   string
	Seq  int64
	Err  error
	spec *Spec
}

// StoreFailed returns the error of store operation op for the transition numbered seq.
func StoreFailed(sp *Spec, op string, seq int64, err error) *StoreError {
	return &StoreError{Op: op, Seq: seq, Err: err, spec: sp}
}

// Error describes the failure.
func (e *StoreError) Error() string {
	return fmt.Sprintf("%sstore %s of seq %d: %v", e.spec.prefix(), e.Op, e.Seq, e.Err)
}

// Unwrap returns the store's error.
func (e *StoreError) Unwrap() error { return e.Err }

// MemoryStore is a Store in memory, safe for concurrent use: the default that needs no
// server. It keeps every log entry, and snapshots as JSON, so that what Load returns is
// what a database adapter would return.
type MemoryStore[L, S Sequenced] struct {
	mu    sync.Mutex
	snaps map[string][]byte
	seqs  map[string]int64 // sequence number of each stored snapshot
	logs  map[string][]L
	keys  map[string]map[string]int64 // sequence number of the entry of each idempotency key
}

// NewMemoryStore returns an empty store.
func NewMemoryStore[L, S Sequenced]() *MemoryStore[L, S] {
	return &MemoryStore[L, S]{snaps: map[string][]byte{}, seqs: map[string]int64{}, logs: map[string][]L{}, keys: map[string]map[string]int64{}}
}

// Append adds e to the log of id if it is the next entry.
func (s *MemoryStore[L, S]) Append(_ context.Context, id string, e L) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	log := s.logs[id]
	last := s.seqs[id]
	if n := len(log); n > 0 {
		last = log[n-1].Sequence()
	}
	if e.Sequence() != last+1 {
		return fmt.Errorf("%w: %s: entry %d after %d", ErrStoreConflict, id, e.Sequence(), last)
	}
	log = append(log, e)
	s.logs[id] = log
	// Through a pointer to the stored entry: converting the entry itself to an interface
	// would copy it to the heap on every append.
	if k, ok := any(&log[len(log)-1]).(Keyed); ok && k.IdempotencyKey() != "" {
		if s.keys[id] == nil {
			s.keys[id] = map[string]int64{}
		}
		if _, used := s.keys[id][k.IdempotencyKey()]; !used {
			s.keys[id][k.IdempotencyKey()] = e.Sequence()
		}
	}
	return nil
}

// FindKey returns the log entry of id that used the idempotency key, if any: the first one.
func (s *MemoryStore[L, S]) FindKey(_ context.Context, id, key string) (L, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var e L
	seq, ok := s.keys[id][key]
	if !ok {
		return e, false, nil
	}
	log := s.logs[id]
	return log[seq-log[0].Sequence()], true, nil
}

// Save replaces the snapshot of id if the stored one has sequence number prev. The log
// keeps every entry.
func (s *MemoryStore[L, S]) Save(_ context.Context, id string, prev int64, snap S) error {
	b, err := json.Marshal(snap)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.seqs[id] != prev {
		return fmt.Errorf("%w: %s: snapshot %d, not %d", ErrStoreConflict, id, s.seqs[id], prev)
	}
	s.snaps[id], s.seqs[id] = b, snap.Sequence()
	return nil
}

// Load returns the snapshot of id, if any, and the log after it.
func (s *MemoryStore[L, S]) Load(_ context.Context, id string) (S, bool, []L, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var snap S
	b, ok := s.snaps[id]
	if !ok {
		return snap, false, s.after(id, 0), nil
	}
	return snap, true, s.after(id, s.seqs[id]), json.Unmarshal(b, &snap)
}

// Log returns a copy of the log of id after sequence number after.
func (s *MemoryStore[L, S]) Log(_ context.Context, id string, after int64) ([]L, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.after(id, after), nil
}

// after returns a copy of the entries of id with a sequence number greater than seq. The
// caller holds the lock. Entries are numbered from 1 without gaps, so the first one wanted
// is found by its number.
func (s *MemoryStore[L, S]) after(id string, seq int64) []L {
	log := s.logs[id]
	if len(log) > 0 {
		skip := seq - log[0].Sequence() + 1
		log = log[min(max(skip, 0), int64(len(log))):]
	}
	return append([]L(nil), log...)
}
