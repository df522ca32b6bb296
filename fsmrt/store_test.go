package fsmrt_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"testing"

	"github.com/fsmgen/fsmgen/fsmrt"
)

type tEntry struct {
	Seq  int64  `json:"seq"`
	Note string `json:"note"`
}

func (e tEntry) Sequence() int64 { return e.Seq }

type tSnap struct {
	Seq   int64  `json:"seq"`
	State string `json:"state"`
}

func (s tSnap) Sequence() int64 { return s.Seq }

// tUnencodable cannot be encoded to JSON.
type tUnencodable struct {
	Seq int64
	C   chan int
}

func (s tUnencodable) Sequence() int64 { return s.Seq }

func TestMemoryStore(t *testing.T) {
	ctx := context.Background()
	var st fsmrt.Store[tEntry, tSnap] = fsmrt.NewMemoryStore[tEntry, tSnap]()
	if s, ok, log, err := st.Load(ctx, "a"); ok || log != nil || err != nil || s != (tSnap{}) {
		t.Errorf("empty store: %+v %v %v %v", s, ok, log, err)
	}
	for i := int64(1); i <= 4; i++ {
		if err := st.Append(ctx, "a", tEntry{Seq: i, Note: fmt.Sprint("e", i)}); err != nil {
			t.Fatal(err)
		}
	}
	for _, seq := range []int64{0, 2, 4, 6} {
		if err := st.Append(ctx, "a", tEntry{Seq: seq}); !errors.Is(err, fsmrt.ErrStoreConflict) {
			t.Errorf("append of %d after 4: %v", seq, err)
		}
	}
	if err := st.Save(ctx, "a", 0, tSnap{Seq: 2, State: "two"}); err != nil {
		t.Fatal(err)
	}
	if err := st.Save(ctx, "a", 0, tSnap{Seq: 3}); !errors.Is(err, fsmrt.ErrStoreConflict) {
		t.Errorf("save over the wrong version: %v", err)
	}
	s, ok, log, err := st.Load(ctx, "a")
	if !ok || err != nil || s.State != "two" || s.Seq != 2 || !reflect.DeepEqual(log, []tEntry{{3, "e3"}, {4, "e4"}}) {
		t.Errorf("load: %+v %v %+v %v", s, ok, log, err)
	}
	// What Load returns is a copy.
	log[0].Note = "changed"
	if _, _, again, _ := st.Load(ctx, "a"); again[0].Note != "e3" {
		t.Error("Load shares its entries with the store")
	}
	for after, want := range map[int64]int{-3: 4, 0: 4, 1: 3, 3: 1, 4: 0, 99: 0} {
		if got, err := st.Log(ctx, "a", after); err != nil || len(got) != want || (want > 0 && got[0].Seq != 4-int64(want)+1) {
			t.Errorf("Log after %d: %+v, %v", after, got, err)
		}
	}
	if got, _ := st.Log(ctx, "nobody", 0); len(got) != 0 {
		t.Errorf("log of an unknown machine: %v", got)
	}
	// After a snapshot, the log continues from the snapshot's number for a machine with no
	// entries in this store (its earlier log is elsewhere).
	if err := st.Save(ctx, "b", 0, tSnap{Seq: 7}); err != nil {
		t.Fatal(err)
	}
	if err := st.Append(ctx, "b", tEntry{Seq: 8}); err != nil {
		t.Errorf("append after a snapshot at 7: %v", err)
	}
	bad := fsmrt.NewMemoryStore[tEntry, tUnencodable]()
	if err := bad.Save(ctx, "a", 0, tUnencodable{Seq: 1}); err == nil {
		t.Error("saved a snapshot that does not encode")
	}
}

func TestMemoryStoreConcurrentWriters(t *testing.T) {
	ctx := context.Background()
	st := fsmrt.NewMemoryStore[tEntry, tSnap]()
	var wg sync.WaitGroup
	var mu sync.Mutex
	won := 0
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if st.Append(ctx, "a", tEntry{Seq: 1}) == nil {
				mu.Lock()
				won++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if won != 1 {
		t.Errorf("%d writers appended seq 1", won)
	}
}

func TestStoreError(t *testing.T) {
	e := fsmrt.StoreFailed(&fsmrt.Spec{Package: "review"}, "append", 5, fsmrt.ErrStoreConflict)
	if got, want := e.Error(), "review: store append of seq 5: fsm: store version conflict"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	if !errors.Is(e, fsmrt.ErrStoreConflict) || errors.Is(e, fsmrt.ErrRefused) {
		t.Error("StoreError matches the wrong errors")
	}
}
