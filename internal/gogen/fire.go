package gogen

import (
	"fmt"
	"math"
	"slices"
	"strings"

	. "github.com/dave/jennifer/jen"
	"github.com/fsmgen/fsmgen/internal/ir"
)

func (g *gen) in() Code { return Id("in").Id(g.name("Input")) }

// hookParams is the hooks parameter of the functions that build a machine (New, Restore,
// Replay, Resume), and hookArgs the argument passing it on: empty for a machine without hooks.
func (g *gen) hookParams() []Code {
	if !g.hooks {
		return nil
	}
	return []Code{Id("hooks").Id(g.name("Hooks"))}
}

func (g *gen) hookArgs() []Code {
	if !g.hooks {
		return nil
	}
	return []Code{Id("hooks")}
}

// inPtr is the input parameter of the internal methods: a pointer, so that the input is
// not copied at every call on the hot path.
func (g *gen) inPtr() Code { return Id("in").Op("*").Id(g.name("Input")) }

// fire emits Fire, FireWith, the per-payload Fire methods, Can, Permitted, the dispatch
// switch and one method per declared transition.
func (g *gen) fire(f *File) {
	m := g.m
	T := g.T
	recv := func() *Statement { return Func().Params(Id("m").Op("*").Id(T)) }
	emptyIn := Id(g.name("Input")).Values()

	f.Comment(comment("Fire fires e and returns the new state. When e is refused it returns the unchanged state\nand one of the typed errors (InvalidTransitionError, GuardError, ...), and nothing\nchanges. Refusing and accepting allocate nothing unless the spec asks for history,\npayloads or idempotency keys."))
	f.Add(recv()).Id("Fire").Params(ctxParam(), Id("e").Id("Event")).Params(Id("State"), Error()).BlockFunc(func(b *Group) {
		if len(m.Events) > 0 {
			b.If(Op("!").Id("m").Dot("watched").Op("&&").Id("m").Dot("state").Op("<").Id("NumStates").Op("&&").Id("e").Op("<").Id("NumEvents")).Block(
				Id("from").Op(":=").Id("m").Dot("state"),
				Switch(Id("to").Op(":=").Id("moves").Index(Id("from")).Index(Id("e")), Id("to")).Block(
					Case(Id("moveRefused")).Block(Return(Id("from"), Op("&").Id("invalidTransitions").Index(Id("from")).Index(Id("e")))),
					g.fireStepCase(),
					Default().Block(
						Id("m").Dot("state").Op("=").Id("State").Call(Id("to")),
						Id("m").Dot("seq").Op("++"),
						Return(Id("State").Call(Id("to")), Nil()),
					),
				),
			)
		}
		var cases []Code
		for _, e := range m.Events {
			if len(e.Payload) > 0 {
				cases = append(cases, Case(Id("Event"+e.GoName)).Block(Return(Id("m").Dot("Fire"+e.GoName).Call(Id("ctx"), Id(e.GoName+"Payload").Values(), emptyIn))))
			}
		}
		if len(cases) > 0 {
			b.Switch(Id("e")).Block(cases...)
		}
		b.Return(Id("m").Dot("fire").Call(Id("ctx"), Id("e"), Op("&").Id("noInput")))
	})
	f.Line()
	f.Comment("// noInput is the input of Fire, shared and never written, so that Fire does not build one.")
	f.Var().Id("noInput").Id(g.name("Input"))
	f.Line()

	inDoc := "FireWith fires e with what the caller says about it (who fires it, when, why, ...)."
	f.Comment(comment(inDoc))
	f.Add(recv()).Id("FireWith").Params(ctxParam(), Id("e").Id("Event"), g.in()).Params(Id("State"), Error()).BlockFunc(func(b *Group) {
		var cases []Code
		for _, e := range m.Events {
			if len(e.Payload) > 0 {
				cases = append(cases, Case(Id("Event"+e.GoName)).Block(Return(Id("m").Dot("Fire"+e.GoName).Call(Id("ctx"), Id(e.GoName+"Payload").Values(), Id("in")))))
			}
		}
		if len(cases) > 0 {
			b.Switch(Id("e")).Block(cases...)
		}
		b.Return(Id("m").Dot("fire").Call(Id("ctx"), Id("e"), Op("&").Id("in")))
	})
	f.Line()

	// fire: idempotency and logging around step.
	f.Comment("// fire runs step and logs a refusal when the machine has a logger.")
	f.Add(recv()).Id("fire").Params(ctxParam(), Id("e").Id("Event"), g.inPtr()).Params(Id("State"), Error()).Block(
		List(Id("to"), Err()).Op(":=").Id("m").Dot("once").Call(Id("ctx"), Id("e"), Id("in")),
		If(Err().Op("!=").Nil().Op("&&").Id("m").Dot("logger").Op("!=").Nil()).Block(
			Id("m").Dot("logRefusal").Call(Id("ctx"), Id("e"), Err()),
		),
		Return(Id("to"), Err()),
	)
	f.Line()
	f.Comment("// logRefusal logs a refused event at Warn.")
	f.Add(recv()).Id("logRefusal").Params(ctxParam(), Id("e").Id("Event"), Err().Error()).Block(
		Id("m").Dot("logger").Dot("LogAttrs").Call(Id("ctx"), Qual("log/slog", "LevelWarn"), Lit("event refused"),
			Qual("log/slog", "String").Call(Lit("machine"), Lit(m.Name)), Qual("log/slog", "String").Call(Lit("id"), Id("m").Dot("ID")),
			Qual("log/slog", "String").Call(Lit("state"), Id("m").Dot("state").Dot("String").Call()), Qual("log/slog", "String").Call(Lit("event"), Id("e").Dot("String").Call()),
			Qual("log/slog", "String").Call(Lit("error"), Err().Dot("Error").Call())),
	)
	f.Line()
	f.Comment("// once applies idempotency keys around step.")
	f.Add(recv()).Id("once").Params(ctxParam(), Id("e").Id("Event"), g.inPtr()).Params(Id("State"), Error()).BlockFunc(func(b *Group) {
		if !m.Idempotent {
			b.Return(Id("m").Dot("step").Call(Id("ctx"), Id("e"), Id("in"), False()))
			return
		}
		b.If(Id("in").Dot("Key").Op("==").Lit("")).Block(Return(Id("m").Dot("step").Call(Id("ctx"), Id("e"), Id("in"), False())))
		b.List(Id("r"), Id("ok")).Op(":=").Id("m").Dot("keys").Dot("Get").Call(Id("in").Dot("Key"))
		b.If(Op("!").Id("ok")).Block(
			Comment("A key the window has forgotten may be in the store's log."),
			If(List(Id("kf"), Id("finds")).Op(":=").Id("m").Dot("store").Assert(Qual(rt, "KeyFinder").Types(Id(g.name("LogEntry")))), Id("finds")).Block(
				List(Id("le"), Id("found"), Err()).Op(":=").Id("kf").Dot("FindKey").Call(Id("ctx"), Id("m").Dot("ID"), Id("in").Dot("Key")),
				If(Err().Op("!=").Nil()).Block(Return(Id("m").Dot("state"), Qual(rt, "StoreFailed").Call(Op("&").Id("fsmSpec"), Lit("find key"), Id("m").Dot("seq"), Err()))),
				List(Id("r"), Id("ok")).Op("=").List(Id("idempotencyRecord").Values(Dict{Id("event"): Id("le").Dot("Trigger"), Id("state"): Id("le").Dot("To")}), Id("found")),
			),
		)
		b.If(Id("ok")).Block(
			If(Id("r").Dot("event").Op("!=").Id("e")).Block(
				Return(Id("m").Dot("state"), Qual(rt, "IdempotencyConflict").Call(Op("&").Id("fsmSpec"), Id("m").Dot("state"), Id("e"), Id("in").Dot("Key"), Id("r").Dot("event"))),
			),
			Return(Id("r").Dot("state"), Nil()),
		)
		b.List(Id("to"), Err()).Op(":=").Id("m").Dot("step").Call(Id("ctx"), Id("e"), Id("in"), False())
		b.If(Err().Op("==").Nil()).Block(
			Id("m").Dot("keys").Dot("Put").Call(Id("in").Dot("Key"), Id("idempotencyRecord").Values(Dict{Id("event"): Id("e"), Id("state"): Id("to")})),
		)
		b.Return(Id("to"), Err())
	})
	f.Line()

	for _, e := range m.Events {
		if len(e.Payload) == 0 {
			continue
		}
		p := e.GoName + "Payload"
		f.Comment(comment(fmt.Sprintf("Fire%s fires %s with its payload, which is validated as soon as the state is known to\naccept the event: an invalid payload is refused with a ValidationError (Payload set) and\nchanges nothing.", e.GoName, quoted(e.Name))))
		f.Add(recv()).Id("Fire"+e.GoName).Params(ctxParam(), Id("p").Id(p), g.in()).Params(Id("State"), Error()).Block(
			If(Id("errs").Op(":=").Id("p").Dot("Validate").Call(), Id("errs").Op("!=").Nil().Op("&&").Id("accepts").Call(Id("m").Dot("state"), Id("Event"+e.GoName))).Block(
				Return(Id("m").Dot("state"), Qual(rt, "Validation").Call(Op("&").Id("fsmSpec"), Id("m").Dot("state"), Id("Event"+e.GoName), Id("m").Dot("state"),
					True(), Id("errs"), Id("m").Dot("PermittedWith").Call(Id("ctx"), Id("in"), Nil()))),
			),
			Id("prev").Op(":=").Id("m").Dot("payload"+e.GoName),
			Id("m").Dot("payload"+e.GoName).Op("=").Id("p"),
			List(Id("to"), Err()).Op(":=").Id("m").Dot("fire").Call(Id("ctx"), Id("Event"+e.GoName), Op("&").Id("in")),
			If(Err().Op("!=").Nil()).Block(Id("m").Dot("payload"+e.GoName).Op("=").Id("prev")),
			Return(Id("to"), Err()),
		)
		f.Line()
	}

	f.Comment("// Can reports whether e would be accepted now, without firing it. Guards are evaluated.")
	f.Add(recv()).Id("Can").Params(ctxParam(), Id("e").Id("Event")).Bool().BlockFunc(func(b *Group) {
		if len(m.Events) > 0 && !g.anyStep {
			// Every pair is answered by the table: no call, so that the compiler can inline Can.
			b.Return(Id("m").Dot("state").Op("<").Id("NumStates").Op("&&").Id("e").Op("<").Id("NumEvents").Op("&&").Id("moves").Index(Id("m").Dot("state")).Index(Id("e")).Op("!=").Id("moveRefused"))
			return
		}
		if len(m.Events) > 0 {
			b.If(Id("m").Dot("state").Op("<").Id("NumStates").Op("&&").Id("e").Op("<").Id("NumEvents")).Block(
				Switch(Id("moves").Index(Id("m").Dot("state")).Index(Id("e"))).Block(
					Case(Id("moveRefused")).Block(Return(False())),
					Case(Id("moveStep")).Comment("// step decides"),
					Default().Block(Return(True())),
				),
			)
		}
		b.Return(Id("m").Dot("CanWith").Call(Id("ctx"), Id("e"), emptyIn))
	})
	f.Line()
	f.Comment("// CanWith is Can for a given input.")
	f.Add(recv()).Id("CanWith").Params(ctxParam(), Id("e").Id("Event"), g.in()).Bool().Block(
		List(Id("_"), Err()).Op(":=").Id("m").Dot("step").Call(Id("ctx"), Id("e"), Op("&").Id("in"), True()),
		Return(Err().Op("==").Nil()),
	)
	f.Line()
	f.Comment("// Permitted appends to buf the events that would be accepted now, in declaration order,\n// and returns it. It allocates nothing when buf has room.")
	f.Add(recv()).Id("Permitted").Params(ctxParam(), Id("buf").Index().Id("Event")).Index().Id("Event").Block(
		Return(Id("m").Dot("PermittedWith").Call(Id("ctx"), emptyIn, Id("buf"))),
	)
	f.Line()
	f.Comment("// PermittedWith is Permitted for a given input.")
	f.Add(recv()).Id("PermittedWith").Params(ctxParam(), g.in(), Id("buf").Index().Id("Event")).Index().Id("Event").Block(
		If(Id("m").Dot("state").Op(">=").Id("NumStates")).Block(Return(Id("buf"))),
		If(Id("p").Op(":=").Id("plainPermitted").Index(Id("m").Dot("state")), Id("p").Op("!=").Nil()).Block(Return(Append(Id("buf"), Id("p").Op("...")))),
		For(List(Id("i"), Id("to")).Op(":=").Range().Op("&").Id("moves").Index(Id("m").Dot("state"))).Block(
			Id("e").Op(":=").Id("Event").Call(Id("i")),
			Switch(Id("to")).Block(
				Case(Id("moveRefused")).Block(Continue()),
				Case(Id("moveStep")).Block(
					If(List(Id("_"), Err()).Op(":=").Id("m").Dot("step").Call(Id("ctx"), Id("e"), Op("&").Id("in"), True()), Err().Op("!=").Nil()).Block(Continue()),
				),
			),
			Id("buf").Op("=").Append(Id("buf"), Id("e")),
		),
		Return(Id("buf")),
	)
	f.Line()

	f.Comment("// accepts reports whether s has a transition on e, whatever the guards.")
	f.Func().Id("accepts").Params(Id("s").Id("State"), Id("e").Id("Event")).Bool().Block(
		Return(Id("s").Op("<").Id("NumStates").Op("&&").Id("e").Op("<").Id("NumEvents").Op("&&").Id("moves").Index(Id("s")).Index(Id("e")).Op("!=").Id("moveRefused")),
	)
	f.Line()

	f.Comment("// accepted appends the events that have a transition from s, whatever the guards.")
	f.Func().Id("accepted").Params(Id("s").Id("State"), Id("buf").Index().Id("Event")).Index().Id("Event").Block(
		For(Id("e").Op(":=").Id("Event").Call(Lit(0)), Id("e").Op("<").Id("NumEvents"), Id("e").Op("++")).Block(
			If(Id("accepts").Call(Id("s"), Id("e"))).Block(Id("buf").Op("=").Append(Id("buf"), Id("e"))),
		),
		Return(Id("buf")),
	)
	f.Line()

	g.movesTable(f)

	// step: the dispatch.
	f.Comment("// step decides e in the current state and, unless dry, applies it.")
	f.Add(recv()).Id("step").Params(ctxParam(), Id("e").Id("Event"), g.inPtr(), Id("dry").Bool()).Params(Id("State"), Error()).BlockFunc(func(b *Group) {
		b.Id("from").Op(":=").Id("m").Dot("state")
		var stateCases []Code
		for _, s := range m.States {
			var evCases []Code
			for _, e := range m.Events {
				ts := m.Lookup(s, e)
				if len(ts) == 0 || g.plainPair(ts) != nil {
					continue // no transition, or one in plainSteps
				}
				var body []Code
				for i, t := range ts {
					call := Return(Id("m").Dot(g.tname(t)).Call(Id("ctx"), Id("st"), Id("in"), Id("dry")))
					if g.plain(t) {
						call = Return(Id("m").Dot("take").Call(Id("ctx"), Id("st"), Id("in"), Id("dry"), Lit(t.Index)))
					}
					if !t.Guarded() {
						body = append(body, call)
						break
					}
					body = append(body, If(g.conds(t.Conds)).Block(call))
					if i == len(ts)-1 {
						body = append(body, Return(Id("from"), Op("&").Id("guardRefusals").Index(Id("from")).Index(Id("e"))))
					}
				}
				evCases = append(evCases, Case(Id("Event"+e.GoName)).Block(body...))
			}
			if len(evCases) > 0 {
				stateCases = append(stateCases, Case(Id("State"+s.GoName)).Block(Switch(Id("e")).Block(evCases...)))
			}
		}
		if len(stateCases) > 0 || g.plainPairs {
			b.Id("st").Op(":=").Id(g.name("Step")).ValuesFunc(func(v *Group) {
				v.Id("From").Op(":").Id("from")
				v.Id("To").Op(":").Id("from")
				v.Id("Event").Op(":").Id("e")
				if len(m.Roles) > 0 {
					v.Id("Role").Op(":").Id("in").Dot("Role")
				}
			})
		}
		if g.plainPairs {
			b.If(Id("from").Op("<").Id("NumStates").Op("&&").Id("e").Op("<").Id("NumEvents")).Block(
				If(Id("t").Op(":=").Id("plainSteps").Index(Id("from")).Index(Id("e")), Id("t").Op("!=").Lit(0)).Block(
					Return(Id("m").Dot("take").Call(Id("ctx"), Id("st"), Id("in"), Id("dry"), Int().Parens(Id("t")).Op("-").Lit(1))),
				),
			)
		}
		if len(stateCases) > 0 {
			b.Switch(Id("from")).Block(stateCases...)
		}
		b.If(Id("from").Op(">=").Id("NumStates").Op("||").Id("e").Op(">=").Id("NumEvents")).Block(
			Id("refusal").Op(":=").Qual(rt, "InvalidTransition").Call(Op("&").Id("fsmSpec"), Id("from"), Id("e")),
			Return(Id("from"), Op("&").Id("refusal")),
		)
		b.Return(Id("from"), Op("&").Id("invalidTransitions").Index(Id("from")).Index(Id("e")))
	})
	f.Line()

	plain := false
	for _, t := range m.Transitions {
		if g.plain(t) {
			plain = true
			continue
		}
		g.transition(f, t)
	}
	if plain {
		g.take(f)
	}
	if g.plainPairs {
		g.plainStepsTable(f)
	}
	g.entryExit(f)
	if g.remembers {
		f.Comment("// remember records where a remembering state was entered from.")
		f.Add(recv()).Id("remember").Params(Id("from"), Id("to").Id("State")).BlockFunc(func(b *Group) {
			var cases []Code
			for _, s := range m.States {
				if s.Remembers {
					st, set := s.MemoryFields()
					cases = append(cases, Case(Id("State"+s.GoName)).Block(
						List(Id("m").Dot(st), Id("m").Dot(set)).Op("=").List(Id("from"), True())))
				}
			}
			b.Switch(Id("to")).Block(cases...)
		})
		f.Line()
	}
	g.thresholds(f)
	g.commitFunc(f)
}

