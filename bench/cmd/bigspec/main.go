// Command bigspec writes the spec of the big benchmark machine (50 states, 20 events),
// bench/big/big.fsm.yaml, from specgen.Big. Run it from bench/ (or via go generate in
// bench/big), then generate the Go code with fsmgen:
//
//	go run ./cmd/bigspec -o big/big.fsm.yaml
//	go tool fsmgen generate --outputs go -o big big/big.fsm.yaml
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/fsmgen/fsmgen/bench/specgen"
)

func main() {
	out := flag.String("o", "big/big.fsm.yaml", "output `file` (- for standard output)")
	flag.Parse()
	data := specgen.Big().YAML()
	if *out == "-" {
		os.Stdout.Write(data)
		return
	}
	if err := os.WriteFile(*out, data, 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "bigspec:", err)
		os.Exit(1)
	}
}
