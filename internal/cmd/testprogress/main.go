// Command testprogress runs go test with the given arguments and shows progress as it
// goes: each package when it finishes (in the order they finish, not the order go test
// prints them), each top-level test that took a while, the full output of whatever fails,
// every skipped test on a SKIP line with the reason it gave, and every half minute the
// packages still running with their longest-running tests. When a package's test binary
// runs out of time (go test -timeout) or crashes, the output of the tests that never ended
// is shown, which holds go test's "panic: test timed out after ..." with the tests then
// running and the goroutine dump, and the package's FAIL line names those tests. At the
// end it counts the tests skipped. It exits with go test's status.
//
//	go run ./internal/cmd/testprogress -race -count=1 -timeout 15m ./...
package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"time"
)

// event is one line of go test -json (cmd/test2json).
type event struct {
	Action  string
	Package string
	Test    string
	Elapsed float64
	Output  string
}

// slowTest is how long a top-level test runs before it is worth a line of its own.
const slowTest = 5 * time.Second

func main() {
	cmd := exec.Command("go", append([]string{"test", "-json"}, os.Args[1:]...)...)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		fmt.Fprintln(os.Stderr, "testprogress:", err)
		os.Exit(2)
	}
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "testprogress:", err)
		os.Exit(2)
	}
	p := newPrinter(os.Stdout)
	done := make(chan struct{})
	go p.heartbeat(30*time.Second, done)
	p.read(out)
	close(done)
	p.summary()
	err = cmd.Wait()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		os.Exit(ee.ExitCode())
	case err != nil:
		fmt.Fprintln(os.Stderr, "testprogress:", err)
		os.Exit(2)
	}
}

type printer struct {
	mu      sync.Mutex
	w       io.Writer
	start   time.Time
	running map[string]time.Time            // package -> when its first event came
	tests   map[string]map[string]time.Time // package -> its top-level tests running -> since
	output  map[string][]line               // package, or package+top-level test -> output lines so far
	seq     int                             // lines read so far, to put those of several tests back in order
	skipped int                             // tests skipped
}

// line is a line of output, of the test named (a subtest's name in full) or of the package.
type line struct {
	seq  int
	test string
	text string
}

func newPrinter(w io.Writer) *printer {
	return &printer{w: w, start: time.Now(), running: map[string]time.Time{},
		tests: map[string]map[string]time.Time{}, output: map[string][]line{}}
}

func (p *printer) read(r io.Reader) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<26)
	for sc.Scan() {
		var e event
		if json.Unmarshal(sc.Bytes(), &e) != nil {
			// Not an event (go test writes build errors as text): show it as it is.
			p.mu.Lock()
			fmt.Fprintln(p.w, sc.Text())
			p.mu.Unlock()
			continue
		}
		p.event(e)
	}
}

// summary ends the run's output with the number of tests skipped, when there were any.
func (p *printer) summary() {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch p.skipped {
	case 0:
	case 1:
		fmt.Fprintln(p.w, "SKIP 1 test skipped: its SKIP line above says why")
	default:
		fmt.Fprintf(p.w, "SKIP %d tests skipped: their SKIP lines above say why\n", p.skipped)
	}
}

func key(e event) string {
	top, _, _ := strings.Cut(e.Test, "/")
	return e.Package + "\x00" + top
}

func (p *printer) event(e event) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if e.Package != "" {
		if _, ok := p.running[e.Package]; !ok {
			p.running[e.Package] = time.Now()
		}
	}
	top := e.Test != "" && !strings.Contains(e.Test, "/")
	switch e.Action {
	case "build-output": // compiler errors, shown as they come
		fmt.Fprint(p.w, e.Output)
		return
	case "run":
		if top {
			if p.tests[e.Package] == nil {
				p.tests[e.Package] = map[string]time.Time{}
			}
			p.tests[e.Package][e.Test] = time.Now()
		}
		return
	case "output":
		k := e.Package
		if e.Test != "" {
			k = key(e)
		}
		p.seq++
		p.output[k] = append(p.output[k], line{p.seq, e.Test, e.Output})
		if e.Package == "" { // build output of no package
			fmt.Fprint(p.w, e.Output)
		}
		return
	case "pass", "fail", "skip":
	default:
		return
	}
	if e.Test != "" {
		k := key(e)
		switch {
		case e.Action == "skip":
			p.skipped++
			p.skip(e, p.output[k])
		case e.Action == "fail" && top:
			p.lines(p.output[k])
		case e.Action == "pass" && top && e.Elapsed >= slowTest.Seconds():
			fmt.Fprintf(p.w, "     %s %s (%.1fs)\n", e.Package, e.Test, e.Elapsed)
		}
		if top {
			delete(p.output, k)
			delete(p.tests[e.Package], e.Test)
		}
		return
	}
	// The package is done. Tests that never ended (the package timed out, or its test
	// binary crashed or exited) have their output shown before the package's.
	delete(p.running, e.Package)
	delete(p.tests, e.Package)
	var unfinished []line
	for k, lines := range p.output {
		if pkg, _, ok := strings.Cut(k, "\x00"); ok && pkg == e.Package {
			unfinished = append(unfinished, lines...)
			delete(p.output, k)
		}
	}
	slices.SortFunc(unfinished, func(a, b line) int { return a.seq - b.seq })
	switch e.Action {
	case "fail":
		p.lines(unfinished)
		p.lines(p.output[e.Package])
		fmt.Fprintf(p.w, "FAIL %s (%.1fs)%s\n", e.Package, e.Elapsed, timedOut(append(unfinished, p.output[e.Package]...)))
	case "skip":
		// No test files.
	default:
		fmt.Fprintf(p.w, "ok   %s (%.1fs)\n", e.Package, e.Elapsed)
	}
	delete(p.output, e.Package)
}

