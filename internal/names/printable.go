package names

import (
	"strings"
	"unicode"
)

// Unprintable reports whether r is a character that a name may not hold because it is
// invisible or changes how the text around it is shown: a control character (C0, DEL, C1),
// a format character (Unicode category Cf: the bidirectional controls, the zero-width
// characters, the byte-order mark, the soft hyphen...), the line and paragraph separators
// U+2028 and U+2029, and the noncharacters (U+FDD0-U+FDEF, and the last two code points of
// every plane, as U+FFFE).
func Unprintable(r rune) bool {
	switch {
	case r < 0x20 || r >= 0x7f && r < 0xa0:
		return true
	case r < 0x7f:
		return false
	case r >= 0xfdd0 && r <= 0xfdef, r&0xfffe == 0xfffe:
		return true
	}
	return unicode.In(r, unicode.Cf, unicode.Zl, unicode.Zp)
}

// FirstUnprintable returns the first rune of s that Unprintable refuses, and whether there
// is one.
func FirstUnprintable(s string) (rune, bool) {
	for _, r := range s {
		if Unprintable(r) {
			return r, true
		}
	}
	return 0, false
}

// DescribeUnprintable says in a few words what kind of character r is, for a message that
// refuses it ("a bidirectional text control"). r is one that Unprintable refuses.
func DescribeUnprintable(r rune) string {
	switch {
	case r == '\ufeff':
		return "the byte-order mark"
	case r == '\u2028':
		return "the line separator"
	case r == '\u2029':
		return "the paragraph separator"
	case r < 0xa0:
		return "a control character"
	case r == '\u061c' || r == '\u200e' || r == '\u200f' || r >= '\u202a' && r <= '\u202e' || r >= '\u2066' && r <= '\u2069':
		return "a bidirectional text control"
	case r >= '\u200b' && r <= '\u200d' || r == '\u2060':
		return "a zero-width character"
	case r >= 0xfdd0 && r <= 0xfdef, r&0xfffe == 0xfffe:
		return "a noncharacter"
	}
	return "an invisible formatting character"
}

// CleanText prepares free text from a spec (a doc, a message) for an output that shows it:
// the characters Unprintable refuses in names are left out, except that a line feed, a
// carriage return and U+2028 and U+2029 become line feeds and a tab becomes a space, so
// that the text keeps its lines and nothing in it can reorder, hide or split what a reader
// sees. The result holds no control character other than the line feed.
func CleanText(s string) string {
	if _, ok := FirstUnprintable(s); !ok {
		return s
	}
	s = strings.ReplaceAll(s, "\r\n", "\n")
	return strings.Map(func(r rune) rune {
		switch {
		case r == '\n' || r == '\r' || r == '\u2028' || r == '\u2029':
			return '\n'
		case r == '\t':
			return ' '
		case Unprintable(r):
			return -1
		}
		return r
	}, s)
}

// Bare returns the Go identifier id, made by GoName, in a form that can stand without a
// prefix and is exported: id itself when it starts with an upper-case letter, otherwise
// prefix+id. An identifier may start with a digit (2faSent) or with a letter that has no
// case (受理, unexported in Go), so the payload type of an event is named
// Bare("Event", id)+"Payload": Event2faSentPayload, Event受理Payload, but TaskCreatedPayload.
func Bare(prefix, id string) string {
	if Exported(id) {
		return id
	}
	return prefix + id
}
