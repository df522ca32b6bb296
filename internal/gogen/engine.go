package gogen

import (
	"fmt"
	"slices"
	"strings"

	. "github.com/dave/jennifer/jen"
	"github.com/fsmgen/fsmgen/internal/ir"
)

// role is the machine's role type: Role, or the runtime's NoRole.
func (g *gen) role() *Statement {
	if len(g.m.Roles) > 0 {
		return Id("Role")
	}
	return Qual(rt, "NoRole")
}

// extra is the type of what snapshots keep besides the engine's data: <T>Extra for a spec
// with policies or payloads, else the runtime's None.
func (g *gen) extra() *Statement {
	if g.hasExtra() {
		return Id(g.name("Extra"))
	}
	return Qual(rt, "None")
}

// hasExtra reports whether the machine keeps policies or payloads.
func (g *gen) hasExtra() bool { return len(g.m.Policies) > 0 || g.payloads() }

// payloads reports whether some event carries a payload.
func (g *gen) payloads() bool {
	for _, e := range g.m.Events {
		if len(e.Payload) > 0 {
			return true
		}
	}
	return false
}

// xtra is the machine's extra data, for the generated methods.
func xtra() *Statement { return Qual(rt, "Extra").Call(self()) }

// engineExtra emits <T>Extra, the policies and payloads a machine keeps.
func (g *gen) engineExtra(f *File) {
	if !g.hasExtra() {
		return
	}
	var fields, payloads []Code
	what := []string{}
	if len(g.m.Policies) > 0 {
		what = append(what, "its policies")
		fields = append(fields, Id("Policies").Id(g.name("Policies")).Tag(map[string]string{"json": "policies"}))
	}
	if g.payloads() {
		what = append(what, "the last payload of each event that carries one")
		for _, e := range g.m.Events {
			if len(e.Payload) > 0 {
				payloads = append(payloads, Id(payloadField(e)).Id(payloadType(e)).Tag(map[string]string{"json": e.Name + ",omitzero"}))
			}
		}
		fields = append(fields, Id("Payloads").Struct(payloads...).Tag(map[string]string{"json": "payloads"}))
	}
	f.Comment(comment(fmt.Sprintf("%s is what a %s keeps besides the engine's data, in its snapshots: %s.", g.name("Extra"), g.T, strings.Join(what, " and "))))
	f.Type().Id(g.name("Extra")).Struct(fields...)
	f.Line()
}

// core is the engine type the machine embeds.
func (g *gen) core() *Statement {
	return Qual(rt, "Machine").Types(Id("State"), Id("Event"), g.role(), Id(g.name("Context")), g.extra())
}

// self is &m.Machine, the engine of machine m, for the runtime's functions.
func self() *Statement { return Op("&").Id("m").Dot("Machine") }

// engineFile emits the machine on the engine.
func (g *gen) engineFile(f *File) {
	g.types(f)
	g.errorAliases(f)
	g.context(f)
	g.engineExtra(f)
	g.engineMachine(f)
	g.engineOps(f)
	g.thresholds(f)
	g.engineDef(f)
	g.engineStore(f)
	g.migrateAll(f)
	g.registry(f)
}

