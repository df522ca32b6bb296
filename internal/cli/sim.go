package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/fsmgen/fsmgen/internal/diag"
	"github.com/fsmgen/fsmgen/internal/interp"
	"github.com/fsmgen/fsmgen/internal/ir"
	"github.com/fsmgen/fsmgen/internal/names"
)

// SimResult is the JSON shape of `fsmgen sim --json` (documented in docs/spec.md).
type SimResult struct {
	Machine  string         `json:"machine"`
	Initial  string         `json:"initial"`
	Steps    []SimStep      `json:"steps"`
	Final    string         `json:"final"`
	Counters map[string]any `json:"counters,omitempty"`
	Rejected *SimRejection  `json:"rejected,omitempty"`
	// A statechart's configuration once started (entry actions, eventless transitions and
	// done events run), and the actions starting ran.
	Configuration []string `json:"configuration,omitempty"`
	Done          *bool    `json:"done,omitempty"`
	StartActions  []string `json:"startActions,omitempty"`
}

// SimStep is one accepted event.
type SimStep struct {
	Index int    `json:"index"`
	Event string `json:"event"`
	From  string `json:"from"`
	To    string `json:"to"`
	Line  int    `json:"line"`
	// Wrote holds the context fields the machine itself wrote: a tripped limit's summary.
	Wrote map[string]string `json:"wrote,omitempty"`
	// Limit says, when a counter's limit redirected the transition, which and from where:
	// "retries reached its limit of 3: pending -> processing went to cancelled instead".
	Limit string `json:"limit,omitempty"`
	// In a statechart: the active atomic states after the step (their paths, sorted),
	// whether the machine is done, and the actions the step ran, in order.
	Configuration []string `json:"configuration,omitempty"`
	Done          *bool    `json:"done,omitempty"`
	Actions       []string `json:"actions,omitempty"`
}

// SimRejection is the refused event that ended the run.
type SimRejection struct {
	Index              int                 `json:"index"`
	Event              string              `json:"event"`
	State              string              `json:"state"`
	Reason             string              `json:"reason"`
	Message            string              `json:"message"`
	Errors             []interp.FieldError `json:"errors,omitempty"`
	AllowedTransitions []string            `json:"allowedTransitions"`
	// Actions are, for action_failed, the actions run, the failed one last.
	Actions []string `json:"actions,omitempty"`
}

var guardFlagRE = regexp.MustCompile(`^(.*?)(?:@(\d+))?=(true|false)$`)

func (c *command) sim(args []string) int {
	fs := c.flags("sim")
	var guards, policies, sets, fails listFlag
	fs.Var(&guards, "guard", "hook guard value `g=true|false`, or g@INDEX=... for one step (repeatable)")
	fs.Var(&fails, "fail", "make `action`, one marked may_fail, fail whenever it runs (repeatable)")
	fs.Var(&policies, "policy", "turn a policy `name` on (repeatable)")
	fs.Var(&sets, "set", "context field value `field=JSON` (repeatable)")
	as := fs.String("as", "", "`role` that fires the events")
	asJSON := fs.Bool("json", false, "print the result as JSON")
	// --events a,b,c splits on commas and --event NAME does not; both keep their order
	// among each other, so they are taken out before the flag set sees the rest. The flag
	// set declares them for the help, and for the error of one given without a value.
	fs.String("events", "", "comma-separated `events` to fire in order (none: print the initial state)")
	fs.String("event", "", "one `event` to fire, which may contain a comma (repeatable, in order with --events)")
	var order []string
	files, err := parse(fs, rewriteEventFlags(args, &order))
	if err != nil {
		return ExitUsage
	}
	if len(files) != 1 {
		return c.usageErr("sim needs exactly one spec file")
	}
	m, ds, err := loadFile(files[0])
	if err != nil {
		return c.usageErr("%v", unwrapPath(err))
	}
	if ds.HasErrors() {
		diag.Write(c.stderr, ds, diag.FormatText)
		return ExitUsage
	}
	in, perStep, err := simInputs(m, guards, policies, sets, *as)
	if err == nil {
		in.Fail, err = simFails(m, fails)
	}
	if err != nil {
		return c.usageErr("%v", err)
	}
	res := runSim(m, order, in, perStep)
	if *asJSON {
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetIndent("", "  ")
		_ = enc.Encode(res)
		c.stdout.Write(escapeUnsafeJSON(b.Bytes()))
	} else {
		writeSimText(c.stdout, res)
	}
	if res.Rejected != nil {
		return ExitFindings
	}
	return ExitOK
}

