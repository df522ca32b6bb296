package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fsmgen/fsmgen/internal/testtool"
)

// diffSpecs writes two versions of a small spec: v2 adds a state (compatible), changes a
// target (behaviour) and, when breaking, removes a state.
func diffSpecs(t *testing.T, breaking bool) (dir, v1, v2 string) {
	t.Helper()
	dir = t.TempDir()
	one := "version: 1\nmachine: Door\npackage: door\nevents: { lock: {}, unlock: {}, jam: {} }\nstates:\n  closed: { initial: true }\n  open: {}\n  locked: {}\ntransitions:\n  - { from: closed, to: open }\n  - { from: open, to: closed }\n  - { from: closed, on: lock, to: locked }\n  - { from: locked, on: unlock, to: closed }\n"
	two := strings.Replace(one, "  - { from: locked, on: unlock, to: closed }\n", "  - { from: locked, on: unlock, to: open }\n  - { from: open, on: jam, to: jammed }\n", 1)
	two = strings.Replace(two, "  locked: {}\n", "  locked: {}\n  jammed: { terminal: true }\n", 1)
	if breaking {
		two = strings.NewReplacer("  locked: {}\n", "", "  - { from: closed, on: lock, to: locked }\n", "", "  - { from: locked, on: unlock, to: open }\n", "").Replace(two)
	}
	v1, v2 = filepath.Join(dir, "v1.fsm.yaml"), filepath.Join(dir, "v2.fsm.yaml")
	os.WriteFile(v1, []byte(one), 0o644)
	os.WriteFile(v2, []byte(two), 0o644)
	return dir, v1, v2
}

func TestDiffExitCodes(t *testing.T) {
	_, v1, v2 := diffSpecs(t, false)
	// Without a migration, the instances stored under v1 would be refused.
	code, out, _ := run(t, "diff", v1, v2)
	if code != ExitFindings || !strings.Contains(out, v2+":1:1: breaking: the fingerprint changes (") {
		t.Errorf("no migration: code %d:\n%s", code, out)
	}
	data, _ := os.ReadFile(v2)
	os.WriteFile(v2, append(data, "migrations:\n  - from: v1.fsm.yaml\n"...), 0o644)
	code, out, _ = run(t, "diff", v1, v2)
	if code != ExitOK || !strings.Contains(out, v2+":14:5: behaviour: transition from locked on unlock goes to open (was closed) (was at "+v1+":13:5)") ||
		!strings.Contains(out, v2+":17:5: compatible: instances stored under the old spec (") ||
		!strings.HasSuffix(out, "verdict: behaviour (0 breaking, 1 behaviour, 3 compatible)\n") {
		t.Errorf("behaviour change: code %d:\n%s", code, out)
	}
	if code, _, _ := run(t, "diff", "--fail-on", "behaviour", v1, v2); code != ExitFindings {
		t.Errorf("--fail-on behaviour: code %d", code)
	}
	_, b1, b2 := diffSpecs(t, true)
	code, out, _ = run(t, "diff", b1, b2)
	if code != ExitFindings || !strings.Contains(out, b1+":8:3: breaking: state \"locked\" removed") {
		t.Errorf("breaking change: code %d:\n%s", code, out)
	}
	if code, _, _ := run(t, "diff", "--fail-on", "none", b1, b2); code != ExitOK {
		t.Errorf("--fail-on none: code %d", code)
	}
	if code, out, _ := run(t, "diff", v1, v1); code != ExitOK || out != "verdict: compatible (0 breaking, 0 behaviour, 0 compatible)\n" {
		t.Errorf("no change: code %d, %q", code, out)
	}
	for _, args := range [][]string{
		{"diff", v1},
		{"diff", v1, v2, v2},
		{"diff", "--fail-on", "compatible", v1, v2},
		{"diff", "--format", "xml", v1, v2},
		{"diff", v1, filepath.Join(filepath.Dir(v1), "missing.fsm.yaml")},
		{"diff", "--base", "HEAD", v1, v2},
	} {
		if code, _, _ := run(t, args...); code != ExitUsage {
			t.Errorf("%v: code %d, want %d", args, code, ExitUsage)
		}
	}
	// A version with errors cannot be compared: its findings say why.
	bad := filepath.Join(filepath.Dir(v1), "bad.fsm.yaml")
	os.WriteFile(bad, []byte("version: 1\nmachine: Door\npackage: door\nstates: {}\n"), 0o644)
	if code, _, errs := run(t, "diff", v1, bad); code != ExitUsage || !strings.Contains(errs, "bad.fsm.yaml has errors") {
		t.Errorf("a spec with errors: code %d, %s", code, errs)
	}
}