// engineMachine emits the step and input types, the hooks, the machine type, its
// constructor and the wrappers of what the spec declares.
func (g *gen) engineMachine(f *File) {
	m, T := g.m, g.T
	if g.hooks || len(m.Guards) > 0 {
		f.Comment(comment(g.name("Step") + " describes the transition being decided or run; hooks receive it by value."))
		f.Type().Id(g.name("Step")).Op("=").Qual(rt, "Step").Types(Id("State"), Id("Event"), g.role())
		f.Line()
	}
	g.hooksIface(f)
	if m.RecordHistory {
		f.Comment(comment(g.name("Record") + " is one entry of the transition history."))
		f.Type().Id(g.name("Record")).Op("=").Qual(rt, "Record").Types(Id("State"), Id("Event"))
		f.Line()
	}

	fields := []Code{g.core()}
	if g.hooks {
		fields = append(fields, Id("hooks").Id(g.name("Hooks")))
	}
	f.Comment(comment(fmt.Sprintf("%s is one %s state machine (fsmrt.Machine), not safe for concurrent use.%s", T, m.Name, docSuffix(m.Doc))) + g.apiListing())
	if len(fields) == 1 {
		f.Type().Id(T).Add(structLine(fields...))
	} else {
		f.Type().Id(T).Struct(fields...)
	}
	f.Line()

	if len(m.Fields) > 0 {
		f.Comment(comment(fmt.Sprintf("New%s returns a machine in the initial state %s, its context at the spec's\ndefaults.", T, quoted(m.Initial.Name))))
	} else {
		f.Comment(comment(fmt.Sprintf("New%s returns a machine in the initial state %s.", T, quoted(m.Initial.Name))))
	}
	var body []Code
	if g.hooks {
		body = append(body, Id("m").Op(":=").Op("&").Id(T).Values(Dict{Id("hooks"): Id("hooks")}))
	} else {
		body = append(body, Id("m").Op(":=").Op("&").Id(T).Values())
	}
	ops := Nil()
	if g.needsOps() {
		ops = Parens(Op("*").Id("ops")).Parens(Id("m"))
	}
	body = append(body, Qual(rt, "Init").Call(self(), Op("&").Id("def"), ops))
	for _, p := range m.Policies {
		if p.Default {
			body = append(body, xtra().Dot("Policies").Dot(p.GoName).Op("=").True())
		}
	}
	for _, fd := range m.Fields {
		if fd.Default.Set {
			body = append(body, Id("m").Dot("Context").Dot(fd.GoName).Op("=").Add(g.literal(fd, fd.Default)))
		}
	}
	body = append(body, Return(Id("m")))
	sig := Func().Id("New" + T).Params(g.hookParams()...).Op("*").Id(T)
	if len(body) == 3 && !g.hooks && !g.needsOps() {
		f.Add(sig.Add(inline(body...)))
	} else {
		f.Add(sig.Block(body...))
	}
	f.Line()
	recv := func() *Statement { return Func().Params(Id("m").Op("*").Id(T)) }
	for i, c := range m.Counters {
		d := fmt.Sprintf("Count%s returns the counter %s", c.GoName, quoted(c.Name))
		if c.Limit > 0 {
			d += fmt.Sprintf(" (%s %d)", c.BoundKey(), c.Bound())
		}
		if c.PerState {
			f.Comment(comment(d + " of state s."))
			f.Add(recv()).Id("Count" + c.GoName).Params(Id("s").Id("State")).Int().Block(Return(Qual(rt, "Count").Call(self(), Lit(i), Id("s"))))
		} else {
			f.Comment(comment(d + "."))
			f.Add(recv()).Id("Count" + c.GoName).Params().Int().Block(Return(Qual(rt, "Count").Call(self(), Lit(i), Lit(0))))
		}
		f.Line()
		if c.Configurable && c.Limit > 0 {
			get, set := c.LimitMethod()+c.GoName, "Set"+c.LimitMethod()+c.GoName
			f.Comment(comment(fmt.Sprintf("%s returns the %s of counter %s in force: %d unless %s changed it.", get, c.BoundKey(), quoted(c.Name), c.Bound(), set)))
			f.Add(recv()).Id(get).Params().Int().Block(Return(Qual(rt, "CounterLimit").Call(self(), Lit(i))))
			f.Line()
			f.Comment(comment(fmt.Sprintf("%s changes the %s of counter %s; it is kept in snapshots and the event log.", set, c.BoundKey(), quoted(c.Name))))
			f.Add(recv()).Id(set).Params(Id("n").Int()).Error().Block(Return(Qual(rt, "SetCounterLimit").Call(self(), Lit(i), Id("n"))))
			f.Line()
		}
	}
	wrap := func(name, doc string, params []Code, results Code, fn string, args ...Code) {
		f.Comment(comment(doc))
		f.Add(recv()).Id(name).Params(params...).Add(results).Block(Return(Qual(rt, fn).Call(append([]Code{self()}, args...)...)))
		f.Line()
	}
	if len(m.Policies) > 0 {
		f.Comment("// Policies returns the policies in force.")
		f.Add(recv()).Id("Policies").Params().Id(g.name("Policies")).Block(Return(xtra().Dot("Policies")))
		f.Line()
		f.Comment("// SetPolicies changes the policies; they are kept in snapshots and the event log.")
		f.Add(recv()).Id("SetPolicies").Params(Id("p").Id(g.name("Policies"))).Block(xtra().Dot("Policies").Op("=").Id("p"))
		f.Line()
	}
	for _, e := range m.Events {
		if len(e.Payload) == 0 {
			continue
		}
		p := payloadType(e)
		f.Comment(comment(fmt.Sprintf("%s returns the payload of the last %s event fired (hooks see the current one).", p, quoted(e.Name))))
		f.Add(recv()).Id(p).Params().Id(p).Block(Return(xtra().Dot("Payloads").Dot(payloadField(e))))
		f.Line()
		f.Comment(comment(fmt.Sprintf("Fire%s fires %s with its payload, which is validated as soon as the state is known to\naccept the event: an invalid payload is refused with a ValidationError (Payload set) and\nchanges nothing. Fire and FireWith fire it with a zero payload.", e.GoName, quoted(e.Name))))
		f.Add(recv()).Id("Fire"+e.GoName).Params(ctxParam(), Id("p").Id(p), g.in()).Params(Id("State"), Error()).Block(
			Id("x").Op(":=").Add(xtra()),
			Id("prev").Op(":=").Op("*").Id("x"),
			Id("x").Dot("Payloads").Dot(payloadField(e)).Op("=").Id("p"),
			Return(Qual(rt, "FirePayload").Call(Id("ctx"), self(), Id("Event"+e.GoName), Id("in"), Id("prev"))),
		)
		f.Line()
	}
	now := Id("now").Qual("time", "Time")
	if g.remembers {
		wrap("Remembered", "Remembered returns the state a remembering state s was last entered from.", []Code{Id("s").Id("State")}, Params(Id("State"), Bool()), "Remembered", Id("s"))
	}
	if m.RecordHistory {
		wrap("History", "History returns the last records of the transition history, oldest first: the last\nSetHistoryWindow (fsmrt.DefaultWindow unless set). The store's event log has them all.", nil, Index().Id(g.name("Record")), "History")
		f.Comment("// SetHistoryWindow sets how many history records the machine keeps in memory.")
		f.Add(recv()).Id("SetHistoryWindow").Params(Id("n").Int()).Block(Qual(rt, "SetHistoryWindow").Call(self(), Id("n")))
		f.Line()
	}
	if m.Idempotent {
		f.Comment("// SetKeyWindow sets how many idempotency keys the machine keeps in memory; a key it has\n// forgotten is looked up in its store (FindKey).")
		f.Add(recv()).Id("SetKeyWindow").Params(Id("n").Int()).Block(Qual(rt, "SetKeyWindow").Call(self(), Id("n")))
		f.Line()
	}
	if !g.timing {
		return
	}
	f.Comment("// Clock tells the time; set a fake one with SetClock in tests, or pass Input.At.")
	f.Type().Id("Clock").Op("=").Qual(rt, "Clock")
	f.Line()
	f.Comment("// SetClock replaces the machine's clock: a new machine's times restart at its time, a\n// loaded one keeps them and reads it from then on (fsmrt.SetClock).")
	f.Add(recv()).Id("SetClock").Params(Id("c").Id("Clock")).Block(Qual(rt, "SetClock").Call(self(), Id("c")))
	f.Line()
	wrap("CreatedAt", "CreatedAt returns when the machine was created.", nil, Qual("time", "Time"), "CreatedAt")
	wrap("EnteredAt", "EnteredAt returns when the current state was entered.", nil, Qual("time", "Time"), "EnteredAt")
	f.Comment("// TimeInState returns how long the machine has been in its state at now.")
	f.Add(recv()).Id("TimeInState").Params(now).Qual("time", "Duration").Block(Return(Id("now").Dot("Sub").Call(Qual(rt, "EnteredAt").Call(self()))))
	f.Line()
	f.Comment("// TotalTime returns how long the machine has existed at now.")
	f.Add(recv()).Id("TotalTime").Params(now).Qual("time", "Duration").Block(Return(Id("now").Dot("Sub").Call(Qual(rt, "CreatedAt").Call(self()))))
	f.Line()
	f.Comment("// TimeByState returns the time spent in each state at now, the current stay included.")
	f.Add(recv()).Id("TimeByState").Params(now).Params(Id("t").Index(Id("NumStates")).Qual("time", "Duration")).Block(
		Copy(Id("t").Index(Empty(), Empty()), Qual(rt, "TimeByState").Call(self(), Id("now"))),
		Return(),
	)
	f.Line()
	if !g.timeouts {
		g.expireNext(f)
		return
	}
	wrap("Timeout", "Timeout returns the timeout of state s in force (0: none).", []Code{Id("s").Id("State")}, Qual("time", "Duration"), "Timeout", Id("s"))
	shared := m.SharesClocks()
	for _, s := range m.States {
		if s.Timeout != nil && s.Timeout.Configurable {
			doc := "SetTimeout changes the timeout of a state the spec marks configurable."
			if shared {
				doc += "\nA state's timeout is set in every configuration it is active in."
			}
			wrap("SetTimeout", doc, []Code{Id("s").Id("State"), Id("d").Qual("time", "Duration")}, Error(), "SetTimeout", Id("s"), Id("d"))
			break
		}
	}
	if shared {
		wrap("TimeoutSince", "TimeoutSince returns when the timeout of the current configuration started counting:\nwhen the state whose timeout it is was entered, before the configuration maybe.", nil, Qual("time", "Time"), "TimeoutSince")
	}
	f.Comment("// TimeoutLevel returns the highest timeout level the current state has reached at now,\n// or LevelNone. Levels are reported, never enforced.")
	f.Add(recv()).Id("TimeoutLevel").Params(now).Id("TimeoutLevel").Block(Return(Id("TimeoutLevel").Call(Qual(rt, "TimeoutLevel").Call(self(), Id("now")))))
	f.Line()
	var expiring []Code
	for _, s := range m.States {
		if s.Timeout != nil && s.Timeout.OnExpiry != nil {
			expiring = append(expiring, Case(Id("State"+s.GoName)).Block(Id("e").Op("=").Id("Event"+s.Timeout.OnExpiry.GoName)))
		}
	}
	if !g.expireNext(f) && len(expiring) > 0 {
		f.Comment("// Expire fires the state's on_expiry event when its timeout has passed at now, once a\n// stay (fsmrt.Expire), and reports whether it did. Only states with on_expiry expire;\n// other timeouts are reports.")
		f.Add(recv()).Id("Expire").Params(ctxParam(), now).Params(Bool(), Id("State"), Error()).BlockFunc(func(b *Group) {
			b.Var().Id("e").Id("Event")
			b.Switch(Id("m").Dot("State").Call()).Block(append(expiring, Default().Block(Return(False(), Id("m").Dot("State").Call(), Nil())))...)
			b.Return(Qual(rt, "Expire").Call(Id("ctx"), self(), Id("e"), Id("now")))
		})
		f.Line()
	}
}

