package review_test

import (
	"context"
	"testing"

	"github.com/fsmgen/fsmgen/generated/review"
)

// Fire on a valid and on a refused transition must not allocate. The allocation count is
// deterministic, unlike time, so it is asserted here; the speed is in the benchmarks.
func TestFireAllocatesNothing(t *testing.T) {
	ctx := context.Background()
	m := review.NewTask()
	m.Fire(ctx, review.EventInProgress)
	valid := testing.AllocsPerRun(1000, func() {
		m.Fire(ctx, review.EventBlocked)
		m.Fire(ctx, review.EventInProgress)
	})
	refused := testing.AllocsPerRun(1000, func() { m.Fire(ctx, review.EventCompleted) })
	var buf [review.NumEvents]review.Event
	permitted := testing.AllocsPerRun(1000, func() { m.Permitted(ctx, buf[:0]) })
	if valid != 0 || refused != 0 || permitted != 0 {
		t.Errorf("allocs per run: valid %v, refused %v, permitted %v; want 0", valid, refused, permitted)
	}
}

func BenchmarkFireValid(b *testing.B) {
	ctx := context.Background()
	m := review.NewTask()
	m.Fire(ctx, review.EventInProgress)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if i%2 == 0 {
			m.Fire(ctx, review.EventBlocked)
		} else {
			m.Fire(ctx, review.EventInProgress)
		}
	}
}

func BenchmarkFireRefused(b *testing.B) {
	ctx := context.Background()
	m := review.NewTask()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := m.Fire(ctx, review.EventCompleted); err == nil {
			b.Fatal("accepted")
		}
	}
}

func BenchmarkCan(b *testing.B) {
	ctx := context.Background()
	m := review.NewTask()
	b.ReportAllocs()
	for b.Loop() {
		m.Can(ctx, review.EventInProgress)
	}
}

func BenchmarkPermitted(b *testing.B) {
	ctx := context.Background()
	m := review.NewTask()
	var buf [review.NumEvents]review.Event
	b.ReportAllocs()
	for b.Loop() {
		m.Permitted(ctx, buf[:0])
	}
}

// BenchmarkFireParallel runs one machine per goroutine.
func BenchmarkFireParallel(b *testing.B) {
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		ctx := context.Background()
		m := review.NewTask()
		m.Fire(ctx, review.EventInProgress)
		for i := 0; pb.Next(); i++ {
			if i%2 == 0 {
				m.Fire(ctx, review.EventBlocked)
			} else {
				m.Fire(ctx, review.EventInProgress)
			}
		}
	})
}
