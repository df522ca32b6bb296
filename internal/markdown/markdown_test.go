package markdown

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fsmgen/fsmgen/internal/fixture"
	"github.com/fsmgen/fsmgen/internal/ir"
	"github.com/fsmgen/fsmgen/internal/mermaid"
	"github.com/fsmgen/fsmgen/internal/testtool"
)

func specs(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob("../../examples/*/*.fsm.yaml")
	if err != nil || len(files) != 5 {
		t.Fatalf("examples: %v %v", files, err)
	}
	return append(append(files, "../mermaid/testdata/door.fsm.yaml", "../mermaid/testdata/hostile.fsm.yaml"), chartSpecs...)
}

func load(t *testing.T, path string) *ir.Machine { return fixture.Load(t, path) }

func name(path string) string { return strings.TrimSuffix(filepath.Base(path), ".fsm.yaml") }

func document(t *testing.T, path string) string {
	t.Helper()
	m := load(t, path)
	b, err := Document(m, mermaid.StateDiagram(m))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestText(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"Task assigned to agent(s).", "Task assigned to agent(s)."},
		{"assignee_ids: 3-6 items, 80%", "assignee_ids: 3-6 items, 80%"},
		{"<script>a & b</script>", `\<script\>a \& b\</script\>`},
		{"*x* _y_ a_b `c` ~~d~~ $e$", `\*x\* \_y\_ a_b \` + "`c\\`" + ` \~\~d\~\~ \$e\$`},
		{"[l](u) ![i](x)", `\[l\](u) !\[i\](x)`},
		{"a | b", `a \| b`},
		{`back\slash`, `back\\slash`},
		{"# h", `\# h`},
		{"- item", `\- item`},
		{"+ item", `\+ item`},
		{"=== x", `\=== x`},
		{"12. item", `12\. item`},
		{"1) item", `1\) item`},
		{"see https://x.y and www.x.y, not awww.x", `see https\://x.y and www\.x.y, not awww.x`},
		{"mail@x.y @agent-cto", `mail\@x.y @agent-cto`},
		{"  one\ntwo\r\nthree\x00\t ", "one<br>two<br>three"},
		{"é ✓ -> x", `é ✓ -\> x`},
	} {
		if got := Text(tc.in); got != tc.want {
			t.Errorf("Text(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestCode(t *testing.T) {
	for _, tc := range []struct{ in, want, cell string }{
		{"in_progress", "`in_progress`", "`in_progress`"},
		{"a|b", "`a|b`", "`a\\|b`"},
		{"`tick`", "`` `tick` ``", "`` `tick` ``"},
		{"a``b", "```a``b```", "```a``b```"},
		{" x", "`  x `", "`  x `"},
		{"<b>", "`<b>`", "`<b>`"},
	} {
		if got := Code(tc.in); got != tc.want {
			t.Errorf("Code(%q) = %q, want %q", tc.in, got, tc.want)
		}
		if got := CodeCell(tc.in); got != tc.cell {
			t.Errorf("CodeCell(%q) = %q, want %q", tc.in, got, tc.cell)
		}
	}
}

func TestDoor(t *testing.T) {
	doc := document(t, "../mermaid/testdata/door.fsm.yaml")
	lines := strings.Split(doc, "\n")
	if lines[0] != Header {
		t.Errorf("first line %q", lines[0])
	}
	for _, w := range []string{
		"# Door state machine",
		"```mermaid",
		"    c0 --> s0 : [unlocked]<br>else (history of jammed)",
		"| State | Description | Initial / terminal | Groups | Remembers | Timeout | Next states |",
		"| `closed` |  | initial | `shut` |  | 10m | `open`, `closed`, `jammed`, `locked`, `broken` |",
		"| `jammed` |  |  |  | yes: `closed` |  | `closed`, `broken` |",
		"| From | Event | To | Guard | Roles | Actions | Counters | Line |",
		"| `closed` | `push` | `open` | `unlocked` and not `alarm` | any | `beep` | reset `tries` | 35 |",
		"| `closed` | `push` | `closed` (re-entered)<br>`jammed` on the 3rd `tries` |  | any |  | +`tries` | 36 |",
		"| `closed` | `lock` | `locked` |  | `keeper`, `admin` while `night` |  |  | 37 |",
		"| `locked` | `knock` | `locked` (internal: no exit or entry) |  | any |  |  | 38 |",
		"| `locked` | `unlock` | `closed` if `unlocked`<br>history of `jammed`: `closed` otherwise |  | any |  |  | 39 |",
		"| `keeper` |  | `closed` → `locked` on `lock` |",
		"| `admin` |  | every transition |",
		"| `night` | off | Admins may lock at night. |",
		"| `tries` | machine | 3: the 3rd increment goes to `jammed` | `closed` → `closed` on `push` | `closed` → `open` on `push` |",
		"Default levels: warn 50%, late 100%.",
		"| `locked` | 1h30m | remind 50% (45m) | yes |",
		"- History: `jammed` remembers the state it was entered from (`closed`); a re-entering self-transition keeps the memory. Returned to by `unlock` from `locked` (line 39), `kick` from `jammed` (line 44).",
	} {
		if !contains(lines, w) {
			t.Errorf("missing line %q in:\n%s", w, doc)
		}
	}
	if !strings.HasSuffix(doc, ".\n") || strings.Contains(doc, "\n\n\n") {
		t.Errorf("blank lines or ending:\n%s", doc)
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

func TestExamples(t *testing.T) {
	want := map[string][]string{
		"approval": {
			"| `REVIEW` | `IN_PROGRESS` | `IN_PROGRESS`<br>`BLOCKED` on the 4th `review_cycles` | not `revision_feedback_missing` | `human` | `post_review_comment` | +`review_cycles` | `IN_PROGRESS`: `assignee_ids`, `work_plan`<br>`BLOCKED`: `block_reason` | Revisions: the reviewer sends the task back with feedback; after 3 cycles the next goes to BLOCKED with the Loop Summary. | 160 |",
			"| `review_cycles` | machine | at most 3: the 4th increment goes to `BLOCKED`, writing a summary into `block_reason` (configurable at run time: `MaxReviewCycles`, `SetMaxReviewCycles`) | `REVIEW` → `IN_PROGRESS` | reviewCycles: REVIEW -\\> IN_PROGRESS revisions. |",
			"| `intern` | Intern agent: ASSIGNED-\\>IN_PROGRESS and IN_PROGRESS-\\>REVIEW only. | `ASSIGNED` → `IN_PROGRESS`, `IN_PROGRESS` → `REVIEW` |",
			"| `work_plan` | `[]string` | 3 to 6 items | Work plan required for IN_PROGRESS | `IN_PROGRESS` | WorkPlan.bullets: 3-6 action items. |",
		},
		"build": {
			"| `cto_intervention` | `retry` | history of `cto_intervention`: `planning` or `in_progress` or `quality_review` or `committing`<br>`human_escalation` on the 2nd `cto_attempts` | `cto` | `record_cto_guidance` | +`cto_attempts` |  | 149 |",
			"| `planning` | `skipped` | `validated` | `cto` |  |  | Skip (@agent-cto override): the approach is taken as validated. | 162 |",
			"| `failures` | per state (counts for the source state) | 3: the 3rd increment goes to `cto_intervention` | yes: a transition leaving a state without incrementing it resets it | `planning` → `planning` on `approach_rejected`, `quality_review` → `in_progress` on `quality_failed`, `committing` → `in_progress` on `precommit_failed`, `in_progress` → `in_progress` on `implementation_failed` | Failures of each state (failureCount). |",
			"- Transition log: every transition is recorded with its source and target states, event, event id, time, actor and reason.",
		},
		"cognitive": {
			"| `active.acting` | `step_completed` | `plan_has_more_steps` | `active.acting` | yes | `task_completed` | 160 |",
			"| `suspended` | `task_resumed` |  | history of `suspended`: `active.reasoning` or `active.acting` |  |  | 165 |",
			"- State `suspended` remembers the states active when it was entered (`active.reasoning` or `active.acting`); a transition to its history goes back to them, and is not taken while it remembers nothing. Taken by `suspended` → history of `suspended` on `task_resumed` (line 165).",
			"| `plan_has_more_steps` | field `plan_completed` below the length of `plan_steps` | Plan.hasMoreSteps: the plan still has uncompleted steps. |",
			"| `plan_has_tool_calls` | field `plan_steps` contains `\"tool_call\"` | The plan contains tool_call steps (once all steps are done: continue the cognitive loop). |",
			"| `task_created` | An external input event created the task. | `input_text` `string` (required, non-empty)<br>`source` `string`<br>`input_metadata` `map[string]string` |",
		},
		"pipeline": {
			"| `progress` | `state`, `updated_at`, `current_phase`, `attempts`, `cost_total_usd` | every transition | state, updated_at, current_phase, attempt and cost_total_usd, updated on each transition. |",
			"| `confident` | field `confidence` at least 0.6 | Classifier confidence \\>= 0.6. |",
		},
		"review": {
			"| `not_started` | Initial state for all newly created tasks. | initial | `in_progress`, `blocked` |",
			"| `reviews_complete` | counter `reviews` at least 1 if `criticality` is `standard`; 2 if `criticality` is `complex`; 2 if `criticality` is `security-sensitive` | All required reviews submitted: 1 (standard), \\>=2 (complex, security-sensitive). |",
		},
	}
	for _, path := range specs(t) {
		t.Run(name(path), func(t *testing.T) {
			a, b := document(t, path), document(t, path)
			if a != b {
				t.Fatal("two renderings differ")
			}
			if !strings.HasPrefix(a, Header+"\n\n# ") {
				t.Errorf("bad start:\n%s", a)
			}
			lines := strings.Split(a, "\n")
			for _, w := range want[name(path)] {
				if !contains(lines, w) {
					t.Errorf("missing line %q in:\n%s", w, a)
				}
			}
			checkTables(t, a)
		})
	}
}

// checkTables checks that every table row has as many cells as its header.
func checkTables(t *testing.T, doc string) {
	t.Helper()
	header := 0
	for _, line := range strings.Split(doc, "\n") {
		if !strings.HasPrefix(line, "|") {
			header = 0
			continue
		}
		n := len(cells(line))
		switch {
		case header == 0:
			header = n
		case n != header:
			t.Errorf("row has %d cells, header %d: %s", n, header, line)
		}
	}
}

// cells splits a table row as GitHub-flavoured Markdown does: at every "|" that does not
// follow a backslash. In a table row a backslash escapes a pipe and nothing else, so
// "\\\\|" is a backslash and an escaped pipe, not an escaped backslash and a delimiter.
func cells(line string) []string {
	var out []string
	var cur strings.Builder
	for i := 1; i < len(line); i++ {
		if line[i] == '|' && line[i-1] != '\\' {
			out = append(out, cur.String())
			cur.Reset()
			continue
		}
		cur.WriteByte(line[i])
	}
	return out
}

// cellCode reads a table cell of CodeCell as GitHub-flavoured Markdown shows it (readCode).
func cellCode(t *testing.T, cell string) string {
	t.Helper()
	return readCode(t, cell)
}

// cellText reads a table cell of Text as GitHub-flavoured Markdown shows it: "\\|" turns
// into "|", then every backslash escape of ASCII punctuation into the character, and <br>
// into a line break.
func cellText(cell string) string {
	s := strings.ReplaceAll(strings.TrimSpace(cell), `\|`, "|")
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) && strings.IndexByte("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~", s[i+1]) >= 0 {
			i++
		}
		b.WriteByte(s[i])
	}
	return strings.ReplaceAll(b.String(), "<br>", "\n")
}

// TestCellsKeepPipesAndBackslashes renders names and texts holding pipes and backslashes
// in a table row: each must stay one cell and read back as written.
func TestCellsKeepPipesAndBackslashes(t *testing.T) {
	for _, name := range []string{"a|b", `a\b`, `a\|b`, `\`, `a\`, `\a`, "|", "||", `\\|`, `|\`, "`|`", "a | b", `\|\|`, "x`|`y"} {
		row := "| " + CodeCell(name) + " | " + Text(name) + " | end |"
		cs := cells(row)
		if len(cs) != 3 {
			t.Errorf("%q makes the row %s, of %d cells, want 3", name, row, len(cs))
			continue
		}
		if got := cellCode(t, cs[0]); got != name {
			t.Errorf("CodeCell(%q) = %s reads %q", name, cs[0], got)
		}
		if got := cellText(cs[1]); got != name {
			t.Errorf("Text(%q) = %s reads %q", name, cs[1], got)
		}
	}
}

// TestInvisibleCharacters checks that text and names lose the characters a name may not
// hold (names.Unprintable), and that line separators break lines.
func TestInvisibleCharacters(t *testing.T) {
	in := "a\ufeffb\u202ec\u2066d\u2069e\u200bf\u200dg\u2060h\u200ei\u0085j\u2028k\u2029l"
	if got, want := Text(in), "abcdefghij<br>k<br>l"; got != want {
		t.Errorf("Text(%q) = %q, want %q", in, got, want)
	}
	if got, want := Code(in), "`abcdefghijkl`"; got != want {
		t.Errorf("Code(%q) = %q, want %q", in, got, want)
	}
}

// TestHostile checks that no spec text of the hostile spec stays active Markdown: outside
// code spans, after our own <br> and the backslash escapes are removed, no character that
// starts markup is left.
func TestHostile(t *testing.T) {
	checkInert(t, document(t, "../mermaid/testdata/hostile.fsm.yaml"))
}

// checkInert checks that outside code spans and the diagram no markup is left (see
// TestHostile).
func checkInert(t *testing.T, doc string) {
	t.Helper()
	checkTables(t, doc)
	inDiagram := false
	for i, line := range strings.Split(strings.TrimSuffix(doc, "\n"), "\n") {
		switch {
		case i == 0 || line == "" || strings.HasPrefix(line, "|---|"):
			continue
		case line == "```mermaid":
			inDiagram = true
			continue
		case line == "```":
			inDiagram = false
			continue
		case inDiagram:
			continue
		}
		var texts []string
		switch {
		case strings.HasPrefix(line, "|"):
			texts = cells(line)
		case strings.HasPrefix(line, "# "), strings.HasPrefix(line, "## "), strings.HasPrefix(line, "- "):
			texts = []string{line[strings.Index(line, " ")+1:]}
		default:
			texts = []string{line}
		}
		for _, text := range texts {
			if p := active(stripCode(text)); p != "" {
				t.Errorf("line %d: active Markdown %q in %q", i+1, p, text)
			}
		}
	}
}

// stripCode removes code spans (whose content is inert).
func stripCode(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		if s[i] == '\\' && i+1 < len(s) {
			b.WriteString(s[i : i+2])
			i += 2
			continue
		}
		if s[i] != '`' {
			b.WriteByte(s[i])
			i++
			continue
		}
		n := 0
		for i+n < len(s) && s[i+n] == '`' {
			n++
		}
		fence := s[i : i+n]
		end := -1
		for j := i + n; j < len(s); {
			k := strings.Index(s[j:], fence)
			if k < 0 {
				break
			}
			k += j
			if (k+n == len(s) || s[k+n] != '`') && s[k-1] != '`' {
				end = k
				break
			}
			j = k + 1
		}
		if end < 0 {
			b.WriteString(fence) // an unmatched fence stays, and is reported
			i += n
			continue
		}
		b.WriteString("CODE")
		i = end + n
	}
	return b.String()
}

// active returns the first piece of active Markdown or HTML left in s, or "".
func active(s string) string {
	s = strings.ReplaceAll(s, "<br>", " ")
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			b.WriteByte(' ')
			i++
			continue
		}
		b.WriteByte(s[i])
	}
	s = b.String()
	if k := strings.IndexAny(s, "<>&*[]`|~$#"); k >= 0 {
		return s[k:min(len(s), k+10)]
	}
	for _, p := range []string{"://", "www.", " _", "_ "} {
		if k := strings.Index(s, p); k >= 0 {
			return s[k:min(len(s), k+10)]
		}
	}
	if strings.HasPrefix(s, "_") || strings.HasSuffix(s, "_") {
		return s
	}
	return ""
}