// needsOps reports whether the engine calls back into the package (see engineOps).
func (g *gen) needsOps() bool {
	return len(g.m.Guards) > 0 || len(g.m.Actions) > 0 || g.requires() || g.invariants() || len(g.m.Checkpoints) > 0 || g.hasExtra()
}

// requires reports whether some state requires context fields (in a statechart, whether
// some microstep enters one that does).
func (g *gen) requires() bool {
	for _, s := range g.m.States {
		if len(s.Requires) > 0 {
			return true
		}
	}
	for _, t := range g.m.Transitions {
		if len(t.Requires) > 0 {
			return true
		}
	}
	return false
}

// engineOps emits ops, the machine as the engine's callbacks: guards, actions, required
// fields, summaries and checkpoints, each a switch over the spec's own.
func (g *gen) engineOps(f *File) {
	if !g.needsOps() {
		return
	}
	m, T := g.m, g.T
	f.Comment(comment("ops is " + T + " as the engine calls it back (fsmrt.Guards, fsmrt.Actions, ...): each method\nis a switch over the spec's guards, actions, states or checkpoints, by index."))
	f.Type().Id("ops").Id(T)
	f.Line()
	recv := func() *Statement { return Func().Params(Id("m").Op("*").Id("ops")) }
	typed := Parens(Op("*").Id(T)).Parens(Id("m")) // the machine as the hooks see it
	if len(m.Guards) > 0 {
		f.Add(recv()).Id("Guard").Params(ctxParam(), Id("g").Int(), Id("st").Id(g.name("Step"))).Bool().BlockFunc(func(b *Group) {
			// The last guard is the default: the engine asks only for the spec's guards.
			var cases []Code
			for i, gu := range m.Guards {
				c := Case(Lit(i))
				if i == len(m.Guards)-1 {
					c = Default()
				}
				cases = append(cases, c.Block(Return(g.engineGuard(gu, typed))))
			}
			b.Switch(Id("g")).Block(cases...)
		})
		f.Line()
	}
	if slices.ContainsFunc(m.Actions, func(a *ir.Action) bool { return !a.Effect }) {
		f.Add(recv()).Id("Act").Params(ctxParam(), Id("a").Int(), Id("st").Id(g.name("Step"))).Error().BlockFunc(func(b *Group) {
			var cases []Code
			for i, a := range m.Actions {
				call := Id("m").Dot("hooks").Dot(a.GoName).Call(Id("ctx"), typed, Id("st"))
				switch {
				case a.Effect:
				case a.MayFail:
					cases = append(cases, Case(Lit(i)).Block(Return(call)))
				default:
					cases = append(cases, Case(Lit(i)).Block(call))
				}
			}
			b.Switch(Id("a")).Block(cases...)
			b.Return(Nil())
		})
		f.Line()
	}
	if g.effects() {
		// The last effect is the default: the engine calls only the spec's effects.
		f.Add(recv()).Id("Effect").Params(ctxParam(), Id("a").Int(), Id("e").Op("*").Id(g.name("Effect"))).Error().BlockFunc(func(b *Group) {
			var effects []*ir.Action
			for _, a := range m.Actions {
				if a.Effect {
					effects = append(effects, a)
				}
			}
			var cases []Code
			for i, a := range effects {
				c := Case(Lit(a.Index))
				if i == len(effects)-1 {
					c = Default()
				}
				cases = append(cases, c.Block(Return(Id("m").Dot("hooks").Dot(a.GoName).Call(Id("ctx"), Op("*").Id("e")))))
			}
			b.Switch(Id("a")).Block(cases...)
		})
		f.Line()
	}
	if g.requires() && m.Chart != nil {
		f.Add(recv()).Id("RequireOn").Params(Id("t").Int32(), Id("c").Op("*").Id(g.name("Context"))).Index().Id("FieldError").Block(
			Return(Id("c").Dot("requirements").Call(Id("t"), Nil())))
		f.Line()
	} else if g.requires() {
		f.Add(recv()).Id("Require").Params(Id("s").Id("State"), Id("c").Op("*").Id(g.name("Context"))).Index().Id("FieldError").Block(
			Return(Id("c").Dot("requirements").Call(Id("s"), Nil())))
		f.Line()
		f.Add(recv()).Id("SetField").Params(Id("c").Op("*").Id(g.name("Context")), Id("f").Int(), Id("text").String()).BlockFunc(func(b *Group) {
			var cases []Code
			for i, fd := range m.Fields {
				if g.summaryField(fd) {
					cases = append(cases, Case(Lit(i)).Block(Id("c").Dot(fd.GoName).Op("=").Id("text")))
				}
			}
			if len(cases) > 0 {
				b.Switch(Id("f")).Block(cases...)
			}
		})
		f.Line()
	}
	g.invariantOps(f)
	if len(m.Policies) > 0 {
		f.Add(recv()).Id("Policy").Params(Id("p").Int()).Bool().BlockFunc(func(b *Group) {
			var cases []Code
			for i, p := range m.Policies {
				c := Case(Lit(i))
				if i == len(m.Policies)-1 {
					c = Default() // the engine asks only for the spec's policies
				}
				cases = append(cases, c.Block(Return(xtra().Dot("Policies").Dot(p.GoName))))
			}
			b.Switch(Id("p")).Block(cases...)
		})
		f.Line()
	}
	if g.payloads() {
		f.Add(recv()).Id("Payload").Params(Id("x").Op("*").Id(g.name("Extra")), Id("e").Int(), Id("clear").Bool()).Qual(rt, "Payload").BlockFunc(func(b *Group) {
			// The last event with a payload is the default: the engine asks only for those.
			var events []*ir.Event
			for _, e := range m.Events {
				if len(e.Payload) > 0 {
					events = append(events, e)
				}
			}
			var cases []Code
			for i, e := range events {
				p := Id("x").Dot("Payloads").Dot(payloadField(e))
				c := Case(Lit(e.Index))
				if i == len(events)-1 {
					c = Default()
				}
				cases = append(cases, c.Block(
					If(Id("clear")).Block(p.Clone().Op("=").Id(payloadType(e)).Values()),
					Return(Op("&").Add(p)),
				))
			}
			b.Switch(Id("e")).Block(cases...)
		})
		f.Line()
	}
	if len(m.Policies) > 0 {
		f.Add(recv()).Id("PolicySet").Params(Id("x").Op("*").Id(g.name("Extra")), Id("clear").Bool()).Any().BlockFunc(func(b *Group) {
			b.If(Id("clear")).Block(Id("x").Dot("Policies").Op("=").Id(g.name("Policies")).Values())
			b.Return(Op("&").Id("x").Dot("Policies"))
		})
		f.Line()
	}
	if len(m.Checkpoints) > 0 {
		f.Add(recv()).Id("Checkpoint").Params(ctxParam(), Id("cp").Int(), Id("st").Id(g.name("Step"))).Error().Block(
			If(Err().Op(":=").Id("m").Dot("hooks").Dot("Checkpoint").Call(Id("ctx"), typed, Id("Checkpoint").Call(Id("cp")), Id("st")), Err().Op("!=").Nil()).Block(
				Return(Op("&").Id("CheckpointError").Values(Dict{Id("Checkpoint"): Id("Checkpoint").Call(Id("cp")), Id("Err"): Err()})),
			),
			Return(Nil()),
		)
		f.Line()
		g.checkpointError(f)
	}
}

