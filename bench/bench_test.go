package bench_test

import (
	"testing"

	"github.com/fsmgen/fsmgen/bench/big"
	"github.com/fsmgen/fsmgen/bench/hand"
	"github.com/fsmgen/fsmgen/bench/peers"
	"github.com/fsmgen/fsmgen/generated/review"
)

// Each benchmark has one sub-benchmark per machine and implementation, named
// machine=<review|big>/impl=<hand|table|fsmgen|looplab|stateless> so that benchstat can put the
// implementations side by side (-col /impl). The bodies call the concrete types: no
// interface or closure stands between the loop and the machine.
//
// What one op is:
//   Lifecycle     reset to the initial state, then the 10 transitions of the lifecycle path
//   FireValid     one accepted transition (toggling between two states)
//   FireRejected  one refused event (the state stays)
//   Can           one query of an accepted, unguarded event
//   Permitted     one query of all the events the state accepts
//   FireParallel  FireValid with one machine per goroutine (b.RunParallel)
//   New           building one machine in its initial state

type impl struct {
	name string
	run  func(b *testing.B)
}

func runAll(b *testing.B, reviewImpls, bigImpls []impl) {
	for _, m := range []struct {
		name  string
		impls []impl
	}{{"review", reviewImpls}, {"big", bigImpls}} {
		for _, im := range m.impls {
			b.Run("machine="+m.name+"/impl="+im.name, func(b *testing.B) {
				b.ReportAllocs()
				im.run(b)
			})
		}
	}
}

// Events and states the single-transition benchmarks use (see TestBenchmarkSetups).
var (
	bigToggle = [2]string{"e00", "e02"} // s00 -> s01 -> s00
	bigReject = "e02"                   // not accepted in s00
	bigCan    = "e05"                   // accepted in s00
	rvToggle  = [2]string{peers.Blocked, peers.InProgress}
)

func BenchmarkLifecycle(b *testing.B) {
	runAll(b, []impl{
		{"hand", func(b *testing.B) {
			var m hand.Review
			for b.Loop() {
				m = hand.NewReview()
				for _, e := range reviewPathHand {
					if _, err := m.Fire(e); err != nil {
						b.Fatal(err)
					}
				}
			}
		}},
		{"table", func(b *testing.B) {
			var m hand.ReviewTable
			for b.Loop() {
				m = hand.NewReviewTable()
				for _, e := range reviewPathHand {
					if _, err := m.Fire(e); err != nil {
						b.Fatal(err)
					}
				}
			}
		}},
		{"fsmgen", func(b *testing.B) {
			m, fresh := review.NewTask(), *review.NewTask()
			for b.Loop() {
				*m = fresh
				for _, e := range reviewPathGen {
					if _, err := m.Fire(ctx, e); err != nil {
						b.Fatal(err)
					}
				}
			}
		}},
		{"looplab", func(b *testing.B) {
			m := peers.NewLooplabReview()
			for b.Loop() {
				m.Reset()
				for _, e := range reviewPath {
					if err := m.Fire(ctx, e); err != nil {
						b.Fatal(err)
					}
				}
			}
		}},
		{"stateless", func(b *testing.B) {
			m := peers.NewStatelessReview()
			for b.Loop() {
				m.Reset()
				for _, e := range reviewPath {
					if err := m.Fire(ctx, e); err != nil {
						b.Fatal(err)
					}
				}
			}
		}},
	}, []impl{
		{"hand", func(b *testing.B) {
			var m hand.BigSwitch
			for b.Loop() {
				m = hand.NewBigSwitch()
				for _, e := range bigPathHand {
					if _, err := m.Fire(e); err != nil {
						b.Fatal(err)
					}
				}
			}
		}},
		{"table", func(b *testing.B) {
			var m hand.Big
			for b.Loop() {
				m = hand.NewBig()
				for _, e := range bigPathHand {
					if _, err := m.Fire(e); err != nil {
						b.Fatal(err)
					}
				}
			}
		}},
		{"fsmgen", func(b *testing.B) {
			m, fresh := big.NewBig(), *big.NewBig()
			for b.Loop() {
				*m = fresh
				for _, e := range bigPathGen {
					if _, err := m.Fire(ctx, e); err != nil {
						b.Fatal(err)
					}
				}
			}
		}},
		{"looplab", func(b *testing.B) {
			m := peers.NewLooplabTable(bigSpec)
			for b.Loop() {
				m.Reset()
				for _, e := range bigPath {
					if err := m.Fire(ctx, e); err != nil {
						b.Fatal(err)
					}
				}
			}
		}},
		{"stateless", func(b *testing.B) {
			m := peers.NewStatelessTable(bigSpec)
			for b.Loop() {
				m.Reset()
				for _, e := range bigPath {
					if err := m.Fire(ctx, e); err != nil {
						b.Fatal(err)
					}
				}
			}
		}},
	})
}

