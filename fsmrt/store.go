package fsmrt

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
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
	//     written under another spec than c.Spec (the spec's fingerprint) or c.Migrated;
	//   - with an error wrapping ErrInvalidCommit when c.Entry.Seq is not c.Version+1 or a
	//     name is empty.
	// It keeps nothing of c after it returns (it copies the bytes it stores): the machine
	// reuses c and its buffers for its next commit.
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

	// ClaimEffects leases to owner, until now+lease, at most limit effects of machine that
	// are not delivered and not leased (or whose lease ran out before now), oldest commit
	// first, counting the attempt. Claimers that run at once never get the same effect.
	ClaimEffects(ctx context.Context, machine, owner string, now time.Time, lease time.Duration, limit int) ([]PendingEffect, error)
	// CompleteEffects records the effects delivered, at now; they are never claimed again.
	// Effects already recorded delivered are left as they are.
	CompleteEffects(ctx context.Context, ids []EffectID, now time.Time) error

	// ClaimDeadlines leases to owner, until now+lease, at most limit deadlines of machine
	// that are due (At <= now), not handled, and not leased (or whose lease ran out before
	// now), earliest first. Claimers that run at once never get the same deadline.
	ClaimDeadlines(ctx context.Context, machine, owner string, now time.Time, lease time.Duration, limit int) ([]DueDeadline, error)

	// Find returns the instances of q.Machine that match q, in ID order.
	Find(ctx context.Context, q Query) ([]Instance, error)
}

// Query selects instances of one machine; the conditions that are set must all hold.
type Query struct {
	Machine string
	// States: the instance is in one of them (by name); none: any state.
	States []string
	// Deadline and Due: the instance has the deadline named Deadline ("expiry",
	// "level:warn") of its current state, falling due at or before Due, handled or not: it
	// has been in its state longer than that level of its timeout.
	Deadline string
	Due      time.Time
	// Counter and AtLeast: the counter named Counter (in some state, for a per-state
	// counter) is at least AtLeast.
	Counter string
	AtLeast int
	// IdleSince: the instance's last entry is at or before IdleSince: nothing has happened
	// to it since (an instance stuck in its state, whatever its timeouts).
	IdleSince time.Time
	// Effects: the instance has effects in the outbox not delivered (EffectsPending), or
	// whose last delivery failed (EffectsFailing: in a store that keeps the errors,
	// EffectErrorRecorder); EffectsAny: no condition.
	Effects EffectCondition
	// After and Limit page through the results: IDs after After, at most Limit (0: all).
	After string
	Limit int
}

// EffectCondition is a Query's condition on an instance's effects.
type EffectCondition uint8

const (
	// EffectsAny sets no condition on the effects.
	EffectsAny EffectCondition = iota
	// EffectsPending: some effect of the instance is not delivered.
	EffectsPending
	// EffectsFailing: some effect of the instance is not delivered and its last delivery
	// failed.
	EffectsFailing
)

// Instance is an instance as Find returns it.
type Instance struct {
	ID      string
	State   string
	Version int64
	// UpdatedAt is the time of its last entry.
	UpdatedAt time.Time
}

