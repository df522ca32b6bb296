// Package svg draws fsmgen's DOT diagrams as SVG pictures in pure Go: Graphviz (12.1.2,
// through github.com/goccy/go-graphviz) compiled to WebAssembly and run by wazero, so
// that a docs pipeline gets a picture with nothing installed but Go: no Graphviz, no
// Node. It is a module of its own so that users of the generator download none of it;
// its command (svg/cmd/fsmgen) is fsmgen with this renderer registered, for fsmgen
// diagram --format svg and fsmgen generate --outputs svg.
//
// The picture is Graphviz's dot layout of the graph, rendered by Graphviz's own SVG
// renderer: every label, tooltip and title is XML-escaped there (<, >, &, quotes, and "-"
// in comments). Text is measured with Graphviz's built-in font metrics (the WebAssembly
// build has no font library), never with the fonts of the machine, and WebAssembly
// arithmetic is the same on every processor, so the same graph gives the same bytes
// everywhere. What Graphviz writes before the <svg> element (the XML declaration, the
// doctype, a comment with its version and one with the graph's name) is left out.
package svg

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/goccy/go-graphviz"
)

// The Graphviz of the process: go-graphviz runs one WebAssembly instance for the whole
// process, which may not be entered by two goroutines at once, and whose Graphviz fails
// now and then to make a context once one was freed; so one context is made, on the first
// render, and kept (mu serialises the renders and guards gv).
var (
	mu sync.Mutex
	gv *graphviz.Graphviz
)

// Render lays out the DOT graph dot with Graphviz's dot engine and returns its SVG
// picture: the <svg> element and its content, ending with a newline. A graph Graphviz
// cannot read is an error. Renders of one process run one at a time; ctx is checked
// before the layout starts (Graphviz's layout itself cannot be interrupted).
func Render(ctx context.Context, dot []byte) (pic []byte, err error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	mu.Lock()
	defer mu.Unlock()
	defer func() {
		// go-graphviz reports some failures of its WebAssembly bridge by panicking.
		if r := recover(); r != nil {
			pic, err = nil, fmt.Errorf("graphviz: %v", r)
		}
	}()
	if gv == nil {
		// No plugins: the SVG renderer and the text metrics built into Graphviz, nothing
		// from go-graphviz's Go side (its PNG and JPEG renderers look for the machine's
		// fonts).
		g, err := graphviz.NewWithPlugins(ctx)
		if err != nil {
			return nil, fmt.Errorf("graphviz: %w", err)
		}
		gv = g
	}
	dot, rewritten := emptyLabels(dot)
	graph, err := graphviz.ParseBytes(dot)
	if err != nil {
		return nil, fmt.Errorf("graphviz: reading the graph: %w", err)
	}
	if graph == nil {
		return nil, errors.New("graphviz: reading the graph: no graph in the input")
	}
	defer graph.Close()
	if rewritten {
		if err := restoreEmptyLabels(graph); err != nil {
			return nil, fmt.Errorf("graphviz: %w", err)
		}
	}
	var b bytes.Buffer
	if err := gv.Render(ctx, graph, graphviz.SVG, &b); err != nil {
		return nil, fmt.Errorf("graphviz: %w", err)
	}
	return element(b.Bytes())
}

// element returns the <svg> element of Graphviz's output, without what comes before it.
func element(out []byte) ([]byte, error) {
	start := bytes.Index(out, []byte("\n<svg "))
	end := bytes.LastIndex(out, []byte("</svg>"))
	if start < 0 || end < start {
		return nil, errors.New("graphviz: the output holds no <svg> element")
	}
	pic := out[start+1 : end+len("</svg>")]
	return append(bytes.Clone(pic), '\n'), nil
}

// go-graphviz gives every node whose label is empty the label \N, its name, when it reads
// a graph: fsmgen's empty labels (the final node, choice points, anchors) would show their
// identifiers, and their nodes grow to hold them. Before it reads the graph, every empty
// label (label="") is written \E, which Graphviz draws as nothing for a node; after, the
// edges' and graphs' labels \E (for which Graphviz draws the edge's name, and keeps room)
// are made empty again.
const emptyLabel = `\E`

