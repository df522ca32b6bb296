// Command chartspec writes the specs of the chart benchmark's machines from bench/specgen:
// the statechart (specgen.Chart, bench/chart/chart.fsm.yaml), the same statechart with an
// entry and an exit action (specgen.ChartActions, bench/chartact/chartact.fsm.yaml) and its
// flat twin of the same size (specgen.ChartFlat, bench/chartflat/chartflat.fsm.yaml). Run it
// from bench/ (or via go generate in those directories), then generate the Go code with
// fsmgen:
//
//	go run ./cmd/chartspec -machine chart -o chart/chart.fsm.yaml
//	go tool fsmgen generate --outputs go -o chart chart/chart.fsm.yaml
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/fsmgen/fsmgen/bench/specgen"
)

func main() {
	machine := flag.String("machine", "chart", "which spec: chart, chartact or chartflat")
	out := flag.String("o", "", "output `file` (- for standard output; default <machine>/<machine>.fsm.yaml)")
	flag.Parse()
	var data []byte
	switch *machine {
	case "chart":
		data = specgen.Chart().YAML()
	case "chartact":
		data = specgen.ChartActions().YAML()
	case "chartflat":
		data = specgen.ChartFlat().YAML()
	default:
		fmt.Fprintf(os.Stderr, "chartspec: unknown machine %q (chart, chartact or chartflat)\n", *machine)
		os.Exit(2)
	}
	if *out == "" {
		*out = *machine + "/" + *machine + ".fsm.yaml"
	}
	if *out == "-" {
		os.Stdout.Write(data)
		return
	}
	if err := os.WriteFile(*out, data, 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "chartspec:", err)
		os.Exit(1)
	}
}
