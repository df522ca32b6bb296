package lsp

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fsmgen/fsmgen/internal/lower"
	"github.com/fsmgen/fsmgen/internal/testtool"
)

// loaderPos converts a protocol position back to the loader's line and character column.
func loaderPos(t *text, p Position) (line, col int) {
	l := t.line(p.Line)
	b := utf16ToByte(l, p.Character)
	return p.Line + 1, len([]rune(l[:b])) + 1
}

// TestSeedDiagnostics: on every seed and a statechart, a misspelt name, an unknown key and
// a broken YAML line are reported as the checker reports them: same messages, the same
// positions read back from the protocol's.
func TestSeedDiagnostics(t *testing.T) {
	c := newClient(t, Options{})
	for _, p := range seeds(t) {
		path, text := copySpec(t, p)
		uri := c.open(path, text)
		if ds := c.waitDiags(uri, 1); len(ds) != 0 {
			t.Errorf("%s: findings on a clean seed: %v", p, ds)
		}
		ix := buildIndex(path, newText(text))
		var edits []string
		// A reference misspelt, a key misspelt, a line cut in half.
		for _, o := range ix.occs {
			if o.decl == nil && o.kind == kState && o.quote == 0 {
				edits = append(edits, text[:o.from]+o.name+"x"+text[o.to:])
				break
			}
		}
		if i := strings.Index(text, "\nstates:"); i >= 0 {
			edits = append(edits, text[:i+1]+"stats:"+text[i+8:])
		}
		edits = append(edits, text[:len(text)/2])
		for v, e := range edits {
			version := v + 2
			c.change(uri, version, e)
			got := c.waitDiags(uri, version)
			want := lower.Check(c.srv.checkPath(path), []byte(e))
			if len(want) == 0 {
				t.Fatalf("%s: edit %d has no findings", p, v)
			}
			if len(got) != len(want) {
				t.Fatalf("%s: edit %d: %d diagnostics, the checker has %d:\n%v\n%v", p, v, len(got), len(want), got, want)
			}
			et := newText(e)
			for i, w := range want {
				line, col := loaderPos(et, got[i].Range.Start)
				if w.Pos.File != c.srv.checkPath(path) {
					// A finding of another file (the lock) is shown at the start, with
					// its place.
					w.Message, w.Pos.Line, w.Pos.Col = w.String(), 1, 1
				}
				if got[i].Message != w.Message || line != w.Pos.Line || col != w.Pos.Col {
					t.Errorf("%s: edit %d: %d:%d %q, the checker: %s", p, v, line, col, got[i].Message, w)
				}
			}
		}
	}
}

// TestEveryName: on every seed and every spec of the checker's, generator's and diagrams'
// corpora that checks clean (statecharts among them), every name goes to its definition,
// is among its own references, and hovers.
func TestEveryName(t *testing.T) {
	c := newClient(t, Options{})
	specs := seeds(t)
	r := testtool.Root(t)
	for _, g := range []string{"internal/lower/testdata/build/*.fsm.yaml", "internal/gogen/testdata/*.fsm.yaml", "internal/mermaid/testdata/*.fsm.yaml"} {
		m, _ := filepath.Glob(filepath.Join(r, filepath.FromSlash(g)))
		for _, p := range m {
			if b, err := os.ReadFile(p); err == nil && !lower.Check(p, b).HasErrors() && !slices.Contains(specs, p) {
				specs = append(specs, p)
			}
		}
	}
	if len(specs) < 30 {
		t.Fatalf("only %d specs", len(specs))
	}
	for _, p := range specs {
		path, text := copySpec(t, p)
		uri := c.open(path, text)
		c.waitDiags(uri, 1)
		tx := newText(text)
		ix := buildIndex(path, tx)
		if len(ix.occs) == 0 {
			t.Fatalf("%s: only %d names found", p, len(ix.occs))
		}
		for _, o := range ix.occs {
			if o.kind == 0 || o.kind == kSaved || o.older != nil {
				continue
			}
			at := pos(uri, tx.position(o.from+1))
			where := p + ": " + o.kind.String() + " " + o.name + " at " + tx.position(o.from).String()
			defs := decodeAs[[]Location](t, c.request("textDocument/definition", at))
			if len(defs) == 0 {
				t.Errorf("%s: no definition", where)
				continue
			}
			refs := decodeAs[[]Location](t, c.request("textDocument/references", referenceParams{textDocumentPositionParams: at,
				Context: struct {
					IncludeDeclaration bool `json:"includeDeclaration"`
				}{true}}))
			self := Location{URI: uri, Range: tx.rangeOf(o.from, o.to)}
			if !slices.Contains(refs, self) || !slices.Contains(refs, defs[0]) {
				t.Errorf("%s: references %v miss it or its definition %v", where, refs, defs[0])
			}
			h := decodeAs[*hover](t, c.request("textDocument/hover", at))
			if h == nil || !strings.Contains(h.Contents.Value, o.kind.String()) || strings.HasPrefix(h.Contents.Value, "unknown") {
				t.Errorf("%s: hover %+v", where, h)
			}
		}
	}
}

