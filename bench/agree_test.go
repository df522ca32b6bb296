package bench_test

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/fsmgen/fsmgen/bench/big"
	"github.com/fsmgen/fsmgen/bench/hand"
	"github.com/fsmgen/fsmgen/bench/peers"
	"github.com/fsmgen/fsmgen/bench/specgen"
	"github.com/fsmgen/fsmgen/generated/review"
)

var ctx = context.Background()

// The lifecycle path of seed 003: ten transitions from not_started to completed, through
// blocked and back, one review (an internal transition) and the guarded step to
// final_review. Every implementation fires exactly these events.
var (
	reviewPath = []string{
		peers.Blocked, peers.NotStarted, peers.InProgress, peers.Blocked, peers.InProgress,
		peers.PendingReview, peers.UnderReview, peers.ReviewSubmitted, peers.FinalReview, peers.Completed,
	}
	reviewPathStates = []string{
		"blocked", "not_started", "in_progress", "blocked", "in_progress",
		"pending_review", "under_review", "under_review", "final_review", "completed",
	}
	reviewPathGen  = mapNames(reviewPath, review.ParseEvent)
	reviewPathHand = mapNames(reviewPath, parseHandEvent)
)

// The lifecycle path of the big machine: ten transitions from s00 to the terminal s49,
// using each kind of transition (forward, back, jumps, fail).
var (
	bigPathIdx    = []int{0, 2, 5, 18, 4, 11, 13, 16, 10, 19}
	bigPathStates = []string{"s01", "s00", "s07", "s27", "s11", "s12", "s11", "s18", "s38", "s49"}
	bigSpec       = specgen.Big()
	bigPath       = mapIdx(bigPathIdx, func(i int) string { return bigSpec.Events[i] })
	bigPathGen    = mapIdx(bigPathIdx, func(i int) big.Event { return big.Event(i) })
	bigPathHand   = mapIdx(bigPathIdx, func(i int) hand.BigEvent { return hand.BigEvent(i) })
)

func mapNames[T any](names []string, parse func(string) (T, error)) []T {
	out := make([]T, len(names))
	for i, n := range names {
		v, err := parse(n)
		if err != nil {
			panic(err)
		}
		out[i] = v
	}
	return out
}

func mapIdx[T any](idx []int, f func(int) T) []T {
	out := make([]T, len(idx))
	for i, x := range idx {
		out[i] = f(x)
	}
	return out
}

func parseHandEvent(name string) (hand.Event, error) {
	for e := hand.Event(0); e < hand.NumEvents; e++ {
		if e.String() == name {
			return e, nil
		}
	}
	return 0, fmt.Errorf("no event %q", name)
}

func parseHandState(name string) hand.State {
	for s := hand.State(0); s < 7; s++ {
		if s.String() == name {
			return s
		}
	}
	panic("no state " + name)
}

// stepper is what the agreement test needs of an implementation; the benchmarks call the
// concrete types instead, so that no interface call is measured.
type stepper interface {
	name() string
	setState(s string)
	fire(e string) error
	state() string
	can(e string) bool
	permitted() []string // sorted
}

type genReview struct{ m *review.Task }

func (g *genReview) name() string { return "fsmgen" }
func (g *genReview) setState(s string) {
	st, err := review.ParseState(s)
	if err != nil {
		panic(err)
	}
	m, err := review.RestoreTask(review.TaskSnapshot{Version: 1, State: st})
	if err != nil {
		panic(err)
	}
	g.m = m
}
func (g *genReview) fire(e string) error {
	_, err := g.m.Fire(ctx, must(review.ParseEvent(e)))
	return err
}
func (g *genReview) state() string        { return g.m.State().String() }
func (g *genReview) can(e string) bool    { return g.m.Can(ctx, must(review.ParseEvent(e))) }
func (g *genReview) permitted() []string  { return names(g.m.Permitted(ctx, nil)) }
func (h *handReview) name() string        { return "hand" }
func (h *handReview) setState(s string)   { h.m.SetState(parseHandState(s)) }
func (h *handReview) fire(e string) error { _, err := h.m.Fire(must(parseHandEvent(e))); return err }
func (h *handReview) state() string       { return h.m.State().String() }
func (h *handReview) can(e string) bool   { return h.m.Can(must(parseHandEvent(e))) }
func (h *handReview) permitted() []string { return names(h.m.Permitted(nil)) }

type handReview struct{ m hand.Review }

type looplabReview struct{ m *peers.LooplabReview }

func (l *looplabReview) name() string        { return "looplab" }
func (l *looplabReview) setState(s string)   { l.m.SetState(s) }
func (l *looplabReview) fire(e string) error { return l.m.Fire(ctx, e) }
func (l *looplabReview) state() string       { return l.m.State() }
func (l *looplabReview) can(e string) bool   { return l.m.Can(e) }
func (l *looplabReview) permitted() []string { return sorted(l.m.Permitted()) }

type statelessReview struct{ m *peers.StatelessReview }

