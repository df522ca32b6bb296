//go:build fsmcover

package fsmrt

import (
	"encoding/json"
	"fmt"
	"os"
	"sync"
)

// coverOn is true with the build tag fsmcover: the engine records what it fires.
const coverOn = true

// CoverDirEnv names the environment variable that says where a build with the tag fsmcover
// writes its coverage records.
const CoverDirEnv = "FSMGEN_COVERDIR"

// cover is the process's coverage file and the records written to it.
var cover struct {
	sync.Mutex
	seen map[CoverRecord]bool
	f    *os.File
	off  bool // nowhere to write: said once
}

// coverWrite appends r to the process's coverage file unless it wrote it already. A
// record written before costs a map look-up and no allocation.
func coverWrite(r CoverRecord) {
	cover.Lock()
	defer cover.Unlock()
	if cover.off || cover.seen[r] {
		return
	}
	if cover.f == nil {
		dir := os.Getenv(CoverDirEnv)
		if dir == "" {
			cover.off = true
			fmt.Fprintf(os.Stderr, "fsmrt: built with -tags fsmcover, but %s names no directory: no coverage is recorded\n", CoverDirEnv)
			return
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			cover.off = true
			fmt.Fprintf(os.Stderr, "fsmrt: coverage: %v\n", err)
			return
		}
		f, err := os.CreateTemp(dir, "fsmcover-*.jsonl")
		if err != nil {
			cover.off = true
			fmt.Fprintf(os.Stderr, "fsmrt: coverage: %v\n", err)
			return
		}
		cover.f, cover.seen = f, map[CoverRecord]bool{}
	}
	b, err := json.Marshal(r)
	if err != nil {
		return
	}
	if _, err := cover.f.Write(append(b, '\n')); err != nil {
		cover.off = true
		fmt.Fprintf(os.Stderr, "fsmrt: coverage: %v\n", err)
		return
	}
	cover.seen[r] = true
}