// TestDiffBase compares a spec with itself at a git revision, as a CI gate does.
func TestDiffBase(t *testing.T) {
	needGit(t)
	dir, v1, v2 := diffSpecs(t, true)
	spec := filepath.Join(dir, "door.fsm.yaml")
	data, _ := os.ReadFile(v1)
	os.WriteFile(spec, data, 0o644)
	git := gitIn(t, dir)
	git("init", "-q")
	git("add", "door.fsm.yaml")
	git("commit", "-q", "-m", "v1")
	data, _ = os.ReadFile(v2)
	os.WriteFile(spec, data, 0o644)
	code, out, errs := run(t, "diff", "--base", "HEAD", "--format", "github-actions", spec)
	if code != ExitFindings || !strings.Contains(out, "::error file="+spec+",line=1,col=1::breaking: state \"locked\" removed: instances stored in it cannot be loaded (map it to a new state) (HEAD:"+filepath.ToSlash(spec)+":8:3)") {
		t.Errorf("--base HEAD: code %d:\n%s%s", code, out, errs)
	}
	if code, _, errs := run(t, "diff", "--base", "no-such-rev", spec); code != ExitUsage || !strings.Contains(errs, "no-such-rev") {
		t.Errorf("an unknown revision: code %d, %s", code, errs)
	}
}

// TestDiffBaseMigrated: the CI gate once specs migrate. The spec at the revision declares
// a migration of its own (from a file relative to it, which a revision has no directory
// for: it is not read); the spec in the tree keeps the revision's version as a file and
// migrates from it, so the gate passes.
func TestDiffBaseMigrated(t *testing.T) {
	needGit(t)
	dir, _, v2 := diffSpecs(t, false)
	data, _ := os.ReadFile(v2)
	two := string(data) + "migrations:\n  - from: v1.fsm.yaml\n"
	spec := filepath.Join(dir, "door.fsm.yaml")
	os.WriteFile(spec, []byte(two), 0o644)
	git := gitIn(t, dir)
	git("init", "-q")
	git("add", "door.fsm.yaml", "v1.fsm.yaml")
	git("commit", "-q", "-m", "v2")
	// Version 3 adds a state; version 2 is kept beside it.
	os.WriteFile(filepath.Join(dir, "door.v2.fsm.yaml"), []byte(two), 0o644)
	three := strings.Replace(two, "  jammed: { terminal: true }\n", "  jammed: { terminal: true }\n  broken: { terminal: true }\n", 1)
	three = strings.Replace(three, "  - { from: open, on: jam, to: jammed }\n", "  - { from: open, on: jam, to: jammed }\n  - { from: closed, on: jam, to: broken }\n", 1)
	three = strings.Replace(three, "  - from: v1.fsm.yaml\n", "  - from: door.v2.fsm.yaml\n", 1)
	os.WriteFile(spec, []byte(three), 0o644)
	code, out, errs := run(t, "diff", "--base", "HEAD", spec)
	if code != ExitOK || !strings.Contains(out, `compatible: state "broken" added`) || !strings.Contains(out, "compatible: instances stored under the old spec (") ||
		!strings.Contains(out, "the migration from door.v2.fsm.yaml") {
		t.Errorf("--base HEAD, migrated: code %d:\n%s%s", code, out, errs)
	}
	// The same without keeping version 2 fails the gate.
	os.WriteFile(spec, []byte(strings.Replace(three, "migrations:\n  - from: door.v2.fsm.yaml\n", "", 1)), 0o644)
	if code, out, _ := run(t, "diff", "--base", "HEAD", spec); code != ExitFindings || !strings.Contains(out, "breaking: the fingerprint changes") {
		t.Errorf("--base HEAD, not migrated: code %d:\n%s", code, out)
	}
}

// needGit skips a test without git, naming the command that installs it, but under
// CI=true, where .ci/run installs it.
func needGit(t *testing.T) {
	t.Helper()
	testtool.Program(t, "git", testtool.InstallGit)
}

// gitIn returns a function that runs git in dir, failing the test when it fails.
func gitIn(t *testing.T, dir string) func(args ...string) {
	return func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=t", "-c", "user.email=t@example.com"}, args...)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
}
