package lsp

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/fsmgen/fsmgen/internal/testtool"
	"golang.org/x/tools/txtar"
)

// corpora returns the specs the project keeps for its checker, generator and diagrams,
// the checker's fuzz corpus and hostile inputs of the loader's robustness tests' kinds,
// by name.
func corpora(t *testing.T) map[string]string {
	t.Helper()
	r := testtool.Root(t)
	out := map[string]string{}
	glob := func(pattern string) []string {
		m, err := filepath.Glob(filepath.Join(r, filepath.FromSlash(pattern)))
		if err != nil || len(m) == 0 {
			t.Fatalf("no files %s (%v)", pattern, err)
		}
		return m
	}
	read := func(p string) string {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	for _, pattern := range []string{"internal/lower/testdata/build/*.fsm.yaml", "internal/gogen/testdata/*.fsm.yaml",
		"internal/mermaid/testdata/*.fsm.yaml", "examples/*/*.fsm.yaml", "examples/evolve/*/*.fsm.yaml"} {
		for _, p := range glob(pattern) {
			out[p] = read(p)
		}
	}
	for _, p := range glob("internal/lower/testdata/check/*.txtar") {
		a, err := txtar.ParseFile(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range a.Files {
			if strings.HasSuffix(f.Name, ".yaml") {
				out[p+"/"+f.Name] = string(f.Data)
			}
		}
	}
	for _, p := range glob("internal/lower/testdata/fuzz/FuzzLoad/*") {
		for _, line := range strings.Split(read(p), "\n") {
			if q, ok := strings.CutPrefix(line, "[]byte("); ok {
				s, err := strconv.Unquote(strings.TrimSuffix(q, ")"))
				if err != nil {
					t.Fatalf("%s: %v", p, err)
				}
				out[p] = s
			}
		}
	}
	// Hostile inputs of the kinds spec/robust_test.go feeds the loader.
	bomb := "a: &a [x, x, x, x, x, x, x, x, x]\n"
	for i := 'b'; i <= 'k'; i++ {
		bomb += fmt.Sprintf("%c: &%c [*%c, *%c, *%c, *%c, *%c, *%c, *%c, *%c, *%c]\n", i, i, i-1, i-1, i-1, i-1, i-1, i-1, i-1, i-1, i-1)
	}
	out["alias bomb"] = "version: 1\n" + bomb
	out["deep nesting"] = "version: 1\nstates: " + strings.Repeat("[", 5000) + strings.Repeat("]", 5000) + "\n"
	out["deep block nesting"] = "version: 1\nstates:\n" + func() string {
		var b strings.Builder
		for i := range 300 {
			fmt.Fprintf(&b, "%s  s%d:\n", strings.Repeat("  ", i), i)
		}
		return b.String()
	}()
	out["alias cycle"] = "version: 1\nstates: &a { x: *a }\n"
	out["binary junk"] = "version: 1\n\x00\x01\xff\xfe machine: \x1b[31m\n"
	out["long line"] = "version: 1\nmachine: " + strings.Repeat("x", 1<<20) + "\n"
	out["merge keys"] = "version: 1\nbase: &b { initial: true }\nstates: { a: { <<: *b } }\n"
	out["tabs"] = "version: 1\nstates:\n\ta: {}\n"
	out["two documents"] = "version: 1\n---\nversion: 1\n"
	out["bidi"] = "version: 1\nmachine: M\npackage: m\nstates: { \"a\u202e\": { initial: true } }\n"
	out["only comments"] = "# nothing\n"
	out["empty"] = ""
	out["crlf"] = strings.ReplaceAll(miniSpec, "\n", "\r\n")
	return out
}

// exercise asks the server everything at a few positions of a document: it must answer
// each (an error is an answer) in time, and keep serving.
func exercise(t *testing.T, c *client, uri, text string, rnd *rand.Rand, where string) {
	t.Helper()
	c.what = where + ": "
	defer func() { c.what = "" }()
	tx := newText(text)
	positions := []Position{{}, tx.position(len(text)), {Line: tx.lines() + 3, Character: 7}, {Line: 1, Character: 1 << 20}}
	for range 6 {
		positions = append(positions, tx.position(rnd.IntN(len(text)+1)))
	}
	for _, p := range positions {
		at := pos(uri, p)
		for _, m := range []string{"textDocument/completion", "textDocument/hover", "textDocument/definition", "textDocument/prepareRename"} {
			c.call(m, at)
		}
		c.call("textDocument/references", referenceParams{textDocumentPositionParams: at})
		c.call("textDocument/rename", renameParams{textDocumentPositionParams: at, NewName: "renamed_" + strconv.Itoa(rnd.IntN(100))})
	}
	c.call("textDocument/documentSymbol", documentSymbolParams{TextDocument: textDocumentIdentifier{URI: uri}})
	c.call("textDocument/codeAction", codeActionParams{TextDocument: textDocumentIdentifier{URI: uri},
		Range: Range{End: Position{Line: tx.lines()}}})
}

// TestHostile: the specs of the project's corpora and hostile inputs never crash or hang
// the server: each is checked (its diagnostics published) and every request answered.
func TestHostile(t *testing.T) {
	c := newClient(t, Options{})
	dir := t.TempDir()
	rnd := rand.New(rand.NewPCG(1, 2))
	specs := corpora(t)
	if len(specs) < 200 {
		t.Fatalf("only %d specs in the corpora", len(specs))
	}
	i := 0
	for name, text := range specs {
		i++
		path := filepath.Join(dir, fmt.Sprintf("s%d.fsm.yaml", i))
		uri := c.open(path, text)
		c.waitDiags(uri, 1)
		exercise(t, c, uri, text, rnd, name)
		c.send("textDocument/didClose", didCloseParams{TextDocument: textDocumentIdentifier{URI: uri}})
	}
	t.Logf("%d specs", len(specs))
}

// TestRandomEdits: random truncations and edits of the seeds, sent as the incremental
// changes an editor sends, never crash or hang the server, and each version's findings
// are the checker's for the text the edits make.
func TestRandomEdits(t *testing.T) {
	c := newClient(t, Options{Debounce: 1})
	rnd := rand.New(rand.NewPCG(3, 4))
	junk := []string{"{", "}", "[", "]", ":", ": ", "- ", "\t", "&a ", "*a", "é😀", "\"", "'", "#", "\n", "\n  - ", ",", "!!int ", "? ", "|", ">-\n", "<<: *a\n", "\x00", "~"}
	edits := 25
	if testing.Short() {
		edits = 8
	}
	for _, p := range seeds(t) {
		path, text := copySpec(t, p)
		uri := c.open(path, text)
		c.waitDiags(uri, 1)
		cur := newText(text)
		for v := 2; v < 2+edits; v++ {
			from := rnd.IntN(len(cur.s) + 1)
			to := min(len(cur.s), from+rnd.IntN(40))
			var ins string
			switch rnd.IntN(4) {
			case 0: // cut the rest
				to, ins = len(cur.s), ""
			case 1: // delete
			default:
				ins = junk[rnd.IntN(len(junk))]
			}
			r := cur.rangeOf(from, to)
			// Ranges count UTF-16 units: an edit inside a character is moved to its start.
			ch := contentChange{Range: &r, Text: ins}
			next := cur.apply(ch)
			c.send("textDocument/didChange", didChangeParams{TextDocument: versionedTextDocumentIdentifier{URI: uri, Version: v},
				ContentChanges: []contentChange{ch}})
			cur = newText(next)
			ds := c.waitDiags(uri, v)
			want := c.srv.opts.Check(c.srv.checkPath(path), []byte(cur.s))
			if len(ds) != len(want) {
				t.Fatalf("%s, version %d: %d diagnostics, the checker %d", p, v, len(ds), len(want))
			}
			exercise(t, c, uri, cur.s, rnd, fmt.Sprintf("%s version %d", p, v))
		}
		c.send("textDocument/didClose", didCloseParams{TextDocument: textDocumentIdentifier{URI: uri}})
	}
}
