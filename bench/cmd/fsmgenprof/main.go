// Command fsmgenprof is fsmgen with profiling, for finding where generation spends its
// time: it runs the same command line as fsmgen and writes a CPU profile to the file named
// by FSMGEN_CPUPROFILE and a heap profile (after the run) to FSMGEN_MEMPROFILE, when set.
//
//	FSMGEN_CPUPROFILE=cpu.pprof go run ./cmd/fsmgenprof generate -o out spec.fsm.yaml
//	go tool pprof -top cpu.pprof
//
// It lives in the bench module, whose import path is under the fsmgen module's, so it may
// import internal/cli; bench/scaling uses it with -profile.
package main

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"

	"github.com/fsmgen/fsmgen/internal/cli"
)

func main() {
	os.Exit(run())
}

func run() int {
	if path := os.Getenv("FSMGEN_CPUPROFILE"); path != "" {
		f, err := os.Create(path)
		if err != nil {
			fmt.Fprintln(os.Stderr, "fsmgenprof:", err)
			return 2
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			fmt.Fprintln(os.Stderr, "fsmgenprof:", err)
			return 2
		}
		defer pprof.StopCPUProfile()
	}
	code := cli.Run(context.Background(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	if path := os.Getenv("FSMGEN_MEMPROFILE"); path != "" {
		f, err := os.Create(path)
		if err != nil {
			fmt.Fprintln(os.Stderr, "fsmgenprof:", err)
			return 2
		}
		defer f.Close()
		runtime.GC()
		if err := pprof.Lookup("allocs").WriteTo(f, 0); err != nil {
			fmt.Fprintln(os.Stderr, "fsmgenprof:", err)
			return 2
		}
	}
	return code
}