// fireStepCase is Fire's case for moveStep when the machine has no store or logger: step
// directly, unless some event carries a payload, which Fire must route first.
func (g *gen) fireStepCase() *Statement {
	for _, e := range g.m.Events {
		if len(e.Payload) > 0 {
			return Case(Id("moveStep")).Comment("// below")
		}
	}
	return Case(Id("moveStep")).Block(Return(Id("m").Dot("step").Call(Id("ctx"), Id("e"), Op("&").Id("noInput"), False())))
}

// movesTable emits the dispatch table Fire, Can and Permitted read first: for each state
// and event, the target of a transition that does nothing but move the state (no guard,
// role, hook, counter, required field, checkpoint, clock or payload), moveRefused where
// the state has no transition on the event, and moveStep where step must decide.
func (g *gen) movesTable(f *File) {
	m := g.m
	typ := uintType(len(m.States) + 2)
	f.Comment(comment("moves is the dispatch table of Fire, Can and Permitted, a row per state and a column per\nevent in declaration order: the target state of a transition that only moves the state,\nmoveRefused where the state has no transition on the event, moveStep where step decides\n(guards, roles, hooks, counters, required fields, checkpoints, the clock or a payload)."))
	f.Var().Id("moves").Op("=").Index(Id("NumStates")).Index(Id("NumEvents")).Id(typ).ValuesFunc(func(rows *Group) {
		for _, s := range m.States {
			rows.Line().ValuesFunc(func(row *Group) {
				for _, e := range m.Events {
					switch to := g.move(s, e); to {
					case moveRefused:
						row.Lit(len(m.States))
					case moveStep:
						row.Lit(len(m.States) + 1)
					default:
						row.Lit(to)
					}
				}
			})
		}
		rows.Line()
	})
	f.Line()
	f.Comment("// The values of moves that are not states.")
	f.Const().Defs(
		Id("moveRefused").Op("=").Id("NumStates"),
		Id("moveStep").Op("=").Id("NumStates").Op("+").Lit(1),
	)
	f.Line()
	f.Comment(comment("plainPermitted is, for each state whose row of moves has no moveStep, the events it\naccepts in declaration order (empty, not nil, when it accepts none): what\nPermittedWith returns there whatever the input. It is nil for the other states."))
	f.Var().Id("plainPermitted").Index(Id("NumStates")).Index().Id("Event")
	f.Line()
	f.Func().Id("init").Params().Block(
		For(Id("s").Op(":=").Range().Op("&").Id("moves")).Block(
			If(Qual("slices", "Contains").Call(Id("moves").Index(Id("s")).Index(Empty(), Empty()), Id("moveStep"))).Block(Continue()),
			Id("row").Op(":=").Index().Id("Event").Values(),
			For(List(Id("e"), Id("to")).Op(":=").Range().Op("&").Id("moves").Index(Id("s"))).Block(
				If(Id("to").Op("!=").Id("moveRefused")).Block(Id("row").Op("=").Append(Id("row"), Id("Event").Call(Id("e")))),
			),
			Id("plainPermitted").Index(Id("s")).Op("=").Id("row"),
		),
	)
	f.Line()
}

