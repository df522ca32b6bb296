package preview

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/fsmgen/fsmgen/internal/interp"
	"github.com/fsmgen/fsmgen/internal/ir"
	"github.com/fsmgen/fsmgen/internal/mermaid"
	"github.com/fsmgen/fsmgen/internal/names"
)

// Session is one simulation as the page keeps it: the settings that hold for the whole
// run, as the flags of `fsmgen sim` do, and the events tried in order. The server keeps no
// session: the page sends its session with each request, and the server runs it from the
// start through the reference interpreter (package interp), as `fsmgen sim` does.
type Session struct {
	// Role fires every event ("" for none): sim's --as.
	Role string `json:"role"`
	// Policies are the policies turned on (sim's --policy); the others keep their default
	// (sim cannot turn off a policy that is on by default, so neither can the page).
	Policies []string `json:"policies"`
	// Set are context values as sim's --set takes them (FIELD=JSON, or a bare word for a
	// string), by field name.
	Set []Setting `json:"set"`
	// Fail are the actions marked may_fail that fail whenever they run (sim's --fail).
	Fail []string `json:"fail"`
	// Guards are the hook guards that hold when the session starts (the others are false):
	// a statechart's start runs with them, and the replay command's --guard g=true.
	Guards []string `json:"guards"`
	// Now are the hook guards that hold for the next event (the page's toggles): the events
	// permitted now are those they permit.
	Now []string `json:"now"`
	// Steps are the events tried, in order, each with what it was tried with.
	Steps []Try `json:"steps"`
}

// Setting is one context field's value, written as sim's --set takes it.
type Setting struct {
	Field string `json:"field"`
	Value string `json:"value"`
}

// Try is one event tried: its name, the hook guards that held then, and its payload
// (field values written as --set takes them; payloads are checked as the generated code
// checks them, which sim does not).
type Try struct {
	Event   string    `json:"event"`
	Guards  []string  `json:"guards"`
	Payload []Setting `json:"payload,omitempty"`
	// Refused says the event was refused when it was tried (the server marks it): run
	// again, it is never fired.
	Refused bool `json:"refused,omitempty"`
}

// Run is the outcome of a session: what the page shows.
type Run struct {
	Session Session  `json:"session"` // the session as run: what the spec no longer knows is dropped
	Notes   []string `json:"notes"`   // what was dropped from the session, and why
	// InputError is set when the last step's payload (or a setting) could not be read; the
	// step is then left out of Session.
	InputError string  `json:"inputError,omitempty"`
	Start      *Entry  `json:"start,omitempty"` // a statechart's start: its actions, or its refusal
	Log        []Entry `json:"log"`
	State      string  `json:"state"`
	// Active are the diagram identifiers of the active states (a statechart's active
	// atomic states), Within those of the compound states around them.
	Active   []string       `json:"active"`
	Within   []string       `json:"within"`
	Config   []string       `json:"configuration,omitempty"`
	Done     bool           `json:"done"`
	Allowed  []string       `json:"allowed"` // the events permitted now, in event order
	Refused  []string       `json:"refused"` // the other events a program may fire
	Counters map[string]any `json:"counters,omitempty"`
	// Command is the fsmgen sim command that replays the session, for a shell; Args are its
	// arguments after "fsmgen".
	Command string   `json:"command"`
	Args    []string `json:"args"`
	// Unreplayable says what of the session the command cannot say (empty: it replays all).
	Unreplayable []string `json:"unreplayable"`
	// Diagram is, for a machine too big for Mermaid to lay out at once (Machine.Big), the
	// part of its diagram around the active state (Local).
	Diagram string `json:"diagram,omitempty"`
}

// Entry is one line of the log: an event accepted or refused.
type Entry struct {
	Index    int    `json:"index"` // the step's index in the session
	Event    string `json:"event"`
	Accepted bool   `json:"accepted"`
	// Skipped: the event was refused when tried, and would now be accepted; it is not
	// fired (Try.Refused).
	Skipped bool              `json:"skipped,omitempty"`
	From    string            `json:"from,omitempty"`
	To      string            `json:"to,omitempty"`
	Line    int               `json:"line,omitempty"` // of the transition taken
	Limit   string            `json:"limit,omitempty"`
	Wrote   map[string]string `json:"wrote,omitempty"`
	Config  []string          `json:"configuration,omitempty"`
	Actions []string          `json:"actions,omitempty"`
	Refusal *Refusal          `json:"refusal,omitempty"`
}

