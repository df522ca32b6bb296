package importer

import (
	"encoding/json"
	"fmt"

	"github.com/fsmgen/fsmgen/internal/diag"
)

// A JSON value read with the position of every value and key, objects keeping the order of
// their members: encoding/json keeps neither, and the order of an XState config's states
// and transitions is its meaning.
type jkind int

const (
	jObject jkind = iota
	jArray
	jString
	jNumber
	jBool
	jNull
)

func (k jkind) String() string {
	return [...]string{"an object", "an array", "a string", "a number", "a boolean", "null"}[k]
}

type jvalue struct {
	kind    jkind
	pos     diag.Pos
	str     string // a string's value; a number as written
	b       bool
	members []jmember // object members, in order
	elems   []*jvalue // array elements
}

type jmember struct {
	key    string
	keyPos diag.Pos
	value  *jvalue
}

// jsonError is a syntax error at a byte offset.
type jsonError struct {
	off int
	msg string
}

type jparser struct {
	src   *source
	data  []byte
	off   int
	depth int
}

// parseJSON reads one JSON value that makes up the whole of src (after a byte-order mark).
func parseJSON(src *source) (*jvalue, *diag.Diagnostic) {
	p := &jparser{src: src, data: src.data}
	if len(p.data) >= 3 && string(p.data[:3]) == "\ufeff" {
		p.off = 3
	}
	v, err := p.document()
	if err != nil {
		d := diag.Diagnostic{Pos: src.pos(err.off), Severity: diag.Error, Message: err.msg}
		return nil, &d
	}
	return v, nil
}

func (p *jparser) document() (*jvalue, *jsonError) {
	p.space()
	if p.off == len(p.data) {
		return nil, p.fail("json: the file is empty: expected an XState machine config, an object")
	}
	v, err := p.value()
	if err != nil {
		return nil, err
	}
	p.space()
	if p.off < len(p.data) {
		return nil, p.fail("json: %s after the top-level value", p.what())
	}
	return v, nil
}

func (p *jparser) fail(format string, args ...any) *jsonError {
	return &jsonError{off: p.off, msg: fmt.Sprintf(format, args...)}
}

// what describes the character at the current offset, for a message.
func (p *jparser) what() string {
	if p.off >= len(p.data) {
		return "unexpected end of file"
	}
	return fmt.Sprintf("unexpected %q", rune(p.data[p.off]))
}

func (p *jparser) space() {
	for p.off < len(p.data) {
		switch p.data[p.off] {
		case ' ', '\t', '\n', '\r':
			p.off++
		default:
			return
		}
	}
}

func (p *jparser) value() (*jvalue, *jsonError) {
	if p.off >= len(p.data) {
		return nil, p.fail("json: unexpected end of file: expected a value")
	}
	v := &jvalue{pos: p.src.pos(p.off)}
	switch c := p.data[p.off]; {
	case c == '{':
		v.kind = jObject
		return v, p.object(v)
	case c == '[':
		v.kind = jArray
		return v, p.array(v)
	case c == '"':
		v.kind = jString
		s, err := p.string()
		v.str = s
		return v, err
	case c == '-' || c >= '0' && c <= '9':
		v.kind = jNumber
		return v, p.number(v)
	case p.literal("true"):
		v.kind, v.b = jBool, true
	case p.literal("false"):
		v.kind = jBool
	case p.literal("null"):
		v.kind = jNull
	default:
		return nil, p.fail("json: %s: expected a value", p.what())
	}
	return v, nil
}

func (p *jparser) literal(word string) bool {
	if len(p.data)-p.off >= len(word) && string(p.data[p.off:p.off+len(word)]) == word {
		p.off += len(word)
		return true
	}
	return false
}

func (p *jparser) nest() *jsonError {
	p.depth++
	if p.depth > maxDepth {
		return p.fail("json: the config nests deeper than %d levels", maxDepth)
	}
	return nil
}

