package sqlite

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fsmgen/fsmgen/fsmrt"

	msqlite "modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

func TestPragmas(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts []Option
		sync int
		busy int
	}{
		{"defaults", nil, 2, 10000},
		{"relaxed", []Option{WithSynchronousNormal(), WithBusyTimeout(1500 * time.Millisecond)}, 1, 1500},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := openStore(t, tempPath(t), tc.opts...)
			// Pin one connection: the pragmas but journal_mode are per connection.
			conn, err := s.db.Conn(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			var mode string
			var sync, busy, fk int
			err = conn.QueryRowContext(context.Background(),
				`SELECT (SELECT journal_mode FROM pragma_journal_mode), (SELECT synchronous FROM pragma_synchronous),
				(SELECT timeout FROM pragma_busy_timeout), (SELECT foreign_keys FROM pragma_foreign_keys)`).Scan(&mode, &sync, &busy, &fk)
			if err != nil {
				t.Fatal(err)
			}
			if mode != "wal" || sync != tc.sync || busy != tc.busy || fk != 1 {
				t.Errorf("journal_mode %s, synchronous %d, busy_timeout %d, foreign_keys %d; want wal, %d, %d, 1", mode, sync, busy, fk, tc.sync, tc.busy)
			}
		})
	}
}

// A file name with characters a URI gives a meaning to opens the file of that name.
func TestOddPath(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "dir with space, %41 and #")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "a?b=c&d#e.db")
	s := openStore(t, path)
	commitN(t, s, "m", 1)
	if _, err := os.Stat(path); err != nil {
		t.Errorf("the database is not where asked: %v", err)
	}
	if _, err := Open(context.Background(), ""); err == nil {
		t.Error("opened an empty path")
	}
}

