package durable

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/fsmgen/fsmgen/fsmrt"
	"github.com/fsmgen/fsmgen/generated/approval"
	"github.com/fsmgen/fsmgen/generated/pipeline"
	"github.com/fsmgen/fsmgen/store/sqlite"
)

// A copy of the test binary started with DURABLE_CHILD set is one of the processes: it
// runs that role on the store file DURABLE_DB and exits.
func TestMain(m *testing.M) {
	if role := os.Getenv("DURABLE_CHILD"); role != "" {
		if err := child(context.Background(), role, os.Getenv("DURABLE_DB"), os.Args); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// start starts a process running role on db with args, its output lines on the channel.
func start(t *testing.T, role, db string, args ...string) (*exec.Cmd, <-chan string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], append([]string{"-test.run=^$"}, args...)...)
	cmd.Env = append(os.Environ(), "DURABLE_CHILD="+role, "DURABLE_DB="+db)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string, 1000)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(out)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		if s := stderr.String(); s != "" {
			t.Logf("%s: %s", role, s)
		}
	})
	return cmd, lines
}

// run runs a process to its end and returns its output lines.
func run(t *testing.T, role, db string, args ...string) []string {
	t.Helper()
	cmd, lines := start(t, role, db, args...)
	var out []string
	for l := range lines {
		out = append(out, l)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("%s %v: %v (%q)", role, args, err, out)
	}
	return out
}

// child runs one process's role.
func child(ctx context.Context, role, db string, args []string) error {
	store, err := sqlite.Open(ctx, db)
	if err != nil {
		return err
	}
	defer store.Close()
	var rest []string
	for _, a := range args[1:] {
		if !strings.HasPrefix(a, "-test.") {
			rest = append(rest, a)
		}
	}
	switch role {
	case "pipeline":
		return runPipeline(ctx, store)
	case "approval":
		return fireApproval(ctx, store, rest)
	case "cognitive":
		return runCognitive(ctx, store, rest)
	case "order-crash":
		return orderThenHang(ctx, store)
	}
	return fmt.Errorf("no role %q", role)
}

// --- Seed 002: killed mid-run, resumed by another process ---

// runner is the program around seed 002's machine: phases plan, implement, test, each
// costing $0.25, the checkpoint saved on every transition by the store.
type runner struct {
	pipeline.TaskNopHooks
}

var phases = []string{"plan", "implement", "test"}

func (runner) phase(m *pipeline.Task) int {
	for i, p := range phases {
		if p == m.Context.CurrentPhase {
			return i
		}
	}
	return -1
}
func (r runner) HasMorePhases(_ context.Context, m *pipeline.Task, _ pipeline.TaskStep) bool {
	return r.phase(m) < len(phases)-1
}
func (runner) RetriesRemaining(_ context.Context, m *pipeline.Task, _ pipeline.TaskStep) bool {
	return m.CountAttempts() < 10
}
func (runner) BudgetAvailable(_ context.Context, m *pipeline.Task, _ pipeline.TaskStep) bool {
	return m.Context.CostTotalUsd < 100
}
func (runner) AtHighestTier(_ context.Context, m *pipeline.Task, _ pipeline.TaskStep) bool {
	return m.Context.ModelTier == "opus"
}
func (runner) SelectPipeline(_ context.Context, m *pipeline.Task, _ pipeline.TaskStep) {
	m.Context.Pipeline, m.Context.CurrentPhase, m.Context.ModelTier = "feature", phases[0], "sonnet"
}
func (r runner) AdvancePhase(_ context.Context, m *pipeline.Task, _ pipeline.TaskStep) {
	m.Context.CurrentPhase = phases[r.phase(m)+1]
}

// script is the run: each phase fails once (a retry) and then succeeds.
var script = []pipeline.Event{
	pipeline.EventStart, pipeline.EventClassified, pipeline.EventRouted,
	pipeline.EventPhaseFailed, pipeline.EventRetry, pipeline.EventPhaseSucceeded, // plan
	pipeline.EventPhaseFailed, pipeline.EventRetry, pipeline.EventPhaseSucceeded, // implement
	pipeline.EventPhaseFailed, pipeline.EventRetry, pipeline.EventPhaseSucceeded, // test
	pipeline.EventVerificationPassed,
}

