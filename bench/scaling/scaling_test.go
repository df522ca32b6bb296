package main

import (
	"slices"
	"strings"
	"testing"
	"time"
)

// TestSmoke runs the measurement on one 10-state spec, once, so that CI keeps the program
// working; the real measurement is `go run ./scaling` (make bench).
func TestSmoke(t *testing.T) {
	rep, err := Measure(Options{Sizes: []int{10}, Events: 20, Per: 7, Repeat: 1, Limit: time.Minute, GoTest: 10})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Stopped != "" || len(rep.Sizes) != 1 {
		t.Fatalf("stopped: %q, %d sizes", rep.Stopped, len(rep.Sizes))
	}
	r := rep.Sizes[0]
	if r.Full.OutBytes == 0 || !slices.Contains(r.Full.OutFiles, "scale_fsm_test.go") ||
		slices.Contains(r.NoTest.OutFiles, "scale_fsm_test.go") || !slices.Contains(r.NoTest.OutFiles, "scale_fsm.go") {
		t.Errorf("outputs: with tests %v, without %v", r.Full.OutFiles, r.NoTest.OutFiles)
	}
	if r.Full.MaxRSSKB == 0 || r.Full.Median <= 0 {
		t.Errorf("no measurement: %+v", r.Full)
	}
	for name, run := range map[string]*Run{"go build": r.Build, "go vet": r.Vet, "go test": r.GoTest} {
		if run == nil || run.Error != "" || run.TimedOut || run.Median <= 0 {
			t.Errorf("%s of the output: %+v", name, run)
		}
	}
	if tab := Table(rep); !strings.Contains(tab, "| 10 |") {
		t.Errorf("table:\n%s", tab)
	}
}

func TestStages(t *testing.T) {
	top := `Duration: 21.25s, Total samples = 21.63s (101.78%)
      flat  flat%   sum%        cum   cum%
         0     0%     0%     16.54s 76.47%  github.com/fsmgen/fsmgen/internal/cli.(*command).generate
         0     0%     0%     11.79s 54.51%  github.com/fsmgen/fsmgen/internal/testgen.Generate
         0     0% 0.046%      6.94s 32.09%  go/format.Source
`
	got := Stages(top)
	for _, want := range []string{"Duration", "cli.(*command).generate", "testgen.Generate", "go/format.Source"} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %q in\n%s", want, got)
		}
	}
}