// Outcomes of move other than a target state index.
const (
	moveRefused = -1
	moveStep    = -2
)

// move is the dispatch table's entry for s and e (see movesTable): the index of the target
// state, moveRefused or moveStep. It must agree with what transition emits: an entry with a
// target is a transition whose method would do nothing but move the state and commit.
func (g *gen) move(s *ir.State, e *ir.Event) int {
	m := g.m
	ts := m.Lookup(s, e)
	switch {
	case len(ts) == 0:
		return moveRefused
	case len(ts) > 1, len(e.Payload) > 0, g.timing, m.RecordHistory, g.everyCheckpoint:
		return moveStep
	}
	t := ts[0]
	if t.Guarded() || len(t.Roles) > 0 || len(t.Actions) > 0 || len(t.Increment) > 0 || len(t.Reset) > 0 || t.Checkpoint != nil {
		return moveStep
	}
	switch t.Target.Kind {
	case ir.Internal:
		return s.Index
	case ir.Fixed:
	default:
		return moveStep
	}
	to := t.Target.State
	if len(s.Exit) > 0 || len(to.Entry) > 0 || len(to.Requires) > 0 || (to.Remembers && to != s) || g.resetsOnSuccess {
		return moveStep
	}
	return to.Index
}

// tname is the method implementing a transition.
func (g *gen) tname(t *ir.Transition) string { return fmt.Sprintf("transition%d", t.Index) }