func BenchmarkFireValid(b *testing.B) {
	runAll(b, []impl{
		{"hand", func(b *testing.B) {
			m := hand.NewReview()
			m.SetState(hand.InProgress)
			ev := [2]hand.Event{hand.ToBlocked, hand.ToInProgress}
			for i := 0; b.Loop(); i++ {
				if _, err := m.Fire(ev[i&1]); err != nil {
					b.Fatal(err)
				}
			}
		}},
		{"table", func(b *testing.B) {
			m := hand.NewReviewTable()
			m.SetState(hand.InProgress)
			ev := [2]hand.Event{hand.ToBlocked, hand.ToInProgress}
			for i := 0; b.Loop(); i++ {
				if _, err := m.Fire(ev[i&1]); err != nil {
					b.Fatal(err)
				}
			}
		}},
		{"fsmgen", func(b *testing.B) {
			m := review.NewTask()
			must(m.Fire(ctx, review.EventInProgress)) // must: a setup that failed would time another path
			ev := [2]review.Event{review.EventBlocked, review.EventInProgress}
			for i := 0; b.Loop(); i++ {
				if _, err := m.Fire(ctx, ev[i&1]); err != nil {
					b.Fatal(err)
				}
			}
		}},
		{"looplab", func(b *testing.B) {
			m := peers.NewLooplabReview()
			m.SetState(peers.InProgress)
			for i := 0; b.Loop(); i++ {
				if err := m.Fire(ctx, rvToggle[i&1]); err != nil {
					b.Fatal(err)
				}
			}
		}},
		{"stateless", func(b *testing.B) {
			m := peers.NewStatelessReview()
			m.SetState(peers.InProgress)
			for i := 0; b.Loop(); i++ {
				if err := m.Fire(ctx, rvToggle[i&1]); err != nil {
					b.Fatal(err)
				}
			}
		}},
	}, []impl{
		{"hand", func(b *testing.B) {
			m := hand.NewBigSwitch()
			ev := [2]hand.BigEvent{handBigEvent(bigToggle[0]), handBigEvent(bigToggle[1])}
			for i := 0; b.Loop(); i++ {
				if _, err := m.Fire(ev[i&1]); err != nil {
					b.Fatal(err)
				}
			}
		}},
		{"table", func(b *testing.B) {
			m := hand.NewBig()
			ev := [2]hand.BigEvent{handBigEvent(bigToggle[0]), handBigEvent(bigToggle[1])}
			for i := 0; b.Loop(); i++ {
				if _, err := m.Fire(ev[i&1]); err != nil {
					b.Fatal(err)
				}
			}
		}},
		{"fsmgen", func(b *testing.B) {
			m := big.NewBig()
			ev := [2]big.Event{must(big.ParseEvent(bigToggle[0])), must(big.ParseEvent(bigToggle[1]))}
			for i := 0; b.Loop(); i++ {
				if _, err := m.Fire(ctx, ev[i&1]); err != nil {
					b.Fatal(err)
				}
			}
		}},
		{"looplab", func(b *testing.B) {
			m := peers.NewLooplabTable(bigSpec)
			for i := 0; b.Loop(); i++ {
				if err := m.Fire(ctx, bigToggle[i&1]); err != nil {
					b.Fatal(err)
				}
			}
		}},
		{"stateless", func(b *testing.B) {
			m := peers.NewStatelessTable(bigSpec)
			for i := 0; b.Loop(); i++ {
				if err := m.Fire(ctx, bigToggle[i&1]); err != nil {
					b.Fatal(err)
				}
			}
		}},
	})
}

