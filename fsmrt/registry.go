package fsmrt

import (
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

type registered[M any] struct {
	mu sync.Mutex
	m  M
}

// Init readies an empty registry (a Registry must be initialised before use) for the machine type named name, whose ID id returns.
// Registering past maxActive active (non-terminal) machines is not refused, but logged as a
// warning through logger (slog.Default() when nil); maxActive 0 means no limit.
func (r *Registry[M, S]) Init(name string, id func(M) string, maxActive int, logger *slog.Logger) {
	if logger == nil {
		logger = slog.Default()
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
