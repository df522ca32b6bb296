package scaleout

import (
	"slices"
	"testing"
)

// The plan is the same every time, gives every event to its owner (and the contended ones
// to the next worker too), and has duplicates, key conflicts and contended events.
func TestPlan(t *testing.T) {
	p := Plan{Seed: 1, Instances: 30, Events: 1000, Workers: 3}
	if !slices.Equal(p.Items(7), p.Items(7)) {
		t.Fatal("the plan of an order changes")
	}
	total, kinds, contended := 0, map[Kind]int{}, 0
	for i := range p.Instances {
		for _, it := range p.Items(i) {
			total++
			kinds[it.Kind]++
			if it.Contended {
				contended++
			}
		}
	}
	if total != p.Events || kinds[Duplicate] == 0 || kinds[KeyConflict] == 0 || contended == 0 {
		t.Fatalf("%d events, %v, %d contended", total, kinds, contended)
	}
	given := 0
	for w := range p.Workers {
		given += len(p.ForWorker(w))
	}
	if given != total+contended {
		t.Errorf("the workers get %d events, want %d", given, total+contended)
	}
}
