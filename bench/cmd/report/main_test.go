package main

import "testing"

// A target with no measurement behind it is not met.
func TestTargetFactsNeedData(t *testing.T) {
	row := func(b, m, impl string, ns, allocs float64) *Row {
		return &Row{Bench: b, Machine: m, Impl: impl, Values: map[string]float64{"sec/op": ns * 1e-9, "allocs/op": allocs}}
	}
	full := map[string]*Row{}
	for _, b := range []string{"FireValid", "FireRejected"} {
		for _, m := range mach {
			for _, r := range []*Row{row(b, m, "hand", 4, 0), row(b, m, "fsmgen", 5, 0), row(b, m, "looplab", 500, 3), row(b, m, "stateless", 500, 2)} {
				full[b+"/"+m+"/"+r.Impl] = r
			}
		}
	}
	if a, r, p, _ := targetFacts(full); !a.ok || !r.ok || !p.ok {
		t.Fatalf("every target measured and met, yet: allocs %v, ratio %v, peers %v", a, r, p)
	}
	for _, missing := range []string{"hand", "looplab", "stateless"} {
		rows := map[string]*Row{}
		for k, v := range full {
			if v.Impl != missing {
				rows[k] = v
			}
		}
		a, r, p, _ := targetFacts(rows)
		if (missing == "hand") == r.ok || (missing != "hand") == p.ok || !a.ok {
			t.Errorf("without %s: allocs %v, ratio %v, peers %v", missing, a, r, p)
		}
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
