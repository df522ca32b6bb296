// Command report writes BENCHMARKS.md from the outputs of bench/run.sh: the raw benchmark
// output, benchstat's CSV and text summaries, the scaling measurement's JSON and
// bench/notes.md. Every number in the document comes from those files.
//
//	go run ./cmd/report -dir results -o ../BENCHMARKS.md
package main

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
)

// Row is one benchmark × machine × implementation: benchstat's median and confidence
// interval per unit.
type Row struct {
	Bench, Machine, Impl string
	Values               map[string]float64 // by unit: sec/op, B/op, allocs/op
	CI                   map[string]string
}

// Scaling is the part of bench/scaling's JSON that the report shows.
type Scaling struct {
	Table      string  `json:"table"`
	Stopped    string  `json:"stopped"`
	Profile    string  `json:"profile"`
	ProfiledAt int     `json:"profiled_states"`
	PerState   int     `json:"transitions_per_state"`
	Repeat     int     `json:"repeat"`
	LimitSec   float64 `json:"limit_sec"`
	Sizes      []struct {
		States int `json:"states"`
		Events int `json:"events"`
	} `json:"sizes"`
}

var (
	benches = []string{"FireValid", "FireRejected", "Lifecycle", "Chart", "Can", "Permitted", "FireParallel", "New", "Persist"}
	impls   = []string{"table", "hand", "floor", "fsmgen", "looplab", "stateless"}
	mach    = []string{"review", "big", "age0", "age4000"}
	// floorRows are the runtime rows held against the table floor.
	floorRows = []string{"FireValid", "FireRejected", "Can", "Permitted", "Lifecycle"}
	// chartRows are the rows of BenchmarkChart, which holds a statechart against a flat
	// machine of the same size rather than against the table.
	chartRows = []struct{ machine, impl string }{
		{"nested", "fsmgen"}, {"nested-plain", "fsmgen"}, {"nested-actions", "fsmgen"}, {"flat", "fsmgen"}, {"flat", "table"},
	}
)

func main() {
	dir := flag.String("dir", "results", "`directory` with benchstat.csv, benchstat.txt, scaling.json, env.txt")
	notes := flag.String("notes", "notes.md", "hand-written notes on the runtime benchmarks (`file`)")
	scNotes := flag.String("scaling-notes", "notes-scaling.md", "hand-written notes on generation scaling (`file`)")
	scaleout := flag.String("scaleout", "../examples/scaleout/RESULTS.md", "the scale-out proof's results, written by its cmd/bench (`file`)")
	out := flag.String("o", "../BENCHMARKS.md", "output `file`")
	flag.Parse()

	rows, err := readCSV(filepath.Join(*dir, "benchstat.csv"))
	if err != nil {
		fatal(err)
	}
	text, err := os.ReadFile(filepath.Join(*dir, "benchstat.txt"))
	if err != nil {
		fatal(err)
	}
	env := readEnv(filepath.Join(*dir, "env.txt"))
	var sc *Scaling
	if data, err := os.ReadFile(filepath.Join(*dir, "scaling.json")); err == nil {
		sc = &Scaling{}
		if err := json.Unmarshal(data, sc); err != nil {
			fatal(fmt.Errorf("scaling.json: %v", err))
		}
	}
	notesText, _ := os.ReadFile(*notes)
	scNotesText, _ := os.ReadFile(*scNotes)
	scaleoutText, _ := os.ReadFile(*scaleout)

	doc := render(rows, string(text), env, sc, string(notesText), string(scNotesText))
	doc = withScaleout(doc, string(scaleoutText))
	if err := os.WriteFile(*out, []byte(doc), 0o644); err != nil {
		fatal(err)
	}
}

