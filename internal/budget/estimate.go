package budget

import (
	"strconv"

	"github.com/fsmgen/fsmgen/internal/ir"
)

// sizes holds a size in bytes for each output.
type sizes struct{ code, tests, mermaid, markdown, dot float64 }

func (b *sizes) add(x sizes) {
	b.code += x.code
	b.tests += x.tests
	b.mermaid += x.mermaid
	b.markdown += x.markdown
	b.dot += x.dot
}

// The constants below were fitted to the emitters' output (calibrate_test.go prints what
// each construct adds, TestEstimateIsClose the estimate next to the output of every spec).

// What every machine has: the code, tests and text that do not depend on the spec.
var base = sizes{code: 7270, tests: 25730, mermaid: 100, markdown: 690, dot: 485}

// What the first use of a construct adds besides the declaration itself: the code that
// handles it, its tests, the sections of the document.
var (
	idempotentCost = sizes{code: 420, tests: 3050, markdown: 190}
	historyCost    = sizes{code: 1690, tests: 2240, markdown: 95}
	counterCost    = sizes{code: 370, tests: 1670, markdown: 100}
	perStateCost   = sizes{code: 40, tests: 400, markdown: 30}
	limitCost      = sizes{tests: 250, markdown: 300}
	timeoutCost    = sizes{code: 4000, tests: 6300, markdown: 300}
	expiryCost     = sizes{code: 550, tests: 400}
	remembersCost  = sizes{code: 440, tests: 1800, markdown: 200}
	hookCost       = sizes{code: 1200, tests: 900, markdown: 60}
	fieldGuardCost = sizes{code: 450, tests: 500, markdown: 60}
	roleCost       = sizes{code: 900, tests: 600, markdown: 200}
	actionCost     = sizes{code: 1000, tests: 600, markdown: 80}
	effectCost     = sizes{code: 400, tests: 2000}
	checkpointCost = sizes{code: 2600, tests: 1450, markdown: 100}
	everyCost      = sizes{code: 800, tests: 3800}
	payloadCost    = sizes{code: 1700, tests: 1300}
	requiresCost   = sizes{code: 900, tests: 400, markdown: 220}
	enumCost       = sizes{code: 400}
	contextCost    = sizes{code: 80, markdown: 30}
	groupCost      = sizes{tests: 100, mermaid: 40, markdown: 50}
)

// What each declaration adds, besides its names and doc: a constant, a name in a table, a
// row of the document.
var (
	stateCost = sizes{code: 70, tests: 110, mermaid: 22, markdown: 20, dot: 25}
	eventCost = sizes{code: 70, tests: 40, markdown: 20}
	declCost  = sizes{code: 160, tests: 90, markdown: 40}
)

// counts are the quantities the outputs grow with, gathered in one pass over the machine
// and over every transition's expanded sources. Lengths are in bytes.
type counts struct {
	states, events float64
	pairs          float64 // states × events
	stateDigits    float64 // digits of the largest state index
	eventDigits    float64

	// Average spec name and Go name of a state and of an event.
	stateName, stateGo, eventName, eventGo float64

	// The transitions once their sources are expanded: one (transition, source, event) is
	// one row of the Markdown transition table and an accepted case of the tests.
	cells int64
}

