// Command latency measures how late the timers and the outbox act: from a deadline
// falling due to its handling, and from an effect committed (nobody's: in a transaction
// of the producer's) to its delivery, p50 and p99, with 1 and 4 workers, on SQLite and
// PostgreSQL (a throwaway server of its own, pgtest), with loops that poll the store at an
// interval and loops an fsmrt.Waiter wakes (LISTEN/NOTIFY on PostgreSQL, in-process
// wake-ups on SQLite). The cases run interleaved, -count rounds of them. It writes the
// table into the results file (-o, RESULTS.md) between its markers, leaving the rest of
// the file as it is, or to standard output (-o -).
//
//	go run ./cmd/latency
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/fsmgen/fsmgen/examples/scaleout"
	"github.com/fsmgen/fsmgen/store/postgres/pgtest"
)

func main() {
	os.Exit(run(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
}

// mode is how the loops wait.
type mode struct {
	name  string
	woken bool
	poll  time.Duration
}

// result is what the rounds of one case measured.
type result struct {
	store   string
	workers int
	mode    mode
	res     scaleout.LatencyResult
}

// The markers of the table in the results file.
const (
	beginMarker = "<!-- latency: written by go run ./cmd/latency -->"
	endMarker   = "<!-- end of latency -->"
)

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("latency", flag.ContinueOnError)
	fs.SetOutput(stderr)
	out := fs.String("o", "RESULTS.md", "the results `file` to write the table into, - for standard output")
	stores := fs.String("stores", "sqlite,postgres", "the stores")
	workerList := fs.String("workers", "1,4", "the numbers of workers")
	fast := fs.Duration("fast", 20*time.Millisecond, "the polling interval of the fast polling loops (the scale-out workers' tick)")
	slow := fs.Duration("slow", time.Second, "the polling interval of the slow polling loops and the fallback of the woken ones (the build worker's tick)")
	holds := fs.Int("holds", 100, "orders held per case (3 deadlines each)")
	ships := fs.Int("ships", 100, "orders shipped in the producer's transaction per case (1 effect each)")
	spacing := fs.Duration("spacing", 20*time.Millisecond, "the time between two holds (and two shippings)")
	count := fs.Int("count", 2, "rounds of every case, interleaved")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	var workers []int
	for _, w := range strings.Split(*workerList, ",") {
		n, err := strconv.Atoi(w)
		if err != nil || n < 1 {
			fmt.Fprintf(stderr, "latency: -workers: %q\n", w)
			return 2
		}
		workers = append(workers, n)
	}
	modes := []mode{
		{fmt.Sprintf("polling every %v", *fast), false, *fast},
		{fmt.Sprintf("polling every %v", *slow), false, *slow},
		{fmt.Sprintf("woken (fallback %v)", *slow), true, *slow},
	}
	dir, err := os.MkdirTemp("", "latency-")
	if err != nil {
		fmt.Fprintf(stderr, "latency: %v\n", err)
		return 1
	}
	defer os.RemoveAll(dir)
	var srv *pgtest.Server
	pgVersion := ""
	if strings.Contains(*stores, "postgres") {
		if srv, err = pgtest.Start(ctx, pgtest.Options{}); err != nil {
			fmt.Fprintf(stderr, "latency: %v\n", err)
			return 1
		}
		defer srv.Stop()
		pgVersion = serverVersion(ctx, srv.DSN)
	}
	started := time.Now()
	var results []*result
	find := func(store string, n int, m mode) *result {
		for _, r := range results {
			if r.store == store && r.workers == n && r.mode == m {
				return r
			}
		}
		r := &result{store: store, workers: n, mode: m}
		results = append(results, r)
		return r
	}
	cases := 0
	for round := range *count {
		for _, store := range strings.Split(*stores, ",") {
			for _, n := range workers {
				for _, m := range modes {
					cases++
					where := filepath.Join(dir, fmt.Sprintf("c%d.db", cases))
					if store == scaleout.Postgres {
						if where, err = srv.CreateDatabase(ctx, fmt.Sprintf("c%d", cases)); err != nil {
							fmt.Fprintf(stderr, "latency: %v\n", err)
							return 1
						}
					}
					res, err := scaleout.MeasureLatency(ctx, scaleout.LatencyConfig{Kind: store, Where: where, Workers: n,
						Woken: m.woken, Poll: m.poll, Holds: *holds, Ships: *ships, Spacing: *spacing, Speed: 60})
					if err != nil {
						fmt.Fprintf(stderr, "latency: %s, %d workers, %s: %v\n", store, n, m.name, err)
						return 1
					}
					fmt.Fprintf(stderr, "round %d: %s, %d workers, %s: deadlines p50 %v p99 %v, effects p50 %v p99 %v\n", round+1, store, n, m.name,
						scaleout.Percentile(res.Deadlines, 50), scaleout.Percentile(res.Deadlines, 99),
						scaleout.Percentile(res.Effects, 50), scaleout.Percentile(res.Effects, 99))
					r := find(store, n, m)
					r.res.Deadlines = append(r.res.Deadlines, res.Deadlines...)
					r.res.Effects = append(r.res.Effects, res.Effects...)
					r.res.Wakes, r.res.Timed, r.res.Polls = r.res.Wakes+res.Wakes, r.res.Timed+res.Timed, r.res.Polls+res.Polls
				}
			}
		}
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "%s\n## Timer and effect latency: polling and woken\n\n", beginMarker)
	fmt.Fprintf(&b, "Written by `go run ./cmd/latency` in examples/scaleout (%s, %s, %s; PostgreSQL %s, fsync off;\n",
		started.UTC().Format("2006-01-02"), machineName(), runtime.Version(), pgVersion)
	fmt.Fprintf(&b, "SQLite in WAL mode, synchronous=NORMAL; this run: %v). Each case: %d orders held (3 deadlines each: remind,\n", time.Since(started).Round(time.Second), *holds)
	fmt.Fprintf(&b, "late, and the expiry that releases the order) and %d shipped in a transaction of the producer's own (the\n", *ships)
	fmt.Fprintf(&b, "notify effect is then nobody's until a worker claims it), one of each every %v, on the shared clock\n", *spacing)
	fmt.Fprintf(&b, "at 60x real time; N workers (goroutines of one process, each with a store of its own: its own pool\n")
	fmt.Fprintf(&b, "and listening connection on PostgreSQL, its own Store on the SQLite file) handle the deadlines due and\n")
	fmt.Fprintf(&b, "deliver the free effects until a batch comes back short, then wait with an fsmrt.Waiter: on the store\n")
	fmt.Fprintf(&b, "as it is (woken: LISTEN/NOTIFY, in-process wake-ups), or on the store hidden behind fsmrt.Store (polling\n")
	fmt.Fprintf(&b, "at the interval). *deadline*: from the deadline falling due to the commit of its handling, real time;\n")
	fmt.Fprintf(&b, "*effect*: from the producer's COMMIT returning to the delivery. %d rounds of every case, interleaved;\n", *count)
	fmt.Fprintf(&b, "the percentiles are over every deadline and effect of the rounds. *waits*: the Waits ended by a wake-up,\n")
	fmt.Fprintf(&b, "by the nearest deadline, by the polling interval.\n\n")
	fmt.Fprintf(&b, "| store | N | loop | deadlines | deadline p50 | deadline p99 | effects | effect p50 | effect p99 | waits (woken / timed / polled) |\n")
	fmt.Fprintf(&b, "|---|---:|---|---:|---:|---:|---:|---:|---:|---|\n")
	for _, r := range results {
		fmt.Fprintf(&b, "| %s | %d | %s | %d | %s | %s | %d | %s | %s | %d / %d / %d |\n", r.store, r.workers, r.mode.name,
			len(r.res.Deadlines), ms(scaleout.Percentile(r.res.Deadlines, 50)), ms(scaleout.Percentile(r.res.Deadlines, 99)),
			len(r.res.Effects), ms(scaleout.Percentile(r.res.Effects, 50)), ms(scaleout.Percentile(r.res.Effects, 99)),
			r.res.Wakes, r.res.Timed, r.res.Polls)
	}
	b.WriteString(endMarker + "\n")
	if *out == "-" {
		_, err = stdout.Write(b.Bytes())
	} else {
		err = writeInto(*out, b.Bytes())
	}
	if err != nil {
		fmt.Fprintf(stderr, "latency: %v\n", err)
		return 1
	}
	return 0
}

// ms writes d in milliseconds.
func ms(d time.Duration) string {
	return strconv.FormatFloat(float64(d)/float64(time.Millisecond), 'f', 1, 64) + " ms"
}

// writeInto puts table in file between the markers, in place of what was there, or at
// its end.
func writeInto(file string, table []byte) error {
	old, err := os.ReadFile(file)
	if err != nil && !os.IsNotExist(err) {
		return err
	}
	var b bytes.Buffer
	if before, rest, ok := bytes.Cut(old, []byte(beginMarker)); ok {
		b.Write(before)
		b.Write(table)
		if _, after, ok := bytes.Cut(rest, []byte(endMarker+"\n")); ok {
			b.Write(after)
		}
	} else {
		b.Write(old)
		if len(old) > 0 && !bytes.HasSuffix(old, []byte("\n\n")) {
			b.WriteString("\n")
		}
		b.Write(table)
	}
	return os.WriteFile(file, b.Bytes(), 0o644)
}

// serverVersion returns the PostgreSQL server's version.
func serverVersion(ctx context.Context, dsn string) string {
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return "?"
	}
	defer conn.Close(ctx)
	var v string
	if conn.QueryRow(ctx, "SHOW server_version").Scan(&v) != nil {
		return "?"
	}
	return v
}

// machineName describes the machine: its processor and how many of them.
func machineName() string {
	model := runtime.GOARCH
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				model = strings.TrimSpace(v)
				break
			}
		}
	}
	return fmt.Sprintf("%s, %d CPUs, %s", model, runtime.NumCPU(), runtime.GOOS)
}
