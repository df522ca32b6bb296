package importer

import (
	"bytes"
	"encoding/xml"
	"errors"
	"io"
	"strings"

	"github.com/fsmgen/fsmgen/internal/diag"
)

// An XML element read with the positions of itself, its attributes and its text.
type xelem struct {
	space string // namespace URL, "" for none
	name  string // local name
	pos   diag.Pos
	attrs []xattr
	kids  []*xelem
	text  []xtext
}

type xattr struct {
	space, name, value string
	pos                diag.Pos
}

type xtext struct {
	s   string
	pos diag.Pos
}

// parseXML reads the document's root element.
func parseXML(src *source) (*xelem, *diag.Diagnostic) {
	d := xml.NewDecoder(bytes.NewReader(src.data))
	fail := func(off int, msg string) (*xelem, *diag.Diagnostic) {
		return nil, &diag.Diagnostic{Pos: src.pos(off), Severity: diag.Error, Message: msg}
	}
	var root *xelem
	var stack []*xelem
	for {
		off := int(d.InputOffset())
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			var se *xml.SyntaxError
			if errors.As(err, &se) {
				return fail(int(d.InputOffset()), "xml: "+se.Msg)
			}
			return fail(int(d.InputOffset()), "xml: "+err.Error())
		}
		switch t := tok.(type) {
		case xml.StartElement:
			e := &xelem{space: t.Name.Space, name: t.Name.Local, pos: src.pos(off)}
			offs := attrOffsets(src.data[off:int(d.InputOffset())])
			for i, a := range t.Attr {
				p := e.pos
				if len(offs) == len(t.Attr) {
					p = src.pos(off + offs[i])
				}
				e.attrs = append(e.attrs, xattr{space: a.Name.Space, name: a.Name.Local, value: a.Value, pos: p})
			}
			switch {
			case len(stack) > 0:
				top := stack[len(stack)-1]
				top.kids = append(top.kids, e)
			case root != nil:
				return fail(off, "xml: a second root element <"+t.Name.Local+">: a document has one")
			default:
				root = e
			}
			stack = append(stack, e)
			if len(stack) > maxDepth {
				return fail(off, "xml: the document nests deeper than 100 levels")
			}
		case xml.EndElement:
			stack = stack[:len(stack)-1]
		case xml.CharData:
			if len(stack) > 0 {
				top := stack[len(stack)-1]
				top.text = append(top.text, xtext{string(t), src.pos(off)})
			}
		}
	}
	if root == nil {
		return fail(0, "xml: the document has no root element: expected <scxml>")
	}
	return root, nil
}

// attrOffsets returns the offset of each attribute's name in a start tag, in order.
func attrOffsets(tag []byte) []int {
	space := func(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }
	i := 1
	for i < len(tag) && !space(tag[i]) && tag[i] != '/' && tag[i] != '>' {
		i++
	}
	var offs []int
	for {
		for i < len(tag) && space(tag[i]) {
			i++
		}
		if i >= len(tag) || tag[i] == '/' || tag[i] == '>' {
			return offs
		}
		offs = append(offs, i)
		for i < len(tag) && tag[i] != '=' {
			i++
		}
		i++
		for i < len(tag) && space(tag[i]) {
			i++
		}
		if i >= len(tag) {
			return offs
		}
		q := tag[i]
		i++
		for i < len(tag) && tag[i] != q {
			i++
		}
		i++
	}
}

// textOf is the element's character data, and the position of its first non-space
// character (the element's when it has none).
func (e *xelem) textOf() (string, diag.Pos) {
	var b strings.Builder
	p := e.pos
	found := false
	for _, t := range e.text {
		if !found {
			if i := strings.IndexFunc(t.s, func(r rune) bool { return !isSpace(r) }); i >= 0 {
				found = true
				p = t.pos
				// The position of the first non-space character within t.
				for _, r := range t.s[:i] {
					if r == '\n' {
						p.Line++
						p.Col = 1
					} else {
						p.Col++
					}
				}
			}
		}
		b.WriteString(t.s)
	}
	return b.String(), p
}

func isSpace(r rune) bool { return r == ' ' || r == '\t' || r == '\n' || r == '\r' }
