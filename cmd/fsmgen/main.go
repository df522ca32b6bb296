// Command fsmgen turns declarative YAML state-machine specs into Go code, tests, diagrams
// and documents. Run `fsmgen help` for the verbs.
package main

import (
	"context"
	"os"

	"github.com/fsmgen/fsmgen/internal/cli"
)

func main() {
	os.Exit(cli.Run(context.Background(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
