package markdown

import (
	"html"
	"regexp"
	"strings"
	"testing"

	"github.com/fsmgen/fsmgen/internal/lower"
	"github.com/fsmgen/fsmgen/internal/mermaid"
)

// Renderers split a table row in two ways. GitHub (cmark-gfm), markdown-it and
// commonmark-java: a pipe right after a backslash is escaped, however many backslashes come
// before it. marked: a pipe is escaped when an odd number of backslashes comes before it.
// A generated row must come out the same, and read the same, either way.
var splitters = map[string]func(string) []string{
	"after a backslash": func(line string) []string {
		return split(line, func(bs int) bool { return bs > 0 })
	},
	"after an odd run of backslashes": func(line string) []string {
		return split(line, func(bs int) bool { return bs%2 == 1 })
	},
}

// split splits a row (with its leading and trailing pipe) at the pipes that escaped does not
// keep, given the number of backslashes right before each. The cells are as written: both
// kinds of renderer then drop the backslash of each escaped pipe (readCode, cellText).
func split(line string, escaped func(backslashes int) bool) []string {
	var out []string
	var cur strings.Builder
	for i := 1; i < len(line); i++ {
		if line[i] != '|' {
			cur.WriteByte(line[i])
			continue
		}
		bs := 0
		for j := i - 1; j > 0 && line[j] == '\\'; j-- {
			bs++
		}
		if escaped(bs) {
			cur.WriteByte('|')
			continue
		}
		out = append(out, cur.String())
		cur.Reset()
	}
	return out
}

// readCode reads a cell holding one name, as CodeCell writes it: a code span (literal) or a
// code element (character references).
func readCode(t *testing.T, cell string) string {
	t.Helper()
	s := strings.ReplaceAll(strings.TrimSpace(cell), `\|`, "|")
	if in, ok := strings.CutPrefix(s, "<code>"); ok {
		in, ok = strings.CutSuffix(in, "</code>")
		if !ok || strings.ContainsAny(in, "<>\\|`*_[]") {
			t.Fatalf("cell %q is not one plain code element", cell)
		}
		return html.UnescapeString(in)
	}
	n := len(s) - len(strings.TrimLeft(s, "`"))
	if n == 0 || n == len(s) || !strings.HasSuffix(s, strings.Repeat("`", n)) {
		t.Fatalf("cell %q is not one code span", cell)
	}
	in := s[n : len(s)-n]
	if len(in) >= 2 && in[0] == ' ' && in[len(in)-1] == ' ' && strings.Trim(in, " ") != "" {
		in = in[1 : len(in)-1]
	}
	return in
}

// hostileNames hold pipes and backslashes every way round.
var hostileNames = []string{"a|b", `a\b`, `a\|b`, `\`, `a\`, `\a`, "|", "||", `\\|`, `\\\|`, `|\`, "`|`", "a | b", `\|\|`, "x`|`y", `a\ |b`, `<b>\|</b>`, `\|&amp;`}

func TestCodeCellIsOneCellForEveryRenderer(t *testing.T) {
	for _, name := range hostileNames {
		row := "| " + CodeCell(name) + " | " + Text(name) + " | end |"
		for how, cells := range splitters {
			cs := cells(row)
			if len(cs) != 3 {
				t.Errorf("split at pipes %s, %q makes the row %s of %d cells, want 3", how, name, row, len(cs))
				continue
			}
			if got := readCode(t, cs[0]); got != name {
				t.Errorf("split at pipes %s, CodeCell(%q) = %s reads %q", how, name, cs[0], got)
			}
			if got := cellText(cs[1]); got != name {
				t.Errorf("split at pipes %s, Text(%q) = %s reads %q", how, name, cs[1], got)
			}
		}
	}
}

// hostileSpec puts names and texts holding backslashes before pipes in every table.
const hostileSpec = `version: 1
machine: 'M\|x'
package: m
doc: 'doc \| with <b>bold</b> \'
roles:
  'r\|1': { doc: 'role \| doc\' }
policies:
  'p\|1': { default: true, doc: 'p \| \' }
context:
  'f\|g': { type: enum, values: ['a\|b', 'c\'], default: 'a\|b', message: 'm \| x\', doc: 'x \| y\' }
  'n\|': { type: int, min: 0, max: 9 }
counters:
  'c\|1': { limit: 3, then: 'e\|nd', doc: 'counts \|' }
guards:
  'g\|1': { doc: 'hook \|' }
  'g\|2': { field: 'n\|', at_least: 2 }
  'g\|3': { field: 'f\|g', equals: 'a\|b' }
actions:
  'act\|1': { doc: 'act \|\' }
checkpoints:
  'cp\|1': { save: [state], doc: 'cp \|' }
states:
  'a\|b': { initial: true, doc: 'd \| e\', groups: ['gr\|1'], timeout: { after: 1h } }
  'mid\': { requires: ['f\|g'], entry: ['act\|1'], remembers: true }
  'e\|nd': { terminal: true }
events:
  'go\|x': { doc: 'ev \|\' }
  'back\': {}
  'timeout': {}
transitions:
  - { from: 'a\|b', on: 'go\|x', to: 'mid\', if: ['g\|1', 'g\|2', 'g\|3'], do: ['act\|1'], increment: ['c\|1'], checkpoint: 'cp\|1', doc: 'tr \\| z\' }
  - { from: 'mid\', on: 'back\', to: 'a\|b' }
  - { from: 'mid\', on: 'go\|x', to: 'e\|nd' }
  - { from: 'a\|b', on: 'timeout', to: 'e\|nd' }
`

func TestHostileTablesKeepTheirRows(t *testing.T) {
	m, ds := lower.Load("hostile.fsm.yaml", []byte(hostileSpec))
	if m == nil {
		t.Fatal(ds)
	}
	b, err := Document(m, mermaid.StateDiagram(m))
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	if !strings.Contains(doc, `<code>a&#92;&#124;b</code>`) {
		t.Errorf("the state a\\|b is not written as a code element:\n%s", doc)
	}
	for how, cells := range splitters {
		header := 0
		for _, line := range strings.Split(doc, "\n") {
			if !strings.HasPrefix(line, "|") {
				header = 0
				continue
			}
			switch n := len(cells(line)); {
			case header == 0:
				header = n
			case n != header:
				t.Errorf("split at pipes %s, a row has %d cells, its header %d: %s", how, n, header, line)
			}
		}
	}
	// The only HTML in the document is fsmgen's own: its header comment, line breaks and
	// code elements.
	tag := regexp.MustCompile(`<[^>]*>`)
	for i, line := range strings.Split(doc, "\n") {
		if i == 0 {
			continue
		}
		for _, x := range tag.FindAllString(strings.ReplaceAll(line, `\<`, ""), -1) {
			if x != "<br>" && x != "<code>" && x != "</code>" {
				t.Errorf("line %d: HTML %s in %s", i+1, x, line)
			}
		}
	}
}