func (s *statelessReview) name() string        { return "stateless" }
func (s *statelessReview) setState(st string)  { s.m.SetState(st) }
func (s *statelessReview) fire(e string) error { return s.m.Fire(ctx, e) }
func (s *statelessReview) state() string       { return s.m.State() }
func (s *statelessReview) can(e string) bool   { return s.m.Can(ctx, e) }
func (s *statelessReview) permitted() []string { return sorted(anyStrings(s.m.Permitted(ctx))) }

type genBig struct{ m *big.Big }

func (g *genBig) name() string { return "fsmgen" }
func (g *genBig) setState(s string) {
	m, err := big.RestoreBig(big.BigSnapshot{Version: 1, State: must(big.ParseState(s))})
	if err != nil {
		panic(err)
	}
	g.m = m
}
func (g *genBig) fire(e string) error { _, err := g.m.Fire(ctx, must(big.ParseEvent(e))); return err }
func (g *genBig) state() string       { return g.m.State().String() }
func (g *genBig) can(e string) bool   { return g.m.Can(ctx, must(big.ParseEvent(e))) }
func (g *genBig) permitted() []string { return names(g.m.Permitted(ctx, nil)) }

// handBig drives either hand-written big machine: the switch (the floor) or the table.
type handBig struct {
	n string
	m interface {
		SetState(hand.BigState)
		Fire(hand.BigEvent) (hand.BigState, error)
		State() hand.BigState
		Can(hand.BigEvent) bool
		Permitted([]hand.BigEvent) []hand.BigEvent
	}
}

func (h *handBig) name() string        { return h.n }
func (h *handBig) setState(s string)   { h.m.SetState(hand.BigState(slices.Index(bigSpec.States, s))) }
func (h *handBig) fire(e string) error { _, err := h.m.Fire(handBigEvent(e)); return err }
func (h *handBig) state() string       { return bigSpec.States[h.m.State()] }
func (h *handBig) can(e string) bool   { return h.m.Can(handBigEvent(e)) }
func (h *handBig) permitted() []string {
	var out []string
	for _, e := range h.m.Permitted(nil) {
		out = append(out, bigSpec.Events[e])
	}
	return out
}

func handBigEvent(e string) hand.BigEvent {
	i := slices.Index(bigSpec.Events, e)
	if i < 0 {
		panic("no event " + e)
	}
	return hand.BigEvent(i)
}

type looplabBig struct{ m *peers.LooplabTable }

func (l *looplabBig) name() string        { return "looplab" }
func (l *looplabBig) setState(s string)   { l.m.SetState(s) }
func (l *looplabBig) fire(e string) error { return l.m.Fire(ctx, e) }
func (l *looplabBig) state() string       { return l.m.State() }
func (l *looplabBig) can(e string) bool   { return l.m.Can(e) }
func (l *looplabBig) permitted() []string { return sorted(l.m.Permitted()) }

type statelessBig struct{ m *peers.StatelessTable }

func (s *statelessBig) name() string        { return "stateless" }
func (s *statelessBig) setState(st string)  { s.m.SetState(st) }
func (s *statelessBig) fire(e string) error { return s.m.Fire(ctx, e) }
func (s *statelessBig) state() string       { return s.m.State() }
func (s *statelessBig) can(e string) bool   { return s.m.Can(ctx, e) }
func (s *statelessBig) permitted() []string { return sorted(anyStrings(s.m.Permitted(ctx))) }

func ptr[T any](v T) *T { return &v }

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

func names[T fmt.Stringer](vs []T) []string {
	var out []string
	for _, v := range vs {
		out = append(out, v.String())
	}
	return sorted(out)
}

func anyStrings(vs []any) []string {
	var out []string
	for _, v := range vs {
		out = append(out, v.(string))
	}
	return out
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}

func reviewImpls() []stepper {
	return []stepper{
		&handReview{m: hand.NewReview()},
		&genReview{m: review.NewTask()},
		&looplabReview{m: peers.NewLooplabReview()},
		&statelessReview{m: peers.NewStatelessReview()},
	}
}

func bigImpls() []stepper {
	return []stepper{
		&handBig{n: "hand", m: ptr(hand.NewBigSwitch())},
		&handBig{n: "table", m: ptr(hand.NewBig())},
		&genBig{m: big.NewBig()},
		&looplabBig{m: peers.NewLooplabTable(bigSpec)},
		&statelessBig{m: peers.NewStatelessTable(bigSpec)},
	}
}

// TestLifecycleAgrees: every implementation walks the benchmark's lifecycle path through
// the same states, accepting every event.
func TestLifecycleAgrees(t *testing.T) {
	for _, c := range []struct {
		machine string
		impls   []stepper
		path    []string
		states  []string
	}{
		{"review", reviewImpls(), reviewPath, reviewPathStates},
		{"big", bigImpls(), bigPath, bigPathStates},
	} {
		for _, im := range c.impls {
			for i, e := range c.path {
				if err := im.fire(e); err != nil {
					t.Fatalf("%s/%s: step %d (%s): %v", c.machine, im.name(), i, e, err)
				}
				if got := im.state(); got != c.states[i] {
					t.Fatalf("%s/%s: step %d (%s): in %s, want %s", c.machine, im.name(), i, e, got, c.states[i])
				}
			}
		}
	}
}