// count gathers the counts of m and the sizes that do not depend on the (state, event)
// pairs.
func count(m *ir.Machine) (*counts, sizes) {
	c := &counts{states: float64(len(m.States)), events: float64(len(m.Events))}
	c.pairs = c.states * c.events
	c.stateDigits = float64(len(strconv.Itoa(max(len(m.States)-1, 0))))
	c.eventDigits = float64(len(strconv.Itoa(max(len(m.Events)-1, 0))))
	out := base
	once := map[string]bool{}
	use := func(what string, x sizes) {
		if !once[what] {
			once[what] = true
			out.add(x)
		}
	}
	// decl adds a declaration: its cost, and its names and doc in each output that writes
	// them (the Go name twice in the code: the declaration and its use).
	decl := func(cost sizes, name, goName, doc string, inDiagram bool) {
		n, g, d := float64(len(name)), float64(len(goName)), float64(len(doc))
		cost.code += n + 2*g + 1.1*d
		cost.tests += n + 2*g
		cost.markdown += 2*n + 1.1*d
		if inDiagram {
			cost.mermaid += n
			cost.dot += n + d
		}
		out.add(cost)
	}

	if m.Idempotent {
		use("idempotent", idempotentCost)
	}
	if m.RecordHistory {
		use("history", historyCost)
	}
	out.code += 1.1 * float64(len(m.Doc))
	out.markdown += 1.1 * float64(len(m.Doc))
	out.dot += float64(len(m.Doc))

	for _, s := range m.States {
		c.stateName += float64(len(s.Name))
		c.stateGo += float64(len(s.GoName))
		decl(stateCost, s.Name, s.GoName, s.Doc, true)
		out.code += 2*c.stateDigits + float64(len(s.GoName))
		if s.Remembers {
			use("remembers", remembersCost)
			out.code += float64(len(s.HistoryFrom)) * (c.stateDigits + 2)
			out.markdown += float64(len(s.HistoryFrom)) * 12
		}
		if len(s.Requires) > 0 {
			use("requires", requiresCost)
			out.add(requiredCost(s.Requires))
		}
		for _, g := range s.Groups {
			out.mermaid += float64(len(g.Name)) + 6
			out.dot += float64(len(g.Name)) + 4
		}
		entryExit := float64(len(s.Entry) + len(s.Exit))
		out.code += entryExit * 12
		out.markdown += entryExit * 14
		if t := s.Timeout; t != nil {
			use("timeout", timeoutCost)
			if t.OnExpiry != nil {
				use("expiry", expiryCost)
			}
			// Each level: a line of the diagrams' note and of the document's cell, a
			// constant of the code, and the tests' cases just before and at it.
			levels := float64(len(t.Levels))
			var names float64
			for _, l := range t.Levels {
				names += float64(len(l.Name))
			}
			out.add(sizes{code: 160 + 8.5*levels, tests: 400 + 300*levels + 5*names, mermaid: 40 + 12*levels, markdown: 80 + 26*levels + names, dot: 150 + 9*levels})
			out.markdown += 1.1 * float64(len(t.Doc))
			out.dot += float64(len(t.Doc))
		}
	}
	// A statechart's states require fields; its microsteps check them, by index.
	if m.Chart != nil {
		for _, n := range m.Chart.Nodes {
			if len(n.Requires) > 0 {
				use("requires", requiresCost)
				out.add(requiredCost(n.Requires))
			}
		}
		for _, t := range m.Transitions {
			if len(t.Requires) > 0 {
				out.code += 30 + float64(len(t.Requires))*60
			}
		}
	}
	for _, e := range m.Events {
		c.eventName += float64(len(e.Name))
		c.eventGo += float64(len(e.GoName))
		decl(eventCost, e.Name, e.GoName, e.Doc, false)
		out.code += c.eventDigits + float64(len(e.GoName))
		if len(e.Payload) > 0 {
			use("payload", payloadCost)
		}
		for _, f := range e.Payload {
			c.field(&out, decl, f)
		}
	}
	if len(m.States) > 0 {
		c.stateName /= c.states
		c.stateGo /= c.states
	}
	if len(m.Events) > 0 {
		c.eventName /= c.events
		c.eventGo /= c.events
	}
	if len(m.Fields) > 0 {
		use("context", contextCost)
	}
	for _, f := range m.Fields {
		c.field(&out, decl, f)
	}
	for _, g := range m.Groups {
		use("group", groupCost)
		decl(declCost, g.Name, g.GoName, "", false)
		out.code += float64(len(g.States)) * (float64(len(g.GoName)) + c.stateGo + 10)
	}
	for _, r := range m.Roles {
		use("role", roleCost)
		decl(declCost, r.Name, r.GoName, r.Doc, false)
	}
	for _, p := range m.Policies {
		decl(declCost, p.Name, p.GoName, p.Doc, false)
	}
	for _, x := range m.Counters {
		use("counter", counterCost)
		if x.PerState {
			use("perState", perStateCost)
		}
		if x.Limit > 0 {
			use("limit", limitCost)
		}
		decl(declCost, x.Name, x.GoName, x.Doc, false)
	}
	for _, g := range m.Guards {
		if g.Kind == ir.Hook {
			use("hook", hookCost)
		} else {
			use("fieldGuard", fieldGuardCost)
		}
		decl(declCost, g.Name, g.GoName, g.Doc, false)
		out.code += float64(len(g.Threshold.Values)) * 8
		out.tests += float64(len(g.Threshold.Values)) * 150
	}
	out.code += logicCode(m)
	for _, a := range m.Actions {
		use("action", actionCost)
		if a.Effect {
			use("effect", effectCost)
		}
		decl(declCost, a.Name, a.GoName, a.Doc, false)
	}
	for _, x := range m.Checkpoints {
		use("checkpoint", checkpointCost)
		if x.EveryTransition {
			use("every", everyCost)
		}
		decl(declCost, x.Name, x.GoName, x.Doc, false)
		out.markdown += float64(len(x.Save)) * 12
	}
	for _, l := range m.Levels {
		decl(sizes{code: 60, markdown: 20}, l.Name, l.GoName, "", false)
	}

	out.add(c.transitions(m))
	return c, out
}

