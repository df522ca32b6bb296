// Command scaling measures how `fsmgen generate` scales with the size of a spec. It builds
// fsmgen once, writes synthetic specs (specgen.Synthetic: n states, a fixed number of
// events, about 7 transitions per state) and times the whole pipeline, load, check,
// lower, emit Go and, unless --no-tests, the exhaustive tests, as a user runs it: a fresh
// process per run, wall time and peak RSS (getrusage's ru_maxrss) of that process.
// Optionally it also compiles and runs the generated tests (`go test`) for the smaller
// sizes, and profiles the largest size with bench/cmd/fsmgenprof.
//
// Run it from the bench module:
//
//	go run ./scaling -json scaling.json
//
// A run that takes longer than -limit is killed and ends the measurement: larger sizes are
// not tried. The results go to -json for cmd/report and, as a table, to standard output.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/fsmgen/fsmgen/bench/specgen"
)

// Result is one spec size.
type Result struct {
	States      int `json:"states"`
	Events      int `json:"events"`
	Transitions int `json:"transitions"`
	SpecBytes   int `json:"spec_bytes"`

	// With tests (the default of fsmgen generate) and with --no-tests.
	Full   *Run `json:"full,omitempty"`
	NoTest *Run `json:"no_tests,omitempty"`

	// Build is `go build` of the generated package (--no-tests output), Vet is `go vet` of
	// the package with its generated tests, GoTest `go test` of it (compile and run), each
	// from a cold build cache for the package, when measured.
	Build  *Run `json:"go_build,omitempty"`
	Vet    *Run `json:"go_vet,omitempty"`
	GoTest *Run `json:"go_test,omitempty"`
}

// Run is the measurement of one command over -repeat runs.
type Run struct {
	WallSec  []float64 `json:"wall_sec"`    // every run
	Median   float64   `json:"median_sec"`  // median wall time
	CPUSec   float64   `json:"cpu_sec"`     // user+system of the median run
	MaxRSSKB int64     `json:"max_rss_kib"` // the largest peak RSS over the runs
	OutBytes int64     `json:"out_bytes"`   // bytes written (generated files)
	OutFiles []string  `json:"out_files"`   // their names
	TimedOut bool      `json:"timed_out"`   // killed at -limit
	Error    string    `json:"error,omitempty"`
}

// Report is the whole measurement.
type Report struct {
	Sizes      []Result `json:"sizes"`
	PerState   int      `json:"transitions_per_state"`
	Repeat     int      `json:"repeat"`
	LimitSec   float64  `json:"limit_sec"`
	Stopped    string   `json:"stopped,omitempty"` // why larger sizes were not measured
	Profile    string   `json:"profile,omitempty"` // pprof -top -cum of the largest size, selected lines
	Table      string   `json:"table"`             // the Markdown table of Table
	ProfiledAt int      `json:"profiled_states,omitempty"`
}

// Options say what to measure.
type Options struct {
	Sizes   []int
	Events  int
	Per     int
	Repeat  int
	Limit   time.Duration
	GoTest  int  // go test the output up to this many states
	Profile bool // profile the largest size that finished
	Keep    bool // keep the temporary directory
}

func main() {
	sizesFlag := flag.String("sizes", "100,1000,5000,20000", "comma-separated numbers of states")
	var o Options
	flag.IntVar(&o.Events, "events", 20, "number of events in every spec")
	flag.IntVar(&o.Per, "per", 7, "transitions per state")
	flag.IntVar(&o.Repeat, "repeat", 3, "runs per size and mode (the median is reported)")
	flag.DurationVar(&o.Limit, "limit", 2*time.Minute, "give up on a run, and on larger sizes, after this long")
	flag.IntVar(&o.GoTest, "gotest", 5000, "also `go test` the generated package up to this many states (0: never)")
	flag.BoolVar(&o.Profile, "profile", false, "profile generation of the largest size that finished (bench/cmd/fsmgenprof)")
	flag.BoolVar(&o.Keep, "keep", false, "keep the temporary directory")
	jsonOut := flag.String("json", "", "write the results as JSON to this `file`")
	flag.Parse()

	var err error
	if o.Sizes, err = parseSizes(*sizesFlag); err != nil {
		fatal(err)
	}
	rep, err := Measure(o)
	if err != nil {
		fatal(err)
	}
	rep.Table = Table(rep)
	fmt.Print(rep.Table)
	if rep.Stopped != "" {
		fmt.Println("\n" + rep.Stopped)
	}
	if *jsonOut != "" {
		data, _ := json.MarshalIndent(rep, "", "  ")
		if err := os.WriteFile(*jsonOut, append(data, '\n'), 0o644); err != nil {
			fatal(err)
		}
	}
}

