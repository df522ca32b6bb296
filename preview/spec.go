package preview

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/fsmgen/fsmgen/internal/ir"
	"github.com/fsmgen/fsmgen/internal/lower"
	"github.com/fsmgen/fsmgen/internal/mermaid"
	"github.com/fsmgen/fsmgen/internal/mermaid/graph"
)

// Finding is one finding of fsmgen check, with its position.
type Finding struct {
	File     string `json:"file"`
	Line     int    `json:"line"`
	Col      int    `json:"col"`
	Severity string `json:"severity"`
	Message  string `json:"message"`
	Text     string `json:"text"` // as fsmgen check prints it: path:line:col: severity: message
}

// Machine is what the page draws and offers to simulate of a spec that checked clean.
type Machine struct {
	Name    string `json:"name"`
	Mermaid string `json:"mermaid"` // the diagram fsmgen diagram prints
	Chart   bool   `json:"chart"`
	// Big says the page draws the diagram around the active state (Run.Diagram), and the
	// whole one on request: Mermaid would take seconds to minutes to lay it out.
	Big bool `json:"big"`
	// Arrows is the number of arrows of the whole diagram.
	Arrows  int    `json:"arrows"`
	Initial string `json:"initial"`
	// States are the states with their diagram identifiers (a statechart's nodes).
	States   []NamedID `json:"states"`
	Events   []Event   `json:"events"` // the events a program may fire
	Hooks    []Named   `json:"hooks"`  // the hook guards
	Roles    []Named   `json:"roles"`
	Policies []Policy  `json:"policies"`
	Fields   []Field   `json:"fields"`
	Failable []Named   `json:"failable"` // the actions marked may_fail
}

// Named is a declared name with its doc.
type Named struct {
	Name string `json:"name"`
	Doc  string `json:"doc,omitempty"`
}

// NamedID is a state and its identifier on the diagram.
type NamedID struct {
	Name string `json:"name"`
	ID   string `json:"id"`
}

// Event is an event a program fires, with its payload.
type Event struct {
	Name    string  `json:"name"`
	Label   string  `json:"label"`
	Doc     string  `json:"doc,omitempty"`
	Payload []Field `json:"payload"`
}

// Policy is a policy and its default.
type Policy struct {
	Name    string `json:"name"`
	Doc     string `json:"doc,omitempty"`
	Default bool   `json:"default"`
}

// Field is a context or payload field: its type as the spec writes it, and its enum values.
type Field struct {
	Name     string   `json:"name"`
	Type     string   `json:"type"`
	Doc      string   `json:"doc,omitempty"`
	Values   []string `json:"values,omitempty"`
	Required bool     `json:"required,omitempty"`
}

// StateID is the identifier of a flat machine's state on its diagram (package mermaid).
func StateID(s *ir.State) string { return "s" + strconv.Itoa(s.Index) }

// load checks a spec's bytes and returns its findings and its machine (nil when it has
// errors). A panic of the checker is reported as a finding rather than stopping the
// server.
func load(path string, data []byte) (m *ir.Machine, fs []Finding) {
	defer func() {
		if p := recover(); p != nil {
			m = nil
			fs = append(fs, Finding{File: path, Line: 1, Col: 1, Severity: "error",
				Message: fmt.Sprintf("internal error while checking the spec: %v", p)})
			fs[len(fs)-1].Text = fmt.Sprintf("%s:1:1: error: %s", path, fs[len(fs)-1].Message)
		}
	}()
	m, ds := lower.Load(path, data)
	fs = []Finding{}
	for _, d := range ds.Sorted() {
		fs = append(fs, Finding{File: d.Pos.File, Line: d.Pos.Line, Col: d.Pos.Col, Severity: d.Severity.String(), Message: d.Message, Text: d.String()})
	}
	if ds.HasErrors() {
		m = nil
	}
	return m, fs
}

// chartIDs are a statechart's diagram identifiers, by node index.
func chartIDs(m *ir.Machine) []string { return graph.BuildChart(m.Chart).IDs }

// describe is the machine's view for the page.
func describe(m *ir.Machine) *Machine {
	v := &Machine{Name: m.Name, Mermaid: mermaid.StateDiagram(m), Chart: m.Chart != nil, Initial: m.Initial.Name,
		States: []NamedID{}, Events: []Event{}, Hooks: []Named{}, Roles: []Named{}, Policies: []Policy{}, Fields: []Field{}, Failable: []Named{}}
	v.Big, v.Arrows = isBig(m, v.Mermaid), strings.Count(v.Mermaid, " --> ")
	for _, s := range m.States {
		v.States = append(v.States, NamedID{Name: s.Name, ID: StateID(s)})
	}
	if m.Chart != nil {
		v.States = v.States[:0]
		ids := chartIDs(m)
		for _, n := range m.Chart.Nodes[1:] {
			v.States = append(v.States, NamedID{Name: n.Path, ID: ids[n.Index]})
		}
	}
	for _, e := range m.Events {
		if e.Internal {
			continue
		}
		ev := Event{Name: e.Name, Label: e.Label(), Doc: e.Doc, Payload: []Field{}}
		for _, f := range e.Payload {
			ev.Payload = append(ev.Payload, field(f))
		}
		v.Events = append(v.Events, ev)
	}
	for _, g := range m.Guards {
		if g.Kind == ir.Hook {
			v.Hooks = append(v.Hooks, Named{Name: g.Name, Doc: g.Doc})
		}
	}
	for _, r := range m.Roles {
		v.Roles = append(v.Roles, Named{Name: r.Name, Doc: r.Doc})
	}
	for _, p := range m.Policies {
		v.Policies = append(v.Policies, Policy{Name: p.Name, Doc: p.Doc, Default: p.Default})
	}
	for _, f := range m.Fields {
		v.Fields = append(v.Fields, field(f))
	}
	for _, a := range m.Actions {
		if a.MayFail {
			v.Failable = append(v.Failable, Named{Name: a.Name, Doc: a.Doc})
		}
	}
	return v
}

func field(f *ir.Field) Field {
	return Field{Name: f.Name, Type: f.Type.String(), Doc: f.Doc, Values: f.Values, Required: f.Required}
}