// conds is the conjunction of guard conditions, in order.
func (g *gen) conds(cs []ir.Cond) *Statement {
	var out *Statement
	for _, c := range cs {
		e := g.guardExpr(c.Guard)
		if c.Negate {
			e = Op("!").Parens(e)
		}
		if out == nil {
			out = e
		} else {
			out = out.Op("&&").Add(e)
		}
	}
	return out
}

// number renders a threshold for comparison with a value of kind k.
func number(k ir.Kind, v float64) *Statement {
	switch {
	case k == ir.Duration:
		return Qual("time", "Duration").Call(Lit(int64(v)))
	case k == ir.Int && v == math.Trunc(v) && math.Abs(v) < 1<<53:
		return Lit(int(v))
	}
	return Lit(v)
}

func (g *gen) guardExpr(gu *ir.Guard) *Statement {
	switch gu.Kind {
	case ir.CounterGuard:
		v := Id("m").Dot(gu.Counter.CountField())
		if gu.Counter.PerState {
			v = v.Index(Id("st").Dot("From"))
		}
		return g.compare(v, ir.Int, gu)
	case ir.FieldGuard:
		v := Id("m").Dot("Context").Dot(gu.Field.GoName)
		switch gu.Op {
		case ir.Equals:
			return v.Op("==").Add(g.literal(gu.Field, gu.Equals))
		case ir.Contains:
			return Qual("slices", "Contains").Call(v, g.literal(gu.Field, gu.Equals))
		}
		return g.compare(v, gu.Field.Type.Kind, gu)
	}
	return Id("m").Dot("hooks").Dot(gu.GoName).Call(Id("ctx"), Id("m"), Id("st"))
}

