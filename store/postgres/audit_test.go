package postgres

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/fsmgen/fsmgen/fsmrt"
	"github.com/fsmgen/fsmgen/generated/build"
)

// auditedTask stores seed 004's task T in st: created, picked up, in planning, its
// approach rejected once (a failure counted in planning), with planning's timeout levels
// armed; and returns how Audit makes a new machine of it.
func auditedTask(t *testing.T, st fsmrt.Store) func() *fsmrt.Machine[build.State, build.Event, build.Role, build.TaskContext, fsmrt.None] {
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
	return func() *fsmrt.Machine[build.State, build.Event, build.Role, build.TaskContext, fsmrt.None] {
		return &build.NewTask(build.TaskNopHooks{}).Machine
	}
}

// TestAudit: rows of the PostgreSQL database edited behind the store's back (Find's and the
// timers'), each found by fsmrt.Audit, which finds nothing in the database as the
// machine wrote it; a deadline moved earlier is not fired by the timers, though Find believes it.
func TestAudit(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		name, edit, want string
	}{
		{"as written", ``, ``},
		{"a counter", `UPDATE fsmgen_counters SET value = 2 WHERE id = 'T'`, `counter "failures" in "planning" is 2, the log says 1`},
		{"a counter deleted", `DELETE FROM fsmgen_counters WHERE id = 'T'`, `counter "failures" in "planning" is 0, the log says 1`},
		{"a counter added", `INSERT INTO fsmgen_counters (machine, id, name, state, value) VALUES ('build.Task', 'T', 'cto_attempts', '', 1)`,
			`counter "cto_attempts" is 1, the log says 0`},
		{"a deadline moved", `UPDATE fsmgen_deadlines SET at = at - interval '1 hour' WHERE id = 'T' AND name = 'level:escalate'`, `deadline level:escalate falls due at`},
		{"a deadline deleted", `DELETE FROM fsmgen_deadlines WHERE id = 'T' AND name = 'level:warn'`, `deadline level:warn is missing`},
		{"the last entry's time", `UPDATE fsmgen_instances SET last_at = last_at + interval '5 seconds' WHERE id = 'T'`, `its last entry was at`},
		{"the state", `UPDATE fsmgen_instances SET state = 'done' WHERE id = 'T'`, `instance in state "done", its last entry 4 entered "planning"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			dsn := newDatabase(t)
			st := openStore(t, dsn)
			newMachine := auditedTask(t, st)
			if c.edit != "" {
				if _, err := connect(t, dsn).Exec(ctx, c.edit); err != nil {
					t.Fatal(err)
				}
			}
			err := fsmrt.Audit(ctx, st, "T", newMachine)
			switch {
			case c.want == "" && err != nil:
				t.Fatalf("audit of the database as written: %v", err)
			case c.want == "":
			case err == nil || !strings.Contains(err.Error(), c.want):
				t.Fatalf("audit = %v; want it to say %q", err, c.want)
			case c.name == "the state" && !errors.Is(err, ErrCorrupt):
				t.Errorf("audit of an edited state: %v, want ErrCorrupt", err)
			case c.name != "the state" && !errors.Is(err, fsmrt.ErrIndexDisagrees):
				t.Errorf("audit = %v, want an AuditError", err)
			}
		})
	}
	t.Run("a deadline moved is not fired", func(t *testing.T) {
		dsn := newDatabase(t)
		st := openStore(t, dsn)
		auditedTask(t, st)
		if _, err := connect(t, dsn).Exec(ctx, `UPDATE fsmgen_deadlines SET at = at - interval '1 day' WHERE id = 'T' AND name = 'level:warn'`); err != nil {
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
