package fsmrt_test

import (
	"testing"

	"github.com/fsmgen/fsmgen/fsmrt"
)

// hookMachine runs onState the first time the registry asks its state.
type hookMachine struct {
	id      string
	state   tState
	onState func()
}

func (m *hookMachine) State() tState {
	if f := m.onState; f != nil {
		m.onState = nil
		f()
	}
	return m.state
}

// TestCleanupTerminalKeepsAReplacement: a terminal machine removed, and another registered
// under its ID, while CleanupTerminal looks at the machines is not removed in its place, and
// the count says what CleanupTerminal removed.
func TestCleanupTerminalKeepsAReplacement(t *testing.T) {
	var r fsmrt.Registry[*hookMachine, tState]
	r.Init("Task", func(m *hookMachine) string { return m.id }, 0, nil)
	fresh := &hookMachine{id: "a", state: sIdle}
	old := &hookMachine{id: "a", state: sDone}
	old.onState = func() {
		r.Remove("a")
		if err := r.Register(fresh); err != nil {
			t.Error(err)
		}
	}
	done := &hookMachine{id: "b", state: sDone}
	for _, m := range []*hookMachine{old, done} {
		if err := r.Register(m); err != nil {
			t.Fatal(err)
		}
	}
	if n := r.CleanupTerminal(); n != 1 {
		t.Errorf("CleanupTerminal removed %d, want 1", n)
	}
	if m, err := r.Get("a"); err != nil || m != fresh {
		t.Errorf("the machine registered meanwhile under a: %v, %v", m, err)
	}
	if r.GetOrNil("b") != nil {
		t.Error("the terminal machine b stays registered")
	}
}

func TestValidationErrorWithoutFields(t *testing.T) {
	sp := &fsmrt.Spec{Package: "review"}
	if got, want := fsmrt.Validation(sp, sIdle, eStart, sRunning, false, nil, nil).Error(), "review: cannot enter running"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
}
