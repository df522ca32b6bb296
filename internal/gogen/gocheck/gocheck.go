// Package gocheck holds specs to the bar every spec the checker accepts must meet: each
// one's outputs (Go code and tests, Mermaid, Markdown, DOT) come out without an error, the
// Go is gofmt-clean, and in one throwaway module that holds a package per spec, one go vet
// and one go test pass over all of them: the code vets clean, compiles, and passes its
// generated tests. Tests and fuzz targets use it; it needs no network (the module replaces
// fsmgen with the repository and copies its go.sum, and the module cache holds the rest).
package gocheck

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"go/format"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fsmgen/fsmgen/internal/dot"
	"github.com/fsmgen/fsmgen/internal/gogen"
	"github.com/fsmgen/fsmgen/internal/lower"
	"github.com/fsmgen/fsmgen/internal/markdown"
	"github.com/fsmgen/fsmgen/internal/mermaid"
	"github.com/fsmgen/fsmgen/internal/testgen"
)

// modulePath is the path of the throwaway module; package i of it is modulePath/p<i>.
const modulePath = "fsmcheck"

// specPath is the path every spec is generated as (it appears in the generated header).
const specPath = "spec.fsm.yaml"

// Module is a throwaway Go module that generated packages are added to.
type Module struct {
	dir   string
	names []string // by package index: the name of the spec it was generated from
}

// New makes an empty module in a temporary directory of t. root is the repository's root
// (relative paths are taken from the test's directory).
func New(t testing.TB, root string) *Module {
	t.Helper()
	root, err := filepath.Abs(root)
	if err != nil {
		t.Fatal(err)
	}
	gomod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	goLine := regexp.MustCompile(`(?m)^go [0-9.]+$`).Find(gomod)
	if goLine == nil {
		t.Fatalf("%s/go.mod has no go line", root)
	}
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	mod := fmt.Sprintf("module %s\n\n%s\n\nrequire github.com/fsmgen/fsmgen v0.0.0\n\nreplace github.com/fsmgen/fsmgen => %s\n",
		modulePath, goLine, strconv.Quote(root))
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte(mod), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "go.sum"), sum, 0o644); err != nil {
		t.Fatal(err)
	}
	return &Module{dir: dir}
}

// Len is the number of packages added.
func (m *Module) Len() int { return len(m.names) }

// Add checks the spec and, when the checker accepts it, renders every output and adds the
// Go code and tests as the module's next package. It reports whether the checker accepted
// the spec, and an error when an output fails or the Go is not gofmt-clean.
func (m *Module) Add(name string, data []byte) (bool, error) {
	mach, ds := lower.Load(name, data) // name: where a spec's migrations find older specs
	if ds.HasErrors() {
		return false, nil
	}
	code, err := gogen.Generate(mach, specPath)
	if err != nil {
		return true, fmt.Errorf("%s: Go code: %v", name, err)
	}
	tests, err := testgen.Generate(mach, specPath)
	if err != nil {
		return true, fmt.Errorf("%s: tests: %v", name, err)
	}
	diagram := mermaid.StateDiagram(mach)
	if _, err := markdown.Document(mach, diagram); err != nil {
		return true, fmt.Errorf("%s: Markdown: %v", name, err)
	}
	_ = mermaid.File(mach)
	_ = dot.Graph(mach)
	files := []struct {
		name string
		data []byte
	}{{gogen.Filename(specPath), code}, {testgen.Filename(gogen.Base(specPath)), tests}}
	for _, f := range files {
		formatted, err := format.Source(f.data)
		if err != nil {
			return true, fmt.Errorf("%s: %s does not parse: %v", name, f.name, err)
		}
		if !bytes.Equal(formatted, f.data) {
			return true, fmt.Errorf("%s: %s is not gofmt-clean", name, f.name)
		}
	}
	pkg := filepath.Join(m.dir, "p"+strconv.Itoa(len(m.names)))
	if err := os.MkdirAll(pkg, 0o755); err != nil {
		return true, err
	}
	for _, f := range files {
		if err := os.WriteFile(filepath.Join(pkg, f.name), f.data, 0o644); err != nil {
			return true, err
		}
	}
	m.names = append(m.names, name)
	return true, nil
}

