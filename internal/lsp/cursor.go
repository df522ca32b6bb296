package lsp

import (
	"strings"
)

// cursor is where the cursor stands in the spec's structure, read from the text around it
// line by line, so that a document that does not parse (a half-typed line) still has one.
type cursor struct {
	path     []string // keys from the top; "-" for an item of a sequence
	key      bool     // a key is written here (else a value)
	siblings []string // where a key is written, the keys its mapping has already
	from, to int      // byte offsets of the word under the cursor
	prefix   string   // the word's part before the cursor
}

// names returns the path without its sequence items.
func (c cursor) names() []string {
	var out []string
	for _, p := range c.path {
		if p != "-" {
			out = append(out, p)
		}
	}
	return out
}

// entry is a block-structure item of a line: a sequence item ("-") or a key, at its
// column (bytes of indentation), with whether a value follows on the line.
type entry struct {
	col    int
	key    string // "-" for a sequence item
	inline bool   // the key's value is on the line (it has no block children)
	rest   int    // for the last entry: the byte offset in the line of what follows it
}

func isWordByte(b byte) bool {
	switch b {
	case ' ', '\t', ',', '[', ']', '{', '}', ':', '#', '"', '\'', '\r', '\n':
		return false
	}
	return true
}

// lineEntries reads the block entries a line starts with: "- " markers, then a key if the
// line has one ("key:" followed by a space or the end).
func lineEntries(line string) []entry {
	var out []entry
	i := 0
	for {
		for i < len(line) && line[i] == ' ' {
			i++
		}
		if i < len(line) && line[i] == '-' && (i+1 == len(line) || line[i+1] == ' ') {
			out = append(out, entry{col: i, key: "-", inline: true, rest: i + 1})
			i++
			continue
		}
		break
	}
	if i >= len(line) || line[i] == '#' || line[i] == '{' || line[i] == '[' {
		if len(out) > 0 {
			out[len(out)-1].inline = i < len(line) && line[i] != '#'
			out[len(out)-1].rest = i
		}
		return out
	}
	if k, end, ok := blockKey(line, i); ok {
		rest := strings.TrimSpace(line[end:])
		out = append(out, entry{col: i, key: k, inline: rest != "" && !strings.HasPrefix(rest, "#"), rest: end})
		if len(out) > 1 {
			out[len(out)-2].inline = false
		}
		return out
	}
	if len(out) > 0 {
		out[len(out)-1].inline = true
		out[len(out)-1].rest = i
	}
	return out
}

// blockKey reads a key at byte i of line: a plain or quoted scalar followed by ':' and a
// space or the end of the line. end is just after the colon.
func blockKey(line string, i int) (key string, end int, ok bool) {
	if i < len(line) && (line[i] == '"' || line[i] == '\'') {
		q := line[i]
		j := strings.IndexByte(line[i+1:], q)
		if j < 0 {
			return "", 0, false
		}
		end = i + 1 + j + 1
		if end < len(line) && line[end] == ':' && (end+1 == len(line) || line[end+1] == ' ') {
			return line[i+1 : i+1+j], end + 1, true
		}
		return "", 0, false
	}
	for j := i; j < len(line); j++ {
		if line[j] == ':' && (j+1 == len(line) || line[j+1] == ' ' || line[j+1] == '\t') {
			return strings.TrimSpace(line[i:j]), j + 1, true
		}
		if line[j] == '#' && j > i && line[j-1] == ' ' {
			return "", 0, false
		}
	}
	return "", 0, false
}

