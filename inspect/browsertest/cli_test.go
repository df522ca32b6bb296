package browsertest

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/fsmgen/fsmgen/fsmrt"
	"github.com/fsmgen/fsmgen/inspect/inspecttest"
	"github.com/fsmgen/fsmgen/store/postgres"
	"github.com/fsmgen/fsmgen/store/sqlite"
)

// buildFsmgen builds the fsmgen of a store's module (a tool of this module) into a
// temporary directory.
func buildFsmgen(t *testing.T, pkg string) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "fsmgen")
	out, err := exec.Command("go", "build", "-o", bin, pkg).CombinedOutput()
	if err != nil {
		t.Fatalf("go build %s: %v\n%s", pkg, err, out)
	}
	return bin
}

// serveInspect runs bin inspect --store dsn on the build spec, and returns the URL it
// prints; the process is stopped when t ends.
func serveInspect(t *testing.T, bin, dsn string) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, bin, "inspect", "--store", dsn, "../../examples/build/build.fsm.yaml")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); cmd.Wait() })
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatalf("fsmgen inspect printed no URL: %v\n%s", err, stderr.String())
	}
	go io.Copy(io.Discard, stdout)
	url := regexp.MustCompile(`http://127\.0\.0\.1:[0-9]+/`).FindString(line)
	if url == "" {
		t.Fatalf("no loopback URL in %q", line)
	}
	return url
}

// checkServed reads the pages an operator asks of the seeded store: the tasks past their
// alert level, the one under CTO review, and its last entry.
func checkServed(t *testing.T, url string, s inspecttest.Seeded) {
	t.Helper()
	get := func(path string) string {
		t.Helper()
		client := &http.Client{Timeout: 30 * time.Second}
		resp, err := client.Get(url + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 200 {
			t.Fatalf("GET %s: %s\n%s", path, resp.Status, b)
		}
		return string(b)
	}
	body := get("machine?m=build.Task")
	if !strings.Contains(body, `<tr data-state="cto_intervention"><td><a href="instances?m=build.Task&amp;state=cto_intervention">cto_intervention</a></td><td class="n">1</td>`) {
		t.Errorf("machine page lacks the task under CTO review:\n%s", body)
	}
	// Pages are served live: past alert is measured at the real now, long after the seed.
	body = get("instances?m=build.Task&level=alert")
	for _, id := range append(s.Pending, s.CTO, s.Planning, s.Fresh) {
		if !strings.Contains(body, ">"+id+"</a>") {
			t.Errorf("%s not past alert:\n%s", id, body)
		}
	}
	if strings.Contains(body, ">"+s.Done+"</a>") {
		t.Errorf("the completed task is listed past alert:\n%s", body)
	}
	body = get("instance?m=build.Task&id=" + s.CTO)
	if !strings.Contains(body, `<td id="state">cto_intervention</td>`) || !strings.Contains(body, s.Reason) {
		t.Errorf("instance page:\n%s", body)
	}
	// Without the generated code the counters are the store's rows, said so.
	body = get("instance?m=build.Task&id=" + s.Planning)
	if !strings.Contains(body, `<tr><td>failures</td><td>planning</td><td class="n">2</td></tr>`) || !strings.Contains(body, "As the store's rows say") {
		t.Errorf("instance page without the generated code shows no counters:\n%s", body)
	}
}

// TestCLISQLite: store/sqlite's fsmgen serves the inspector of a SQLite file on loopback.
func TestCLISQLite(t *testing.T) {
	bin := buildFsmgen(t, "github.com/fsmgen/fsmgen/store/sqlite/cmd/fsmgen")
	path := filepath.Join(t.TempDir(), "build.db")
	st, err := sqlite.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	s := seed(t, st)
	st.Close()
	checkServed(t, serveInspect(t, bin, path), s)
}

// TestCLIPostgreSQL: store/postgres's fsmgen serves the inspector of a PostgreSQL database.
func TestCLIPostgreSQL(t *testing.T) {
	bin := buildFsmgen(t, "github.com/fsmgen/fsmgen/store/postgres/cmd/fsmgen")
	ctx := context.Background()
	dsn, err := pgtestDSN(t, "inspect_cli")
	if err != nil {
		t.Fatal(err)
	}
	st, err := postgres.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	s := seed(t, st)
	st.Close()
	checkServed(t, serveInspect(t, bin, dsn), s)
}

func seed(t *testing.T, st fsmrt.Store) inspecttest.Seeded {
	t.Helper()
	s, err := inspecttest.SeedBuild(context.Background(), st)
	if err != nil {
		t.Fatal(err)
	}
	return s
}
