package lsp

import (
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// text is a document's content with the byte offset of each line, for converting between
// byte offsets, the protocol's positions (UTF-16 code units) and the loader's (1-based
// lines and columns in characters, as yaml.v3 counts them).
type text struct {
	s      string
	starts []int // byte offset of each line's first byte
}

func newText(s string) *text {
	t := &text{s: s, starts: []int{0}}
	for i := 0; i < len(s); i++ {
		if s[i] == '\n' {
			t.starts = append(t.starts, i+1)
		}
	}
	return t
}

// line returns line i (0-based) without its line break; "" past the end.
func (t *text) line(i int) string {
	if i < 0 || i >= len(t.starts) {
		return ""
	}
	end := len(t.s)
	if i+1 < len(t.starts) {
		end = t.starts[i+1] - 1
	}
	return strings.TrimSuffix(t.s[t.starts[i]:end], "\r")
}

func (t *text) lines() int { return len(t.starts) }

// offset converts a protocol position to a byte offset, clamped to the document: a
// character past the line's end is its end, a line past the last is the end of the text.
func (t *text) offset(p Position) int {
	if p.Line < 0 {
		return 0
	}
	if p.Line >= len(t.starts) {
		return len(t.s)
	}
	line := t.line(p.Line)
	return t.starts[p.Line] + utf16ToByte(line, p.Character)
}

// position converts a byte offset to a protocol position.
func (t *text) position(off int) Position {
	off = max(0, min(off, len(t.s)))
	// The last line starting at or before off.
	lo, hi := 0, len(t.starts)-1
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if t.starts[mid] <= off {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	line := t.line(lo)
	return Position{Line: lo, Character: utf16Len(line[:min(off-t.starts[lo], len(line))])}
}

// fromLoader converts a loader's position (1-based line and character column; 0 for
// unknown) to a protocol position.
func (t *text) fromLoader(line, col int) Position {
	if line <= 0 {
		return Position{}
	}
	if line > len(t.starts) {
		// Past the end (a finding at the line after the last): kept as the checker
		// says it.
		return Position{Line: line - 1}
	}
	s := t.line(line - 1)
	b := 0
	for c := 1; c < col && b < len(s); c++ {
		_, size := utf8.DecodeRuneInString(s[b:])
		b += size
	}
	return Position{Line: line - 1, Character: utf16Len(s[:b])}
}

// loaderOffset is fromLoader as a byte offset.
func (t *text) loaderOffset(line, col int) int { return t.offset(t.fromLoader(line, col)) }

// rangeOf returns the protocol range of the bytes [from, to).
func (t *text) rangeOf(from, to int) Range {
	return Range{Start: t.position(from), End: t.position(to)}
}

// utf16Len is the length of s in UTF-16 code units (an invalid byte counts as one
// replacement character, as a client decoding the text would see it).
func utf16Len(s string) int {
	n := 0
	for _, r := range s {
		n += utf16.RuneLen(r)
	}
	return n
}

// utf16ToByte returns the byte offset in line of the UTF-16 offset u, clamped to the line;
// an offset inside a surrogate pair counts as the character's start.
func utf16ToByte(line string, u int) int {
	n := 0
	for i, r := range line {
		if n >= u {
			return i
		}
		n += utf16.RuneLen(r)
		if n > u {
			return i
		}
	}
	return len(line)
}

// apply returns s with one content change applied: the whole text when the change has no
// range.
func (t *text) apply(c contentChange) string {
	if c.Range == nil {
		return c.Text
	}
	from, to := t.offset(c.Range.Start), t.offset(c.Range.End)
	if to < from {
		from, to = to, from
	}
	return t.s[:from] + c.Text + t.s[to:]
}
