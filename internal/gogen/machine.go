package gogen

import (
	"fmt"
	"strings"

	. "github.com/dave/jennifer/jen"
	"github.com/fsmgen/fsmgen/internal/ir"
)

func ctxParam() Code { return Id("ctx").Qual("context", "Context") }

// machine emits the step value, the hooks interface and its no-op base, the input struct,
// the machine type, its constructor and accessors.
func (g *gen) machine(f *File) {
	m := g.m
	T := g.T

	// Step.
	stepFields := []Code{
		doc("From is the state the event was fired in."), Id("From").Id("State"),
		doc("To is the state being entered; for guards it is not decided yet and equals From."), Id("To").Id("State"),
		doc("Event is the event being fired."), Id("Event").Id("Event"),
	}
	if len(m.Roles) > 0 {
		stepFields = append(stepFields, doc("Role is who fires it."), Id("Role").Id("Role"))
	}
	if g.timing {
		stepFields = append(stepFields, doc("At is when the event happened (zero for guards)."), Id("At").Qual("time", "Time"))
	}
	f.Comment(comment(g.name("Step") + " describes the transition being decided or run; hooks receive it by value."))
	f.Type().Id(g.name("Step")).Struct(stepFields...)
	f.Line()

	// Input.
	var inFields []Code
	if len(m.Roles) > 0 {
		inFields = append(inFields, doc("Role is who fires the event. Transitions that name roles refuse RoleNone."), Id("Role").Id("Role"))
	}
	if m.Idempotent {
		inFields = append(inFields, doc("Key is an idempotency key. A key already used for the same event returns the\noriginal result without firing again; for another event it is a conflict. Only\naccepted events are recorded, since a refusal changes nothing."), Id("Key").String())
	}
	inFields = append(inFields,
		doc("EventID identifies the triggering event in the history and the event log."), Id("EventID").String(),
		doc("Actor and Reason say who fired the event and why; they are recorded in the history and\nthe event log."), Id("Actor").String(), Id("Reason").String())
	inFields = append(inFields, doc("At is when the event happened; the zero time means now (the machine's clock). It is\nrecorded in the history and the event log."), Id("At").Qual("time", "Time"))
	f.Comment(comment(g.name("Input") + " is what the caller says about one firing."))
	f.Type().Id(g.name("Input")).Struct(inFields...)
	f.Line()

	g.hooksIface(f)

	if m.Idempotent {
		f.Type().Id("idempotencyRecord").Struct(Id("event").Id("Event"), Id("state").Id("State"))
		f.Line()
		f.Comment("// SetKeyWindow sets how many idempotency keys the machine keeps in memory\n// (fsmrt.DefaultWindow when n <= 0). A key it has forgotten is looked up in its store when\n// the store is a fsmrt.KeyFinder (the memory store is); without a store, it is forgotten.")
		f.Func().Params(Id("m").Op("*").Id(T)).Id("SetKeyWindow").Params(Id("n").Int()).Block(Id("m").Dot("keys").Dot("SetSize").Call(Id("n")))
		f.Line()
	}
	if m.RecordHistory {
		f.Comment(comment(g.name("Record") + " is one entry of the transition history: from, to, event, event ID, time\n(timestamp), actor and reason."))
		f.Type().Id(g.name("Record")).Op("=").Qual(rt, "Record").Types(Id("State"), Id("Event"))
		f.Line()
	}

	// The machine.
	fields := []Code{Id("state").Id("State"), Id("seq").Int64().Comment("accepted transitions so far")}
	if g.hooks {
		fields = append(fields, Id("hooks").Id(g.name("Hooks")))
	}
	fields = append(fields,
		Line(), doc("ID names the machine in its store, its event log and a registry."), Id("ID").String(),
		doc("Context is the machine's data. Hooks may change it; states check what they require."), Id("Context").Id(g.name("Context")))
	if len(m.Policies) > 0 {
		fields = append(fields, doc("Policies are the run-time switches, set to the spec's defaults by New"+T+"."), Id("Policies").Id(g.name("Policies")))
	}
	if len(m.Counters) > 0 {
		fields = append(fields, Line())
		for _, c := range m.Counters {
			if c.PerState {
				fields = append(fields, Id(c.CountField()).Index(Id("NumStates")).Int().Comment(fmt.Sprintf("counter %s, per state", quoted(c.Name))))
			} else {
				fields = append(fields, Id(c.CountField()).Int().Comment(fmt.Sprintf("counter %s", quoted(c.Name))))
			}
		}
		for _, c := range g.configurables {
			fields = append(fields, Id(c.LimitField()).Int().Comment(fmt.Sprintf("the count whose increment trips counter %s", quoted(c.Name))))
		}
	}
	for _, s := range m.States {
		if s.Remembers {
			st, set := s.MemoryFields()
			fields = append(fields, Id(st).Id("State").Comment(fmt.Sprintf("the state %s was entered from", quoted(s.Name))), Id(set).Bool())
		}
	}
	if g.resumes {
		fields = append(fields, Id("lastFrom").Id("State").Comment("the state the last transition left, for Resume"), Id("lastEvent").Id("Event"))
	}
	fields = append(fields, Line(), Id("store").Id(g.name("Store")), Id("saved").Int64().Comment("seq of the last snapshot saved to the store"),
		Id("updatedAt").Qual("time", "Time").Comment("when the last persisted (or, with a clock, any) transition happened"),
		Id("logger").Op("*").Qual("log/slog", "Logger"),
		Id("watched").Bool().Comment("store != nil || logger != nil: Fire cannot answer from the moves table alone"))
	if g.timing {
		fields = append(fields, Id("clock").Id("Clock"), Id("createdAt").Qual("time", "Time"), Id("enteredAt").Qual("time", "Time"),
			Id("timeByState").Index(Id("NumStates")).Qual("time", "Duration").Comment("time spent in each state, the current stay excluded"))
	}
	if g.timeouts {
		fields = append(fields, Id("timeouts").Index(Id("NumStates")).Qual("time", "Duration"))
	}
	if m.RecordHistory {
		fields = append(fields, Id("history").Qual(rt, "Window").Types(Id(g.name("Record"))).Comment("the last records; the store's log has them all"))
	}
	if m.Idempotent {
		fields = append(fields, Id("keys").Qual(rt, "KeyWindow").Types(Id("idempotencyRecord")).Comment("the last keys; the store's log has them all"))
	}
	for _, e := range m.Events {
		if len(e.Payload) > 0 {
			fields = append(fields, Id("payload"+e.GoName).Id(e.GoName+"Payload"))
		}
	}
	fields = append(fields, Line(), Id("_").Index(Lit(64)).Byte().Comment("keeps machines used by different goroutines off one cache line"))
	doc := fmt.Sprintf("%s is one %s state machine.%s\n\nA %s is not safe for concurrent use: confine it to one goroutine, or guard it with a\nmutex. Different machines may be used from different goroutines. The machine does no\nI/O itself; hooks do.", T, m.Name, docSuffix(m.Doc), T)
	f.Comment(comment(doc))
	f.Type().Id(T).Struct(fields...)
	f.Line()

	// Constructor.
	params := g.hookParams()
	f.Comment(comment(fmt.Sprintf("New%s returns a machine in the initial state %s, with context and policies at\ntheir spec defaults.", T, quoted(m.Initial.Name))))
	f.Func().Id("New" + T).Params(params...).Op("*").Id(T).BlockFunc(func(b *Group) {
		b.Id("m").Op(":=").Op("&").Id(T).Values(Id("state").Op(":").Id("State" + m.Initial.GoName))
		if g.hooks {
			b.Id("m").Dot("hooks").Op("=").Id("hooks")
		}
		if len(m.Policies) > 0 {
			b.Id("m").Dot("Policies").Op("=").Id("default" + g.name("Policies")).Call()
		}
		for _, fd := range m.Fields {
			if !fd.Default.Set {
				continue
			}
			b.Id("m").Dot("Context").Dot(fd.GoName).Op("=").Add(g.literal(fd, fd.Default))
		}
		if g.timing {
			b.Id("m").Dot("clock").Op("=").Qual(rt, "SystemClock").Values()
			b.Id("m").Dot("createdAt").Op("=").Id("m").Dot("clock").Dot("Now").Call()
			b.Id("m").Dot("enteredAt").Op("=").Id("m").Dot("createdAt")
		}
		if g.timeouts {
			b.Id("m").Dot("timeouts").Op("=").Id("defaultTimeouts").Call()
		}
		for _, c := range g.configurables {
			b.Id("m").Dot(c.LimitField()).Op("=").Lit(c.Limit)
		}
		b.Return(Id("m"))
	})
	f.Line()

	f.Comment("// State returns the current state.")
	f.Func().Params(Id("m").Op("*").Id(T)).Id("State").Params().Id("State").Block(Return(Id("m").Dot("state")))
	f.Line()
	f.Comment("// Seq returns the number of transitions accepted so far (restored with a snapshot): the\n// sequence number of the last event log entry.")
	f.Func().Params(Id("m").Op("*").Id(T)).Id("Seq").Params().Int64().Block(Return(Id("m").Dot("seq")))
	f.Line()
	f.Comment(comment("SetStore makes the machine append every accepted transition to the store's event log and\nsave a snapshot at each checkpoint. Errors from the store come back from Fire as a\nStoreError; the transition has happened in memory: reload the machine from the store\nbefore firing again."))
	f.Func().Params(Id("m").Op("*").Id(T)).Id("SetStore").Params(Id("s").Id(g.name("Store"))).Block(
		Id("m").Dot("store").Op("=").Id("s"),
		Id("m").Dot("watched").Op("=").Id("m").Dot("store").Op("!=").Nil().Op("||").Id("m").Dot("logger").Op("!=").Nil(),
	)
	f.Line()
	f.Comment("// SetLogger makes the machine log every refused event (at Warn) through l.")
	f.Func().Params(Id("m").Op("*").Id(T)).Id("SetLogger").Params(Id("l").Op("*").Qual("log/slog", "Logger")).Block(
		Id("m").Dot("logger").Op("=").Id("l"),
		Id("m").Dot("watched").Op("=").Id("m").Dot("store").Op("!=").Nil().Op("||").Id("m").Dot("logger").Op("!=").Nil(),
	)
	f.Line()

	for _, c := range m.Counters {
		doc := fmt.Sprintf("Count%s returns the counter %s", c.GoName, quoted(c.Name))
		if c.Limit > 0 {
			doc += fmt.Sprintf(" (%s %d)", c.BoundKey(), c.Bound())
		}
		if c.PerState {
			f.Comment(comment(doc + " of state s."))
			f.Func().Params(Id("m").Op("*").Id(T)).Id("Count"+c.GoName).Params(Id("s").Id("State")).Int().Block(
				If(Id("s").Op(">=").Id("NumStates")).Block(Return(Lit(0))),
				Return(Id("m").Dot(c.CountField()).Index(Id("s"))),
			)
		} else {
			f.Comment(comment(doc + "."))
			f.Func().Params(Id("m").Op("*").Id(T)).Id("Count" + c.GoName).Params().Int().Block(Return(Id("m").Dot(c.CountField())))
		}
		f.Line()
	}

	if g.remembers {
		f.Comment("// Remembered returns the state a remembering state s was last entered from.")
		f.Func().Params(Id("m").Op("*").Id(T)).Id("Remembered").Params(Id("s").Id("State")).Params(Id("State"), Bool()).BlockFunc(func(b *Group) {
			var cases []Code
			for _, s := range m.States {
				if s.Remembers {
					st, set := s.MemoryFields()
					cases = append(cases, Case(Id("State"+s.GoName)).Block(Return(Id("m").Dot(st), Id("m").Dot(set))))
				}
			}
			b.Switch(Id("s")).Block(cases...)
			b.Return(Lit(0), False())
		})
		f.Line()
	}
	if m.RecordHistory {
		f.Comment("// History returns a copy of the transition history the machine keeps in memory, oldest\n// first: the last SetHistoryWindow records (fsmrt.DefaultWindow unless set). The store's\n// event log has every transition.")
		f.Func().Params(Id("m").Op("*").Id(T)).Id("History").Params().Index().Id(g.name("Record")).Block(
			Return(Id("m").Dot("history").Dot("Items").Call()),
		)
		f.Line()
		f.Comment("// SetHistoryWindow sets how many history records the machine keeps in memory\n// (fsmrt.DefaultWindow when n <= 0).")
		f.Func().Params(Id("m").Op("*").Id(T)).Id("SetHistoryWindow").Params(Id("n").Int()).Block(Id("m").Dot("history").Dot("SetSize").Call(Id("n")))
		f.Line()
	}
	for _, e := range m.Events {
		if len(e.Payload) > 0 {
			f.Comment(comment(fmt.Sprintf("%sPayload returns the payload of the last %s event fired (hooks see the current one).", e.GoName, quoted(e.Name))))
			f.Func().Params(Id("m").Op("*").Id(T)).Id(e.GoName + "Payload").Params().Id(e.GoName + "Payload").Block(Return(Id("m").Dot("payload" + e.GoName)))
			f.Line()
		}
	}
}

