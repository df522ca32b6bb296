package fsmrt_test

import (
	"errors"
	"testing"

	"github.com/fsmgen/fsmgen/fsmrt"
	"github.com/fsmgen/fsmgen/fsmrt/storetest"
)

func TestMemoryStoreConformance(t *testing.T) {
	shared := fsmrt.NewMemoryStore()
	t.Run("new", func(t *testing.T) {
		storetest.RunComplete(t, func(*testing.T) fsmrt.Store { return fsmrt.NewMemoryStore() })
	})
	t.Run("shared", func(t *testing.T) {
		storetest.RunComplete(t, func(*testing.T) fsmrt.Store { return shared })
	})
}

func TestStoreErrors(t *testing.T) {
	e := fsmrt.StoreFailed(&fsmrt.Spec{Package: "review"}, "commit", 5, &fsmrt.ConflictError{Machine: "review.Task", ID: "t1", Version: 4, Stored: 6})
	if got, want := e.Error(), "review: store commit of seq 5: fsm: store conflict: review.Task t1 is at version 6, not 4"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	if !errors.Is(e, fsmrt.ErrStoreConflict) || errors.Is(e, fsmrt.ErrRefused) || errors.Is(e, fsmrt.ErrSpecMismatch) {
		t.Error("StoreError matches the wrong errors")
	}
	k := &fsmrt.ConflictError{Machine: "review.Task", ID: "t1", Version: 4, Stored: 4, Key: "k"}
	if got, want := k.Error(), `fsm: store conflict: review.Task t1: idempotency key "k" already used`; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	m := &fsmrt.SpecMismatchError{Machine: "review.Task", ID: "t1", Stored: "a", Spec: "b"}
	if got, want := m.Error(), "fsm: review.Task t1 was stored under spec a, not b: a spec loads only its own instances and those of the older specs it declares migrations from"; got != want || !errors.Is(m, fsmrt.ErrSpecMismatch) || errors.Is(m, fsmrt.ErrStoreConflict) {
		t.Errorf("Error() = %q, want %q", got, want)
	}
}
