package cli

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

const (
	lightJSON  = "../importer/testdata/xstate/light.json"
	lightSCXML = "../importer/testdata/scxml/light.scxml"
)

// TestImportHelp: the help of import, as TestVerbHelp checks every verb's: usage, flags
// with descriptions, examples; the same for --help, -h and -help; import in the usage.
func TestImportHelp(t *testing.T) {
	code, help, errs := run(t, "help", "import")
	if code != ExitOK || errs != "" || !strings.HasPrefix(help, "Usage:\n  fsmgen import") {
		t.Fatalf("help import: code %d, stderr %q\n%s", code, errs, help)
	}
	if !regexp.MustCompile(`(?m)^Examples:\n(  fsmgen .*\n)+`).MatchString(help) {
		t.Errorf("help import has no examples:\n%s", help)
	}
	for _, f := range []string{"--from", "-o", "--force", "--machine", "--package"} {
		re := regexp.MustCompile(`(?m)^  ` + regexp.QuoteMeta(f) + `( \S+)?\n        \S.*\n`)
		if !re.MatchString(help) {
			t.Errorf("help import does not describe %s:\n%s", f, help)
		}
	}
	for _, want := range []string{"meta", "reenter", "<log label=\"NAME\"/>", "type=\"internal\"", "--force"} {
		if !strings.Contains(help, want) {
			t.Errorf("help import does not mention %s", want)
		}
	}
	for _, flag := range []string{"--help", "-h", "-help"} {
		code, out, errs := run(t, "import", flag)
		if code != ExitOK || errs != "" || out != help {
			t.Errorf("import %s: code %d, stderr %q, output differs from help import:\n%s", flag, code, errs, out)
		}
	}
	if _, usage, _ := run(t, "help"); !strings.Contains(usage, "\n  fsmgen import ") || !strings.Contains(usage, "\n  import ") {
		t.Errorf("usage does not show import:\n%s", usage)
	}
}

func TestImportUsageErrors(t *testing.T) {
	dir := t.TempDir()
	exists := filepath.Join(dir, "exists.fsm.yaml")
	os.WriteFile(exists, []byte("kept\n"), 0o644)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"import"}, "import needs exactly one input file"},
		{[]string{"import", lightJSON, lightSCXML}, "import needs exactly one input file"},
		{[]string{"import", "--from", "yaml", lightJSON}, `unknown input format "yaml" (want xstate or scxml)`},
		{[]string{"import", "machine.txt"}, "say --from xstate or --from scxml (the extension of machine.txt does not say which)"},
		{[]string{"import", "--force", lightJSON}, "--force replaces the file -o names; give -o FILE"},
		{[]string{"import", "--package", "Lights", lightJSON}, `--package "Lights" is not a Go package name`},
		{[]string{"import", "--package", "func", lightJSON}, `--package "func" is not a Go package name`},
		{[]string{"import", "--machine", "2fa", lightJSON}, `--machine "2fa" does not make an exported Go type name`},
		{[]string{"import", "--bogus", lightJSON}, "usage: fsmgen import ["},
		{[]string{"import", filepath.Join(dir, "missing.json")}, "missing.json: no such file or directory"},
		{[]string{"import", "-o", exists, lightJSON}, exists + " exists; pass --force to replace it"},
		{[]string{"import", "-o", filepath.Join(dir, "no", "such", "dir.fsm.yaml"), lightJSON}, "writing " + filepath.Join(dir, "no", "such", "dir.fsm.yaml")},
	} {
		code, out, errs := run(t, c.args...)
		if code != ExitUsage || out != "" || !strings.Contains(errs, c.want) {
			t.Errorf("%q: code %d, stdout %q, stderr %q; want exit 2 and %q", c.args, code, out, errs, c.want)
		}
	}
	if data, _ := os.ReadFile(exists); string(data) != "kept\n" {
		t.Errorf("the existing file was changed: %q", data)
	}
	if _, err := os.Stat(filepath.Join(dir, "no")); !os.IsNotExist(err) {
		t.Errorf("a failed write left something: %v", err)
	}
}

