package gogen

import (
	"fmt"

	. "github.com/dave/jennifer/jen"
)

// timing emits the clock seam and, for specs with timeouts, the timeout queries. Nothing
// here is generated for machines that never read the clock.
func (g *gen) timingAPI(f *File) {
	if !g.timing {
		return
	}
	m := g.m
	T := g.T
	recv := func() *Statement { return Func().Params(Id("m").Op("*").Id(T)) }

	f.Comment("// Clock tells the time. Machines read it only when the spec asks for time (timeouts,\n// history); set a fake one with SetClock in tests, or pass Input.At.")
	f.Type().Id("Clock").Op("=").Qual(rt, "Clock")
	f.Line()
	f.Comment("// SetClock replaces the machine's clock. Call it right after construction: it also\n// restarts the machine's creation time and its time in the current state.")
	f.Add(recv()).Id("SetClock").Params(Id("c").Id("Clock")).Block(
		Id("m").Dot("clock").Op("=").Id("c"),
		Id("m").Dot("createdAt").Op("=").Id("c").Dot("Now").Call(),
		Id("m").Dot("enteredAt").Op("=").Id("m").Dot("createdAt"),
	)
	f.Line()
	f.Add(recv()).Id("now").Params(Id("in").Op("*").Id(g.name("Input"))).Qual("time", "Time").Block(
		If(Op("!").Id("in").Dot("At").Dot("IsZero").Call()).Block(Return(Id("in").Dot("At"))),
		Return(Id("m").Dot("clock").Dot("Now").Call()),
	)
	f.Line()
	f.Comment("// moveClock accounts for leaving st.From and entering st.To at st.At.")
	f.Add(recv()).Id("moveClock").Params(Id("st").Id(g.name("Step"))).Block(
		If(Id("st").Dot("From").Op("<").Id("NumStates")).Block(
			Id("m").Dot("timeByState").Index(Id("st").Dot("From")).Op("+=").Id("st").Dot("At").Dot("Sub").Call(Id("m").Dot("enteredAt")),
		),
		Id("m").Dot("enteredAt").Op("=").Id("st").Dot("At"),
	)
	f.Line()
	f.Comment("// CreatedAt returns when the machine was created.")
	f.Add(recv()).Id("CreatedAt").Params().Qual("time", "Time").Block(Return(Id("m").Dot("createdAt")))
	f.Line()
	f.Comment("// TotalTime returns how long the machine has existed at now.")
	f.Add(recv()).Id("TotalTime").Params(Id("now").Qual("time", "Time")).Qual("time", "Duration").Block(Return(Id("now").Dot("Sub").Call(Id("m").Dot("createdAt"))))
	f.Line()
	f.Comment("// TimeByState returns the time spent in each state at now, the current stay included.")
	f.Add(recv()).Id("TimeByState").Params(Id("now").Qual("time", "Time")).Index(Id("NumStates")).Qual("time", "Duration").Block(
		Id("t").Op(":=").Id("m").Dot("timeByState"),
		If(Id("m").Dot("state").Op("<").Id("NumStates")).Block(Id("t").Index(Id("m").Dot("state")).Op("+=").Id("m").Dot("TimeInState").Call(Id("now"))),
		Return(Id("t")),
	)
	f.Line()
	f.Comment("// EnteredAt returns when the current state was entered.")
	f.Add(recv()).Id("EnteredAt").Params().Qual("time", "Time").Block(Return(Id("m").Dot("enteredAt")))
	f.Line()
	f.Comment("// TimeInState returns how long the machine has been in its state at now.")
	f.Add(recv()).Id("TimeInState").Params(Id("now").Qual("time", "Time")).Qual("time", "Duration").Block(Return(Id("now").Dot("Sub").Call(Id("m").Dot("enteredAt"))))
	f.Line()

	if !g.timeouts {
		return
	}
	f.Comment("// defaultTimeouts returns the spec's timeout of every state (0: none).")
	f.Func().Id("defaultTimeouts").Params().Index(Id("NumStates")).Qual("time", "Duration").BlockFunc(func(b *Group) {
		b.Var().Id("t").Index(Id("NumStates")).Qual("time", "Duration")
		for _, s := range m.States {
			if s.Timeout != nil {
				b.Id("t").Index(Id("State" + s.GoName)).Op("=").Add(durationLit(int64(s.Timeout.After)))
			}
		}
		b.Return(Id("t"))
	})
	f.Line()
	f.Comment("// Timeout returns the timeout of state s (0: none).")
	f.Add(recv()).Id("Timeout").Params(Id("s").Id("State")).Qual("time", "Duration").Block(
		If(Id("s").Op(">=").Id("NumStates")).Block(Return(Lit(0))),
		Return(Id("m").Dot("timeouts").Index(Id("s"))),
	)
	f.Line()
	var configurable []Code
	for _, s := range m.States {
		if s.Timeout != nil && s.Timeout.Configurable {
			configurable = append(configurable, Id("State"+s.GoName))
		}
	}
	if len(configurable) > 0 {
		f.Comment("// SetTimeout changes the timeout of a state the spec marks configurable.")
		f.Add(recv()).Id("SetTimeout").Params(Id("s").Id("State"), Id("d").Qual("time", "Duration")).Error().Block(
			Switch(Id("s")).Block(Case(configurable...).Block(
				If(Id("d").Op("<=").Lit(0)).Block(Return(Qual("fmt", "Errorf").Call(Lit(m.Package+": timeout of %s must be positive"), Id("s")))),
				Id("m").Dot("timeouts").Index(Id("s")).Op("=").Id("d"),
				Return(Nil()),
			)),
			Return(Qual("fmt", "Errorf").Call(Lit(m.Package+": the timeout of %s is not configurable"), Id("s"))),
		)
		f.Line()
	}
	f.Comment("// TimeoutLevel returns the highest timeout level the current state has reached at now,\n// or LevelNone. Levels are reported, never enforced, and computed exactly for any\n// duration (fsmrt.Reached).")
	f.Add(recv()).Id("TimeoutLevel").Params(Id("now").Qual("time", "Time")).Id("TimeoutLevel").BlockFunc(func(b *Group) {
		b.Id("d").Op(":=").Id("m").Dot("timeouts").Index(Id("m").Dot("state"))
		b.If(Id("d").Op("<=").Lit(0)).Block(Return(Id("LevelNone")))
		b.Id("elapsed").Op(":=").Id("now").Dot("Sub").Call(Id("m").Dot("enteredAt"))
		var cases []Code
		for _, s := range m.States {
			if s.Timeout == nil {
				continue
			}
			var body []Code
			for i := len(s.Timeout.Levels) - 1; i >= 0; i-- {
				l := s.Timeout.Levels[i]
				body = append(body, If(Qual(rt, "Reached").Call(Id("elapsed"), Id("d"), Lit(l.Percent))).Block(Return(Id("Level"+l.GoName))))
			}
			cases = append(cases, Case(Id("State"+s.GoName)).Block(body...))
		}
		b.Switch(Id("m").Dot("state")).Block(cases...)
		b.Return(Id("LevelNone"))
	})
	f.Line()

	var expiring []Code
	for _, s := range m.States {
		if s.Timeout != nil && s.Timeout.OnExpiry != nil {
			expiring = append(expiring, Case(Id("State"+s.GoName)).Block(Id("e").Op("=").Id("Event"+s.Timeout.OnExpiry.GoName)))
		}
	}
	if len(expiring) > 0 {
		f.Comment("// Expire fires the state's on_expiry event when its timeout has passed at now, and\n// reports whether it did. Only states with on_expiry expire; other timeouts are reports.")
		f.Add(recv()).Id("Expire").Params(ctxParam(), Id("now").Qual("time", "Time")).Params(Bool(), Id("State"), Error()).BlockFunc(func(b *Group) {
			b.Var().Id("e").Id("Event")
			b.Switch(Id("m").Dot("state")).Block(append(expiring, Default().Block(Return(False(), Id("m").Dot("state"), Nil())))...)
			b.If(Id("m").Dot("TimeInState").Call(Id("now")).Op("<").Id("m").Dot("timeouts").Index(Id("m").Dot("state"))).Block(Return(False(), Id("m").Dot("state"), Nil()))
			b.List(Id("to"), Err()).Op(":=").Id("m").Dot("FireWith").Call(Id("ctx"), Id("e"), Id(g.name("Input")).Values(Dict{Id("At"): Id("now")}))
			b.Return(Err().Op("==").Nil(), Id("to"), Err())
		})
		f.Line()
	}
}

func durationLit(ns int64) *Statement {
	units := []struct {
		d    int64
		name string
	}{{3600e9, "Hour"}, {60e9, "Minute"}, {1e9, "Second"}, {1e6, "Millisecond"}}
	for _, u := range units {
		if ns%u.d == 0 {
			return Lit(int(ns/u.d)).Op("*").Qual("time", u.name)
		}
	}
	return Qual("time", "Duration").Call(Lit(ns))
}

var _ = fmt.Sprint
