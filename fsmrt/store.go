package fsmrt

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// Store persists machines of any number of generated types, each instance named by its
// machine (Spec.Name: the generated package and the spec's machine, "review.Task") and its
// ID. For each instance it keeps a version (the sequence number of its last log entry, 0
// while nothing is stored), its current state, the last snapshot taken at a checkpoint, an
// append-only event log, and the idempotency keys its entries used. Entries and snapshots
// are JSON the engine writes and reads; a store keeps their bytes as they are.
//
// Every accepted transition is one Commit: its log entry, its idempotency key and, where
// it checkpoints, its snapshot, written together or not at all, under optimistic
// concurrency on the version the machine had. The package fsmrt/storetest is the suite
// every Store passes (MemoryStore here; the SQLite and PostgreSQL adapters in their own
// modules).
type Store interface {
	// Commit writes c atomically: the entry is appended to the log of instance (c.Machine,
	// c.ID) and becomes its version, the state becomes c.State, the snapshot (if any)
	// replaces the stored one. It refuses, changing nothing:
	//   - with a ConflictError (errors.Is ErrStoreConflict) when the stored version is not
	//     c.Version, or an entry of the instance already used c.Entry.Key;
	//   - with a SpecMismatchError (errors.Is ErrSpecMismatch) when the instance was
	//     written under another spec (c.Spec, the spec's fingerprint);
	//   - with an error wrapping ErrInvalidCommit when c.Entry.Seq is not c.Version+1 or a
	//     name is empty.
	Commit(ctx context.Context, c *Commit) error
	// Load returns instance (machine, id): its version, state and spec, the last snapshot
	// and the log entries after it, read at one point in time. An instance never committed
	// has version 0 and nothing else.
	Load(ctx context.Context, machine, id string) (Loaded, error)
	// Log returns the entries of the instance with a sequence number greater than after,
	// in order: the whole log when after is 0.
	Log(ctx context.Context, machine, id string, after int64) ([]Entry, error)
	// FindKey returns the entry of the instance that used idempotency key key, if any.
	FindKey(ctx context.Context, machine, id, key string) (Entry, bool, error)
}

// Entry is one entry of an instance's event log as a store keeps it: the engine's JSON
// (Data, a LogEntry), and the fields a store indexes, copied out of it.
type Entry struct {
	Seq int64
	// Kind is KindTransition or KindResumed; Event, From and To name the event and the
	// states (their spec names).
	Kind, Event, From, To string
	// At is when the transition happened; stores keep it to the microsecond.
	At time.Time
	// Key is the idempotency key of the firing, "" for none.
	Key  string
	Data []byte
}

// Commit is what one accepted transition writes to a Store.
type Commit struct {
	Machine, ID string
	// Spec is the fingerprint of the spec the machine was generated from.
	Spec string
	// Version is the instance's version before the transition: the sequence number of the
	// last entry the machine loaded or committed, 0 for a new instance.
	Version int64
	// State is the state after the transition, by name.
	State string
	// Entry is the transition's log entry, numbered Version+1.
	Entry Entry
	// Snapshot, when not nil, is the machine after the transition (a Snapshot in JSON),
	// which replaces the stored one.
	Snapshot []byte
}

// Loaded is an instance as Load reads it.
type Loaded struct {
	// Version is the sequence number of the last entry, 0 when nothing is stored.
	Version int64
	Spec    string
	State   string
	// Snapshot is the last snapshot saved (nil when none is), taken after entry
	// SnapshotSeq.
	Snapshot    []byte
	SnapshotSeq int64
	// Entries are the entries after the snapshot, in order.
	Entries []Entry
}

// Store errors. A store returns them wrapped in the typed errors below, or wrapped with
// fmt.Errorf's %w: test with errors.Is.
var (
	// ErrStoreConflict: another writer got there first (a version moved on, a key used).
	// Load the machine again and fire again.
	ErrStoreConflict = errors.New("fsm: store version conflict")
	// ErrSpecMismatch: the stored instance was written under another spec.
	ErrSpecMismatch = errors.New("fsm: stored instance of another spec")
	// ErrInvalidCommit: the commit is malformed (a bug in the caller, not a race).
	ErrInvalidCommit = errors.New("fsm: invalid commit")
)