// Measure builds fsmgen and measures every size in o.Sizes, stopping at the first size
// that fails or takes longer than o.Limit.
func Measure(o Options) (Report, error) {
	rep := Report{PerState: o.Per, Repeat: o.Repeat, LimitSec: o.Limit.Seconds()}
	tmp, err := os.MkdirTemp("", "fsmgen-scaling-")
	if err != nil {
		return rep, err
	}
	if o.Keep {
		fmt.Fprintln(os.Stderr, "scaling: keeping", tmp)
	} else {
		defer os.RemoveAll(tmp)
	}

	bin := filepath.Join(tmp, "fsmgen")
	fmt.Fprintln(os.Stderr, "scaling: building fsmgen")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/fsmgen/fsmgen/cmd/fsmgen").CombinedOutput(); err != nil {
		return rep, fmt.Errorf("go build fsmgen: %v\n%s", err, out)
	}

	// The fsmgen module this program builds with, whose runtime the generated code imports.
	dir, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/fsmgen/fsmgen").Output()
	if err != nil {
		return rep, fmt.Errorf("locating the fsmgen module: %v", err)
	}
	repo := strings.TrimSpace(string(dir))

	largest := 0
	for _, n := range o.Sizes {
		m := specgen.Synthetic("Scale", "scale", n, o.Events, o.Per)
		spec := m.YAML()
		dir := filepath.Join(tmp, fmt.Sprintf("s%d", n))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return rep, err
		}
		specPath := filepath.Join(dir, "scale.fsm.yaml")
		if err := os.WriteFile(specPath, spec, 0o644); err != nil {
			return rep, err
		}
		r := Result{States: n, Events: o.Events, Transitions: len(m.Transitions), SpecBytes: len(spec)}
		fmt.Fprintf(os.Stderr, "scaling: %d states, %d transitions\n", n, len(m.Transitions))

		full := filepath.Join(dir, "full")
		r.Full = measure(o.Repeat, o.Limit, full, bin, "generate", "-o", full, specPath)
		if r.Full.TimedOut || r.Full.Error != "" {
			rep.Sizes = append(rep.Sizes, r)
			rep.Stopped = stopReason(n, "fsmgen generate", r.Full, o.Limit)
			break
		}
		lean := filepath.Join(dir, "lean")
		r.NoTest = measure(o.Repeat, o.Limit, lean, bin, "generate", "--no-tests", "-o", lean, specPath)
		if r.NoTest.TimedOut || r.NoTest.Error != "" {
			rep.Sizes = append(rep.Sizes, r)
			rep.Stopped = stopReason(n, "fsmgen generate --no-tests", r.NoTest, o.Limit)
			break
		}
		largest = n
		r.Build = goRun(lean, repo, o.Limit, "build", ".")
		r.Vet = goRun(full, repo, o.Limit, "vet", ".")
		if n <= o.GoTest {
			r.GoTest = goRun(full, repo, o.Limit, "test", "-count=1", ".")
		}
		rep.Sizes = append(rep.Sizes, r)
	}

	if o.Profile && largest > 0 {
		rep.ProfiledAt = largest
		rep.Profile, err = profileRun(tmp, filepath.Join(tmp, fmt.Sprintf("s%d", largest), "scale.fsm.yaml"))
		if err != nil {
			fmt.Fprintln(os.Stderr, "scaling: profile:", err)
		}
	}
	return rep, nil
}

func stopReason(n int, what string, r *Run, limit time.Duration) string {
	if r.TimedOut {
		return fmt.Sprintf("%s on %d states took longer than %s and was stopped; larger sizes were not tried", what, n, limit)
	}
	return fmt.Sprintf("%s on %d states failed: %s", what, n, r.Error)
}

func parseSizes(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 3 {
			return nil, fmt.Errorf("bad size %q (need integers >= 3)", f)
		}
		out = append(out, n)
	}
	return out, nil
}

