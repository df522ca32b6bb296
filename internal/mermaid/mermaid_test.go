package mermaid

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/fsmgen/fsmgen/internal/fixture"
	"github.com/fsmgen/fsmgen/internal/ir"
	"github.com/fsmgen/fsmgen/internal/testtool"
)

// specs are the machines every test renders: the five examples and the test specs, the
// statecharts (chartSpecs) included.
func specs(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob("../../examples/*/*.fsm.yaml")
	if err != nil || len(files) != 5 {
		t.Fatalf("examples: %v %v", files, err)
	}
	// chart_clocks: timeouts and a delayed transition on compound and parallel states;
	// chart_delays_parallel: delays of states active together.
	return append(append(files, "testdata/door.fsm.yaml", "testdata/hostile.fsm.yaml", "../lower/testdata/build/chart_clocks.fsm.yaml", "../lower/testdata/build/chart_delays_parallel.fsm.yaml"), chartSpecs...)
}

func load(t *testing.T, path string) *ir.Machine { return fixture.Load(t, path) }

func name(path string) string { return strings.TrimSuffix(filepath.Base(path), ".fsm.yaml") }

func TestEscape(t *testing.T) {
	for _, tc := range []struct {
		in   string
		name bool
		want string
	}{
		{"in_progress", false, "in_progress"},
		{"In Review (local)", false, "In Review (local)"},
		{`a --> b`, false, "a --#62; b"},
		{`say "hi"`, true, "say #34;hi#34;"},
		{"x: y; z", false, "x#58; y#59; z"},
		{"%%{init}%%", false, "#37;#37;#123;init#125;#37;#37;"},
		{"#1", false, "#35;1"},
		{"<b>&amp;", false, "#60;b#62;#38;amp#59;"},
		{"[g] [[choice]]", false, "[g] [[choice]]"},
		{"[[choice]]", true, "#91;#91;choice#93;#93;"},
		{"line\nbreak\r", false, "line#10;break#13;"},
		{"go direction TB", false, "go #100;irection TB"},
		{"DIRECTION lr", false, "#68;IRECTION lr"},
		{"_em_ a_b *s*", false, "#95;em#95; a_b #42;s#42;"},
		{"`x`", false, "#96;x#96;"},
		{"é日本 ✓", false, "é日本 ✓"},
		{"ﬂ°°60¶ß", false, "#64258;#176;#176;60#182;#223;"},
		{"\u2028\u00a0", false, "#8232;#160;"},
		{`a|b\c "d"`, true, "a#124;b#92;c #34;d#34;"},
		{`a|b\|c`, false, "a#124;b#92;#124;c"},
		{"a\ufeffb\u202ec\u2066d\u200be\u200ff", true, "abcdef"},
	} {
		if got := Escape(tc.in, tc.name); got != tc.want {
			t.Errorf("Escape(%q, %v) = %q, want %q", tc.in, tc.name, got, tc.want)
		}
	}
}

func TestDoor(t *testing.T) {
	got := StateDiagram(load(t, "testdata/door.fsm.yaml"))
	want := `stateDiagram-v2
    state "closed<br>«shut»" as s0
    state "open" as s1
    state "locked<br>«shut»" as s2
    state "jammed" as s3
    state "broken" as s4
    state c0 <<choice>>
    [*] --> s0
    s0 --> s1 : push [unlocked] [!alarm] / beep reset tries
    s0 --> s0 : push +tries
    s0 --> s3 : push when tries reaches 3
    s0 --> s2 : lock by keeper, admin (while night)
    s2 --> s2 : knock (internal)
    s2 --> c0 : unlock
    c0 --> s0 : [unlocked]<br>else (history of jammed)
    s3 --> s0 : kick (history)
    s1 --> s0 : slam
    s0 --> s4 : smash
    s1 --> s4 : smash
    s2 --> s4 : smash
    s3 --> s4 : smash
    s4 --> [*]
    note right of s0 : timeout 10m, warn 50#37;, late 100#37;
    note right of s2 : timeout 1h30m (configurable), remind 50#37;
    classDef group0 fill:#e3f2fd,stroke:#1565c0
    class s0,s2 group0
`
	if got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
	if f := string(File(load(t, "testdata/door.fsm.yaml"))); f != Header+"\n"+want {
		t.Errorf("File = %q", f)
	}
}

