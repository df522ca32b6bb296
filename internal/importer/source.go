package importer

import (
	"bytes"
	"sort"
	"unicode/utf8"

	"github.com/fsmgen/fsmgen/internal/diag"
)

// source is an input file: its path as given, its bytes, and where its lines start, to turn
// byte offsets into positions.
type source struct {
	path  string
	data  []byte
	lines []int // byte offset of the start of each line
	// The last position computed (its offset, line index and column): readers ask for
	// positions mostly in order, and on a long line (a minified config is one) counting
	// each column from the line's start would be quadratic.
	lastOff, lastLine, lastCol int
}

func newSource(path string, data []byte) *source {
	s := &source{path: path, data: data, lines: []int{0}}
	for i, b := range data {
		if b == '\n' {
			s.lines = append(s.lines, i+1)
		}
	}
	return s
}

// pos is the position of the byte at offset off: its line, and its column counted in
// characters, both 1-based.
func (s *source) pos(off int) diag.Pos {
	off = min(max(off, 0), len(s.data))
	line := sort.Search(len(s.lines), func(i int) bool { return s.lines[i] > off }) - 1
	var col int
	if s.lastCol > 0 && line == s.lastLine && off >= s.lastOff {
		col = s.lastCol + utf8.RuneCount(s.data[s.lastOff:off])
	} else {
		col = utf8.RuneCount(s.data[s.lines[line]:off]) + 1
	}
	s.lastOff, s.lastLine, s.lastCol = off, line, col
	if line == 0 && off >= 3 && bytes.HasPrefix(s.data, []byte("\ufeff")) {
		col-- // a byte-order mark is not a character of the text
	}
	return diag.Pos{File: s.path, Line: line + 1, Col: col}
}

// start is the position of the file's first character.
func (s *source) start() diag.Pos { return diag.Pos{File: s.path, Line: 1, Col: 1} }

// validate refuses input that no reader should see: too large, or not UTF-8.
func (s *source) validate(ds *diag.List) bool {
	if len(s.data) > maxBytes {
		ds.Errorf(s.start(), "%s is %d bytes; the limit is %d", s.path, len(s.data), maxBytes)
		return false
	}
	if !utf8.Valid(s.data) {
		off := 0
		for off < len(s.data) {
			r, n := utf8.DecodeRune(s.data[off:])
			if r == utf8.RuneError && n == 1 {
				break
			}
			off += n
		}
		ds.Errorf(s.pos(off), "%s is not UTF-8 text (byte 0x%02x)", s.path, s.data[off])
		return false
	}
	return true
}