// summaryField reports whether a tripped limit writes its summary into fd.
func (g *gen) summaryField(fd *ir.Field) bool {
	for _, c := range g.m.Counters {
		if c.Summary == fd {
			return true
		}
	}
	return false
}

// engineGuard is the condition guard gu tests, for ops.Guard.
func (g *gen) engineGuard(gu *ir.Guard, typed Code) *Statement {
	switch gu.Kind {
	case ir.CounterGuard:
		s := Lit(0)
		if gu.Counter.PerState {
			s = Id("st").Dot("From")
		}
		return g.compare(Qual(rt, "Count").Call(self(), Lit(slices.Index(g.m.Counters, gu.Counter)), s), ir.Int, gu)
	case ir.FieldGuard:
		return g.guardExpr(gu)
	}
	return Id("m").Dot("hooks").Dot(gu.GoName).Call(Id("ctx"), typed, Id("st"))
}

// findName is the name of the generated query function: Find<T>s.
func (g *gen) findName() string {
	if strings.HasSuffix(g.T, "s") {
		return "Find" + g.T + "es"
	}
	return "Find" + g.T + "s"
}

// durableTimers reports whether some state's timeout has levels or an on_expiry event:
// what a stored machine arms as deadlines, and FireDue<T>Timers handles.
func (g *gen) durableTimers() bool {
	return slices.ContainsFunc(g.m.States, func(s *ir.State) bool {
		return s.Timeout != nil && (len(s.Timeout.Levels) > 0 || s.Timeout.OnExpiry != nil) || len(s.Delays) > 0
	})
}

