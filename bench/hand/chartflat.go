package hand

import "github.com/fsmgen/fsmgen/bench/specgen"

// The size of the chart benchmark's flat twin (specgen.ChartFlat), fixed so that its table
// is an array.
const (
	ChartFlatStates = 43
	ChartFlatEvents = 19
)

// chartFlatTable[s][e] is the target of e in s, or noTarget. Built once from
// specgen.ChartFlat, as bigTable is from specgen.Big.
var chartFlatTable [ChartFlatStates][ChartFlatEvents]BigState

func init() {
	m := specgen.ChartFlat()
	if len(m.States) != ChartFlatStates || len(m.Events) != ChartFlatEvents {
		panic("hand: specgen.ChartFlat changed size")
	}
	for s := range chartFlatTable {
		for e := range chartFlatTable[s] {
			chartFlatTable[s][e] = noTarget
		}
	}
	for _, t := range m.Transitions {
		chartFlatTable[t.From][t.Event] = BigState(t.To)
	}
}

// ChartFlat is the chart benchmark's flat twin written by hand as a table: the floor of
// the chart benchmark. States and events are specgen.ChartFlat's indexes.
type ChartFlat struct {
	state BigState
}

// State returns the current state.
func (m *ChartFlat) State() BigState { return m.state }

// SetState puts the machine in s (for tests).
func (m *ChartFlat) SetState(s BigState) { m.state = s }

// Fire fires e: it returns the new state, or the unchanged state and an error.
func (m *ChartFlat) Fire(e BigEvent) (BigState, error) {
	if int(m.state) < ChartFlatStates && int(e) < ChartFlatEvents {
		if to := chartFlatTable[m.state][e]; to != noTarget {
			m.state = to
			return to, nil
		}
	}
	return m.state, ErrInvalidTransition
}