func (p Position) String() string {
	return strings.Join([]string{itoa(p.Line + 1), itoa(p.Character + 1)}, ":")
}

func itoa(i int) string { b, _ := json.Marshal(i); return string(b) }

func completionLabels(t *testing.T, c *client, uri string, p Position) []string {
	t.Helper()
	l := decodeAs[completionList](t, c.request("textDocument/completion", pos(uri, p)))
	var out []string
	for _, it := range l.Items {
		out = append(out, it.Label)
	}
	return out
}

const miniSpec = `version: 1
machine: Door
package: door
roles: { guest: {}, owner: { doc: Owns the door. } }
context:
  code: { type: string }
counters:
  tries: { limit: 3, then: locked }
guards:
  code_ok: { doc: The code matches. }
  tried: { counter: tries, at_least: 1 }
actions:
  beep: {}
states:
  closed: { initial: true, entry: [beep] }
  open: { doc: Wide open. }
  locked: { terminal: true }
events:
  push: {}
  unlock: { doc: Try the code. }
transitions:
  - { from: closed, on: push, to: open }
  - { from: open, on: push, to: closed, by: [guest] }
  - from: closed
    on: unlock
    if: code_ok
    increment: tries
    to: open
`

// TestCompletion: the names valid at the cursor, and the schema's keys, in documents
// that parse and in half-typed ones.
func TestCompletion(t *testing.T) {
	c := newClient(t, Options{})
	dir := t.TempDir()
	cases := []struct {
		name      string
		edit      func(string) string // of miniSpec, with | at the cursor
		want, not []string
	}{
		{"from", func(s string) string { return strings.Replace(s, "from: open, on: push", "from: |", 1) }, []string{"closed", "open"}, []string{"locked", "push"}},
		{"to", func(s string) string { return strings.Replace(s, "to: closed, by", "to: cl|, by", 1) }, []string{"closed", "open", "locked"}, []string{"push"}},
		{"on flow", func(s string) string { return s + "  - { from: open, on: |" }, []string{"push", "unlock"}, []string{"open", "code_ok"}},
		{"if block", func(s string) string { return strings.Replace(s, "if: code_ok", "if: |", 1) }, []string{"code_ok", "tried"}, []string{"beep"}},
		{"unless list", func(s string) string { return s + "  - { from: open, unless: [code_ok, |" }, []string{"code_ok", "tried"}, nil},
		{"do", func(s string) string { return s + "  - { from: open, do: [|]" }, []string{"beep"}, nil},
		{"entry", func(s string) string { return strings.Replace(s, "entry: [beep]", "entry: [|]", 1) }, []string{"beep"}, []string{"code_ok"}},
		{"by", func(s string) string { return strings.Replace(s, "by: [guest]", "by: [|]", 1) }, []string{"guest", "owner"}, nil},
		{"increment", func(s string) string { return strings.Replace(s, "increment: tries", "increment: |", 1) }, []string{"tries"}, nil},
		{"guard counter", func(s string) string { return strings.Replace(s, "counter: tries", "counter: |", 1) }, []string{"tries"}, nil},
		{"counter then", func(s string) string { return strings.Replace(s, "then: locked", "then: |", 1) }, []string{"locked", "open"}, nil},
		{"requires", func(s string) string { return strings.Replace(s, "open: { doc", "open: { requires: [|], doc", 1) }, []string{"code"}, nil},
		{"state keys", func(s string) string { return strings.Replace(s, "  open: { doc: Wide open. }", "  open:\n    |", 1) }, []string{"initial", "terminal", "entry", "doc", "timeout"}, []string{"from", "closed"}},
		{"state keys flow", func(s string) string { return strings.Replace(s, "open: { doc: Wide open. }", "open: { |", 1) }, []string{"initial", "terminal"}, nil},
		{"transition keys", func(s string) string {
			return strings.Replace(s, "    increment: tries", "    |\n    increment: tries", 1)
		}, []string{"unless", "do", "by", "reset"}, []string{"initial", "from", "on", "if", "to", "increment"}},
		{"flow siblings", func(s string) string {
			return strings.Replace(s, "closed: { initial: true, entry: [beep] }", "closed: { initial: true, | }", 1)
		}, []string{"terminal", "entry"}, []string{"initial"}},
		{"block siblings", func(s string) string {
			return strings.Replace(s, "  open: { doc: Wide open. }", "  open:\n    doc: Wide open.\n    |\n    exit: [beep]", 1)
		}, []string{"terminal", "entry"}, []string{"doc", "exit"}},
		{"top keys", func(s string) string { return strings.Replace(s, "roles:", "|\nroles:", 1) }, []string{"checkpoints", "policies", "migrations"}, []string{"states", "events", "transitions", "version"}},
		{"bool value", func(s string) string { return strings.Replace(s, "initial: true", "initial: |", 1) }, []string{"true", "false"}, nil},
		{"key over a key", func(s string) string { return strings.Replace(s, "initial: true", "ini|tial: true", 1) }, []string{"initial", "terminal"}, nil},
	}
	for i, tc := range cases {
		src, p := marked(t, tc.edit(miniSpec))
		uri := c.open(filepath.Join(dir, itoa(i)+".fsm.yaml"), src)
		got := completionLabels(t, c, uri, p)
		if tc.name == "key over a key" {
			l := decodeAs[completionList](t, c.request("textDocument/completion", pos(uri, p)))
			for _, it := range l.Items {
				if it.Label == "initial" && (it.TextEdit == nil || it.TextEdit.NewText != "initial" || applyEdits(newText(src), []TextEdit{*it.TextEdit}) != miniSpec) {
					t.Errorf("completing a key over a key: %+v", it.TextEdit)
				}
			}
		}
		for _, w := range tc.want {
			if !slices.Contains(got, w) {
				t.Errorf("%s: %q not proposed: %v", tc.name, w, got)
			}
		}
		for _, n := range tc.not {
			if slices.Contains(got, n) {
				t.Errorf("%s: %q proposed: %v", tc.name, n, got)
			}
		}
	}
}