func (p *jparser) object(v *jvalue) *jsonError {
	if err := p.nest(); err != nil {
		return err
	}
	defer func() { p.depth-- }()
	p.off++ // {
	seen := map[string]diag.Pos{}
	p.space()
	if p.off < len(p.data) && p.data[p.off] == '}' {
		p.off++
		return nil
	}
	for {
		p.space()
		if p.off >= len(p.data) || p.data[p.off] != '"' {
			return p.fail("json: %s: expected a key (a string)", p.what())
		}
		keyOff := p.off
		key, err := p.string()
		if err != nil {
			return err
		}
		if first, dup := seen[key]; dup {
			return &jsonError{off: keyOff, msg: fmt.Sprintf("json: duplicate key %q (first at %d:%d)", key, first.Line, first.Col)}
		}
		keyPos := p.src.pos(keyOff)
		seen[key] = keyPos
		p.space()
		if p.off >= len(p.data) || p.data[p.off] != ':' {
			return p.fail("json: %s: expected ':' after the key %q", p.what(), key)
		}
		p.off++
		p.space()
		val, err := p.value()
		if err != nil {
			return err
		}
		v.members = append(v.members, jmember{key: key, keyPos: keyPos, value: val})
		p.space()
		if p.off < len(p.data) && p.data[p.off] == ',' {
			p.off++
			continue
		}
		if p.off < len(p.data) && p.data[p.off] == '}' {
			p.off++
			return nil
		}
		return p.fail("json: %s: expected ',' or '}' after an object member", p.what())
	}
}

func (p *jparser) array(v *jvalue) *jsonError {
	if err := p.nest(); err != nil {
		return err
	}
	defer func() { p.depth-- }()
	p.off++ // [
	p.space()
	if p.off < len(p.data) && p.data[p.off] == ']' {
		p.off++
		return nil
	}
	for {
		p.space()
		el, err := p.value()
		if err != nil {
			return err
		}
		v.elems = append(v.elems, el)
		p.space()
		if p.off < len(p.data) && p.data[p.off] == ',' {
			p.off++
			continue
		}
		if p.off < len(p.data) && p.data[p.off] == ']' {
			p.off++
			return nil
		}
		return p.fail("json: %s: expected ',' or ']' after an array element", p.what())
	}
}

// string reads a JSON string starting at the quote; encoding/json decodes its escapes.
func (p *jparser) string() (string, *jsonError) {
	start := p.off
	p.off++
	for p.off < len(p.data) {
		switch c := p.data[p.off]; {
		case c == '"':
			p.off++
			var s string
			if err := json.Unmarshal(p.data[start:p.off], &s); err != nil {
				return "", &jsonError{off: start, msg: "json: invalid string: " + err.Error()}
			}
			return s, nil
		case c == '\\':
			p.off += 2
		case c < 0x20:
			return "", p.fail("json: control character %q in a string: write it as an escape", rune(c))
		default:
			p.off++
		}
	}
	return "", &jsonError{off: start, msg: "json: string not terminated"}
}

func (p *jparser) number(v *jvalue) *jsonError {
	start := p.off
	digits := func() int {
		n := 0
		for p.off < len(p.data) && p.data[p.off] >= '0' && p.data[p.off] <= '9' {
			p.off++
			n++
		}
		return n
	}
	if p.data[p.off] == '-' {
		p.off++
	}
	if p.off < len(p.data) && p.data[p.off] == '0' {
		p.off++
	} else if digits() == 0 {
		return p.fail("json: %s: expected a digit", p.what())
	}
	if p.off < len(p.data) && p.data[p.off] == '.' {
		p.off++
		if digits() == 0 {
			return p.fail("json: %s: expected a digit after '.'", p.what())
		}
	}
	if p.off < len(p.data) && (p.data[p.off] == 'e' || p.data[p.off] == 'E') {
		p.off++
		if p.off < len(p.data) && (p.data[p.off] == '+' || p.data[p.off] == '-') {
			p.off++
		}
		if digits() == 0 {
			return p.fail("json: %s: expected a digit in the exponent", p.what())
		}
	}
	v.str = string(p.data[start:p.off])
	return nil
}
