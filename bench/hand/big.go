package hand

//go:generate go run ../cmd/bighand -o big_switch.go

import "github.com/fsmgen/fsmgen/bench/specgen"

// The big machine's size, fixed so that its table is an array.
const (
	BigStates = 50
	BigEvents = 20
)

// BigState and BigEvent index specgen.Big's states and events.
type (
	BigState uint8
	BigEvent uint8
)

const noTarget = 0xFF

// bigTable[s][e] is the target of e in s, or noTarget. Built once from specgen.Big, as a
// person writing a 50-state machine by hand would keep it: in a table.
var bigTable [BigStates][BigEvents]BigState

func init() {
	m := specgen.Big()
	if len(m.States) != BigStates || len(m.Events) != BigEvents {
		panic("hand: specgen.Big changed size")
	}
	for s := range bigTable {
		for e := range bigTable[s] {
			bigTable[s][e] = noTarget
		}
	}
	for _, t := range m.Transitions {
		bigTable[t.From][t.Event] = BigState(t.To)
	}
}

// Big is the 50-state machine.
type Big struct {
	state BigState
}

// NewBig returns a machine in its initial state.
func NewBig() Big { return Big{} }

// State returns the current state.
func (m *Big) State() BigState { return m.state }

// Fire fires e: it returns the new state, or the unchanged state and an error.
func (m *Big) Fire(e BigEvent) (BigState, error) {
	if int(m.state) < BigStates && int(e) < BigEvents {
		if to := bigTable[m.state][e]; to != noTarget {
			m.state = to
			return to, nil
		}
	}
	return m.state, ErrInvalidTransition
}

// Can reports whether e would be accepted now.
func (m *Big) Can(e BigEvent) bool {
	return int(m.state) < BigStates && int(e) < BigEvents && bigTable[m.state][e] != noTarget
}

// Permitted appends the events accepted now to buf, in declaration order.
func (m *Big) Permitted(buf []BigEvent) []BigEvent {
	if int(m.state) >= BigStates {
		return buf
	}
	row := &bigTable[m.state]
	for e, to := range row {
		if to != noTarget {
			buf = append(buf, BigEvent(e))
		}
	}
	return buf
}

// SetState puts the machine in s (for tests).
func (m *Big) SetState(s BigState) { m.state = s }
