package specdiff

import (
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/fsmgen/fsmgen/internal/diag"
	"github.com/fsmgen/fsmgen/internal/ir"
	"github.com/fsmgen/fsmgen/internal/lower"
)

// edit is one change to a seed spec: every replacement is made (each must match), and the
// diff from the seed to the result has the verdict and a change whose text holds want.
type edit struct {
	name    string
	seed    string
	replace [][2]string
	verdict Class
	want    string // a change's "class: message", in part
}

// seedEdits is the corpus: edits of the five seed specs, of every class.
var seedEdits = []edit{
	// Compatible.
	{"docs only", "review", [][2]string{{"Worker starts task.", "The worker starts the task."}}, Compatible, "compatible: the doc of transition from not_started on in_progress changed"},
	{"a state and its transitions added", "review", [][2]string{{"  pending_review: { doc:", "  on_hold: {}\n  pending_review: { doc:"}, {"  - { from: not_started, to: blocked", "  - { from: in_progress, to: on_hold }\n  - { from: on_hold, to: in_progress }\n  - { from: not_started, to: blocked"}}, Compatible, `compatible: state "on_hold" added`},
	{"an optional payload field added", "cognitive", [][2]string{{"      error: { type: string, doc: \"What went wrong.\" }", "      error: { type: string, doc: \"What went wrong.\" }\n      code: { type: int }"}}, Compatible, `compatible: payload field "code" added to event "task_failed"`},
	{"a context field added", "pipeline", [][2]string{{"  task_id:        { type: string", "  region: { type: string }\n  task_id:        { type: string"}}, Compatible, `compatible: context field "region" added`},
	// Behaviour.
	{"a target changed", "review", [][2]string{{"  - { from: blocked, to: not_started, doc:", "  - { from: blocked, on: not_started, to: in_progress, doc:"}}, Behaviour, "behaviour: transition from blocked on not_started goes to in_progress (was not_started)"},
	{"a limit changed", "build", [][2]string{{"    limit: 3\n    then: cto_intervention", "    limit: 5\n    then: cto_intervention"}}, Behaviour, `behaviour: counter "failures": limit 5, then cto_intervention (was limit 3, then cto_intervention)`},
	{"a timeout changed", "build", [][2]string{{"    timeout: 1h          # alert if not picked up", "    timeout: 2h          # alert if not picked up"}}, Behaviour, "behaviour: the timeout of state"},
	{"a guard made an expression", "pipeline", [][2]string{{"  budget_available:        { doc: The budget allows another attempt. }", "  budget_available:        { or: [has_more_phases, retries_remaining] }"}}, Behaviour, `behaviour: guard "budget_available" tests expression has_more_phases or retries_remaining (was a hook)`},
	{"a transition's guard expression changed", "pipeline", [][2]string{{"if: confident, to: routing", "if: { or: [confident, has_more_phases] }, to: routing"}}, Behaviour, `guarded by (confident or has_more_phases) (was confident)`},
	{"a guard's threshold changed", "review", [][2]string{{"values: { standard: 1, complex: 2, security-sensitive: 2 } }", "values: { standard: 1, complex: 3, security-sensitive: 2 } }"}}, Behaviour, `behaviour: guard "reviews_complete" tests`},
	{"a max changed", "approval", [][2]string{{"  review_cycles:\n    max: 3", "  review_cycles:\n    max: 4"}}, Behaviour, `behaviour: counter "review_cycles": limit 4, then BLOCKED (was limit 3, then BLOCKED)`},
	{"the initial state moved", "review", [][2]string{{"  not_started:    { initial: true, doc:", "  intake: { initial: true }\n  not_started:    { doc:"}, {"  - { from: not_started, to: in_progress, doc: Worker starts task. }", "  - { from: intake, to: not_started }\n  - { from: not_started, to: in_progress, doc: Worker starts task. }"}}, Behaviour, `behaviour: new machines start in "intake" (was "not_started")`},
	{"a bound made exclusive", "pipeline", [][2]string{{"  cost_total_usd: { type: float, min: 0,", "  cost_total_usd: { type: float, above: 0,"}}, Behaviour, `behaviour: context field "cost_total_usd": above 0 (was min 0)`},
	{"a delayed transition added", "review", [][2]string{{"  - { from: pending_review, to: under_review,", "  - { from: pending_review, after: 1h, to: blocked }\n  - { from: pending_review, to: under_review,"}}, Behaviour, `behaviour: the timeout of state "pending_review" is 1h0m0s, firing pending_review.after`},
	{"a statechart's target changed", "cognitive", [][2]string{{"  - { from: suspended, on: message_received, to: reasoning }", "  - { from: suspended, on: message_received, to: active.acting }"}}, Behaviour, "behaviour: transition from suspended on message_received goes to active.acting (was active.reasoning)"},
	// Breaking.
	{"a state renamed", "review", [][2]string{{"pending_review", "awaiting_review"}}, Breaking, `breaking: state "pending_review" removed`},
	{"a context field's type changed", "pipeline", [][2]string{{"  confidence:     { type: float, min: 0, max: 1,", "  confidence:     { type: int, min: 0, max: 1,"}}, Breaking, `breaking: context field "confidence" is a int (was float)`},
	{"a required payload field added", "cognitive", [][2]string{{"      error: { type: string, doc: \"What went wrong.\" }", "      error: { type: string, doc: \"What went wrong.\" }\n      code: { type: int, required: true }"}}, Breaking, `breaking: required payload field "code" added to event "task_failed"`},
	{"a counter renamed", "review", [][2]string{{"security_reviews", "sec_reviews"}}, Breaking, `breaking: counter "security_reviews" removed`},
	{"a role renamed", "approval", [][2]string{{"intern", "junior"}}, Breaking, `breaking: role "intern" removed`},
	{"the machine renamed", "build", [][2]string{{"machine: Task", "machine: BuildTask"}}, Breaking, "breaking: the machine build.Task is now build.BuildTask"},
	{"a statechart's state renamed", "cognitive", [][2]string{{"acting", "doing"}}, Breaking, `breaking: configuration "acting" removed`},
}