// rewriteEventFlags pulls --events/--event out of args into order (splitting --events on
// commas), leaving the rest for the flag set.
func rewriteEventFlags(args []string, order *[]string) []string {
	var rest []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		name, val, hasVal := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if !strings.HasPrefix(a, "-") || (name != "events" && name != "event") {
			rest = append(rest, a)
			continue
		}
		if !hasVal {
			if i+1 >= len(args) {
				rest = append(rest, a)
				continue
			}
			i++
			val = args[i]
		}
		if name == "event" {
			*order = append(*order, val)
			continue
		}
		for _, e := range strings.Split(val, ",") {
			if e = strings.TrimSpace(e); e != "" {
				*order = append(*order, e)
			}
		}
	}
	return rest
}

// simFails is what --fail says: the actions that fail, each one marked may_fail.
func simFails(m *ir.Machine, fails []string) (func(*ir.Action) bool, error) {
	if len(fails) == 0 {
		return nil, nil
	}
	failing := map[*ir.Action]bool{}
	var mayFail []string
	for _, a := range m.Actions {
		if a.MayFail {
			mayFail = append(mayFail, a.Name)
		}
	}
	for _, name := range fails {
		i := slices.IndexFunc(m.Actions, func(a *ir.Action) bool { return a.Name == name })
		switch {
		case i < 0:
			return nil, fmt.Errorf("--fail: no action %q%s", name, names.DidYouMean(name, mayFail))
		case !m.Actions[i].MayFail:
			return nil, fmt.Errorf("--fail: action %q cannot fail: mark it may_fail", name)
		}
		failing[m.Actions[i]] = true
	}
	return func(a *ir.Action) bool { return failing[a] }, nil
}

type stepGuard struct {
	step  int
	guard *ir.Guard
	value bool
}

func simInputs(m *ir.Machine, guards, policies, sets []string, as string) (interp.Inputs, []stepGuard, error) {
	var in interp.Inputs
	var perStep []stepGuard
	hooks := map[string]*ir.Guard{}
	var hookNames []string
	for _, g := range m.Guards {
		if g.Kind == ir.Hook {
			hooks[g.Name] = g
			hookNames = append(hookNames, g.Name)
		}
	}
	base := make([]bool, len(m.Guards))
	for _, s := range guards {
		sub := guardFlagRE.FindStringSubmatch(s)
		if sub == nil {
			return in, nil, fmt.Errorf("--guard %q: want NAME=true|false or NAME@INDEX=true|false", s)
		}
		g := hooks[sub[1]]
		if g == nil {
			if x := logicNamed(m, sub[1]); x != nil {
				return in, nil, fmt.Errorf("--guard %q: guard %q is an expression (%s): set the hook guards it asks", s, sub[1], x.Expr)
			}
			return in, nil, fmt.Errorf("--guard %q: no hook guard %q%s", s, sub[1], names.DidYouMean(sub[1], hookNames))
		}
		v := sub[3] == "true"
		if sub[2] != "" {
			i, _ := strconv.Atoi(sub[2])
			perStep = append(perStep, stepGuard{step: i, guard: g, value: v})
			continue
		}
		base[g.Index] = v
	}
	in.Guard = func(g *ir.Guard) bool { return base[g.Index] }

	in.Policies = make([]bool, len(m.Policies))
	var policyNames []string
	for _, p := range m.Policies {
		in.Policies[p.Index] = p.Default
		policyNames = append(policyNames, p.Name)
	}
	for _, name := range policies {
		p := findPolicy(m, name)
		if p == nil {
			return in, nil, fmt.Errorf("--policy: no policy %q%s", name, names.DidYouMean(name, policyNames))
		}
		in.Policies[p.Index] = true
	}

	if as != "" {
		var roleNames []string
		for _, r := range m.Roles {
			roleNames = append(roleNames, r.Name)
			if r.Name == as {
				in.Role = r
			}
		}
		if in.Role == nil {
			return in, nil, fmt.Errorf("--as: no role %q%s", as, names.DidYouMean(as, roleNames))
		}
	}

	in.Context = make([]any, len(m.Fields))
	var fieldNames []string
	for _, f := range m.Fields {
		fieldNames = append(fieldNames, f.Name)
	}
	for _, s := range sets {
		name, raw, ok := strings.Cut(s, "=")
		if !ok {
			return in, nil, fmt.Errorf("--set %q: want FIELD=JSON", s)
		}
		var f *ir.Field
		for _, x := range m.Fields {
			if x.Name == name {
				f = x
			}
		}
		if f == nil {
			return in, nil, fmt.Errorf("--set: no context field %q%s", name, names.DidYouMean(name, fieldNames))
		}
		v, err := decodeValue(raw)
		if err != nil {
			return in, nil, fmt.Errorf("--set %s: %v", name, err)
		}
		if err := interp.CheckValue(f, v); err != nil {
			return in, nil, fmt.Errorf("--set: %v", err)
		}
		if msg := constraintProblem(m, f, v); msg != "" {
			return in, nil, fmt.Errorf("--set %s: %s", s, msg)
		}
		in.Context[f.Index] = v
	}
	return in, perStep, nil
}

