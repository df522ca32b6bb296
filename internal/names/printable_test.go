package names

import (
	"testing"
	"unicode"
)

func TestUnprintable(t *testing.T) {
	for _, r := range []rune{
		0, '\t', '\n', '\r', 0x1f, 0x7f, 0x80, 0x85, 0x9f, // C0, DEL, C1
		0x200e, 0x200f, 0x061c, 0x202a, 0x202b, 0x202c, 0x202d, 0x202e, 0x2066, 0x2067, 0x2068, 0x2069, // bidirectional controls
		0x200b, 0x200c, 0x200d, 0x2060, 0xfeff, // zero-width characters, byte-order mark
		0x2028, 0x2029, // separators
		0x00ad, 0xe0001, 0xfff9, // other format characters: soft hyphen, language tag, annotation
		0xfdd0, 0xfdef, 0xfffe, 0xffff, 0x1fffe, 0x10ffff, // noncharacters
	} {
		if !Unprintable(r) {
			t.Errorf("Unprintable(%U) = false", r)
		}
	}
	for _, r := range []rune{' ', 'a', '|', '\\', '"', '`', 0xa0, 0xe9, 0x3000, 0x53d7, 0x1f600, 0xfe0f, 0x0301, 0xe000, 0xfdf0, 0xfffd} {
		if Unprintable(r) {
			t.Errorf("Unprintable(%U) = true", r)
		}
	}
	// No graphic character is refused; every control, format and separator character
	// other than the space characters is.
	for r := rune(0); r <= unicode.MaxRune; r++ {
		switch {
		case unicode.IsGraphic(r) && Unprintable(r):
			t.Errorf("graphic %U is refused", r)
		case unicode.In(r, unicode.Cc, unicode.Cf, unicode.Zl, unicode.Zp) && !Unprintable(r):
			t.Errorf("%U is accepted", r)
		}
	}
}

func TestFirstUnprintable(t *testing.T) {
	if r, ok := FirstUnprintable("in_progress é 受理 | \\"); ok {
		t.Errorf("found %U", r)
	}
	if r, ok := FirstUnprintable("a\u200bb\ufeff"); !ok || r != 0x200b {
		t.Errorf("got %U, %v", r, ok)
	}
}

func TestDescribeUnprintable(t *testing.T) {
	for r, want := range map[rune]string{
		0xfeff: "the byte-order mark",
		0x2028: "the line separator",
		0x2029: "the paragraph separator",
		0x01:   "a control character",
		0x85:   "a control character",
		0x202e: "a bidirectional text control",
		0x200e: "a bidirectional text control",
		0x2067: "a bidirectional text control",
		0x200d: "a zero-width character",
		0x2060: "a zero-width character",
		0xfffe: "a noncharacter",
		0x00ad: "an invisible formatting character",
	} {
		if got := DescribeUnprintable(r); got != want {
			t.Errorf("DescribeUnprintable(%U) = %q, want %q", r, got, want)
		}
	}
}

func TestCleanText(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"plain text\nwith lines", "plain text\nwith lines"},
		{"a\r\nb\rc\u2028d\u2029e", "a\nb\nc\nd\ne"},
		{"\ufeffBOM\u202e RLO\u2066 isolate\u2069 zw\u200b\u200c\u200d\u2060 lrm\u200e", "BOM RLO isolate zw lrm"},
		{"tab\there, C1\u0085 NUL\x00 DEL\x7f", "tab here, C1 NUL DEL"},
		{"日本語 ✓ 👩\u200d💻", "日本語 ✓ 👩💻"},
	} {
		if got := CleanText(tc.in); got != tc.want {
			t.Errorf("CleanText(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestBare(t *testing.T) {
	for _, tc := range []struct{ id, want string }{
		{"TaskCreated", "TaskCreated"},
		{"2faSent", "Event2faSent"},
		{"受理", "Event受理"},
		{"État", "État"},
	} {
		if got := Bare("Event", tc.id); got != tc.want {
			t.Errorf("Bare(Event, %q) = %q, want %q", tc.id, got, tc.want)
		}
	}
}
