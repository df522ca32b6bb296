// Package cover measures what an application's own tests exercised of its machines: it
// reads the records a build with the tag fsmcover writes (fsmrt.CoverRecord, one JSON
// object per line, in the files of FSMGEN_COVERDIR) and holds them against a spec: which
// states (a statechart's configurations), transitions, guard outcomes, refusals, timeout
// levels and expiries were never exercised, each at its position in the spec.
package cover

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/fsmgen/fsmgen/fsmrt"
	"github.com/fsmgen/fsmgen/internal/diag"
	"github.com/fsmgen/fsmgen/internal/ir"
)

// The kinds of item, in the order reports list them.
const (
	States      = "states"
	Transitions = "transitions"
	Guards      = "guard outcomes"
	Refusals    = "refusals"
	Timeouts    = "timeouts"
)

// Kinds are the kinds of item in report order.
var Kinds = []string{States, Transitions, Guards, Refusals, Timeouts}

// Item is one thing a machine can do that a test may exercise.
type Item struct {
	Kind    string   `json:"kind"`
	What    string   `json:"what"`
	Pos     diag.Pos `json:"pos"`
	Covered bool     `json:"covered"`
	// Transition is the index of the transition (a statechart's transition as written) for
	// an item of kind Transitions, -1 otherwise; the diagrams mark them by it.
	Transition int `json:"-"`
}

// Report is the coverage of one spec.
type Report struct {
	Spec    string `json:"spec"`
	Machine string `json:"machine"`
	Chart   bool   `json:"chart"`
	Items   []Item `json:"-"`
	// Records counts the records of this machine and spec; Stale those of the machine
	// written by code of another version of the spec, which are not counted.
	Records int    `json:"records"`
	Stale   int    `json:"stale"`
	diagram string // the Mermaid diagram with the overlay
}

// Total is a count of covered items out of all.
type Total struct {
	Covered int `json:"covered"`
	All     int `json:"all"`
}

// Percent is the share covered, 100 for nothing to cover.
func (t Total) Percent() float64 {
	if t.All == 0 {
		return 100
	}
	return 100 * float64(t.Covered) / float64(t.All)
}

// Totals returns the totals by kind, and over all kinds.
func (r *Report) Totals() (map[string]Total, Total) {
	by := map[string]Total{}
	var all Total
	for _, it := range r.Items {
		t := by[it.Kind]
		t.All++
		all.All++
		if it.Covered {
			t.Covered++
			all.Covered++
		}
		by[it.Kind] = t
	}
	return by, all
}

// Uncovered returns the items not covered, in report order.
func (r *Report) Uncovered() []Item {
	var out []Item
	for _, it := range r.Items {
		if !it.Covered {
			out = append(out, it)
		}
	}
	return out
}

// ReadError is a coverage file that does not hold records.
type ReadError struct {
	Path string
	Line int
	Err  error
}

func (e *ReadError) Error() string {
	if e.Line == 0 {
		return fmt.Sprintf("%s: %v", e.Path, e.Err)
	}
	return fmt.Sprintf("%s:%d: %v", e.Path, e.Line, e.Err)
}

func (e *ReadError) Unwrap() error { return e.Err }

// MaxLine is the longest record line read.
const MaxLine = 1 << 20

// Read returns the records of every coverage file (*.jsonl) in dir.
func Read(dir string) ([]fsmrt.CoverRecord, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "*.jsonl"))
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(dir); err != nil {
		return nil, &ReadError{Path: dir, Err: err}
	}
	sort.Strings(paths)
	var out []fsmrt.CoverRecord
	for _, p := range paths {
		recs, err := readFile(p)
		if err != nil {
			return nil, err
		}
		out = append(out, recs...)
	}
	return out, nil
}

func readFile(path string) ([]fsmrt.CoverRecord, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, &ReadError{Path: path, Err: err}
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return nil, &ReadError{Path: path, Err: fmt.Errorf("not a regular file")}
	}
	var out []fsmrt.CoverRecord
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), MaxLine)
	for n := 1; sc.Scan(); n++ {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		var r fsmrt.CoverRecord
		dec := json.NewDecoder(bytes.NewReader(line))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&r); err != nil {
			return nil, &ReadError{Path: path, Line: n, Err: fmt.Errorf("not a coverage record: %v", err)}
		}
		if _, err := dec.Token(); err != io.EOF {
			return nil, &ReadError{Path: path, Line: n, Err: fmt.Errorf("not a coverage record: more after the object")}
		}
		out = append(out, r)
	}
	if err := sc.Err(); err != nil {
		return nil, &ReadError{Path: path, Err: err}
	}
	return out, nil
}