// Check runs go vet, then go test, over every package added, and fails t when either
// fails or some package's tests did not run, naming the specs of the packages at fault.
func (m *Module) Check(t testing.TB) {
	t.Helper()
	if len(m.names) == 0 {
		return
	}
	if out, err := m.goCmd("vet", "./..."); err != nil {
		t.Fatalf("go vet: %v\n%s%s", err, out, m.blame(out))
	}
	out, err := m.goCmd("test", "./...")
	if err != nil {
		t.Fatalf("go test: %v\n%s%s", err, out, m.blame(out))
	}
	for i, name := range m.names {
		re := regexp.MustCompile(`(?m)^ok\s+` + regexp.QuoteMeta(pkgPath(i)) + `\s+[^\[]*$`)
		if !re.Match(out) {
			t.Errorf("%s (%s): the generated tests did not run\n%s", name, pkgPath(i), out)
		}
	}
}

func pkgPath(i int) string { return modulePath + "/p" + strconv.Itoa(i) }

// blame names the spec of every package the go command's output mentions.
func (m *Module) blame(out []byte) string {
	var b strings.Builder
	for i, name := range m.names {
		re := regexp.MustCompile(`(^|[\s/])p` + strconv.Itoa(i) + `[/\s]`)
		if re.Match(out) {
			fmt.Fprintf(&b, "%s is %s\n", pkgPath(i), name)
		}
	}
	return b.String()
}

// goCmd runs the go command in the module, offline, and returns its combined output.
func (m *Module) goCmd(args ...string) ([]byte, error) {
	cmd := exec.Command("go", args...)
	cmd.Dir = m.dir
	// -trimpath: the throwaway module is in a new directory each run; without it the
	// directory is part of what the build cache keys on, and nothing of it is reused.
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod -trimpath", "GOWORK=off", "GOPROXY=off", "GOTOOLCHAIN=local")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		return out.Bytes(), fmt.Errorf("running go: %v", err)
	}
	return out.Bytes(), err
}

// Sampler returns what a fuzz target does with an input the checker may accept: outside
// fuzzing (-fuzz), nothing; under fuzzing, for a sample of the inputs, build and test the
// spec in a module of its own, failing t as Check does (an input the checker refuses
// passes). Building and testing a spec's code takes a second or two, thousands of times
// the rest of a fuzz call, so after a build that took d the next input is built d later at
// the earliest: builds take about half of a worker's time. Each sampled input is built on
// its own: batching would save little (compiling and linking each package's tests is most
// of the cost) and would blame a failure on whichever input completed the batch, which is
// the one the fuzzer saves and minimizes. root is as for New.
func Sampler(root string) func(t *testing.T, data []byte) {
	if fz := flag.Lookup("test.fuzz"); fz == nil || fz.Value.String() == "" {
		return func(*testing.T, []byte) {}
	}
	var next time.Time // per fuzz worker process, which calls the target one input at a time
	return func(t *testing.T, data []byte) {
		t.Helper()
		if time.Now().Before(next) {
			return
		}
		start := time.Now()
		m := New(t, root)
		if _, err := m.Add("the fuzz input", data); err != nil {
			t.Fatal(err)
		}
		m.Check(t)
		next = time.Now().Add(time.Since(start))
	}
}

// Input is one input of a fuzz target's saved corpus.
type Input struct {
	Path string
	Data []byte
}

// Corpus reads the inputs the fuzzer saved for a target whose one argument is []byte, in
// dir (testdata/fuzz/<target>), so that a test can hold them to the bar in every run; none
// when dir does not exist.
func Corpus(t testing.TB, dir string) []Input {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(dir, "*"))
	if err != nil {
		t.Fatal(err)
	}
	var out []Input
	for _, p := range paths {
		file, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		header, rest, _ := strings.Cut(string(file), "\n")
		rest = strings.TrimSpace(rest)
		if header != "go test fuzz v1" || !strings.HasPrefix(rest, "[]byte(") || !strings.HasSuffix(rest, ")") {
			t.Fatalf("%s: not a corpus file of one []byte", p)
		}
		s, err := strconv.Unquote(rest[len("[]byte(") : len(rest)-1])
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		out = append(out, Input{p, []byte(s)})
	}
	return out
}