func BenchmarkFireRejected(b *testing.B) {
	runAll(b, []impl{
		{"hand", func(b *testing.B) {
			m := hand.NewReview()
			m.SetState(hand.PendingReview)
			for b.Loop() {
				if _, err := m.Fire(hand.ToCompleted); err == nil {
					b.Fatal("accepted")
				}
			}
		}},
		{"table", func(b *testing.B) {
			m := hand.NewReviewTable()
			m.SetState(hand.PendingReview)
			for b.Loop() {
				if _, err := m.Fire(hand.ToCompleted); err == nil {
					b.Fatal("accepted")
				}
			}
		}},
		{"fsmgen", func(b *testing.B) {
			m := review.NewTask()
			must(m.Fire(ctx, review.EventInProgress))
			must(m.Fire(ctx, review.EventPendingReview))
			for b.Loop() {
				if _, err := m.Fire(ctx, review.EventCompleted); err == nil {
					b.Fatal("accepted")
				}
			}
		}},
		{"looplab", func(b *testing.B) {
			m := peers.NewLooplabReview()
			m.SetState(peers.PendingReview)
			for b.Loop() {
				if err := m.Fire(ctx, peers.Completed); err == nil {
					b.Fatal("accepted")
				}
			}
		}},
		{"stateless", func(b *testing.B) {
			m := peers.NewStatelessReview()
			m.SetState(peers.PendingReview)
			for b.Loop() {
				if err := m.Fire(ctx, peers.Completed); err == nil {
					b.Fatal("accepted")
				}
			}
		}},
	}, []impl{
		{"hand", func(b *testing.B) {
			m := hand.NewBigSwitch()
			e := handBigEvent(bigReject)
			for b.Loop() {
				if _, err := m.Fire(e); err == nil {
					b.Fatal("accepted")
				}
			}
		}},
		{"table", func(b *testing.B) {
			m := hand.NewBig()
			e := handBigEvent(bigReject)
			for b.Loop() {
				if _, err := m.Fire(e); err == nil {
					b.Fatal("accepted")
				}
			}
		}},
		{"fsmgen", func(b *testing.B) {
			m := big.NewBig()
			e := must(big.ParseEvent(bigReject))
			for b.Loop() {
				if _, err := m.Fire(ctx, e); err == nil {
					b.Fatal("accepted")
				}
			}
		}},
		{"looplab", func(b *testing.B) {
			m := peers.NewLooplabTable(bigSpec)
			for b.Loop() {
				if err := m.Fire(ctx, bigReject); err == nil {
					b.Fatal("accepted")
				}
			}
		}},
		{"stateless", func(b *testing.B) {
			m := peers.NewStatelessTable(bigSpec)
			for b.Loop() {
				if err := m.Fire(ctx, bigReject); err == nil {
					b.Fatal("accepted")
				}
			}
		}},
	})
}

func BenchmarkCan(b *testing.B) {
	runAll(b, []impl{
		{"hand", func(b *testing.B) {
			m := hand.NewReview()
			m.SetState(hand.InProgress)
			for b.Loop() {
				if !m.Can(hand.ToPendingReview) {
					b.Fatal("refused")
				}
			}
		}},
		{"table", func(b *testing.B) {
			m := hand.NewReviewTable()
			m.SetState(hand.InProgress)
			for b.Loop() {
				if !m.Can(hand.ToPendingReview) {
					b.Fatal("refused")
				}
			}
		}},
		{"fsmgen", func(b *testing.B) {
			m := review.NewTask()
			must(m.Fire(ctx, review.EventInProgress))
			for b.Loop() {
				if !m.Can(ctx, review.EventPendingReview) {
					b.Fatal("refused")
				}
			}
		}},
		{"looplab", func(b *testing.B) {
			m := peers.NewLooplabReview()
			m.SetState(peers.InProgress)
			for b.Loop() {
				if !m.Can(peers.PendingReview) {
					b.Fatal("refused")
				}
			}
		}},
		{"stateless", func(b *testing.B) {
			m := peers.NewStatelessReview()
			m.SetState(peers.InProgress)
			for b.Loop() {
				if !m.Can(ctx, peers.PendingReview) {
					b.Fatal("refused")
				}
			}
		}},
	}, []impl{
		{"hand", func(b *testing.B) {
			m := hand.NewBigSwitch()
			e := handBigEvent(bigCan)
			for b.Loop() {
				if !m.Can(e) {
					b.Fatal("refused")
				}
			}
		}},
		{"table", func(b *testing.B) {
			m := hand.NewBig()
			e := handBigEvent(bigCan)
			for b.Loop() {
				if !m.Can(e) {
					b.Fatal("refused")
				}
			}
		}},
		{"fsmgen", func(b *testing.B) {
			m := big.NewBig()
			e := must(big.ParseEvent(bigCan))
			for b.Loop() {
				if !m.Can(ctx, e) {
					b.Fatal("refused")
				}
			}
		}},
		{"looplab", func(b *testing.B) {
			m := peers.NewLooplabTable(bigSpec)
			for b.Loop() {
				if !m.Can(bigCan) {
					b.Fatal("refused")
				}
			}
		}},
		{"stateless", func(b *testing.B) {
			m := peers.NewStatelessTable(bigSpec)
			for b.Loop() {
				if !m.Can(ctx, bigCan) {
					b.Fatal("refused")
				}
			}
		}},
	})
}

