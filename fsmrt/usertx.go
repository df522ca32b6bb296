package fsmrt

import (
	"context"
	"fmt"
)

// CallersTx is implemented by a store that commits in a transaction the caller began
// (the store modules' WithTx): what the machine commits there is stored only if the caller
// commits that transaction. A machine commits the effects of such a transition to the
// outbox without delivering them itself, since the transition may yet be rolled back:
// DeliverEffects delivers them once it is stored. And once it has committed in such a
// transaction, the machine checks, at the first firing on a store that is not one
// (SetStore back to the store itself), that its last transition is stored: if the caller
// rolled it back, the firing is refused with a *StaleError and the machine is loaded
// again (Replay) to go on.
type CallersTx interface {
	Store
	// InCallersTx marks the store; it does nothing.
	InCallersTx()
}

// inCallersTx reports whether s commits in a transaction of the caller's.
func inCallersTx(s Store) bool {
	_, ok := s.(CallersTx)
	return ok
}

// StaleError refuses a firing of a machine whose transitions committed in a transaction
// of the caller's were rolled back: the machine is ahead of its store (it made Seq
// transitions, the store holds Stored). errors.Is(err, ErrStoreConflict) holds: load the
// machine again, as after a conflict.
type StaleError struct {
	Machine, ID string
	Seq, Stored int64
}

func (e *StaleError) Error() string {
	return fmt.Sprintf("fsm: %s %s is stale: it made %d transitions, its store holds %d (a transaction it committed in was rolled back); load it again", e.Machine, e.ID, e.Seq, e.Stored)
}

// Is makes a StaleError a conflict (ErrStoreConflict).
func (e *StaleError) Is(target error) bool { return target == ErrStoreConflict }

// checkStored is called before a firing of a machine that committed in a transaction of
// the caller's: on a store of its own again, the machine reads its version there once, and
// is stale if the transaction was rolled back.
func (m *Machine[S, E, R, C, X]) checkStored(ctx context.Context) error {
	if m.store == nil || inCallersTx(m.store) {
		return nil
	}
	l, err := m.store.Load(ctx, m.def.storeName, m.ID)
	if err != nil {
		return StoreFailed(m.def.Spec, "load", m.seq, err)
	}
	if l.Version < m.seq {
		return &StaleError{Machine: m.def.storeName, ID: m.ID, Seq: m.seq, Stored: l.Version}
	}
	m.inTx = false
	return nil
}