// Refusal is why an event was refused, in the interpreter's words (those sim prints).
type Refusal struct {
	State   string              `json:"state"`
	Reason  string              `json:"reason"`
	Message string              `json:"message"`
	Errors  []interp.FieldError `json:"errors,omitempty"`
	Allowed []string            `json:"allowed"`
	Actions []string            `json:"actions,omitempty"`
}

// maxSteps bounds a session, so that a request cannot make the server run without end.
const maxSteps = 10000

// inputs is a session's settings read against a machine.
type inputs struct {
	in     interp.Inputs
	base   []bool // hook guard values at the start, by guard index
	notes  []string
	hooks  map[string]*ir.Guard
	events map[string]*ir.Event
}

// Simulate runs session s through machine m from its initial state, as `fsmgen sim` runs
// its flags, and returns what the page shows. spec is the spec's path as the replay
// command names it. Names the machine does not declare (after an edit of the spec) are
// dropped from the session with a note; an event it does not declare is refused, as sim
// refuses it.
func Simulate(m *ir.Machine, spec string, s Session) *Run {
	r := &Run{Log: []Entry{}, Notes: []string{}, Unreplayable: []string{}}
	if len(s.Steps) > maxSteps {
		r.Notes = append(r.Notes, fmt.Sprintf("the session had %d steps: the first %d are kept", len(s.Steps), maxSteps))
		s.Steps = s.Steps[:maxSteps]
	}
	in, s := settle(m, s, &r.Notes)
	x := interp.New(m)
	nonInternal := []string{}
	for _, e := range m.Events {
		if !e.Internal {
			nonInternal = append(nonInternal, e.Name)
		}
	}
	base := in.base
	guardsOf := func(list []string) func(*ir.Guard) bool {
		v := make([]bool, len(m.Guards))
		for _, n := range list {
			if g := in.hooks[n]; g != nil {
				v[g.Index] = true
			}
		}
		return func(g *ir.Guard) bool { return v[g.Index] }
	}
	in.in.Guard = func(g *ir.Guard) bool { return base[g.Index] }
	started := true
	if m.Chart != nil {
		st, rej := x.Start(in.in)
		if rej != nil {
			r.Start = &Entry{Index: -1, Refusal: &Refusal{State: x.State.Name, Reason: string(rej.Reason), Message: rej.Message, Allowed: []string{}, Actions: ir.ActionNames(rej.Actions)}}
			started = false
		} else {
			r.Start = &Entry{Index: -1, Accepted: true, To: x.State.Name, Config: x.State.ConfigPaths(), Actions: ir.ActionNames(st.Actions)}
		}
	}
	// The steps the replay command fires: the accepted ones, and a refused last one.
	var replay []int
	if started {
		for i, t := range s.Steps {
			stepIn := in.in
			stepIn.Guard = guardsOf(t.Guards)
			e := in.events[t.Event]
			if e == nil {
				r.Log = append(r.Log, Entry{Index: i, Event: t.Event, Refusal: &Refusal{State: x.State.Name, Reason: "unknown_event",
					Message: fmt.Sprintf("unknown event %q%s", t.Event, names.DidYouMean(t.Event, nonInternal)), Allowed: ir.EventNames(x.Allowed(stepIn))}})
				continue
			}
			var payloadErr string
			stepIn.Payload, payloadErr = payload(e, t.Payload)
			if payloadErr != "" && i == len(s.Steps)-1 {
				// The event just tried: its payload cannot be read, so it is not tried.
				r.InputError = fmt.Sprintf("%s: %s", t.Event, payloadErr)
				s.Steps = s.Steps[:i]
				break
			}
			if payloadErr != "" {
				// Read when the session was made: a field whose type the spec changed since.
				r.Notes = append(r.Notes, fmt.Sprintf("step %d (%s): %s: its payload is left out", i, t.Event, payloadErr))
				s.Steps[i].Payload = nil
				stepIn.Payload, _ = payload(e, nil)
			}
			if t.Refused {
				// A try refused when it was made stays a try: run again after a change of
				// the settings or of the spec, it is not fired even where it would now be
				// accepted (which would rewrite what happened after it).
				if _, rej := clone(x).Fire(e, stepIn); rej == nil {
					r.Log = append(r.Log, Entry{Index: i, Event: t.Event, Skipped: true})
					continue
				}
			}
			st, rej := x.Fire(e, stepIn)
			if rej != nil {
				s.Steps[i].Refused = true
				stepIn.Payload = nil // the events sim allows, which do not check payloads
				r.Log = append(r.Log, Entry{Index: i, Event: t.Event, Refusal: &Refusal{State: x.State.Name, Reason: string(rej.Reason), Message: rej.Message,
					Errors: rej.Errors, Actions: ir.ActionNames(rej.Actions), Allowed: ir.EventNames(x.Allowed(stepIn))}})
				continue
			}
			done := Entry{Index: i, Event: t.Event, Accepted: true, From: st.From.Name, To: st.To.Name, Line: st.Transition.Pos.Line}
			if m.Chart != nil {
				done.Config, done.Actions = st.To.ConfigPaths(), ir.ActionNames(st.Actions)
			}
			if c := st.Tripped; c != nil {
				done.Limit = c.SummaryText(x.Bound(c), st.From.Name, st.Redirected.Name)
			}
			if st.Summary != "" {
				// The machine wrote the limit's summary into the context: later steps see it.
				f := st.Tripped.Summary
				in.in.Context[f.Index] = st.Summary
				done.Wrote = map[string]string{f.Name: st.Summary}
			}
			r.Log = append(r.Log, done)
			replay = append(replay, i)
		}
		if n := len(s.Steps); n > 0 && r.Log[n-1].Refusal != nil {
			replay = append(replay, n-1)
			if r.Log[n-1].Refusal.Reason == string(interp.InvalidPayload) {
				replay = replay[:len(replay)-1]
				r.Unreplayable = append(r.Unreplayable, "the last refusal, of an invalid payload: sim does not check payloads")
			}
		}
	}
	r.Session = s
	r.State = x.State.Name
	if m.Chart != nil {
		r.Config, r.Done = x.State.ConfigPaths(), x.State.Terminal
		ids := chartIDs(m)
		within := map[*ir.Node]bool{}
		for _, n := range x.State.Config {
			r.Active = append(r.Active, ids[n.Index])
			for p := n.Parent; p != nil && p.Parent != nil; p = p.Parent {
				within[p] = true
			}
		}
		for _, n := range m.Chart.Nodes {
			if within[n] {
				r.Within = append(r.Within, ids[n.Index])
			}
		}
	} else {
		r.Active, r.Done = []string{StateID(x.State)}, x.State.Terminal
		if d := mermaid.StateDiagram(m); isBig(m, d) {
			r.Diagram = Local(d, r.Active)
		}
	}
	if r.Within == nil {
		r.Within = []string{}
	}
	now := in.in
	now.Guard = guardsOf(s.Now)
	r.Allowed, r.Refused = []string{}, []string{}
	if started {
		allowed := x.Allowed(now)
		r.Allowed = ir.EventNames(allowed)
		for _, e := range m.Events {
			if !e.Internal && !slices.Contains(allowed, e) {
				r.Refused = append(r.Refused, e.Name)
			}
		}
	}
	r.Counters = counters(m, x)
	r.Args, r.Unreplayable = command(m, spec, s, replay, r.Unreplayable)
	r.Command = "fsmgen " + shellJoin(r.Args)
	return r
}