// effects reports whether the spec has actions marked effect.
func (g *gen) effects() bool {
	return slices.ContainsFunc(g.m.Actions, func(a *ir.Action) bool { return a.Effect })
}

// engineStore emits the snapshot, log and store types, Restore and Replay.
func (g *gen) engineStore(f *File) {
	T := g.T
	f.Comment(comment("The runtime's types for this machine: a firing's input, the machine's present and its\npast (the event log). Any fsmrt.Store keeps machines of every type."))
	f.Type().Defs(
		Id(g.name("Input")).Op("=").Qual(rt, "Input").Types(g.role()),
		Id(g.name("Snapshot")).Op("=").Qual(rt, "Snapshot").Types(Id("State"), Id(g.name("Context")), g.extra()),
		Id(g.name("LogEntry")).Op("=").Qual(rt, "LogEntry").Types(Id("State"), Id("Event"), g.role()),
	)
	f.Line()
	if g.effects() {
		f.Comment(comment(g.name("Effect") + " is what an effect's hook receives: the effect and its committed transition."))
		f.Type().Id(g.name("Effect")).Op("=").Qual(rt, "EffectCall").Types(Id("State"), Id("Event"), Id(g.name("Context")))
		f.Line()
	}
	f.Comment(comment(fmt.Sprintf("Restore%s rebuilds a machine from a snapshot (fsmrt.Restore).", T)))
	f.Func().Id("Restore"+T).Params(append([]Code{Id("s").Id(g.name("Snapshot"))}, g.hookParams()...)...).Params(Op("*").Id(T), Error()).Block(
		Id("m").Op(":=").Id("New"+T).Call(g.hookArgs()...),
		Return(Qual(rt, "Built").Call(Id("m"), Qual(rt, "Restore").Call(self(), Id("s"), Nil()))),
	)
	f.Line()
	f.Comment(comment(fmt.Sprintf("Replay%s rebuilds machine id from its store, no hook running (fsmrt.Replay); an ID the\nstore never saw is fsmrt.ErrNotFound (New%s makes a new machine).", T, T)))
	f.Func().Id("Replay"+T).Params(append([]Code{ctxParam(), Id("store").Qual(rt, "Store"), Id("id").String()}, g.hookParams()...)...).Params(Op("*").Id(T), Error()).Block(
		Id("m").Op(":=").Id("New"+T).Call(g.hookArgs()...),
		Return(Qual(rt, "Built").Call(Id("m"), Qual(rt, "Replay").Call(Id("ctx"), self(), Id("store"), Id("id"), Nil()))),
	)
	f.Line()
	if g.timeouts || len(g.m.Counters) > 0 {
		f.Comment(comment(fmt.Sprintf("%s returns the machines stored in store that match q (in any state, past a\ntimeout level, with a counter at least at a value; see fsmrt.Query), in ID order.\nq.Machine is set here.", g.findName())))
		f.Func().Id(g.findName()).Params(ctxParam(), Id("store").Qual(rt, "Store"), Id("q").Qual(rt, "Query")).Params(Index().Qual(rt, "Instance"), Error()).Block(
			Id("q").Dot("Machine").Op("=").Id("def").Dot("Spec").Dot("Name").Call(),
			Return(Id("store").Dot("Find").Call(Id("ctx"), Id("q"))),
		)
		f.Line()
	}
	if g.durableTimers() {
		T := g.T
		f.Comment(comment(fmt.Sprintf("FireDue%sTimers handles the timeouts of the machines stored in store that have\nfallen due at now, as FireDue%sTimersWith does on a clock stopped at now, with the\ndefault owner and leases, claiming at most limit.", T, T)))
		machine := Qual(rt, "Machine").Types(Id("State"), Id("Event"), g.role(), Id(g.name("Context")), g.extra())
		f.Func().Id("FireDue"+T+"Timers").Params(append(append([]Code{ctxParam(), Id("store").Qual(rt, "Store")}, g.hookParams()...), Id("now").Qual("time", "Time"), Id("limit").Int())...).Params(Int(), Error()).Block(
			Return(Id("FireDue" + T + "TimersWith").Call(append(append([]Code{Id("ctx"), Id("store")}, g.hookArgs()...),
				Qual(rt, "TimerOptions").Values(Dict{Id("Clock"): Qual(rt, "StoppedClock").Call(Id("now")), Id("Limit"): Id("limit")}))...)),
		)
		f.Line()
		f.Comment(comment(fmt.Sprintf("FireDue%sTimersWith handles the timeouts of the machines stored in store that have\nfallen due at o.Clock's now: it fires the on_expiry events and records the levels\nreached, each once, whichever of any number of schedulers claims it; the effects of\nthe transitions it fires are leased on o.Clock (fsmrt.FireDueWith). It returns how many\nit handled.", T)))
		f.Func().Id("FireDue"+T+"TimersWith").Params(append(append([]Code{ctxParam(), Id("store").Qual(rt, "Store")}, g.hookParams()...), Id("o").Qual(rt, "TimerOptions"))...).Params(Int(), Error()).Block(
			Return(Qual(rt, "FireDueWith").Call(Id("ctx"), Id("store"), Id("def").Dot("Spec").Dot("Name").Call(), Id("o"),
				Func().Params(ctxParam(), Id("id").String()).Params(Op("*").Add(machine), Error()).Block(
					List(Id("m"), Err()).Op(":=").Id("Replay"+T).Call(append([]Code{Id("ctx"), Id("store"), Id("id")}, g.hookArgs()...)...),
					If(Err().Op("!=").Nil()).Block(Return(Nil(), Err())),
					Id("m").Dot("SetStore").Call(Id("store")),
					Return(Op("&").Id("m").Dot("Machine"), Nil()),
				))),
		)
		f.Line()
	}
	if !g.resumes {
		return
	}
	f.Comment(comment(fmt.Sprintf("Resume%s loads machine id from its store, as Replay%s does, and resumes it if it has\nended: a machine in a terminal state goes back to the state its last transition left,\neverything else as that transition's checkpoint saved it. The resumption is committed\nto the store as a STATE_RESUMED entry with a snapshot; no hook runs. A machine\nthat has not ended is returned as loaded. The machine returned has the store set; in\nsays who resumes it, when and why (fsmrt.Resume).", T, T)))
	f.Func().Id("Resume"+T).Params(append(append([]Code{ctxParam(), Id("store").Qual(rt, "Store"), Id("id").String()}, g.hookParams()...), g.in())...).Params(Op("*").Id(T), Error()).Block(
		Id("m").Op(":=").Id("New"+T).Call(g.hookArgs()...),
		Return(Qual(rt, "Built").Call(Id("m"), Qual(rt, "Resume").Call(Id("ctx"), self(), Id("store"), Id("id"), Nil(), Id("in")))),
	)
	f.Line()
}