// TestCompletionAfterBreak: a name typed on a line that breaks the YAML still completes,
// from the names of the last text that parsed.
func TestCompletionAfterBreak(t *testing.T) {
	c := newClient(t, Options{})
	path := filepath.Join(t.TempDir(), "door.fsm.yaml")
	uri := c.open(path, miniSpec)
	c.waitDiags(uri, 1)
	c.request("textDocument/documentSymbol", documentSymbolParams{TextDocument: textDocumentIdentifier{URI: uri}})
	src, p := marked(t, miniSpec+"  - { from: [open, |")
	c.change(uri, 2, src)
	got := completionLabels(t, c, uri, p)
	if !slices.Contains(got, "closed") || slices.Contains(got, "push") {
		t.Errorf("completion in a broken document: %v", got)
	}
	if ds := c.waitDiags(uri, 2); len(ds) == 0 || !strings.HasPrefix(ds[0].Message, "yaml:") {
		t.Errorf("diagnostics of the broken document: %v", ds)
	}
}

// TestUTF16: positions count UTF-16 code units: a name after characters outside the BMP
// and accents is found, underlined and renamed where the client sees it.
func TestUTF16(t *testing.T) {
	c := newClient(t, Options{})
	spec := "version: 1\nmachine: Café\npackage: cafe\nstates:\n  \"ouvert_😀\": { initial: true, doc: \"déjà 😀 vu\" }\n  fermé: { terminal: true }\nevents:\n  é: {}\ntransitions:\n  - { from: \"ouvert_😀\", on: é, to: fermée }\n"
	path := filepath.Join(t.TempDir(), "cafe.fsm.yaml")
	uri := c.open(path, spec)
	ds := c.waitDiags(uri, 1)
	// fermée is at line 10, after `  - { from: "ouvert_😀", on: é, to: `: 😀 is two code units.
	prefix := `  - { from: "ouvert_😀", on: é, to: `
	wantChar := utf16Len(prefix)
	if len([]rune(prefix)) == wantChar {
		t.Fatal("the prefix has no character outside the BMP")
	}
	found := false
	for _, d := range ds {
		if strings.Contains(d.Message, `unknown state "fermée"`) {
			found = true
			if d.Range.Start != (Position{9, wantChar}) || d.Range.End != (Position{9, wantChar + 6}) {
				t.Errorf("range %+v, want line 9 characters %d-%d", d.Range, wantChar, wantChar+6)
			}
		}
	}
	if !found {
		t.Fatalf("no finding on fermée: %v", ds)
	}
	// The definition of "ouvert_😀" from its reference: the quoted key, inside the quotes.
	at := Position{9, utf16Len(`  - { from: "ou`)}
	defs := decodeAs[[]Location](t, c.request("textDocument/definition", pos(uri, at)))
	want := Range{Start: Position{4, 3}, End: Position{4, 3 + utf16Len("ouvert_😀")}}
	if len(defs) != 1 || defs[0].Range != want {
		t.Errorf("definition %+v, want %+v", defs, want)
	}
	h := decodeAs[*hover](t, c.request("textDocument/hover", pos(uri, at)))
	if h == nil || !strings.Contains(h.Contents.Value, "déjà 😀 vu") {
		t.Errorf("hover %+v", h)
	}
	// Rename é: the edits cover it where the client counts it.
	raw := c.request("textDocument/rename", renameParams{textDocumentPositionParams: pos(uri, Position{9, utf16Len(`  - { from: "ouvert_😀", on: `)}), NewName: "ü"})
	we := decodeAs[WorkspaceEdit](t, raw)
	if got := applyEdits(newText(spec), we.Changes[uri]); got != strings.NewReplacer("  é: {}", "  ü: {}", "on: é,", "on: ü,").Replace(spec) {
		t.Errorf("renamed:\n%s", got)
	}
	// The fix of fermée goes to fermé.
	acts := decodeAs[[]CodeAction](t, c.request("textDocument/codeAction", codeActionParams{TextDocument: textDocumentIdentifier{URI: uri},
		Range: ds[0].Range}))
	fixed := false
	for _, a := range acts {
		if a.Edit != nil && strings.Contains(applyEdits(newText(spec), a.Edit.Changes[uri]), "to: fermé }") {
			fixed = true
		}
	}
	if !fixed {
		t.Errorf("no did-you-mean fix to fermé: %+v", acts)
	}
}