// Of holds the records against machine m, generated from the spec at path.
func Of(path string, m *ir.Machine, recs []fsmrt.CoverRecord) *Report {
	name := m.Package + "." + m.Name
	fp := ir.Fingerprint(m)
	r := &Report{Spec: path, Machine: name, Chart: m.Chart != nil}
	var mine []fsmrt.CoverRecord
	for _, rec := range recs {
		switch {
		case rec.Machine != name:
		case rec.Spec != fp:
			r.Stale++
		default:
			mine = append(mine, rec)
		}
	}
	r.Records = len(mine)
	has := func(f func(fsmrt.CoverRecord) bool) bool { return slices.ContainsFunc(mine, f) }
	add := func(kind, what string, pos diag.Pos, covered bool, t int) {
		r.Items = append(r.Items, Item{Kind: kind, What: what, Pos: pos, Covered: covered, Transition: t})
	}

	// States (configurations): the machine was in it, or a transition left it there.
	stateWord := "state"
	if m.Chart != nil {
		stateWord = "configuration"
	}
	for _, s := range m.States {
		add(States, fmt.Sprintf("%s %q was never reached", stateWord, s.Name), s.Pos, has(func(c fsmrt.CoverRecord) bool {
			return c.State == s.Name || c.To == s.Name
		}), -1)
	}

	// Transitions: a flat machine's as declared; a statechart's as written, taken by any
	// microstep that takes it.
	taken := map[int]bool{}
	for _, c := range mine {
		if c.Kind == fsmrt.CoverTransition {
			taken[c.Transition] = true
		}
	}
	if m.Chart == nil {
		for _, t := range m.Transitions {
			add(Transitions, "transition "+describe(t)+" was never taken", t.Pos, taken[t.Index], t.Index)
		}
	} else {
		written := map[*ir.ChartTransition]bool{}
		for _, t := range m.Transitions {
			if taken[t.Index] {
				for _, ct := range t.Taken {
					written[ct] = true
				}
			}
		}
		for _, ct := range m.Chart.Transitions {
			add(Transitions, "transition "+describeChart(ct)+" was never taken", ct.Pos, written[ct], ct.Index)
		}
	}

	// Guard outcomes: each guard asked, holding and failing.
	for _, g := range m.Guards {
		if g.Kind == ir.Logic {
			continue
		}
		for _, held := range []bool{true, false} {
			word := "held"
			if !held {
				word = "failed"
			}
			add(Guards, fmt.Sprintf("guard %q never %s", g.Name, word), g.Pos, has(func(c fsmrt.CoverRecord) bool {
				return c.Kind == fsmrt.CoverGuard && c.Guard == g.Index && c.Held == held
			}), -1)
		}
	}

	// Refusals: an event a state does not accept, once for the machine; then by state, each
	// other kind the state can refuse with.
	invalid := false
	for _, s := range m.States {
		invalid = invalid || slices.Contains(refusalKinds(m, s), fsmrt.RefusalInvalid)
	}
	if invalid {
		add(Refusals, "the machine never refused "+refusalText[fsmrt.RefusalInvalid], diag.Pos{File: path, Line: 1, Col: 1}, has(func(c fsmrt.CoverRecord) bool {
			return c.Kind == fsmrt.CoverRefusal && c.Refusal == fsmrt.RefusalInvalid
		}), -1)
	}
	for _, s := range m.States {
		for _, kind := range refusalKinds(m, s) {
			if kind == fsmrt.RefusalInvalid {
				continue
			}
			add(Refusals, fmt.Sprintf("%s %q never refused an event (%s)", stateWord, s.Name, refusalText[kind]), s.Pos, has(func(c fsmrt.CoverRecord) bool {
				return c.Kind == fsmrt.CoverRefusal && c.State == s.Name && c.Refusal == kind
			}), -1)
		}
	}

	// Timeouts: each level recorded, each expiry fired.
	for _, s := range m.States {
		t := s.Timeout
		if t == nil || (m.Chart != nil && s.SharesClock()) {
			continue
		}
		for _, l := range t.Levels {
			add(Timeouts, fmt.Sprintf("the timeout of %q never reached its level %s", s.Name, l.Name), s.Pos, has(func(c fsmrt.CoverRecord) bool {
				return c.Kind == fsmrt.CoverLevel && c.State == s.Name && c.Level == l.Name
			}), -1)
		}
		if t.OnExpiry != nil {
			add(Timeouts, fmt.Sprintf("the timeout of %q never expired", s.Name), s.Pos, has(func(c fsmrt.CoverRecord) bool {
				return c.Kind == fsmrt.CoverExpiry && c.State == s.Name
			}), -1)
		}
	}
	_, data := Diagram("mermaid", m, r)
	r.diagram = string(data)
	return r
}