// TestImportRefusals: what the subset does not cover exits 1 with check's finding format on
// stderr, and writes nothing, with or without -o.
func TestImportRefusals(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "m.json")
	os.WriteFile(in, []byte("{\"initial\": \"a\", \"states\": {\n  \"a\": {\"invoke\": {\"src\": \"fetch\"}}\n}}\n"), 0o644)
	want := in + ":2:9: error: invoke (invoked actors) cannot be imported: an fsmgen machine invokes no actors\nfsmgen: nothing written\n"
	code, out, errs := run(t, "import", in)
	if code != ExitFindings || out != "" || errs != want {
		t.Errorf("code %d, stdout %q, stderr %q; want %q", code, out, errs, want)
	}
	dest := filepath.Join(dir, "m.fsm.yaml")
	if code, _, errs := run(t, "import", "-o", dest, in); code != ExitFindings || errs != want {
		t.Errorf("-o: code %d, stderr %q", code, errs)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("a refused import left files: %v", entries)
	}

	// The checker's errors, at the input that made them.
	os.WriteFile(in, []byte("{\"initial\": \"a\", \"states\": {\n  \"a\": {\"on\": {\"go\": \"a\"}},\n  \"b\": {}\n}}\n"), 0o644)
	code, out, errs = run(t, "import", in)
	want = in + `:3:3: error: state "b" is unreachable from the initial configuration "a"` + "\n"
	if code != ExitFindings || out != "" || !strings.HasPrefix(errs, want) {
		t.Errorf("checker: code %d, stdout %q, stderr %q; want it to start with %q", code, out, errs, want)
	}
}

// TestImportWrites: the spec goes to stdout, or with -o to the file (atomically: nothing
// else is left in the directory), which check accepts and sim runs; an existing file is
// replaced only with --force.
func TestImportWrites(t *testing.T) {
	code, spec, errs := run(t, "import", "--from", "xstate", lightJSON)
	if code != ExitOK || errs != "" || !strings.HasPrefix(spec, "# Imported from "+lightJSON+" (XState machine config) by fsmgen import.\nversion: 1\nmachine: TrafficLight\npackage: trafficlight\n") {
		t.Fatalf("stdout: code %d, stderr %q\n%s", code, errs, spec)
	}
	golden, err := os.ReadFile("../importer/testdata/xstate/light.fsm.yaml")
	if err != nil {
		t.Fatal(err)
	}
	_, body, _ := strings.Cut(spec, "\n")
	if _, wantBody, _ := strings.Cut(string(golden), "\n"); body != wantBody {
		t.Errorf("stdout differs from the importer's golden spec:\n%s", spec)
	}

	dir := t.TempDir()
	dest := filepath.Join(dir, "light.fsm.yaml")
	if code, out, errs := run(t, "import", lightJSON, "-o", dest); code != ExitOK || out != "" || errs != "" {
		t.Fatalf("-o: code %d, stdout %q, stderr %q", code, out, errs)
	}
	if data, _ := os.ReadFile(dest); string(data) != spec {
		t.Errorf("-o wrote\n%s\nwant what stdout shows", data)
	}
	if fi, err := os.Stat(dest); err != nil || fi.Mode().Perm() != 0o644 {
		t.Errorf("mode: %v %v", fi.Mode(), err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("-o left other files: %v", entries)
	}
	if code, out, _ := run(t, "check", dest); code != ExitOK || out != "" {
		t.Errorf("check: code %d, %q", code, out)
	}
	if code, out, _ := run(t, "sim", dest, "--events", "TIMER,TIMER,RESTART_HARD"); code != ExitOK || !strings.Contains(out, "final: walk") {
		t.Errorf("sim: code %d\n%s", code, out)
	}

	// Without --force the file is kept; with it, it is replaced.
	if code, _, errs := run(t, "import", lightSCXML, "-o", dest); code != ExitUsage || !strings.Contains(errs, "exists; pass --force") {
		t.Errorf("overwrite without --force: code %d, stderr %q", code, errs)
	}
	if data, _ := os.ReadFile(dest); string(data) != spec {
		t.Errorf("the file was changed without --force")
	}
	code, _, errs = run(t, "import", lightSCXML, "-o", dest, "--force", "--machine", "Lights", "--package", "lights")
	data, _ := os.ReadFile(dest)
	if code != ExitOK || errs != "" || !strings.HasPrefix(string(data), "# Imported from "+lightSCXML+" (SCXML document) by fsmgen import.\nversion: 1\nmachine: Lights\npackage: lights\n") {
		t.Errorf("--force: code %d, stderr %q\n%s", code, errs, data)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("--force left other files: %v", entries)
	}
}

func TestWriteAtomicRefusesARace(t *testing.T) {
	dest := filepath.Join(t.TempDir(), "x.fsm.yaml")
	if err := writeAtomic(dest, []byte("one\n"), false); err != nil {
		t.Fatal(err)
	}
	// A file that appeared after the command looked is not replaced either.
	if err := writeAtomic(dest, []byte("two\n"), false); err == nil || !strings.Contains(err.Error(), "exists; pass --force") {
		t.Errorf("second write: %v", err)
	}
	if data, _ := os.ReadFile(dest); string(data) != "one\n" {
		t.Errorf("replaced: %q", data)
	}
	if err := writeAtomic(dest, []byte("two\n"), true); err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(dest); string(data) != "two\n" {
		t.Errorf("not replaced: %q", data)
	}
	if entries, _ := os.ReadDir(filepath.Dir(dest)); len(entries) != 1 {
		t.Errorf("left: %v", entries)
	}
}