// TestRename: a name and every reference to it, across the spec; refused when the new
// name is taken (the checker's error says why) or no name.
func TestRename(t *testing.T) {
	c := newClient(t, Options{})
	path := filepath.Join(t.TempDir(), "door.fsm.yaml")
	uri := c.open(path, miniSpec)
	c.waitDiags(uri, 1)
	tx := newText(miniSpec)
	at := func(needle string, skip int) Position {
		i := strings.Index(miniSpec, needle) + skip
		return tx.position(i)
	}
	cases := []struct {
		at     Position
		name   string
		want   string // the renamed text, or the refusal's words
		refuse bool
	}{
		{at("from: closed, on: push", 7), "shut", strings.NewReplacer("closed:", "shut:", "from: closed", "from: shut", "to: closed", "to: shut").Replace(miniSpec), false},
		{at("code_ok: {", 0), "code_right", strings.ReplaceAll(miniSpec, "code_ok", "code_right"), false},
		{at("increment: tries", 12), "attempts", strings.ReplaceAll(miniSpec, "tries", "attempts"), false},
		{at("by: [guest]", 6), "visitor", strings.ReplaceAll(miniSpec, "guest", "visitor"), false},
		{at("entry: [beep]", 9), "ring bell", strings.ReplaceAll(miniSpec, "beep", "ring bell"), false},
		{at("code: { type", 1), "pin", strings.ReplaceAll(miniSpec, "code:", "pin:"), false},
		{at("on: unlock", 5), "push", `duplicate event "push"`, true},
		{at("from: closed, on: push", 7), "open", `duplicate state "open"`, true},
		{at("to: open }", 5), "with,comma", "comma", true},
		{at("machine: Door", 10), "x", "no name to rename", true},
	}
	for _, tc := range cases {
		res, err := c.call("textDocument/rename", renameParams{textDocumentPositionParams: pos(uri, tc.at), NewName: tc.name})
		if tc.refuse {
			if err == nil || !strings.Contains(err.Message, tc.want) {
				t.Errorf("rename to %q at %v: %s, want a refusal saying %q", tc.name, tc.at, res, tc.want)
			} else {
				t.Logf("refused: %s", err.Message)
			}
			continue
		}
		if err != nil {
			t.Errorf("rename to %q: %s", tc.name, err.Message)
			continue
		}
		we := decodeAs[WorkspaceEdit](t, res)
		if got := applyEdits(tx, we.Changes[uri]); got != tc.want {
			t.Errorf("rename to %q:\n%s\nwant\n%s", tc.name, got, tc.want)
		} else if ds := lower.Check(c.srv.checkPath(path), []byte(got)); ds.HasErrors() {
			t.Errorf("rename to %q: the renamed spec has errors: %v", tc.name, ds)
		}
	}
}