func TestFence(t *testing.T) {
	m := load(t, "../mermaid/testdata/door.fsm.yaml")
	b, err := Document(m, "stateDiagram-v2\n````\n")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "\n`````mermaid\nstateDiagram-v2\n````\n`````\n") {
		t.Errorf("diagram fence:\n%s", b)
	}
}

// TestMermaidCheck validates the diagrams inside the documents with the real Mermaid
// parser; see TestMermaidCheck in internal/mermaid.
func TestMermaidCheck(t *testing.T) {
	check := testtool.MermaidCheck(t)
	tmp := t.TempDir()
	var files []string
	for _, path := range specs(t) {
		f := filepath.Join(tmp, name(path)+".md")
		if err := os.WriteFile(f, []byte(document(t, path)), 0o644); err != nil {
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

// TestMigrations: the document of a spec that migrates says from what, and what becomes of
// each name; one that does not has no such section.
func TestMigrations(t *testing.T) {
	doc := document(t, "../../examples/evolve/v2/ticket.fsm.yaml")
	for _, want := range []string{
		"## Migrations",
		"| From | Fingerprint | States | Events | Counters | Context fields | Defaults |",
		"| `../v1/ticket.fsm.yaml` | `sha256:",
		"| `approved` → `accepted`, `triage` → `open` | `approve` → `accept`, `review` dropped | `reopens` → `reopen_count` | `priority` → `urgency` | `team` = `\"support\"` |",
	} {
		if !strings.Contains(doc, want) {
			t.Errorf("no %q in:\n%s", want, doc)
		}
	}
	if doc := document(t, "../../examples/evolve/v1/ticket.fsm.yaml"); strings.Contains(doc, "## Migrations") {
		t.Error("a spec without migrations has a Migrations section")
	}
}
