package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestImportNamedDelay: --delay gives a named delay of XState's after its value, which
// makes it the configurable timeout of the state that waits it; a malformed --delay is a
// usage error, and a named delay without one is refused at its key.
func TestImportNamedDelay(t *testing.T) {
	in := filepath.Join(t.TempDir(), "light.json")
	os.WriteFile(in, []byte(`{"id": "light", "initial": "green", "states": {"green": {"after": {"shortDelay": "red"}}, "red": {"on": {"GO": "green"}}}}`), 0o644)
	code, out, errs := run(t, "import", "--delay", "shortDelay=1500ms", in)
	if code != ExitOK || errs != "" || !strings.Contains(out, `green: { initial: true, timeout: { after: 1500ms, configurable: true, on_expiry: "after.shortDelay" } }`) ||
		!strings.Contains(out, "- { from: green, on: after.shortDelay, to: red }") {
		t.Fatalf("import --delay: code %d, stderr %q\n%s", code, errs, out)
	}
	if code, _, errs := run(t, "import", in); code != ExitFindings || !strings.Contains(errs, `light.json:1:68: error: delay "shortDelay" is a named delay`) {
		t.Errorf("import without --delay: code %d, stderr %q", code, errs)
	}
	for _, bad := range []string{"shortDelay", "shortDelay=soon", "=1s", "shortDelay=-1s"} {
		if code, _, errs := run(t, "import", "--delay", bad, in); code != ExitUsage || !strings.Contains(errs, "--delay") {
			t.Errorf("--delay %s: code %d, stderr %q", bad, code, errs)
		}
	}
}
