//go:build unix

package testtool

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// recorder is a testing.TB that records a skip or a failure instead of ending the test.
type recorder struct {
	testing.TB
	mu            sync.Mutex
	skip, fatal   string
	logs          []string
	skipped, died bool
}

func (r *recorder) Helper() {}

func (r *recorder) Skipf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.skipped, r.skip = true, fmt.Sprintf(format, args...)
}

func (r *recorder) Fatalf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.died, r.fatal = true, fmt.Sprintf(format, args...)
}

func (r *recorder) Fatal(args ...any) { r.Fatalf("%s", fmt.Sprint(args...)) }

func (r *recorder) Logf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.logs = append(r.logs, fmt.Sprintf(format, args...))
}

func TestMissing(t *testing.T) {
	t.Setenv("CI", "")
	var r recorder
	Missing(&r, InstallGraphviz, "dot is not on the PATH")
	if !r.skipped || r.died || r.skip != "dot is not on the PATH; install it with: apt-get install graphviz" {
		t.Errorf("without CI: skipped %v (%q), failed %v", r.skipped, r.skip, r.died)
	}
	t.Setenv("CI", "true")
	r = recorder{}
	Missing(&r, InstallGraphviz, "dot is not on the PATH")
	if r.skipped || !r.died || !strings.Contains(r.fatal, "CI=true, so the test may not skip") || !strings.Contains(r.fatal, InstallGraphviz) {
		t.Errorf("under CI=true: skipped %v, failed %v (%q)", r.skipped, r.died, r.fatal)
	}
}

func TestProgram(t *testing.T) {
	t.Setenv("CI", "")
	t.Setenv("PATH", t.TempDir())
	var r recorder
	if p := Program(&r, "dot", InstallGraphviz); p != "" || !r.skipped || !strings.Contains(r.skip, "dot is not on the PATH") {
		t.Errorf("got %q, skipped %v (%q)", p, r.skipped, r.skip)
	}
}

func TestRoot(t *testing.T) {
	root := Root(t)
	if _, err := os.Stat(filepath.Join(root, "internal", "testtool", "testtool.go")); err != nil {
		t.Error(err)
	}
	if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(MermaidCheckDir), "package-lock.json")); err != nil {
		t.Error(err)
	}
	if got := relative(filepath.Join(root, "internal", "testtool")); got != "internal/testtool" {
		t.Errorf("relative: %q", got)
	}
}

// fakeNode puts a node and an npm of shell on the PATH, before the real ones. The npm
// (ci only) appends a line to the file it returns, then, unless fail, installs the package
// dep.
func fakeNode(t *testing.T, fail bool) (count string) {
	t.Helper()
	bin := t.TempDir()
	count = filepath.Join(t.TempDir(), "count")
	npm := "#!/bin/sh\n[ \"$1\" = ci ] || exit 2\necho ci >> '" + count + "'\n"
	if fail {
		npm += "echo 'npm error network request failed' >&2\nexit 1\n"
	} else {
		npm += "sleep 0.2\nmkdir -p node_modules/dep && echo '{}' > node_modules/dep/package.json\n"
	}
	for name, script := range map[string]string{"node": "#!/bin/sh\nexit 0\n", "npm": npm} {
		if err := os.WriteFile(filepath.Join(bin, name), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	return count
}

func npmPackage(t *testing.T) string {
	dir := t.TempDir()
	for name, text := range map[string]string{
		"package.json":      `{"name":"x","private":true,"dependencies":{"dep":"1.0.0"}}`,
		"package-lock.json": `{"name":"x","lockfileVersion":3}`,
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func lines(t *testing.T, path string) int {
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return 0
	}
	if err != nil {
		t.Fatal(err)
	}
	return strings.Count(string(b), "\n")
}

// TestNodePackageInstallsOnce: tests of several packages needing one npm package at once
// install it once, and find it installed.
func TestNodePackageInstallsOnce(t *testing.T) {
	t.Setenv("CI", "")
	t.Setenv("FSMGEN_NPM_CI", "")
	count := fakeNode(t, false)
	dir := npmPackage(t)
	var wg sync.WaitGroup
	rs := make([]recorder, 4)
	for i := range rs {
		wg.Go(func() { NodePackage(&rs[i], dir, "dep") })
	}
	wg.Wait()
	for i := range rs {
		if rs[i].skipped || rs[i].died {
			t.Errorf("%d: skipped %q, failed %q", i, rs[i].skip, rs[i].fatal)
		}
	}
	if n := lines(t, count); n != 1 {
		t.Errorf("npm ci ran %d times", n)
	}
	if !installed(dir, "dep") {
		t.Error("not installed")
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".npm-ci-*")); len(left) > 0 {
		t.Errorf("left behind: %v", left)
	}
	var r recorder
	NodePackage(&r, dir, "dep")
	if n := lines(t, count); n != 1 || r.skipped || r.died {
		t.Errorf("installed: npm ci ran again (%d) or the test ended: %q %q", n, r.skip, r.fatal)
	}
}

// TestNodePackageFails: npm ci failing (offline) skips the test with npm's error and the
// command, leaves no node_modules, and fails the test under CI=true.
func TestNodePackageFails(t *testing.T) {
	t.Setenv("CI", "")
	t.Setenv("FSMGEN_NPM_CI", "")
	fakeNode(t, true)
	dir := npmPackage(t)
	var r recorder
	NodePackage(&r, dir, "dep")
	if !r.skipped || !strings.Contains(r.skip, "npm error network request failed") || !strings.HasSuffix(r.skip, "install it with: cd "+dir+" && npm ci") {
		t.Errorf("skipped %v: %q", r.skipped, r.skip)
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules")); !os.IsNotExist(err) {
		t.Errorf("node_modules: %v", err)
	}
	t.Setenv("CI", "true")
	r = recorder{}
	NodePackage(&r, dir, "dep")
	if r.skipped || !r.died {
		t.Errorf("under CI=true: skipped %q", r.skip)
	}
}

// TestNodePackageOff: FSMGEN_NPM_CI=0 skips without running npm; without node the test
// names the command that installs node.
func TestNodePackageOff(t *testing.T) {
	t.Setenv("CI", "")
	t.Setenv("FSMGEN_NPM_CI", "0")
	count := fakeNode(t, false)
	dir := npmPackage(t)
	var r recorder
	NodePackage(&r, dir, "dep")
	if !r.skipped || !strings.Contains(r.skip, "FSMGEN_NPM_CI=0") || lines(t, count) != 0 {
		t.Errorf("skipped %v: %q; npm ci ran %d times", r.skipped, r.skip, lines(t, count))
	}
	t.Setenv("PATH", t.TempDir())
	r = recorder{}
	NodePackage(&r, dir, "dep")
	if !r.skipped || !strings.HasSuffix(r.skip, "install it with: "+InstallNode) {
		t.Errorf("without node: %q", r.skip)
	}
}