// literal is a constant of the field's type.
func (g *gen) literal(fd *ir.Field, lit ir.Literal) *Statement {
	switch fd.Type.Kind {
	case ir.Enum:
		for _, v := range fd.Values {
			if v == lit.Str {
				return Id(g.enumType(fd) + goNameOf(v))
			}
		}
		return Lit(0)
	case ir.String:
		return Lit(lit.Str)
	case ir.Bool:
		return Lit(lit.Bool)
	case ir.Int:
		return Lit(int(lit.Num))
	case ir.Duration:
		return Qual("time", "Duration").Call(Lit(int64(lit.Num)))
	}
	return Lit(lit.Num)
}

var _ = strings.Join

// hooksIface emits the hooks interface and its no-op base.
func (g *gen) hooksIface(f *File) {
	m, T := g.m, g.T
	if g.hooks {
		var methods, nops []Code
		for _, gu := range m.Guards {
			if gu.Kind != ir.Hook {
				continue
			}
			methods = append(methods, Comment(comment(fmt.Sprintf("%s is the guard %s.%s", gu.GoName, quoted(gu.Name), docSuffix(gu.Doc)))),
				Id(gu.GoName).Params(ctxParam(), Id("m").Op("*").Id(T), Id("s").Id(g.name("Step"))).Bool())
			nops = append(nops, Func().Params(Id(g.name("NopHooks"))).Id(gu.GoName).Params(Qual("context", "Context"), Op("*").Id(T), Id(g.name("Step"))).Bool().Block(Return(False())))
		}
		for _, a := range m.Actions {
			methods = append(methods, Comment(comment(fmt.Sprintf("%s is the action %s.%s", a.GoName, quoted(a.Name), docSuffix(a.Doc)))),
				Id(a.GoName).Params(ctxParam(), Id("m").Op("*").Id(T), Id("s").Id(g.name("Step"))))
			nops = append(nops, Func().Params(Id(g.name("NopHooks"))).Id(a.GoName).Params(Qual("context", "Context"), Op("*").Id(T), Id(g.name("Step"))).Block())
		}
		if len(m.Checkpoints) > 0 {
			methods = append(methods, doc("Checkpoint is called at each checkpoint the transition reaches, after the state\nchanged and entry actions ran. An error is returned from Fire wrapped in a\nCheckpointError; the transition has happened, but was not saved."),
				Id("Checkpoint").Params(ctxParam(), Id("m").Op("*").Id(T), Id("cp").Id("Checkpoint"), Id("s").Id(g.name("Step"))).Error())
			nops = append(nops, Func().Params(Id(g.name("NopHooks"))).Id("Checkpoint").Params(Qual("context", "Context"), Op("*").Id(T), Id("Checkpoint"), Id(g.name("Step"))).Error().Block(Return(Nil())))
		}
		f.Comment(comment(g.name("Hooks") + " is what the program implements: guards, actions and checkpoints. Fire calls\nthem synchronously, in this order: guards, exit actions of the old state, the\ntransition's actions, entry actions of the new state, checkpoints. A hook must not fire\nevents on the same machine."))
		f.Type().Id(g.name("Hooks")).Interface(methods...)
		f.Line()
		f.Comment(comment(g.name("NopHooks") + " implements " + g.name("Hooks") + " with guards that never hold and actions that do\nnothing. Embed it to implement only some hooks."))
		f.Type().Id(g.name("NopHooks")).Struct()
		f.Line()
		for _, n := range nops {
			f.Add(n)
			f.Line()
		}
		f.Var().Id("_").Id(g.name("Hooks")).Op("=").Id(g.name("NopHooks")).Values()
		f.Line()
	}

}