// measure runs the command repeat times (stopping at the first failure or timeout),
// clearing outDir before each run, and sums up the runs.
func measure(repeat int, limit time.Duration, outDir string, name string, args ...string) *Run {
	r := &Run{}
	type one struct {
		wall, cpu float64
	}
	var runs []one
	for range repeat {
		if outDir != "" {
			os.RemoveAll(outDir)
		}
		wall, cpu, rss, err := runOnce(limit, "", nil, name, args...)
		r.MaxRSSKB = max(r.MaxRSSKB, rss)
		if err != nil {
			if errors.Is(err, context.DeadlineExceeded) {
				r.TimedOut = true
			} else {
				r.Error = err.Error()
			}
			r.WallSec = append(r.WallSec, wall)
			r.Median = wall
			return r
		}
		r.WallSec = append(r.WallSec, wall)
		runs = append(runs, one{wall, cpu})
	}
	slices.SortFunc(runs, func(a, b one) int {
		switch {
		case a.wall < b.wall:
			return -1
		case a.wall > b.wall:
			return 1
		}
		return 0
	})
	mid := runs[len(runs)/2]
	r.Median, r.CPUSec = mid.wall, mid.cpu
	if outDir != "" {
		entries, _ := os.ReadDir(outDir)
		for _, e := range entries {
			if info, err := e.Info(); err == nil {
				r.OutBytes += info.Size()
				r.OutFiles = append(r.OutFiles, e.Name())
			}
		}
	}
	return r
}

// runOnce runs one process and returns its wall time, user+system time and peak RSS
// (KiB; on Linux ru_maxrss of the process and the descendants it waited for).
func runOnce(limit time.Duration, dir string, env []string, name string, args ...string) (wall, cpu float64, rssKB int64, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	if env != nil {
		cmd.Env = append(os.Environ(), env...)
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	err = cmd.Run()
	wall = time.Since(start).Seconds()
	if ps := cmd.ProcessState; ps != nil {
		cpu = (ps.UserTime() + ps.SystemTime()).Seconds()
		if ru, ok := ps.SysUsage().(*syscall.Rusage); ok {
			rssKB = int64(ru.Maxrss)
		}
	}
	if ctx.Err() != nil {
		return wall, cpu, rssKB, context.DeadlineExceeded
	}
	if err != nil {
		msg := strings.TrimSpace(out.String())
		if len(msg) > 2000 {
			msg = msg[:2000] + "..."
		}
		return wall, cpu, rssKB, fmt.Errorf("%s %s: %v: %s", filepath.Base(name), strings.Join(args, " "), err, msg)
	}
	return wall, cpu, rssKB, nil
}

// goRun runs the go command with args (build, vet or test) on the generated package in dir,
// as a module of its own. A nonce file keeps the build cache from answering for a package
// it has seen before, so the time includes compiling the generated package (and its tests);
// the standard library and the runtime package stay cached. The generated code imports the
// runtime (fsmrt) of the fsmgen module in directory repo.
func goRun(dir, repo string, limit time.Duration, args ...string) *Run {
	r := &Run{}
	mod := "module scale\n\ngo 1.26\n\nrequire github.com/fsmgen/fsmgen v0.0.0\n\nreplace github.com/fsmgen/fsmgen => " + strconv.Quote(repo) + "\n"
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte(mod), 0o644); err != nil {
		r.Error = err.Error()
		return r
	}
	nonce := fmt.Sprintf("package scale\n\n// nonce %d keeps the build cache cold for this package.\n", time.Now().UnixNano())
	if err := os.WriteFile(filepath.Join(dir, "nonce.go"), []byte(nonce), 0o644); err != nil {
		r.Error = err.Error()
		return r
	}
	wall, cpu, rss, err := runOnce(limit, dir, []string{"GOFLAGS=-buildvcs=false -mod=mod"}, "go", args...)
	r.WallSec, r.Median, r.CPUSec, r.MaxRSSKB = []float64{wall}, wall, cpu, rss
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			r.TimedOut = true
		} else {
			r.Error = err.Error()
		}
	}
	return r
}

// profileRun builds bench/cmd/fsmgenprof, generates spec with a CPU profile and returns the
// profile's cumulative view, cut down to the pipeline's stages.
func profileRun(tmp, spec string) (string, error) {
	bin := filepath.Join(tmp, "fsmgenprof")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/fsmgen/fsmgen/bench/cmd/fsmgenprof").CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build fsmgenprof: %v\n%s", err, out)
	}
	prof := filepath.Join(tmp, "cpu.pprof")
	out := filepath.Join(tmp, "profiled")
	cmd := exec.Command(bin, "generate", "-o", out, spec)
	cmd.Env = append(os.Environ(), "FSMGEN_CPUPROFILE="+prof)
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("fsmgenprof: %v\n%s", err, b)
	}
	top, err := exec.Command("go", "tool", "pprof", "-top", "-cum", "-nodecount=300", bin, prof).Output()
	if err != nil {
		return "", fmt.Errorf("pprof: %v", err)
	}
	return Stages(string(top)), nil
}

