package inspect

import (
	"context"

	"github.com/fsmgen/fsmgen/fsmrt"
)

// countByState counts the instances q selects, by state: in one statement of the store
// when it counts (fsmrt.StateCounter), so that a page over millions of instances reads
// indexes, not rows; else by listing them with Find.
func (h *Handler) countByState(ctx context.Context, q fsmrt.Query) (map[string]int, error) {
	if sc, ok := h.store.(fsmrt.StateCounter); ok {
		return sc.CountByState(ctx, q)
	}
	found, err := h.store.Find(ctx, q)
	if err != nil {
		return nil, err
	}
	out := map[string]int{}
	for _, in := range found {
		out[in.State]++
	}
	return out, nil
}

// total adds up counts by state.
func total(counts map[string]int) int {
	n := 0
	for _, c := range counts {
		n += c
	}
	return n
}
