package fsmrt

import (
	"errors"
	"fmt"
	"time"
)

// What a store can hold of a machine, and what Replay and Restore refuse past it. A store
// is read as untrusted input: a file edited, truncated or damaged, a row written by hand.
// Every bound is one the engine cannot pass when it writes, so that whatever it committed
// replays.
const (
	// MaxIDLength is the longest instance ID, in bytes: a commit of a longer one is refused
	// (CheckCommit, errors.Is ErrInvalidCommit), and a snapshot naming one is not restored.
	// IDs are keys people and systems write (an order number, a UUID, a path); 4 KiB leaves
	// room for any of them and keeps a damaged one from costing megabytes per entry.
	MaxIDLength = 4 << 10
	// MaxSeq is the highest sequence number a snapshot may have. No store holds that many
	// entries of one instance (2^62: a thousand million transitions a second for over a
	// hundred years), and a machine at it still numbers its next transitions without
	// overflowing.
	MaxSeq = 1 << 62
)

// Time in a store has no upper bound but what JSON encodes (the years 0-9999): a machine
// stamps entries with its input's At or its clock, both the caller's (tests and
// schedulers run clocks years ahead, SetClock), so no instant a caller can give is one a
// machine cannot have written, and a bound on the wall clock (now plus some skew) would
// refuse the logs of every clock run ahead. Nor are times that go back refused, in a log
// or in a snapshot (an enteredAt before its createdAt): an input's At in the past, or a
// clock set back, is recorded as given (the time in a state never counts negative). What
// is refused is an entry without a time, and one whose time the store keeps otherwise
// (agrees).

// ErrNotFound says a store holds no instance with that ID: Replay and Resume of an ID
// never committed (or lost with its database) fail with a NotFoundError matching it, where
// they built a new machine. Create a new machine with the generated constructor (and
// Create, to arm its timers and store it at once).
var ErrNotFound = errors.New("fsm: no such instance")

// NotFoundError says the store has no instance ID of machine Machine (a Spec.Name).
type NotFoundError struct {
	Machine, ID string
}

// Error describes what is missing.
func (e *NotFoundError) Error() string {
	return fmt.Sprintf("fsm: %s %s is not in the store", e.Machine, e.ID)
}

// Is makes NotFoundError match ErrNotFound.
func (e *NotFoundError) Is(target error) bool { return target == ErrNotFound }

// namedSnapshotError returns err, an error restoring the snapshot of instance id, as a
// SnapshotError naming the instance: a SnapshotError gets the ID (and the spec), JSON
// that does not decode becomes one (a bare *json.SyntaxError or the like said nothing of
// whose snapshot it was). Other typed errors (a SpecMismatchError, a generated check's)
// are returned as they are.
func namedSnapshotError(sp *Spec, id string, err error) error {
	var se *SnapshotError
	var sm *SpecMismatchError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &se):
		if se.ID == "" {
			se.ID = id
		}
		if se.spec == nil {
			se.spec = sp
		}
		return err
	case errors.As(err, &sm):
		return err
	}
	e := InvalidSnapshot(sp, "(json)", err.Error())
	e.ID = id
	return e
}

// checkSnapshotBounds refuses a snapshot's ID and sequence number past what a store holds.
func checkSnapshotBounds(sp *Spec, id string, seq int64) error {
	switch {
	case len(id) > MaxIDLength:
		return InvalidSnapshot(sp, "id", fmt.Sprintf("%d bytes, more than %d", len(id), MaxIDLength))
	case seq > MaxSeq:
		return InvalidSnapshot(sp, "seq", fmt.Sprintf("%d is past %d", seq, int64(MaxSeq)))
	}
	return nil
}

// agrees checks log entry e, decoded from the store's se, against the store's copy of its
// fields (those it indexes; the store fills them, a test double may not) and the
// instance: an entry edited in the store on one side only is refused. The entry's own
// spec is this machine's (it was not migrated).
func (m *Machine[S, E, R, C, X]) agrees(se *Entry, e *LogEntry[S, E, R]) error {
	switch {
	case e.ID != "" && e.ID != m.ID:
		return fmt.Errorf("the entry is of instance %.64q", e.ID)
	case se.From != "" && int(e.From) < len(m.def.States) && se.From != e.From.String(),
		se.To != "" && int(e.To) < len(m.def.States) && se.To != e.To.String():
		return fmt.Errorf("the entry says %s -> %s; the store %s -> %s", e.From, e.To, se.From, se.To)
	case se.Event != "" && (isNote(e.Kind) || int(e.Event) >= m.def.NumEvents || se.Event != e.Event.String()):
		return fmt.Errorf("the entry says event %s; the store %s", eventName(e.Kind, e.Event), se.Event)
	case !se.At.IsZero() && !e.Timestamp.IsZero() && absDuration(se.At.Sub(e.Timestamp)) >= time.Microsecond:
		// Stores keep times to the microsecond.
		return fmt.Errorf("the entry says it happened at %v; the store %v", e.Timestamp, se.At)
	}
	return nil
}

// absDuration is |d|.
func absDuration(d time.Duration) time.Duration {
	if d < 0 {
		return -d
	}
	return d
}

// permitted checks the role of log entry e, a transition of this spec: a transition that
// names roles was fired by one of them (or a role that fires every transition). Policies
// are not asked: the entry holds them as the transition left them, not as they were.
func (m *Machine[S, E, R, C, X]) permitted(e *LogEntry[S, E, R]) error {
	d := m.def
	if !d.Roles {
		return nil
	}
	if e.Kind != KindTransition || e.Moved != nil || e.Transition < 0 || e.Transition >= len(d.Transitions) {
		return nil
	}
	t := &d.Transitions[e.Transition]
	if len(t.Roles) == 0 {
		return nil
	}
	for _, r := range d.AlwaysRoles {
		if r == e.Role {
			return nil
		}
	}
	for _, rr := range t.Roles {
		if R(rr.Role) == e.Role {
			return nil
		}
	}
	if e.Role == 0 {
		return fmt.Errorf("transition %d names roles, and was fired without one", e.Transition)
	}
	return fmt.Errorf("transition %d is not permitted to role %s", e.Transition, e.Role)
}

// keysTracked is how many idempotency keys of the entries it replays a machine without a
// key window remembers, to refuse one used twice (keySeen).
const keysTracked = 1 << 12

// keySeen refuses idempotency key key of a replayed entry when an entry before it used it:
// a store refuses a key an entry of the instance used already, so no log has one twice.
// It looks where that costs nothing more: the machine's key window (the keys recalled from
// before the entries replayed, and those replayed), or, for a machine without one, the
// first keysTracked keys replayed, in seen (made when needed).
func (m *Machine[S, E, R, C, X]) keySeen(seen *map[string]struct{}, key string) error {
	switch {
	case key == "":
		return nil
	case m.def.Idempotent:
		if _, ok := m.keys.Get(key); ok {
			return fmt.Errorf("idempotency key %q used again", key)
		}
		return nil
	}
	if _, ok := (*seen)[key]; ok {
		return fmt.Errorf("idempotency key %q used again", key)
	}
	if *seen == nil {
		*seen = map[string]struct{}{}
	}
	if len(*seen) < keysTracked {
		(*seen)[key] = struct{}{}
	}
	return nil
}
