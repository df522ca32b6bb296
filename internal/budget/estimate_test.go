package budget

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"testing"

	"github.com/fsmgen/fsmgen/internal/dot"
	"github.com/fsmgen/fsmgen/internal/gogen"
	"github.com/fsmgen/fsmgen/internal/ir"
	"github.com/fsmgen/fsmgen/internal/lower"
	"github.com/fsmgen/fsmgen/internal/markdown"
	"github.com/fsmgen/fsmgen/internal/mermaid"
	"github.com/fsmgen/fsmgen/internal/output"
	"github.com/fsmgen/fsmgen/internal/testgen"
)

var kinds = []string{"go", "tests", "mermaid", "markdown", "dot"}

// emitted renders one output the way generate does and returns its size.
func emitted(t *testing.T, kind string, m *ir.Machine) int64 {
	t.Helper()
	const src = "spec.fsm.yaml"
	var data []byte
	var err error
	switch kind {
	case "go":
		data, err = gogen.Generate(m, src)
	case "tests":
		data, err = testgen.Generate(m, src)
	case "mermaid":
		data = output.Stamp("spec.mmd", mermaid.File(m), src)
	case "markdown":
		data, err = markdown.Document(m, mermaid.StateDiagram(m))
		data = output.Stamp("spec.md", data, src)
	case "dot":
		data = output.Stamp("spec.dot", []byte(dot.Graph(m)), src)
	default:
		t.Fatalf("unknown kind %q", kind)
	}
	if err != nil {
		t.Fatalf("%s: %v", kind, err)
	}
	return int64(len(data))
}

// repositorySpecs reads every spec the repository generates from: the examples, the
// benchmark machines, the interpreter's spec that uses every construct.
func repositorySpecs(t *testing.T) map[string][]byte {
	t.Helper()
	var paths []string
	for _, pat := range []string{"../../examples/*/*.fsm.yaml", "../../examples/*/*/*.fsm.yaml", "../../bench/*/*.fsm.yaml", "../interp/testdata/*.fsm.yaml", "../importer/testdata/*/*.fsm.yaml", "../lower/testdata/build/*.fsm.yaml"} {
		ps, err := filepath.Glob(pat)
		if err != nil {
			t.Fatal(err)
		}
		paths = append(paths, ps...)
	}
	if len(paths) < 9 {
		t.Fatalf("found only %d specs: %v", len(paths), paths)
	}
	specs := map[string][]byte{}
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		specs[strings.TrimPrefix(filepath.ToSlash(p), "../../")] = data
	}
	return specs
}

// specPath is where the spec repositorySpecs names name is, from here: a spec's
// migrations name older specs relative to it.
func specPath(name string) string {
	if strings.HasPrefix(name, "../") {
		return name
	}
	return "../../" + name
}

func load(t *testing.T, name string, src []byte) *ir.Machine {
	t.Helper()
	m, ds := lower.Load(name, src)
	if m == nil {
		if len(ds) > 3 {
			ds = ds[:3]
		}
		t.Fatalf("%s: %v", name, ds)
	}
	return m
}

func sortedNames(specs map[string][]byte) []string {
	var names []string
	for n := range specs {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// TestEstimateIsClose compares the estimate of every output with what the emitters write,
// for the repository's specs and for synthetic machines of other shapes: every output and
// the total are within a factor of 1.5.
func TestEstimateIsClose(t *testing.T) {
	specs := repositorySpecs(t)
	scale := 1
	if raceDetector {
		scale = 4
	}
	specs[fmt.Sprintf("wide %d×%[1]d", 150/scale)] = wideSpec(150/scale, 150/scale)
	specs[fmt.Sprintf("scaling %d states", 1000/scale)] = scalingSpec(1000/scale, 20, 7)
	specs[fmt.Sprintf("constructs %d×12", 60/scale)] = featureSpec(60/scale, 12)
	specs[fmt.Sprintf("fan-in %d×%[1]d", 80/scale)] = faninSpec(80/scale, 80/scale)
	specs[fmt.Sprintf("history %d×20", 100/scale)] = historySpec(100/scale, 20)
	// The shapes the estimate once missed: many timeout levels on every state, many guarded
	// transitions of one (state, event) pair, many fields every state requires.
	specs[fmt.Sprintf("levels %d×50", 100/scale)] = levelsSpec(100/scale, 50)
	specs[fmt.Sprintf("guarded %d", 200/scale)] = guardedSpec(200 / scale)
	specs[fmt.Sprintf("required %d×50", 40/scale)] = requiredSpec(40/scale, 50)
	const factor = 1.5
	for _, name := range sortedNames(specs) {
		m := load(t, specPath(name), specs[name])
		est := Of(m, kinds)
		var total int64
		for _, p := range est.Parts {
			got := emitted(t, p.Kind, m)
			total += got
			r := float64(p.Bytes) / float64(got)
			t.Logf("%-36s %-8s estimate %9d written %9d (%.2f)", name, p.Kind, p.Bytes, got, r)
			if r > factor || r < 1/factor {
				t.Errorf("%s: %s: estimate %d, written %d: off by more than %.1fx", name, p.Kind, p.Bytes, got, factor)
			}
		}
		if r := float64(est.Total()) / float64(total); r > factor || r < 1/factor {
			t.Errorf("%s: total: estimate %d, written %d", name, est.Total(), total)
		}
	}
}

// TestDefaultFitsRepositorySpecs checks that the default budget leaves room: every spec of
// the repository, and the largest machine of the scaling benchmark (20,000 states, about
// 100 MB written; its shape at 2,000 states, times ten), fit with a margin.
func TestDefaultFitsRepositorySpecs(t *testing.T) {
	specs := repositorySpecs(t)
	for _, name := range sortedNames(specs) {
		est := Of(load(t, specPath(name), specs[name]), kinds)
		if err := Check(est, Default); err != nil || est.Total() > int64(Default)/100 {
			t.Errorf("%s: estimate %s, budget %s: %v", name, Size(est.Total()), Default, err)
		}
	}
	est := Of(load(t, "scaling", scalingSpec(2000, 20, 7)), []string{"go", "tests", "mermaid", "markdown"})
	if big := 10 * est.Total(); big > int64(Default)*10/12 {
		t.Errorf("the scaling benchmark's 20,000 states would be estimated at about %s, too close to the budget %s", Size(big), Default)
	}
}

// TestRefusesWideSpec is the report's machine at half its size (the command's test runs it
// whole): 1,000 states and 1,000 events with one transition from every state per event.
// The estimate refuses it, with the numbers and the flag.
func TestRefusesWideSpec(t *testing.T) {
	m := load(t, "wide.fsm.yaml", wideSpec(1000, 1000))
	est := Of(m, []string{"go", "tests", "mermaid", "markdown"})
	err := Check(est, Default)
	if err == nil {
		t.Fatalf("not refused: estimate %s", Size(est.Total()))
	}
	for _, want := range []string{"wide.fsm.yaml: generate would write about ", " of it Go tests (1,000 states × 1,000 events)", "the budget is 128 MB", "raise it with --max-output-size="} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("message lacks %q:\n%s", want, err)
		}
	}
	// Without the tests it fits: the message says so.
	if !strings.HasSuffix(err.Error(), ", or leave the tests out with --no-tests") {
		t.Errorf("does not suggest --no-tests:\n%s", err)
	}
	if err := Check(Of(m, []string{"go", "mermaid", "markdown"}), Default); err != nil {
		t.Errorf("without the tests: %v", err)
	}
	// What the flag suggests is enough.
	_, raise, _ := strings.Cut(err.Error(), "--max-output-size=")
	raise, _, _ = strings.Cut(raise, ",")
	limit, perr := ParseSize(raise)
	if perr != nil || Check(est, limit) != nil {
		t.Errorf("the suggested --max-output-size=%s does not pass: %v, %v", raise, perr, Check(est, limit))
	}
}