// CounterValue is the value of one of an instance's counters after a commit: State is
// empty but for a per-state counter.
type CounterValue struct {
	Name, State string
	Value       int
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
	// Migrated, when not empty, is the fingerprint of the spec the instance is stored
	// under, from which the machine migrated it to Spec (a migration its spec declares):
	// the store accepts the commit when the stored spec is Spec or Migrated, and the
	// instance is stored under Spec from then on. Such a commit carries a snapshot and
	// rearms the deadlines.
	Migrated string
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
	// Effects are the effects the transition schedules, written to the outbox. When Owner
	// is set they are written leased to it until LeaseUntil (it delivers them at once;
	// if it dies, they are claimed by others when the lease runs out).
	Effects    []Effect
	Owner      string
	LeaseUntil time.Time
	// Rearm says the transition entered a state (or changed its timeouts): the instance's
	// deadlines are replaced by Deadlines. Without it they stay as they are.
	Rearm     bool
	Deadlines []Deadline
	// Fired, when not empty, names the deadline this commit handles (its expiry event, or
	// its level recorded): the deadline is recorded handled (it stays, for Find, until the
	// next rearm, but is never claimed again), and the commit is refused with a
	// ConflictError when the instance has no such deadline or it is handled already.
	Fired string
	// Counters are the instance's counters that are not zero after the transition; they
	// replace the stored ones (for Find).
	Counters []CounterValue
	// CountersKept says the transition changed no counter: Counters are what the
	// instance had at Version, and a store may leave its stored ones as they are. False
	// says nothing: the store writes Counters.
	CountersKept bool
	// CountersDelta says CountersChanged lists every counter whose value the transition
	// changed, with its new value (0: it went back to zero, and is not in Counters):
	// applied to the counters the instance had at Version they give Counters, so that a
	// store may write only those. False says nothing: the store writes Counters.
	CountersDelta   bool
	CountersChanged []CounterValue
}

// Effect is an action that must happen once per committed transition, delivered after
// the commit from the outbox.
type Effect struct {
	// Name is the effect's action, by spec name.
	Name string
	// Key is the idempotency key the receiver deduplicates on: unique per effect of a
	// committed transition.
	Key string
	// Data is what the effect's hook receives (an EffectCall in JSON).
	Data []byte
}

// EffectID names an effect in the outbox: the Index-th effect of entry Seq of an instance.
type EffectID struct {
	Machine, ID string
	Seq         int64
	Index       int
}

// PendingEffect is an effect claimed for delivery.
type PendingEffect struct {
	EffectID
	Effect
	// Attempts counts the deliveries tried, this one included: the committer's, when the
	// commit leased the effects to it, and each claim.
	Attempts int
}

// Deadline is a point in time at which an instance's timeout acts: its expiry (which fires
// Event, when the timeout has one) or one of its levels (which is recorded). An instance has
// at most one deadline of each Name.
type Deadline struct {
	// Name is "expiry" or the level's name ("warn").
	Name string
	At   time.Time
	// State is the state whose timeout it is: in a statechart, the configuration it was
	// armed in, which the states within the timeout's state may have left since.
	State string
	// Event is the event an expiry fires ("" for a level, or a timeout that only reports).
	Event string
	// Level is the level's value (the generated TimeoutLevel), 0 for an expiry.
	Level int
}

// DueDeadline is a deadline claimed by a scheduler.
type DueDeadline struct {
	Machine, ID string
	Deadline
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
	// Deadline, when not empty, is the deadline the commit meant to handle, which the
	// instance no longer has.
	Deadline string
}