// TestTablesAgree fires every event in every state (counters at zero) on every
// implementation: each accepts or refuses alike, lands in the same state, leaves the state
// unchanged on a refusal, and answers Can and the permitted-events query alike. looplab
// ignores guards in Can and AvailableTransitions, so those two are not compared for it in
// under_review (final_review is guarded there).
func TestTablesAgree(t *testing.T) {
	reviewEvents := []string{peers.InProgress, peers.Blocked, peers.PendingReview, peers.NotStarted, peers.UnderReview,
		peers.FinalReview, peers.Completed, peers.ReviewSubmitted, peers.SecurityReviewSubmitted}
	reviewStates := []string{"not_started", "in_progress", "pending_review", "under_review", "final_review", "completed", "blocked"}
	for _, c := range []struct {
		machine string
		impls   []stepper
		states  []string
		events  []string
	}{
		{"review", reviewImpls(), reviewStates, reviewEvents},
		{"big", bigImpls(), bigSpec.States, bigSpec.Events},
	} {
		accepted := 0
		for _, s := range c.states {
			for _, e := range c.events {
				var first stepper
				var wantErr bool
				var wantState string
				var wantCan bool
				for _, im := range c.impls {
					im.setState(s)
					guarded := im.name() == "looplab" && s == "under_review"
					can := im.can(e)
					err := im.fire(e)
					got := im.state()
					if err != nil && got != s {
						t.Errorf("%s/%s: %s on %s refused but moved to %s", c.machine, im.name(), s, e, got)
					}
					if first == nil {
						first, wantErr, wantState, wantCan = im, err != nil, got, can
						if err == nil {
							accepted++
						}
						continue
					}
					if (err != nil) != wantErr || got != wantState {
						t.Errorf("%s: %s on %s: %s gives (%s, %v), %s gives (%s, err=%v)",
							c.machine, s, e, im.name(), got, err, first.name(), wantState, wantErr)
					}
					if can != wantCan && !guarded {
						t.Errorf("%s: %s Can(%s): %s says %v, %s says %v", c.machine, s, e, im.name(), can, first.name(), wantCan)
					}
				}
			}
			want := ""
			for i, im := range c.impls {
				im.setState(s)
				got := fmt.Sprint(im.permitted())
				if im.name() == "looplab" && s == "under_review" {
					continue
				}
				if i == 0 {
					want = got
				} else if got != want {
					t.Errorf("%s: permitted in %s: %s says %s, %s says %s", c.machine, s, im.name(), got, c.impls[0].name(), want)
				}
			}
		}
		// review has 12 transitions, and final_review's guard fails with no reviews.
		wantAccepted := map[string]int{"review": 11, "big": len(bigSpec.Transitions)}[c.machine]
		if accepted != wantAccepted {
			t.Errorf("%s: %d (state, event) pairs accepted, want %d", c.machine, accepted, wantAccepted)
		}
	}
}

// TestBenchmarkSetups checks the states the single-transition benchmarks rely on.
func TestBenchmarkSetups(t *testing.T) {
	for _, im := range reviewImpls() {
		im.setState("pending_review")
		if err := im.fire(peers.Completed); err == nil {
			t.Errorf("review/%s: pending_review accepts completed", im.name())
		}
		im.setState("in_progress")
		if !im.can(peers.PendingReview) || fmt.Sprint(im.permitted()) != "[blocked pending_review]" {
			t.Errorf("review/%s: in_progress: Can(pending_review) %v, permitted %v", im.name(), im.can(peers.PendingReview), im.permitted())
		}
		for _, e := range []string{peers.Blocked, peers.InProgress} {
			if err := im.fire(e); err != nil {
				t.Errorf("review/%s: toggle %s: %v", im.name(), e, err)
			}
		}
		im.setState("under_review")
		if err := im.fire(peers.FinalReview); err == nil || im.state() != "under_review" {
			t.Errorf("review/%s: final_review without a review: %v, in %s", im.name(), err, im.state())
		}
	}
	for _, im := range bigImpls() {
		if err := im.fire("e02"); err == nil {
			t.Errorf("big/%s: s00 accepts e02", im.name())
		}
		if !im.can("e05") || len(im.permitted()) != 6 {
			t.Errorf("big/%s: s00: Can(e05) %v, permitted %v", im.name(), im.can("e05"), im.permitted())
		}
		for _, e := range []string{"e00", "e02"} {
			if err := im.fire(e); err != nil {
				t.Errorf("big/%s: toggle %s: %v", im.name(), e, err)
			}
		}
		if im.state() != "s00" {
			t.Errorf("big/%s: toggle ends in %s", im.name(), im.state())
		}
	}
}