func (p *printer) lines(lines []line) {
	for _, l := range lines {
		fmt.Fprint(p.w, l.text)
	}
}

// skip shows a skipped test on a line of its own, with what it logged (the reason it gave
// t.Skip, and what it logged before), out of its top-level test's lines.
func (p *printer) skip(e event, lines []line) {
	var said []string
	for _, l := range lines {
		text := strings.TrimRight(l.text, "\n")
		if l.test != e.Test || strings.HasPrefix(text, "=== ") || strings.HasPrefix(strings.TrimSpace(text), "--- SKIP: ") || strings.TrimSpace(text) == "" {
			continue
		}
		said = append(said, strings.TrimPrefix(text, "    "))
	}
	reason := "(no reason given)"
	if len(said) > 0 {
		reason = strings.Join(said, "\n     ")
	}
	fmt.Fprintf(p.w, "SKIP %s %s: %s\n", e.Package, e.Test, reason)
}

// timedOut says, when lines hold go test's panic for a test binary that ran out of time,
// how long it had and the tests that were running then: ", test timed out after 10m0s
// running TestX (9m59s)".
func timedOut(lines []line) string {
	var out, running []string
	in := false
	for _, l := range lines {
		text := strings.TrimRight(l.text, "\n")
		if after, ok := strings.CutPrefix(text, "panic: test timed out after "); ok {
			out = append(out, "test timed out after "+after)
			in = false
			continue
		}
		switch {
		case len(out) > 0 && text == "\trunning tests:":
			in = true
		case in && strings.HasPrefix(text, "\t\t"):
			running = append(running, strings.TrimSpace(text))
		default:
			in = false
		}
	}
	if len(out) == 0 {
		return ""
	}
	if len(running) > 0 {
		return ": " + out[0] + " running " + strings.Join(running, ", ")
	}
	return ": " + out[0]
}

// heartbeat names the packages still running every interval, so a long package does not
// look like a hung run.
func (p *printer) heartbeat(interval time.Duration, done <-chan struct{}) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-done:
			return
		case <-t.C:
		}
		p.mu.Lock()
		var names []string
		for pkg, since := range p.running {
			tests := longest(p.tests[pkg], 3)
			if len(tests) > 0 {
				names = append(names, fmt.Sprintf("%s (%ds: %s)", pkg, int(time.Since(since).Seconds()), strings.Join(tests, ", ")))
			} else {
				names = append(names, fmt.Sprintf("%s (%ds)", pkg, int(time.Since(since).Seconds())))
			}
		}
		slices.Sort(names)
		if len(names) > 0 {
			fmt.Fprintf(p.w, "...  %ds: still running %s\n", int(time.Since(p.start).Seconds()), strings.Join(names, ", "))
		}
		p.mu.Unlock()
	}
}

// longest names the n tests of running that have run the longest, with how long, longest
// first, and how many more there are.
func longest(running map[string]time.Time, n int) []string {
	names := slices.Collect(maps.Keys(running))
	slices.SortFunc(names, func(a, b string) int {
		if c := running[a].Compare(running[b]); c != 0 {
			return c
		}
		return strings.Compare(a, b)
	})
	var out []string
	for _, name := range names[:min(n, len(names))] {
		out = append(out, fmt.Sprintf("%s %ds", name, int(time.Since(running[name]).Seconds())))
	}
	if len(names) > n {
		out = append(out, fmt.Sprintf("%d more", len(names)-n))
	}
	return out
}
