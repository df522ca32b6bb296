package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fsmgen/fsmgen/internal/fixture"
)

// TestGenerateOutputBudget: generate estimates what it would write before it emits
// anything, and refuses past --max-output-size (default 128MB), naming the numbers.
func TestGenerateOutputBudget(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, n int) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, fixture.WideSpec(n, n), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	written := func(out string) []string {
		entries, _ := os.ReadDir(out)
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		return names
	}

	if !testing.Short() {
		// The report's spec: refused by the default budget, before any output is built.
		big := write("wide.fsm.yaml", 2000)
		out := filepath.Join(dir, "big")
		code, _, errs := run(t, "generate", "-o", out, big)
		for _, want := range []string{"wide.fsm.yaml: generate would write about ", "Go tests (2,000 states × 2,000 events)", "the budget is 128 MB", "--max-output-size=", "nothing written"} {
			if !strings.Contains(errs, want) {
				t.Errorf("2,000×2,000: stderr lacks %q:\n%s", want, errs)
			}
		}
		if code != ExitFindings || len(written(out)) > 0 {
			t.Errorf("2,000×2,000: code %d, wrote %v", code, written(out))
		}
	}

	// A smaller one (about 1 MB): refused under a smaller budget, written under a larger one.
	small := write("small.fsm.yaml", 60)
	out := filepath.Join(dir, "small")
	code, _, errs := run(t, "generate", "--max-output-size=100KB", "-o", out, small)
	if code != ExitFindings || !strings.Contains(errs, "the budget is 100 KB; raise it with --max-output-size=") || len(written(out)) > 0 {
		t.Errorf("100KB: code %d, wrote %v, stderr:\n%s", code, written(out), errs)
	}
	if code, _, errs := run(t, "generate", "--max-output-size", "10MB", "-o", out, small); code != ExitOK || len(written(out)) == 0 {
		t.Errorf("10MB: code %d, wrote %v, stderr:\n%s", code, written(out), errs)
	}
	if code, _, errs := run(t, "generate", "--max-output-size=lots", "-o", out, small); code != ExitUsage {
		t.Errorf("--max-output-size=lots: code %d, stderr:\n%s", code, errs)
	}
}
