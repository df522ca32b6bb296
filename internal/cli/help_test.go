package cli

import (
	"encoding/json"
	"regexp"
	"runtime/debug"
	"strings"
	"testing"
)

type verbWithFlags struct {
	verb  string
	flags []string
}

// verbFlags lists every verb with the flags its help must describe.
func verbFlags() []verbWithFlags {
	return []verbWithFlags{
		{"generate", []string{"-o", "--root", "--check", "--format", "--outputs", "--no-tests", "--warnings-as-errors"}},
		{"diagram", []string{"--format"}},
		{"check", []string{"--format", "--warnings-as-errors"}},
		{"diff", []string{"--format", "--fail-on", "--base", "--store"}},
		{"sim", []string{"--events", "--event", "--guard", "--as", "--policy", "--set", "--fail", "--json"}},
		{"import", []string{"--from", "-o", "--force", "--machine", "--package"}},
		{"schema", nil},
		{"version", nil},
		{"help", nil},
	}
}

// TestVerbHelp: fsmgen help VERB, VERB --help, VERB -h and VERB -help all print the verb's
// help (usage, flags with descriptions, examples) on stdout and exit 0.
func TestVerbHelp(t *testing.T) {
	for _, v := range verbFlags() {
		t.Run(v.verb, func(t *testing.T) {
			code, help, errs := run(t, "help", v.verb)
			if code != ExitOK || errs != "" {
				t.Fatalf("help %s: code %d, stderr %q", v.verb, code, errs)
			}
			if !strings.HasPrefix(help, "Usage:\n  fsmgen "+v.verb) {
				t.Errorf("help %s does not start with its usage line:\n%s", v.verb, help)
			}
			if !regexp.MustCompile(`(?m)^Examples:\n(  fsmgen .*\n)+`).MatchString(help) {
				t.Errorf("help %s has no examples:\n%s", v.verb, help)
			}
			for _, f := range v.flags {
				// The flag, then its description on the next line.
				re := regexp.MustCompile(`(?m)^  ` + regexp.QuoteMeta(f) + `( \S+)?\n        \S.*\n`)
				if !re.MatchString(help) {
					t.Errorf("help %s does not describe %s:\n%s", v.verb, f, help)
				}
			}
			if len(v.flags) == 0 && strings.Contains(help, "Flags:") {
				t.Errorf("help %s lists flags it does not have:\n%s", v.verb, help)
			}
			for _, flag := range []string{"--help", "-h", "-help"} {
				code, out, errs := run(t, v.verb, flag)
				if code != ExitOK || errs != "" || out != help {
					t.Errorf("%s %s: code %d, stderr %q, output differs from help %s:\n%s", v.verb, flag, code, errs, v.verb, out)
				}
			}
		})
	}
}

// TestHelpDoesNotRunTheVerb: --help anywhere among the arguments prints the help, and the
// verb does nothing else.
func TestHelpDoesNotRunTheVerb(t *testing.T) {
	code, out, errs := run(t, "schema", "--help")
	if code != ExitOK || errs != "" || json.Valid([]byte(out)) || strings.Contains(out, `"$schema"`) {
		t.Errorf("schema --help: code %d, stderr %q, printed the schema:\n%s", code, errs, out)
	}
	code, out, errs = run(t, "sim", kitchen, "--events", "open_up", "--help")
	if code != ExitOK || errs != "" || !strings.HasPrefix(out, "Usage:\n  fsmgen sim") || strings.Contains(out, "start:") {
		t.Errorf("sim FILE --help: code %d, stderr %q\n%s", code, errs, out)
	}
	code, out, errs = run(t, "check", "--help", "missing.fsm.yaml")
	if code != ExitOK || errs != "" || !strings.HasPrefix(out, "Usage:\n  fsmgen check") {
		t.Errorf("check --help FILE: code %d, stderr %q\n%s", code, errs, out)
	}
}

