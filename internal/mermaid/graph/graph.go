// Package graph is the diagram model shared by the Mermaid and DOT emitters: the nodes and
// the merged, labelled edges of a machine, built from the IR in declaration order (for a
// statechart, from its state tree: see Chart). Labels are plain spec text; every emitter
// escapes them for its own language. It also holds the small text helpers (durations,
// timeouts, conditions, roles) that the Markdown emitter shares so that all three outputs
// word things the same way.
package graph

import (
	"strconv"
	"strings"
	"time"

	"github.com/fsmgen/fsmgen/internal/ir"
)

// NodeKind says what a node is.
type NodeKind int

const (
	StateNode   NodeKind = iota // a declared state
	ChoiceNode                  // the decision point of one choose transition from one source
	HistoryNode                 // the history pseudo-state of a remembering state
	StartNode                   // the initial pseudo-state
	EndNode                     // the final pseudo-state
)

// Node is a node of the diagram. Nodes are values: two nodes are the same node when they
// are equal.
type Node struct {
	Kind NodeKind
	// Index is the state index (StateNode, HistoryNode) or the choice number (ChoiceNode).
	Index int
}

// EdgeKind classifies an edge; a merged edge carries the union of its labels' kinds.
type EdgeKind uint

const (
	Normal    EdgeKind = 1 << iota // a transition to a fixed target (or into a choice)
	Internal                       // an internal transition (a self-loop without exit/entry)
	History                        // to the remembered state (or into a history node)
	Return                         // from a history node to one of its candidates
	Limit                          // a counter limit redirecting to its then state
	Candidate                      // from a choice node to one of its candidates
	Start                          // from the initial pseudo-state
	End                            // to the final pseudo-state
	Default                        // from a statechart's history state to its default
)

// Edge is every transition between two nodes, merged: one label per contributing
// transition (or choice candidate), in declaration order, without duplicates.
type Edge struct {
	From, To Node
	Labels   []string // plain spec text, unescaped; empty strings are dropped
	Kind     EdgeKind
}

// Choice is the decision point of one choose transition taken from one source state.
type Choice struct {
	Transition *ir.Transition
	From       *ir.State
}

// Graph is the diagram of a machine.
type Graph struct {
	Machine *ir.Machine
	Choices []Choice    // indexed by the ChoiceNode's Index
	History []*ir.State // remembering states with a history node, in order of first use
	Edges   []*Edge     // in order of first appearance
}

// Options selects how history targets are drawn.
type Options struct {
	// HistoryNodes draws a history target as an edge into an "H" node of the remembering
	// state, with Return edges from it to each candidate. Without it, each history target
	// becomes one edge per candidate straight from the source, labelled "(history)".
	HistoryNodes bool
}

// Build lays out the machine's edges. It is deterministic: nodes and edges come in
// declaration order (states, then transitions, their sources and choice candidates).
func Build(m *ir.Machine, opt Options) *Graph {
	b := &builder{g: &Graph{Machine: m}, opt: opt, index: map[[2]Node]int{}, hist: map[int]bool{}}
	if m.Initial != nil {
		b.add(Node{Kind: StartNode}, stateNode(m.Initial), "", Start)
	}
	for _, t := range m.Transitions {
		trig, eff := Trigger(t), Effects(t)
		main := join(trig, eff)
		for _, s := range t.From {
			from := stateNode(s)
			switch t.Target.Kind {
			case ir.Fixed:
				b.add(from, stateNode(t.Target.State), main, Normal)
			case ir.Internal:
				b.add(from, from, join(trig, "(internal)", eff), Internal)
			case ir.History:
				b.history(from, t.Target.State, main)
			case ir.Choice:
				c := Node{Kind: ChoiceNode, Index: len(b.g.Choices)}
				b.g.Choices = append(b.g.Choices, Choice{Transition: t, From: s})
				b.add(from, c, main, Normal)
				for _, cand := range t.Choices {
					label := Conds(cand.Conds)
					if label == "" {
						label = "else"
					}
					switch cand.Target.Kind {
					case ir.History:
						b.history(c, cand.Target.State, label)
					default:
						b.add(c, stateNode(cand.Target.State), label, Candidate)
					}
				}
			}
			for _, c := range t.Increment {
				if c.Limit > 0 && c.Then != nil {
					b.add(from, stateNode(c.Then), join(trig, limitText(c)), Limit)
				}
			}
		}
	}
	for _, s := range m.States {
		if s.Terminal {
			b.add(stateNode(s), Node{Kind: EndNode}, "", End)
		}
	}
	return b.g
}