// requiredCost is what a state's required fields add: the code's checks, the document's
// list, and the tests' cases of each field missing and invalid.
func requiredCost(fs []*ir.Field) sizes {
	var x sizes
	for _, f := range fs {
		n := float64(len(f.Name))
		x.code += 52 + n
		x.markdown += 20 + n
		x.tests += 270 + 4*n
	}
	return x
}

// field counts a context or payload field.
func (c *counts) field(out *sizes, decl func(sizes, string, string, string, bool), f *ir.Field) {
	decl(sizes{code: 60, tests: 10, markdown: 40}, f.Name, f.GoName, f.Doc, false)
	if f.Type.Kind == ir.Enum {
		out.add(enumCost)
		for _, v := range f.Values {
			out.add(sizes{code: 40 + 3*float64(len(v)), tests: 20 + float64(len(v)), markdown: float64(len(v)) + 4})
		}
	}
}

// transitions sizes what the transitions take, expanded: a line of code per transition with
// its source list, an edge per distinct (source, target) in the diagrams with a label per
// transition, a Markdown row per (transition, source, event), and the tests' extra cases.
func (c *counts) transitions(m *ir.Machine) sizes {
	var out sizes
	// Distinct diagram edges: the sources of transitions to each target, counted once per
	// target with a mark per state (no set of pairs, so that this stays linear).
	byTarget := make([][]*ir.Transition, len(m.States))
	byHistory := make([][]*ir.Transition, len(m.States)) // by remembering state
	mark := make([]int, len(m.States))
	var edges, selfLoops float64
	histNames := make([]float64, len(m.States)) // Σ of the names of a state's HistoryFrom
	for _, s := range m.States {
		for _, x := range s.HistoryFrom {
			histNames[s.Index] += float64(len(x.Name)) + 4
		}
	}
	counted := func(s *ir.State, stamp int) bool {
		if mark[s.Index] == stamp {
			return true
		}
		mark[s.Index] = stamp
		return false
	}

	// The Markdown transition table leaves out the columns that are empty in every row; a
	// column that is present costs every row its separator.
	var cols [7]bool // guard, roles, actions, counters, requires, checkpoint, description
	cols[1] = len(m.Roles) > 0
	for _, t := range m.Transitions {
		cols[0] = cols[0] || len(t.Conds) > 0
		cols[2] = cols[2] || len(t.Actions) > 0
		cols[3] = cols[3] || len(t.Increment)+len(t.Reset) > 0
		cols[4] = cols[4] || t.Target.State != nil && len(t.Target.State.Requires) > 0
		cols[5] = cols[5] || t.Checkpoint != nil
		cols[6] = cols[6] || t.Doc != ""
	}
	columns := 0.0
	for _, used := range cols {
		if used {
			columns++
		}
	}

	earlier := earlierGuards(m)
	for ti, t := range m.Transitions {
		from, on := float64(len(t.From)), float64(len(t.Events))
		cells := from * on
		c.cells += int64(len(t.From) * len(t.Events))

		// The diagram label: events, conditions, roles, effects.
		var events, fromName float64
		for i, e := range t.Events {
			events += float64(len(e.Name))
			if i > 0 {
				events += 2 // ", "
			}
		}
		for _, s := range t.From {
			fromName += float64(len(s.Name))
		}
		label := events
		var conds, guards float64
		hook := false
		cond := func(cs []ir.Cond) {
			for _, x := range cs {
				conds += float64(len(x.Guard.Name)) + 4
				guards++
				hook = hook || x.Guard.Kind == ir.Hook
			}
		}
		cond(t.Conds)
		label += conds
		var roles float64
		for _, r := range t.Roles {
			roles += float64(len(r.Role.Name)) + 2
			if r.Policy != nil {
				roles += float64(len(r.Policy.Name)) + 9
			}
		}
		if roles > 0 {
			label += roles + 3
		}
		var actions, calls float64
		for _, a := range t.Actions {
			actions += float64(len(a.Name)) + 2
			calls += float64(len(a.Name)) + 4
		}
		var counters float64
		for _, x := range t.Increment {
			counters += float64(len(x.Name)) + 2
		}
		for _, x := range t.Reset {
			counters += float64(len(x.Name)) + 7
		}
		label += actions + counters
		if t.Checkpoint != nil {
			calls += float64(len(t.Checkpoint.Name)) + 15
		}

		// Code: the transition's line in def, with its source list.
		code := 75 + from*(c.stateDigits+2) + on*(c.eventDigits+2) + 6*float64(len(t.Conds)) + 6*float64(len(t.Actions)) + 6*float64(len(t.Increment)+len(t.Reset))
		if len(t.Roles) > 0 {
			code += 30 + 30*float64(len(t.Roles))
		}
		if m.Chart != nil {
			// A microstep's line also says whether it changes the configuration and settles
			// it, and lists the history it reads and records and the done events it raises.
			code += 40 + 32*float64(len(t.Mem)+len(t.Record)) + 12*float64(len(t.Raise))
		}

		// Diagram edges and the Markdown "to" cell.
		var to float64
		choiceEdges := 0.0
		perSource := 1.0 // edges from each source, each with the label
		switch t.Target.Kind {
		case ir.Fixed:
			byTarget[t.Target.State.Index] = append(byTarget[t.Target.State.Index], t)
			to = float64(len(t.Target.State.Name)) + 2
			code += 3 + c.stateDigits
		case ir.Internal:
			label += 11
			to = fromName/max(from, 1) + 30
			for _, s := range t.From {
				if !counted(s, -1) {
					selfLoops++
				}
			}
			code += from * (c.stateDigits + 2)
		case ir.History:
			h := t.Target.State
			k := float64(len(h.HistoryFrom))
			byHistory[h.Index] = append(byHistory[h.Index], t)
			label += 10 + float64(len(h.Name))
			perSource = k
			to += histNames[h.Index] + float64(len(h.Name)) + 14
			code += k * (c.stateDigits + 2)
		case ir.Choice:
			for _, ch := range t.Choices {
				cond(ch.Conds)
				choiceEdges++
				to += c.stateName + 14
				code += 30 + c.stateDigits + 6*float64(len(ch.Conds))
				if ch.Target.Kind == ir.History {
					k := float64(len(ch.Target.State.HistoryFrom))
					choiceEdges += k - 1
					to += histNames[ch.Target.State.Index]
				}
			}
			code += 30
		}
		for _, x := range t.Increment {
			if x.Limit > 0 && x.Then != nil {
				byTarget[x.Then.Index] = append(byTarget[x.Then.Index], t)
				to += float64(len(x.Then.Name)+len(x.Name)) + 20
				label += events + conds + roles + 18 + float64(len(x.Name))
			}
		}

		out.code += code
		// Each source adds its label to an edge (a new line or a <br> on an existing one);
		// a choice adds a node and an edge per candidate for each source.
		out.mermaid += from * perSource * (label + 4)
		out.dot += from * (label + 2)
		if choiceEdges > 0 {
			node := 30 + (choiceEdges+1)*(14+2*c.stateDigits) + conds
			out.mermaid += from * node
			out.dot += from * (node + 120)
		}
		// Markdown: a row per (source, event).
		row := 22 + 3*columns + c.stateName + c.eventName + to + 1.2*(conds+roles+actions+counters) + float64(len(t.Doc))
		if len(m.Roles) > 0 && len(t.Roles) == 0 {
			row += 3 // "any"
		}
		out.markdown += cells*row + on*(fromName-from*c.stateName)

		// Tests: the cases besides one per pair: every outcome of the guards that decide
		// it, roles allowed and denied, history with nothing remembered, required fields.
		rows := 0.0
		switch {
		case guards == 0:
		case guards <= 3:
			rows += float64(int(1)<<int(guards)) - 1
		default:
			rows += guards + 1
		}
		if guards > 0 && !hook {
			rows++
		}
		if len(t.Roles) > 0 {
			rows += float64(len(m.Roles))
		}
		if t.Target.Kind == ir.History {
			rows++
		}
		if t.Target.Kind == ir.Fixed && len(t.Target.State.Requires) > 0 {
			rows++
		}
		out.tests += cells * (rows*(c.testCase()+15+conds) + (1+rows)*calls)
		// Each case of a transition tried after others on the same (state, event) sets
		// their guards so that they do not hold.
		out.tests += float64(earlier[ti]) * max(rows, 1) * 19
	}

	// Distinct edges to fixed and limit targets: the first label of an edge costs its line,
	// the others a separator.
	for x, ts := range byTarget {
		for _, t := range ts {
			for _, s := range t.From {
				if !counted(s, x+1) {
					edges++
				}
			}
		}
	}
	edges += selfLoops
	// A history target is, in Mermaid, an edge from each source to each state the
	// remembering state may go back to; in DOT an edge from each source to its history
	// node, and one from that node to each of those states. Counted, not listed: that
	// could be states × states for one transition.
	mermaidEdges, dotEdges := edges, edges
	for h, ts := range byHistory {
		sources := 0.0
		for _, t := range ts {
			for _, s := range t.From {
				if !counted(s, -2-h) {
					sources++
				}
			}
		}
		if sources > 0 {
			k := float64(len(m.States[h].HistoryFrom))
			mermaidEdges += sources * k
			dotEdges += sources + k
		}
	}
	out.mermaid += mermaidEdges * (12 + 2*c.stateDigits)
	out.dot += dotEdges * (18 + 2*c.stateDigits)
	// The Markdown embeds the Mermaid diagram and lists each state's next states.
	out.markdown += out.mermaid + edges*(c.stateName+4)
	return out
}