// TestRenameStatechart: a nested state renamed where it is written by its path too.
func TestRenameStatechart(t *testing.T) {
	c := newClient(t, Options{})
	spec := `version: 1
machine: M
package: m
events: { go: {}, back: {} }
states:
  p:
    initial: true
    states:
      bold:
        initial: true
        states:
          "off": { initial: true }
          "on": {}
      h: { history: deep, default: bold.on }
  q: {}
transitions:
  - { from: p.bold.off, on: go, to: p.bold.on }
  - { from: "on", on: back, to: q }
  - { from: q, on: go, to: p.bold }
`
	path := filepath.Join(t.TempDir(), "m.fsm.yaml")
	uri := c.open(path, spec)
	if ds := c.waitDiags(uri, 1); len(ds) > 0 {
		t.Fatalf("findings: %v", ds)
	}
	tx := newText(spec)
	res := c.request("textDocument/rename", renameParams{textDocumentPositionParams: pos(uri, tx.position(strings.Index(spec, "bold:"))), NewName: "heavy"})
	got := applyEdits(tx, decodeAs[WorkspaceEdit](t, res).Changes[uri])
	if want := strings.ReplaceAll(spec, "bold", "heavy"); got != want {
		t.Errorf("renamed:\n%s\nwant\n%s", got, want)
	}
	res = c.request("textDocument/rename", renameParams{textDocumentPositionParams: pos(uri, tx.position(strings.Index(spec, `from: "on"`)+7)), NewName: "lit"})
	got = applyEdits(tx, decodeAs[WorkspaceEdit](t, res).Changes[uri])
	if want := strings.NewReplacer(`"on": {}`, `"lit": {}`, "p.bold.on", "p.bold.lit", "default: bold.on", "default: bold.lit", `from: "on"`, `from: "lit"`).Replace(spec); got != want {
		t.Errorf("renamed:\n%s\nwant\n%s", got, want)
	}
	// The outline nests the states.
	syms := decodeAs[[]DocumentSymbol](t, c.request("textDocument/documentSymbol", documentSymbolParams{TextDocument: textDocumentIdentifier{URI: uri}}))
	var states *DocumentSymbol
	for i := range syms {
		if syms[i].Name == "states" {
			states = &syms[i]
		}
	}
	if states == nil || len(states.Children) != 2 || len(states.Children[0].Children) != 2 || len(states.Children[0].Children[0].Children) != 2 {
		t.Errorf("outline of states: %+v", states)
	}
}

// TestHover: a state's transitions in and out, a guard's uses, a key's description.
func TestHover(t *testing.T) {
	c := newClient(t, Options{})
	path := filepath.Join(t.TempDir(), "door.fsm.yaml")
	uri := c.open(path, miniSpec)
	c.waitDiags(uri, 1)
	tx := newText(miniSpec)
	hv := func(needle string, skip int) string {
		h := decodeAs[*hover](t, c.request("textDocument/hover", pos(uri, tx.position(strings.Index(miniSpec, needle)+skip))))
		if h == nil {
			t.Fatalf("no hover at %q", needle)
		}
		return h.Contents.Value
	}
	for _, tc := range []struct {
		needle string
		skip   int
		want   []string
	}{
		{"  open: {", 3, []string{"**state** `open`", "Wide open.", "Transitions into it (2)", "Transitions out of it (1)", "`closed` → `open` on `unlock` if `code_ok` (line 24)"}},
		{"if: code_ok", 5, []string{"**guard** `code_ok`", "The code matches.", "Used by the transitions (1)"}},
		{"on: unlock", 5, []string{"**event** `unlock`", "Try the code.", "Transitions on it (1)"}},
		{"owner:", 1, []string{"**role** `owner`", "Owns the door.", "Not used"}},
		{"initial: true", 2, []string{"**initial**", "The state a new machine starts in"}},
		{"transitions:", 2, []string{"**transitions**"}},
	} {
		got := hv(tc.needle, tc.skip)
		for _, w := range tc.want {
			if !strings.Contains(got, w) {
				t.Errorf("hover at %q: %q missing from\n%s", tc.needle, w, got)
			}
		}
	}
}

// TestCodeActions: the did-you-mean fix, declaring a missing event and guard, each fixed
// spec checking clean.
func TestCodeActions(t *testing.T) {
	c := newClient(t, Options{})
	dir := t.TempDir()
	for i, tc := range []struct {
		edit, title string
	}{
		{strings.Replace(miniSpec, "from: open, on: push", "from: opne, on: push", 1), `Change "opne" to "open"`},
		{strings.Replace(miniSpec, "initial: true", "intial: true", 1), `Change "intial" to "initial"`},
		{strings.Replace(miniSpec, "on: unlock", "on: knock", 1), `Declare event "knock" under events`},
		{strings.Replace(miniSpec, "if: code_ok", "if: bell_rung", 1), `Declare guard "bell_rung" under guards`},
		{strings.Replace(miniSpec, "to: closed, by: [guest] }", "to: closed, by: [guest], do: [wave] }", 1), `Declare action "wave" under actions`},
		{strings.Replace(strings.Replace(miniSpec, "events:\n  push: {}\n  unlock: { doc: Try the code. }\n", "events: { push: {} }\n", 1), "on: unlock", "on: knock", 1), `Declare event "knock" under events`},
		{strings.Replace(strings.Replace(miniSpec, "guards:\n  code_ok: { doc: The code matches. }\n  tried: { counter: tries, at_least: 1 }\n", "", 1), "if: code_ok", "if: code_good", 1), `Declare guard "code_good" under guards`},
	} {
		path := filepath.Join(dir, itoa(i)+".fsm.yaml")
		uri := c.open(path, tc.edit)
		ds := c.waitDiags(uri, 1)
		if len(ds) == 0 {
			t.Fatalf("%s: no findings", tc.title)
		}
		var acts []CodeAction
		for _, d := range ds {
			acts = append(acts, decodeAs[[]CodeAction](t, c.request("textDocument/codeAction", codeActionParams{
				TextDocument: textDocumentIdentifier{URI: uri}, Range: d.Range,
				Context: diagContext(d)}))...)
		}
		var act *CodeAction
		for i := range acts {
			if acts[i].Title == tc.title {
				act = &acts[i]
			}
		}
		if act == nil {
			t.Errorf("no action %q among %+v (findings %v)", tc.title, acts, ds)
			continue
		}
		fixed := applyEdits(newText(tc.edit), act.Edit.Changes[uri])
		if ds := lower.Check(c.srv.checkPath(path), []byte(fixed)); ds.HasErrors() {
			t.Errorf("%s: the fixed spec has errors: %v\n%s", tc.title, ds, fixed)
		}
	}
}

