package evolve_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	v1 "github.com/fsmgen/fsmgen/examples/evolve/v1"
	"github.com/fsmgen/fsmgen/fsmrt"
	"github.com/fsmgen/fsmgen/generated/build"
	"github.com/fsmgen/fsmgen/store/postgres"
	"github.com/fsmgen/fsmgen/store/postgres/pgtest"
	"github.com/fsmgen/fsmgen/store/sqlite"
)

// fsmgenWith builds the fsmgen of a store's module (store/sqlite or store/postgres).
func fsmgenWith(t *testing.T, module string) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "fsmgen")
	cmd := exec.Command("go", "build", "-C", filepath.Join("..", "..", module), "-o", bin, "./cmd/fsmgen")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build %s: %v\n%s", module, err, out)
	}
	return bin
}

// storeStories stores every story under version 1, and extra more tickets left in triage.
func storeStories(t *testing.T, store fsmrt.Store, extra int) {
	t.Helper()
	ctx := context.Background()
	for _, s := range stories() {
		if _, err := writeV1(ctx, store, s.id, s.events); err != nil {
			t.Fatal(err)
		}
	}
	for i := range extra {
		if _, err := writeV1(ctx, store, fmt.Sprintf("triage-%02d", i), []v1.Event{v1.EventReview}); err != nil {
			t.Fatal(err)
		}
	}
}

// diffStore runs bin's fsmgen diff --store dsn from version 1 to version 2, and to a
// version 2 that declares no migration, and checks what it counts.
func diffStore(t *testing.T, bin, dsn string, triage int) {
	t.Helper()
	run := func(newSpec string) (string, int) {
		cmd := exec.Command(bin, "diff", "--store", dsn, "v1/ticket.fsm.yaml", newSpec)
		out, err := cmd.Output()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return string(out), code
	}
	out, code := run("v2/ticket.fsm.yaml")
	for _, want := range []string{
		`behaviour: state "triage" removed: the migration moves its instances to "open"; ` + count(triage, "triage"),
		`compatible: state "approved" is now "accepted": the migration renames it; 2 stored instances in "approved"`,
		`compatible: counter "reopens" is now "reopen_count": the migration renames it; 1 stored instance count "reopens"`,
		"verdict: behaviour",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("diff --store with the migration: no %q in:\n%s", want, out)
		}
	}
	if code != 0 {
		t.Errorf("diff --store with the migration: exit %d", code)
	}
	// As JSON, each count is a field of its change.
	js, err := exec.Command(bin, "diff", "--format", "json", "--store", dsn, "v1/ticket.fsm.yaml", "v2/ticket.fsm.yaml").Output()
	if err != nil {
		t.Fatal(err)
	}
	var report struct {
		Changes []struct {
			Message string
			Stored  *int
		}
	}
	if err := json.Unmarshal(js, &report); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, c := range report.Changes {
		if strings.HasPrefix(c.Message, `state "triage" removed`) {
			found = c.Stored != nil && *c.Stored == triage
		}
	}
	if !found {
		t.Errorf("no change of triage with stored %d in:\n%s", triage, js)
	}
	// Without the migration, the same change strands them.
	data, err := os.ReadFile("v2/ticket.fsm.yaml")
	if err != nil {
		t.Fatal(err)
	}
	bare := filepath.Join(t.TempDir(), "ticket.fsm.yaml")
	os.WriteFile(bare, data[:strings.Index(string(data), "\nmigrations:")+1], 0o644)
	out, code = run(bare)
	if want := `breaking: state "triage" removed: instances stored in it cannot be loaded (map it to a new state); ` + count(triage, "triage"); code != 1 || !strings.Contains(out, want) {
		t.Errorf("diff --store without the migration: exit %d, no %q in:\n%s", code, want, out)
	}
}

// count is how fsmgen diff says n instances are stored in state.
func count(n int, state string) string {
	if n == 1 {
		return fmt.Sprintf("1 stored instance in %q", state)
	}
	return fmt.Sprintf("%d stored instances in %q", n, state)
}

// TestDiffStoreSQLite: fsmgen diff --store counts the instances of an SQLite file.
func TestDiffStoreSQLite(t *testing.T) {
	db := filepath.Join(t.TempDir(), "tickets.db")
	store, err := sqlite.Open(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	storeStories(t, store, 4)
	store.Close()
	diffStore(t, fsmgenWith(t, "store/sqlite"), db, 5)
}

// TestDiffStorePostgres: fsmgen diff --store counts the instances of a PostgreSQL database.
func TestDiffStorePostgres(t *testing.T) {
	ctx := context.Background()
	srv := pgtest.New(t, pgtest.Options{})
	dsn, err := srv.CreateDatabase(ctx, "counted")
	if err != nil {
		t.Fatal(err)
	}
	store, err := postgres.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	storeStories(t, store, 36)
	store.Close()
	diffStore(t, fsmgenWith(t, "store/postgres"), dsn, 37)
}

// TestDiffStoreDeadlines: fsmgen diff --store also says, of the instances stored in a state
// a change removes, how many have deadlines of that state (a migration arms them again):
// seed 004's tasks, three created (pending's timeout armed), one picked up since.
func TestDiffStoreDeadlines(t *testing.T) {
	ctx := context.Background()
	db := filepath.Join(t.TempDir(), "build.db")
	store, err := sqlite.Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		m := build.NewTask(build.TaskNopHooks{})
		m.ID = fmt.Sprintf("TASK-%d", i)
		m.SetStore(store)
		if err := m.Create(ctx, build.TaskInput{At: t0}); err != nil {
			t.Fatal(err)
		}
		if i == 2 {
			if _, err := m.FireWith(ctx, build.EventPickedUp, build.TaskInput{At: t0.Add(time.Minute), Role: build.RoleBuildOrchestrator}); err != nil {
				t.Fatal(err)
			}
		}
	}
	store.Close()
	spec, err := os.ReadFile("../build/build.fsm.yaml")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	oldSpec, newSpec := filepath.Join(dir, "old.fsm.yaml"), filepath.Join(dir, "new.fsm.yaml")
	os.WriteFile(oldSpec, spec, 0o644)
	os.WriteFile(newSpec, []byte(strings.ReplaceAll(string(spec), "pending", "queued")), 0o644)
	out, _ := exec.Command(fsmgenWith(t, "store/sqlite"), "diff", "--store", db, oldSpec, newSpec).Output()
	for _, want := range []string{
		`breaking: state "pending" removed: instances stored in it cannot be loaded (map it to a new state); 2 stored instances in "pending", 2 with deadlines of it to arm again`,
		"proposal: the instances stored in the states this spec removed have no place in it; give them one:\n  migrations:\n    - from: sha256:",
		"      states:\n        pending: NEW_STATE   # 2 stored, 2 with deadlines\n",
	} {
		if !strings.Contains(string(out), want) {
			t.Errorf("no %q in:\n%s", want, out)
		}
	}
}