// readCSV reads `benchstat -format csv`: one section per unit, each a header line naming
// the input, a line naming the unit, then name,value,CI rows.
func readCSV(path string) (map[string]*Row, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	r := csv.NewReader(bytes.NewReader(data))
	r.FieldsPerRecord = -1
	recs, err := r.ReadAll()
	if err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	rows := map[string]*Row{}
	unit := ""
	for _, rec := range recs {
		if len(rec) < 2 {
			continue
		}
		if rec[0] == "" {
			if len(rec) >= 3 && rec[2] == "CI" {
				unit = rec[1]
			}
			continue
		}
		if rec[0] == "geomean" || unit == "" {
			continue
		}
		b, m, i, ok := splitName(rec[0])
		if !ok {
			continue
		}
		v, err := strconv.ParseFloat(rec[1], 64)
		if err != nil {
			continue
		}
		key := b + "/" + m + "/" + i
		row := rows[key]
		if row == nil {
			row = &Row{Bench: b, Machine: m, Impl: i, Values: map[string]float64{}, CI: map[string]string{}}
			rows[key] = row
		}
		row.Values[unit] = v
		if len(rec) >= 3 {
			row.CI[unit] = rec[2]
		}
	}
	if len(rows) == 0 {
		return nil, fmt.Errorf("%s: no benchmarks", path)
	}
	return rows, nil
}

var procs = regexp.MustCompile(`-\d+$`)

// splitName parses "FireValid/machine=review/impl=hand-2".
func splitName(name string) (bench, machine, impl string, ok bool) {
	name = procs.ReplaceAllString(name, "")
	parts := strings.Split(name, "/")
	if len(parts) != 3 {
		return "", "", "", false
	}
	bench = strings.TrimPrefix(parts[0], "Benchmark")
	machine, ok1 := strings.CutPrefix(parts[1], "machine=")
	impl, ok2 := strings.CutPrefix(parts[2], "impl=")
	return bench, machine, impl, ok1 && ok2
}

// readEnv reads key=value lines that run.sh records.
func readEnv(path string) map[string]string {
	env := map[string]string{}
	data, err := os.ReadFile(path)
	if err != nil {
		return env
	}
	for _, l := range strings.Split(string(data), "\n") {
		if k, v, ok := strings.Cut(l, "="); ok {
			env[strings.TrimSpace(k)] = strings.TrimSpace(v)
		}
	}
	return env
}

func get(rows map[string]*Row, b, m, i string) *Row { return rows[b+"/"+m+"/"+i] }

