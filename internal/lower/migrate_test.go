package lower_test

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/fsmgen/fsmgen/internal/diag"
	"github.com/fsmgen/fsmgen/internal/ir"
	"github.com/fsmgen/fsmgen/internal/lower"
)

// writeSpecs writes files (path relative to a new temporary directory: content) and
// returns the directory.
func writeSpecs(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		path := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// loadSpec loads the spec at path as Load does, checks that Check finds the same, and
// returns the machine and the findings, each as diag.Diagnostic.String writes it with the
// directory dir (and its separator) left out of every path.
func loadSpec(t *testing.T, dir, path string) (*ir.Machine, []string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	m, ds := lower.Load(path, data)
	got := findingStrings(ds, dir)
	if checked := findingStrings(lower.Check(path, data), dir); !slices.Equal(checked, got) {
		t.Errorf("Check and Load differ\n--- Check\n%s\n--- Load\n%s", strings.Join(checked, "\n"), strings.Join(got, "\n"))
	}
	if (m == nil) != ds.HasErrors() {
		t.Errorf("Load returned machine %v with errors %v", m != nil, ds.HasErrors())
	}
	return m, got
}

func findingStrings(ds diag.List, dir string) []string {
	var out []string
	for _, d := range ds {
		s := d.String()
		if dir != "" {
			s = strings.ReplaceAll(s, dir+string(filepath.Separator), "")
		}
		out = append(out, s)
	}
	return out
}

// fingerprintOf loads the spec at path, which must be clean of errors, and returns its
// fingerprint.
func fingerprintOf(t *testing.T, path string) string {
	t.Helper()
	m, ds := loadSpec(t, "", path)
	if m == nil {
		t.Fatalf("%s: %v", path, ds)
	}
	return ir.Fingerprint(m)
}

// migView is an ir.Migration as the tests compare it: positions as text (the directory
// left out), nil maps as empty ones, moves by counter name.
type migView struct {
	From, Source, Pos                          string
	States, Events, Counters, Fields, Defaults map[string]string
	Transitions                                []int
	Moves                                      map[int]string // nil: the migration has none
}

func viewOf(t *testing.T, m *ir.Machine, mg *ir.Migration, dir string) migView {
	t.Helper()
	norm := func(x map[string]string) map[string]string {
		if x == nil {
			return map[string]string{}
		}
		return x
	}
	pos := mg.Pos.String()
	if dir != "" {
		pos = strings.TrimPrefix(pos, dir+string(filepath.Separator))
	}
	v := migView{From: mg.From, Source: mg.Source, Pos: pos,
		States: norm(mg.States), Events: norm(mg.Events), Counters: norm(mg.Counters), Fields: norm(mg.Fields), Defaults: norm(mg.Defaults),
		Transitions: mg.Transitions}
	if mg.Moves != nil {
		v.Moves = map[int]string{}
		for i, mv := range mg.Moves {
			v.Moves[i] = moveString(t, m, mv)
		}
	}
	return v
}

// moveString writes a move by the names of its counters, which must be m's.
func moveString(t *testing.T, m *ir.Machine, mv *ir.Move) string {
	t.Helper()
	if mv == nil {
		return "<nil>"
	}
	names := func(cs []*ir.Counter) []string {
		out := []string{}
		for _, c := range cs {
			if !slices.Contains(m.Counters, c) {
				t.Errorf("move counter %q is not a counter of the machine", c.Name)
			}
			out = append(out, c.Name)
		}
		return out
	}
	return fmt.Sprintf("inc=%v reset=%v internal=%t", names(mv.Increment), names(mv.Reset), mv.Internal)
}

func checkMigration(t *testing.T, m *ir.Machine, mg *ir.Migration, dir string, want migView) {
	t.Helper()
	if got := viewOf(t, m, mg, dir); !reflect.DeepEqual(got, want) {
		t.Errorf("migration from %s:\n got %+v\nwant %+v", mg.Source, got, want)
	}
}

// TestMigrationTicket checks the migration of examples/evolve/v2 from v1, every part of
// it worked out by hand from the two specs.
func TestMigrationTicket(t *testing.T) {
	v1 := filepath.Join("..", "..", "examples", "evolve", "v1", "ticket.fsm.yaml")
	v2 := filepath.Join("..", "..", "examples", "evolve", "v2", "ticket.fsm.yaml")
	m, ds := loadSpec(t, "", v2)
	if len(ds) > 0 || m == nil {
		t.Fatalf("v2 findings:\n%s", strings.Join(ds, "\n"))
	}
	if len(m.Migrations) != 1 {
		t.Fatalf("%d migrations, want 1", len(m.Migrations))
	}
	checkMigration(t, m, m.Migrations[0], "", migView{
		From:   fingerprintOf(t, v1),
		Source: "../v1/ticket.fsm.yaml",
		Pos:    v2 + ":53:5",
		States: map[string]string{"triage": "open", "approved": "accepted"},
		// review is not an event of v2: dropped.
		Events:   map[string]string{"approve": "accept", "review": ""},
		Counters: map[string]string{"reopens": "reopen_count"},
		Fields:   map[string]string{"priority": "urgency"},
		// team is new (in_progress requires it); urgency is priority renamed, so its spec
		// default is not needed.
		Defaults: map[string]string{"team": `"support"`},
		Transitions: []int{
			-1, // open -review-> triage: v2 has no review (and open -> open is no transition of v2)
			0,  // triage -approve-> approved = open -accept-> accepted
			1,  // triage -reject-> rejected = open -reject-> rejected
			2,  // approved -start-> in_progress = accepted -start-> in_progress
			3,  // in_progress -finish-> done
			4,  // in_progress -reopen-> approved, increment reopens = ... accepted, increment reopen_count
			7,  // comment in open, triage, approved, in_progress: v2's comment covers open, accepted, in_progress (and blocked)
		},
		// The review entries replay as recorded: an external move, no counters.
		Moves: map[int]string{0: "inc=[] reset=[] internal=false"},
	})
	if got := m.Migrations[0].From; got == ir.Fingerprint(m) {
		t.Errorf("From is v2's own fingerprint")
	}
}

// oldSpec is the older spec of TestMigrationFindings; newSpec its newer version, which
// differs by one context field (note) and declares a migration from it. The cases edit
// newSpec line by line (keeping the line numbers) and append to its migration from line
// 24 on.
const oldSpec = `version: 1
machine: M
package: m
context:
  n: { type: int }
  s: { type: string }
  e: { type: enum, values: [x, y] }
counters:
  c: {}
  pc: { per_state: true }
states:
  a: { initial: true }
  b: {}
  z: { terminal: true }
events:
  go: {}
  stop: {}
transitions:
  - { from: a, on: go, to: b, increment: [c, pc] }
  - { from: b, on: stop, to: z }
`

const newSpec = `version: 1
machine: M
package: m
context:
  n: { type: int }
  s: { type: string }
  e: { type: enum, values: [x, y] }
  note: { type: string }
counters:
  c: {}
  pc: { per_state: true }
states:
  a: { initial: true }
  b: {}
  z: { terminal: true }
events:
  go: {}
  stop: {}
transitions:
  - { from: a, on: go, to: b, increment: [c, pc] }
  - { from: b, on: stop, to: z }
migrations:
  - from: old.fsm.yaml
`

// edited returns s with each pair of edits (old, new) replaced once; each old must occur.
func edited(t *testing.T, s string, edits ...string) string {
	t.Helper()
	if len(edits)%2 != 0 {
		t.Fatal("edits come in pairs")
	}
	for i := 0; i < len(edits); i += 2 {
		if !strings.Contains(s, edits[i]) {
			t.Fatalf("edit %q: not in the spec", edits[i])
		}
		s = strings.Replace(s, edits[i], edits[i+1], 1)
	}
	return s
}

// specBody is a spec without its migrations.
func specBody(s string) string {
	body, _, _ := strings.Cut(s, "migrations:\n")
	return body
}

// Edits of newSpec that rename things (each keeps the line count).
var (
	renameB  = []string{"  b: {}", "  bb: {}", "to: b,", "to: bb,", "from: b,", "from: bb,"}
	renameGo = []string{"  go: {}", "  start: {}", "on: go,", "on: start,"}
	renameC  = []string{"  c: {}", "  cnt: {}", "increment: [c, pc]", "increment: [cnt, pc]"}
	renameN  = []string{"  n: { type: int }", "  num: { type: int }"}
	teamOnB  = []string{"  note: { type: string }", "  team: { type: string }", "  b: {}", "  b: { requires: [team] }"}
)

// TestMigrationFindings runs newSpec, edited, against oldSpec (and the other older specs a
// case names): the exact findings, and for a clean case what the migration holds.
func TestMigrationFindings(t *testing.T) {
	type tc struct {
		name  string
		edits []string          // pairs applied to newSpec
		add   string            // appended to the migration (line 24 on)
		files map[string]string // more older specs, by name
		want  []string          // the findings, the directory left out
		// For a clean case, the maps of the migration (nil: empty).
		states, events, counters, fields, defaults map[string]string
		transitions                                []int
		moves                                      map[int]string // by moveString
	}
	cases := []tc{
		{name: "clean", transitions: []int{0, 1}},

		// States.
		{name: "older state without a place", edits: renameB,
			want: []string{`new.fsm.yaml:23:11: error: state "b" of old.fsm.yaml (old.fsm.yaml:13:3) has no place in this spec: instances stored in it would be stranded; map it to a state under states`}},
		{name: "state renamed", edits: renameB, add: "    states: { b: bb }\n",
			states: map[string]string{"b": "bb"}, transitions: []int{0, 1}},
		{name: "unknown older state", edits: renameB, add: "    states: { bx: bb }\n",
			want: []string{`new.fsm.yaml:24:15: error: old.fsm.yaml has no state "bx" (did you mean "b"?)`}},
		{name: "unknown new state", edits: renameB, add: "    states: { b: bx }\n",
			want: []string{`new.fsm.yaml:24:18: error: unknown state "bx" (did you mean "bb"?)`}},
		{name: "state mapped to null", edits: renameB, add: "    states: { b: null }\n",
			// The schema reports it; the checker does not again.
			want: []string{
				`new.fsm.yaml:24:18: error: migrations[0].states.b: expected string, but got null`,
			}},
		{name: "two fields become one", add: "    context: { n: s }\n",
			want: []string{
				`new.fsm.yaml:23:11: error: context field "n" of old.fsm.yaml is int, field "s" here string: its stored values would not decode; drop them (context: {n: null}) or keep the type`,
				`new.fsm.yaml:24:16: error: context fields "n" and "s" of old.fsm.yaml both become "s" here: their values would collide; rename or drop one`,
			}},
		{name: "two counters become one", add: "    counters: { c: pc }\n",
			want: []string{
				`new.fsm.yaml:23:11: error: counter "c" of old.fsm.yaml is not per state, counter "pc" here per state: its stored values would not fit`,
				`new.fsm.yaml:24:17: error: counters "c" and "pc" of old.fsm.yaml both become "pc" here: their values would collide; rename or drop one`,
			}},
		{name: "an enum read as a string", edits: []string{"  note: { type: string }", "  label: { type: string }"}, add: "    context: { e: label }\n",
			fields: map[string]string{"e": "label"}, transitions: []int{0, 1}},
		{name: "older spec of another package, same fingerprint", edits: []string{"from: old.fsm.yaml", "from: other.fsm.yaml"},
			files: map[string]string{"other.fsm.yaml": strings.Replace(specBody(newSpec), "package: m", "package: p", 1)},
			want:  []string{`new.fsm.yaml:23:11: error: other.fsm.yaml is machine p.M, this spec m.M: a store finds instances by package and machine, so both must stay`}},
		{name: "identity state entry dropped from the map", add: "    states: { b: b }\n", transitions: []int{0, 1}},

		// Events.
		{name: "event renamed", edits: renameGo, add: "    events: { go: start }\n",
			events: map[string]string{"go": "start"}, transitions: []int{0, 1}},
		{name: "event gone is dropped", edits: renameGo,
			events: map[string]string{"go": ""}, transitions: []int{-1, 1},
			moves: map[int]string{0: "inc=[c pc] reset=[] internal=false"}},
		{name: "unknown older and new event", edits: renameGo, add: "    events: { gox: start, go: strt }\n",
			want: []string{
				`new.fsm.yaml:24:15: error: old.fsm.yaml has no event "gox" (did you mean "go"?)`,
				`new.fsm.yaml:24:31: error: unknown event "strt" (did you mean "start"?)`,
			}},

		// Counters.
		{name: "counter renamed", edits: renameC, add: "    counters: { c: cnt }\n",
			counters: map[string]string{"c": "cnt"}, transitions: []int{0, 1}},
		{name: "unknown older and new counter", edits: renameC, add: "    counters: { cc: cnt, c: cn }\n",
			want: []string{
				`new.fsm.yaml:24:17: error: old.fsm.yaml has no counter "cc" (did you mean "c"?)`,
				`new.fsm.yaml:24:29: error: unknown counter "cn" (did you mean "cnt"?)`,
			}},
		{name: "per-state counter renamed to a plain one",
			edits: []string{"  pc: { per_state: true }", "  pcount: {}", "increment: [c, pc]", "increment: [c, pcount]"},
			add:   "    counters: { pc: pcount }\n",
			want:  []string{`new.fsm.yaml:23:11: error: counter "pc" of old.fsm.yaml is per state, counter "pcount" here not per state: its stored values would not fit`}},
		{name: "plain counter made per state", edits: []string{"  c: {}", "  c: { per_state: true }"},
			want: []string{`new.fsm.yaml:23:11: error: counter "c" of old.fsm.yaml is not per state, counter "c" here per state: its stored values would not fit`}},

		// Context fields.
		{name: "field renamed", edits: renameN, add: "    context: { n: num }\n",
			fields: map[string]string{"n": "num"}, transitions: []int{0, 1}},
		{name: "field gone is dropped", edits: renameN,
			fields: map[string]string{"n": ""}, transitions: []int{0, 1}},
		{name: "unknown older and new field", edits: renameN, add: "    context: { nn: num, n: nm }\n",
			want: []string{
				`new.fsm.yaml:24:16: error: old.fsm.yaml has no context field "nn" (did you mean "n"?)`,
				`new.fsm.yaml:24:28: error: unknown context field "nm" (did you mean "num"?)`,
			}},
		{name: "int to string", edits: []string{"  n: { type: int }", "  n: { type: string }"},
			want: []string{`new.fsm.yaml:23:11: error: context field "n" of old.fsm.yaml is int, field "n" here string: its stored values would not decode; drop them (context: {n: null}) or keep the type`}},
		{name: "int to string, values dropped", edits: []string{"  n: { type: int }", "  n: { type: string }"}, add: "    context: { n: null }\n",
			fields: map[string]string{"n": ""}, transitions: []int{0, 1}},
		{name: "int to list", edits: []string{"  n: { type: int }", `  n: { type: "[]int" }`},
			want: []string{`new.fsm.yaml:23:11: error: context field "n" of old.fsm.yaml is int, field "n" here []int: its stored values would not decode; drop them (context: {n: null}) or keep the type`}},
		{name: "renamed and retyped", edits: []string{"  n: { type: int }", "  num: { type: string }"}, add: "    context: { n: num }\n",
			want: []string{`new.fsm.yaml:23:11: error: context field "n" of old.fsm.yaml is int, field "num" here string: its stored values would not decode; drop them (context: {n: null}) or keep the type`}},
		{name: "enum loses a value", edits: []string{"values: [x, y]", "values: [x]"},
			want: []string{`new.fsm.yaml:23:11: error: context field "e" of old.fsm.yaml is enum (x, y), field "e" here enum (x): its stored values would not decode; drop them (context: {e: null}) or keep the type`}},
		{name: "enum gains a value", edits: []string{"values: [x, y]", "values: [w, y, x]"}, transitions: []int{0, 1}},
		{name: "int to float", edits: []string{"  n: { type: int }", "  n: { type: float }"}, transitions: []int{0, 1}},

		// New fields and defaults.
		{name: "new required field without a default", edits: teamOnB,
			want: []string{`new.fsm.yaml:23:11: error: context field "team" is new and b requires it: give the instances stored under old.fsm.yaml a value under defaults`}},
		{name: "new required field with a migration default", edits: teamOnB, add: "    defaults: { team: ops }\n",
			defaults: map[string]string{"team": `"ops"`}, transitions: []int{0, 1}},
		{name: "new required field with a spec default",
			edits:    []string{"  note: { type: string }", "  team: { type: string, default: ops }", "  b: {}", "  b: { requires: [team] }"},
			defaults: map[string]string{"team": `"ops"`}, transitions: []int{0, 1}},
		{name: "migration default over the spec default",
			edits:    []string{"  note: { type: string }", "  team: { type: string, default: ops }"},
			add:      "    defaults: { team: dev }\n",
			defaults: map[string]string{"team": `"dev"`}, transitions: []int{0, 1}},
		{name: "defaults of every type",
			edits:       []string{"  note: { type: string }", "  d: { type: duration }\n  k: { type: enum, values: [lo, hi] }\n  f: { type: bool }\n  g: { type: float }\n  h: { type: int, default: 7 }\n  i: { type: duration, default: 1h }\n  l: { type: \"[]string\" }"},
			add:         "    defaults: { d: 15m, k: hi, f: true, g: 1.5 }\n",
			defaults:    map[string]string{"d": "900000000000", "k": `"hi"`, "f": "true", "g": "1.5", "h": "7", "i": "3600000000000"},
			transitions: []int{0, 1}},
		{name: "default for a field the older spec had", add: "    defaults: { n: 3 }\n",
			want: []string{`new.fsm.yaml:24:17: error: instances stored under old.fsm.yaml have context field "n": a default is for the fields they lack`}},
		{name: "default for a renamed field", edits: renameN, add: "    context: { n: num }\n    defaults: { num: 3 }\n",
			want: []string{`new.fsm.yaml:25:17: error: instances stored under old.fsm.yaml have context field "num": a default is for the fields they lack`}},
		{name: "default for a field whose values are dropped", add: "    context: { n: null }\n    defaults: { n: 3 }\n",
			fields: map[string]string{"n": ""}, defaults: map[string]string{"n": "3"}, transitions: []int{0, 1}},
		{name: "default of the wrong type", add: "    defaults: { note: 3 }\n",
			want: []string{`new.fsm.yaml:24:23: error: the default of string field "note" must be a string, not 3; quote it`}},
		{name: "default for an unknown field", add: "    defaults: { nte: x }\n",
			want: []string{`new.fsm.yaml:24:17: error: unknown context field "nte" (did you mean "note"?)`}},
		{name: "default for a list", edits: []string{"  note: { type: string }", `  tags: { type: "[]string" }`}, add: "    defaults: { tags: x }\n",
			want: []string{`new.fsm.yaml:24:17: error: context field "tags" is a []string: a default is a single value`}},

		// The older spec.
		{name: "older spec missing", edits: []string{"from: old.fsm.yaml", "from: missing.fsm.yaml"},
			want: []string{`new.fsm.yaml:23:11: error: cannot read the older spec: open missing.fsm.yaml: no such file or directory`}},
		{name: "older spec with errors", edits: []string{"from: old.fsm.yaml", "from: broken.fsm.yaml"},
			files: map[string]string{"broken.fsm.yaml": strings.Replace(oldSpec, "to: z }", "to: zz }", 1)},
			want:  []string{`new.fsm.yaml:23:11: error: the older spec broken.fsm.yaml has errors: broken.fsm.yaml:20:30: error: unknown state "zz" (did you mean "z"?)`}},
		{name: "older spec means the same", edits: []string{"from: old.fsm.yaml", "from: same.fsm.yaml"},
			files: map[string]string{"same.fsm.yaml": "# the same spec, but for this comment\n" + specBody(newSpec)},
			want:  []string{`new.fsm.yaml:23:11: warning: same.fsm.yaml means what this spec means (the same fingerprint, FINGERPRINT): stored instances load as they are, with nothing to migrate`}},
		{name: "older spec is another machine", edits: []string{"from: old.fsm.yaml", "from: other.fsm.yaml"},
			files: map[string]string{"other.fsm.yaml": strings.Replace(oldSpec, "machine: M", "machine: N", 1)},
			want:  []string{`new.fsm.yaml:23:11: error: other.fsm.yaml is machine m.N, this spec m.M: a store finds instances by package and machine, so both must stay`}},
		{name: "older spec is another package", edits: []string{"from: old.fsm.yaml", "from: other.fsm.yaml"},
			files: map[string]string{"other.fsm.yaml": strings.Replace(oldSpec, "package: m", "package: p", 1)},
			want:  []string{`new.fsm.yaml:23:11: error: other.fsm.yaml is machine p.M, this spec m.M: a store finds instances by package and machine, so both must stay`}},
		{name: "two migrations from the same spec", add: "  - from: copy.fsm.yaml\n",
			files: map[string]string{"copy.fsm.yaml": oldSpec},
			want:  []string{`new.fsm.yaml:24:5: error: a second migration from copy.fsm.yaml (the first is at new.fsm.yaml:23:5): keep one`}},
		{name: "two migrations from the same file", add: "  - from: ./old.fsm.yaml\n",
			want: []string{`new.fsm.yaml:24:5: error: a second migration from ./old.fsm.yaml (the first is at new.fsm.yaml:23:5): keep one`}},
		{name: "migration from itself", edits: []string{"from: old.fsm.yaml", "from: new.fsm.yaml"},
			want: []string{`new.fsm.yaml:23:11: error: the older spec new.fsm.yaml has errors: new.fsm.yaml:23:11: error: new.fsm.yaml migrates from this spec, which migrates from it: a migration names an older version`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			files := map[string]string{"old.fsm.yaml": oldSpec, "new.fsm.yaml": edited(t, newSpec, c.edits...) + c.add}
			maps.Copy(files, c.files)
			dir := writeSpecs(t, files)
			m, got := loadSpec(t, dir, filepath.Join(dir, "new.fsm.yaml"))
			want := slices.Clone(c.want)
			for i, w := range want {
				if strings.Contains(w, "FINGERPRINT") {
					want[i] = strings.Replace(w, "FINGERPRINT", fingerprintOf(t, filepath.Join(dir, "same.fsm.yaml")), 1)
				}
			}
			if !slices.Equal(got, want) {
				t.Fatalf("findings:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
			if len(want) > 0 {
				return
			}
			if len(m.Migrations) != 1 {
				t.Fatalf("%d migrations, want 1", len(m.Migrations))
			}
			mg := m.Migrations[0]
			orEmpty := func(x map[string]string) map[string]string {
				if x == nil {
					return map[string]string{}
				}
				return x
			}
			if mg.Moves == nil {
				t.Fatal("a flat machine's migration has no Moves")
			}
			moves := c.moves
			if moves == nil {
				moves = map[int]string{}
			}
			// The migration is at the line of the first "  - from:".
			before, _, _ := strings.Cut(files["new.fsm.yaml"], "  - from:")
			pos := fmt.Sprintf("new.fsm.yaml:%d:5", strings.Count(before, "\n")+1)
			wantView := migView{From: fingerprintOf(t, filepath.Join(dir, "old.fsm.yaml")), Source: "old.fsm.yaml", Pos: pos,
				States: orEmpty(c.states), Events: orEmpty(c.events), Counters: orEmpty(c.counters), Fields: orEmpty(c.fields), Defaults: orEmpty(c.defaults),
				Transitions: c.transitions, Moves: moves}
			checkMigration(t, m, mg, dir, wantView)
		})
	}
}

// TestMigrationMoves checks what the unpaired transitions of the older spec did, by the
// counters here.
func TestMigrationMoves(t *testing.T) {
	older := `version: 1
machine: M
package: m
counters:
  c: {}
  d: {}
  pc: { per_state: true }
states:
  a: { initial: true }
  b: {}
  z: { terminal: true }
events:
  go: {}
  poke: {}
  stop: {}
  again: {}
transitions:
  - { from: [a, b], on: go, to: b, increment: [c, pc] }
  - { from: b, on: poke, internal: true, increment: d, reset: c }
  - { from: b, on: stop, to: z }
  - { from: a, on: again, to: a, increment: c }
`
	newer := `version: 1
machine: M
package: m
counters:
  count: {}
  pc: { per_state: true }
states:
  a: { initial: true }
  b: {}
  z: { terminal: true }
events:
  go: {}
  stop: {}
  again: {}
transitions:
  - { from: b, on: stop, to: z }
  - { from: [b, a], on: go, to: b, increment: [pc, count] }
  - { from: a, on: again, to: a, increment: count, reset: pc }
migrations:
  - from: old.fsm.yaml
    counters: { c: count }
`
	dir := writeSpecs(t, map[string]string{"old.fsm.yaml": older, "new.fsm.yaml": newer})
	m, ds := loadSpec(t, dir, filepath.Join(dir, "new.fsm.yaml"))
	if m == nil {
		t.Fatalf("findings:\n%s", strings.Join(ds, "\n"))
	}
	checkMigration(t, m, m.Migrations[0], dir, migView{
		From: fingerprintOf(t, filepath.Join(dir, "old.fsm.yaml")), Source: "old.fsm.yaml", Pos: "new.fsm.yaml:20:5",
		States: map[string]string{}, Events: map[string]string{"poke": ""}, Counters: map[string]string{"c": "count", "d": ""},
		Fields: map[string]string{}, Defaults: map[string]string{},
		Transitions: []int{
			1,  // go from a and b: the newer go leaves from both, increments alike, each in another order
			-1, // poke is gone
			0,  // stop
			-1, // again: the newer one resets pc as well
		},
		Moves: map[int]string{
			1: "inc=[] reset=[count] internal=true", // d is dropped
			3: "inc=[count] reset=[] internal=false",
		},
	})
}

// compositionSpecs are three versions of a machine: state a becomes b then c, field f1
// becomes f2 then is dropped, counter gone and events poke and ping are dropped, v2 adds
// d2 (with a migration default) and v3 adds d3 (likewise).
var compositionSpecs = map[string]string{
	"v1/m.fsm.yaml": `version: 1
machine: M
package: m
context:
  f1: { type: int }
  keep: { type: string }
counters:
  hits: {}
  gone: {}
states:
  a: { initial: true }
  m: {}
  z: { terminal: true }
events:
  go: {}
  stop: {}
  poke: {}
  ping: {}
transitions:
  - { from: a, on: go, to: m, increment: hits }
  - { from: m, on: stop, to: z }
  - { from: m, on: poke, internal: true, increment: gone }
  - { from: m, on: ping, to: a, increment: hits }
`,
	"v2/m.fsm.yaml": `version: 1
machine: M
package: m
context:
  f2: { type: int }
  keep: { type: string }
  d2: { type: string }
counters:
  hits: {}
  gone: {}
states:
  b: { initial: true }
  m: {}
  z: { terminal: true }
events:
  go: {}
  stop: {}
  poke: {}
transitions:
  - { from: b, on: go, to: m, increment: hits }
  - { from: m, on: stop, to: z }
  - { from: m, on: poke, internal: true, increment: gone }
migrations:
  - from: ../v1/m.fsm.yaml
    states: { a: b }
    context: { f1: f2 }
    defaults: { d2: two }
`,
	"v3/m.fsm.yaml": `version: 1
machine: M
package: m
context:
  keep: { type: string }
  d2: { type: string }
  d3: { type: int }
counters:
  hits: {}
states:
  c: { initial: true }
  m: {}
  z: { terminal: true }
events:
  go: {}
  stop: {}
transitions:
  - { from: m, on: stop, to: z }
  - { from: c, on: go, to: m, increment: hits }
migrations:
  - from: ../v2/m.fsm.yaml
    states: { b: c }
    context: { f2: null }
    defaults: { d3: 3 }
`,
}

// TestMigrationComposed checks that v3 migrates from v2 and, through v2's own migration,
// from v1.
func TestMigrationComposed(t *testing.T) {
	dir := writeSpecs(t, compositionSpecs)
	fp1 := fingerprintOf(t, filepath.Join(dir, "v1", "m.fsm.yaml"))
	fp2 := fingerprintOf(t, filepath.Join(dir, "v2", "m.fsm.yaml"))

	m2, ds := loadSpec(t, dir, filepath.Join(dir, "v2", "m.fsm.yaml"))
	if m2 == nil || len(m2.Migrations) != 1 {
		t.Fatalf("v2 findings:\n%s", strings.Join(ds, "\n"))
	}
	checkMigration(t, m2, m2.Migrations[0], dir, migView{
		From: fp1, Source: "../v1/m.fsm.yaml", Pos: "v2/m.fsm.yaml:24:5",
		States: map[string]string{"a": "b"}, Events: map[string]string{"ping": ""}, Counters: map[string]string{},
		Fields: map[string]string{"f1": "f2"}, Defaults: map[string]string{"d2": `"two"`},
		Transitions: []int{0, 1, 2, -1},
		Moves:       map[int]string{3: "inc=[hits] reset=[] internal=false"},
	})

	m3, ds := loadSpec(t, dir, filepath.Join(dir, "v3", "m.fsm.yaml"))
	if m3 == nil {
		t.Fatalf("v3 findings:\n%s", strings.Join(ds, "\n"))
	}
	if len(m3.Migrations) != 2 {
		t.Fatalf("v3 has %d migrations, want 2", len(m3.Migrations))
	}
	checkMigration(t, m3, m3.Migrations[0], dir, migView{
		From: fp2, Source: "../v2/m.fsm.yaml", Pos: "v3/m.fsm.yaml:21:5",
		States: map[string]string{"b": "c"}, Events: map[string]string{"poke": ""}, Counters: map[string]string{"gone": ""},
		Fields: map[string]string{"f2": ""}, Defaults: map[string]string{"d3": "3"},
		Transitions: []int{1, 0, -1},
		Moves:       map[int]string{2: "inc=[] reset=[] internal=true"}, // gone is dropped
	})
	checkMigration(t, m3, m3.Migrations[1], dir, migView{
		From: fp1, Source: "../v2/m.fsm.yaml < ../v1/m.fsm.yaml", Pos: "v3/m.fsm.yaml:21:5",
		// The v1 names: a -> b -> c, f1 -> f2 -> dropped, ping dropped in v2, poke and gone
		// in v3. The entries b and f2 are v2's names, which v1 never had: compose carries
		// the v2 -> v3 maps over as they are (no v1 instance holds those names).
		States:   map[string]string{"a": "c", "b": "c"},
		Events:   map[string]string{"ping": "", "poke": ""},
		Counters: map[string]string{"gone": ""},
		Fields:   map[string]string{"f1": "", "f2": ""},
		Defaults: map[string]string{"d2": `"two"`, "d3": "3"},
		// v1 -> v2 [0 1 2 -1], then v2 -> v3 [1 0 -1].
		Transitions: []int{1, 0, -1, -1},
		Moves: map[int]string{
			2: "inc=[] reset=[] internal=true",      // poke: as v2 -> v3 replays v2's poke
			3: "inc=[hits] reset=[] internal=false", // ping: as v1 -> v2 recorded it, hits by v3's counter
		},
	})
}

// TestMigrationComposedDuplicate: a migration from v1 beside the one v2's carries on.
func TestMigrationComposedDuplicate(t *testing.T) {
	files := maps.Clone(compositionSpecs)
	files["v3/m.fsm.yaml"] = specBody(files["v3/m.fsm.yaml"]) + `migrations:
  - from: ../v2/m.fsm.yaml
    states: { b: c }
  - from: ../v1/m.fsm.yaml
    states: { a: c }
`
	dir := writeSpecs(t, files)
	_, got := loadSpec(t, dir, filepath.Join(dir, "v3", "m.fsm.yaml"))
	want := []string{`v3/m.fsm.yaml:23:5: error: a second migration from ../v1/m.fsm.yaml (the first is at v3/m.fsm.yaml:21:5): keep one`}
	if !slices.Equal(got, want) {
		t.Fatalf("findings:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestMigrationCycle: v2 migrates from v1, which says it migrates from v2.
func TestMigrationCycle(t *testing.T) {
	dir := writeSpecs(t, map[string]string{
		"v1/m.fsm.yaml": oldSpec + "migrations:\n  - from: ../v2/m.fsm.yaml\n",
		"v2/m.fsm.yaml": strings.Replace(newSpec, "from: old.fsm.yaml", "from: ../v1/m.fsm.yaml", 1),
	})
	for _, tc := range []struct {
		spec string
		want string
	}{
		{"v2/m.fsm.yaml", `v2/m.fsm.yaml:23:11: error: the older spec ../v1/m.fsm.yaml has errors: v1/m.fsm.yaml:22:11: error: ../v2/m.fsm.yaml migrates from this spec, which migrates from it: a migration names an older version`},
		{"v1/m.fsm.yaml", `v1/m.fsm.yaml:22:11: error: the older spec ../v2/m.fsm.yaml has errors: v2/m.fsm.yaml:23:11: error: ../v1/m.fsm.yaml migrates from this spec, which migrates from it: a migration names an older version`},
	} {
		_, got := loadSpec(t, dir, filepath.Join(dir, filepath.FromSlash(tc.spec)))
		if !slices.Equal(got, []string{tc.want}) {
			t.Errorf("%s findings:\n%s\nwant:\n%s", tc.spec, strings.Join(got, "\n"), tc.want)
		}
	}
}

// TestMigrationDeterministic: lowering a spec twice gives the same migrations.
func TestMigrationDeterministic(t *testing.T) {
	dir := writeSpecs(t, compositionSpecs)
	for _, path := range []string{
		filepath.Join(dir, "v3", "m.fsm.yaml"),
		filepath.Join("..", "..", "examples", "evolve", "v2", "ticket.fsm.yaml"),
	} {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		first, ds := lower.Load(path, data)
		if first == nil {
			t.Fatalf("%s: %v", path, ds)
		}
		for range 10 {
			again, _ := lower.Load(path, data)
			if again == nil || !reflect.DeepEqual(first.Migrations, again.Migrations) {
				t.Fatalf("%s: the migrations differ from one lowering to the next", path)
			}
		}
	}
}

// TestMigrationChart: in a statechart the states of the machine are its configurations,
// named by the shortest unambiguous paths of their atomic states; a migration maps those
// names. Its unpaired transitions get no moves (Moves is nil).
func TestMigrationChart(t *testing.T) {
	files := map[string]string{
		"v1.fsm.yaml": `version: 1
machine: M
package: m
events: { go: {}, back: {} }
states:
  a:
    initial: true
    states:
      x: { initial: true }
      y: {}
  b: {}
transitions:
  - { from: x, on: go, to: y }
  - { from: a, on: back, to: b }
  - { from: b, on: go, to: a }
`,
		"flat.fsm.yaml": `version: 1
machine: M
package: m
events: { go: {}, back: {} }
states:
  x: { initial: true }
  w: {}
  k: {}
transitions:
  - { from: x, on: go, to: w }
  - { from: w, on: back, to: k }
  - { from: k, on: go, to: x }
  - { from: k, on: back, to: w }
`,
	}
	v2 := `version: 1
machine: M
package: m
events: { go: {}, back: {} }
states:
  a:
    initial: true
    states:
      x: { initial: true }
      w: {}
  c: {}
transitions:
  - { from: x, on: go, to: w }
  - { from: a, on: back, to: c }
  - { from: c, on: go, to: a }
migrations:
`
	for _, tc := range []struct {
		name        string
		migration   string
		want        []string
		states      map[string]string
		transitions []int
	}{
		{name: "configurations renamed", migration: "  - from: v1.fsm.yaml\n    states: { y: w, b: c }\n",
			// v1's flat transitions: x -go-> y, x -back-> b, y -back-> b, b -go-> x, and v2's alike.
			states: map[string]string{"y": "w", "b": "c"}, transitions: []int{0, 1, 2, 3}},
		{name: "a state by its path", migration: "  - from: v1.fsm.yaml\n    states: { a.y: w, b: c }\n",
			want: []string{`new.fsm.yaml:18:15: error: v1.fsm.yaml has no state "a.y" (did you mean "y"?)`}},
		{name: "a compound state", migration: "  - from: v1.fsm.yaml\n    states: { a: a, y: w, b: c }\n",
			want: []string{`new.fsm.yaml:18:15: error: v1.fsm.yaml has no state "a" (did you mean "x"?)`}},
		{name: "a configuration without a place", migration: "  - from: v1.fsm.yaml\n    states: { b: c }\n",
			want: []string{`new.fsm.yaml:17:11: error: state "y" of v1.fsm.yaml (v1.fsm.yaml:10:7) has no place in this spec: instances stored in it would be stranded; map it to a state under states`}},
		{name: "from a flat machine", migration: "  - from: flat.fsm.yaml\n    states: { k: c }\n",
			// v2's flat transitions: x -go-> w, x -back-> c, w -back-> c, c -go-> x. The flat
			// k -back-> w has no counterpart, and no move either.
			states: map[string]string{"k": "c"}, transitions: []int{0, 2, 3, -1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fs := maps.Clone(files)
			fs["new.fsm.yaml"] = v2 + tc.migration
			dir := writeSpecs(t, fs)
			m, got := loadSpec(t, dir, filepath.Join(dir, "new.fsm.yaml"))
			if !slices.Equal(got, tc.want) {
				t.Fatalf("findings:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
			if len(tc.want) > 0 {
				return
			}
			if m.Chart == nil || len(m.Migrations) != 1 {
				t.Fatalf("chart %v, %d migrations", m.Chart != nil, len(m.Migrations))
			}
			mg := m.Migrations[0]
			if mg.Moves != nil {
				t.Errorf("Moves %v, want nil in a statechart", mg.Moves)
			}
			if !maps.Equal(mg.States, tc.states) || !slices.Equal(mg.Transitions, tc.transitions) {
				t.Errorf("states %v transitions %v, want %v %v", mg.States, mg.Transitions, tc.states, tc.transitions)
			}
		})
	}
}

// TestMigrationParallel: a parallel state's configurations are named by their leaves,
// joined by commas, and a migration maps them so.
func TestMigrationParallel(t *testing.T) {
	v1 := `version: 1
machine: M
package: m
events: { go: {} }
states:
  p:
    initial: true
    parallel: true
    states:
      r1:
        states:
          x: { initial: true }
      r2:
        states:
          y: { initial: true }
          y2: {}
transitions:
  - { from: y, on: go, to: y2 }
`
	v2 := strings.ReplaceAll(v1, "y2", "y3") + "migrations:\n  - from: v1.fsm.yaml\n    states: { \"x,y2\": \"x,y3\" }\n"
	dir := writeSpecs(t, map[string]string{"v1.fsm.yaml": v1, "new.fsm.yaml": v2})
	m, got := loadSpec(t, dir, filepath.Join(dir, "new.fsm.yaml"))
	if len(got) != 0 {
		t.Fatalf("findings:\n%s", strings.Join(got, "\n"))
	}
	if mg := m.Migrations[0]; !maps.Equal(mg.States, map[string]string{"x,y2": "x,y3"}) || !slices.Equal(mg.Transitions, []int{0}) {
		t.Errorf("states %v transitions %v", mg.States, mg.Transitions)
	}
}