// stages are the functions of the pipeline worth showing, in pipeline order.
var stages = []string{
	"internal/cli.(*command).generate",
	"internal/lower.Load",
	"internal/gogen.Generate",
	"jennifer/jen.(*File).Render",
	"internal/testgen.Generate",
	"internal/testgen.Build",
	"internal/testgen.(*oracle).paths",
	"internal/testgen.clone",
	"text/template.(*Template).Execute",
	"go/format.Source",
	"go/printer.(*printer).nodeSize",
	"internal/output.Write",
	"runtime.gcBgMarkWorker",
	"runtime.mallocgc",
}

// Stages picks the header and the stage lines out of `pprof -top -cum` output.
func Stages(top string) string {
	var b strings.Builder
	lines := strings.Split(top, "\n")
	for _, l := range lines {
		if strings.HasPrefix(l, "Duration:") || strings.Contains(l, "flat%") {
			b.WriteString(l + "\n")
		}
	}
	for _, s := range stages {
		for _, l := range lines {
			if strings.HasSuffix(strings.TrimSpace(l), s) || strings.HasSuffix(strings.TrimSpace(l), s+" (inline)") {
				b.WriteString(l + "\n")
				break
			}
		}
	}
	return b.String()
}

// Table formats the report as Markdown: one row per size, with the ratio of each step to
// the one before.
func Table(rep Report) string {
	var b strings.Builder
	b.WriteString("| states | transitions | spec | generate (Go + tests) | ratio | peak RSS | output | --no-tests | ratio | peak RSS | go build | go vet (with tests) | go test |\n")
	b.WriteString("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	var prev *Result
	for i := range rep.Sizes {
		r := &rep.Sizes[i]
		fmt.Fprintf(&b, "| %d | %d | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n",
			r.States, r.Transitions, kib(int64(r.SpecBytes)),
			secs(r.Full), ratio(prev, r, func(x *Result) *Run { return x.Full }), rss(r.Full), out(r.Full),
			secs(r.NoTest), ratio(prev, r, func(x *Result) *Run { return x.NoTest }), rss(r.NoTest),
			goTestCell(r.Build), goTestCell(r.Vet), goTestCell(r.GoTest))
		prev = r
	}
	return b.String()
}

func secs(r *Run) string {
	switch {
	case r == nil:
		return "–"
	case r.TimedOut:
		return fmt.Sprintf("> %.0f s (stopped)", r.Median)
	case r.Error != "":
		return "failed"
	}
	return fmt.Sprintf("%.3g s", r.Median)
}

func rss(r *Run) string {
	if r == nil || r.MaxRSSKB == 0 {
		return "–"
	}
	return fmt.Sprintf("%.0f MiB", float64(r.MaxRSSKB)/1024)
}

func out(r *Run) string {
	if r == nil || r.OutBytes == 0 {
		return "–"
	}
	return kib(r.OutBytes)
}

func kib(n int64) string {
	switch {
	case n >= 10<<20:
		return fmt.Sprintf("%.0f MiB", float64(n)/(1<<20))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%.0f KiB", float64(n)/1024)
}

func ratio(prev, cur *Result, pick func(*Result) *Run) string {
	if prev == nil {
		return ""
	}
	a, c := pick(prev), pick(cur)
	if a == nil || c == nil || a.Median == 0 || c.Error != "" {
		return "–"
	}
	s := fmt.Sprintf("%.1fx for %.0fx states", c.Median/a.Median, float64(cur.States)/float64(prev.States))
	if c.TimedOut {
		s = "> " + s
	}
	return s
}

func goTestCell(r *Run) string {
	switch {
	case r == nil:
		return "not run"
	case r.TimedOut:
		return fmt.Sprintf("> %.0f s (stopped)", r.Median)
	case r.Error != "":
		return "FAILED"
	}
	return fmt.Sprintf("%.3g s, %s", r.Median, rss(r))
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "scaling:", err)
	os.Exit(1)
}
