package main

import "testing"

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