// earlierGuards counts, for each transition, the guards of the transitions tried before it
// on the same (state, event) pairs, summed over its pairs. Transitions are taken per event
// (a counting sort, no list per pair), with a running count per state: time linear in the
// expanded transitions, memory in the states and transitions.
func earlierGuards(m *ir.Machine) []int64 {
	out := make([]int64, len(m.Transitions))
	start := make([]int32, len(m.Events)+1)
	for _, t := range m.Transitions {
		for _, e := range t.Events {
			start[e.Index+1]++
		}
	}
	for i := range m.Events {
		start[i+1] += start[i]
	}
	order := make([]int32, start[len(m.Events)])
	next := append([]int32(nil), start[:len(m.Events)]...)
	for i, t := range m.Transitions {
		for _, e := range t.Events {
			order[next[e.Index]] = int32(i)
			next[e.Index]++
		}
	}
	acc := make([]int32, len(m.States))
	for e := range m.Events {
		ts := order[start[e]:start[e+1]]
		if len(ts) < 2 {
			continue
		}
		for _, i := range ts {
			t := m.Transitions[i]
			guards := int32(len(t.Conds))
			for _, ch := range t.Choices {
				guards += int32(len(ch.Conds))
			}
			for _, s := range t.From {
				out[i] += int64(acc[s.Index])
				acc[s.Index] += guards
			}
		}
		for _, i := range ts {
			for _, s := range m.Transitions[i].From {
				acc[s.Index] = 0
			}
		}
	}
	return out
}

