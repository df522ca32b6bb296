package lsp

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fsmgen/fsmgen/internal/testtool"
)

// TestNeovim drives fsmgen lsp from a real LSP client: Neovim, headless, runs
// testdata/nvim_e2e.lua on a copy of seed 003 (open it, type a typo, read the diagnostic,
// complete, take the fix, hover, go to a definition, rename a guard, save), and the test
// reads what the script wrote and the saved file. Without nvim it skips, naming the
// package; under CI=true it fails (.ci/run installs neovim).
func TestNeovim(t *testing.T) {
	nvim := testtool.Program(t, "nvim", "apt-get install neovim")
	r := testtool.Root(t)
	dir := t.TempDir()
	fsmgen := filepath.Join(dir, "fsmgen")
	build := exec.Command("go", "build", "-o", fsmgen, "./cmd/fsmgen")
	build.Dir = r
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building fsmgen: %v\n%s", err, out)
	}
	spec := filepath.Join(dir, "review.fsm.yaml")
	data, err := os.ReadFile(filepath.Join(r, "examples", "review", "review.fsm.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(spec, data, 0o644)
	script, err := filepath.Abs(filepath.Join("testdata", "nvim_e2e.lua"))
	if err != nil {
		t.Fatal(err)
	}
	result := filepath.Join(dir, "result.txt")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, nvim, "--headless", "--clean", "-c", "luafile "+script)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "FSMGEN="+fsmgen, "SPEC="+spec, "RESULT="+result, "XDG_STATE_HOME="+dir, "XDG_DATA_HOME="+dir, "XDG_CACHE_HOME="+dir)
	out, err := cmd.CombinedOutput()
	got, rerr := os.ReadFile(result)
	if ctx.Err() != nil {
		t.Fatalf("nvim did not finish within 3 minutes (steps done:\n%s)", got)
	}
	if err != nil || rerr != nil {
		t.Fatalf("nvim: %v, result: %v\n%s\noutput:\n%s", err, rerr, got, out)
	}
	steps := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(got)), "\n") {
		k, v, _ := strings.Cut(line, "\t")
		steps[k] = v
	}
	t.Logf("steps:\n%s", got)
	// Where the seed has the typo's target and the guard's declaration.
	lineOf := func(needle string) (line, col int) {
		for i, l := range strings.Split(string(data), "\n") {
			if c := strings.Index(l, needle); c >= 0 {
				return i + 1, c + 1
			}
		}
		t.Fatalf("the seed has no %q", needle)
		return 0, 0
	}
	typoLine, typoCol := lineOf("to: pending_review,")
	guardLine, _ := lineOf("  reviews_complete:")
	for k, want := range map[string]string{
		"started":    "fsmgen",
		"diagnostic": fmt.Sprintf(`%d:%d unknown state "pending_reviewx" (did you mean "pending_review"?)`, typoLine, typoCol+len("to: ")),
		"fixed":      "true",
		"clean":      "true",
		"hover":      "**guard** `reviews_complete`",
		"definition": fmt.Sprint(guardLine),
		"renamed":    "2",
		"saved":      "true",
		"stopped":    "true",
		"done":       "true",
	} {
		if steps[k] != want {
			t.Errorf("step %s: %q, want %q", k, steps[k], want)
		}
	}
	if c := steps["completion"]; !strings.Contains(c, "pending_review,") || !strings.Contains(c, "under_review") {
		t.Errorf("completion: %s", c)
	}
	saved, err := os.ReadFile(spec)
	if err != nil {
		t.Fatal(err)
	}
	want := strings.ReplaceAll(string(data), "if: [reviews_complete", "if: [enough_reviews")
	want = strings.Replace(want, "\n  reviews_complete:", "\n  enough_reviews:", 1)
	if string(saved) != want {
		t.Errorf("the saved spec:\n%s\nwant\n%s", saved, want)
	}
}
