// Package audittest is the scenario the durable stores' tests edit behind the store's
// back for fsmrt.Audit: seed 004's task stored through its generated code, the store's
// rows then changed by SQL, each change found (or refused by the load) and none found
// when nothing changed; and a deadline moved earlier, which Find believes and the timers
// do not fire.
package audittest

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/fsmgen/fsmgen/fsmrt"
	"github.com/fsmgen/fsmgen/generated/build"
)

// Machine is the runtime machine of seed 004's task.
type Machine = fsmrt.Machine[build.State, build.Event, build.Role, build.TaskContext, fsmrt.None]

// Case is a change of a store's rows and what Audit says of it: an error saying Want,
// matching Is (fsmrt.ErrIndexDisagrees when nil). An empty Edit changes nothing, and Audit
// must find nothing.
type Case struct {
	Name, Edit, Want string
	Is               error
}

// Store opens a new store for a case, and how to run SQL on its database.
type Store func(t *testing.T) (fsmrt.Store, func(ctx context.Context, sql string) error)

// Task stores seed 004's task T in st: created, picked up, in planning, its approach
// rejected once (a failure counted in planning), with planning's timeout levels armed;
// and returns how Audit makes a new machine of it.
func Task(t testing.TB, st fsmrt.Store) func() *Machine {
	t.Helper()
	ctx := context.Background()
	m := build.NewTask(build.TaskNopHooks{})
	m.ID = "T"
	m.SetStore(st)
	if err := m.Create(ctx, build.TaskInput{Actor: "user"}); err != nil {
		t.Fatal(err)
	}
	for _, f := range []struct {
		e build.Event
		r build.Role
	}{
		{build.EventPickedUp, build.RoleBuildOrchestrator},
		{build.EventValidationStarted, build.RoleSolutionValidator},
		{build.EventApproachRejected, build.RoleSolutionValidator},
	} {
		if _, err := m.FireWith(ctx, f.e, build.TaskInput{Role: f.r, Actor: "a"}); err != nil {
			t.Fatalf("%s: %v", f.e, err)
		}
	}
	if m.State() != build.StatePlanning || m.CountFailures(build.StatePlanning) != 1 {
		t.Fatalf("in %s with %d failures", m.State(), m.CountFailures(build.StatePlanning))
	}
	return func() *Machine { return &build.NewTask(build.TaskNopHooks{}).Machine }
}

// Run runs each case on a new store of open, then moves the task's warning a day earlier
// by moveWarn: Find by that deadline returns the task, the timers handle nothing.
func Run(t *testing.T, open Store, cases []Case, moveWarn string) {
	ctx := context.Background()
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			st, exec := open(t)
			newMachine := Task(t, st)
			if c.Edit != "" {
				if err := exec(ctx, c.Edit); err != nil {
					t.Fatal(err)
				}
			}
			err := fsmrt.Audit(ctx, st, "T", newMachine)
			is := c.Is
			if is == nil {
				is = fsmrt.ErrIndexDisagrees
			}
			switch {
			case c.Want == "" && err != nil:
				t.Fatalf("audit of the rows as written: %v", err)
			case c.Want == "":
			case err == nil || !strings.Contains(err.Error(), c.Want):
				t.Fatalf("audit = %v; want it to say %q", err, c.Want)
			case !errors.Is(err, is):
				t.Errorf("audit = %v, want it to match %v", err, is)
			}
		})
	}
	t.Run("a deadline moved is not fired", func(t *testing.T) {
		st, exec := open(t)
		Task(t, st)
		if err := exec(ctx, moveWarn); err != nil {
			t.Fatal(err)
		}
		found, err := build.FindTasks(ctx, st, fsmrt.Query{Deadline: fsmrt.LevelDeadline("warn"), Due: time.Now()})
		if err != nil || len(found) != 1 {
			t.Fatalf("Find by the moved deadline: %v, %v (it reads the row)", found, err)
		}
		n, err := build.FireDueTaskTimers(ctx, st, build.TaskNopHooks{}, time.Now(), 10)
		if n != 0 {
			t.Fatalf("the timers handled %d deadlines (%v): one the log does not arm was fired", n, err)
		}
		m, err := build.ReplayTask(ctx, st, "T", build.TaskNopHooks{})
		if err != nil || m.Seq() != 4 {
			t.Fatalf("after the timers: %v at %d, want nothing recorded", err, m.Seq())
		}
	})
}