// settle reads the session's settings against m, dropping (with a note) what m does not
// declare or refuses, as sim refuses its flags.
func settle(m *ir.Machine, s Session, notes *[]string) (inputs, Session) {
	var in inputs
	note := func(format string, args ...any) { *notes = append(*notes, fmt.Sprintf(format, args...)) }
	in.hooks = map[string]*ir.Guard{}
	for _, g := range m.Guards {
		if g.Kind == ir.Hook {
			in.hooks[g.Name] = g
		}
	}
	in.events = map[string]*ir.Event{}
	for _, e := range m.Events {
		if !e.Internal {
			in.events[e.Name] = e
		}
	}
	keepGuards := func(list []string, where string) []string {
		out := []string{}
		for _, n := range list {
			switch {
			case in.hooks[n] == nil:
				note("%s: no hook guard %q: dropped", where, n)
			case !slices.Contains(out, n):
				out = append(out, n)
			}
		}
		slices.SortFunc(out, func(a, b string) int { return in.hooks[a].Index - in.hooks[b].Index })
		return out
	}
	s.Guards = keepGuards(s.Guards, "start")
	s.Now = keepGuards(s.Now, "now")
	in.base = make([]bool, len(m.Guards))
	for _, n := range s.Guards {
		in.base[in.hooks[n].Index] = true
	}
	steps := make([]Try, len(s.Steps))
	for i, t := range s.Steps {
		steps[i] = Try{Event: t.Event, Guards: keepGuards(t.Guards, fmt.Sprintf("step %d", i)), Payload: t.Payload, Refused: t.Refused}
	}
	s.Steps = steps

	if s.Role != "" {
		i := slices.IndexFunc(m.Roles, func(r *ir.Role) bool { return r.Name == s.Role })
		if i < 0 {
			note("no role %q: the events are fired without a role", s.Role)
			s.Role = ""
		} else {
			in.in.Role = m.Roles[i]
		}
	}
	in.in.Policies = make([]bool, len(m.Policies))
	for _, p := range m.Policies {
		in.in.Policies[p.Index] = p.Default
	}
	var policies []string
	for _, p := range m.Policies {
		if slices.Contains(s.Policies, p.Name) {
			in.in.Policies[p.Index] = true
			policies = append(policies, p.Name)
		}
	}
	for _, n := range s.Policies {
		if !slices.ContainsFunc(m.Policies, func(p *ir.Policy) bool { return p.Name == n }) {
			note("no policy %q: dropped", n)
		}
	}
	s.Policies = policies

	in.in.Context = make([]any, len(m.Fields))
	var set []Setting
	for _, f := range m.Fields {
		i := slices.IndexFunc(s.Set, func(x Setting) bool { return x.Field == f.Name })
		if i < 0 || s.Set[i].Value == "" {
			continue
		}
		raw := s.Set[i].Value
		if strings.Contains(f.Name, "=") {
			note("context field %q: sim's --set cannot name a field with = in its name: left unset", f.Name)
			continue
		}
		v, err := decodeValue(raw)
		if err == nil {
			err = interp.CheckValue(f, v)
		}
		if err == nil && m.RequiredBy(f) == nil {
			if msg := interp.InvariantProblem(f, v); msg != "" {
				err = fmt.Errorf("%s", msg)
			}
		}
		if err != nil {
			note("context field %s = %s: %v: left unset", f.Name, raw, err)
			continue
		}
		in.in.Context[f.Index] = v
		set = append(set, Setting{Field: f.Name, Value: raw})
	}
	for _, x := range s.Set {
		if x.Value != "" && !slices.ContainsFunc(m.Fields, func(f *ir.Field) bool { return f.Name == x.Field }) {
			note("no context field %q: dropped", x.Field)
		}
	}
	s.Set = set

	var fails []string
	for _, a := range m.Actions {
		if a.MayFail && slices.Contains(s.Fail, a.Name) {
			fails = append(fails, a.Name)
		}
	}
	for _, n := range s.Fail {
		if !slices.Contains(fails, n) {
			note("no action %q that may fail: dropped", n)
		}
	}
	s.Fail = fails
	if len(fails) > 0 {
		in.in.Fail = func(a *ir.Action) bool { return slices.Contains(fails, a.Name) }
	}
	if s.Policies == nil {
		s.Policies = []string{}
	}
	if s.Set == nil {
		s.Set = []Setting{}
	}
	if s.Fail == nil {
		s.Fail = []string{}
	}
	return in, s
}