func TestTopLevelHelp(t *testing.T) {
	code, usage, errs := run(t, "help")
	if code != ExitOK || errs != "" {
		t.Fatalf("help: code %d, stderr %q", code, errs)
	}
	for _, v := range verbFlags() {
		if !strings.Contains(usage, "\n  fsmgen "+v.verb) {
			t.Errorf("usage does not show %s:\n%s", v.verb, usage)
		}
	}
	for _, want := range []string{"--warnings-as-errors", "fsmgen help COMMAND", "fsmgen COMMAND --help", "fsmgen version"} {
		if !strings.Contains(usage, want) {
			t.Errorf("usage does not mention %s:\n%s", want, usage)
		}
	}
	for _, args := range [][]string{{"--help"}, {"-h"}, {"-help"}} {
		if code, out, errs := run(t, args...); code != ExitOK || errs != "" || out != usage {
			t.Errorf("%v: code %d, stderr %q, output differs from help", args, code, errs)
		}
	}
	if code, out, errs := run(t); code != ExitUsage || out != "" || errs != usage {
		t.Errorf("no arguments: code %d, stdout %q, stderr %q", code, out, errs)
	}
}

func TestHelpUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{"help", "unknownverb"},
		{"help", "sim", "check"},
		{"help", "--bogus"},
		{"frobnicate"},
		{"check", "--bogus", kitchen},
		{"sim", kitchen, "--bogus"},
		{"schema", "extra"},
		{"version", "extra"},
	} {
		code, out, errs := run(t, args...)
		if code != ExitUsage || out != "" || errs == "" {
			t.Errorf("%q: code %d, stdout %q, stderr %q; want a usage error", args, code, out, errs)
		}
	}
	_, _, errs := run(t, "help", "unknownverb")
	if !strings.Contains(errs, `unknown command "unknownverb"`) {
		t.Errorf("help unknownverb: stderr %q", errs)
	}
	_, _, errs = run(t, "help", "smi")
	if !strings.Contains(errs, `did you mean "sim"?`) {
		t.Errorf("help smi: stderr %q", errs)
	}
	// A flag error shows the verb's usage line and where its help is.
	_, _, errs = run(t, "check", "--bogus", kitchen)
	if !strings.Contains(errs, "usage: fsmgen check [") || !strings.Contains(errs, "fsmgen help check") {
		t.Errorf("check --bogus: stderr %q", errs)
	}
}

var versionRE = regexp.MustCompile(`^fsmgen \S+, (revision [0-9a-f]+(\+dirty)?|unknown revision)\n$`)

func TestVersion(t *testing.T) {
	code, out, errs := run(t, "version")
	if code != ExitOK || errs != "" || !versionRE.MatchString(out) {
		t.Errorf("version: code %d, stderr %q, output %q", code, errs, out)
	}
	for _, flag := range []string{"--version", "-version"} {
		if code, got, _ := run(t, flag); code != ExitOK || got != out {
			t.Errorf("%s: code %d, output %q; want %q", flag, code, got, out)
		}
	}
}

func TestVersionText(t *testing.T) {
	settings := func(kv ...string) []debug.BuildSetting {
		var out []debug.BuildSetting
		for i := 0; i+1 < len(kv); i += 2 {
			out = append(out, debug.BuildSetting{Key: kv[i], Value: kv[i+1]})
		}
		return out
	}
	for _, c := range []struct {
		name string
		bi   *debug.BuildInfo
		want string
	}{
		{"no build info", nil, "(devel), unknown revision"},
		{"no version, no VCS", &debug.BuildInfo{}, "(devel), unknown revision"},
		{"devel", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, "(devel), unknown revision"},
		{"clean", &debug.BuildInfo{Main: debug.Module{Version: "v1.2.3"},
			Settings: settings("vcs", "git", "vcs.revision", "0123abcd", "vcs.modified", "false")}, "v1.2.3, revision 0123abcd"},
		{"modified", &debug.BuildInfo{Main: debug.Module{Version: "v1.2.3"},
			Settings: settings("vcs.revision", "0123abcd", "vcs.modified", "true")}, "v1.2.3, revision 0123abcd+dirty"},
		{"modified without revision", &debug.BuildInfo{Settings: settings("vcs.modified", "true")}, "(devel), unknown revision"},
	} {
		if got := versionText(c.bi); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
		if got := "fsmgen " + versionText(c.bi) + "\n"; !versionRE.MatchString(got) {
			t.Errorf("%s: %q does not have the version format", c.name, got)
		}
	}
}