func render(rows map[string]*Row, text string, env map[string]string, sc *Scaling, notes, scNotes string) string {
	var w strings.Builder
	p := func(format string, a ...any) { fmt.Fprintf(&w, format, a...) }

	p("# Benchmarks\n\n")
	p("<!-- Generated by `make bench` (bench/run.sh, bench/cmd/report) from the files in bench/results/. Do not edit by hand: edit bench/notes.md or the programs, and run make bench. -->\n\n")
	p("The Go code fsmgen generates, next to the two Go state-machine libraries users compare it with, ")
	p("[looplab/fsm](https://github.com/looplab/fsm) and [qmuntal/stateless](https://github.com/qmuntal/stateless), ")
	p("and two hand-written forms over small integer types, what a careful person writes without a library: a table of targets indexed by state and event ")
	p("(the floor, the fastest) and a `switch`. Then what persisting a transition costs as a machine ages, and how `fsmgen generate` and the Go toolchain scale with the size of a spec.\n\n")

	// Targets.
	p("## Targets\n\n")
	p("| target | measured | met |\n|---|---|---|\n")
	allocRows, maxRatio, minPeer, table := targetFacts(rows)
	p("| 0 allocs/op for generated `Fire`, valid and rejected | %s | %s |\n", allocRows.text, yes(allocRows.ok))
	p("| every runtime row (FireValid, FireRejected, Can, Permitted, Lifecycle; both machines) within 1.25x of the hand-written table | %s | %s |\n", table.text, yes(table.ok))
	p("| generated `Fire` at least 100x faster than both peers | %s | %s |\n", minPeer.text, yes(minPeer.ok))
	chartTarget := chartFacts(rows)
	p("| a statechart's `Fire` (bench/chart: nested, parallel and history states, done and eventless transitions) allocates nothing and stays within 2x of a flat machine of the same size (bench/chartflat), over as many events | %s | %s |\n", chartTarget.text, yes(chartTarget.ok))
	age, floor := persistFacts(rows)
	p("| `Fire` with history, idempotency keys, a checkpoint on every transition and the memory store: after 4,000 earlier transitions within 1.2x of after none | %s | %s |\n", age.text, yes(age.ok))
	p("| the same `Fire` within 1.5x of its floor (json.Marshal of an equivalent hand-written snapshot plus one append) | %s | %s |\n", floor.text, yes(floor.ok))
	p("\n`Fire` here is FireValid and FireRejected on both machines. The floor of every runtime row is the fastest ")
	p("hand-written form, a table (array) lookup (*table*); the hand-written `switch` (*hand*) is a second reference: %s.\n\n", maxRatio.text)

	// Environment.
	p("## Where and how\n\n")
	p("| | |\n|---|---|\n")
	p("| date | %s |\n", orDash(env["date"]))
	p("| Go | %s |\n", orDash(env["go"]))
	p("| CPU | %s, %s logical CPUs (GOMAXPROCS %s) |\n", orDash(env["cpu"]), orDash(env["nproc"]), orDash(env["gomaxprocs"]))
	p("| OS | %s/%s, kernel %s |\n", runtime.GOOS, runtime.GOARCH, orDash(env["kernel"]))
	p("| fsmgen | commit %s%s |\n", orDash(env["commit"]), env["dirty"])
	p("| looplab/fsm | %s |\n", orDash(env["looplab"]))
	p("| qmuntal/stateless | %s |\n", orDash(env["stateless"]))
	p("| benchstat | %s |\n", orDash(env["benchstat"]))
	p("| load average (1, 5, 15 min) | before %s; after %s |\n", orDash(env["load_before"]), orDash(env["load_after"]))
	p("| runs | %s rounds of every benchmark (`-benchmem -benchtime %s -count 1` each round, rounds interleaved), %s samples per benchmark |\n\n",
		orDash(env["count"]), orDash(env["benchtime"]), orDash(env["count"]))

	p("%s\n", strings.TrimSpace(notes))

	// Runtime tables.
	p("\n## Results\n\n")
	p("Medians of the samples as benchstat reports them (± is benchstat's 95%% confidence interval of the median). ")
	p("*x table* is the time relative to the hand-written table on the same machine (for Persist, to the hand-written floor); *fsmgen speed-up* is a peer's time ")
	p("divided by the generated code's.\n\n")
	for _, b := range benches {
		if !hasBench(rows, b) {
			continue
		}
		p("### %s\n\n%s\n\n", b, benchDoc[b])
		if b == "Chart" {
			p("%s\n", chartTable(rows))
			continue
		}
		p("| machine | impl | ns/op | ± | B/op | allocs/op | x table | fsmgen speed-up |\n")
		p("|---|---|---:|---:|---:|---:|---:|---:|\n")
		for _, m := range mach {
			h := get(rows, b, m, "table")
			if h == nil {
				h = get(rows, b, m, "floor")
			}
			g := get(rows, b, m, "fsmgen")
			for _, i := range impls {
				r := get(rows, b, m, i)
				if r == nil {
					continue
				}
				ns := r.Values["sec/op"] * 1e9
				rel, up := "", ""
				if h != nil && h.Values["sec/op"] > 0 {
					rel = ratioText(r.Values["sec/op"] / h.Values["sec/op"])
				}
				if g != nil && (i == "looplab" || i == "stateless") && g.Values["sec/op"] > 0 {
					up = fmt.Sprintf("%.0fx", r.Values["sec/op"]/g.Values["sec/op"])
				}
				name := i
				if i == "fsmgen" {
					name = "**fsmgen**"
				}
				p("| %s | %s | %s | %s | %s | %s | %s | %s |\n", m, name, num(ns), r.CI["sec/op"],
					num(r.Values["B/op"]), num(r.Values["allocs/op"]), rel, up)
			}
		}
		p("\n")
	}

	// Scaling.
	p("## Generation scaling\n\n")
	if sc == nil {
		p("Not measured in this run.\n\n")
	} else {
		events := 0
		if len(sc.Sizes) > 0 {
			events = sc.Sizes[0].Events
		}
		p("`fsmgen generate` run as a user runs it (a fresh process, the binary built once) on synthetic specs ")
		p("(bench/specgen: a ring of states, %d events, %d transitions per non-terminal state, one of them a `fail` event to the terminal state), ", events, sc.PerState)
		p("median wall time of %d runs, peak RSS (`ru_maxrss`) the largest of those runs. ", sc.Repeat)
		p("The default run writes the Go code, the exhaustive tests, the Mermaid diagram and the Markdown document; ")
		p("`--no-tests` leaves out the tests. *ratio* is the time against the size before. ")
		p("*go build* compiles the generated package (the `--no-tests` output), *go vet* vets it with its generated tests, and *go test* compiles and runs those tests, each once, from a cold build cache for the package, with the peak RSS of the go command and its children. ")
		p("A run longer than %.0f s would be stopped, and larger sizes not tried.\n\n", sc.LimitSec)
		p("%s\n", sc.Table)
		if sc.Stopped != "" {
			p("**Stopped:** %s\n\n", sc.Stopped)
		}
		if sc.Profile != "" {
			p("Where the time goes at %d states (CPU profile of one `generate` run with tests, by bench/cmd/fsmgenprof; cumulative, so stages nest):\n\n", sc.ProfiledAt)
			p("```\n%s```\n\n", sc.Profile)
		}
		if scNotes != "" {
			p("%s\n\n", strings.TrimSpace(scNotes))
		}
	}

	p("## benchstat\n\n<details><summary>benchstat -col /impl (the hand-written floor is the base column)</summary>\n\n```\n%s```\n\n</details>\n", strings.TrimLeft(text, "\n"))
	return w.String()
}