func BenchmarkPermitted(b *testing.B) {
	runAll(b, []impl{
		{"hand", func(b *testing.B) {
			m := hand.NewReview()
			m.SetState(hand.InProgress)
			var buf [hand.NumEvents]hand.Event
			for b.Loop() {
				if len(m.Permitted(buf[:0])) != 2 {
					b.Fatal("wrong")
				}
			}
		}},
		{"table", func(b *testing.B) {
			m := hand.NewReviewTable()
			m.SetState(hand.InProgress)
			var buf [hand.NumEvents]hand.Event
			for b.Loop() {
				if len(m.Permitted(buf[:0])) != 2 {
					b.Fatal("wrong")
				}
			}
		}},
		{"fsmgen", func(b *testing.B) {
			m := review.NewTask()
			must(m.Fire(ctx, review.EventInProgress))
			var buf [review.NumEvents]review.Event
			for b.Loop() {
				if len(m.Permitted(ctx, buf[:0])) != 2 {
					b.Fatal("wrong")
				}
			}
		}},
		{"looplab", func(b *testing.B) {
			m := peers.NewLooplabReview()
			m.SetState(peers.InProgress)
			for b.Loop() {
				if len(m.Permitted()) != 2 {
					b.Fatal("wrong")
				}
			}
		}},
		{"stateless", func(b *testing.B) {
			m := peers.NewStatelessReview()
			m.SetState(peers.InProgress)
			for b.Loop() {
				if len(m.Permitted(ctx)) != 2 {
					b.Fatal("wrong")
				}
			}
		}},
	}, []impl{
		{"hand", func(b *testing.B) {
			m := hand.NewBigSwitch()
			var buf [hand.BigEvents]hand.BigEvent
			for b.Loop() {
				if len(m.Permitted(buf[:0])) != 6 {
					b.Fatal("wrong")
				}
			}
		}},
		{"table", func(b *testing.B) {
			m := hand.NewBig()
			var buf [hand.BigEvents]hand.BigEvent
			for b.Loop() {
				if len(m.Permitted(buf[:0])) != 6 {
					b.Fatal("wrong")
				}
			}
		}},
		{"fsmgen", func(b *testing.B) {
			m := big.NewBig()
			var buf [big.NumEvents]big.Event
			for b.Loop() {
				if len(m.Permitted(ctx, buf[:0])) != 6 {
					b.Fatal("wrong")
				}
			}
		}},
		{"looplab", func(b *testing.B) {
			m := peers.NewLooplabTable(bigSpec)
			for b.Loop() {
				if len(m.Permitted()) != 6 {
					b.Fatal("wrong")
				}
			}
		}},
		{"stateless", func(b *testing.B) {
			m := peers.NewStatelessTable(bigSpec)
			for b.Loop() {
				if len(m.Permitted(ctx)) != 6 {
					b.Fatal("wrong")
				}
			}
		}},
	})
}

