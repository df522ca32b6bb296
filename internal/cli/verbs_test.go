package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestSimWithoutEvents: no --events, or an empty list, prints the initial state.
func TestSimWithoutEvents(t *testing.T) {
	want := `start: closed
final: closed
counter burns: {}
counter orders: 0
counter retries: 0
counter visits: 0
`
	for _, args := range [][]string{{}, {"--events", ""}, {"--events="}, {"--events", " , "}} {
		code, out, errs := run(t, append([]string{"sim", kitchen}, args...)...)
		if code != ExitOK || errs != "" || out != want {
			t.Errorf("%q: code %d, stderr %q\n--- got\n%s--- want\n%s", args, code, errs, out, want)
		}
		code, out, errs = run(t, append([]string{"sim", kitchen, "--json"}, args...)...)
		var res SimResult
		if err := json.Unmarshal([]byte(out), &res); err != nil || code != ExitOK || errs != "" {
			t.Fatalf("%q --json: code %d, stderr %q, %v", args, code, errs, err)
		}
		if res.Initial != "closed" || res.Final != "closed" || len(res.Steps) != 0 || res.Rejected != nil ||
			!strings.Contains(out, `"steps": []`) {
			t.Errorf("%q --json: %s", args, out)
		}
	}
	if code, _, errs := run(t, "sim", kitchen, "--events"); code != ExitUsage || !strings.Contains(errs, "-events") {
		t.Errorf("--events without a value: code %d, stderr %q", code, errs)
	}
}

// rawUnsafe returns the first unsafe rune s contains as itself, apart from the line
// feeds that end lines, or -1.
func rawUnsafe(s string) rune {
	for _, r := range s {
		if r != '\n' && (r == utf8.RuneError || unsafeRune(r)) {
			return r
		}
	}
	return -1
}

