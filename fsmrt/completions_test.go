package fsmrt

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"
)

// A CompletionGroup hands its completions to the next commit (Take), keeps those given
// back, stores them by itself after its delay when no commit took them, retries a store
// that failed, and stores the rest at Close, after which Add refuses.
func TestCompletionGroup(t *testing.T) {
	var mu sync.Mutex
	var stored []EffectID
	var fail error
	done := make(chan struct{}, 10)
	g := NewCompletionGroup(20*time.Millisecond, func(_ context.Context, ids []EffectID, at []time.Time) error {
		mu.Lock()
		defer mu.Unlock()
		defer func() { done <- struct{}{} }()
		if fail != nil {
			return fail
		}
		if len(at) != len(ids) {
			t.Errorf("%d ids, %d times", len(ids), len(at))
		}
		stored = append(stored, ids...)
		return nil
	})
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	a, b := EffectID{Machine: "m", ID: "a"}, EffectID{Machine: "m", ID: "b"}
	if !g.Add([]EffectID{a}, t0) || !g.Add([]EffectID{b}, t0.Add(time.Second)) {
		t.Fatal("Add refused")
	}
	ids, at := g.Take()
	if len(ids) != 2 || ids[0] != a || !at[1].Equal(t0.Add(time.Second)) {
		t.Fatalf("Take: %v %v", ids, at)
	}
	if ids, _ := g.Take(); len(ids) != 0 {
		t.Fatalf("a second Take: %v", ids)
	}

	// Given back, they are stored by themselves after the delay; a failed store keeps
	// them for the next try.
	mu.Lock()
	fail = errors.New("down")
	mu.Unlock()
	g.GiveBack(ids, at)
	<-done
	g.GiveBack(nil, nil) // nothing: no timer needed for it
	// The failed store gives them back once it returns (and fails again, and gives them
	// back again, until the store works).
	for start := time.Now(); ; time.Sleep(time.Millisecond) {
		if ids, at = g.Take(); len(ids) == 2 {
			break
		}
		if len(ids) != 0 || time.Since(start) > 10*time.Second {
			t.Fatalf("after a failed store: %v queued, want 2", ids)
		}
	}
	mu.Lock()
	fail = nil
	mu.Unlock()
	for len(done) > 0 {
		<-done
	}
	g.GiveBack(ids, at)
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("not stored within 10 s")
	}
	mu.Lock()
	if len(stored) != 2 {
		t.Errorf("stored %v", stored)
	}
	mu.Unlock()

	if !g.Add([]EffectID{a}, t0) {
		t.Fatal("Add refused")
	}
	if err := g.Close(); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	if len(stored) != 3 {
		t.Errorf("after Close, stored %v", stored)
	}
	mu.Unlock()
	if g.Add([]EffectID{b}, t0) {
		t.Error("Add after Close")
	}

	var none *CompletionGroup
	if none.Add([]EffectID{a}, t0) || none.Close() != nil {
		t.Error("a nil group queued")
	}
	if ids, _ := none.Take(); ids != nil {
		t.Error("a nil group gave completions")
	}
	none.GiveBack([]EffectID{a}, []time.Time{t0})
}