// BenchmarkFireParallel is FireValid with one machine per goroutine (GOMAXPROCS of them).
// ns/op is wall time per transition over all goroutines.
func BenchmarkFireParallel(b *testing.B) {
	runAll(b, []impl{
		{"hand", func(b *testing.B) {
			b.RunParallel(func(pb *testing.PB) {
				m := hand.NewReview()
				m.SetState(hand.InProgress)
				ev := [2]hand.Event{hand.ToBlocked, hand.ToInProgress}
				for i := 0; pb.Next(); i++ {
					if _, err := m.Fire(ev[i&1]); err != nil {
						panic(err)
					}
				}
			})
		}},
		{"table", func(b *testing.B) {
			b.RunParallel(func(pb *testing.PB) {
				m := hand.NewReviewTable()
				m.SetState(hand.InProgress)
				ev := [2]hand.Event{hand.ToBlocked, hand.ToInProgress}
				for i := 0; pb.Next(); i++ {
					if _, err := m.Fire(ev[i&1]); err != nil {
						panic(err)
					}
				}
			})
		}},
		{"fsmgen", func(b *testing.B) {
			b.RunParallel(func(pb *testing.PB) {
				m := review.NewTask()
				must(m.Fire(ctx, review.EventInProgress))
				ev := [2]review.Event{review.EventBlocked, review.EventInProgress}
				for i := 0; pb.Next(); i++ {
					if _, err := m.Fire(ctx, ev[i&1]); err != nil {
						panic(err)
					}
				}
			})
		}},
		{"looplab", func(b *testing.B) {
			b.RunParallel(func(pb *testing.PB) {
				m := peers.NewLooplabReview()
				m.SetState(peers.InProgress)
				for i := 0; pb.Next(); i++ {
					if err := m.Fire(ctx, rvToggle[i&1]); err != nil {
						panic(err)
					}
				}
			})
		}},
		{"stateless", func(b *testing.B) {
			b.RunParallel(func(pb *testing.PB) {
				m := peers.NewStatelessReview()
				m.SetState(peers.InProgress)
				for i := 0; pb.Next(); i++ {
					if err := m.Fire(ctx, rvToggle[i&1]); err != nil {
						panic(err)
					}
				}
			})
		}},
	}, []impl{
		{"hand", func(b *testing.B) {
			ev := [2]hand.BigEvent{handBigEvent(bigToggle[0]), handBigEvent(bigToggle[1])}
			b.RunParallel(func(pb *testing.PB) {
				m := hand.NewBigSwitch()
				for i := 0; pb.Next(); i++ {
					if _, err := m.Fire(ev[i&1]); err != nil {
						panic(err)
					}
				}
			})
		}},
		{"table", func(b *testing.B) {
			ev := [2]hand.BigEvent{handBigEvent(bigToggle[0]), handBigEvent(bigToggle[1])}
			b.RunParallel(func(pb *testing.PB) {
				m := hand.NewBig()
				for i := 0; pb.Next(); i++ {
					if _, err := m.Fire(ev[i&1]); err != nil {
						panic(err)
					}
				}
			})
		}},
		{"fsmgen", func(b *testing.B) {
			ev := [2]big.Event{must(big.ParseEvent(bigToggle[0])), must(big.ParseEvent(bigToggle[1]))}
			b.RunParallel(func(pb *testing.PB) {
				m := big.NewBig()
				for i := 0; pb.Next(); i++ {
					if _, err := m.Fire(ctx, ev[i&1]); err != nil {
						panic(err)
					}
				}
			})
		}},
		{"looplab", func(b *testing.B) {
			b.RunParallel(func(pb *testing.PB) {
				m := peers.NewLooplabTable(bigSpec)
				for i := 0; pb.Next(); i++ {
					if err := m.Fire(ctx, bigToggle[i&1]); err != nil {
						panic(err)
					}
				}
			})
		}},
		{"stateless", func(b *testing.B) {
			b.RunParallel(func(pb *testing.PB) {
				m := peers.NewStatelessTable(bigSpec)
				for i := 0; pb.Next(); i++ {
					if err := m.Fire(ctx, bigToggle[i&1]); err != nil {
						panic(err)
					}
				}
			})
		}},
	})
}

var (
	sinkHand       hand.Review
	sinkHandTable  hand.ReviewTable
	sinkHandBig    hand.Big
	sinkHandSwitch hand.BigSwitch
	sinkGen        *review.Task
	sinkGenBig     *big.Big
	sinkLooplab    *peers.LooplabReview
	sinkLooplabT   *peers.LooplabTable
	sinkSL         *peers.StatelessReview
	sinkSLT        *peers.StatelessTable
)

// BenchmarkNew builds a machine: what a program pays per task before the first event. The
// result goes to a package variable, as a program keeps its machines.
func BenchmarkNew(b *testing.B) {
	runAll(b, []impl{
		{"hand", func(b *testing.B) {
			for b.Loop() {
				sinkHand = hand.NewReview()
			}
		}},
		{"table", func(b *testing.B) {
			for b.Loop() {
				sinkHandTable = hand.NewReviewTable()
			}
		}},
		{"fsmgen", func(b *testing.B) {
			for b.Loop() {
				sinkGen = review.NewTask()
			}
		}},
		{"looplab", func(b *testing.B) {
			for b.Loop() {
				sinkLooplab = peers.NewLooplabReview()
			}
		}},
		{"stateless", func(b *testing.B) {
			for b.Loop() {
				sinkSL = peers.NewStatelessReview()
			}
		}},
	}, []impl{
		{"hand", func(b *testing.B) {
			for b.Loop() {
				sinkHandSwitch = hand.NewBigSwitch()
			}
		}},
		{"table", func(b *testing.B) {
			for b.Loop() {
				sinkHandBig = hand.NewBig()
			}
		}},
		{"fsmgen", func(b *testing.B) {
			for b.Loop() {
				sinkGenBig = big.NewBig()
			}
		}},
		{"looplab", func(b *testing.B) {
			for b.Loop() {
				sinkLooplabT = peers.NewLooplabTable(bigSpec)
			}
		}},
		{"stateless", func(b *testing.B) {
			for b.Loop() {
				sinkSLT = peers.NewStatelessTable(bigSpec)
			}
		}},
	})
}
