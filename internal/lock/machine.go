package lock

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/fsmgen/fsmgen/internal/diag"
	"github.com/fsmgen/fsmgen/internal/ir"
)

// Machine returns what a migration needs of the version: its machine's name and package,
// its states, events, context fields (with their types), counters and transitions (their
// sources, events, targets and counters: what pairs them with the transitions that replay
// their log entries). Guards, actions and documentation are not part of a version. An
// error names the line at fault.
func (v *Version) Machine() (*ir.Machine, error) {
	m := &ir.Machine{Package: v.Package}
	if v.Chart {
		m.Chart = &ir.Chart{}
	}
	states := map[string]*ir.State{}
	events := map[string]*ir.Event{}
	counters := map[string]*ir.Counter{}
	var t *ir.Transition
	targets := 0
	// The names a transition line refers to are defined by earlier sections.
	for i, l := range v.Lines {
		fail := func(format string, args ...any) error {
			return &LineError{Pos: v.pos[i], Msg: fmt.Sprintf(format, args...)}
		}
		word, rest, _ := strings.Cut(strings.TrimLeft(l.Text, " "), " ")
		switch {
		case l.Section == "machine" && word == "machine":
			name, _, ok := quoted(rest)
			if !ok {
				return nil, fail("a machine line names the machine")
			}
			m.Name = name
		case l.Section == "state" && word == "state":
			name, _, ok := quoted(rest)
			if !ok {
				return nil, fail("a state line names the state")
			}
			s := &ir.State{Index: len(m.States), Name: name}
			m.States = append(m.States, s)
			states[name] = s
		case l.Section == "event" && word == "event":
			name, _, ok := quoted(rest)
			if !ok {
				return nil, fail("an event line names the event")
			}
			e := &ir.Event{Index: len(m.Events), Name: name}
			m.Events = append(m.Events, e)
			events[name] = e
		case l.Section == "field" && word == "field":
			f, err := field(rest)
			if err != "" {
				return nil, fail("%s", err)
			}
			f.Index = len(m.Fields)
			m.Fields = append(m.Fields, f)
		case l.Section == "counter" && word == "counter":
			name, rest, ok := quoted(rest)
			if !ok {
				return nil, fail("a counter line names the counter")
			}
			c := &ir.Counter{Index: len(m.Counters), Name: name, PerState: strings.Contains(rest, " per-state=true ")}
			m.Counters = append(m.Counters, c)
			counters[name] = c
		case l.Section == "transition" && word == "transition":
			n, err := strconv.Atoi(rest)
			if err != nil || n != len(m.Transitions) {
				return nil, fail("transition %d where %d comes next", n, len(m.Transitions))
			}
			t = &ir.Transition{Index: n}
			targets = 0
			m.Transitions = append(m.Transitions, t)
		case l.Section == "transition" && t != nil:
			if err := transitionLine(t, word, rest, &targets, states, events, counters); err != "" {
				return nil, fail("%s", err)
			}
		}
	}
	return m, nil
}

// transitionLine reads one of a transition's own lines into t.
func transitionLine(t *ir.Transition, word, rest string, targets *int, states map[string]*ir.State, events map[string]*ir.Event, counters map[string]*ir.Counter) string {
	names, ok := quotedList(rest)
	switch word {
	case "from", "on", "increment", "reset":
		if !ok {
			return word + " lists quoted names"
		}
		for _, n := range names {
			switch word {
			case "from":
				s := states[n]
				if s == nil {
					return fmt.Sprintf("transition %d leaves state %q, which the version does not have", t.Index, n)
				}
				t.From = append(t.From, s)
			case "on":
				e := events[n]
				if e == nil {
					return fmt.Sprintf("transition %d is on event %q, which the version does not have", t.Index, n)
				}
				t.Events = append(t.Events, e)
			default:
				c := counters[n]
				if c == nil {
					return fmt.Sprintf("transition %d counts %q, which the version does not have", t.Index, n)
				}
				if word == "increment" {
					t.Increment = append(t.Increment, c)
				} else {
					t.Reset = append(t.Reset, c)
				}
			}
		}
	case "target":
		kindText, rest, _ := strings.Cut(rest, " ")
		kind, err := strconv.Atoi(kindText)
		name, _, okName := quoted(rest)
		if err != nil || !okName || kind < int(ir.Fixed) || kind > int(ir.Choice) {
			return "a target line reads KIND \"STATE\""
		}
		tg := ir.Target{Kind: ir.TargetKind(kind)}
		if name != "" {
			if tg.State = states[name]; tg.State == nil {
				return fmt.Sprintf("transition %d goes to state %q, which the version does not have", t.Index, name)
			}
		}
		if *targets == 0 {
			t.Target = tg
		} else {
			t.Choices = append(t.Choices, &ir.Candidate{Target: tg})
		}
		*targets++
	}
	return ""
}

// field reads a field line after "field ": NAME TYPE values=[...].
func field(rest string) (*ir.Field, string) {
	name, rest, ok := quoted(rest)
	if !ok {
		return nil, "a field line names the field"
	}
	typeText, valuesText, _ := strings.Cut(strings.TrimPrefix(rest, " "), " ")
	typ, good := parseType(typeText)
	if !good {
		return nil, fmt.Sprintf("field %q has type %.40q, which is not a field type", name, typeText)
	}
	list, ok := strings.CutPrefix(valuesText, "values=[")
	if !ok || !strings.HasSuffix(list, "]") {
		return nil, fmt.Sprintf("field %q: values=[...] is missing", name)
	}
	values, ok := quotedList(strings.TrimSuffix(list, "]"))
	if !ok {
		return nil, fmt.Sprintf("field %q: its values are quoted names", name)
	}
	if len(values) == 0 {
		values = nil
	}
	return &ir.Field{Name: name, Type: typ, Values: values, MinItems: -1, MaxItems: -1}, ""
}

// parseType reads a type as ir.Type.String writes it.
func parseType(s string) (ir.Type, bool) {
	var t ir.Type
	switch {
	case strings.HasPrefix(s, "[]"):
		t.List, s = true, s[2:]
	case strings.HasPrefix(s, "map[string]"):
		t.Map, s = true, s[len("map[string]"):]
	}
	for k := ir.String; k <= ir.Enum; k++ {
		if k.String() == s {
			t.Kind = k
			return t, true
		}
	}
	return t, false
}

// quotedList reads Go-quoted strings separated by spaces.
func quotedList(s string) ([]string, bool) {
	var out []string
	for s = strings.TrimLeft(s, " "); s != ""; s = strings.TrimLeft(s, " ") {
		v, rest, ok := quoted(s)
		if !ok {
			return nil, false
		}
		out, s = append(out, v), rest
	}
	return out, true
}

// LineError is a line of a lock that does not say what a version needs.
type LineError struct {
	Pos diag.Pos
	Msg string
}

func (e *LineError) Error() string { return e.Pos.String() + ": " + e.Msg }
