package output

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// hdr starts a file generated from x.fsm.yaml beside it.
const hdr = HeaderPrefix + "\n// source: x.fsm.yaml\n"

func read(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestDiffReportsUpdatesWithoutWriting(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "x_fsm.go")
	os.WriteFile(p, []byte(hdr+"package x\n\nconst A = 1\nconst B = 2\n"), 0o644)
	plan := Plan{Files: []File{{Path: p, Data: []byte(hdr + "package x\n\nconst A = 1\nconst B = 3\n"), Spec: filepath.Join(dir, "x.fsm.yaml")}}, Dirs: []string{dir}}
	changes, err := Diff(plan)
	if err != nil || len(changes) != 1 || changes[0].Kind != "update" {
		t.Fatalf("changes %v, err %v", changes, err)
	}
	for _, want := range []string{"-const B = 2\n", "+const B = 3\n", " const A = 1\n", "@@ -3,4 +3,4 @@"} {
		if !strings.Contains(changes[0].Diff, want) {
			t.Errorf("diff lacks %q:\n%s", want, changes[0].Diff)
		}
	}
	if !strings.Contains(read(t, p), "B = 2") {
		t.Error("Diff wrote the file")
	}
}

func TestWriteFailureLeavesOldFile(t *testing.T) {
	if os.Geteuid() == 0 {
		// Root ignores directory permissions: run this test again as an unprivileged user,
		// from a copy of the test binary that user may execute.
		bin, err := os.ReadFile(os.Args[0])
		if err != nil {
			t.Fatal(err)
		}
		tmp, err := os.MkdirTemp("", "fsmgen-output")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.RemoveAll(tmp) })
		exe := filepath.Join(tmp, "output.test")
		if err := os.Chmod(tmp, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(exe, bin, 0o755); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(exe, "-test.run=^TestWriteFailureLeavesOldFile$", "-test.count=1", "-test.v")
		cmd.Env = append(os.Environ(), "TMPDIR=/tmp")
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
		if out, err := cmd.CombinedOutput(); err != nil || !strings.Contains(string(out), "--- PASS: TestWriteFailureLeavesOldFile") {
			t.Fatalf("as an unprivileged user: %v\n%s", err, out)
		}
		return
	}
	dir := t.TempDir()
	p := filepath.Join(dir, "x_fsm.go")
	os.WriteFile(p, []byte(hdr+"old\n"), 0o644)
	os.Chmod(dir, 0o555) // no new files can be created: the atomic write must fail cleanly
	defer os.Chmod(dir, 0o755)
	if _, err := Write(Plan{Files: []File{{Path: p, Data: []byte(hdr + "new\n"), Spec: filepath.Join(dir, "x.fsm.yaml")}}}); err == nil {
		t.Fatal("write into a read-only directory succeeded")
	}
	if read(t, p) != hdr+"old\n" {
		t.Error("old file damaged")
	}
}