// runPipeline loads task T-0001 (a new one when the store has none) and fires the rest of
// the script from where its log has got, printing the machine's snapshot after each commit.
func runPipeline(ctx context.Context, store fsmrt.Store) error {
	m, err := pipeline.ReplayTask(ctx, store, "T-0001", runner{})
	if errors.Is(err, fsmrt.ErrNotFound) {
		// The first process: the store has no task yet.
		m, err = pipeline.NewTask(runner{}), nil
		m.ID = "T-0001"
	}
	if err != nil {
		return err
	}
	m.SetStore(store)
	print := func() error {
		b, err := json.Marshal(m.Snapshot())
		fmt.Println(string(b))
		return err
	}
	if err := print(); err != nil { // where this process starts
		return err
	}
	for _, e := range script[m.Seq():] {
		m.Context.Confidence = 0.9
		if e == pipeline.EventPhaseFailed || e == pipeline.EventPhaseSucceeded {
			m.Context.CostTotalUsd += 0.25 // what the attempt cost
		}
		if _, err := m.FireWith(ctx, e, pipeline.TaskInput{Actor: "runner", At: time.Date(2026, 5, 4, 8, 0, int(m.Seq()), 0, time.UTC)}); err != nil {
			return fmt.Errorf("%s at %d: %w", e, m.Seq(), err)
		}
		if err := print(); err != nil {
			return err
		}
		time.Sleep(5 * time.Millisecond) // time for the test to kill it mid-run
	}
	return nil
}

// Seed 002: "Update the checkpoint file at every state transition ... so /resume works from
// any point". A pipeline process is killed with SIGKILL mid-run; another process started
// on the same store continues from the last checkpoint, with its state, phase, attempt and
// cost, and finishes the run. The log has each transition once.
func TestSeed002KilledAndResumed(t *testing.T) {
	for _, killAfter := range []int{2, 5, 9} {
		t.Run(fmt.Sprint("after ", killAfter), func(t *testing.T) {
			db := filepath.Join(t.TempDir(), "pipeline.db")
			cmd, lines := start(t, "pipeline", db)
			var last pipeline.TaskSnapshot
			for range killAfter + 1 { // the starting snapshot, then killAfter commits
				l, ok := <-lines
				if !ok {
					t.Fatal("the first process ended early")
				}
				last = pipeline.TaskSnapshot{} // decoding into last would keep its maps
				if err := json.Unmarshal([]byte(l), &last); err != nil {
					t.Fatal(err)
				}
			}
			if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			cmd.Wait()

			out := run(t, "pipeline", db)
			var resumed, final pipeline.TaskSnapshot
			if err := json.Unmarshal([]byte(out[0]), &resumed); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal([]byte(out[len(out)-1]), &final); err != nil {
				t.Fatal(err)
			}
			// It was killed after printing seq killAfter: it may have committed one more.
			switch {
			case resumed.Seq == last.Seq:
				if a, b := js(t, resumed), js(t, last); a != b {
					t.Errorf("resumed from\n%s\nthe last checkpoint was\n%s", a, b)
				}
			case resumed.Seq == last.Seq+1:
			default:
				t.Fatalf("killed after seq %d, resumed at %d", last.Seq, resumed.Seq)
			}
			if final.State != pipeline.StateCompleted || final.Seq != int64(len(script)) || final.Context.CostTotalUsd != 1.5 || final.Context.CurrentPhase != "test" {
				t.Errorf("final: %s at %d, cost %v, phase %q", final.State, final.Seq, final.Context.CostTotalUsd, final.Context.CurrentPhase)
			}
			// Each transition once, and the store replays to the final machine.
			store, err := sqlite.Open(context.Background(), db)
			if err != nil {
				t.Fatal(err)
			}
			defer store.Close()
			m, err := pipeline.ReplayTask(context.Background(), store, "T-0001", runner{})
			if err != nil || js(t, m.Snapshot()) != js(t, final) {
				t.Errorf("replayed: %v", err)
			}
			m.SetStore(store)
			log, err := m.EventLog(context.Background(), 0)
			if err != nil || len(log) != len(script) {
				t.Fatalf("log: %d entries, %v", len(log), err)
			}
			for i, e := range log {
				if e.Event != script[i] || e.Seq != int64(i+1) {
					t.Errorf("entry %d: %s at %d", i, e.Event, e.Seq)
				}
			}
		})
	}
}

