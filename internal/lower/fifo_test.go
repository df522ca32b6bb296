//go:build unix

package lower_test

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fsmgen/fsmgen/internal/lower"
	"github.com/fsmgen/fsmgen/internal/testtool"
)

// A migration that names a FIFO (or a directory, or a device) is refused at its from:,
// at once: opening a FIFO for reading blocks until something writes to it.
func TestMigrationFromAFIFOIsRefused(t *testing.T) {
	dir := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(dir, "old.fsm.yaml"), 0o644); err != nil {
		if testtool.CI() {
			t.Fatalf("cannot make a FIFO in the temporary directory: %v (CI=true, so the test may not skip)", err)
		}
		t.Skipf("cannot make a FIFO in the temporary directory: %v; point TMPDIR at a local file system", err)
	}
	if err := os.Mkdir(filepath.Join(dir, "dir.fsm.yaml"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, from := range []string{"old.fsm.yaml", "dir.fsm.yaml", "/dev/zero"} {
		spec := "version: 1\nmachine: M\npackage: m\nstates:\n  a: { initial: true, terminal: true }\ntransitions: []\nmigrations:\n  - from: " + from + "\n"
		path := filepath.Join(dir, "new.fsm.yaml")
		done := make(chan []string, 1)
		go func() {
			var out []string
			for _, d := range lower.Check(path, []byte(spec)) {
				out = append(out, d.String())
			}
			done <- out
		}()
		select {
		case got := <-done:
			full := from
			if !filepath.IsAbs(from) {
				full = filepath.Join(dir, from)
			}
			want := path + ":8:11: error: cannot read the older spec: " + full + " is not a regular file"
			if len(got) != 1 || !strings.HasPrefix(got[0], want) {
				t.Errorf("from %s: %q, want %q", from, got, want)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("from %s: the check did not return in 10 s", from)
		}
	}
}
