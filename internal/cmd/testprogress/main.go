// Command testprogress runs go test with the given arguments and shows progress as it
// goes: each package when it finishes (in the order they finish, not the order go test
// prints them), each top-level test that took a while, the full output of whatever fails,
// and every half minute the packages still running. It exits with go test's status.
//
//	go run ./internal/cmd/testprogress -race -count=1 ./...
package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
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
	running map[string]time.Time // package -> when its first event came
	output  map[string][]string  // package or package+test -> output lines so far
}

func newPrinter(w io.Writer) *printer {
	return &printer{w: w, start: time.Now(), running: map[string]time.Time{}, output: map[string][]string{}}
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
	switch e.Action {
	case "build-output": // compiler errors, shown as they come
		fmt.Fprint(p.w, e.Output)
		return
	case "output":
		k := e.Package
		if e.Test != "" {
			k = key(e)
		}
		p.output[k] = append(p.output[k], e.Output)
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
		top := !strings.Contains(e.Test, "/")
		switch {
		case e.Action == "fail" && top:
			fmt.Fprint(p.w, strings.Join(p.output[k], ""))
		case e.Action == "pass" && top && e.Elapsed >= slowTest.Seconds():
			fmt.Fprintf(p.w, "     %s %s (%.1fs)\n", e.Package, e.Test, e.Elapsed)
		}
		if top {
			delete(p.output, k)
		}
		return
	}
	// The package is done.
	delete(p.running, e.Package)
	switch e.Action {
	case "fail":
		fmt.Fprint(p.w, strings.Join(p.output[e.Package], ""))
		fmt.Fprintf(p.w, "FAIL %s (%.1fs)\n", e.Package, e.Elapsed)
	case "skip":
		// No test files.
	default:
		fmt.Fprintf(p.w, "ok   %s (%.1fs)\n", e.Package, e.Elapsed)
	}
	delete(p.output, e.Package)
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
			names = append(names, fmt.Sprintf("%s (%ds)", pkg, int(time.Since(since).Seconds())))
		}
		slices.Sort(names)
		if len(names) > 0 {
			fmt.Fprintf(p.w, "...  %ds: still running %s\n", int(time.Since(p.start).Seconds()), strings.Join(names, ", "))
		}
		p.mu.Unlock()
	}
}