// refusalText says what each kind of refusal is.
var refusalText = map[string]string{
	fsmrt.RefusalInvalid:    "an event a state does not accept",
	fsmrt.RefusalGuards:     "no transition's guards held",
	fsmrt.RefusalNoChoice:   "no candidate of a choice held",
	fsmrt.RefusalNoHistory:  "nothing remembered to go back to",
	fsmrt.RefusalLimit:      "a counter at its limit",
	fsmrt.RefusalValidation: "required fields missing or invalid",
	fsmrt.RefusalRole:       "a role that may not fire it",
}

// refusalKinds returns the kinds of refusal state s can give, in a fixed order.
func refusalKinds(m *ir.Machine, s *ir.State) []string {
	var kinds []string
	accepts := 0
	guarded, choice, history, limit, validation, role := false, false, false, false, false, false
	for _, e := range m.Events {
		ts := m.Lookup(s, e)
		if len(ts) == 0 {
			continue
		}
		accepts++
		allGuarded := true
		for _, t := range ts {
			if len(t.Conds) == 0 {
				allGuarded = false
			}
			if len(t.Roles) > 0 {
				role = true
			}
			switch t.Target.Kind {
			case ir.Choice:
				last := t.Choices[len(t.Choices)-1]
				if len(last.Conds) > 0 {
					choice = true
				}
				for _, c := range t.Choices {
					if c.Target.Kind == ir.History {
						history = true
					}
					if c.Target.State != nil && len(c.Target.State.Requires) > 0 {
						validation = true
					}
				}
			case ir.History:
				history = true
			case ir.Fixed:
				if len(t.Target.State.Requires) > 0 {
					validation = true
				}
			}
			for _, c := range t.Increment {
				if c.Limit > 0 && c.Then == nil {
					limit = true
				}
			}
		}
		if allGuarded {
			guarded = true
		}
	}
	if accepts < countExternal(m) {
		kinds = append(kinds, fsmrt.RefusalInvalid)
	}
	for _, k := range []struct {
		on   bool
		kind string
	}{{guarded, fsmrt.RefusalGuards}, {choice, fsmrt.RefusalNoChoice}, {history, fsmrt.RefusalNoHistory}, {limit, fsmrt.RefusalLimit}, {validation, fsmrt.RefusalValidation}, {role, fsmrt.RefusalRole}} {
		if k.on {
			kinds = append(kinds, k.kind)
		}
	}
	return kinds
}

// countExternal counts the events a program can fire (a statechart's internal events,
// eventless and done, are not).
func countExternal(m *ir.Machine) int {
	n := 0
	for _, e := range m.Events {
		if m.Chart != nil && (e == m.Chart.Always || isDone(m, e)) {
			continue
		}
		n++
	}
	return n
}

// isDone reports whether e is a statechart's done event of a state.
func isDone(m *ir.Machine, e *ir.Event) bool {
	for _, n := range m.Chart.Nodes {
		if n.Done == e {
			return true
		}
	}
	return false
}

// describe names a flat transition: its sources, events and target.
func describe(t *ir.Transition) string {
	var from, on []string
	for _, s := range t.From {
		from = append(from, s.Name)
	}
	for _, e := range t.Events {
		on = append(on, e.Name)
	}
	to := ""
	switch t.Target.Kind {
	case ir.Fixed:
		to = " to " + t.Target.State.Name
	case ir.Internal:
		to = " (internal)"
	case ir.History:
		to = " back to where " + t.Target.State.Name + " was entered from"
	case ir.Choice:
		to = " to a choice"
	}
	if len(from) > 3 {
		from = append(from[:3], fmt.Sprintf("%d more", len(from)-3))
	}
	return fmt.Sprintf("from %s on %s%s", strings.Join(from, ", "), strings.Join(on, ", "), to)
}

// describeChart names a statechart's transition as written.
func describeChart(t *ir.ChartTransition) string {
	on := ""
	switch {
	case t.Always:
		on = " (eventless)"
	case t.Done:
		on = " when done"
	case t.Descriptor != "":
		on = " on " + t.Descriptor
	case t.Event != nil:
		on = " on " + t.Event.Name
	}
	to := " (targetless)"
	if t.Target != nil {
		to = " to " + t.Target.Path
	}
	return "from " + t.Source.Path + on + to
}
