// Command fsmgen is fsmgen that draws SVG: fsmgen diagram --format svg FILE prints the
// picture of a spec's DOT diagram, laid out by Graphviz run as WebAssembly in the process
// (package svg), and fsmgen generate --outputs ...,svg writes <name>.svg beside the
// Markdown document, which shows it. Nothing needs to be installed but Go. Everything else
// is the fsmgen command's.
package main

import (
	"context"
	"os"

	"github.com/fsmgen/fsmgen/internal/cli"
	"github.com/fsmgen/fsmgen/svg"
)

func main() {
	cli.RegisterSVG(svg.Render)
	os.Exit(cli.Run(context.Background(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