// ConflictError says a Commit lost a race: the stored version is not the one the commit
// expected, or the idempotency key was used by an earlier entry.
type ConflictError struct {
	Machine, ID string
	// Version is what the commit expected; Stored is the stored version.
	Version, Stored int64
	// Key, when not empty, is the idempotency key an earlier entry used (Version and
	// Stored are then equal).
	Key string
}

// Error describes the conflict.
func (e *ConflictError) Error() string {
	if e.Key != "" {
		return fmt.Sprintf("fsm: store conflict: %s %s: idempotency key %q already used", e.Machine, e.ID, e.Key)
	}
	return fmt.Sprintf("fsm: store conflict: %s %s is at version %d, not %d", e.Machine, e.ID, e.Stored, e.Version)
}

// Is makes ConflictError match ErrStoreConflict.
func (e *ConflictError) Is(target error) bool { return target == ErrStoreConflict }

// SpecMismatchError says a stored instance was written under another spec than the one
// reading or writing it.
type SpecMismatchError struct {
	Machine, ID string
	// Stored is the fingerprint the instance was written under; Spec the one of the code.
	Stored, Spec string
}

// Error describes the mismatch.
func (e *SpecMismatchError) Error() string {
	return fmt.Sprintf("fsm: %s %s was stored under spec %s, not %s: migrate it first", e.Machine, e.ID, e.Stored, e.Spec)
}

// Is makes SpecMismatchError match ErrSpecMismatch.
func (e *SpecMismatchError) Is(target error) bool { return target == ErrSpecMismatch }

// CheckCommit returns the error wrapping ErrInvalidCommit a Store returns for a malformed
// commit, or nil: what every Store checks before it writes.
func CheckCommit(c *Commit) error {
	switch {
	case c.Machine == "" || c.ID == "":
		return fmt.Errorf("%w: empty machine or id", ErrInvalidCommit)
	case c.Version < 0:
		return fmt.Errorf("%w: %s %s: negative version %d", ErrInvalidCommit, c.Machine, c.ID, c.Version)
	case c.Entry.Seq != c.Version+1:
		return fmt.Errorf("%w: %s %s: entry %d at version %d", ErrInvalidCommit, c.Machine, c.ID, c.Entry.Seq, c.Version)
	case c.State == "" || c.Entry.Kind == "":
		return fmt.Errorf("%w: %s %s: empty state or kind", ErrInvalidCommit, c.Machine, c.ID)
	}
	return nil
}

// StoreError says the store refused or failed to persist an accepted transition (Op is
// "commit" or "find key", Seq the transition's sequence number). Nothing changed, in the
// store or in the machine: when it wraps ErrStoreConflict, load the machine again and fire
// again (see Retry).
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

// MemoryStore is a Store in memory, safe for concurrent use: for tests and for programs
// that persist nothing across restarts. It copies what it is given and what it returns,
// as a database would.
type MemoryStore struct {
	mu        sync.Mutex
	instances map[[2]string]*memInstance
}

// memInstance is one instance of a MemoryStore.
type memInstance struct {
	spec, state string
	log         []Entry // log[i].Seq == i+1
	snapshot    []byte
	snapSeq     int64
	keys        map[string]int64 // the seq of the entry of each idempotency key
}

// NewMemoryStore returns an empty store.
func NewMemoryStore() *MemoryStore {
	return &MemoryStore{instances: map[[2]string]*memInstance{}}
}

