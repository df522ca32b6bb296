package fsmrt_test

import (
	"math"
	"math/big"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/fsmgen/fsmgen/fsmrt"
)

// refReached is Reached computed with math/big: elapsed*100 >= d*pct, for elapsed >= 0,
// d > 0 and pct > 0.
func refReached(elapsed, d time.Duration, pct int) bool {
	if elapsed < 0 || d <= 0 || pct <= 0 {
		return false
	}
	l := new(big.Int).Mul(big.NewInt(int64(elapsed)), big.NewInt(100))
	r := new(big.Int).Mul(big.NewInt(int64(d)), big.NewInt(int64(pct)))
	return l.Cmp(r) >= 0
}

// refLevel is Level computed with refReached.
func refLevel(elapsed, d time.Duration, levels []int) int {
	best := -1
	for i, p := range levels {
		if refReached(elapsed, d, p) {
			best = i
		}
	}
	return best
}

const year = 365 * 24 * time.Hour

func TestReachedTable(t *testing.T) {
	const maxDur = time.Duration(math.MaxInt64)
	tests := []struct {
		elapsed, d time.Duration
		pct        int
		want       bool
	}{
		// Exact boundaries.
		{79 * time.Millisecond, 100 * time.Millisecond, 80, false},
		{80*time.Millisecond - 1, 100 * time.Millisecond, 80, false},
		{80 * time.Millisecond, 100 * time.Millisecond, 80, true},
		{100*time.Millisecond - 1, 100 * time.Millisecond, 100, false},
		{100 * time.Millisecond, 100 * time.Millisecond, 100, true},
		{150*time.Millisecond - 1, 100 * time.Millisecond, 150, false},
		{150 * time.Millisecond, 100 * time.Millisecond, 150, true},
		{time.Hour, 100 * time.Millisecond, 150, true},
		// Thresholds that are not whole nanoseconds round up: 50% of 3ns is 1.5ns.
		{1, 3, 50, false},
		{2, 3, 50, true},
		{0, 1, 1, false},
		{1, 1, 1, true},
		{1, 1, 100, true},
		{1, 1, 101, false},
		{1, 100, 1, true},
		{1, 101, 1, false},
		// Nothing is reached by a negative elapsed time, a timeout <= 0 or a pct <= 0.
		{-1, time.Second, 1, false},
		{math.MinInt64, time.Second, 1, false},
		{-time.Hour, time.Second, 100, false},
		{time.Hour, 0, 100, false},
		{time.Hour, -time.Second, 100, false},
		{maxDur, math.MinInt64, 1, false},
		{time.Hour, time.Second, 0, false},
		{time.Hour, time.Second, -1, false},
		{maxDur, 1, math.MinInt, false},
		{0, time.Second, 100, false},
		{0, 0, 0, false},
		// No overflow.
		{3 * year, time.Hour, 150, true},
		{100 * year, time.Hour, 150, true},
		{100 * year, time.Hour, 87_600_000, true}, // 100 years is 876000 hours
		{100 * year, time.Hour, 87_600_001, false},
		{100 * year, time.Hour, math.MaxInt32, false},
		{maxDur, maxDur, 100, true},
		{maxDur, maxDur, 101, false},
		{maxDur - 1, maxDur, 100, false},
		{maxDur, maxDur, math.MaxInt64, false},
		{maxDur, 1, math.MaxInt32, true},
		{maxDur, 1, math.MaxInt64, true},
		{maxDur, 2, math.MaxInt64, true},
		{1, 1, math.MaxInt64, false},
		{maxDur, maxDur / 100, 10000, true},
		{maxDur, maxDur/100 + 1, 10000, false},
	}
	for _, tt := range tests {
		if got := fsmrt.Reached(tt.elapsed, tt.d, tt.pct); got != tt.want {
			t.Errorf("Reached(%d, %d, %d) = %v, want %v", tt.elapsed, tt.d, tt.pct, got, tt.want)
		}
		if ref := refReached(tt.elapsed, tt.d, tt.pct); ref != tt.want {
			t.Errorf("reference Reached(%d, %d, %d) = %v, table says %v", tt.elapsed, tt.d, tt.pct, ref, tt.want)
		}
	}
}

func TestLevelTable(t *testing.T) {
	levels := []int{80, 100, 150}
	const maxDur = time.Duration(math.MaxInt64)
	tests := []struct {
		elapsed, d time.Duration
		levels     []int
		want       int
	}{
		{0, 10 * time.Minute, levels, -1},
		{79 * 6 * time.Second, 10 * time.Minute, levels, -1}, // 79%
		{8*time.Minute - 1, 10 * time.Minute, levels, -1},
		{8 * time.Minute, 10 * time.Minute, levels, 0}, // 80%
		{10*time.Minute - 1, 10 * time.Minute, levels, 0},
		{10 * time.Minute, 10 * time.Minute, levels, 1}, // 100%
		{15*time.Minute - 1, 10 * time.Minute, levels, 1},
		{15 * time.Minute, 10 * time.Minute, levels, 2}, // 150%
		{time.Hour, 10 * time.Minute, levels, 2},
		{-time.Minute, 10 * time.Minute, levels, -1},
		{math.MinInt64, 10 * time.Minute, levels, -1},
		{time.Hour, 0, levels, -1},
		{time.Hour, -time.Minute, levels, -1},
		{time.Hour, time.Minute, nil, -1},
		{time.Hour, time.Minute, []int{}, -1},
		{time.Hour, time.Minute, []int{-10, 0}, -1},
		{time.Hour, time.Minute, []int{0, 50}, 1},
		{0, time.Minute, []int{0, 50}, -1},
		// No overflow: far past the timeout is still the top level.
		{3 * year, time.Hour, levels, 2},
		{100 * year, time.Hour, levels, 2},
		{maxDur, time.Hour, levels, 2},
		{maxDur, maxDur, levels, 1},
		{maxDur, maxDur, []int{100, 101}, 0},
		{maxDur, 1, []int{1, math.MaxInt32}, 1},
		{maxDur / 100 * 80, maxDur / 100, []int{79, 80, 81}, 2},
	}
	for _, tt := range tests {
		if got := fsmrt.Level(tt.elapsed, tt.d, tt.levels); got != tt.want {
			t.Errorf("Level(%d, %d, %v) = %d, want %d", tt.elapsed, tt.d, tt.levels, got, tt.want)
		}
		if ref := refLevel(tt.elapsed, tt.d, tt.levels); ref != tt.want {
			t.Errorf("reference Level(%d, %d, %v) = %d, table says %d", tt.elapsed, tt.d, tt.levels, ref, tt.want)
		}
	}
}

