package browsertest

import (
	"bufio"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// chromium returns the path of a Chromium to drive: $FSMGEN_CHROMIUM, else the first of
// the usual names on PATH. Without one the test is skipped with the command that
// installs it, or fails when CI is true (CI installs it and must never skip).
func chromium(t testing.TB) string {
	t.Helper()
	if p := os.Getenv("FSMGEN_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	const msg = "no Chromium found (chromium, chromium-browser, google-chrome on PATH, or FSMGEN_CHROMIUM); install it (Debian: apt-get install -y chromium)"
	if ci, _ := strconv.ParseBool(os.Getenv("CI")); ci {
		t.Fatalf("%s (CI is set, so the test may not be skipped)", msg)
	}
	t.Skip("skipping: " + msg)
	return ""
}

// browser starts a headless Chromium with a fresh profile and returns a tab's context. A
// JavaScript dialog (alert, confirm) opening in it, or an exception the page's script does
// not catch, fails the test; so does a message the page logs as an error (a violation of
// its Content-Security-Policy among them).
func browser(t testing.TB) context.Context {
	path := chromium(t)
	// The profile is removed once Chromium is gone: its helper processes may still write
	// there for a moment after it is told to stop, which t.TempDir's removal would fail on.
	profile, err := os.MkdirTemp("", "preview-chromium-")
	if err != nil {
		t.Fatal(err)
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(path),
		chromedp.Flag("headless", true),
		chromedp.Flag("no-sandbox", true),
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("no-first-run", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.WindowSize(1400, 1000),
		chromedp.NoDefaultBrowserCheck,
		chromedp.UserDataDir(profile),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelTab := chromedp.NewContext(actx)
	ctx, cancelTime := context.WithTimeout(ctx, 4*time.Minute)
	t.Cleanup(func() {
		cancelTime()
		cancelTab()
		cancelAlloc()
		for i := 0; ; i++ {
			if err := os.RemoveAll(profile); err == nil || i == 50 {
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
	})
	var dialogs atomic.Int32
	chromedp.ListenTarget(ctx, func(ev any) {
		switch ev := ev.(type) {
		case *page.EventJavascriptDialogOpening:
			dialogs.Add(1)
			t.Errorf("a dialog opened: %q", ev.Message)
			go chromedp.Run(ctx, page.HandleJavaScriptDialog(false))
		case *runtime.EventExceptionThrown:
			t.Errorf("the page threw: %s", ev.ExceptionDetails.Error())
		case *runtime.EventConsoleAPICalled:
			if ev.Type == runtime.APITypeError {
				var args []string
				for _, a := range ev.Args {
					args = append(args, string(a.Value)+a.Description)
				}
				t.Errorf("the page logged an error: %s", strings.Join(args, " "))
			}
		}
	})
	if err := chromedp.Run(ctx); err != nil {
		t.Fatalf("starting %s: %v", path, err)
	}
	return ctx
}

// fsmgen builds the fsmgen command into a temporary directory, once per test binary.
var fsmgenBin struct {
	path string
	err  error
	done atomic.Bool
}

func buildFsmgen(t testing.TB) string {
	t.Helper()
	if !fsmgenBin.done.Load() {
		dir, err := os.MkdirTemp("", "preview-fsmgen-")
		if err == nil {
			bin := filepath.Join(dir, "fsmgen")
			out, berr := exec.Command("go", "build", "-o", bin, "github.com/fsmgen/fsmgen/cmd/fsmgen").CombinedOutput()
			if berr != nil {
				err = &buildError{berr, string(out)}
			}
			fsmgenBin.path = bin
		}
		fsmgenBin.err = err
		fsmgenBin.done.Store(true)
	}
	if fsmgenBin.err != nil {
		t.Fatalf("go build fsmgen: %v", fsmgenBin.err)
	}
	return fsmgenBin.path
}

type buildError struct {
	err error
	out string
}

func (e *buildError) Error() string { return e.err.Error() + "\n" + e.out }

// serve runs fsmgen preview on the specs in dir (paths relative to it), as a user would,
// and returns the URL it prints; it is stopped when t ends.
func serve(t testing.TB, dir string, specs ...string) string {
	t.Helper()
	bin := buildFsmgen(t)
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, bin, append([]string{"preview"}, specs...)...)
	cmd.Dir = dir
	var stderr strings.Builder
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cancel()
		cmd.Wait()
		if stderr.Len() > 0 {
			t.Errorf("fsmgen preview wrote on stderr:\n%s", stderr.String())
		}
	})
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatalf("fsmgen preview printed no URL: %v\n%s", err, stderr.String())
	}
	go io.Copy(io.Discard, stdout)
	url := regexp.MustCompile(`http://127\.0\.0\.1:[0-9]+/`).FindString(line)
	if url == "" {
		t.Fatalf("no loopback URL in %q", line)
	}
	return url
}

// copySpec copies the repository's spec (and its lock file, if any) into dir, and returns
// its name there.
func copySpec(t testing.TB, dir, spec string) string {
	t.Helper()
	src := filepath.Join("..", "..", filepath.FromSlash(spec))
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	name := filepath.Base(spec)
	if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
		t.Fatal(err)
	}
	lock := strings.TrimSuffix(src, ".yaml") + ".lock"
	if b, err := os.ReadFile(lock); err == nil {
		os.WriteFile(filepath.Join(dir, filepath.Base(lock)), b, 0o644)
	}
	return name
}