// testCase is the size of one case of the tests' table: its name, the pair, the state it
// ends in (and why, when refused), in the table of cases and in that of anonymous firings.
func (c *counts) testCase() float64 {
	return 100 + c.stateName + c.eventName + 3*c.stateGo + c.eventGo + c.stateDigits
}

// estimate sizes each output of m.
func estimate(m *ir.Machine) (sizes, *counts) {
	c, out := count(m)
	// The tables of the code and the tests have a cell per (state, event) pair.
	out.code += c.pairs * (c.stateDigits + 2)
	out.tests += c.pairs * c.testCase()
	if m.Chart != nil {
		out.mermaid, out.markdown, out.dot = chartDiagrams(m.Chart)
		out.markdown += declarations(m)
		// The tests' walks from the start: at most 6 × 40 steps, each an event, the
		// configuration after it and the hooks run.
		out.tests += 2500 + 240*(30+c.eventGo+c.stateGo)
		// The history values, each the paths of the states it restores; the node names.
		for _, vals := range m.Chart.Values {
			for _, v := range vals {
				out.code += float64(len(ir.ConfigName(v))) + 4
			}
		}
		for _, n := range m.Chart.Nodes[1:] {
			out.code += 3*float64(len(n.Path)) + 80
		}
	}
	return out, c
}