// TestEstimateBoundsOddShapes: the report's machines, each a small spec whose outputs are
// large for a reason other than states × events, are estimated past the budget (each ran
// out of memory or time while estimated well under it).
func TestEstimateBoundsOddShapes(t *testing.T) {
	for name, spec := range map[string][]byte{
		"1,000 timeout levels on 2,000 states":        levelsSpec(2000, 1000),
		"20,000 guarded transitions of one pair":      guardedSpec(20000),
		"3,000 required fields on each of 300 states": requiredSpec(300, 3000),
	} {
		est := Of(load(t, name, spec), kinds)
		t.Logf("%s: %d bytes of spec, estimate %s", name, len(spec), Size(est.Total()))
		if Check(est, Default) == nil {
			t.Errorf("%s: estimate %s, within the budget %s", name, Size(est.Total()), Default)
		}
	}
}

// TestEstimateBuildsNothing checks that the estimate costs a small fraction of what it
// estimates: it allocates per state and per transition, never per (state, event) pair or
// per byte of output.
func TestEstimateBuildsNothing(t *testing.T) {
	for _, n := range []int{200, 400} {
		m := load(t, "wide", wideSpec(n, n))
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		est := Of(m, kinds)
		runtime.ReadMemStats(&after)
		allocated := after.TotalAlloc - before.TotalAlloc
		// A few words per state and per transition: the marks, the lists by target.
		if limit := uint64(96*len(m.States) + 32*len(m.Transitions) + 4096); allocated > limit {
			t.Errorf("%d×%d: the estimate allocated %d bytes (estimating %d), want at most %d", n, n, allocated, est.Total(), limit)
		}
	}
}

func TestCheck(t *testing.T) {
	est := Estimate{Source: "a.fsm.yaml", States: 300, Events: 40, Rows: 900,
		Parts: []Part{{"go", 2 << 20}, {"tests", 90 << 20}, {"mermaid", 1 << 20}}}
	if err := Check(est, 100<<20); err != nil {
		t.Errorf("93 MB under 100 MB: %v", err)
	}
	if err := Check(est, 0); err != nil {
		t.Errorf("no limit: %v", err)
	}
	err := Check(est, 64<<20)
	want := "a.fsm.yaml: generate would write about 93 MB, 90 MB of it Go tests (300 states × 40 events); the budget is 64 MB; raise it with --max-output-size=93MB, or leave the tests out with --no-tests"
	if err == nil || err.Error() != want {
		t.Errorf("got  %v\nwant %s", err, want)
	}
	// Without the tests it would still be over: --no-tests is not suggested.
	both := Estimate{Source: "c.fsm.yaml", States: 2000, Events: 2000, Rows: 4_000_000,
		Parts: []Part{{"tests", 500 << 20}, {"markdown", 300 << 20}}}
	err = Check(both, Default)
	want = "c.fsm.yaml: generate would write about 800 MB, 500 MB of it Go tests (2,000 states × 2,000 events); the budget is 128 MB; raise it with --max-output-size=800MB"
	if err == nil || err.Error() != want {
		t.Errorf("got  %v\nwant %s", err, want)
	}
	one := Estimate{Source: "b.fsm.yaml", States: 3, Events: 2, Rows: 1_234_567, Parts: []Part{{"markdown", 3<<30 + 1}}}
	err = Check(one, Default)
	want = "b.fsm.yaml: generate would write about 3 GB of Markdown (1,234,567 transitions once their sources are expanded); the budget is 128 MB; raise it with --max-output-size=4GB"
	if err == nil || err.Error() != want {
		t.Errorf("got  %v\nwant %s", err, want)
	}
}