func (g *gen) compare(v *Statement, k ir.Kind, gu *ir.Guard) *Statement {
	op := gu.Op.Symbol()
	if gu.Op == ir.Equals {
		return v.Op(op).Add(number(k, gu.Equals.Num))
	}
	if gu.Threshold.Len != nil {
		return v.Op(op).Len(Id("m").Dot("Context").Dot(gu.Threshold.Len.GoName))
	}
	if gu.Threshold.By != nil {
		return Float64().Parens(v).Op(op).Id("threshold" + gu.GoName).Call(Id("m").Dot("Context").Dot(gu.Threshold.By.GoName))
	}
	if k == ir.Int && gu.Threshold.Num != math.Trunc(gu.Threshold.Num) {
		return Float64().Parens(v).Op(op).Lit(gu.Threshold.Num)
	}
	return v.Op(op).Add(number(k, gu.Threshold.Num))
}

// thresholds emits, for guards whose threshold depends on an enum field, the lookup.
func (g *gen) thresholds(f *File) {
	for _, gu := range g.m.Guards {
		th := gu.Threshold
		if th.By == nil || (gu.Kind != ir.CounterGuard && gu.Kind != ir.FieldGuard) {
			continue
		}
		f.Comment(comment(fmt.Sprintf("threshold%s is the threshold of guard %s by %s.", gu.GoName, quoted(gu.Name), quoted(th.By.Name))))
		f.Func().Id("threshold" + gu.GoName).Params(Id("v").Id(g.enumType(th.By))).Float64().BlockFunc(func(b *Group) {
			var cases []Code
			for i, v := range th.By.Values {
				if i == 0 {
					continue
				}
				cases = append(cases, Case(Id(g.enumType(th.By)+goNameOf(v))).Block(Return(Lit(th.Values[i]))))
			}
			if len(cases) > 0 {
				b.Switch(Id("v")).Block(cases...)
			}
			b.Return(Lit(th.Values[0]))
		})
		f.Line()
	}
}

func describe(t *ir.Transition) string {
	var from, evs []string
	for _, s := range t.From {
		from = append(from, s.Name)
	}
	for _, e := range t.Events {
		evs = append(evs, e.Name)
	}
	to := ""
	switch t.Target.Kind {
	case ir.Fixed:
		to = t.Target.State.Name
	case ir.Internal:
		to = "(internal)"
	case ir.History:
		to = "history of " + t.Target.State.Name
	case ir.Choice:
		to = "(choice)"
	}
	if len(from) > 6 {
		from = append(from[:5], fmt.Sprintf("... %d states", len(from)))
	}
	return fmt.Sprintf("%s on %s -> %s", strings.Join(from, ", "), strings.Join(evs, ", "), to)
}