var benchDoc = map[string]string{
	"FireValid":    "One accepted transition per op: review toggles in_progress ⇄ blocked, big s00 ⇄ s01.",
	"FireRejected": "One refused event per op, the state unchanged: review fires completed in pending_review (skipping phases), big e02 in s00.",
	"Lifecycle":    "Per op: put the machine back at its start, then the same 10 transitions (review: blocked, not_started, in_progress, blocked, in_progress, pending_review, under_review, review_submitted, final_review, completed — an internal transition and a guard included; big: s00 to the terminal s49 through forward, back, jump and fail transitions).",
	"Can":          "One query of an accepted event without firing it (review: pending_review in in_progress; big: e05 in s00). Unguarded, because looplab's Can does not run guards.",
	"Chart":        "Per op: one round of a cycle of 12 events, each accepted, ending where it began (bench/chart_test.go). *nested* is bench/chart's statechart (a video-call client: 43 configurations, 19 events, states nested five deep, a parallel state of three regions, a deep history state, transitions declared on compound states) from idle: 8 plain moves and 4 macrosteps (a done transition into the call, power off recording the deep history, power on restoring it, leaving through an eventless transition). *nested-plain* is 12 plain moves within the call's regions; *nested-actions* is *nested* with an entry and an exit action on the call (bench/chartact). *flat* is bench/chartflat, a flat machine of the same size (43 states, 19 events, as many transitions from each state as each configuration accepts events), 12 plain transitions; its *table* is the same machine written by hand as an array lookup. *x flat* is the time relative to *flat*'s generated code.",
	"Permitted":    "One query of every event the current state accepts (review: in_progress, 2 events; big: s00, 6 events). fsmgen and hand append to a caller's buffer; looplab's AvailableTransitions and stateless's PermittedTriggers return a new slice.",
	"FireParallel": "FireValid with one machine per goroutine under b.RunParallel (GOMAXPROCS goroutines): ns/op is wall time per transition over all of them.",
	"Persist":      "One accepted Fire of bench/persist's machine (history, a new idempotency key, a checkpoint on every transition, the memory store: the log entry appended, the snapshot encoded and saved) after 0 and after 4,000 earlier transitions; *floor* is json.Marshal of an equivalent hand-written snapshot struct plus one append of a log record.",
	"New":          "Building one machine in its initial state (kept in a package variable, as a program keeps its machines). The hand-written machines are values, so they cost nothing here.",
}