// TestMigrations: on the spec-evolution example (version 2 migrates from version 1's
// file), an older name of a migration goes to the older spec's declaration, the references
// of a name reach its names in the older spec, a migration's from goes to the older spec,
// and the older names complete.
func TestMigrations(t *testing.T) {
	r := testtool.Root(t)
	dir := t.TempDir()
	for _, v := range []string{"v1", "v2"} {
		os.MkdirAll(filepath.Join(dir, v), 0o755)
		for _, f := range []string{"ticket.fsm.yaml", "ticket.fsm.lock"} {
			b, err := os.ReadFile(filepath.Join(r, "examples", "evolve", v, f))
			if err != nil {
				t.Fatal(err)
			}
			os.WriteFile(filepath.Join(dir, v, f), b, 0o644)
		}
	}
	v1 := filepath.Join(dir, "v1", "ticket.fsm.yaml")
	v2 := filepath.Join(dir, "v2", "ticket.fsm.yaml")
	b1, _ := os.ReadFile(v1)
	b2, _ := os.ReadFile(v2)
	old, spec := string(b1), string(b2)
	c := newClient(t, Options{})
	uri := c.open(v2, spec)
	if ds := c.waitDiags(uri, 1); len(ds) > 0 {
		t.Fatalf("findings: %v", ds)
	}
	tx, otx := newText(spec), newText(old)
	at := func(needle string, skip int) textDocumentPositionParams {
		i := strings.Index(spec, needle)
		if i < 0 {
			t.Fatalf("no %q", needle)
		}
		return pos(uri, tx.position(i+skip))
	}
	in := func(s *text, needle string, skip, n int) Range {
		i := strings.Index(s.s, needle) + skip
		return s.rangeOf(i, i+n)
	}
	v1URI := uriOf(v1)
	defs := decodeAs[[]Location](t, c.request("textDocument/definition", at("triage: open", 1)))
	if want := (Location{URI: v1URI, Range: in(otx, "  triage: {", 2, 6)}); len(defs) != 1 || defs[0] != want {
		t.Errorf("definition of the older triage: %+v, want %+v", defs, want)
	}
	defs = decodeAs[[]Location](t, c.request("textDocument/definition", at("from: ../v1", 8)))
	if len(defs) != 1 || defs[0].URI != v1URI {
		t.Errorf("definition of the migration's from: %+v", defs)
	}
	refs := decodeAs[[]Location](t, c.request("textDocument/references", referenceParams{textDocumentPositionParams: at("  open: {", 2),
		Context: struct {
			IncludeDeclaration bool `json:"includeDeclaration"`
		}{true}}))
	for _, want := range []Location{
		{URI: uri, Range: in(tx, "  open: {", 2, 4)},
		{URI: uri, Range: in(tx, "triage: open", 8, 4)},
		{URI: uri, Range: in(tx, "triage: open", 0, 6)},
		{URI: v1URI, Range: in(otx, "  open: {", 2, 4)},
		{URI: v1URI, Range: in(otx, "  triage: {", 2, 6)},
	} {
		if !slices.Contains(refs, want) {
			t.Errorf("references of open: %v misses %v", refs, want)
		}
	}
	refs = decodeAs[[]Location](t, c.request("textDocument/references", referenceParams{textDocumentPositionParams: at("accepted: {", 1),
		Context: struct {
			IncludeDeclaration bool `json:"includeDeclaration"`
		}{true}}))
	if !slices.Contains(refs, Location{URI: v1URI, Range: in(otx, "  approved: {", 2, 8)}) {
		t.Errorf("references of accepted miss v1's approved: %v", refs)
	}
	for _, r := range refs {
		if r.URI == v1URI && r.Range == in(otx, "  accepted", 2, 8) {
			t.Errorf("references of accepted: %v", r)
		}
	}
	h := decodeAs[*hover](t, c.request("textDocument/hover", at("approve: accept", 1)))
	if h == nil || !strings.Contains(h.Contents.Value, "**event** `approve` of ../v1/ticket.fsm.yaml") || !strings.Contains(h.Contents.Value, "Triage approves") {
		t.Errorf("hover of the older approve: %+v", h)
	}
	src, p := marked(t, strings.Replace(spec, "states: { triage: open", "states: { tri|: open", 1))
	c.change(uri, 2, src)
	got := completionLabels(t, c, uri, p)
	if !slices.Contains(got, "triage") || !slices.Contains(got, "approved") || slices.Contains(got, "blocked") {
		t.Errorf("completion of older states: %v", got)
	}
	// The older spec open too: its names' references stay in it.
	ouri := c.open(v1, old)
	c.waitDiags(ouri, 1)
	refs = decodeAs[[]Location](t, c.request("textDocument/references", referenceParams{textDocumentPositionParams: pos(ouri, otx.position(strings.Index(old, "  triage:")+3))}))
	if len(refs) == 0 {
		t.Errorf("references of triage in v1: none")
	}
}

