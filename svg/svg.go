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
	graph, err := graphviz.ParseBytes(dot)
	if err != nil {
		return nil, fmt.Errorf("graphviz: reading the graph: %w", err)
	}
	if graph == nil {
		return nil, errors.New("graphviz: reading the graph: no graph in the input")
	}
	defer graph.Close()
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
