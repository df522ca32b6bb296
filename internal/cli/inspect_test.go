package cli

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/fsmgen/fsmgen/fsmrt"
	"github.com/fsmgen/fsmgen/generated/approval"
	"github.com/fsmgen/fsmgen/generated/build"
	"github.com/fsmgen/fsmgen/generated/cognitive"
	"github.com/fsmgen/fsmgen/generated/pipeline"
	"github.com/fsmgen/fsmgen/generated/review"
	"github.com/fsmgen/fsmgen/inspect/inspecttest"
)

// TestInspectDescribesAsGenerated: the description fsmgen inspect builds from a spec is
// the one the generated package gives (Describe), for every seed.
func TestInspectDescribesAsGenerated(t *testing.T) {
	for _, c := range []struct {
		spec string
		gen  fsmrt.Description
	}{
		{"../../examples/build/build.fsm.yaml", build.NewTask(nil).Describe()},
		{"../../examples/review/review.fsm.yaml", review.NewTask().Describe()},
		{"../../examples/approval/approval.fsm.yaml", approval.NewTask(nil).Describe()},
		{"../../examples/cognitive/cognitive.fsm.yaml", cognitive.NewTask(nil).Describe()},
		{"../../examples/pipeline/pipeline.fsm.yaml", pipeline.NewTask(nil).Describe()},
	} {
		m, ds, err := loadFile(c.spec)
		if err != nil || ds.HasErrors() {
			t.Fatalf("%s: %v %v", c.spec, err, ds)
		}
		got := describe(m)
		if c.gen.Current == nil {
			t.Errorf("%s: the generated description cannot replay", c.spec)
		}
		c.gen.Current = nil
		if !reflect.DeepEqual(got, c.gen) {
			t.Errorf("%s: from the spec\n%+v\nfrom the generated code\n%+v", c.spec, got, c.gen)
		}
	}
}

// TestInspectUsage: the inspector is served on loopback only unless --allow-remote says
// otherwise, and needs a store this fsmgen opens.
func TestInspectUsage(t *testing.T) {
	spec := "../../examples/build/build.fsm.yaml"
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"inspect", "--store", "memory:x", "--addr", "0.0.0.0:8080", spec}, "0.0.0.0:8080 is not a loopback address"},
		{[]string{"inspect", "--store", "memory:x", "--addr", "192.168.1.2:0", spec}, "give --allow-remote"},
		{[]string{"inspect", spec}, "inspect needs --store DSN"},
		{[]string{"inspect", "--store", "nothing-opens-this", spec}, "this fsmgen opens no store"},
		{[]string{"inspect", "--store", "x", "no-such.fsm.yaml"}, "no-such.fsm.yaml"},
	} {
		code, _, stderr := run(t, c.args...)
		if code != ExitUsage || !strings.Contains(stderr, c.want) {
			t.Errorf("%q: exit %d, stderr %q; want 2 and %q", c.args, code, stderr, c.want)
		}
	}
	for _, ok := range []string{"127.0.0.1:0", "[::1]:0", "localhost:0"} {
		if err := checkLoopback(ok, false); err != nil {
			t.Errorf("%s: %v", ok, err)
		}
	}
	if err := checkLoopback("0.0.0.0:0", true); err != nil {
		t.Errorf("--allow-remote: %v", err)
	}
}

// TestInspectServes runs fsmgen inspect on a memory store filled with seed 004's tasks: it
// prints its URL on 127.0.0.1, serves the pages there, and stops when its context ends.
func TestInspectServes(t *testing.T) {
	store := fsmrt.NewMemoryStore()
	if _, err := inspecttest.SeedBuild(context.Background(), store); err != nil {
		t.Fatal(err)
	}
	RegisterStore(StoreOpener{
		Name:  "memory",
		Match: func(dsn string) bool { return dsn == "memory:inspect-test" },
		Open: func(context.Context, string) (fsmrt.Store, func(), error) {
			return store, func() {}, nil
		},
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pr, pw := io.Pipe()
	exit := make(chan int, 1)
	var stderr strings.Builder
	go func() {
		exit <- Run(ctx, []string{"inspect", "--store", "memory:inspect-test", "../../examples/build/build.fsm.yaml"}, strings.NewReader(""), pw, &stderr)
		pw.Close()
	}()
	line, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil {
		t.Fatalf("no URL printed: %v (stderr %q)", err, stderr.String())
	}
	go io.Copy(io.Discard, pr)
	url := regexp.MustCompile(`http://127\.0\.0\.1:[0-9]+/`).FindString(line)
	if url == "" {
		t.Fatalf("no loopback URL in %q", line)
	}
	resp, err := http.Get(url + "machine?m=build.Task")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(body), `<tr data-state="pending"><td><a href="instances?m=build.Task&amp;state=pending">pending</a></td><td class="n">6</td>`) {
		t.Errorf("machine page: %s\n%s", resp.Status, body)
	}
	// Without the generated code, an instance's counters are not shown, and the page says why.
	resp, err = http.Get(url + "instance?m=build.Task&id=task-planning")
	if err != nil {
		t.Fatal(err)
	}
	body, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(body), "mount the inspector in a program") || !strings.Contains(string(body), `<td id="state">planning</td>`) {
		t.Errorf("instance page: %s\n%s", resp.Status, body)
	}
	cancel()
	select {
	case code := <-exit:
		if code != ExitOK {
			t.Errorf("exit %d, stderr %q", code, stderr.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("fsmgen inspect did not stop with its context")
	}
}