// payload reads an event's payload values (field values as --set takes them), by the
// payload field's index; nil for an event without a payload. A value that is not JSON of
// the field's type is an error.
func payload(e *ir.Event, values []Setting) ([]any, string) {
	if len(e.Payload) == 0 {
		return nil, ""
	}
	out := make([]any, len(e.Payload))
	for _, x := range values {
		if x.Value == "" {
			continue
		}
		i := slices.IndexFunc(e.Payload, func(f *ir.Field) bool { return f.Name == x.Field })
		if i < 0 {
			return nil, fmt.Sprintf("no payload field %q", x.Field)
		}
		f := e.Payload[i]
		v, err := decodeValue(x.Value)
		if err == nil {
			err = interp.CheckValue(f, v)
		}
		if err != nil {
			return nil, fmt.Sprintf("payload field %s: %v", f.Name, err)
		}
		out[f.Index] = v
	}
	return out, ""
}

// decodeValue reads a value as sim's --set does: JSON, or a bare word that is not JSON as
// a string.
func decodeValue(raw string) (any, error) {
	dec := json.NewDecoder(strings.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil || dec.More() {
		if strings.ContainsAny(raw, "[]{}\"") {
			return nil, fmt.Errorf("invalid JSON %q", raw)
		}
		return raw, nil
	}
	return v, nil
}

func counters(m *ir.Machine, x *interp.Machine) map[string]any {
	if len(m.Counters) == 0 {
		return nil
	}
	out := map[string]any{}
	for _, c := range m.Counters {
		if !c.PerState {
			out[c.Name] = x.Counters[c.Index][0]
			continue
		}
		per := map[string]int{}
		for _, s := range m.States {
			if n := x.Counters[c.Index][s.Index]; n != 0 {
				per[s.Name] = n
			}
		}
		out[c.Name] = per
	}
	return out
}

// guardFlagRE is how sim reads --guard.
var guardFlagRE = regexp.MustCompile(`^(.*?)(?:@(\d+))?=(true|false)$`)

// command returns the arguments of the fsmgen sim command that replays the steps of s
// listed in replay (indexes into s.Steps), and adds to unreplayable what it cannot say.
func command(m *ir.Machine, spec string, s Session, replay []int, unreplayable []string) ([]string, []string) {
	args := []string{"sim", spec}
	if s.Role != "" {
		args = append(args, "--as", s.Role)
	}
	for _, p := range s.Policies {
		args = append(args, "--policy", p)
	}
	for _, x := range s.Set {
		args = append(args, "--set", x.Field+"="+x.Value)
	}
	for _, a := range s.Fail {
		args = append(args, "--fail", a)
	}
	hooks := map[string]bool{}
	for _, g := range m.Guards {
		if g.Kind == ir.Hook {
			hooks[g.Name] = true
		}
	}
	// --guard NAME=V must read back as NAME: a name such as "x@1" reads as x at step 1.
	readsBack := func(flag, name string, step string) bool {
		sub := guardFlagRE.FindStringSubmatch(flag)
		return sub != nil && sub[1] == name && sub[2] == step
	}
	for _, g := range s.Guards {
		f := g + "=true"
		if !readsBack(f, g, "") {
			unreplayable = append(unreplayable, fmt.Sprintf("hook guard %q holding from the start: sim's --guard reads its name otherwise", g))
			continue
		}
		args = append(args, "--guard", f)
	}
	var events []string
	for k, i := range replay {
		t := s.Steps[i]
		events = append(events, t.Event)
		for _, g := range m.Guards {
			if g.Kind != ir.Hook {
				continue
			}
			v := slices.Contains(t.Guards, g.Name)
			if v == slices.Contains(s.Guards, g.Name) {
				continue
			}
			f := fmt.Sprintf("%s@%d=%t", g.Name, k, v)
			if !readsBack(f, g.Name, fmt.Sprint(k)) {
				unreplayable = append(unreplayable, fmt.Sprintf("hook guard %q at step %d: sim's --guard reads its name otherwise", g.Name, k))
				continue
			}
			args = append(args, "--guard", f)
		}
	}
	simple := !slices.ContainsFunc(events, func(e string) bool {
		return e == "" || strings.Contains(e, ",") || strings.TrimSpace(e) != e
	})
	switch {
	case len(events) == 0:
	case simple:
		args = append(args, "--events", strings.Join(events, ","))
	default:
		for _, e := range events {
			args = append(args, "--event", e)
		}
	}
	return args, unreplayable
}

// shellJoin quotes args for a POSIX shell: an argument of only safe characters as it is,
// any other in single quotes.
func shellJoin(args []string) string {
	var b strings.Builder
	for i, a := range args {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(shellQuote(a))
	}
	return b.String()
}

func shellQuote(a string) string {
	safe := a != ""
	for _, r := range a {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("_@%+=:,./-", r)) {
			safe = false
			break
		}
	}
	if safe {
		return a
	}
	return "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
}

// clone copies a running machine, so that an event can be tried on the copy.
func clone(x *interp.Machine) *interp.Machine {
	y := *x
	y.Counters = make([][]int, len(x.Counters))
	for i, c := range x.Counters {
		y.Counters[i] = slices.Clone(c)
	}
	y.Memory = slices.Clone(x.Memory)
	y.Limits = slices.Clone(x.Limits)
	y.Mem = slices.Clone(x.Mem)
	return &y
}