// cursorAt reads the structure at byte offset off of t.
func cursorAt(t *text, off int) cursor {
	pos := t.position(off)
	line := t.line(pos.Line)
	col := min(off-t.starts[pos.Line], len(line))
	c := cursor{from: off, to: off}
	// The word under the cursor.
	b := col
	for b > 0 && isWordByte(line[b-1]) {
		b--
	}
	e := col
	for e < len(line) && isWordByte(line[e]) {
		e++
	}
	c.from, c.to = t.starts[pos.Line]+b, t.starts[pos.Line]+e
	c.prefix = line[b:col]
	before := line[:col]

	// The current line's own entries, up to the cursor.
	var own []entry
	limit := len(before) - len(strings.TrimLeft(before, " "))
	valueText := ""
	c.key = true
	if strings.TrimSpace(before) != "" {
		own = lineEntries(before)
		// A word being typed after the entries: a key when nothing else follows a "- "
		// or the indentation; a value after a key.
		switch {
		case len(own) == 0:
			// "  partial" (a key being typed) or a flow collection at the start.
			trimmed := strings.TrimLeft(before, " ")
			if strings.HasPrefix(trimmed, "{") || strings.HasPrefix(trimmed, "[") {
				valueText = trimmed
				c.key = false
			}
		case own[len(own)-1].key == "-":
			last := own[len(own)-1]
			valueText = strings.TrimLeft(before[last.rest:], " ")
			if strings.HasPrefix(valueText, "{") || strings.HasPrefix(valueText, "[") {
				c.key = false
			} else {
				valueText = ""
			}
		default:
			last := own[len(own)-1]
			valueText = before[last.rest:]
			c.key = false
		}
		if len(own) > 0 {
			limit = own[0].col
		}
	}
	// The ancestors: the entries of earlier lines, each less indented than the last found
	// (a sequence at the indentation of its key has that key as its parent).
	var parents []string
	seqAt := -1
	for i := pos.Line - 1; i >= 0 && (limit > 0 || seqAt == 0); i-- {
		l := t.line(i)
		trimmed := strings.TrimSpace(l)
		if trimmed == "" || strings.HasPrefix(trimmed, "#") {
			continue
		}
		es := lineEntries(l)
		for j := len(es) - 1; j >= 0; j-- {
			en := es[j]
			ok := en.col < limit || (en.col == limit && seqAt == limit && en.key != "-")
			if !ok || (en.inline && en.key != "-") {
				if en.col < limit && en.inline && en.key != "-" {
					// A key with its value on its line ends a structure: what is less
					// indented than it is still looked for.
					limit = en.col
					seqAt = -1
				}
				continue
			}
			parents = append(parents, en.key)
			limit = en.col
			seqAt = -1
			if en.key == "-" {
				seqAt = en.col
			}
		}
	}
	for i := len(parents) - 1; i >= 0; i-- {
		c.path = append(c.path, parents[i])
	}
	for _, en := range own {
		c.path = append(c.path, en.key)
	}
	if valueText != "" || !c.key {
		c.path, c.key, c.siblings = flowPath(c.path, valueText)
	} else if len(own) > 0 && own[len(own)-1].key != "-" {
		// "key: partial" is handled above; "- partial" is a key or a value of the item.
		c.key = true
	}
	if c.key && valueText == "" {
		c.siblings = blockSiblings(t, pos.Line, c.from-t.starts[pos.Line])
	}
	return c
}

// blockSiblings returns the keys at column col of the block mapping that line is in: the
// lines above up to its start (a less indented line, or the sequence item it starts on)
// and below up to its end.
func blockSiblings(t *text, line, col int) []string {
	var out []string
	// scan reads one line: it adds the key at col and reports whether the mapping goes on.
	scan := func(i int, up bool) bool {
		l := t.line(i)
		trimmed := strings.TrimSpace(l)
		if trimmed == "" || strings.HasPrefix(trimmed, "#") {
			return true
		}
		es := lineEntries(l)
		if len(es) == 0 {
			// A value's continuation, or less indented text: the end.
			return len(l)-len(strings.TrimLeft(l, " ")) > col
		}
		for _, en := range es {
			if en.col == col && en.key != "-" {
				out = append(out, en.key)
			}
		}
		switch first := es[0]; {
		case first.col > col:
			return true
		case first.col == col && first.key != "-":
			return true
		case up && es[len(es)-1].col == col && es[len(es)-1].key != "-":
			return false // the sequence item the mapping starts on
		}
		return false
	}
	for i := line - 1; i >= 0 && scan(i, true); i-- {
	}
	for i := line + 1; i < t.lines() && scan(i, false); i++ {
	}
	return out
}

// flowPath reads the flow collections of a value written up to the cursor and returns the
// path at its end, and whether a key is written there.
func flowPath(base []string, s string) ([]string, bool, []string) {
	type frame struct {
		keys      []string
		seq       bool
		key       string
		expectKey bool
	}
	var stack []frame
	tok := 0 // where the scalar being read starts
	for i := 0; i < len(s); i++ {
		ch := s[i]
		switch {
		case ch == '"' || ch == '\'':
			j := strings.IndexByte(s[i+1:], ch)
			if j < 0 {
				i = len(s)
				continue
			}
			i += j + 1
		case ch == '{':
			stack = append(stack, frame{expectKey: true})
			tok = i + 1
		case ch == '[':
			stack = append(stack, frame{seq: true})
			tok = i + 1
		case ch == '}' || ch == ']':
			if len(stack) > 0 {
				stack = stack[:len(stack)-1]
			}
			tok = i + 1
		case ch == ',':
			if len(stack) > 0 && !stack[len(stack)-1].seq {
				stack[len(stack)-1].expectKey = true
				stack[len(stack)-1].key = ""
			}
			tok = i + 1
		case ch == ':' && (i+1 == len(s) || s[i+1] == ' '):
			if len(stack) > 0 && !stack[len(stack)-1].seq {
				f := &stack[len(stack)-1]
				f.key = strings.Trim(strings.TrimSpace(s[tok:i]), `"'`)
				f.expectKey = false
				f.keys = append(f.keys, f.key)
			}
			tok = i + 1
		case ch == '#' && (i == 0 || s[i-1] == ' '):
			i = len(s)
		}
	}
	path := append([]string(nil), base...)
	for _, f := range stack {
		if f.seq {
			path = append(path, "-")
			continue
		}
		if f.expectKey {
			return path, true, f.keys
		}
		path = append(path, f.key)
	}
	return path, false, nil
}