// withScaleout adds to doc the durable stores' target, measured by the scale-out proof
// (results: its RESULTS.md), and the results themselves, after the generation scaling;
// doc is left as it is without results. The target is read from the results' first table:
// its N, store and first ratio columns (the workers against the same-work floor).
func withScaleout(doc, results string) string {
	if strings.TrimSpace(results) == "" {
		return doc
	}
	var ratios []string
	ok, oneOK := true, true // every row meets the target; every row of one worker does
	col := map[string]int{}
	for _, line := range strings.Split(results, "\n") {
		if !strings.HasPrefix(line, "|") {
			if len(ratios) > 0 {
				break
			}
			col = map[string]int{}
			continue
		}
		cells := strings.Split(strings.Trim(line, "| "), "|")
		for i := range cells {
			cells[i] = strings.TrimSpace(cells[i])
		}
		if len(col) == 0 {
			for i, c := range cells {
				if _, seen := col[c]; !seen {
					col[c] = i
				}
			}
			continue
		}
		n, hasN := col["N"]
		store, hasStore := col["store"]
		ratio, hasRatio := col["ratio"]
		if !hasN || !hasStore || !hasRatio || len(cells) <= max(n, store, ratio) || !strings.HasSuffix(cells[ratio], "x") {
			continue // the header's rule, or another table
		}
		ratios = append(ratios, fmt.Sprintf("%s N=%s %s", cells[store], cells[n], cells[ratio]))
		if v, err := strconv.ParseFloat(strings.TrimSuffix(cells[ratio], "x"), 64); err != nil || v < durableTarget {
			ok = false
			oneOK = oneOK && cells[n] != "1"
		}
	}
	if len(ratios) == 0 {
		return doc
	}
	met := yes(ok)
	if !ok && oneOK {
		// The target allows a row held by a resource the processes share, when the row
		// says which: the results' notes do, and the verdict points there.
		met = "**no**; with one worker, yes: the notes of the results say what holds each other row"
	}
	target := fmt.Sprintf("| durable stores: transitions/s of the scale-out proof's N worker processes (N = 1, 4, 8) at least %.1fx the same durable writes written by hand (the same-work floor), PostgreSQL and SQLite alike | %s | %s |\n",
		durableTarget, strings.Join(ratios, "; "), met)
	if i := strings.Index(doc, "\n\n`Fire` here is FireValid"); i >= 0 {
		doc = doc[:i+1] + target + doc[i+1:]
	}
	body := results
	if i := strings.Index(body, "\n"); strings.HasPrefix(body, "# ") && i >= 0 {
		body = body[i+1:] // its title
	}
	body = strings.Replace(body, "<!-- notes: everything below this line is kept when the command rewrites the file -->\n", "", 1)
	body = strings.ReplaceAll("\n"+body, "\n## ", "\n### ")
	section := "## Durable stores: the scale-out proof\n\nCopied from examples/scaleout/RESULTS.md, which `make bench-durable` writes (make bench does not run it).\n\n" + strings.TrimLeft(body, "\n") + "\n"
	if i := strings.Index(doc, "## benchstat\n"); i >= 0 {
		return doc[:i] + section + doc[i:]
	}
	return doc + "\n" + section
}

