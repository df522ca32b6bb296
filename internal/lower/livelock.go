package lower

import (
	"strings"

	"github.com/fsmgen/fsmgen/internal/ir"
)

// checkLivelock refuses a statechart whose eventless transitions go round a cycle that
// nothing can stop: from each configuration of the cycle, the first eventless microstep is
// unconditional (no guard, no condition on history memory, no required field to check, no
// done event raised) and changes the configuration. Whatever enters the cycle would never
// settle: the runtime refuses every such event as an eventless loop (after 1,000
// microsteps), and the state is a livelock. The finding is at the cycle's first
// transition, in the spec's order.
func (l *lowerer) checkLivelock() {
	if l.cs == nil || l.cs.c == nil || l.cs.c.Always == nil || l.ds.HasErrors() {
		return
	}
	always := l.cs.c.Always
	// next[s] is the microstep every settling of s takes first, when it is certain.
	next := make([]*ir.Transition, len(l.m.States))
	seen := make([]bool, len(l.m.States))
	for _, t := range l.m.Transitions {
		if len(t.Events) != 1 || t.Events[0] != always {
			continue
		}
		for _, s := range t.From {
			if seen[s.Index] {
				continue
			}
			seen[s.Index] = true
			if len(t.Conds) == 0 && len(t.Mem) == 0 && len(t.Requires) == 0 && len(t.Raise) == 0 && t.Changes &&
				t.Target.Kind == ir.Fixed && t.Target.State != nil && len(t.Taken) > 0 {
				next[s.Index] = t
			}
		}
	}
	const (
		unvisited = iota
		onPath
		finished
	)
	color := make([]int, len(l.m.States))
	for _, start := range l.m.States {
		var path []*ir.State
		s := start
		for s != nil && color[s.Index] == unvisited {
			color[s.Index] = onPath
			path = append(path, s)
			if t := next[s.Index]; t != nil {
				s = t.Target.State
			} else {
				s = nil
			}
		}
		if s != nil && color[s.Index] == onPath {
			// The cycle is the path from s on.
			i := 0
			for path[i] != s {
				i++
			}
			var states []string
			var first *ir.ChartTransition
			for _, c := range path[i:] {
				states = append(states, `"`+c.Name+`"`)
				for _, ct := range next[c.Index].Taken {
					if first == nil || ct.Pos.Line < first.Pos.Line || ct.Pos.Line == first.Pos.Line && ct.Pos.Col < first.Pos.Col {
						first = ct
					}
				}
			}
			states = append(states, `"`+s.Name+`"`)
			l.ds.Errorf(first.Pos, "eventless transitions without guards go round in a loop, %s: the configurations on it never settle (every event into them is refused as an eventless loop); give one of them a guard, or an event", strings.Join(states, " -> "))
		}
		for _, c := range path {
			color[c.Index] = finished
		}
	}
}