// Commit writes c if the instance is at c.Version (Store.Commit).
func (s *MemoryStore) Commit(ctx context.Context, c *Commit) error {
	if err := CheckCommit(c); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	in := s.instances[[2]string{c.Machine, c.ID}]
	var version int64
	if in != nil {
		version = int64(len(in.log))
		if in.spec != c.Spec {
			return &SpecMismatchError{Machine: c.Machine, ID: c.ID, Stored: in.spec, Spec: c.Spec}
		}
	}
	if version != c.Version {
		return &ConflictError{Machine: c.Machine, ID: c.ID, Version: c.Version, Stored: version}
	}
	if in == nil {
		in = &memInstance{keys: map[string]int64{}}
		s.instances[[2]string{c.Machine, c.ID}] = in
	}
	if k := c.Entry.Key; k != "" {
		if _, used := in.keys[k]; used {
			return &ConflictError{Machine: c.Machine, ID: c.ID, Version: c.Version, Stored: version, Key: k}
		}
		in.keys[k] = c.Entry.Seq
	}
	e := c.Entry
	e.At, e.Data = e.At.Truncate(time.Microsecond), bytes.Clone(e.Data)
	in.spec, in.state = c.Spec, c.State
	in.log = append(in.log, e)
	if c.Snapshot != nil {
		in.snapshot, in.snapSeq = bytes.Clone(c.Snapshot), c.Entry.Seq
	}
	return nil
}

// Load returns the instance (Store.Load).
func (s *MemoryStore) Load(ctx context.Context, machine, id string) (Loaded, error) {
	if err := ctx.Err(); err != nil {
		return Loaded{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	in := s.instances[[2]string{machine, id}]
	if in == nil {
		return Loaded{}, nil
	}
	return Loaded{
		Version: int64(len(in.log)), Spec: in.spec, State: in.state,
		Snapshot: bytes.Clone(in.snapshot), SnapshotSeq: in.snapSeq, Entries: in.after(in.snapSeq),
	}, nil
}

// Log returns the entries after seq after (Store.Log).
func (s *MemoryStore) Log(ctx context.Context, machine, id string, after int64) ([]Entry, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if in := s.instances[[2]string{machine, id}]; in != nil {
		return in.after(after), nil
	}
	return nil, nil
}

// FindKey returns the entry that used key (Store.FindKey).
func (s *MemoryStore) FindKey(ctx context.Context, machine, id, key string) (Entry, bool, error) {
	if err := ctx.Err(); err != nil {
		return Entry{}, false, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	in := s.instances[[2]string{machine, id}]
	if in == nil {
		return Entry{}, false, nil
	}
	seq, ok := in.keys[key]
	if !ok {
		return Entry{}, false, nil
	}
	e := in.log[seq-1]
	e.Data = bytes.Clone(e.Data)
	return e, true, nil
}

// after returns copies of the entries with a sequence number greater than seq; nil when
// there are none. The caller holds the store's lock.
func (in *memInstance) after(seq int64) []Entry {
	if seq < 0 {
		seq = 0
	}
	if seq >= int64(len(in.log)) {
		return nil
	}
	out := append([]Entry(nil), in.log[seq:]...)
	for i := range out {
		out[i].Data = bytes.Clone(out[i].Data)
	}
	return out
}

// Retry calls attempt until it returns nil or an error that is not a store conflict, at
// most n times (3 when n < 1), and returns its last error. attempt should load the machine
// afresh from its store (the generated Replay function) and fire on it: a conflict means
// another writer committed first, and the machine it loaded is out of date. A cancelled ctx
// stops the retries.
//
//	err := fsmrt.Retry(ctx, 3, func(ctx context.Context) error {
//		m, err := review.ReplayTask(ctx, store, id)
//		if err != nil {
//			return err
//		}
//		m.SetStore(store)
//		_, err = m.Fire(ctx, review.EventInProgress)
//		return err
//	})
func Retry(ctx context.Context, n int, attempt func(ctx context.Context) error) error {
	if n < 1 {
		n = 3
	}
	var err error
	for range n {
		if err = attempt(ctx); err == nil || !errors.Is(err, ErrStoreConflict) {
			return err
		}
		if ctx.Err() != nil {
			return err
		}
	}
	return err
}