// migratedEdits are edits with the migration the new spec declares from the seed (YAML
// appended to it, from: filled in), and edits that need one and declare none. The edits of
// seedEdits that change the fingerprint without breaking anything declare an empty one.
var migratedEdits = []struct {
	edit
	migration string
}{
	{edit{"a state added, without a migration", "review", [][2]string{{"  pending_review: { doc:", "  on_hold: {}\n  pending_review: { doc:"}, {"  - { from: not_started, to: blocked", "  - { from: in_progress, to: on_hold }\n  - { from: on_hold, to: in_progress }\n  - { from: not_started, to: blocked"}}, Breaking, "breaking: the fingerprint changes"}, ""},
	{edit{"a state renamed, without a migration", "review", [][2]string{{"pending_review", "awaiting_review"}}, Breaking, `declare a migration from it (migrations: [{from: FILE, states: {"pending_review": ?}}])`}, ""},
	{edit{"a state renamed, with its migration", "review", [][2]string{{"pending_review", "awaiting_review"}}, Behaviour, `compatible: state "pending_review" is now "awaiting_review": the migration renames it`},
		"    states: { pending_review: awaiting_review }\n    events: { pending_review: awaiting_review }\n"},
	{edit{"a state merged into another", "review", [][2]string{{"  blocked:        { doc: Task cannot proceed due to blocker. }\n", ""}, {"  - { from: not_started, to: blocked, doc: Dependency not satisfied. }\n", ""}, {"  - { from: in_progress, to: blocked, doc: Worker encounters blocker. }\n", ""}, {"  - { from: blocked, to: not_started, doc: \"Blocker resolved (reset).\" }\n", ""}, {"  - { from: blocked, to: in_progress, doc: \"Blocker resolved (resume).\" }\n", ""}, {"  blocked:        { doc: \"Dependency not satisfied; worker encounters blocker.\" }\n", ""}, {"  not_started:    { doc: \"Blocker resolved (reset).\" }\n", ""}},
		Behaviour, `behaviour: state "blocked" removed: the migration moves its instances to "not_started"`}, "    states: { blocked: not_started }\n"},
	{edit{"a counter renamed, with its migration", "review", [][2]string{{"security_reviews", "sec_reviews"}}, Behaviour, `compatible: counter "security_reviews" is now "sec_reviews": the migration renames it`}, "    counters: { security_reviews: sec_reviews }\n"},
	{edit{"a compatible edit, with its migration", "pipeline", [][2]string{{"  task_id:        { type: string", "  region: { type: string }\n  task_id:        { type: string"}}, Compatible, "compatible: instances stored under the old spec"}, ""},
}

// apply returns the path of e's seed, its content, and the content e makes of it.
func (e edit) apply(t *testing.T) (path string, seed []byte, edited string) {
	t.Helper()
	path = "../../examples/" + e.seed + "/" + e.seed + ".fsm.yaml"
	seed, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	edited = string(seed)
	for _, r := range e.replace {
		if !strings.Contains(edited, r[0]) {
			t.Fatalf("the seed holds no %q", r[0])
		}
		edited = strings.ReplaceAll(edited, r[0], r[1])
	}
	return path, seed, edited
}

