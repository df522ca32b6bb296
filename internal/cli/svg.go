package cli

import (
	"context"
	"fmt"
	"strings"
)

// SVGRenderer lays out a DOT graph and returns its picture: the <svg> element alone,
// without an XML declaration or anything else before it (fsmgen puts its generated header
// there), the same bytes for the same graph.
type SVGRenderer func(ctx context.Context, dot []byte) ([]byte, error)

var svgRender SVGRenderer

// RegisterSVG makes fsmgen diagram --format svg and generate --outputs svg draw the DOT
// diagram with render. The fsmgen command links no Graphviz, so that users of the
// generator download none; the module github.com/fsmgen/fsmgen/svg builds an fsmgen that
// registers its renderer (Graphviz run as WebAssembly: svg/cmd/fsmgen). A main package
// calls it before Run.
func RegisterSVG(render SVGRenderer) { svgRender = render }

// svgCommand runs the fsmgen that draws SVG.
const svgCommand = "go run github.com/fsmgen/fsmgen/svg/cmd/fsmgen"

// noSVG is the usage error of a command that asks for SVG from an fsmgen that registered
// no renderer; verbArgs is the rest of the command line that draws it with the fsmgen
// that does.
func (c *command) noSVG(what, verbArgs string) int {
	return c.usageErr("%s: this fsmgen draws no SVG (it links no Graphviz, so that the generator's users download none); the fsmgen of module github.com/fsmgen/fsmgen/svg does, with nothing else installed: %s %s", what, svgCommand, verbArgs)
}

// renderSVG draws the DOT graph dot with the registered renderer.
func renderSVG(ctx context.Context, dot []byte) ([]byte, error) {
	if svgRender == nil {
		return nil, fmt.Errorf("svg: no renderer registered (run %s)", svgCommand)
	}
	pic, err := svgRender(ctx, dot)
	if err != nil {
		return nil, fmt.Errorf("svg: %w", err)
	}
	if !strings.HasPrefix(string(pic), "<svg") {
		return nil, fmt.Errorf("svg: the renderer returned no <svg> element")
	}
	return pic, nil
}
