package spec

import (
	"bytes"
	"fmt"
	"math/rand"
	"strings"
	"testing"
	"time"

	"github.com/fsmgen/fsmgen/internal/diag"
)

// header is the start of a valid spec; tests append hostile parts to it.
const header = "version: 1\nmachine: M\npackage: m\nstates:\n  a: { initial: true, terminal: true }\ntransitions: []\n"

// load runs Load with a deadline, so that a hang fails the test instead of stalling it, and
// checks what every call must give: a tree iff there are no errors, and findings that are
// positioned and say something.
func load(t *testing.T, data []byte) (*File, diag.List) {
	t.Helper()
	type result struct {
		f  *File
		ds diag.List
	}
	done := make(chan result, 1)
	go func() {
		f, ds := Load("spec.fsm.yaml", data)
		done <- result{f, ds}
	}()
	var r result
	select {
	case r = <-done:
	case <-time.After(60 * time.Second):
		t.Fatalf("Load did not return within 60s on %d bytes", len(data))
	}
	if (r.f == nil) != r.ds.HasErrors() {
		t.Errorf("tree is nil: %v, but errors: %v (%v)", r.f == nil, r.ds.HasErrors(), r.ds)
	}
	for _, d := range r.ds {
		if d.Pos.Line < 1 || d.Pos.Col < 1 || d.Message == "" || d.Pos.File != "spec.fsm.yaml" {
			t.Errorf("badly positioned or empty finding: %+v", d)
		}
	}
	return r.f, r.ds
}

// refused checks that Load refuses data with exactly one error whose message holds want,
// at line:col when line is not zero.
func refused(t *testing.T, data []byte, want string, line, col int) {
	t.Helper()
	f, ds := load(t, data)
	if f != nil || len(ds) != 1 || ds[0].Severity != diag.Error {
		t.Fatalf("want one error, got tree %v and findings:\n%s", f != nil, dump(ds))
	}
	if !strings.Contains(ds[0].Message, want) {
		t.Errorf("message %q does not contain %q", ds[0].Message, want)
	}
	if line != 0 && (ds[0].Pos.Line != line || ds[0].Pos.Col != col) {
		t.Errorf("error at %d:%d, want %d:%d: %s", ds[0].Pos.Line, ds[0].Pos.Col, line, col, ds[0].Message)
	}
	if len(ds[0].Message) > 300 {
		t.Errorf("message is %d bytes long; long values should be cut", len(ds[0].Message))
	}
}

// reported checks that Load refuses data with an error whose message holds want at
// line:col, among other findings.
func reported(t *testing.T, data []byte, want string, line, col int) {
	t.Helper()
	f, ds := load(t, data)
	if f != nil {
		t.Fatalf("want no tree, got one, and findings:\n%s", dump(ds))
	}
	for _, d := range ds {
		if d.Severity == diag.Error && strings.Contains(d.Message, want) && d.Pos.Line == line && d.Pos.Col == col {
			return
		}
	}
	t.Errorf("no error %q at %d:%d in:\n%s", want, line, col, dump(ds))
}

func dump(ds diag.List) string {
	var b strings.Builder
	for i, d := range ds {
		if i == 10 {
			fmt.Fprintf(&b, "... and %d more\n", len(ds)-10)
			break
		}
		b.WriteString(d.String() + "\n")
	}
	return b.String()
}

// billionLaughs builds the classic alias bomb: each level is a list of ten aliases of the
// level before, so level n expands to 10^n nodes.
func billionLaughs(levels int, mapping bool) []byte {
	var b strings.Builder
	b.WriteString(header + "x:\n  l0: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]\n")
	for i := 1; i <= levels; i++ {
		fmt.Fprintf(&b, "  l%d: &l%d ", i, i)
		if mapping {
			b.WriteString("{")
			for j := 0; j < 10; j++ {
				fmt.Fprintf(&b, "k%d: *l%d, ", j, i-1)
			}
			b.WriteString("}\n")
			continue
		}
		b.WriteString("[")
		for j := 0; j < 10; j++ {
			fmt.Fprintf(&b, "*l%d, ", i-1)
		}
		b.WriteString("]\n")
	}
	return []byte(b.String())
}

func TestAliasBomb(t *testing.T) {
	for _, levels := range []int{9, 12, 30} {
		for _, mapping := range []bool{false, true} {
			t.Run(fmt.Sprintf("levels=%d,mapping=%v", levels, mapping), func(t *testing.T) {
				start := time.Now()
				// l0 holds 11 nodes and each level ten of the one before (and, in a
				// mapping, ten keys), so the first level over MaxNodes is found by counting;
				// the error points at the first alias to it, on the next level's line
				// (header 6 lines, x: 1, l0: 1).
				col, over := 12, 0
				if mapping {
					col = 16
				}
				for size := 11; size <= MaxNodes; over++ {
					size = 1 + 10*size
					if mapping {
						size += 10
					}
				}
				refused(t, billionLaughs(levels, mapping), "alias bomb", 9+over, col)
				if d := time.Since(start); d > 5*time.Second {
					t.Errorf("refusing the bomb took %v", d)
				}
			})
		}
	}
}