// fingerprintChanges reports whether edit e changes its seed's fingerprint.
func fingerprintChanges(t *testing.T, e edit) bool {
	path, seed, edited := e.apply(t)
	return ir.Fingerprint(load(t, path, seed).m) != ir.Fingerprint(load(t, "new.fsm.yaml", []byte(edited)).m)
}

// withMigration returns spec with a migration from the seed at path, body its maps.
func withMigration(spec, path, body string) string {
	return spec + "\nmigrations:\n  - from: " + path + "\n" + body
}

type lowered struct{ m *ir.Machine }

func load(t *testing.T, name string, data []byte) *lowered {
	t.Helper()
	m, ds := lower.Load(name, data)
	if ds.HasErrors() {
		t.Fatalf("%s:\n%v", name, ds)
	}
	return &lowered{m}
}

func TestSeedEdits(t *testing.T) {
	all := make([]struct {
		edit
		migration string
	}, 0, len(seedEdits)+len(migratedEdits))
	for _, e := range seedEdits {
		// An edit that changes the fingerprint and breaks nothing by itself needs a
		// migration all the same, if only to say the older spec's instances load.
		m := ""
		if e.verdict != Breaking && fingerprintChanges(t, e) {
			m = "    states: {}\n"
		}
		all = append(all, struct {
			edit
			migration string
		}{e, m})
	}
	all = append(all, migratedEdits...)
	for _, e := range all {
		t.Run(e.name, func(t *testing.T) {
			path, data, edited := e.apply(t)
			if e.migration != "" || strings.HasSuffix(e.name, ", with its migration") {
				edited = withMigration(edited, path, e.migration)
			}
			old, neu := load(t, path, data), load(t, "new.fsm.yaml", []byte(edited))
			cs := Compare(old.m, neu.m)
			var text bytes.Buffer
			if err := Write(&text, cs, diag.FormatText); err != nil {
				t.Fatal(err)
			}
			if v := Verdict(cs); v != e.verdict || !strings.Contains(text.String(), e.want) {
				t.Errorf("verdict %s, want %s, and a change with %q:\n%s", v, e.verdict, e.want, text.String())
			}
			// Nothing changed: nothing reported.
			if same := Compare(old.m, load(t, path, data).m); len(same) != 0 {
				t.Errorf("a spec against itself: %v", same)
			}
		})
	}
}

func TestFormats(t *testing.T) {
	data, err := os.ReadFile("../../examples/review/review.fsm.yaml")
	if err != nil {
		t.Fatal(err)
	}
	old := load(t, "old.fsm.yaml", data)
	neu := load(t, "new.fsm.yaml", []byte(strings.ReplaceAll(string(data), "pending_review", "awaiting_review")))
	cs := Compare(old.m, neu.m)
	var js bytes.Buffer
	if err := Write(&js, cs, diag.FormatJSON); err != nil {
		t.Fatal(err)
	}
	var out struct {
		Verdict string
		Counts  map[string]int
		Changes []struct {
			Class   string
			Message string
			Pos     diag.Pos
		}
	}
	if err := json.Unmarshal(js.Bytes(), &out); err != nil {
		t.Fatal(err)
	}
	if out.Verdict != "breaking" || out.Counts["breaking"] != 3 || len(out.Changes) != len(cs) || out.Changes[0].Pos.File != "new.fsm.yaml" {
		t.Errorf("json: %s", js.String())
	}
	var gh bytes.Buffer
	if err := Write(&gh, cs, diag.FormatGitHubActions); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(gh.String(), "::error file=old.fsm.yaml,line=43,col=3::breaking: state \"pending_review\" removed") ||
		!strings.Contains(gh.String(), "::notice file=new.fsm.yaml,line=43,col=3::compatible: state \"awaiting_review\" added") ||
		!strings.Contains(gh.String(), "::error file=new.fsm.yaml,line=1,col=1::breaking: the fingerprint changes") {
		t.Errorf("github-actions:\n%s", gh.String())
	}
	var empty bytes.Buffer
	Write(&empty, nil, diag.FormatJSON)
	if !strings.Contains(empty.String(), `"changes": []`) || !strings.Contains(empty.String(), `"verdict": "compatible"`) {
		t.Errorf("no change, as JSON: %s", empty.String())
	}
}