// durableTarget is the least ratio of the workers' transitions a second to the same-work
// floor's that meets the durable stores' target.
const durableTarget = 0.8

type fact struct {
	text string
	ok   bool
}

func targetFacts(rows map[string]*Row) (allocs, ratio, peers, table fact) {
	allocs.ok, peers.ok, table.ok = true, true, true
	var at, rt, pt, tt []string
	worstRatio, worstTable, bestPeer := 0.0, 0.0, math.Inf(1)
	for _, b := range []string{"FireValid", "FireRejected"} {
		for _, m := range mach[:2] {
			g, h := get(rows, b, m, "fsmgen"), get(rows, b, m, "hand")
			if g == nil {
				allocs.ok, peers.ok = false, false
				continue
			}
			// A missing measurement fails its target: no data is not a pass.
			a, measured := g.Values["allocs/op"]
			if !measured {
				at = append(at, fmt.Sprintf("%s %s not measured", b, m))
				allocs.ok = false
			} else {
				at = append(at, fmt.Sprintf("%s %s %s", b, m, num(a)))
				allocs.ok = allocs.ok && a == 0
			}
			if h != nil {
				x := g.Values["sec/op"] / h.Values["sec/op"]
				worstRatio = max(worstRatio, x)
				rt = append(rt, fmt.Sprintf("%s %s %.2fx", b, m, x))
			}
			for _, peer := range []string{"looplab", "stateless"} {
				if r := get(rows, b, m, peer); r == nil {
					pt = append(pt, fmt.Sprintf("%s %s %s not measured", b, m, peer))
					peers.ok = false
				} else {
					x := r.Values["sec/op"] / g.Values["sec/op"]
					bestPeer = min(bestPeer, x)
					pt = append(pt, fmt.Sprintf("%s %s %s %.0fx", b, m, peer, x))
					if x < 100 {
						peers.ok = false
					}
				}
			}
		}
	}
	for _, b := range floorRows {
		for _, m := range mach[:2] {
			g, t := get(rows, b, m, "fsmgen"), get(rows, b, m, "table")
			if g == nil || t == nil {
				tt = append(tt, fmt.Sprintf("%s %s not measured", b, m))
				table.ok = false
				continue
			}
			x := g.Values["sec/op"] / t.Values["sec/op"]
			worstTable = max(worstTable, x)
			mark := ""
			if x > 1.25 {
				table.ok, mark = false, " (over)"
			}
			tt = append(tt, fmt.Sprintf("%s %s %.2fx%s", b, m, x, mark))
		}
	}
	allocs.text = strings.Join(at, "; ")
	ratio.text = fmt.Sprintf("against it generated `Fire` measures at worst %.2fx (%s)", worstRatio, strings.Join(rt, "; "))
	peers.text = fmt.Sprintf("least %.0fx (%s)", bestPeer, strings.Join(pt, "; "))
	table.text = fmt.Sprintf("worst %.2fx (%s)", worstTable, strings.Join(tt, "; "))
	return
}

// chartTable is BenchmarkChart's table: every row against the flat machine's generated code
// and against its hand-written table.
func chartTable(rows map[string]*Row) string {
	var w strings.Builder
	flat, table := get(rows, "Chart", "flat", "fsmgen"), get(rows, "Chart", "flat", "table")
	rel := func(r, base *Row) string {
		if base == nil || base.Values["sec/op"] <= 0 {
			return ""
		}
		return ratioText(r.Values["sec/op"] / base.Values["sec/op"])
	}
	w.WriteString("| machine | impl | ns/op | ± | B/op | allocs/op | x flat | x table |\n")
	w.WriteString("|---|---|---:|---:|---:|---:|---:|---:|\n")
	for _, c := range chartRows {
		r := get(rows, "Chart", c.machine, c.impl)
		if r == nil {
			continue
		}
		name := c.impl
		if c.machine == "nested" {
			name = "**fsmgen**"
		}
		fmt.Fprintf(&w, "| %s | %s | %s | %s | %s | %s | %s | %s |\n", c.machine, name, num(r.Values["sec/op"]*1e9), r.CI["sec/op"],
			num(r.Values["B/op"]), num(r.Values["allocs/op"]), rel(r, flat), rel(r, table))
	}
	return w.String()
}

