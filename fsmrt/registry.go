package fsmrt

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
)

// Holder is what a Registry needs of a machine: its ID and state.
type Holder[S StateType] interface {
	State() S
}

// Registry holds machines by ID and answers queries over them. It is safe for concurrent
// use: each machine has a lock, held while Do or a query looks at it. Fire events on
// registered machines through Do (or the generated registry's Fire), never directly from
// several goroutines. The function given to Do runs with its machine locked: it must not
// call Do for the same machine, nor a query or Register (which lock every machine), or it
// waits for itself.
//
// A generated package embeds it (review.TaskRegistry) and adds the typed Fire and the
// queries its spec needs.
type Registry[M Holder[S], S StateType] struct {
	mu        sync.RWMutex
	machines  map[string]*registered[M]
	name      string
	id        func(M) string
	maxActive int
	logger    *slog.Logger
}

// identified is a machine that embeds Machine, whose ID field names it.
type identified interface{ registryID() string }

func (m *Machine[S, E, R, C, X]) registryID() string { return m.ID }

// Firer is what RegistryFire needs of a machine: its state, and firing an event with an
// input (every generated machine).
type Firer[S StateType, E, R EnumType] interface {
	Holder[S]
	FireWith(ctx context.Context, e E, in Input[R]) (S, error)
}

// RegistryFire fires e with in on the machine registered under id in r, holding its lock:
// the generated registries' Fire.
func RegistryFire[M Firer[S, E, R], S StateType, E, R EnumType](ctx context.Context, r *Registry[M, S], id string, e E, in Input[R]) (S, error) {
	var to S
	err := r.Do(id, func(m M) error {
		var err error
		to, err = m.FireWith(ctx, e, in)
		return err
	})
	return to, err
}

type registered[M any] struct {
	mu sync.Mutex
	m  M
}

// Init readies an empty registry (a Registry must be initialised before use) for the
// machine type named name, whose ID id returns; nil means the ID field of the Machine it
// embeds (every generated machine's), and panics for a machine that embeds none.
// Registering past maxActive active (non-terminal) machines is not refused, but logged as a
// warning through logger (slog.Default() when nil); maxActive 0 means no limit.
func (r *Registry[M, S]) Init(name string, id func(M) string, maxActive int, logger *slog.Logger) {
	if logger == nil {
		logger = slog.Default()
	}
	if id == nil {
		var zero M
		if _, ok := any(zero).(identified); !ok {
			panic(fmt.Sprintf("fsmrt: Registry.Init: no id function for %T, which embeds no Machine", zero))
		}
		id = func(m M) string { return any(m).(identified).registryID() }
	}
	r.machines = map[string]*registered[M]{}
	r.name, r.id, r.maxActive, r.logger = name, id, maxActive, logger
}

// Logger returns the logger the registry warns through.
func (r *Registry[M, S]) Logger() *slog.Logger { return r.logger }

// Register adds m under its ID, which must be set and not yet registered.
func (r *Registry[M, S]) Register(m M) error {
	id := r.id(m)
	if id == "" {
		return errors.New("fsm: register: machine has no ID")
	}
	r.mu.Lock()
	if _, dup := r.machines[id]; dup {
		r.mu.Unlock()
		return fmt.Errorf("fsm: register: %q is already registered", id)
	}
	r.machines[id] = &registered[M]{m: m}
	r.mu.Unlock()
	if r.maxActive > 0 {
		if n := r.ActiveCount(); n > r.maxActive {
			r.logger.Warn("active machines past the limit", "machine", r.name, "active", n, "max", r.maxActive)
		}
	}
	return nil
}

// Get returns the machine registered under id, or an error matching ErrNotRegistered.
func (r *Registry[M, S]) Get(id string) (M, error) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	if e, ok := r.machines[id]; ok {
		return e.m, nil
	}
	var zero M
	return zero, fmt.Errorf("%w: %q", ErrNotRegistered, id)
}

// GetOrNil returns the machine registered under id, or the zero M (nil for a pointer).
func (r *Registry[M, S]) GetOrNil(id string) M {
	m, _ := r.Get(id)
	return m
}

// Remove unregisters id and reports whether it was registered.
func (r *Registry[M, S]) Remove(id string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	_, ok := r.machines[id]
	delete(r.machines, id)
	return ok
}

// Do runs fn on the machine registered under id while holding its lock.
func (r *Registry[M, S]) Do(id string, fn func(M) error) error {
	r.mu.RLock()
	e, ok := r.machines[id]
	r.mu.RUnlock()
	if !ok {
		return fmt.Errorf("%w: %q", ErrNotRegistered, id)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	return fn(e.m)
}

// Where returns the machines for which keep holds (called under each machine's lock),
// ordered by ID.
func (r *Registry[M, S]) Where(keep func(M) bool) []M {
	var out []M
	for _, e := range r.where(keep) {
		out = append(out, e.m)
	}
	return out
}

// where returns the registrations whose machine keep holds for, ordered by ID.
func (r *Registry[M, S]) where(keep func(M) bool) []*registered[M] {
	r.mu.RLock()
	ids := make([]string, 0, len(r.machines))
	for id := range r.machines {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	entries := make([]*registered[M], len(ids))
	for i, id := range ids {
		entries[i] = r.machines[id]
	}
	r.mu.RUnlock()
	var out []*registered[M]
	for _, e := range entries {
		e.mu.Lock()
		ok := keep(e.m)
		e.mu.Unlock()
		if ok {
			out = append(out, e)
		}
	}
	return out
}

// ListAll returns every registered machine, ordered by ID.
func (r *Registry[M, S]) ListAll() []M {
	return r.Where(func(M) bool { return true })
}

// ListActive returns the machines that are not in a terminal state, ordered by ID.
func (r *Registry[M, S]) ListActive() []M {
	return r.Where(func(m M) bool { return !m.State().IsTerminal() })
}

// ActiveCount returns the number of machines not in a terminal state.
func (r *Registry[M, S]) ActiveCount() int {
	return len(r.ListActive())
}

// ByState returns the machines in state s, ordered by ID.
func (r *Registry[M, S]) ByState(s S) []M {
	return r.Where(func(m M) bool { return m.State() == s })
}

// CleanupTerminal unregisters every machine in a terminal state and returns how many it
// removed. A machine registered under the same ID meanwhile (after another goroutine
// removed the terminal one) stays.
func (r *Registry[M, S]) CleanupTerminal() int {
	done := r.where(func(m M) bool { return m.State().IsTerminal() })
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, e := range done {
		if id := r.id(e.m); r.machines[id] == e {
			delete(r.machines, id)
			n++
		}
	}
	return n
}