// TestSimEscapesUnsafeRunes: names and messages sim prints, in text and JSON, on stdout and
// stderr, never carry a control, bidi or zero-width character as itself; other non-ASCII
// text is left alone.
func TestSimEscapesUnsafeRunes(t *testing.T) {
	// Runes sim must never print as themselves.
	unsafeSamples := []rune{
		0x00, 0x07, '\t', '\n', '\r', 0x1b, 0x7f, // C0 and DEL
		0x80, 0x85, 0x9b, 0x9f, // C1
		0x202a, 0x202b, 0x202c, 0x202d, 0x202e, // bidi embeddings and overrides
		0x2066, 0x2067, 0x2068, 0x2069, // bidi isolates
		0x2028, 0x2029, // line and paragraph separators
		0x200b, 0x200c, 0x200d, 0x200e, 0x200f, 0x2060, 0xfeff, // zero-width
	}
	for _, r := range unsafeSamples {
		name := "go" + string(r) + "now"
		esc := escapeUnsafe(string(r))
		if esc == string(r) || !strings.HasPrefix(esc, `\`) {
			t.Errorf("escapeUnsafe(%U) = %q", r, esc)
		}
		code, out, _ := run(t, "sim", kitchen, "--event", name)
		if code != ExitFindings || rawUnsafe(out) >= 0 || !strings.Contains(out, "0: go"+esc+"now: refused") {
			t.Errorf("%U, text: code %d, output %q", r, code, out)
		}
		code, out, _ = run(t, "sim", kitchen, "--json", "--event", name)
		var res SimResult
		if err := json.Unmarshal([]byte(out), &res); err != nil || code != ExitFindings || rawUnsafe(out) >= 0 {
			t.Errorf("%U, JSON: code %d, %v, output %q", r, code, err, out)
		} else if res.Rejected == nil || res.Rejected.Event != name {
			t.Errorf("%U, JSON: the event reads back as %+v, want %q", r, res.Rejected, name)
		}
		// A --set string the interpreter refuses is quoted back on stderr.
		code, out, errs := run(t, "sim", kitchen, "--set", "level="+strconvQuoteJSON("fr"+string(r)+"antic"))
		if code != ExitUsage || out != "" || rawUnsafe(errs) >= 0 || !strings.Contains(errs, "fr"+esc+"antic") {
			t.Errorf("%U, --set: code %d, stderr %q", r, code, errs)
		}
	}
	code, out, _ := run(t, "sim", kitchen, "--events", "café,日本")
	if code != ExitFindings || !strings.Contains(out, "0: café: refused") || !strings.Contains(out, `unknown event "café"`) {
		t.Errorf("non-ASCII letters: code %d, output %q", code, out)
	}
}

// strconvQuoteJSON writes s as a JSON string with every non-ASCII rune escaped, so that
// the command line carries no raw rune either.
func strconvQuoteJSON(s string) string {
	b, _ := json.Marshal(s)
	return string(escapeUnsafeJSON(b))
}

func TestEscapeUnsafe(t *testing.T) {
	for in, want := range map[string]string{
		"plain_name":        "plain_name",
		"café 日本 ✓":         "café 日本 ✓",
		"a\tb\nc\x1b[31m":   `a\tb\nc\x1b[31m`,
		"x\u0085y\u009bz":   `x\u0085y\u009bz`,
		"\u202eevil\u202c":  `\u202eevil\u202c`,
		"\u2066a\u2069":     `\u2066a\u2069`,
		"a\u200bb\ufeffc":   `a\u200bb\ufeffc`,
		"line\u2028next":    `line\u2028next`,
		"bad\xffutf8":       `bad\xffutf8`,
		`already \u202e ok`: `already \u202e ok`,
	} {
		if got := escapeUnsafe(in); got != want {
			t.Errorf("escapeUnsafe(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestEscapeUnsafeJSON(t *testing.T) {
	in := "del\x7f c1\u0085 bidi\u202e iso\u2068 zw\u200b bom\ufeff tag\U000E0041 sep\u2028 ok é日本"
	b, err := json.Marshal(map[string]string{"k": in})
	if err != nil {
		t.Fatal(err)
	}
	out := escapeUnsafeJSON(b)
	if r := rawUnsafe(string(out)); r >= 0 {
		t.Errorf("%U left as itself in %s", r, out)
	}
	var back map[string]string
	if err := json.Unmarshal(out, &back); err != nil || back["k"] != in {
		t.Errorf("reads back as %q (%v), want %q", back["k"], err, in)
	}
	if !strings.Contains(string(out), "ok é日本") || !strings.Contains(string(out), `tag\udb40\udc41 `) {
		t.Errorf("output %s", out)
	}
}

const warningSpec = `version: 1
machine: M
package: m
states:
  a: { initial: true }
  b: { terminal: true }
events:
  go: {}
  stop: {}
transitions:
  - { from: a, on: go, to: b }
`

const warningText = `:9:3: warning: event "stop" is never used`

func writeSpec(t *testing.T, name, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestCheckWarnings: warnings alone exit 0, unless --warnings-as-errors; errors exit 1.
func TestCheckWarnings(t *testing.T) {
	spec := writeSpec(t, "warn.fsm.yaml", warningSpec)
	code, out, errs := run(t, "check", spec)
	if code != ExitOK || errs != "" || out != spec+warningText+"\n" {
		t.Errorf("warnings only: code %d, stdout %q, stderr %q", code, out, errs)
	}
	for _, args := range [][]string{
		{"check", "--warnings-as-errors", spec},
		{"check", spec, "--warnings-as-errors"},
		{"check", "--format", "json", "--warnings-as-errors", spec},
		{"check", "--format", "github-actions", "--warnings-as-errors", spec},
	} {
		if code, out, _ := run(t, args...); code != ExitFindings || !strings.Contains(out, "warning") {
			t.Errorf("%q: code %d, output %q", args, code, out)
		}
	}
	if code, out, _ := run(t, "check", "--format", "json", spec); code != ExitOK || !strings.Contains(out, `"severity": "warning"`) {
		t.Errorf("json, warnings only: code %d, output %q", code, out)
	}
	if code, _, _ := run(t, "check", "--warnings-as-errors", kitchen); code != ExitOK {
		t.Errorf("clean spec with --warnings-as-errors: code %d", code)
	}
	bad := writeSpec(t, "bad.fsm.yaml", strings.Replace(warningSpec, "on: go", "on: goo", 1))
	if code, _, _ := run(t, "check", bad); code != ExitFindings {
		t.Errorf("errors: code %d", code)
	}
}

// TestGenerateWarnings: generate prints warnings and writes; with --warnings-as-errors it
// exits 1 and writes nothing.
func TestGenerateWarnings(t *testing.T) {
	spec := writeSpec(t, "warn.fsm.yaml", warningSpec)
	out := filepath.Join(t.TempDir(), "out")
	code, _, errs := run(t, "generate", "--warnings-as-errors", "-o", out, spec)
	if code != ExitFindings || !strings.Contains(errs, spec+warningText) || !strings.Contains(errs, "nothing written") {
		t.Errorf("--warnings-as-errors: code %d, stderr %q", code, errs)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("--warnings-as-errors wrote output: %v", err)
	}
	code, _, errs = run(t, "generate", "-o", out, spec)
	if code != ExitOK || !strings.Contains(errs, spec+warningText) {
		t.Errorf("warnings only: code %d, stderr %q", code, errs)
	}
	if _, err := os.Stat(filepath.Join(out, "warn_fsm.go")); err != nil {
		t.Errorf("warnings only: %v", err)
	}
	if code, _, errs := run(t, "generate", "--check", "-o", out, spec); code != ExitOK {
		t.Errorf("--check after generating: code %d, stderr %q", code, errs)
	}
	if code, _, _ := run(t, "generate", "--check", "--warnings-as-errors", "-o", out, spec); code != ExitFindings {
		t.Errorf("--check --warnings-as-errors: code %d", code)
	}
}

// TestTabIndentation: a tab in indentation is named as such, at the tab.
func TestTabIndentation(t *testing.T) {
	for _, c := range []struct {
		name, text, at string
	}{
		{"mapping key", "version: 1\nstates:\n\ta: {}\n", ":3:1:"},
		{"after spaces", "version: 1\nstates:\n  a: {}\n  \tb: {}\n", ":4:3:"},
		{"continuing a scalar", "version: 1\nmachine: M\n\tpackage: m\n", ":3:1:"},
		{"block scalar", "version: 1\ndoc: |\n  x\n\ty\n", ":4:1:"},
		{"sequence", "version: 1\nstates:\n  - x\n\t- y\n", ":4:1:"},
		{"first line", "\tversion: 1\n", ":1:1:"},
		{"CRLF", "version: 1\r\nstates:\r\n\ta: {}\r\n", ":3:1:"},
	} {
		spec := writeSpec(t, "tab.fsm.yaml", c.text)
		code, out, _ := run(t, "check", spec)
		want := spec + c.at + " error: yaml: tabs cannot indent YAML"
		if code != ExitFindings || !strings.HasPrefix(out, want) || strings.Count(out, "\n") != 1 {
			t.Errorf("%s: code %d, output %q; want %q...", c.name, code, out, want)
		}
	}
	// Other characters that cannot start a token keep yaml's message.
	spec := writeSpec(t, "tick.fsm.yaml", "version: 1\nstates: `x`\n")
	if _, out, _ := run(t, "check", spec); strings.Contains(out, "tab") {
		t.Errorf("backtick: %q", out)
	}
	// A tab inside a flow collection is allowed.
	spec = writeSpec(t, "flow.fsm.yaml", strings.Replace(warningSpec, "transitions:\n  - { from: a,", "transitions:\n  - { from: a,\n\t", 1))
	if code, out, _ := run(t, "check", spec); code != ExitOK || strings.Contains(out, "tab") {
		t.Errorf("tab in a flow mapping: code %d, %q", code, out)
	}
}

// TestUndeclaredEventHint: a reference to an undeclared event says where to declare it.
func TestUndeclaredEventHint(t *testing.T) {
	spec := writeSpec(t, "ev.fsm.yaml", strings.Replace(warningSpec, "on: go", "on: approve", 1))
	code, out, _ := run(t, "check", spec)
	want := spec + `:11:20: error: unknown event "approve"; to add it, declare it under events (events: { approve: {} })` + "\n"
	if code != ExitFindings || !strings.Contains(out, want) {
		t.Errorf("code %d, output %q; want it to contain %q", code, out, want)
	}
}