func TestDurableAcrossReopen(t *testing.T) {
	path := tempPath(t)
	s, err := Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	commitN(t, s, "m", 5, 3)
	c := testCommit("m", 6, "key-6", false)
	if err := s.Commit(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	want := mustLoad(t, s, "m")
	log, err := s.Log(context.Background(), "test.M", "m", 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	s = openStore(t, path)
	got := mustLoad(t, s, "m")
	if !reflect.DeepEqual(got, want) {
		t.Errorf("after reopening:\n got %+v\nwant %+v", got, want)
	}
	if got.Version != 6 || got.SnapshotSeq != 3 || string(got.Snapshot) != `{"snap":3}` || len(got.Entries) != 3 {
		t.Errorf("after reopening: %+v", got)
	}
	log2, err := s.Log(context.Background(), "test.M", "m", 0)
	if err != nil || !reflect.DeepEqual(log2, log) || len(log2) != 6 {
		t.Errorf("log after reopening: %d entries, %v", len(log2), err)
	}
	e, ok, err := s.FindKey(context.Background(), "test.M", "m", "key-6")
	if err != nil || !ok || e.Seq != 6 || !e.At.Equal(c.Entry.At.Truncate(time.Microsecond)) {
		t.Errorf("key after reopening: %+v, %v, %v", e, ok, err)
	}
	// The next commit goes on from there.
	if err := s.Commit(context.Background(), testCommit("m", 7, "", false)); err != nil {
		t.Fatal(err)
	}
}

// Empty but not nil bytes come back empty, nil bytes nil.
func TestEmptyBytes(t *testing.T) {
	s := openStore(t, tempPath(t))
	c := testCommit("m", 1, "", true)
	c.Entry.Data, c.Snapshot = []byte{}, []byte{}
	if err := s.Commit(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	c = testCommit("m", 2, "", false)
	c.Entry.Data = nil
	if err := s.Commit(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	l := mustLoad(t, s, "m")
	if l.Snapshot == nil || len(l.Snapshot) != 0 || l.SnapshotSeq != 1 || len(l.Entries) != 1 || l.Entries[0].Data != nil {
		t.Errorf("loaded %+v", l)
	}
	log, err := s.Log(context.Background(), "test.M", "m", 0)
	if err != nil || len(log) != 2 || log[0].Data == nil || len(log[0].Data) != 0 || log[1].Data != nil {
		t.Errorf("log %+v, %v", log, err)
	}
}

// raceRounds makes writers commit entry 1 to rounds of one instance through stores, all
// at once each round, and checks that exactly one wins each round and the others get
// conflicts.
func raceRounds(t *testing.T, stores []*Store, writers, rounds int) {
	ctx := context.Background()
	for round := int64(1); round <= int64(rounds); round++ {
		var wg sync.WaitGroup
		errs := make([]error, writers)
		for w := range writers {
			wg.Go(func() {
				c := testCommit("race", round, "", w%3 == 0)
				c.Entry.Data = fmt.Appendf(nil, `{"round":%d,"writer":%d}`, round, w)
				errs[w] = stores[w%len(stores)].Commit(ctx, c)
			})
		}
		wg.Wait()
		won := -1
		for w, err := range errs {
			switch {
			case err == nil && won >= 0:
				t.Fatalf("round %d: writers %d and %d both committed", round, won, w)
			case err == nil:
				won = w
			case !errors.Is(err, fsmrt.ErrStoreConflict):
				t.Fatalf("round %d: writer %d: %v, want a conflict", round, w, err)
			}
		}
		if won < 0 {
			t.Fatalf("round %d: no writer won", round)
		}
		for i, s := range stores {
			log, err := s.Log(ctx, "test.M", "race", round-1)
			if err != nil || len(log) != 1 || string(log[0].Data) != fmt.Sprintf(`{"round":%d,"writer":%d}`, round, won) {
				t.Fatalf("round %d, store %d: writer %d won, the log has %+v, %v", round, i, won, log, err)
			}
		}
	}
}

// Two Stores on one file, as two processes would have, race on one instance.
func TestTwoStoresRace(t *testing.T) {
	path := tempPath(t)
	a, b := openStore(t, path), openStore(t, path)
	raceRounds(t, []*Store{a, b}, 8, 20)
	if l := mustLoad(t, b, "race"); l.Version != 20 {
		t.Errorf("after 20 rounds: version %d", l.Version)
	}
}

// processEnv names the database file a child process of TestProcesses commits to.
const processEnv = "FSMGEN_SQLITE_TEST_PROCESS_DB"

// Processes sharing the file commit to one instance, each loading it and committing the
// next entry until it committed its share, taking conflicts as lost races.
func TestProcesses(t *testing.T) {
	if path := os.Getenv(processEnv); path != "" {
		childProcess(t, path)
		return
	}
	if testing.Short() {
		t.Skip("starts processes")
	}
	path := tempPath(t)
	openStore(t, path) // migrated before the race
	const procs, each = 3, 15
	var wg sync.WaitGroup
	outs := make([][]byte, procs)
	errs := make([]error, procs)
	for p := range procs {
		wg.Go(func() {
			cmd := exec.Command(os.Args[0], "-test.run=^TestProcesses$", "-test.count=1")
			cmd.Env = append(os.Environ(), processEnv+"="+path, "FSMGEN_SQLITE_TEST_COMMITS="+strconv.Itoa(each))
			outs[p], errs[p] = cmd.CombinedOutput()
		})
	}
	wg.Wait()
	for p := range procs {
		if errs[p] != nil {
			t.Errorf("process %d: %v\n%s", p, errs[p], outs[p])
		}
	}
	s := openStore(t, path)
	l := mustLoad(t, s, "shared")
	log, err := s.Log(context.Background(), "test.M", "shared", 0)
	if err != nil || l.Version != procs*each || len(log) != procs*each {
		t.Errorf("after %d processes committed %d entries each: version %d, %d entries, %v", procs, each, l.Version, len(log), err)
	}
}

// childProcess commits its share of the entries of TestProcesses.
func childProcess(t *testing.T, path string) {
	n, err := strconv.Atoi(os.Getenv("FSMGEN_SQLITE_TEST_COMMITS"))
	if err != nil {
		t.Fatal(err)
	}
	s := openStore(t, path)
	ctx := context.Background()
	for done := 0; done < n; {
		l, err := s.Load(ctx, "test.M", "shared")
		if err != nil {
			t.Fatal(err)
		}
		c := testCommit("shared", l.Version+1, fmt.Sprintf("pid-%d-%d", os.Getpid(), done), l.Version%4 == 0)
		switch err := s.Commit(ctx, c); {
		case err == nil:
			done++
		case !errors.Is(err, fsmrt.ErrStoreConflict):
			t.Fatalf("commit %d: %v", c.Entry.Seq, err)
		}
	}
}

// holdWriteLock takes the write lock of the database in file path on a connection of its
// own, as another process would, until the test ends or release is called.
func holdWriteLock(t *testing.T, path string) (release func()) {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := db.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.ExecContext(context.Background(), "BEGIN IMMEDIATE"); err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	release = func() {
		once.Do(func() {
			_, _ = conn.ExecContext(context.Background(), "ROLLBACK")
			_ = conn.Close()
			_ = db.Close()
		})
	}
	t.Cleanup(release)
	return release
}

func TestBusy(t *testing.T) {
	path := tempPath(t)
	s := openStore(t, path, WithBusyTimeout(100*time.Millisecond))
	commitN(t, s, "m", 1)
	release := holdWriteLock(t, path)

	// The lock outlasts the busy timeout: SQLITE_BUSY, not a conflict.
	err := s.Commit(context.Background(), testCommit("m", 2, "", false))
	var se *msqlite.Error
	if !errors.As(err, &se) || se.Code()&0xff != sqlite3.SQLITE_BUSY || errors.Is(err, fsmrt.ErrStoreConflict) {
		t.Errorf("commit under another's write lock: %v, want SQLITE_BUSY", err)
	}
	// Readers are not blocked by the writer.
	if l := mustLoad(t, s, "m"); l.Version != 1 {
		t.Errorf("load under another's write lock: %+v", l)
	}
	// Once the lock is released, the same commit goes through.
	release()
	if err := s.Commit(context.Background(), testCommit("m", 2, "", false)); err != nil {
		t.Fatal(err)
	}
}

// A commit waiting for the lock gives up when its context is done, writing nothing.
func TestCancelWhileWaiting(t *testing.T) {
	path := tempPath(t)
	s := openStore(t, path)
	release := holdWriteLock(t, path)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	var wg sync.WaitGroup
	errs := make([]error, 3)
	for i := range errs { // one waits for SQLite's lock, the others for the Store's
		wg.Go(func() { errs[i] = s.Commit(ctx, testCommit(fmt.Sprint("m", i), 1, "", false)) })
	}
	wg.Wait()
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("the commits gave up after %v", d)
	}
	for i, err := range errs {
		if err == nil || errors.Is(err, fsmrt.ErrStoreConflict) {
			t.Errorf("commit %d with a context done while waiting: %v", i, err)
		}
	}
	release()
	for i := range errs {
		if l := mustLoad(t, s, fmt.Sprint("m", i)); l.Version != 0 {
			t.Errorf("a cancelled commit stored %+v", l)
		}
	}
}

func TestCorruptRows(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name    string
		corrupt string
		// what refuses the corrupt instance, and whether Commit must too
		load, log, commit bool
	}{
		{"seq as text", `UPDATE fsmgen_entries SET seq = 'two' WHERE seq = 2`, true, true, false},
		{"entry deleted", `DELETE FROM fsmgen_entries WHERE seq = 2`, true, true, false},
		{"last entry deleted", `DELETE FROM fsmgen_entries WHERE seq = 3`, true, true, false},
		{"entry renumbered", `UPDATE fsmgen_entries SET seq = 9 WHERE seq = 3`, true, true, false},
		{"at as text", `UPDATE fsmgen_entries SET at = 'yesterday' WHERE seq = 3`, true, true, false},
		{"version as text", `UPDATE fsmgen_instances SET version = 'three'`, true, true, true},
		{"version zero", `UPDATE fsmgen_instances SET version = 0`, true, false, false},
		{"snapshot after the log", `UPDATE fsmgen_instances SET snapshot_seq = 7`, true, false, false},
		{"snapshot lost", `UPDATE fsmgen_instances SET snapshot = NULL`, true, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := openStore(t, tempPath(t))
			commitN(t, s, "m", 3, 1)
			mustExec(t, s, tc.corrupt)
			_, err := s.Load(ctx, "test.M", "m")
			if tc.load && !errors.Is(err, ErrCorrupt) {
				t.Errorf("load: %v, want ErrCorrupt", err)
			}
			_, err = s.Log(ctx, "test.M", "m", 0)
			if tc.log && !errors.Is(err, ErrCorrupt) {
				t.Errorf("log: %v, want ErrCorrupt", err)
			}
			err = s.Commit(ctx, testCommit("m", 4, "", false))
			if tc.commit && (err == nil || errors.Is(err, fsmrt.ErrStoreConflict)) {
				t.Errorf("commit: %v, want an error", err)
			}
		})
	}
	t.Run("key entry corrupt", func(t *testing.T) {
		s := openStore(t, tempPath(t))
		if err := s.Commit(ctx, testCommit("m", 1, "k", false)); err != nil {
			t.Fatal(err)
		}
		mustExec(t, s, `UPDATE fsmgen_entries SET at = x'00ff'`)
		if _, ok, err := s.FindKey(ctx, "test.M", "m", "k"); ok || !errors.Is(err, ErrCorrupt) {
			t.Errorf("find key: %v, %v, want ErrCorrupt", ok, err)
		}
	})
}

// claimEnv names the database file a child process of TestProcessesClaim claims from.
const claimEnv = "FSMGEN_SQLITE_TEST_CLAIM_DB"

// Processes sharing the file, started together, claim the effects and deadlines of many
// instances at once, recording the effects delivered as they go: none is claimed twice,
// and all are claimed.
func TestProcessesClaim(t *testing.T) {
	if path := os.Getenv(claimEnv); path != "" {
		claimProcess(t, path)
		return
	}
	if testing.Short() {
		t.Skip("starts processes")
	}
	path := tempPath(t)
	s := openStore(t, path)
	const procs, instances, effects = 3, 40, 3
	for i := range instances {
		c := withEffects(testCommit(fmt.Sprint("m", i), 1, "", false), effects)
		c.Rearm, c.Deadlines = true, []fsmrt.Deadline{{Name: "expiry", At: t0, State: "b", Event: "expire"}}
		mustCommit(t, s, c)
	}
	children := make([]*claimChild, procs)
	for p := range children {
		children[p] = startClaimChild(t, path)
	}
	for _, c := range children {
		c.waitReady() // all open, none claiming yet
	}
	for _, c := range children {
		c.start()
	}
	seen := map[string]int{}
	busy := 0
	for p, c := range children {
		claimed, err := c.wait()
		if err != nil {
			t.Fatalf("process %d: %v\n%s%s", p, err, c.out.String(), c.stderr.String())
		}
		for _, k := range claimed {
			if prev, dup := seen[k]; dup {
				t.Errorf("%s claimed by processes %d and %d", k, prev, p)
			}
			seen[k] = p
		}
		if len(claimed) > 0 {
			busy++
		}
		t.Logf("process %d claimed %d", p, len(claimed))
	}
	if want := instances * (effects + 1); len(seen) != want {
		t.Errorf("%d effects and deadlines claimed, want %d", len(seen), want)
	}
	if busy < 2 {
		t.Errorf("%d of %d processes claimed anything: no race was run", busy, procs)
	}
	// Each effect was claimed once, and recorded delivered.
	if got := tableRows(t, s, `SELECT count(*) FROM fsmgen_effects WHERE attempts != 1 OR delivered_at IS NULL`); got[0] != "[0]" {
		t.Errorf("effects claimed more than once or not delivered: %v", got)
	}
}

// claimChild is a child process of TestProcessesClaim.
type claimChild struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	lines  *bufio.Scanner
	out    bytes.Buffer // what it printed to stdout but the claims
	stderr bytes.Buffer
}