// js is v in JSON.
func js(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// --- Seed 001: an idempotency key across processes ---

// fireApproval fires, on TASK-1, event args[0] as role args[1] with idempotency key
// args[2], and prints the result: the state, the sequence number and the error's reason.
func fireApproval(ctx context.Context, store fsmrt.Store, args []string) error {
	e, err := approval.ParseEvent(args[0])
	if err != nil {
		return err
	}
	r, err := approval.ParseRole(args[1])
	if err != nil {
		return err
	}
	var to approval.State
	var seq int64
	err = fsmrt.Retry(ctx, 5, func(ctx context.Context) error {
		m, err := approval.ReplayTask(ctx, store, "TASK-1", approval.TaskNopHooks{})
		if errors.Is(err, fsmrt.ErrNotFound) {
			// No process has committed the task yet: this one starts it.
			m, err = approval.NewTask(approval.TaskNopHooks{}), nil
			m.ID = "TASK-1"
		}
		if err != nil {
			return err
		}
		m.SetStore(store)
		m.Context.AssigneeIds, m.Context.WorkPlan = []string{"agent-ana"}, []string{"a", "b", "c"}
		to, err = m.FireWith(ctx, e, approval.TaskInput{Role: r, Key: args[2], Actor: args[1]})
		seq = m.Seq()
		return err
	})
	reason := ""
	var rr interface{ Reason() string }
	if errors.As(err, &rr) {
		reason, err = rr.Reason(), nil
	}
	fmt.Printf("%s %d %s\n", to, seq, reason) // seq: what this process's machine has seen
	return err
}

// Seed 001: "Same key + same transition = returns original result (no duplicate); Same
// key + different transition = error (conflict)", for clients in different processes:
// each firing below is a process of its own, and two race with one key.
func TestSeed001IdempotencyAcrossProcesses(t *testing.T) {
	db := filepath.Join(t.TempDir(), "approval.db")
	fire := func(args ...string) string {
		t.Helper()
		out := run(t, "approval", db, args...)
		if len(out) != 1 {
			t.Fatalf("%v printed %q", args, out)
		}
		return out[0]
	}
	if got := fire("ASSIGNED", "lead", "req-1"); got != "ASSIGNED 1 " {
		t.Fatalf("first request: %q", got)
	}
	// The retry, from another process: the original result, no second transition.
	if got := fire("ASSIGNED", "lead", "req-1"); got != "ASSIGNED 1 " {
		t.Errorf("retried request: %q", got)
	}
	// The same key for another transition: a conflict, nothing changes.
	if got := fire("BLOCKED", "system", "req-1"); got != "ASSIGNED 1 idempotency_conflict" {
		t.Errorf("same key, other transition: %q", got)
	}
	// Two processes race with a new key: one transition, both see its result (a process
	// that loaded the task before the other committed finds the key in the store, or
	// loses the commit, reloads and finds it in the log).
	var wg sync.WaitGroup
	results := make([]string, 2)
	for i := range results {
		wg.Go(func() { results[i] = strings.Join(run(t, "approval", db, "IN_PROGRESS", "intern", "req-2"), "") })
	}
	wg.Wait()
	for _, r := range results {
		if r != "IN_PROGRESS 2 " && r != "IN_PROGRESS 1 " {
			t.Errorf("racing with one key: %q", results)
		}
	}
	store, err := sqlite.Open(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	log, err := store.Log(context.Background(), "approval.Task", "TASK-1", 0)
	if err != nil || len(log) != 2 || log[0].Key != "req-1" || log[1].Key != "req-2" {
		t.Errorf("log: %+v, %v", log, err)
	}
}
