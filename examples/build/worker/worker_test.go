package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fsmgen/fsmgen/store/postgres/pgtest"
)

// binary is the worker built once for the tests that start it as a process.
var binary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "worker")
	if err != nil {
		panic(err)
	}
	binary = filepath.Join(dir, "worker")
	if out, err := exec.Command("go", "build", "-o", binary, ".").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "building the worker: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// proc is a worker process: commands in, log entries out.
type proc struct {
	t     *testing.T
	cmd   *exec.Cmd
	in    io.WriteCloser
	lines chan entry
}

// entry is what the worker prints of a log entry.
type entry struct {
	TaskID   string            `json:"taskId"`
	Seq      int64             `json:"seq"`
	Event    string            `json:"event"`
	From     string            `json:"from"`
	To       string            `json:"to"`
	Actor    string            `json:"actor"`
	Metadata map[string]string `json:"metadata"`
}

const start = "2026-06-01T08:00:00Z"

// startWorker starts a worker on the store flags say (-db FILE or -postgres DSN), its
// clock stopped at start.
func startWorker(t *testing.T, store ...string) *proc {
	t.Helper()
	return startWorkerArgs(t, append(store, "-speed", "0", "-start", start, "-tick", "20ms")...)
}

// startWorkerArgs starts a worker with the flags args.
func startWorkerArgs(t *testing.T, args ...string) *proc {
	t.Helper()
	cmd := exec.Command(binary, args...)
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = &testWriter{t}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &proc{t: t, cmd: cmd, in: in, lines: make(chan entry, 100)}
	go func() {
		defer close(p.lines)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			var e entry
			if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
				t.Errorf("worker printed %q: %v", sc.Text(), err)
				continue
			}
			p.lines <- e
		}
	}()
	t.Cleanup(func() { p.cmd.Process.Kill(); p.cmd.Wait() })
	return p
}

// send writes command lines to the worker.
func (p *proc) send(lines ...string) {
	p.t.Helper()
	for _, l := range lines {
		if _, err := fmt.Fprintln(p.in, l); err != nil {
			p.t.Fatal(err)
		}
	}
}

// expect reads entries until one of kind event appears, and returns all read.
func (p *proc) expect(event string) []entry {
	p.t.Helper()
	var got []entry
	timeout := time.After(20 * time.Second)
	for {
		select {
		case e, ok := <-p.lines:
			if !ok {
				p.t.Fatalf("the worker stopped before printing %s (got %+v)", event, got)
			}
			got = append(got, e)
			if e.Event == event {
				return got
			}
		case <-timeout:
			p.t.Fatalf("no %s within 20 s (got %+v)", event, got)
		}
	}
}

// kill stops the worker with SIGKILL, as a crash would.
func (p *proc) kill() {
	p.t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		p.t.Fatal(err)
	}
	p.cmd.Wait()
}

// testWriter sends a process's standard error to the test log.
type testWriter struct{ t *testing.T }

func (w *testWriter) Write(b []byte) (int, error) {
	w.t.Logf("%s", strings.TrimRight(string(b), "\n"))
	return len(b), nil
}

// Seed 004 across processes: a worker creates a task and picks it up and is killed; the
// deadlines it armed are in the store, and of two workers started after it, on the same
// store, exactly one records the warning when it falls due. On the embedded store, and on
// a PostgreSQL server the test starts.
func TestWorkersShareTimeouts(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) {
		shareTimeouts(t, "-db", filepath.Join(t.TempDir(), "build.db"))
	})
	t.Run("postgres", func(t *testing.T) {
		srv := pgtest.New(t, pgtest.Options{})
		shareTimeouts(t, "-postgres", srv.DSN)
	})
}

func shareTimeouts(t *testing.T, db ...string) {
	a := startWorker(t, db...)
	a.send("create TASK-1", "fire TASK-1 picked_up build_orchestrator picked up")
	got := a.expect("STATE_TRANSITION")
	if len(got) != 2 || got[0].Event != "MACHINE_CREATED" || got[1].From != "pending" || got[1].To != "assigned" || got[1].Actor != "@build_orchestrator" {
		t.Fatalf("first worker printed %+v", got)
	}
	a.kill()

	b, c := startWorker(t, db...), startWorker(t, db...)
	b.send("watch TASK-1")
	c.send("watch TASK-1")
	// assigned's 15 minutes started at 08:00: the warning is due at 08:12.
	b.send("advance 11m")
	c.send("advance 11m")
	b.send("advance 1m")
	c.send("advance 1m")
	for _, p := range []*proc{b, c} {
		got := p.expect("TIMEOUT_WARN")
		w := got[len(got)-1]
		if w.From != "assigned" || w.Metadata["level"] != "warn" || w.Seq != 3 {
			t.Errorf("warning %+v", w)
		}
	}
	// Both print the same log: one warning, recorded once.
	b.send("advance 10m")
	got = b.expect("TIMEOUT_ALERT")
	if w := got[len(got)-1]; w.Seq != 4 {
		t.Errorf("alert at seq %d, want 4: the warning was recorded more than once", w.Seq)
	}
}