// TestExamples checks that the examples render deterministically and draw what their
// specs say.
func TestExamples(t *testing.T) {
	want := map[string][]string{
		"approval": {
			`    s3 --> s5 : IN_PROGRESS [!revision_feedback_missing] by human when review_cycles passes 3<br>BLOCKED by system`,
			`    s3 --> s6 : DONE by human, lead (while lead_may_approve) / post_approval_comment`,
		},
		"build": {
			`    s10 --> s6 : retry by cto / record_cto_guidance +cto_attempts (history)`,
			`    s10 --> s11 : retry by cto when cto_attempts reaches 2`,
			`    note right of s4 : timeout 4h (configurable), warn 80#37;, alert 100#37;, escalate 150#37;`,
		},
		"cognitive": {
			`    state "active" as s_active {`,
			`        s_active_acting --> s_active_reasoning : tool_call_completed [plan_has_tool_calls]<br>tool_call_failed [plan_has_tool_calls]<br>step_completed [plan_has_tool_calls]`,
			`    s_suspended --> s_active_reasoning : message_received<br>task_resumed (history)`,
			`    s_suspended --> s_active_acting : task_resumed (history)`,
			`    s_active --> s_suspended : task_suspended`,
		},
		"pipeline": {
			`    s4 --> s4 : phase_succeeded [has_more_phases] (internal) / record_phase_output, advance_phase reset attempts reset consecutive_failures`,
			`    s4 --> s10 : phase_failed [!budget_available] / log_failure, save_for_resume<br>budget_exceeded / save_for_resume<br>cancel / record_phase_in_progress, report_cancel_summary`,
		},
		"review": {
			`    s3 --> s3 : review_submitted (internal) +reviews<br>security_review_submitted (internal) +reviews +security_reviews`,
			`    s5 --> [*]`,
		},
	}
	for _, path := range specs(t) {
		t.Run(name(path), func(t *testing.T) {
			a, b := StateDiagram(load(t, path)), StateDiagram(load(t, path))
			if a != b {
				t.Fatal("two renderings differ")
			}
			if !strings.HasPrefix(a, "stateDiagram-v2\n    state ") || !strings.HasSuffix(a, "\n") {
				t.Errorf("bad frame:\n%s", a)
			}
			lines := strings.Split(a, "\n")
			for _, w := range want[name(path)] {
				if !contains(lines, w) {
					t.Errorf("missing line %q in:\n%s", w, a)
				}
			}
		})
	}
}

func contains(lines []string, s string) bool {
	for _, l := range lines {
		if l == s {
			return true
		}
	}
	return false
}

// TestHostileLines checks every line of the hostile diagram against the only shapes of
// line the emitter writes; labels, with our own <br> and the entities removed, must hold
// none of the characters or words that mean something to Mermaid.
func TestHostileLines(t *testing.T) {
	id := `(?:s\d+|c\d+|\[\*\])`
	shapes := []*regexp.Regexp{
		regexp.MustCompile(`^stateDiagram-v2$`),
		regexp.MustCompile(`^    state "([^"]*)" as s\d+$`),
		regexp.MustCompile(`^    state c\d+ <<choice>>$`),
		regexp.MustCompile(`^    s\d+ : (no transitions)$`),
		regexp.MustCompile(`^    ` + id + ` --> ` + id + `(?: : (.+))?$`),
		regexp.MustCompile(`^    note right of s\d+ : (.+)$`),
		regexp.MustCompile(`^    classDef group\d+ fill:#[0-9a-f]{6},stroke:#[0-9a-f]{6}$`),
		regexp.MustCompile(`^    class s\d+(?:,s\d+)* group\d+$`),
	}
	entity := regexp.MustCompile(`#\d+;`)
	bad := regexp.MustCompile(`(?i)["#;:%{}<>&\x60*\\]|direction|\r|_\W|\W_|^_|_$`)
	out := StateDiagram(load(t, "testdata/hostile.fsm.yaml"))
	for _, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		matched := false
		for _, re := range shapes {
			m := re.FindStringSubmatch(line)
			if m == nil {
				continue
			}
			matched = true
			if len(m) > 1 && m[1] != "" {
				text := entity.ReplaceAllString(strings.NewReplacer("<br>«", " ", "»", " ", "<br>", " ").Replace(m[1]), "")
				if loc := bad.FindStringIndex(text); loc != nil {
					t.Errorf("unescaped %q in %q", text[loc[0]:loc[1]], line)
				}
			}
			break
		}
		if !matched {
			t.Errorf("unexpected line %q", line)
		}
	}
}

// TestMermaidCheck validates every diagram with the real Mermaid parser: the repository's
// checker (internal/mermaid/testdata/mermaid-check), which the test installs with npm ci
// when node and npm are there (or the installed copy MERMAID_CHECK names); it skips
// without node, naming the command that installs it, and fails instead under CI=true.
func TestMermaidCheck(t *testing.T) {
	check := testtool.MermaidCheck(t)
	tmp := t.TempDir()
	var files []string
	for _, path := range specs(t) {
		f := filepath.Join(tmp, name(path)+".mmd")
		if err := os.WriteFile(f, File(load(t, path)), 0o644); err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	args := append([]string{check, "--strict", "--quiet", "--expect", "stateDiagram"}, files...)
	out, err := exec.Command("node", args...).CombinedOutput()
	if err != nil {
		t.Fatalf("check.mjs: %v\n%s", err, out)
	}
}

// TestIsolated: a state in no transition (only possible in a machine the checker refuses)
// gets a description, so that it is not mistaken for a stray word.
func TestIsolated(t *testing.T) {
	a := &ir.State{Index: 0, Name: "a", Initial: true}
	m := &ir.Machine{Name: "X", States: []*ir.State{a, {Index: 1, Name: "b"}}, Initial: a}
	want := "stateDiagram-v2\n    state \"a\" as s0\n    state \"b\" as s1\n    s1 : no transitions\n    [*] --> s0\n"
	if got := StateDiagram(m); got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}