// transition emits the method that decides and applies one declared transition.
func (g *gen) transition(f *File, t *ir.Transition) {
	m := g.m
	name := g.tname(t)
	f.Comment(comment(fmt.Sprintf("%s is the transition at %s:%d: %s.%s", name, g.source, t.Pos.Line, describe(t), docSuffix(t.Doc))))
	f.Func().Params(Id("m").Op("*").Id(g.T)).Id(name).Params(ctxParam(), Id("st").Id(g.name("Step")), g.inPtr(), Id("dry").Bool()).Params(Id("State"), Error()).BlockFunc(func(b *Group) {
		// Roles.
		if len(t.Roles) > 0 {
			var allowed *Statement
			or := func(e *Statement) {
				if allowed == nil {
					allowed = e
				} else {
					allowed = allowed.Op("||").Add(e)
				}
			}
			for _, r := range m.Roles {
				if r.All {
					or(Id("in").Dot("Role").Op("==").Id("Role" + r.GoName))
				}
			}
			for _, r := range t.Roles {
				if r.Role.All {
					continue
				}
				e := Id("in").Dot("Role").Op("==").Id("Role" + r.Role.GoName)
				if r.Policy != nil {
					e = e.Op("&&").Id("m").Dot("Policies").Dot(r.Policy.GoName)
				}
				or(e)
			}
			b.If(Op("!").Parens(allowed)).Block(
				Return(Id("st").Dot("From"), Qual(rt, "Permission").Call(Op("&").Id("fsmSpec"), Id("st").Dot("From"), Id("st").Dot("Event"), Id("in").Dot("Role"))),
			)
		}
		// Target.
		internal := false
		switch t.Target.Kind {
		case ir.Fixed:
			b.Id("to").Op(":=").Id("State" + t.Target.State.GoName)
		case ir.Internal:
			b.Id("to").Op(":=").Id("st").Dot("From")
			internal = true
		case ir.History:
			b.Id("to").Op(":=").Id("st").Dot("From")
			g.historyTarget(b, t.Target.State)
		case ir.Choice:
			b.Id("to").Op(":=").Id("st").Dot("From")
			var cases []Code
			hasDefault := false
			for _, c := range t.Choices {
				var body []Code
				if c.Target.Kind == ir.History {
					bg := &Group{}
					_ = bg
					body = g.historyBody(c.Target.State)
				} else {
					body = []Code{Id("to").Op("=").Id("State" + c.Target.State.GoName)}
				}
				if len(c.Conds) == 0 {
					cases = append(cases, Default().Block(body...))
					hasDefault = true
					break
				}
				cases = append(cases, Case(g.conds(c.Conds)).Block(body...))
			}
			if !hasDefault {
				cases = append(cases, Default().Block(
					Return(Id("st").Dot("From"), Qual(rt, "NoChoice").Call(Op("&").Id("fsmSpec"), Id("st").Dot("From"), Id("st").Dot("Event")))))
			}
			b.Switch().Block(cases...)
		}
		// Limits.
		var limited []*ir.Counter
		for _, c := range t.Increment {
			if c.Limit > 0 {
				limited = append(limited, c)
			}
		}
		redirects := false
		for _, c := range limited {
			if c.Then != nil {
				redirects = true
			}
		}
		// summaries are the context fields a redirecting limit writes its summary into.
		var summaries []*ir.Field
		if len(limited) > 0 {
			if redirects {
				b.Id("redirected").Op(":=").False()
			}
			for _, c := range limited {
				if c.Then != nil && c.Summary != nil && !slices.Contains(summaries, c.Summary) {
					summaries = append(summaries, c.Summary)
					b.Var().Id("summary" + c.Summary.GoName).String().Comment("// written by a tripped limit")
				}
			}
			for _, c := range limited {
				v := Id("m").Dot(c.CountField())
				if c.PerState {
					v = v.Index(Id("st").Dot("From"))
				}
				if c.Max && !c.Configurable {
					// The counter may reach its max: the increment that would pass it trips.
					b.Id("trip" + c.GoName).Op(":=").Add(v).Op(">=").Lit(c.Bound())
				} else {
					b.Id("trip" + c.GoName).Op(":=").Add(v).Op("+").Lit(1).Op(">=").Add(tripLimit(c))
				}
				if c.Then == nil {
					cond := Id("trip" + c.GoName)
					if redirects {
						cond = Id("trip" + c.GoName).Op("&&").Op("!").Id("redirected")
					}
					b.If(cond).Block(Return(Id("st").Dot("From"), Qual(rt, "Limit").Call(Op("&").Id("fsmSpec"), Id("st").Dot("From"), Id("st").Dot("Event"), Lit(c.Name), tripLimit(c))))
					continue
				}
				var body []Code
				if c.Summary != nil {
					body = append(body, Id("summary"+c.Summary.GoName).Op("=").Add(summaryExpr(c, Id("to"))))
				}
				body = append(body, List(Id("to"), Id("redirected")).Op("=").List(Id("State"+c.Then.GoName), True()))
				b.If(Id("trip" + c.GoName).Op("&&").Op("!").Id("redirected")).Block(body...)
			}
		}
		// Requirements, when a state the transition can enter requires fields.
		if g.targetsRequire(t) {
			check := Id("errs").Op(":=").Id("m").Dot("Context").Dot("requirements").Call(Id("to"), Nil())
			if len(summaries) > 0 {
				// The target's requirements see the summaries the machine is about to write.
				b.Id("after").Op(":=").Id("m").Dot("Context")
				for _, fd := range summaries {
					b.If(Id("summary" + fd.GoName).Op("!=").Lit("")).Block(Id("after").Dot(fd.GoName).Op("=").Id("summary" + fd.GoName))
				}
				check = Id("errs").Op(":=").Id("after").Dot("requirements").Call(Id("to"), Nil())
			}
			body := []Code{
				If(Id("dry")).Block(Return(Id("st").Dot("From"), Id("ErrValidation"))),
				Return(Id("st").Dot("From"), Qual(rt, "Validation").Call(Op("&").Id("fsmSpec"), Id("st").Dot("From"), Id("st").Dot("Event"), Id("to"), False(), Id("errs"),
					Id("m").Dot("PermittedWith").Call(Id("ctx"), Op("*").Id("in"), Nil()))),
			}
			switch {
			case !internal:
				b.If(check, Id("errs").Op("!=").Nil()).Block(body...)
			case redirects:
				b.If(Id("redirected")).Block(If(check, Id("errs").Op("!=").Nil()).Block(body...))
			}
		}
		b.If(Id("dry")).Block(Return(Id("to"), Nil()))
		b.Id("st").Dot("To").Op("=").Id("to")
		if g.timing {
			b.Id("st").Dot("At").Op("=").Id("m").Dot("now").Call(Id("in"))
		}

		// Apply: summaries, exit, actions, counters, state, entry, checkpoints.
		for _, fd := range summaries {
			b.If(Id("summary" + fd.GoName).Op("!=").Lit("")).Block(Id("m").Dot("Context").Dot(fd.GoName).Op("=").Id("summary" + fd.GoName))
		}
		if g.exits {
			if !internal {
				b.Id("m").Dot("exit").Call(Id("ctx"), Id("st"))
			} else if redirects {
				b.If(Id("redirected")).Block(Id("m").Dot("exit").Call(Id("ctx"), Id("st")))
			}
		}
		for _, a := range t.Actions {
			b.Id("m").Dot("hooks").Dot(a.GoName).Call(Id("ctx"), Id("m"), Id("st"))
		}
		slot := func(c *ir.Counter) *Statement {
			v := Id("m").Dot(c.CountField())
			if c.PerState {
				v = v.Index(Id("st").Dot("From"))
			}
			return v
		}
		for _, c := range t.Increment {
			if c.Limit > 0 {
				b.If(Id("trip" + c.GoName)).Block(slot(c).Op("=").Lit(0)).Else().Block(slot(c).Op("++"))
			} else {
				b.Add(slot(c)).Op("++")
			}
		}
		for _, c := range t.Reset {
			b.Add(slot(c)).Op("=").Lit(0)
		}
		var resets []Code
		for _, c := range m.Counters {
			if c.ResetOnSuccess && !slices.Contains(t.Increment, c) {
				resets = append(resets, slot(c).Op("=").Lit(0))
			}
		}
		if len(resets) > 0 {
			switch {
			case !internal:
				for _, r := range resets {
					b.Add(r)
				}
			case redirects:
				b.If(Id("redirected")).Block(resets...)
			}
		}
		if g.remembers && (!internal || redirects) {
			b.If(Id("to").Op("!=").Id("st").Dot("From")).Block(Id("m").Dot("remember").Call(Id("st").Dot("From"), Id("to")))
		}
		b.Id("m").Dot("state").Op("=").Id("to")
		if g.timing {
			switch {
			case !internal:
				b.Id("m").Dot("moveClock").Call(Id("st"))
			case redirects:
				b.If(Id("redirected")).Block(Id("m").Dot("moveClock").Call(Id("st")))
			}
		}
		if g.entries {
			if !internal {
				b.Id("m").Dot("enter").Call(Id("ctx"), Id("st"))
			} else if redirects {
				b.If(Id("redirected")).Block(Id("m").Dot("enter").Call(Id("ctx"), Id("st")))
			}
		}
		args := []Code{Id("ctx"), Id("st"), Id("in"), Lit(t.Index)}
		if len(m.Checkpoints) > 0 {
			if t.Checkpoint != nil {
				args = append(args, Id("Checkpoint"+t.Checkpoint.GoName))
			} else {
				args = append(args, Id("noCheckpoint"))
			}
		}
		b.Return(Id("to"), Id("m").Dot("commit").Call(args...))
	})
	f.Line()
}