// constraintProblem says how a --set value breaks the field's bounds (min, max, above,
// below, min_items, max_items), or returns "": such constraints hold whenever the field is
// set, and every transition checks them. A zero value leaves the field unset. A field some
// state requires is left alone: its transitions refuse the value, and the refusal that
// reports it, with its {field, message} list, is what the run should show.
func constraintProblem(m *ir.Machine, f *ir.Field, v any) string {
	if m.RequiredBy(f) != nil {
		return ""
	}
	return interp.InvariantProblem(f, v)
}

// decodeValue reads a JSON value; a bare word that is not JSON is taken as a string.
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

func findPolicy(m *ir.Machine, name string) *ir.Policy {
	for _, p := range m.Policies {
		if p.Name == name {
			return p
		}
	}
	return nil
}

func runSim(m *ir.Machine, order []string, in interp.Inputs, perStep []stepGuard) *SimResult {
	x := interp.New(m)
	res := &SimResult{Machine: m.Name, Initial: m.Initial.Name, Steps: []SimStep{}}
	byName := map[string]*ir.Event{}
	var eventNames []string
	for _, e := range m.Events {
		if e.Internal {
			continue
		}
		byName[e.Name] = e
		eventNames = append(eventNames, e.Name)
	}
	base := in.Guard
	if m.Chart != nil {
		st, rej := x.Start(in)
		if rej != nil {
			res.Rejected = &SimRejection{Index: -1, State: x.State.Name, Reason: string(rej.Reason), Message: rej.Message, AllowedTransitions: []string{}, Actions: ir.ActionNames(rej.Actions)}
			res.Final = x.State.Name
			return res
		}
		res.Initial = x.State.Name
		res.StartActions = ir.ActionNames(st.Actions)
	}
	for i, name := range order {
		step := i
		in.Guard = func(g *ir.Guard) bool {
			v := base(g)
			for _, o := range perStep {
				if o.step == step && o.guard == g {
					v = o.value
				}
			}
			return v
		}
		e := byName[name]
		if e == nil {
			res.Rejected = &SimRejection{Index: i, Event: name, State: x.State.Name, Reason: "unknown_event",
				Message: fmt.Sprintf("unknown event %q%s", name, names.DidYouMean(name, eventNames))}
			res.Rejected.AllowedTransitions = ir.EventNames(x.Allowed(in))
			break
		}
		st, rej := x.Fire(e, in)
		if rej != nil {
			res.Rejected = &SimRejection{Index: i, Event: name, State: x.State.Name, Reason: string(rej.Reason), Message: rej.Message, Errors: rej.Errors, Actions: ir.ActionNames(rej.Actions)}
			res.Rejected.AllowedTransitions = ir.EventNames(x.Allowed(in))
			break
		}
		done := SimStep{Index: i, Event: name, From: st.From.Name, To: st.To.Name, Line: st.Transition.Pos.Line}
		if m.Chart != nil {
			done.Configuration, done.Done = st.To.ConfigPaths(), &st.To.Terminal
			done.Actions = ir.ActionNames(st.Actions)
		}
		if c := st.Tripped; c != nil {
			done.Limit = c.SummaryText(x.Bound(c), st.From.Name, st.Redirected.Name)
		}
		if st.Summary != "" {
			// The machine wrote the limit's summary into the context: later steps see it.
			f := st.Tripped.Summary
			in.Context[f.Index] = st.Summary
			done.Wrote = map[string]string{f.Name: st.Summary}
		}
		res.Steps = append(res.Steps, done)
	}
	res.Final = x.State.Name
	if m.Chart != nil {
		res.Configuration, res.Done = x.State.ConfigPaths(), &x.State.Terminal
	}
	if len(m.Counters) > 0 {
		res.Counters = map[string]any{}
		for _, c := range m.Counters {
			if !c.PerState {
				res.Counters[c.Name] = x.Counters[c.Index][0]
				continue
			}
			per := map[string]int{}
			for _, s := range m.States {
				if n := x.Counters[c.Index][s.Index]; n != 0 {
					per[s.Name] = n
				}
			}
			res.Counters[c.Name] = per
		}
	}
	return res
}