// emptyLabels returns dot with every attribute label="" (the name label or "label"
// unquoted or quoted, spaces and comments around "=") written label="\E", and whether
// there was one. Strings, HTML strings and comments are skipped, as DOT reads them.
func emptyLabels(dot []byte) ([]byte, bool) {
	const (
		none = iota
		afterLabel
		afterEquals
	)
	var at []int // the offsets of the empty strings to fill
	state := none
	lineStart := true
	for i := 0; i < len(dot); {
		c := dot[i]
		switch {
		case c == '\n':
			lineStart = true
			i++
			continue
		case c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v':
			i++
			continue
		case c == '#' && lineStart: // a preprocessor line
			for i < len(dot) && dot[i] != '\n' {
				i++
			}
			continue
		case c == '/' && i+1 < len(dot) && dot[i+1] == '/':
			for i < len(dot) && dot[i] != '\n' {
				i++
			}
			continue
		case c == '/' && i+1 < len(dot) && dot[i+1] == '*':
			end := bytes.Index(dot[i+2:], []byte("*/"))
			if end < 0 {
				i = len(dot)
			} else {
				i += 2 + end + 2
			}
			continue
		}
		lineStart = false
		switch {
		case c == '"':
			j := i + 1
			for j < len(dot) && dot[j] != '"' {
				if dot[j] == '\\' {
					j++
				}
				j++
			}
			str := dot[i+1 : min(j, len(dot))]
			switch {
			case state == afterEquals && j == i+1:
				at = append(at, i+1)
				state = none
			case state == none && string(str) == "label":
				state = afterLabel
			default:
				state = none
			}
			i = j + 1
		case c == '<': // an HTML string: balanced angle brackets
			depth := 0
			for ; i < len(dot); i++ {
				if dot[i] == '<' {
					depth++
				} else if dot[i] == '>' {
					if depth--; depth == 0 {
						i++
						break
					}
				}
			}
			state = none
		case c == '=':
			if state == afterLabel {
				state = afterEquals
			} else {
				state = none
			}
			i++
		case c == '_' || c == '.' || c >= 0x80 || '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z':
			j := i
			for j < len(dot) && (dot[j] == '_' || dot[j] == '.' || dot[j] >= 0x80 || '0' <= dot[j] && dot[j] <= '9' || 'a' <= dot[j] && dot[j] <= 'z' || 'A' <= dot[j] && dot[j] <= 'Z') {
				j++
			}
			if string(dot[i:j]) == "label" {
				state = afterLabel
			} else {
				state = none
			}
			i = j
		default:
			state = none
			i++
		}
	}
	if len(at) == 0 {
		return dot, false
	}
	out := make([]byte, 0, len(dot)+len(at)*len(emptyLabel))
	prev := 0
	for _, p := range at {
		out = append(append(out, dot[prev:p]...), emptyLabel...)
		prev = p
	}
	return append(out, dot[prev:]...), true
}

// restoreEmptyLabels makes the labels \E of g's edges, of g and of its subgraphs empty.
func restoreEmptyLabels(g *graphviz.Graph) error {
	for n, err := g.FirstNode(); n != nil || err != nil; n, err = g.NextNode(n) {
		if err != nil {
			return err
		}
		for e, err := g.FirstOut(n); e != nil || err != nil; e, err = g.NextOut(e) {
			if err != nil {
				return err
			}
			if e.Label() == emptyLabel {
				e.SetLabel("")
			}
		}
	}
	var graphs func(g *graphviz.Graph) error
	graphs = func(g *graphviz.Graph) error {
		if g.Label() == emptyLabel {
			g.SetLabel("")
		}
		for s, err := g.FirstSubGraph(); s != nil || err != nil; s, err = s.NextSubGraph() {
			if err != nil {
				return err
			}
			if err := graphs(s); err != nil {
				return err
			}
		}
		return nil
	}
	return graphs(g)
}