func (g *gen) historyBody(h *ir.State) []Code {
	st, set := h.MemoryFields()
	return []Code{
		If(Op("!").Id("m").Dot(set)).Block(
			Return(Id("st").Dot("From"), Qual(rt, "NoHistory").Call(Op("&").Id("fsmSpec"), Id("st").Dot("From"), Id("st").Dot("Event"), Id("State"+h.GoName))),
		),
		Id("to").Op("=").Id("m").Dot(st),
	}
}

func (g *gen) historyTarget(b *Group, h *ir.State) {
	for _, c := range g.historyBody(h) {
		b.Add(c)
	}
}

// targetsRequire reports whether any state t can enter requires context fields.
func (g *gen) targetsRequire(t *ir.Transition) bool {
	for _, s := range t.From {
		for _, d := range t.Targets(s) {
			if len(d.Requires) > 0 {
				return true
			}
		}
	}
	return false
}

// entryExit emits the methods that run entry and exit actions by state.
func (g *gen) entryExit(f *File) {
	for _, x := range []struct {
		name, field string
		any         bool
		acts        func(*ir.State) []*ir.Action
	}{
		{"exit", "From", g.exits, func(s *ir.State) []*ir.Action { return s.Exit }},
		{"enter", "To", g.entries, func(s *ir.State) []*ir.Action { return s.Entry }},
	} {
		if !x.any {
			continue
		}
		f.Commentf("// %s runs the %s actions of st.%s.", x.name, map[string]string{"exit": "exit", "enter": "entry"}[x.name], x.field)
		f.Func().Params(Id("m").Op("*").Id(g.T)).Id(x.name).Params(ctxParam(), Id("st").Id(g.name("Step"))).BlockFunc(func(b *Group) {
			var cases []Code
			for _, s := range g.m.States {
				acts := x.acts(s)
				if len(acts) == 0 {
					continue
				}
				var body []Code
				for _, a := range acts {
					body = append(body, Id("m").Dot("hooks").Dot(a.GoName).Call(Id("ctx"), Id("m"), Id("st")))
				}
				cases = append(cases, Case(Id("State"+s.GoName)).Block(body...))
			}
			b.Switch(Id("st").Dot(x.field)).Block(cases...)
		})
		f.Line()
	}
}

