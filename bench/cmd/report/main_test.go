package main

import (
	"strings"
	"testing"
)

// A target with no measurement behind it is not met.
func TestTargetFactsNeedData(t *testing.T) {
	row := func(b, m, impl string, ns, allocs float64) *Row {
		return &Row{Bench: b, Machine: m, Impl: impl, Values: map[string]float64{"sec/op": ns * 1e-9, "allocs/op": allocs}}
	}
	full := map[string]*Row{}
	for _, b := range floorRows {
		for _, m := range mach[:2] {
			for _, r := range []*Row{row(b, m, "table", 4, 0), row(b, m, "hand", 4, 0), row(b, m, "fsmgen", 5, 0), row(b, m, "looplab", 500, 3), row(b, m, "stateless", 500, 2)} {
				full[b+"/"+m+"/"+r.Impl] = r
			}
		}
	}
	if a, _, p, tb := targetFacts(full); !a.ok || !p.ok || !tb.ok {
		t.Fatalf("every target measured and met, yet: allocs %v, peers %v, table %v", a, p, tb)
	}
	for _, missing := range []string{"table", "looplab", "stateless"} {
		rows := map[string]*Row{}
		for k, v := range full {
			if v.Impl != missing {
				rows[k] = v
			}
		}
		a, _, p, tb := targetFacts(rows)
		if (missing == "table") == tb.ok || (missing != "table") == p.ok || !a.ok {
			t.Errorf("without %s: allocs %v, peers %v, table %v", missing, a, p, tb)
		}
	}
	// One row past 1.25x of the table fails the target.
	slow := map[string]*Row{}
	for k, v := range full {
		slow[k] = v
	}
	slow["Can/review/fsmgen"] = row("Can", "review", "fsmgen", 5.1, 0)
	if _, _, _, tb := targetFacts(slow); tb.ok {
		t.Errorf("a row at 1.27x of the table met the target: %v", tb)
	}
	noAllocs := map[string]*Row{}
	for k, v := range full {
		c := *v
		c.Values = map[string]float64{"sec/op": v.Values["sec/op"]}
		noAllocs[k] = &c
	}
	if a, _, _, _ := targetFacts(noAllocs); a.ok {
		t.Errorf("allocs/op not measured, yet met: %v", a)
	}
}

func TestPersistFacts(t *testing.T) {
	row := func(m, impl string, ns float64) *Row {
		return &Row{Bench: "Persist", Machine: m, Impl: impl, Values: map[string]float64{"sec/op": ns * 1e-9, "allocs/op": 1}}
	}
	if age, floor := persistFacts(map[string]*Row{}); age.ok || floor.ok {
		t.Errorf("nothing measured, yet met: %v, %v", age, floor)
	}
	rows := map[string]*Row{
		"Persist/age0/fsmgen":    row("age0", "fsmgen", 1000),
		"Persist/age4000/fsmgen": row("age4000", "fsmgen", 1150),
		"Persist/age0/floor":     row("age0", "floor", 700),
	}
	if age, floor := persistFacts(rows); !age.ok || !floor.ok {
		t.Errorf("met, yet: %v, %v", age, floor)
	}
	rows["Persist/age4000/fsmgen"] = row("age4000", "fsmgen", 1300)
	rows["Persist/age0/floor"] = row("age0", "floor", 600)
	if age, floor := persistFacts(rows); age.ok || floor.ok {
		t.Errorf("missed, yet met: %v, %v", age, floor)
	}
}