// startClaimChild starts a child process claiming from the database in file path.
func startClaimChild(t *testing.T, path string) *claimChild {
	t.Helper()
	c := &claimChild{cmd: exec.Command(os.Args[0], "-test.run=^TestProcessesClaim$", "-test.count=1")}
	c.cmd.Env = append(os.Environ(), claimEnv+"="+path)
	c.cmd.Stderr = &c.stderr
	stdout, err := c.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if c.stdin, err = c.cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	c.lines = bufio.NewScanner(stdout)
	if err := c.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if c.cmd.ProcessState == nil {
			_ = c.cmd.Process.Kill()
			_ = c.cmd.Wait()
		}
	})
	return c
}

// waitReady reads the child's output up to its ready line (or its end, when it failed).
func (c *claimChild) waitReady() {
	for c.lines.Scan() && c.lines.Text() != "ready" {
		fmt.Fprintln(&c.out, c.lines.Text())
	}
}

// start lets the child claim.
func (c *claimChild) start() {
	_, _ = io.WriteString(c.stdin, "go\n")
	_ = c.stdin.Close()
}

// wait reads what the child claimed until it exits.
func (c *claimChild) wait() ([]string, error) {
	var claimed []string
	for c.lines.Scan() {
		if k, ok := strings.CutPrefix(c.lines.Text(), "claimed "); ok {
			claimed = append(claimed, k)
		} else {
			fmt.Fprintln(&c.out, c.lines.Text())
		}
	}
	return claimed, c.cmd.Wait()
}

