// Package testtool finds, for the tests that run a program from outside Go, what they run:
// the program on the PATH (dot, git, node), or an npm package of a testdata directory
// (XState, the Mermaid checker), which it installs with npm ci from the directory's
// lockfile when node_modules is missing. When something cannot be had, the test skips
// with a message that names the one command installing it; under CI=true it fails
// instead, for .ci/run installs everything and nothing may skip there.
//
// FSMGEN_NPM_CI=0 keeps the tests from running npm ci: they skip instead, naming it.
package testtool

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Module is the module path of the repository's root.
const Module = "github.com/fsmgen/fsmgen"

// MermaidCheckDir is the repository's Mermaid checker (check.mjs, its package.json and
// lockfile), relative to the repository's root.
const MermaidCheckDir = "internal/mermaid/testdata/mermaid-check"

// Install commands, one for each thing a test may miss (Debian's package names).
const (
	InstallNode     = "apt-get install nodejs npm"
	InstallGraphviz = "apt-get install graphviz"
	InstallGit      = "apt-get install git"
)

// CI reports whether CI is set to true (or 1): a missing program then fails the test.
func CI() bool {
	ci, _ := strconv.ParseBool(os.Getenv("CI"))
	return ci
}

// Missing skips tb for want of something, saying what is missing (format and args) and the
// one command that installs it; under CI=true it fails tb instead.
func Missing(tb testing.TB, install, format string, args ...any) {
	tb.Helper()
	msg := fmt.Sprintf(format, args...)
	if CI() {
		tb.Fatalf("%s; CI=true, so the test may not skip (.ci/run installs it; by hand: %s)", msg, install)
		return
	}
	tb.Skipf("%s; install it with: %s", msg, install)
}

// Program returns the path of the program name on the PATH, or skips tb (fails it under
// CI=true) naming install, the command that installs it.
func Program(tb testing.TB, name, install string) string {
	tb.Helper()
	path, err := exec.LookPath(name)
	if err != nil {
		Missing(tb, install, "%s is not on the PATH", name)
		return ""
	}
	return path
}

// Root returns the repository's root: the nearest directory at or above the working
// directory (a test's package directory) whose go.mod is that of Module.
func Root(tb testing.TB) string {
	tb.Helper()
	dir, err := os.Getwd()
	if err != nil {
		tb.Fatal(err)
	}
	root, ok := findRoot(dir)
	if !ok {
		tb.Fatalf("no go.mod of %s at or above %s", Module, dir)
	}
	return root
}

// findRoot returns the nearest directory at or above dir (absolute) whose go.mod is that
// of Module.
func findRoot(dir string) (string, bool) {
	for d := dir; ; {
		if b, err := os.ReadFile(filepath.Join(d, "go.mod")); err == nil && modulePath(b) == Module {
			return d, true
		}
		up := filepath.Dir(d)
		if up == d {
			return "", false
		}
		d = up
	}
}

func modulePath(gomod []byte) string {
	for line := range strings.Lines(string(gomod)) {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(line), "module "); ok {
			return strings.Trim(strings.TrimSpace(rest), `"`)
		}
	}
	return ""
}

// MermaidCheck returns the path of check.mjs, the Mermaid checker: the one in the directory
// MERMAID_CHECK names when it is set (installed beforehand), else the repository's
// (MermaidCheckDir), installed by NodePackage if need be. Node is on the PATH when it
// returns.
func MermaidCheck(tb testing.TB) string {
	tb.Helper()
	if dir := os.Getenv("MERMAID_CHECK"); dir != "" {
		if Program(tb, "node", InstallNode) == "" {
			return ""
		}
		script := filepath.Join(dir, "check.mjs")
		if _, err := os.Stat(filepath.Join(dir, "node_modules", "mermaid", "package.json")); err != nil {
			tb.Fatalf("MERMAID_CHECK=%s is not an installed Mermaid checker (%v); unset it to use %s", dir, err, MermaidCheckDir)
		}
		if _, err := os.Stat(script); err != nil {
			tb.Fatalf("MERMAID_CHECK=%s: %v; unset it to use %s", dir, err, MermaidCheckDir)
		}
		return script
	}
	dir := filepath.Join(Root(tb), filepath.FromSlash(MermaidCheckDir))
	NodePackage(tb, dir, "mermaid")
	return filepath.Join(dir, "check.mjs")
}

