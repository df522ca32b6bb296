package output

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// taskPlan is generate's plan for task.fsm.yaml written beside it.
func taskPlan() Plan {
	return Plan{Files: []File{{Path: "task_fsm.go", Data: gen("task.fsm.yaml", "package task\n// new\n"), Spec: "task.fsm.yaml"}}, Dirs: []string{"."}}
}

// A journal is a file like any other: it can arrive with a checkout. Recovery replays only
// steps on files that this run's specs generated, and refuses, touching nothing, a journal
// that names anything else.
func TestJournalNamingOtherFilesIsRefused(t *testing.T) {
	hand := "package task\n\nfunc main() {}\n"
	other := string(gen("other.fsm.yaml", "package other\n"))
	cases := []struct {
		name  string
		files layout
		want  string
	}{{
		name: "removes a hand-written file and the spec",
		files: layout{
			journalName: journalHead + "\nremove \"main.go\"\nremove \"task.fsm.yaml\"\n",
		},
		want: `main.go, which fsmgen did not write`,
	}, {
		name: "replaces a hand-written file",
		files: layout{
			journalName:         journalHead + "\nwrite \"main.go\"\n",
			tempName("main.go"): string(gen("task.fsm.yaml", "package task\n// replaced\n")),
		},
		want: `main.go, which fsmgen did not write`,
	}, {
		name: "writes a file that is not generated",
		files: layout{
			journalName:             journalHead + "\nwrite \"task_fsm.go\"\n",
			tempName("task_fsm.go"): "package task\n// no header\n",
			"task_fsm.go":           string(gen("task.fsm.yaml", "package task\n// old\n")),
		},
		want: `.task_fsm.go.fsmgen-new, which fsmgen did not write`,
	}, {
		name: "removes a file of another spec",
		files: layout{
			journalName:      journalHead + "\nremove \"other_fsm.go\"\n",
			"other_fsm.go":   other,
			"other.fsm.yaml": "",
		},
		want: `other_fsm.go, generated from other.fsm.yaml, not from a spec of this run`,
	}, {
		name: "removes a generated file that names no spec",
		files: layout{
			journalName: journalHead + "\nremove \"old.md\"\n",
			"old.md":    "<!-- " + headerText + " -->\n# no source line\n",
		},
		want: `old.md, which names no spec`,
	}, {
		name: "names a file fsmgen never generates",
		files: layout{
			journalName: journalHead + "\nremove \"notes.txt\"\n",
		},
		want: `notes.txt, which is no kind of file fsmgen generates`,
	}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.files["task.fsm.yaml"] = "spec"
			c.files["main.go"] = hand
			c.files["notes.txt"] = "notes"
			root := build(t, c.files)
			t.Chdir(root)
			before := tree(t, root)
			_, err := Write(taskPlan())
			var je *JournalError
			if !errors.As(err, &je) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want a JournalError saying %q", err, c.want)
			}
			if after := tree(t, root); fmt.Sprint(after) != fmt.Sprint(before) {
				t.Errorf("a refused journal changed the disk:\nbefore %v\nafter  %v", before, after)
			}
		})
	}
}

// The run's own journal is still finished, and leftovers of other specs' runs (or files that
// only look like leftovers) are left alone.
func TestJournalOfTheRunsSpecIsReplayed(t *testing.T) {
	root := build(t, layout{
		"task.fsm.yaml":          "spec",
		"task_fsm.go":            string(gen("task.fsm.yaml", "package task\n// old\n")),
		"task.dot":               string(gen("task.fsm.yaml", "digraph {}\n")),
		tempName("task_fsm.go"):  string(gen("task.fsm.yaml", "package task\n// new\n")),
		journalName:              journalHead + "\nwrite \"task_fsm.go\"\nremove \"task.dot\"\nremove \"gone.md\"\n",
		tempName("notes.md"):     "hand-written, oddly named\n",
		tempName("other_fsm.go"): string(gen("other.fsm.yaml", "package other\n")),
	})
	t.Chdir(root)
	if err := Recover(".", "task.fsm.yaml"); err != nil {
		t.Fatal(err)
	}
	got := tree(t, root)
	want := layout{
		"task.fsm.yaml":          "spec",
		"task_fsm.go":            string(gen("task.fsm.yaml", "package task\n// new\n")),
		tempName("notes.md"):     "hand-written, oddly named\n",
		tempName("other_fsm.go"): string(gen("other.fsm.yaml", "package other\n")),
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("after recovery:\n%v\nwant\n%v", got, want)
	}
}

// A file with the generated header but no source line does not say which spec it came
// from: it is not overwritten (nor removed).
func TestHeaderWithoutSourceIsNotOverwritten(t *testing.T) {
	root := build(t, layout{"task.fsm.yaml": "", "task_fsm.go": HeaderPrefix + "\npackage task\n// hand-written after all\n"})
	t.Chdir(root)
	_, err := Write(taskPlan())
	var ce *ConflictError
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), "task_fsm.go has fsmgen's header but no source line") {
		t.Fatalf("err = %v, want a conflict", err)
	}
	if read(t, filepath.Join(root, "task_fsm.go")) != HeaderPrefix+"\npackage task\n// hand-written after all\n" {
		t.Error("overwritten")
	}
}
