package cli

import (
	"strings"
	"testing"
)

// TestCheckRefusesWhatGenerateRefuses: a spec path that generate refuses is an error of
// check too, with the same message, at the start of the file (its name is escaped where
// it holds what a terminal must not print).
func TestCheckRefusesWhatGenerateRefuses(t *testing.T) {
	for _, name := range []string{
		"specs/.x.fsm.yaml", "specs/_x.fsm.yaml", "specs/.fsm.yaml", "specs/...yaml",
		"specs/a\nb.fsm.yaml", "specs/a\tb.fsm.yaml", "specs/a\x1bb.fsm.yaml", "specs/a\u2028b.fsm.yaml",
		"specs/a\u202eb.fsm.yaml", "specs/a:b.fsm.yaml",
	} {
		specs(t, name)
		gcode, _, gerrs := run(t, "generate", "--root", "root/gen", name)
		msg, ok := strings.CutPrefix(strings.TrimSpace(gerrs), "fsmgen: ")
		if gcode != ExitUsage || !ok {
			t.Fatalf("%q: generate: %d %s", name, gcode, gerrs)
		}
		code, out, errs := run(t, "check", name)
		want := escapeUnsafe(name) + ":1:1: error: " + msg + "\n"
		if code != ExitFindings || out != want || errs != "" {
			t.Errorf("%q: check: %d, stdout %q, stderr %q; want stdout %q", name, code, out, errs, want)
		}
	}
}