// TestMigrationEntryAction: a spec that strands a version of its lock (a state renamed
// without a migration) is offered the migrations entry the checker proposes, and the
// entry, its names filled in, makes the spec check clean. The finding is published for
// the lock too, where check reports it.
func TestMigrationEntryAction(t *testing.T) {
	for _, withSection := range []bool{false, true} {
		path, text := copySpec(t, filepath.Join(testtool.Root(t), "examples", "review", "review.fsm.yaml"))
		text = strings.ReplaceAll(text, "blocked", "stuck")
		if withSection {
			// A migrations section already there: the entry is added to it.
			text += "\nmigrations:\n  - from: sha256:00000000\n"
		}
		c := newClient(t, Options{})
		uri := c.open(path, text)
		ds := c.waitDiags(uri, 1)
		var found *Diagnostic
		for i := range ds {
			if strings.Contains(ds[i].Message, "\n  migrations:\n") {
				found = &ds[i]
			}
		}
		if found == nil {
			t.Fatalf("no finding proposing a migration: %v", ds)
		}
		lockURI := uriOf(strings.TrimSuffix(path, ".yaml") + ".lock")
		var lockDiags []publishDiagnosticsParams
		for deadline := time.Now().Add(reqTimeout); len(lockDiags) == 0; time.Sleep(5 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("no diagnostics published for the lock %s within %s", lockURI, reqTimeout)
			}
			c.mu.Lock()
			lockDiags = c.diags[lockURI]
			c.mu.Unlock()
		}
		if len(lockDiags[len(lockDiags)-1].Diagnostics) == 0 {
			t.Errorf("nothing published for the lock: %v", lockDiags)
		}
		acts := decodeAs[[]CodeAction](t, c.request("textDocument/codeAction", codeActionParams{
			TextDocument: textDocumentIdentifier{URI: uri}, Range: found.Range,
			Context: diagContext(*found)}))
		if len(acts) != 1 || acts[0].Edit == nil {
			t.Fatalf("actions: %+v", acts)
		}
		fixed := applyEdits(newText(text), acts[0].Edit.Changes[uri])
		if withSection {
			fixed = strings.Replace(fixed, "  - from: sha256:00000000\n", "", 1)
		}
		fixed = strings.ReplaceAll(fixed, "NEW_NAME", "stuck")
		if ds := lower.Check(c.srv.checkPath(path), []byte(fixed)); ds.HasErrors() {
			t.Errorf("the spec with the entry has errors: %v\n%s", ds, fixed)
		}
		// The same action from the lock's finding.
		acts = decodeAs[[]CodeAction](t, c.request("textDocument/codeAction", codeActionParams{
			TextDocument: textDocumentIdentifier{URI: lockURI}, Range: lockDiags[len(lockDiags)-1].Diagnostics[0].Range,
			Context: diagContext(lockDiags[len(lockDiags)-1].Diagnostics...)}))
		if len(acts) != 1 || acts[0].Edit == nil || len(acts[0].Edit.Changes[uri]) != 1 {
			t.Errorf("actions from the lock: %+v", acts)
		}
	}
}