// A chain of aliases each one level deeper than the one before nests past MaxDepth without
// being written deep.
func TestAliasChainTooDeep(t *testing.T) {
	var b strings.Builder
	b.WriteString(header + "x:\n  a0: &a0 lol\n")
	for i := 1; i <= MaxDepth+10; i++ {
		fmt.Fprintf(&b, "  a%d: &a%d [*a%d]\n", i, i, i-1)
	}
	refused(t, []byte(b.String()), "nests deeper than 100 levels", 0, 0)
}

func TestAliasCycle(t *testing.T) {
	refused(t, []byte(header+"x: &x [a, [b, *x]]\n"), "would nest forever", 7, 15)
	refused(t, []byte("&x [*x]\n"), "would nest forever", 1, 5)
}

func TestNestingTooDeep(t *testing.T) {
	depth := MaxDepth + 20
	t.Run("flow", func(t *testing.T) {
		data := header + "x: " + strings.Repeat("[", depth) + strings.Repeat("]", depth) + "\n"
		refused(t, []byte(data), "nests deeper than 100 levels", 0, 0)
	})
	t.Run("block", func(t *testing.T) {
		var b strings.Builder
		b.WriteString(header + "x:\n")
		for i := 1; i <= depth; i++ {
			fmt.Fprintf(&b, "%sk%d:\n", strings.Repeat(" ", i), i)
		}
		refused(t, []byte(b.String()), "nests deeper than 100 levels", 0, 0)
	})
	t.Run("beyond-yaml-limit", func(t *testing.T) {
		// yaml.v3 refuses 10,000 levels itself; either way it is one error.
		data := header + "x: " + strings.Repeat("[", 20000) + strings.Repeat("]", 20000) + "\n"
		refused(t, []byte(data), "depth", 0, 0)
	})
}

func TestTooLarge(t *testing.T) {
	data := []byte(header + "doc: |\n")
	for len(data) <= MaxBytes {
		data = append(data, "  "+strings.Repeat("x", 1000)+"\n"...)
	}
	refused(t, data, fmt.Sprintf("the limit is %d", MaxBytes), 1, 1)
}

func TestMergeKey(t *testing.T) {
	data := "version: 1\nmachine: M\npackage: m\nstates:\n  b: &end { terminal: true }\n  a:\n    <<: *end\n    initial: true\ntransitions: []\n"
	refused(t, []byte(data), "merge keys (<<) are not supported", 7, 5)
}

func TestNonScalarKeys(t *testing.T) {
	for _, c := range []struct {
		name, data string
		line, col  int
		kind       string
	}{
		{"sequence", header + "? [a, b]\n: c\n", 7, 3, "sequence"},
		{"mapping", header + "x: { { a: 1 }: b }\n", 7, 6, "mapping"},
		{"alias to a sequence", header + "x: &l [a]\ny: { *l : b }\n", 8, 6, "sequence"},
	} {
		t.Run(c.name, func(t *testing.T) {
			// x and y are unknown keys too, reported as well.
			reported(t, []byte(c.data), "mapping keys must be plain names, not a "+c.kind, c.line, c.col)
		})
	}
}

func TestNUL(t *testing.T) {
	refused(t, []byte("version: 1\nmachine: M\x00\n"), "control character U+0000", 2, 11)
	refused(t, []byte("\x00"), "control character U+0000", 1, 1)
	refused(t, []byte(header+"doc: \"a\\0b\"\n"+"x: \"\x00\"\n"), "control character U+0000", 8, 5)
}