// Error describes the conflict.
func (e *ConflictError) Error() string {
	switch {
	case e.Key != "":
		return fmt.Sprintf("fsm: store conflict: %s %s: idempotency key %q already used", e.Machine, e.ID, e.Key)
	case e.Deadline != "":
		return fmt.Sprintf("fsm: store conflict: %s %s has no deadline %q left to handle", e.Machine, e.ID, e.Deadline)
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
	return fmt.Sprintf("fsm: %s %s was stored under spec %s, not %s: a spec loads only its own instances and those of the older specs it declares migrations from", e.Machine, e.ID, e.Stored, e.Spec)
}

// Is makes SpecMismatchError match ErrSpecMismatch.
func (e *SpecMismatchError) Is(target error) bool { return target == ErrSpecMismatch }

// CheckCommit returns the error wrapping ErrInvalidCommit a Store returns for a malformed
// commit, or nil: what every Store checks before it writes.
func CheckCommit(c *Commit) error {
	switch {
	case c.Machine == "" || c.ID == "":
		return fmt.Errorf("%w: empty machine or id", ErrInvalidCommit)
	case len(c.ID) > MaxIDLength:
		return fmt.Errorf("%w: %s: an id of %d bytes, more than %d", ErrInvalidCommit, c.Machine, len(c.ID), MaxIDLength)
	case c.Version < 0:
		return fmt.Errorf("%w: %s %s: negative version %d", ErrInvalidCommit, c.Machine, c.ID, c.Version)
	case c.Entry.Seq != c.Version+1:
		return fmt.Errorf("%w: %s %s: entry %d at version %d", ErrInvalidCommit, c.Machine, c.ID, c.Entry.Seq, c.Version)
	case c.State == "" || c.Entry.Kind == "":
		return fmt.Errorf("%w: %s %s: empty state or kind", ErrInvalidCommit, c.Machine, c.ID)
	case len(c.Deadlines) > 0 && !c.Rearm:
		return fmt.Errorf("%w: %s %s: deadlines without rearming", ErrInvalidCommit, c.Machine, c.ID)
	case c.Owner != "" && c.LeaseUntil.IsZero():
		return fmt.Errorf("%w: %s %s: effects leased to %s without an end", ErrInvalidCommit, c.Machine, c.ID, c.Owner)
	case c.Migrated != "" && (c.Migrated == c.Spec || c.Snapshot == nil || !c.Rearm || c.CountersKept || c.CountersDelta):
		return fmt.Errorf("%w: %s %s: a migration from %s without its own spec, a snapshot, rearming or counters", ErrInvalidCommit, c.Machine, c.ID, c.Migrated)
	}
	for i, x := range c.Counters {
		if x.Name == "" || x.Value == 0 || slices.ContainsFunc(c.Counters[:i], func(y CounterValue) bool { return y.Name == x.Name && y.State == x.State }) {
			return fmt.Errorf("%w: %s %s: counter %q in %q", ErrInvalidCommit, c.Machine, c.ID, x.Name, x.State)
		}
	}
	if c.CountersKept && c.CountersDelta || !c.CountersDelta && len(c.CountersChanged) > 0 {
		return fmt.Errorf("%w: %s %s: counters both kept and changed", ErrInvalidCommit, c.Machine, c.ID)
	}
	for i, x := range c.CountersChanged {
		// A counter changed is in Counters with its value, or zero and not there.
		in := slices.ContainsFunc(c.Counters, func(y CounterValue) bool { return y == x })
		if x.Name == "" || x.Value == 0 && slices.ContainsFunc(c.Counters, func(y CounterValue) bool { return y.Name == x.Name && y.State == x.State }) ||
			x.Value != 0 && !in || slices.ContainsFunc(c.CountersChanged[:i], func(y CounterValue) bool { return y.Name == x.Name && y.State == x.State }) {
			return fmt.Errorf("%w: %s %s: changed counter %q in %q", ErrInvalidCommit, c.Machine, c.ID, x.Name, x.State)
		}
	}
	for i, d := range c.Deadlines {
		if d.Name == "" || d.At.IsZero() || slices.ContainsFunc(c.Deadlines[:i], func(x Deadline) bool { return x.Name == d.Name }) {
			return fmt.Errorf("%w: %s %s: deadline %q at %v", ErrInvalidCommit, c.Machine, c.ID, d.Name, d.At)
		}
	}
	for i, e := range c.Effects {
		if e.Name == "" || e.Key == "" {
			return fmt.Errorf("%w: %s %s: effect %d without a name or key", ErrInvalidCommit, c.Machine, c.ID, i)
		}
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
	hub       WorkHub // WatchWork's watches (memwake.go)
}

// memInstance is one instance of a MemoryStore.
type memInstance struct {
	spec, state string
	log         []Entry // log[i].Seq == i+1
	snapshot    []byte
	snapSeq     int64
	keys        map[string]int64 // the seq of the entry of each idempotency key
	counters    []CounterValue
	effects     []*memEffect
	deadlines   []*memDeadline
}

// memEffect is an effect in a MemoryStore's outbox.
type memEffect struct {
	PendingEffect
	owner     string
	leased    time.Time // leased until
	delivered time.Time
	lastError string
	failedAt  time.Time
}

// memDeadline is a deadline of a MemoryStore.
type memDeadline struct {
	Deadline
	owner   string
	leased  time.Time
	handled bool
}

// NewMemoryStore returns an empty store.
func NewMemoryStore() *MemoryStore {
	return &MemoryStore{instances: map[[2]string]*memInstance{}}
}

// Commit writes c if the instance is at c.Version (Store.Commit).
func (s *MemoryStore) Commit(ctx context.Context, c *Commit) (err error) {
	if err := CheckCommit(c); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	defer func() { // once unlocked
		if err == nil && CommitWakes(c) {
			s.hub.Notify(c.Machine)
		}
	}()
	s.mu.Lock()
	defer s.mu.Unlock()
	in := s.instances[[2]string{c.Machine, c.ID}]
	var version int64
	if in != nil {
		version = int64(len(in.log))
		if in.spec != c.Spec && (c.Migrated == "" || in.spec != c.Migrated) {
			return &SpecMismatchError{Machine: c.Machine, ID: c.ID, Stored: in.spec, Spec: c.Spec}
		}
	}
	if version != c.Version {
		return &ConflictError{Machine: c.Machine, ID: c.ID, Version: c.Version, Stored: version}
	}
	if in == nil {
		if c.Fired != "" {
			return &ConflictError{Machine: c.Machine, ID: c.ID, Version: c.Version, Stored: version, Deadline: c.Fired}
		}
		in = &memInstance{keys: map[string]int64{}}
		s.instances[[2]string{c.Machine, c.ID}] = in
	}
	if k := c.Entry.Key; k != "" {
		if _, used := in.keys[k]; used {
			return &ConflictError{Machine: c.Machine, ID: c.ID, Version: c.Version, Stored: version, Key: k}
		}
	}
	fired := -1
	if c.Fired != "" {
		if fired = slices.IndexFunc(in.deadlines, func(d *memDeadline) bool { return d.Name == c.Fired && !d.handled }); fired < 0 {
			return &ConflictError{Machine: c.Machine, ID: c.ID, Version: c.Version, Stored: version, Deadline: c.Fired}
		}
	}
	// Every check passed: write.
	if k := c.Entry.Key; k != "" {
		in.keys[k] = c.Entry.Seq
	}
	if fired >= 0 {
		in.deadlines[fired].handled = true
	}
	in.counters = slices.Clone(c.Counters)
	if c.Rearm {
		in.deadlines = in.deadlines[:0]
		for _, d := range c.Deadlines {
			d.At = d.At.Truncate(time.Microsecond)
			in.deadlines = append(in.deadlines, &memDeadline{Deadline: d})
		}
	}
	for i, e := range c.Effects {
		e.Data = bytes.Clone(e.Data)
		in.effects = append(in.effects, &memEffect{
			PendingEffect: PendingEffect{EffectID: EffectID{Machine: c.Machine, ID: c.ID, Seq: c.Entry.Seq, Index: i}, Effect: e},
			owner:         c.Owner, leased: c.LeaseUntil,
		})
		if c.Owner != "" {
			in.effects[len(in.effects)-1].Attempts = 1
		}
	}
	e := c.Entry
	// The snapshot is written over the last one: readers get copies.
	e.At, e.Data = e.At.Truncate(time.Microsecond), bytes.Clone(e.Data)
	in.spec, in.state = c.Spec, c.State
	in.log = append(in.log, e)
	if c.Snapshot != nil {
		in.snapshot, in.snapSeq = append(in.snapshot[:0], c.Snapshot...), c.Entry.Seq
		if in.snapshot == nil {
			in.snapshot = []byte{} // an empty snapshot is one
		}
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

// ClaimEffects leases due effects to owner (Store.ClaimEffects).
func (s *MemoryStore) ClaimEffects(ctx context.Context, machine, owner string, now time.Time, lease time.Duration, limit int) ([]PendingEffect, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var free []*memEffect
	for key, in := range s.instances {
		if key[0] != machine {
			continue
		}
		for _, e := range in.effects {
			if e.delivered.IsZero() && (e.owner == "" || e.leased.Before(now)) {
				free = append(free, e)
			}
		}
	}
	// Oldest commit first: by the entry's time, then instance and position.
	slices.SortFunc(free, func(a, b *memEffect) int {
		return cmp.Or(s.entryAt(a).Compare(s.entryAt(b)), cmp.Compare(a.ID, b.ID), cmp.Compare(a.Seq, b.Seq), cmp.Compare(a.Index, b.Index))
	})
	var out []PendingEffect
	for _, e := range free[:min(len(free), max(limit, 0))] {
		e.owner, e.leased = owner, now.Add(lease)
		e.Attempts++
		p := e.PendingEffect
		p.Data = bytes.Clone(p.Data)
		out = append(out, p)
	}
	return out, nil
}

// entryAt is when the transition of effect e happened. The caller holds the lock.
func (s *MemoryStore) entryAt(e *memEffect) time.Time {
	return s.instances[[2]string{e.Machine, e.ID}].log[e.Seq-1].At
}

// CompleteEffects records effects delivered (Store.CompleteEffects).
func (s *MemoryStore) CompleteEffects(ctx context.Context, ids []EffectID, now time.Time) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, id := range ids {
		in := s.instances[[2]string{id.Machine, id.ID}]
		if in == nil {
			continue
		}
		for _, e := range in.effects {
			if e.EffectID == id && e.delivered.IsZero() {
				e.delivered = now
			}
		}
	}
	return nil
}

// ClaimDeadlines leases due deadlines to owner (Store.ClaimDeadlines).
func (s *MemoryStore) ClaimDeadlines(ctx context.Context, machine, owner string, now time.Time, lease time.Duration, limit int) ([]DueDeadline, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	type due struct {
		id string
		d  *memDeadline
	}
	var free []due
	for key, in := range s.instances {
		if key[0] != machine {
			continue
		}
		for _, d := range in.deadlines {
			if !d.handled && !d.At.After(now) && (d.owner == "" || d.leased.Before(now)) {
				free = append(free, due{key[1], d})
			}
		}
	}
	slices.SortFunc(free, func(a, b due) int {
		return cmp.Or(a.d.At.Compare(b.d.At), cmp.Compare(a.id, b.id), cmp.Compare(a.d.Name, b.d.Name))
	})
	var out []DueDeadline
	for _, f := range free[:min(len(free), max(limit, 0))] {
		f.d.owner, f.d.leased = owner, now.Add(lease)
		out = append(out, DueDeadline{Machine: machine, ID: f.id, Deadline: f.d.Deadline})
	}
	return out, nil
}

// Find returns the instances that match q (Store.Find).
func (s *MemoryStore) Find(ctx context.Context, q Query) ([]Instance, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Instance
	for key, in := range s.instances {
		if key[0] != q.Machine || key[1] <= q.After && q.After != "" || !in.matches(&q) {
			continue
		}
		last := in.log[len(in.log)-1]
		out = append(out, Instance{ID: key[1], State: in.state, Version: int64(len(in.log)), UpdatedAt: last.At})
	}
	slices.SortFunc(out, func(a, b Instance) int { return cmp.Compare(a.ID, b.ID) })
	if q.Limit > 0 && len(out) > q.Limit {
		out = out[:q.Limit]
	}
	return out, nil
}

// matches reports whether the instance meets q's conditions. The caller holds the lock.
func (in *memInstance) matches(q *Query) bool {
	if len(q.States) > 0 && !slices.Contains(q.States, in.state) {
		return false
	}
	if q.Deadline != "" && !slices.ContainsFunc(in.deadlines, func(d *memDeadline) bool { return d.Name == q.Deadline && !d.At.After(q.Due) }) {
		return false
	}
	if q.Counter != "" && !slices.ContainsFunc(in.counters, func(c CounterValue) bool { return c.Name == q.Counter && c.Value >= q.AtLeast }) {
		return false
	}
	if !q.IdleSince.IsZero() && (len(in.log) == 0 || in.log[len(in.log)-1].At.After(q.IdleSince)) {
		return false
	}
	if q.Effects != EffectsAny && !slices.ContainsFunc(in.effects, func(e *memEffect) bool {
		return e.delivered.IsZero() && (q.Effects != EffectsFailing || e.lastError != "")
	}) {
		return false
	}
	return true
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