// plain reports whether t is taken by take, the one method of every transition that does
// nothing of its own but move to a fixed target (or stay, internal) and increment counters
// without limits and reset counters: what it does is data (its target at the call, its
// counters in loggedTransitions), not a method of its own.
func (g *gen) plain(t *ir.Transition) bool {
	if len(t.Roles) > 0 || len(t.Actions) > 0 || g.targetsRequire(t) {
		return false
	}
	if t.Target.Kind != ir.Fixed && t.Target.Kind != ir.Internal {
		return false
	}
	for _, c := range t.Increment {
		if c.Limit > 0 {
			return false
		}
	}
	return true
}

// plainPair returns the transition of a (state, event) pair that step takes from
// plainSteps: the pair's only transition, plain and unguarded; else nil.
func (g *gen) plainPair(ts []*ir.Transition) *ir.Transition {
	if len(ts) == 1 && !ts[0].Guarded() && g.plain(ts[0]) {
		return ts[0]
	}
	return nil
}

// plainStepsTable emits plainSteps, by state and event the plain transition step takes
// (its index + 1), 0 where step decides in code.
func (g *gen) plainStepsTable(f *File) {
	m := g.m
	f.Comment("// plainSteps is, by state and event, the index + 1 of the transition step applies with take\n// when it is the pair's only transition, plain and unguarded; 0 where step decides in code.")
	f.Var().Id("plainSteps").Op("=").Index(Id("NumStates")).Index(Id("NumEvents")).Id(uintType(len(m.Transitions) + 1)).ValuesFunc(func(rows *Group) {
		for _, s := range m.States {
			rows.Line().ValuesFunc(func(row *Group) {
				for _, e := range m.Events {
					n := 0
					if t := g.plainPair(m.Lookup(s, e)); t != nil {
						n = t.Index + 1
					}
					row.Lit(n)
				}
			})
		}
		rows.Line()
	})
	f.Line()
}

// take emits the method that applies a plain transition (see plain) from its row of
// loggedTransitions, in the order the methods of the other transitions do.
func (g *gen) take(f *File) {
	m := g.m
	params := []Code{ctxParam(), Id("st").Id(g.name("Step")), g.inPtr(), Id("dry").Bool(), Id("t").Int()}
	f.Comment(comment("take applies transition t, a plain one: it moves to its one target (or stays, internal,\nexiting and entering nothing) and does nothing of its own but count. A transition with\nroles, actions, a computed target, limits or required fields has a method of its own."))
	f.Func().Params(Id("m").Op("*").Id(g.T)).Id("take").Params(params...).Params(Id("State"), Error()).BlockFunc(func(b *Group) {
		b.Id("lt").Op(":=").Op("&").Id("loggedTransitions").Index(Id("t"))
		b.Id("to").Op(":=").Id("st").Dot("From")
		b.If(Op("!").Id("lt").Dot("internal")).Block(Id("to").Op("=").Id("lt").Dot("to").Index(Lit(0)))
		b.If(Id("dry")).Block(Return(Id("to"), Nil()))
		b.Id("st").Dot("To").Op("=").Id("to")
		if g.timing {
			b.Id("st").Dot("At").Op("=").Id("m").Dot("now").Call(Id("in"))
		}
		if g.exits {
			b.If(Op("!").Id("lt").Dot("internal")).Block(Id("m").Dot("exit").Call(Id("ctx"), Id("st")))
		}
		if len(m.Counters) > 0 {
			b.For(List(Id("_"), Id("c")).Op(":=").Range().Id("lt").Dot("inc")).Block(Op("*").Id("m").Dot("counter").Call(Id("c"), Id("st").Dot("From")).Op("++"))
			b.For(List(Id("_"), Id("c")).Op(":=").Range().Id("lt").Dot("reset")).Block(Op("*").Id("m").Dot("counter").Call(Id("c"), Id("st").Dot("From")).Op("=").Lit(0))
			if g.resetsOnSuccess {
				b.If(Op("!").Id("lt").Dot("internal")).Block(
					For(List(Id("_"), Id("c")).Op(":=").Range().Id("resetOnSuccess")).Block(
						If(Op("!").Qual("slices", "Contains").Call(Id("lt").Dot("inc"), Id("c"))).Block(Op("*").Id("m").Dot("counter").Call(Id("c"), Id("st").Dot("From")).Op("=").Lit(0)),
					),
				)
			}
		}
		if g.remembers {
			b.If(Op("!").Id("lt").Dot("internal").Op("&&").Id("to").Op("!=").Id("st").Dot("From")).Block(Id("m").Dot("remember").Call(Id("st").Dot("From"), Id("to")))
		}
		b.Id("m").Dot("state").Op("=").Id("to")
		if g.timing {
			b.If(Op("!").Id("lt").Dot("internal")).Block(Id("m").Dot("moveClock").Call(Id("st")))
		}
		if g.entries {
			b.If(Op("!").Id("lt").Dot("internal")).Block(Id("m").Dot("enter").Call(Id("ctx"), Id("st")))
		}
		args := []Code{Id("ctx"), Id("st"), Id("in"), Id("t")}
		if len(m.Checkpoints) > 0 {
			args = append(args, Id("lt").Dot("cp"))
		}
		b.Return(Id("to"), Id("m").Dot("commit").Call(args...))
	})
	f.Line()
}

// pairFacts computes, once, whether some (state, event) pair is in plainSteps, and whether
// some pair needs step to decide (moveStep), so that Can cannot answer from the dispatch
// table alone.
func (g *gen) pairFacts() {
	for _, s := range g.m.States {
		for _, e := range g.m.Events {
			g.plainPairs = g.plainPairs || g.plainPair(g.m.Lookup(s, e)) != nil
			g.anyStep = g.anyStep || g.move(s, e) == moveStep
		}
	}
}