// writeSimText prints the result one line per step. Every line goes through escapeUnsafe:
// event names come from the command line and messages may quote --set values.
func writeSimText(w io.Writer, r *SimResult) {
	var b strings.Builder
	line := func(format string, args ...any) {
		b.WriteString(escapeUnsafe(fmt.Sprintf(format, args...)))
		b.WriteByte('\n')
	}
	line("start: %s", r.Initial)
	for _, s := range r.Steps {
		line("%d: %s: %s -> %s", s.Index, s.Event, s.From, s.To)
		if s.Limit != "" && !slices.Contains(slices.Collect(maps.Values(s.Wrote)), s.Limit) {
			line("   %s", s.Limit) // unless the summary written below says it
		}
		for _, f := range slices.Sorted(maps.Keys(s.Wrote)) {
			line("   %s = %q", f, s.Wrote[f])
		}
	}
	if rj := r.Rejected; rj != nil {
		line("%d: %s: refused in %s (%s): %s", rj.Index, rj.Event, rj.State, rj.Reason, rj.Message)
		for _, e := range rj.Errors {
			line("   %s: %s", e.Field, e.Message)
		}
		allowed := strings.Join(rj.AllowedTransitions, ", ")
		if allowed == "" {
			allowed = "(none)"
		}
		line("   allowed: %s", allowed)
	}
	line("final: %s", r.Final)
	for _, k := range slices.Sorted(maps.Keys(r.Counters)) {
		v, _ := json.Marshal(r.Counters[k])
		line("counter %s: %s", k, v)
	}
	io.WriteString(w, b.String())
}

// escapeUnsafeJSON writes the unsafe runes that encoding/json leaves as they are (DEL, C1
// controls, bidi and zero-width characters) as \u escapes. In the encoder's output such a
// rune can only be inside a string, where the escape reads back as the same rune.
func escapeUnsafeJSON(data []byte) []byte {
	var out []byte
	last := 0
	for i := 0; i < len(data); {
		r, size := utf8.DecodeRune(data[i:])
		if r < 0x7f || !unsafeRune(r) {
			i += size
			continue
		}
		out = append(out, data[last:i]...)
		if r > 0xFFFF {
			r1, r2 := utf16.EncodeRune(r)
			out = fmt.Appendf(out, `\u%04x\u%04x`, r1, r2)
		} else {
			out = fmt.Appendf(out, `\u%04x`, r)
		}
		i += size
		last = i
	}
	if out == nil {
		return data
	}
	return append(out, data[last:]...)
}