// TestWithScaleout: the scale-out results add a target row, met only when every ratio
// reaches 0.8x (and said of the rows of one worker when only they do), and their section
// before benchstat's; without results nothing changes.
func TestWithScaleout(t *testing.T) {
	doc := "## Targets\n\n| target | measured | met |\n|---|---|---|\n| a | b | yes |\n\n`Fire` here is FireValid.\n\n## benchstat\n\nx\n"
	results := func(pg string) string {
		return "# Scale-out results\n\nWritten by ...\n\n| date | machine | Go | N | store | transitions/s | same-work floor/s | ratio | two-statement floor/s | ratio |\n|---|---|---|---:|---|---:|---:|---:|---:|---:|\n" +
			"| d | m | go | 1 | sqlite | 8 | 10 | 0.80x | 16 | 0.50x |\n" +
			"| d | m | go | 4 | postgres | 5 | 10 | " + pg + " | 5 | 1.00x |\n\n| N | store | run | ratio |\n|---|---|---|---|\n| 1 | sqlite | w | 0.10x |\n\n## Notes\n\nn\n"
	}
	if got := withScaleout(doc, strings.Replace(results("0.90x"), "| 0.80x | 16 |", "| 0.79x | 16 |", 1)); !strings.Contains(got, "sqlite N=1 0.79x; postgres N=4 0.90x | **no** |") {
		t.Errorf("one worker under the target: %s", got)
	}
	if got := withScaleout(doc, ""); got != doc {
		t.Errorf("without results: %q", got)
	}
	for pg, met := range map[string]string{"0.79x": "**no**; with one worker, yes: the notes of the results say what holds each other row", "0.80x": "yes", "0.95x": "yes"} {
		got := withScaleout(doc, results(pg))
		row := "| durable stores: transitions/s of the scale-out proof's N worker processes (N = 1, 4, 8) at least 0.8x the same durable writes written by hand (the same-work floor), PostgreSQL and SQLite alike | sqlite N=1 0.80x; postgres N=4 " + pg + " | " + met + " |\n"
		if !strings.Contains(got, "| a | b | yes |\n"+row+"\n`Fire` here") {
			t.Errorf("postgres at %s: no target row %q in\n%s", pg, row, got)
		}
		section := strings.Index(got, "## Durable stores: the scale-out proof")
		if section < 0 || section > strings.Index(got, "## benchstat") || !strings.Contains(got, "\n### Notes\n") || strings.Contains(got, "# Scale-out results") {
			t.Errorf("postgres at %s: the section is missing or out of place:\n%s", pg, got)
		}
	}
}

// TestChartFacts: the statechart target is met when the nested cycle allocates nothing
// and takes at most twice the flat one, and not without a measurement.
func TestChartFacts(t *testing.T) {
	row := func(m string, ns float64, allocs ...float64) *Row {
		r := &Row{Bench: "Chart", Machine: m, Impl: "fsmgen", Values: map[string]float64{"sec/op": ns * 1e-9}}
		if len(allocs) > 0 {
			r.Values["allocs/op"] = allocs[0]
		}
		return r
	}
	for _, c := range []struct {
		name   string
		nested *Row
		flat   *Row
		ok     bool
	}{
		{"nothing measured", nil, nil, false},
		{"no flat", row("nested", 90, 0), nil, false},
		{"within 2x", row("nested", 90, 0), row("flat", 48, 0), true},
		{"at 2x", row("nested", 96, 0), row("flat", 48, 0), true},
		{"past 2x", row("nested", 222, 0), row("flat", 48, 0), false},
		{"allocates", row("nested", 90, 1), row("flat", 48, 0), false},
		{"allocs not measured", row("nested", 90), row("flat", 48, 0), false},
	} {
		rows := map[string]*Row{}
		if c.nested != nil {
			rows["Chart/nested/fsmgen"] = c.nested
		}
		if c.flat != nil {
			rows["Chart/flat/fsmgen"] = c.flat
		}
		if f := chartFacts(rows); f.ok != c.ok {
			t.Errorf("%s: %v, want met %v", c.name, f, c.ok)
		}
	}
	rows := map[string]*Row{
		"Chart/nested/fsmgen": row("nested", 222, 0),
		"Chart/flat/fsmgen":   row("flat", 48, 0),
		"Chart/flat/table":    {Bench: "Chart", Machine: "flat", Impl: "table", Values: map[string]float64{"sec/op": 40e-9, "allocs/op": 0}},
	}
	if f := chartFacts(rows); !strings.HasPrefix(f.text, "4.62x (222 ns against 48.0 ns") {
		t.Errorf("text %q", f.text)
	}
	table := chartTable(rows)
	for _, want := range []string{"| nested | **fsmgen** | 222 |  | 0 | 0 | 4.62 | 5.55 |", "| flat | fsmgen | 48.0 |  | 0 | 0 | 1.00 | 1.20 |", "| flat | table | 40 |  | 0 | 0 | 0.83 | 1.00 |"} {
		if !strings.Contains(table, want) {
			t.Errorf("no row %q in\n%s", want, table)
		}
	}
}