// TestUnmappedStateAction: a state of an older spec left with no place here is offered its
// line in the migration's states (in the states there, or a new states entry), to fill in.
func TestUnmappedStateAction(t *testing.T) {
	r := testtool.Root(t)
	dir := t.TempDir()
	for _, v := range []string{"v1", "v2"} {
		os.MkdirAll(filepath.Join(dir, v), 0o755)
		b, err := os.ReadFile(filepath.Join(r, "examples", "evolve", v, "ticket.fsm.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(dir, v, "ticket.fsm.yaml"), b, 0o644)
	}
	v2 := filepath.Join(dir, "v2", "ticket.fsm.yaml")
	b, _ := os.ReadFile(v2)
	c := newClient(t, Options{})
	for i, tc := range []struct{ edit, fill, want string }{
		{strings.Replace(string(b), "states: { triage: open, approved: accepted }", "states: { approved: accepted }", 1), "open", "states: { approved: accepted, triage: open }"},
		{strings.Replace(string(b), "    states: { triage: open, approved: accepted }\n", "    states:\n      approved: accepted\n", 1), "open", "      approved: accepted\n      triage: open\n"},
		{strings.Replace(string(b), "    states: { triage: open, approved: accepted }\n", "", 1), "", "    states: { "},
	} {
		uri := c.open(v2, tc.edit)
		ds := c.waitDiags(uri, 1)
		var act *CodeAction
		for _, d := range ds {
			if !strings.Contains(d.Message, "has no place in this spec") {
				continue
			}
			acts := decodeAs[[]CodeAction](t, c.request("textDocument/codeAction", codeActionParams{TextDocument: textDocumentIdentifier{URI: uri}, Range: d.Range, Context: diagContext(d)}))
			if len(acts) == 1 && strings.HasPrefix(acts[0].Title, "Map state") {
				act = &acts[0]
				break
			}
		}
		if act == nil {
			t.Fatalf("case %d: no action mapping the older state: %v", i, ds)
		}
		fixed := applyEdits(newText(tc.edit), act.Edit.Changes[uri])
		if tc.want != "" && !strings.Contains(fixed, tc.want) && !strings.Contains(fixed, strings.ReplaceAll(tc.want, "open", "NEW_NAME")) {
			t.Errorf("case %d: %q not in\n%s", i, tc.want, fixed)
		}
		if tc.fill != "" {
			fixed = strings.ReplaceAll(fixed, "NEW_NAME", tc.fill)
			if ds := lower.Check(c.srv.checkPath(v2), []byte(fixed)); ds.HasErrors() {
				t.Errorf("case %d: the fixed spec has errors: %v\n%s", i, ds, fixed)
			}
		} else if _, err := parseDoc([]byte(fixed)); err != nil {
			t.Errorf("case %d: the fixed spec does not parse: %v\n%s", i, err, fixed)
		}
		c.send("textDocument/didClose", didCloseParams{TextDocument: textDocumentIdentifier{URI: uri}})
	}
}

// TestRenameEveryName: every state, event, guard, action, role, counter, field, policy,
// checkpoint, group and payload field of every seed (with its version lock) and a
// statechart, and of version 2 of examples/evolve (which migrates from version 1's file),
// renamed: the renamed spec checks without errors. Where the rename would strand stored
// instances, the migration comes with it: the lock's version gets the entry the checker
// proposes, with the new name; the older spec's state its line under the migration's states.
func TestRenameEveryName(t *testing.T) {
	type spec struct{ path, text string }
	var specs []spec
	for _, p := range seeds(t) {
		path, text := copySpec(t, p)
		specs = append(specs, spec{path, text})
	}
	dir := t.TempDir()
	for _, v := range []string{"v1", "v2"} {
		os.MkdirAll(filepath.Join(dir, v), 0o755)
		b, err := os.ReadFile(filepath.Join(testtool.Root(t), "examples", "evolve", v, "ticket.fsm.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(dir, v, "ticket.fsm.yaml"), b, 0o644)
		if v == "v2" {
			specs = append(specs, spec{filepath.Join(dir, v, "ticket.fsm.yaml"), string(b)})
		}
	}
	c := newClient(t, Options{})
	migrated := map[string]bool{}
	for _, sp := range specs {
		uri := c.open(sp.path, sp.text)
		if ds := c.waitDiags(uri, 1); len(ds) > 0 {
			t.Fatalf("%s: findings: %v", sp.path, ds)
		}
		tx := newText(sp.text)
		ix := buildIndex(sp.path, tx)
		n := 0
		for _, d := range ix.decls {
			if !renamable[d.kind] || d.occ == nil || d.kind == kGroup && d != ix.resolve(kGroup, d.name)[0] {
				continue
			}
			n++
			res, err := c.call("textDocument/rename", renameParams{textDocumentPositionParams: pos(uri, tx.position(d.occ.from)), NewName: d.name + "_x"})
			if err != nil {
				t.Errorf("%s: %s %q: %s", sp.path, d.kind, d.path, err.Message)
				continue
			}
			got := applyEdits(tx, decodeAs[WorkspaceEdit](t, res).Changes[uri])
			if ds := lower.Check(c.srv.checkPath(sp.path), []byte(got)); ds.HasErrors() {
				t.Errorf("%s: %s %q renamed: %v", sp.path, d.kind, d.path, ds)
			}
			if strings.Count(got, "migrations:") > strings.Count(sp.text, "migrations:") {
				migrated["lock"] = true
			}
			if d.kind == kState && d.name == "open" && strings.Contains(got, "states: { triage: open_x, approved: accepted, open: open_x }") {
				migrated["older"] = true
			}
		}
		if n < 10 {
			t.Errorf("%s: only %d names renamed", sp.path, n)
		}
	}
	if !migrated["lock"] || !migrated["older"] {
		t.Errorf("renames that strand instances came with no migration: %v", migrated)
	}
}
