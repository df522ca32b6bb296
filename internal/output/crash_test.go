package output

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// The old and the new set of a spec's files: the new set changes both files, adds one and
// drops one.
var (
	oldSet = layout{
		"m.fsm.yaml":        "spec",
		"pkg/hand.go":       "package pkg\n",
		"pkg/m_fsm.go":      string(gen("../m.fsm.yaml", "package pkg\n// old code\n")),
		"pkg/m_fsm_test.go": string(gen("../m.fsm.yaml", "package pkg\n// old tests\n")),
		"pkg/m.dot":         string(gen("../m.fsm.yaml", "digraph { old }\n")),
	}
	newSet = layout{
		"m.fsm.yaml":        "spec",
		"pkg/hand.go":       "package pkg\n",
		"pkg/m_fsm.go":      string(gen("../m.fsm.yaml", "package pkg\n// new code\n")),
		"pkg/m_fsm_test.go": string(gen("../m.fsm.yaml", "package pkg\n// new tests\n")),
		"pkg/m.md":          "<!-- " + headerText + " -->\n<!-- source: ../m.fsm.yaml -->\n# new\n",
	}
)

func newPlan() Plan {
	var p Plan
	for _, name := range []string{"pkg/m_fsm.go", "pkg/m_fsm_test.go", "pkg/m.md"} {
		p.Files = append(p.Files, File{Path: filepath.FromSlash(name), Data: []byte(newSet[name]), Spec: "m.fsm.yaml"})
	}
	p.Dirs = []string{"pkg"}
	return p
}

// visible drops the hidden files (Go ignores them, and so do readers of the outputs).
func visible(l layout) string {
	var keep []string
	for p, data := range l {
		if !strings.HasPrefix(filepath.Base(p), ".") {
			keep = append(keep, p+"="+data)
		}
	}
	slices.Sort(keep)
	return fmt.Sprint(keep)
}

type stop struct{}

// TestKilledWriteLeavesOldOrNewSet stops a write after each of its durable steps, as a kill
// would (no deferred cleanup runs), and checks what the disk holds then and after the next
// run's recovery.
func TestKilledWriteLeavesOldOrNewSet(t *testing.T) {
	steps := 0
	{
		root := build(t, oldSet)
		t.Chdir(root)
		crash = func(string) { steps++ }
		_, err := Write(newPlan())
		crash = nil
		if err != nil {
			t.Fatal(err)
		}
		if got := visible(tree(t, root)); got != visible(newSet) {
			t.Fatalf("uninterrupted write:\n%s\nwant\n%s", got, visible(newSet))
		}
	}
	if steps < 8 {
		t.Fatalf("only %d steps", steps)
	}
	for k := 1; k <= steps; k++ {
		t.Run(strconv.Itoa(k), func(t *testing.T) {
			root := build(t, oldSet)
			t.Chdir(root)
			n, at := 0, ""
			crash = func(s string) {
				if n++; n == k {
					at = s
					panic(stop{})
				}
			}
			func() {
				defer func() {
					if r := recover(); r != nil && r != (stop{}) {
						panic(r)
					}
				}()
				Write(newPlan())
			}()
			crash = nil
			checkAfterKill(t, root, at)
		})
	}
}

// checkAfterKill: with no journal the visible files are the old set; with one, the next
// run's recovery completes the new set; either way no hidden file is left after it.
func checkAfterKill(t *testing.T, root, at string) {
	t.Helper()
	_, journaled := tree(t, root)["pkg/"+journalName]
	if got := visible(tree(t, root)); !journaled && got != visible(oldSet) && got != visible(newSet) {
		t.Fatalf("killed after %q without a journal:\n%s", at, got)
	}
	if err := Recover("pkg", "m.fsm.yaml"); err != nil {
		t.Fatal(err)
	}
	got := tree(t, root)
	if v := visible(got); v != visible(oldSet) && v != visible(newSet) {
		t.Fatalf("killed after %q, recovered:\n%s", at, v)
	}
	if journaled && visible(got) != visible(newSet) {
		t.Fatalf("killed after %q with a journal, recovery did not finish the new set", at)
	}
	for p := range got {
		if strings.HasPrefix(filepath.Base(p), ".") {
			t.Errorf("killed after %q: %s left after recovery", at, p)
		}
	}
	// The next write starts from a clean directory and ends with the new set.
	if _, err := Write(newPlan()); err != nil {
		t.Fatal(err)
	}
	if v := visible(tree(t, root)); v != visible(newSet) {
		t.Fatalf("the run after the kill:\n%s", v)
	}
}

// TestSIGKILLDuringWrite kills a real process with SIGKILL at each step of a write.
func TestSIGKILLDuringWrite(t *testing.T) {
	if at := os.Getenv("FSMGEN_OUTPUT_KILL_AT"); at != "" {
		k, _ := strconv.Atoi(at)
		n := 0
		crash = func(string) {
			if n++; n == k {
				syscall.Kill(os.Getpid(), syscall.SIGKILL)
				select {}
			}
		}
		if _, err := Write(newPlan()); err != nil {
			t.Fatal(err)
		}
		return
	}
	for _, k := range []int{1, 3, 4, 5, 7} {
		root := build(t, oldSet)
		t.Chdir(root)
		cmd := exec.Command(os.Args[0], "-test.run=^TestSIGKILLDuringWrite$", "-test.count=1")
		cmd.Env = append(os.Environ(), "FSMGEN_OUTPUT_KILL_AT="+strconv.Itoa(k))
		out, err := cmd.CombinedOutput()
		ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus)
		if !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
			t.Fatalf("step %d: the child was not killed: %v\n%s", k, err, out)
		}
		checkAfterKill(t, root, "step "+strconv.Itoa(k))
	}
}

func TestDamagedJournalIsATypedError(t *testing.T) {
	for name, data := range map[string]string{
		"header":    "something else\n",
		"truncated": journalHead + "\nwrite \"a",
		"escape":    journalHead + "\nremove \"../a\"\n",
		"verb":      journalHead + "\nchmod \"a\"\n",
	} {
		root := build(t, layout{"pkg/" + journalName: data, "pkg/a": "keep"})
		err := Recover(filepath.Join(root, "pkg"))
		var je *JournalError
		if !errors.As(err, &je) {
			t.Errorf("%s: %v", name, err)
		}
		if read(t, filepath.Join(root, "pkg", "a")) != "keep" {
			t.Errorf("%s: a damaged journal changed files", name)
		}
	}
}