// npmTimeout bounds one npm ci (about 10 s for the Mermaid checker on a fresh machine).
const npmTimeout = 5 * time.Minute

// NodePackage makes sure that the npm package in dir (a package.json and its
// package-lock.json, with the script the test runs) is installed, dir/node_modules holding
// probe, a package of its dependencies, and that node is on the PATH; it skips tb (fails
// it under CI=true) naming the one command that installs what is missing.
//
// When node_modules lacks probe and npm is on the PATH, NodePackage runs npm ci itself,
// from the lockfile, in a directory beside node_modules that it then renames to it, so that
// node_modules is whole or absent even when npm is interrupted; a lock file in dir keeps
// the test processes of several packages from installing at once (the others wait, then
// find it installed). FSMGEN_NPM_CI=0 turns this off.
func NodePackage(tb testing.TB, dir, probe string) {
	tb.Helper()
	rel := relative(dir)
	install := "cd " + rel + " && npm ci"
	if Program(tb, "node", InstallNode) == "" {
		return
	}
	if installed(dir, probe) {
		return
	}
	if off, err := strconv.ParseBool(os.Getenv("FSMGEN_NPM_CI")); err == nil && !off {
		Missing(tb, install, "%s/node_modules/%s is missing (FSMGEN_NPM_CI=0 keeps the tests from running npm ci)", rel, probe)
		return
	}
	if _, err := exec.LookPath("npm"); err != nil {
		Missing(tb, InstallNode, "%s/node_modules/%s is missing, and npm is not on the PATH to install it (then: %s)", rel, probe, install)
		return
	}
	unlock, err := lock(filepath.Join(dir, ".npm-ci.lock"))
	if err != nil {
		tb.Fatalf("npm ci in %s: %v", dir, err)
	}
	defer unlock()
	if installed(dir, probe) { // another package's tests installed it meanwhile
		return
	}
	tb.Logf("%s/node_modules/%s is missing: running npm ci in %s", rel, probe, rel)
	start := time.Now()
	if err := npmCI(dir, probe); err != nil {
		Missing(tb, install, "%s/node_modules/%s is missing, and npm ci failed: %v", rel, probe, err)
		return
	}
	if !installed(dir, probe) {
		tb.Fatalf("npm ci in %s installed no %s", rel, probe)
	}
	tb.Logf("npm ci in %s: %.1fs", rel, time.Since(start).Seconds())
}

// installed reports whether dir/node_modules holds the package probe.
func installed(dir, probe string) bool {
	_, err := os.Stat(filepath.Join(dir, "node_modules", probe, "package.json"))
	return err == nil
}

// npmCI runs npm ci in a new directory inside dir holding dir's package.json and lockfile,
// then moves its node_modules into dir (replacing one without probe, left by an install
// of another lockfile or by hand), unless dir has probe by then.
func npmCI(dir, probe string) error {
	stage, err := os.MkdirTemp(dir, ".npm-ci-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(stage)
	for _, name := range []string{"package.json", "package-lock.json", ".npmrc"} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if errors.Is(err, fs.ErrNotExist) && name == ".npmrc" {
			continue
		}
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(stage, name), b, 0o644); err != nil {
			return err
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), npmTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "npm", "ci", "--no-audit", "--no-fund", "--loglevel=error")
	cmd.Dir = stage
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%v\n%s", err, tail(out.String(), 20))
	}
	if installed(dir, probe) { // installed meanwhile by another process (where there is no lock)
		return nil
	}
	nm := filepath.Join(dir, "node_modules")
	if err := os.RemoveAll(nm); err != nil {
		return err
	}
	return os.Rename(filepath.Join(stage, "node_modules"), nm)
}

// tail is the last n lines of s.
func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// relative is dir relative to the repository's root, with slashes, when dir is inside
// it; else dir.
func relative(dir string) string {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return dir
	}
	root, ok := findRoot(abs)
	if !ok {
		return dir
	}
	rel, err := filepath.Rel(root, abs)
	if err != nil {
		return dir
	}
	return filepath.ToSlash(rel)
}