func stateNode(s *ir.State) Node { return Node{Kind: StateNode, Index: s.Index} }

type builder struct {
	g     *Graph
	opt   Options
	index map[[2]Node]int // (from, to) -> position in g.Edges; looked up, never iterated
	hist  map[int]bool    // state index -> history node created; looked up, never iterated
}

func (b *builder) add(from, to Node, label string, kind EdgeKind) {
	key := [2]Node{from, to}
	i, ok := b.index[key]
	if !ok {
		i = len(b.g.Edges)
		b.index[key] = i
		b.g.Edges = append(b.g.Edges, &Edge{From: from, To: to})
	}
	e := b.g.Edges[i]
	e.Kind |= kind
	if label == "" {
		return
	}
	for _, l := range e.Labels {
		if l == label {
			return
		}
	}
	e.Labels = append(e.Labels, label)
}

// history draws a history target of remembering state s, reached from node from.
func (b *builder) history(from Node, s *ir.State, label string) {
	if !b.opt.HistoryNodes {
		for _, x := range s.HistoryFrom {
			b.add(from, stateNode(x), join(label, HistoryNote(from, s)), History)
		}
		return
	}
	h := Node{Kind: HistoryNode, Index: s.Index}
	if !b.hist[s.Index] {
		b.hist[s.Index] = true
		b.g.History = append(b.g.History, s)
		for _, x := range s.HistoryFrom {
			b.add(h, stateNode(x), "", Return)
		}
	}
	b.add(from, h, label, History)
}

// HistoryNote is the label suffix of a direct history edge from node from: "(history)"
// when from is the remembering state itself, "(history of S)" otherwise.
func HistoryNote(from Node, s *ir.State) string {
	if from.Kind == StateNode && from.Index == s.Index {
		return "(history)"
	}
	return "(history of " + s.Name + ")"
}

// Trigger describes what fires a transition: its events, its conditions and the roles
// that may fire it, as in "submit [ready] [!blocked] by lead (while may_submit)".
func Trigger(t *ir.Transition) string {
	var names []string
	for _, e := range t.Events {
		names = append(names, e.Label())
	}
	return join(strings.Join(names, ", "), Conds(t.Conds), by(t.Roles))
}

// Effects describes what a transition does besides moving: "/ a, b +counter reset c".
func Effects(t *ir.Transition) string {
	var parts []string
	if len(t.Actions) > 0 {
		var names []string
		for _, a := range t.Actions {
			names = append(names, a.Name)
		}
		parts = append(parts, "/ "+strings.Join(names, ", "))
	}
	for _, c := range t.Increment {
		s := "+" + c.Name
		if c.Limit > 0 && c.Then == nil {
			if c.Max {
				s += " (refused past " + strconv.Itoa(c.Bound()) + ")"
			} else {
				s += " (refused at " + strconv.Itoa(c.Limit) + ")"
			}
		}
		parts = append(parts, s)
	}
	for _, c := range t.Reset {
		parts = append(parts, "reset "+c.Name)
	}
	return strings.Join(parts, " ")
}

// Conds renders conditions as "[g] [!h]".
func Conds(cs []ir.Cond) string {
	var parts []string
	for _, c := range cs {
		if c.Negate {
			parts = append(parts, "[!"+c.Guard.Name+"]")
		} else {
			parts = append(parts, "["+c.Guard.Name+"]")
		}
	}
	return strings.Join(parts, " ")
}

func by(rs []ir.RoleRule) string {
	if len(rs) == 0 {
		return ""
	}
	return "by " + Roles(rs)
}