// chartFacts is the statechart target: the nested machine's cycle allocates nothing and
// takes at most twice the flat machine's.
func chartFacts(rows map[string]*Row) fact {
	nested, flat := get(rows, "Chart", "nested", "fsmgen"), get(rows, "Chart", "flat", "fsmgen")
	if nested == nil || flat == nil || flat.Values["sec/op"] <= 0 {
		return fact{text: "not measured"}
	}
	a, measured := nested.Values["allocs/op"]
	if !measured {
		return fact{text: "allocs/op not measured"}
	}
	x := nested.Values["sec/op"] / flat.Values["sec/op"]
	text := fmt.Sprintf("%.2fx (%s ns against %s ns per round of 12 events); %s allocs/op", x,
		num(nested.Values["sec/op"]*1e9), num(flat.Values["sec/op"]*1e9), num(a))
	if plain := get(rows, "Chart", "nested-plain", "fsmgen"); plain != nil {
		text += fmt.Sprintf("; plain moves only (nested-plain) %.2fx", plain.Values["sec/op"]/flat.Values["sec/op"])
	}
	return fact{text: text, ok: x <= 2 && a == 0}
}

// persistFacts are the targets of BenchmarkPersist: age 4,000 against age 0, and the
// generated code against the hand-written floor at age 0.
func persistFacts(rows map[string]*Row) (age, floor fact) {
	young, old := get(rows, "Persist", "age0", "fsmgen"), get(rows, "Persist", "age4000", "fsmgen")
	if young == nil || old == nil {
		age.text = "not measured"
	} else {
		x := old.Values["sec/op"] / young.Values["sec/op"]
		age.text = fmt.Sprintf("%.2fx (%s ns after 4,000, %s ns after none)", x, num(old.Values["sec/op"]*1e9), num(young.Values["sec/op"]*1e9))
		age.ok = x <= 1.2
	}
	if f := get(rows, "Persist", "age0", "floor"); young == nil || f == nil {
		floor.text = "not measured"
	} else {
		x := young.Values["sec/op"] / f.Values["sec/op"]
		floor.text = fmt.Sprintf("%.2fx (%s ns against %s ns; %s against %s allocs/op)", x, num(young.Values["sec/op"]*1e9), num(f.Values["sec/op"]*1e9), num(young.Values["allocs/op"]), num(f.Values["allocs/op"]))
		floor.ok = x <= 1.5
	}
	return
}

func ratioText(x float64) string {
	if x < 10 {
		return fmt.Sprintf("%.2f", x)
	}
	return fmt.Sprintf("%.0f", x)
}

func hasBench(rows map[string]*Row, b string) bool {
	for _, r := range rows {
		if r.Bench == b {
			return true
		}
	}
	return false
}

func yes(ok bool) string {
	if ok {
		return "yes"
	}
	return "**no**"
}

func orDash(s string) string {
	if s == "" {
		return "–"
	}
	return s
}

// num prints a median with three significant digits, integers as they are.
func num(v float64) string {
	switch {
	case v == 0:
		return "0"
	case v == math.Trunc(v) && v < 1e6:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case v >= 100:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case v >= 10:
		return strconv.FormatFloat(v, 'f', 1, 64)
	}
	return strconv.FormatFloat(v, 'f', 2, 64)
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "report:", err)
	os.Exit(1)
}
