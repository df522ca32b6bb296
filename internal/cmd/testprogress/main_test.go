package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

func TestPrinter(t *testing.T) {
	var b strings.Builder
	p := newPrinter(&b)
	p.read(strings.NewReader(strings.Join([]string{
		`{"Action":"start","Package":"a"}`,
		`{"Action":"start","Package":"b"}`,
		`{"Action":"run","Package":"b","Test":"TestSlow"}`,
		`{"Action":"output","Package":"b","Test":"TestSlow","Output":"quiet\n"}`,
		`{"Action":"pass","Package":"b","Test":"TestSlow","Elapsed":12.5}`,
		`{"Action":"run","Package":"a","Test":"TestBad"}`,
		`{"Action":"run","Package":"a","Test":"TestBad/sub"}`,
		`{"Action":"output","Package":"a","Test":"TestBad/sub","Output":"    bad_test.go:3: boom\n"}`,
		`{"Action":"fail","Package":"a","Test":"TestBad/sub","Elapsed":0}`,
		`{"Action":"fail","Package":"a","Test":"TestBad","Elapsed":0.1}`,
		`{"Action":"output","Package":"a","Output":"FAIL\n"}`,
		`{"Action":"fail","Package":"a","Elapsed":0.2}`,
		`{"Action":"pass","Package":"b","Elapsed":13}`,
		`{"ImportPath":"d [d.test]","Action":"build-output","Output":"# d [d.test]\n"}`,
		`{"ImportPath":"d [d.test]","Action":"build-output","Output":"d/d.go:3:12: undefined: x\n"}`,
		`{"ImportPath":"d [d.test]","Action":"build-fail"}`,
		`{"Action":"start","Package":"d"}`,
		`{"Action":"output","Package":"d","Output":"FAIL\td [build failed]\n"}`,
		`{"Action":"fail","Package":"d","Elapsed":0,"FailedBuild":"d [d.test]"}`,
		`# c`,
		`c/c.go:1:1: expected 'package'`,
	}, "\n")))
	// In the order things finish; a failing test's output in full; a quiet fast one not at all.
	want := "     b TestSlow (12.5s)\n" +
		"    bad_test.go:3: boom\n" +
		"FAIL\nFAIL a (0.2s)\n" +
		"ok   b (13.0s)\n" +
		"# d [d.test]\nd/d.go:3:12: undefined: x\n" +
		"FAIL\td [build failed]\nFAIL d (0.0s)\n" +
		"# c\nc/c.go:1:1: expected 'package'\n"
	if got := b.String(); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	if len(p.running) != 0 {
		t.Errorf("still running: %v", p.running)
	}
}

// TestTimedOut feeds the printer what go test -json really writes for a package whose
// test binary runs out of time (a tiny module made for it, -timeout 1s), after two tests
// that skip: the skips each get a SKIP line with their reason, and the package's failure
// shows go test's panic with the tests that were running, the goroutine dump, and a FAIL
// line that names them.
func TestTimedOut(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"go.mod": "module example.com/slow\n\ngo 1.26\n",
		"slow_test.go": `package slow

import (
	"testing"
	"time"
)

func TestQuick(t *testing.T) {}

func TestSkipped(t *testing.T) {
	t.Skip("dot is not on the PATH; install it with: apt-get install graphviz")
}

func TestParent(t *testing.T) {
	t.Run("child", func(t *testing.T) { t.Skipf("no %s here", "FIFO") })
}

func TestSleeps(t *testing.T) {
	t.Run("inner", func(t *testing.T) { time.Sleep(time.Minute) })
}
`,
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command("go", "test", "-json", "-count=1", "-timeout", "1s", ".")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOFLAGS=", "GOWORK=off", "GOTOOLCHAIN=local")
	out, err := cmd.Output()
	if err == nil {
		t.Fatalf("go test passed:\n%s", out)
	}

	var b strings.Builder
	p := newPrinter(&b)
	p.read(bytes.NewReader(out))
	p.summary()
	got := b.String()
	for _, want := range []string{
		"SKIP example.com/slow TestSkipped: slow_test.go:11: dot is not on the PATH; install it with: apt-get install graphviz\n",
		"SKIP example.com/slow TestParent/child: slow_test.go:15: no FIFO here\n",
		"panic: test timed out after 1s\n",
		"\trunning tests:\n",
		"\t\tTestSleeps/inner (",
		"goroutine ",
		"example.com/slow.TestSleeps.func1(",
		"time.Sleep(",
		"\nSKIP 2 tests skipped: their SKIP lines above say why\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("no %q in:\n%s", want, got)
		}
	}
	fail := regexp.MustCompile(`(?m)^FAIL example\.com/slow \([0-9.]+s\): test timed out after 1s running TestSleeps \([0-9]+s\), TestSleeps/inner \([0-9]+s\)$`)
	if !fail.MatchString(got) {
		t.Errorf("no FAIL line naming the tests in:\n%s", got)
	}
	if strings.Contains(got, "TestQuick") {
		t.Errorf("a quick test that passed is shown:\n%s", got)
	}
	if len(p.running) != 0 || len(p.output) != 0 {
		t.Errorf("left: running %v, output %d", p.running, len(p.output))
	}
}
