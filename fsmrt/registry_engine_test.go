package fsmrt

import (
	"errors"
	"strings"
	"testing"
)

// A registry of engine machines needs no ID function (the Machine's ID field names them),
// and RegistryFire fires on them under their locks.
func TestRegistryOfEngineMachines(t *testing.T) {
	var reg Registry[*tMachine, tState]
	reg.Init("Doc", nil, 0, nil)
	a, b := newRig().m, newRig().m
	a.ID, b.ID = "doc-a", "doc-b"
	for _, m := range []*tMachine{a, b} {
		if err := reg.Register(m); err != nil {
			t.Fatal(err)
		}
	}
	if got, err := reg.Get("doc-b"); err != nil || got != b {
		t.Fatalf("Get(doc-b) = %p, %v; want %p", got, err, b)
	}
	to, err := RegistryFire(bg, &reg, "doc-a", eSubmit, tIn{})
	if err != nil || to != sReview || a.State() != sReview || b.State() != sDraft {
		t.Fatalf("RegistryFire(doc-a, submit) = %s, %v; a in %s, b in %s", to, err, a.State(), b.State())
	}
	to, err = RegistryFire(bg, &reg, "doc-b", eApprove, tIn{})
	var ite *InvalidTransitionError[tState, tEvent]
	if !errors.As(err, &ite) || to != sDraft {
		t.Errorf("RegistryFire(doc-b, approve) = %s, %v; want the refusal", to, err)
	}
	if _, err := RegistryFire(bg, &reg, "doc-c", eSubmit, tIn{}); !errors.Is(err, ErrNotRegistered) {
		t.Errorf("RegistryFire(doc-c) = %v, want ErrNotRegistered", err)
	}
	if n := reg.CleanupTerminal(); n != 0 || len(reg.ListAll()) != 2 {
		t.Errorf("CleanupTerminal removed %d of machines in no terminal state", n)
	}
}

// A machine that embeds no Machine needs an ID function: Init without one panics at once,
// not at the first Register.
func TestRegistryInitWithoutIDFunction(t *testing.T) {
	defer func() {
		if r := recover(); r == nil || !strings.Contains(r.(string), "embeds no Machine") {
			t.Errorf("recovered %v", r)
		}
	}()
	var reg Registry[plainHolder, tState]
	reg.Init("Plain", nil, 0, nil)
}

type plainHolder struct{}

func (plainHolder) State() tState { return sDraft }