func TestBinaryJunk(t *testing.T) {
	inputs := [][]byte{
		{0xff, 0xfe, 0x00, 0x01, 0x02},
		{0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n', 0, 0, 0, 0x0d},
		{0x7f, 'E', 'L', 'F', 2, 1, 1, 0},
		[]byte("version: 1\nmachine: \xc3\x28\n"),
		[]byte("\xef\xbb\xbf\xef\xbb\xbf"),
	}
	r := rand.New(rand.NewSource(1))
	for i := 0; i < 200; i++ {
		b := make([]byte, 1+r.Intn(512))
		r.Read(b)
		inputs = append(inputs, b)
	}
	for i, in := range inputs {
		f, ds := load(t, in)
		if f != nil || !ds.HasErrors() {
			t.Errorf("input %d (%q...): want an error, got %v", i, in[:min(len(in), 16)], ds)
			continue
		}
		if len(ds) != 1 {
			t.Errorf("input %d (%q...): want one error, got %d:\n%s", i, in[:min(len(in), 16)], len(ds), dump(ds))
		}
	}
	refused(t, []byte("version: 1\nmachine: \xc3\x28\n"), "invalid UTF-8 (byte 0xc3)", 2, 10)
}

func TestLongLines(t *testing.T) {
	long := strings.Repeat("x", 1<<20)
	t.Run("doc", func(t *testing.T) {
		refused(t, []byte(header+"doc: "+long+"\n"), "doc: length must be <= 4096", 7, 6)
	})
	t.Run("unknown key", func(t *testing.T) {
		refused(t, []byte(header+long[:1000]+": 1\n"), "unknown key", 7, 1)
	})
	t.Run("key longer than YAML allows", func(t *testing.T) {
		// YAML limits implicit keys to 1024 characters.
		refused(t, []byte(header+long+": 1\n"), "yaml:", 0, 0)
	})
	t.Run("state name", func(t *testing.T) {
		data := "version: 1\nmachine: M\npackage: m\nstates:\n  " + long[:1000] + ": { initial: true, terminal: true }\ntransitions: []\n"
		refused(t, []byte(data), "is too long", 5, 3)
	})
	t.Run("flow sequence", func(t *testing.T) {
		// One line holding 100,000 names: valid, if odd.
		var b strings.Builder
		b.WriteString("version: 1\nmachine: M\npackage: m\nstates:\n  a: { initial: true, terminal: true, groups: [")
		for i := 0; i < 100000; i++ {
			fmt.Fprintf(&b, "g%d, ", i)
		}
		b.WriteString("] }\ntransitions: []\n")
		f, ds := load(t, []byte(b.String()))
		if f == nil || len(ds) != 0 {
			t.Fatalf("want a clean load, got:\n%s", dump(ds))
		}
		if n := len(f.States[0].Groups); n != 100000 {
			t.Errorf("got %d groups, want 100000", n)
		}
	})
	t.Run("unterminated quote", func(t *testing.T) {
		refused(t, []byte(header+"doc: \""+long+"\n"), "yaml:", 0, 0)
	})
}

// Odd but small documents: none may panic, and each gives a tree iff it has no errors.
func TestOddDocuments(t *testing.T) {
	for _, s := range []string{
		"", " ", "\n\n", "#", "~", "null", "[]", "{}", "''", "0", "-", "- -", "? ", ":", "---", "---\n...\n",
		"...", "\ufeff", "&a", "*a", "&a [*a]", "!!binary aGk=", "!!map {}", "!!str", "%YAML 1.1\n---\n{}",
		"%TAG ! tag:x,2000:\n---\n!a b", "{a: 1, a: 2}", "version: 1", "version: [1]", "version: ~",
		"version: !!str 1", "version: 0x1", "version: 01", "version: 1e0", "version: 1\nversion: 2",
		header + "states: ~", header + "x: !!timestamp 2001-12-14", header + "x: !!float nan",
		header + "x: .nan", header + "x: -.inf", header + "x: 0o17", header + "x: 1_000",
		"version: 1\nmachine: M\npackage: m\nstates: { a: ~ }\ntransitions: [~]\n",
		"version: 1\nmachine: M\npackage: m\nstates: { a: { timeout: {} } }\ntransitions: [{}]\n",
		"version: 1\nmachine: M\npackage: m\nstates: { a: { timeout: { after: 1m, levels: { x: 1% } } } }\ntransitions: [{ from: { any: true } }]\n",
		"version: 1\nmachine: M\npackage: m\nstates: { a: {} }\ntransitions: [{ from: a, by: [{}] , choose: [{}] }]\n",
		"version: 1\nmachine: M\npackage: m\nguards: { g: { at_least: { by: x, values: {} } } }\nstates: { a: {} }\ntransitions: []\n",
	} {
		load(t, []byte(s))
	}
}

// The error of a YAML syntax problem is on the line of the problem (yaml.v3 prints a
// 0-based line for parser errors; Load corrects it).
func TestYAMLErrorLines(t *testing.T) {
	for _, c := range []struct {
		data string
		line int
	}{
		{header + " x: 1\n", 7},                          // parser: key indented under nothing
		{"version: 1\nstates:\n  a: 1\n b: 2\n", 4},      // parser: dedent to a column no mapping has
		{"version: 1\nstates: { a: 1\n", 2},              // parser: flow mapping not closed (line it opens on)
		{"version: 1\nstates:\n\ta: 1\n", 3},             // scanner: tab
		{"version: 1\ndoc: \"abc\n", 2},                  // scanner: unterminated quote
		{"version: 1\ndoc: *nope\n", 2},                  // unknown alias
		{"version: 1\nmachine: M\n---\nversion: 1\n", 3}, // second document
	} {
		f, ds := load(t, []byte(c.data))
		if f != nil || len(ds) != 1 {
			t.Errorf("%q: want one error, got:\n%s", c.data, dump(ds))
			continue
		}
		if ds[0].Pos.Line != c.line {
			t.Errorf("%q: error on line %d, want %d: %s", c.data, ds[0].Pos.Line, c.line, ds[0].Message)
		}
	}
}

// Errors inside an aliased node are reported at the node; two uses of one anchor do not
// make a crash or an unbounded number of findings.
func TestErrorsThroughAliases(t *testing.T) {
	data := "version: 1\nmachine: M\npackage: m\nstates:\n  a: &s { initial: true, terminal: true, colour: red }\n  b: *s\ntransitions: []\n"
	_, ds := load(t, []byte(data))
	if len(ds) == 0 || len(ds) > 2 {
		t.Fatalf("want one or two findings, got:\n%s", dump(ds))
	}
	for _, d := range ds {
		if d.Pos.Line != 5 || !strings.Contains(d.Message, `unknown key "colour"`) {
			t.Errorf("unexpected finding %s", d)
		}
	}
}

func TestCleanSpecLoads(t *testing.T) {
	f, ds := load(t, []byte(header))
	if f == nil || len(ds) != 0 {
		t.Fatalf("want a clean load, got:\n%s", dump(ds))
	}
	if f.Machine.Value != "M" || len(f.States) != 1 || !f.States[0].Initial.Value {
		t.Errorf("unexpected tree: %+v", f)
	}
	if !bytes.Equal([]byte(f.Path), []byte("spec.fsm.yaml")) {
		t.Errorf("path %q", f.Path)
	}
}

// schemaFindings runs the steps of LoadPartial that report schema findings, and returns
// the loader, whose counters tell how much work finding the keys took.
func schemaFindings(t *testing.T, data []byte) *loader {
	t.Helper()
	doc, err := parseYAML(data)
	if err != nil || len(doc.Content) != 1 {
		t.Fatalf("not one YAML document: %v", err)
	}
	l := newLoader("spec.fsm.yaml")
	l.validate(l.toJSON(doc.Content[0], "", 0))
	return l
}

// TestManyUnknownKeys: 80,000 unknown keys took two minutes, because the key of each
// finding was found by a scan of its mapping. Every key is still reported, at its key, and
// the keys of a mapping are read once, however many findings are about them.
func TestManyUnknownKeys(t *testing.T) {
	unknown := func(n int, where string) []byte {
		var b strings.Builder
		switch where {
		case "top":
			b.WriteString(header)
			for i := range n {
				fmt.Fprintf(&b, "key_%d: 1\n", i)
			}
			b.WriteString("tranistions: []\n")
		case "state":
			b.WriteString("version: 1\nmachine: M\npackage: m\nstates:\n  a:\n    initial: true\n    terminal: true\n")
			for i := range n {
				fmt.Fprintf(&b, "    key_%d: 1\n", i)
			}
			b.WriteString("    termnal: true\ntransitions: []\n")
		}
		return []byte(b.String())
	}
	n := 80_000
	if raceDetector {
		n = 8_000
	}
	for _, where := range []string{"top", "state"} {
		data := unknown(n, where)
		_, ds := load(t, data)
		if len(ds) != n+1 {
			t.Fatalf("%s: %d findings, want %d", where, len(ds), n+1)
		}
		first := 7 // the line of key_0
		if where == "state" {
			first = 8
		}
		for i, d := range ds {
			want := fmt.Sprintf("unknown key %q", fmt.Sprintf("key_%d", i))
			if i == n { // the misspelt key after them still gets its suggestion
				want = `unknown key "tranistions" (did you mean "transitions"?)`
				if where == "state" {
					want = `unknown key "termnal" (did you mean "terminal"?)`
				}
			}
			if d.Message != want || d.Pos.Line != first+i {
				t.Fatalf("%s: finding %d: %s, want %q at line %d", where, i, d, want, first+i)
			}
		}
		// The work: each key of the mapping read once (a scan per finding read n²/2).
		keys := n + 1 // the unknown keys and the misspelt one
		if where == "top" {
			keys += 5 // version, machine, package, states, transitions
		} else {
			keys += 2 // initial, terminal
		}
		if l := schemaFindings(t, data); l.keysIndexed != keys {
			t.Errorf("%s: %d keys read to find %d, want %d", where, l.keysIndexed, n+1, keys)
		}
	}
}
