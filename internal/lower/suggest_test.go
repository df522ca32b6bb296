package lower_test

import (
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/fsmgen/fsmgen/internal/lower"
)

// misspeltRefs is a spec with n states and n transitions from a misspelt state each
// (statx_12 for state_12).
func misspeltRefs(n int) []byte {
	var b strings.Builder
	b.WriteString("version: 1\nmachine: M\npackage: m\nstates:\n  a: { initial: true }\n")
	for i := range n {
		fmt.Fprintf(&b, "  state_%d: {}\n", i)
	}
	b.WriteString("events:\n  go: {}\ntransitions:\n")
	for i := range n {
		fmt.Fprintf(&b, "  - { from: statx_%d, on: go, to: a }\n", i)
	}
	return []byte(b.String())
}

// TestManyMisspeltReferences: 8,000 misspelt references took a hundred seconds, each
// compared with every declared name. Each is still reported; the first 100 of a kind get
// their suggestion (a names.Suggester per kind), the others none.
func TestManyMisspeltReferences(t *testing.T) {
	const n = 8000
	var unknown []string
	for _, d := range lower.Check("spec.fsm.yaml", misspeltRefs(n)) {
		if strings.HasPrefix(d.Message, "unknown state") {
			unknown = append(unknown, d.Message)
		}
	}
	if len(unknown) != n {
		t.Fatalf("%d unknown states reported, want %d", len(unknown), n)
	}
	for i, msg := range unknown { // sorted by position: in the order of the transitions
		want := fmt.Sprintf("unknown state %q", fmt.Sprintf("statx_%d", i))
		if i < 100 {
			want += fmt.Sprintf(" (did you mean %q?)", fmt.Sprintf("state_%d", i))
		}
		if msg != want {
			t.Fatalf("finding %d: %q, want %q", i, msg, want)
		}
	}

	// Twice the spec, about twice the allocations. (The comparisons allocate nothing; their
	// bound is tested in package names, and the suggestions above show it is used.)
	allocs := func(n int) uint64 {
		src := misspeltRefs(n)
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		lower.Check("spec.fsm.yaml", src)
		runtime.ReadMemStats(&after)
		return after.Mallocs - before.Mallocs
	}
	small, large := allocs(n/2), allocs(n)
	if r := float64(large) / float64(small); r > 2.6 {
		t.Errorf("allocations grew %.1fx from %d to %d misspelt references (%d, %d)", r, n/2, n, small, large)
	}
}