// randDuration draws durations of every size and sign, biased towards edges.
func randDuration(rng *rand.Rand) time.Duration {
	switch rng.IntN(7) {
	case 0:
		return time.Duration(rng.Uint64()) // any sign
	case 1:
		return time.Duration(rng.Int64()) // any non-negative
	case 2:
		return time.Duration(rng.Int64N(2001) - 1000)
	case 3:
		return time.Duration(rng.Int64N(int64(1) << rng.IntN(63)))
	case 4:
		return time.Duration(math.MaxInt64 - rng.Int64N(1000))
	case 5:
		return time.Duration(rng.Int64N(200*int64(year)) - int64(year))
	default:
		edges := []time.Duration{0, 1, -1, 2, 99, 100, 101, math.MaxInt64, math.MinInt64,
			math.MaxInt64 / 100, math.MaxInt64/100 + 1, math.MaxInt32, time.Hour, year}
		return edges[rng.IntN(len(edges))]
	}
}

// randPct draws percentages of every size and sign, biased towards small ones.
func randPct(rng *rand.Rand) int {
	switch rng.IntN(6) {
	case 0, 1:
		return rng.IntN(301)
	case 2:
		return int(rng.Uint64()) // any sign
	case 3:
		return int(rng.Int64N(int64(1) << rng.IntN(63)))
	case 4:
		return -rng.IntN(1000)
	default:
		edges := []int{0, 1, -1, 79, 80, 100, 101, 150, math.MaxInt32, math.MaxInt32 + 1, math.MaxInt64, math.MinInt64}
		return edges[rng.IntN(len(edges))]
	}
}

func TestReachedRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(0x5eed, 2024))
	reached, notReached := 0, 0
	for range 200000 {
		elapsed, d, pct := randDuration(rng), randDuration(rng), randPct(rng)
		want := refReached(elapsed, d, pct)
		if got := fsmrt.Reached(elapsed, d, pct); got != want {
			t.Fatalf("Reached(%d, %d, %d) = %v, want %v", elapsed, d, pct, got, want)
		}
		if want {
			reached++
		} else {
			notReached++
		}
	}
	// The draw exercises both answers substantially.
	if reached < 10000 || notReached < 10000 {
		t.Fatalf("draw too lopsided: %d reached, %d not", reached, notReached)
	}
}

func TestReachedRandomThresholds(t *testing.T) {
	// For random d and pct, the smallest elapsed that reaches pct% of d is
	// ceil(d*pct/100): it reaches it, and one nanosecond less does not.
	rng := rand.New(rand.NewPCG(42, 4242))
	hundred := big.NewInt(100)
	checked := 0
	for range 200000 {
		d, pct := randDuration(rng), randPct(rng)
		if d <= 0 || pct <= 0 {
			continue
		}
		thr := new(big.Int).Mul(big.NewInt(int64(d)), big.NewInt(int64(pct)))
		thr.Add(thr, big.NewInt(99))
		thr.Quo(thr, hundred)
		if !thr.IsInt64() {
			// Out of reach: even the longest duration does not reach it.
			if fsmrt.Reached(math.MaxInt64, d, pct) {
				t.Fatalf("Reached(MaxInt64, %d, %d) = true, threshold %s", d, pct, thr)
			}
			continue
		}
		e := time.Duration(thr.Int64())
		if !fsmrt.Reached(e, d, pct) {
			t.Fatalf("Reached(%d, %d, %d) = false at the threshold", e, d, pct)
		}
		if fsmrt.Reached(e-1, d, pct) {
			t.Fatalf("Reached(%d, %d, %d) = true below the threshold", e-1, d, pct)
		}
		checked++
	}
	if checked < 50000 {
		t.Fatalf("only %d thresholds checked", checked)
	}
}

func TestLevelRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 77))
	seen := map[int]int{}
	for range 100000 {
		elapsed, d := randDuration(rng), randDuration(rng)
		levels := make([]int, rng.IntN(6))
		for i := range levels {
			levels[i] = randPct(rng)
		}
		slices.Sort(levels)
		want := refLevel(elapsed, d, levels)
		if got := fsmrt.Level(elapsed, d, levels); got != want {
			t.Fatalf("Level(%d, %d, %v) = %d, want %d", elapsed, d, levels, got, want)
		}
		seen[want]++
	}
	for _, l := range []int{-1, 0, 1, 2, 3, 4} {
		if seen[l] < 100 {
			t.Fatalf("level %d drawn only %d times: %v", l, seen[l], seen)
		}
	}
}

func TestLevelDoesNotModifyLevels(t *testing.T) {
	levels := []int{80, 100, 150}
	fsmrt.Level(time.Hour, time.Minute, levels)
	if !slices.Equal(levels, []int{80, 100, 150}) {
		t.Fatalf("Level changed its levels: %v", levels)
	}
}