// chartDiagrams sizes a statechart's diagrams and document, which draw its tree of states
// and its transitions as written, not the configurations its code is compiled into: per
// state, its node (named by path, with its doc); per transition, an edge and its label.
func chartDiagrams(ch *ir.Chart) (mermaid, markdown, dot float64) {
	mermaid, markdown, dot = 100, 1200, 600
	for _, n := range ch.Nodes[1:] {
		p, d := float64(len(n.Path)), float64(len(n.Doc))
		mermaid += 30 + 1.5*p
		markdown += 60 + 3*p + 1.1*d
		dot += 70 + 3*p + d
	}
	for _, t := range ch.Transitions {
		label := float64(len(t.Source.Path) + len(t.EventName()) + len(t.Doc))
		if t.Target != nil {
			label += float64(len(t.Target.Path))
		}
		for _, a := range t.Actions {
			label += float64(len(a.Name) + 2)
		}
		for _, c := range t.Conds {
			label += float64(len(c.Guard.Name) + 2)
		}
		mermaid += 10 + 1.5*label
		markdown += 40 + 2*label
		dot += 20 + 1.5*label
	}
	return mermaid, markdown, dot
}

// declarations sizes the tables of a statechart's document that a flat machine's has too:
// context fields, events and their payloads, guards, actions, checkpoints.
func declarations(m *ir.Machine) float64 {
	var out float64
	field := func(f *ir.Field) { out += 50 + 1.1*float64(len(f.Name)+len(f.Doc)) }
	for _, f := range m.Fields {
		field(f)
	}
	for _, e := range m.Events {
		out += 20 + 1.1*float64(len(e.Name)+len(e.Doc))
		for _, f := range e.Payload {
			field(f)
		}
	}
	for _, g := range m.Guards {
		out += 60 + 1.1*float64(len(g.Name)+len(g.Doc))
	}
	for _, a := range m.Actions {
		out += 30 + 1.1*float64(len(a.Name)+len(a.Doc))
	}
	for _, c := range m.Checkpoints {
		out += 40 + 1.1*float64(len(c.Name)+len(c.Doc))
		for _, x := range c.Save {
			out += float64(len(x)) + 4
		}
	}
	return out
}
