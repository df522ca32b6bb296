package fsmrt_test

import (
	"fmt"
	"reflect"
	"strconv"
	"testing"

	"github.com/fsmgen/fsmgen/fsmrt"
)

func TestWindow(t *testing.T) {
	var w fsmrt.Window[int]
	if w.Size() != fsmrt.DefaultWindow || w.Len() != 0 || len(w.Items()) != 0 {
		t.Fatalf("zero window: size %d, len %d", w.Size(), w.Len())
	}
	w.SetSize(3)
	for i := 1; i <= 10; i++ {
		w.Add(i)
		want := []int{}
		for j := max(1, i-2); j <= i; j++ {
			want = append(want, j)
		}
		if got := w.Items(); !reflect.DeepEqual(got, want) || w.Len() != len(want) {
			t.Fatalf("after %d: %v (len %d), want %v", i, got, w.Len(), want)
		}
	}
	// Items is a copy.
	items := w.Items()
	items[0] = 99
	if w.Items()[0] == 99 {
		t.Error("Items shares the window's records")
	}
	w.SetSize(2)
	if got := w.Items(); !reflect.DeepEqual(got, []int{9, 10}) {
		t.Errorf("shrunk to 2: %v", got)
	}
	w.SetSize(0)
	if w.Size() != fsmrt.DefaultWindow || !reflect.DeepEqual(w.Items(), []int{9, 10}) {
		t.Errorf("reset to the default: size %d, %v", w.Size(), w.Items())
	}
	w.Reset()
	if w.Len() != 0 || w.Size() != fsmrt.DefaultWindow {
		t.Errorf("reset: len %d, size %d", w.Len(), w.Size())
	}
	// Adding costs no allocation once the slice has grown to twice the size.
	w.SetSize(4)
	for i := range 8 {
		w.Add(i)
	}
	if n := testing.AllocsPerRun(100, func() { w.Add(1) }); n != 0 {
		t.Errorf("Add allocates %v", n)
	}
}

func TestKeyWindow(t *testing.T) {
	var w fsmrt.KeyWindow[string]
	if w.Size() != fsmrt.DefaultWindow || w.Len() != 0 {
		t.Fatalf("zero window: size %d, len %d", w.Size(), w.Len())
	}
	if _, ok := w.Get("a"); ok {
		t.Error("the empty window holds a key")
	}
	w.SetSize(3)
	for i := 1; i <= 5; i++ {
		w.Put(fmt.Sprint("k", i), fmt.Sprint("r", i))
	}
	for i := 1; i <= 5; i++ {
		r, ok := w.Get(fmt.Sprint("k", i))
		if want := i > 2; ok != want || (ok && r != fmt.Sprint("r", i)) {
			t.Errorf("k%d: %q, %v; want held %v", i, r, ok, want)
		}
	}
	// Putting a key again changes its record, not its place.
	w.Put("k3", "again")
	w.Put("k6", "r6")
	if r, ok := w.Get("k3"); ok || r != "" {
		t.Errorf("k3 should have gone first: %q, %v", r, ok)
	}
	if r, _ := w.Get("k4"); r != "r4" || w.Len() != 3 {
		t.Errorf("k4 %q, len %d", r, w.Len())
	}
	// Shrinking keeps the newest keys with their records.
	w.SetSize(2)
	for k, want := range map[string]string{"k4": "", "k5": "r5", "k6": "r6"} {
		if r, _ := w.Get(k); r != want {
			t.Errorf("after shrinking, %s: %q, want %q", k, r, want)
		}
	}
	w.SetSize(-1)
	if w.Size() != fsmrt.DefaultWindow || w.Len() != 2 {
		t.Errorf("default size: %d, len %d", w.Size(), w.Len())
	}
}

// TestWindowGrowKeepsDropped: growing a window does not bring back the records it dropped,
// however many its slice still holds.
func TestWindowGrowKeepsDropped(t *testing.T) {
	var w fsmrt.Window[int]
	w.Add(1)
	w.Add(2)
	w.SetSize(3) // shrunk from the default, holding fewer
	for i := 3; i <= 5; i++ {
		w.Add(i)
	}
	if got := w.Items(); !reflect.DeepEqual(got, []int{3, 4, 5}) {
		t.Fatalf("a window of 3: %v", got)
	}
	w.SetSize(10)
	if got := w.Items(); !reflect.DeepEqual(got, []int{3, 4, 5}) || w.Len() != 3 {
		t.Errorf("grown to 10: %v (len %d), want [3 4 5]", got, w.Len())
	}
	w.Add(6)
	w.SetSize(2)
	w.SetSize(0)
	if got := w.Items(); !reflect.DeepEqual(got, []int{5, 6}) {
		t.Errorf("shrunk to 2, grown to the default: %v, want [5 6]", got)
	}
}

// TestKeyWindowKnowsWhatItDropped: every key the window dropped may have been forgotten
// (no false negatives, or a used key would fire twice), and few keys it never held are
// taken for dropped ones.
func TestKeyWindowKnowsWhatItDropped(t *testing.T) {
	var w fsmrt.KeyWindow[int]
	w.SetSize(100)
	if w.MayHaveForgotten("k0") {
		t.Fatal("a window that dropped nothing may have forgotten a key")
	}
	const n = 400 // four windows' worth dropped
	for i := range n + 100 {
		w.Put("k"+strconv.Itoa(i), i)
	}
	for i := range n {
		if !w.MayHaveForgotten("k" + strconv.Itoa(i)) {
			t.Fatalf("k%d was dropped, but the window says it never held it", i)
		}
	}
	wrong := 0
	for i := range 10000 {
		if w.MayHaveForgotten("fresh" + strconv.Itoa(i)) {
			wrong++
		}
	}
	if wrong > 300 {
		t.Errorf("%d of 10,000 fresh keys taken for dropped ones", wrong)
	}
	// Shrinking drops keys too.
	w.SetSize(10)
	for i := n; i < n+90; i++ {
		if !w.MayHaveForgotten("k" + strconv.Itoa(i)) {
			t.Fatalf("k%d was dropped by SetSize, but the window says it never held it", i)
		}
	}
}