// claimProcess claims effects and deadlines of TestProcessesClaim, two at a time, until
// none is left, printing each it claimed; it starts when its parent says so.
func claimProcess(t *testing.T, path string) {
	ctx := context.Background()
	s := openStore(t, path)
	owner := fmt.Sprint("process-", os.Getpid())
	fmt.Println("ready")
	if _, err := bufio.NewReader(os.Stdin).ReadString('\n'); err != nil {
		t.Fatal(err)
	}
	for {
		es, err := s.ClaimEffects(ctx, "test.M", owner, t0, time.Hour, 2)
		if err != nil {
			t.Fatal(err)
		}
		ds, err := s.ClaimDeadlines(ctx, "test.M", owner, t0, time.Hour, 2)
		if err != nil {
			t.Fatal(err)
		}
		if len(es)+len(ds) == 0 {
			return
		}
		var done []fsmrt.EffectID
		for _, e := range es {
			fmt.Printf("claimed effect %s/%d/%d\n", e.ID, e.Seq, e.Index)
			done = append(done, e.EffectID)
		}
		for _, d := range ds {
			fmt.Printf("claimed deadline %s/%s\n", d.ID, d.Name)
		}
		time.Sleep(time.Millisecond) // delivering
		if err := s.CompleteEffects(ctx, done, t0); err != nil {
			t.Fatal(err)
		}
	}
}
