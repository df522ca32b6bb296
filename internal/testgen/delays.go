package testgen

import (
	"cmp"
	_ "embed"
	"slices"
	"time"

	"github.com/fsmgen/fsmgen/internal/interp"
	"github.com/fsmgen/fsmgen/internal/ir"
)

//go:embed delays.go.tmpl
var delaysTemplate string

// DelayRow is a state with delays (State.Delays) and its timers in the order they fall due
// (a delay before the timeout's expiry at the same instant), as long as each leaves the
// machine in the stay: the generated test expires them one by one, each at its deadline
// and not a nanosecond before, from a machine that entered From at the fixture's start.
type DelayRow struct {
	From   *ir.State
	Timers []DelayTimer
}

// DelayTimer is one timer of a DelayRow: when it falls due, the event it fires, and the
// state and refusal the interpreter gives.
type DelayTimer struct {
	At     time.Duration
	Event  *ir.Event
	Want   *ir.State
	Reason string
}

// DelayRows are the rows of the states with delays.
func (v view) DelayRows() []DelayRow {
	var out []DelayRow
	for _, s := range v.M.States {
		if len(s.Delays) == 0 {
			continue
		}
		var timers []DelayTimer
		for _, d := range s.Delays {
			timers = append(timers, DelayTimer{At: d.After, Event: d.Event})
		}
		if t := s.Timeout; t != nil && t.OnExpiry != nil {
			timers = append(timers, DelayTimer{At: t.After, Event: t.OnExpiry})
		}
		slices.SortStableFunc(timers, func(a, b DelayTimer) int { return cmp.Compare(a.At, b.At) })
		o := newOracle(v.M)
		x := o.newMachine(s)
		row := DelayRow{From: s}
		for _, t := range timers {
			step, rej := x.Fire(t.Event, o.fixedInputs(nil, true, t.Event))
			t.Want = x.State
			if rej != nil {
				t.Reason = string(rej.Reason)
			}
			row.Timers = append(row.Timers, t)
			if rej == nil && !staysIn(s, step) {
				break // left (or entered again): the stay is over
			}
		}
		out = append(out, row)
	}
	return out
}

// staysIn reports whether step, taken in s, keeps its stay going: it ends in s without
// entering again the state whose clock s counts, nor a state with delays (an internal
// transition in a flat machine).
func staysIn(s *ir.State, step *interp.Step) bool {
	if step.To != s {
		return false
	}
	if len(step.Micro) == 0 {
		return step.Transition != nil && step.Transition.Target.Kind == ir.Internal
	}
	for _, t := range step.Micro {
		if !t.KeepsClock || len(t.Enters) > 0 {
			return false // a state with delays entered again: theirs start over
		}
	}
	return true
}