// Roles renders role rules as "human, lead (while lead_may_approve)".
func Roles(rs []ir.RoleRule) string {
	var parts []string
	for _, r := range rs {
		s := r.Role.Name
		if r.Policy != nil {
			s += " (while " + r.Policy.Name + ")"
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, ", ")
}

// Duration renders a duration the way specs write it: 30m, 4h, 1h30m, 90s, 500ms.
func Duration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = s[:len(s)-2]
	}
	if strings.HasSuffix(s, "h0m") {
		s = s[:len(s)-2]
	}
	return s
}

// Levels renders timeout levels as "warn 80%, alert 100%, escalate 150%".
func Levels(ls []ir.Level) string {
	var parts []string
	for _, l := range ls {
		parts = append(parts, l.Name+" "+strconv.Itoa(l.Percent)+"%")
	}
	return strings.Join(parts, ", ")
}

// Timeout renders a state's timeout for a diagram note: "timeout 30m (configurable),
// warn 80%, alert 100%, escalate 150%, fires give_up at 100%".
func Timeout(t *ir.Timeout) string {
	s := "timeout " + Duration(t.After)
	if t.Configurable {
		s += " (configurable)"
	}
	if lv := Levels(t.Levels); lv != "" {
		s += ", " + lv
	}
	if t.OnExpiry != nil {
		s += ", fires " + t.OnExpiry.Name + " at 100%"
	}
	return s
}

// Ordinal renders 1st, 2nd, 3rd, 4th, 11th, 21st, ...
func Ordinal(n int) string {
	suffix := "th"
	switch {
	case n%100 >= 11 && n%100 <= 13:
	case n%10 == 1:
		suffix = "st"
	case n%10 == 2:
		suffix = "nd"
	case n%10 == 3:
		suffix = "rd"
	}
	return strconv.Itoa(n) + suffix
}

// join joins the non-empty parts with spaces.
func join(parts ...string) string {
	var out []string
	for _, p := range parts {
		if p != "" {
			out = append(out, p)
		}
	}
	return strings.Join(out, " ")
}

// limitText says when a counter's limit redirects: "when cycles reaches 3", or "when cycles
// passes 3" for max: 3.
func limitText(c *ir.Counter) string {
	if c.Max {
		return "when " + c.Name + " passes " + strconv.Itoa(c.Bound())
	}
	return "when " + c.Name + " reaches " + strconv.Itoa(c.Limit)
}

// Constraints renders what field f accepts, as the documents write it: "required,
// non-empty, 3 to 6 items, min 0, one of a, b", each bound and value through quote.
func Constraints(f *ir.Field, quote func(string) string) string {
	var parts []string
	if f.Required {
		parts = append(parts, "required")
	}
	if f.NonEmpty {
		parts = append(parts, "non-empty")
	}
	switch {
	case f.MinItems >= 0 && f.MaxItems >= 0:
		parts = append(parts, strconv.Itoa(f.MinItems)+" to "+strconv.Itoa(f.MaxItems)+" items")
	case f.MinItems >= 0:
		parts = append(parts, "at least "+strconv.Itoa(f.MinItems)+" items")
	case f.MaxItems >= 0:
		parts = append(parts, "at most "+strconv.Itoa(f.MaxItems)+" items")
	}
	if f.Min.Set {
		word := "min "
		if f.MinExclusive {
			word = "above "
		}
		parts = append(parts, word+quote(Literal(f, f.Min)))
	}
	if f.Max.Set {
		word := "max "
		if f.MaxExclusive {
			word = "below "
		}
		parts = append(parts, word+quote(Literal(f, f.Max)))
	}
	if len(f.Values) > 0 {
		var vs []string
		for _, v := range f.Values {
			vs = append(vs, quote(v))
		}
		parts = append(parts, "one of "+strings.Join(vs, ", "))
	}
	return strings.Join(parts, ", ")
}

// Literal renders a constant of field f's type the way a spec writes it (unescaped).
func Literal(f *ir.Field, l ir.Literal) string {
	switch f.Type.Kind {
	case ir.String, ir.Enum, ir.Time:
		return l.Str
	case ir.Bool:
		return strconv.FormatBool(l.Bool)
	case ir.Duration:
		return Duration(time.Duration(l.Num))
	}
	return strconv.FormatFloat(l.Num, 'g', -1, 64)
}
