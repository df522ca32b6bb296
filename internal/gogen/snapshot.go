package gogen

import (
	"fmt"

	. "github.com/dave/jennifer/jen"
	"github.com/fsmgen/fsmgen/internal/ir"
)

// SnapshotVersion is the version of the snapshot format generated code writes.
const SnapshotVersion = 1

// snapshot emits the snapshot type, Snapshot and Restore, and CheckpointError.
func (g *gen) snapshot(f *File) {
	m := g.m
	T := g.T
	S := g.name("Snapshot")

	if len(m.Checkpoints) > 0 {
		g.checkpointError(f)
	}

	var counterFields []Code
	for _, c := range m.Counters {
		if c.PerState {
			counterFields = append(counterFields, Id(c.GoName).Map(Id("State")).Int().Tag(map[string]string{"json": c.GoName + ",omitempty"}))
		} else {
			counterFields = append(counterFields, Id(c.GoName).Int().Tag(map[string]string{"json": c.GoName + ",omitempty"}))
		}
	}
	fields := []Code{
		Comment(fmt.Sprintf("Version is the snapshot format, %d.", SnapshotVersion)),
		Id("Version").Int().Tag(map[string]string{"json": "version"}),
		Id("ID").String().Tag(map[string]string{"json": "id"}),
		doc("Seq is the number of transitions accepted when the snapshot was taken."),
		Id("Seq").Int64().Tag(map[string]string{"json": "seq"}),
		Id("State").Id("State").Tag(map[string]string{"json": "state"}),
		doc("UpdatedAt is when the last transition the machine persisted happened (its input's At,\nelse the clock): every transition with a store, those that reach a checkpoint without\none, every transition for a machine with a clock. Zero until then."),
		Id("UpdatedAt").Qual("time", "Time").Tag(map[string]string{"json": "updatedAt"}),
		Id("Context").Id(g.name("Context")).Tag(map[string]string{"json": "context"}),
	}
	if g.resumes {
		fields = append(fields, doc("Last is the last transition's source state and event: where Resume"+T+" takes a machine\nthat has ended back to (meaningless while Seq is 0)."),
			Id("Last").Struct(Id("From").Id("State").Tag(map[string]string{"json": "from"}), Id("Event").Id("Event").Tag(map[string]string{"json": "event"})).Tag(map[string]string{"json": "last"}))
	}
	var payloadFields []Code
	for _, e := range m.Events {
		if len(e.Payload) > 0 {
			payloadFields = append(payloadFields, Id(e.GoName).Id(e.GoName+"Payload").Tag(map[string]string{"json": e.Name + ",omitzero"}))
		}
	}
	if len(payloadFields) > 0 {
		fields = append(fields, doc("Payloads are the last payload of each event that carries one."),
			Id("Payloads").Struct(payloadFields...).Tag(map[string]string{"json": "payloads"}))
	}
	if len(m.Policies) > 0 {
		fields = append(fields, Id("Policies").Id(g.name("Policies")).Tag(map[string]string{"json": "policies"}))
	}
	if len(m.Counters) > 0 {
		fields = append(fields, doc("Counters hold every counter; per-state counters by state, zeros left out."),
			Id("Counters").Struct(counterFields...).Tag(map[string]string{"json": "counters"}))
	}
	if g.remembers {
		fields = append(fields, doc("Remembered maps each remembering state to the state it was entered from."),
			Id("Remembered").Map(Id("State")).Id("State").Tag(map[string]string{"json": "remembered,omitempty"}))
	}
	if g.timing {
		fields = append(fields,
			Id("CreatedAt").Qual("time", "Time").Tag(map[string]string{"json": "createdAt"}),
			Id("EnteredAt").Qual("time", "Time").Tag(map[string]string{"json": "enteredAt"}),
			doc("TimeByState is the time spent in each state before the current stay."),
			Id("TimeByState").Map(Id("State")).Qual("time", "Duration").Tag(map[string]string{"json": "timeByState,omitempty"}))
	}
	if g.timeouts {
		fields = append(fields, doc("Timeouts holds timeouts changed at run time."),
			Id("Timeouts").Map(Id("State")).Qual("time", "Duration").Tag(map[string]string{"json": "timeouts,omitempty"}))
	}
	if len(g.configurables) > 0 {
		fields = append(fields, doc("Limits holds the configurable limits changed at run time, by counter name, as the spec\nwrites them."),
			Id("Limits").Map(String()).Int().Tag(map[string]string{"json": "limits,omitempty"}))
	}
	past := ""
	if m.RecordHistory || m.Idempotent {
		past = "\nIts past (the transition history, the idempotency keys used) is in the event log, not\nhere, so that taking a snapshot costs the same however old the machine is."
	}
	f.Comment(comment(S + " is the machine's present, in a form that encodes to JSON by name and restores\nwith Restore" + T + "." + past))
	f.Type().Id(S).Struct(fields...)
	f.Line()

	f.Comment("// Snapshot returns the machine's state, context and bookkeeping. It shares nothing with the\n// machine except the slices and maps of the context and payloads.")
	f.Func().Params(Id("m").Op("*").Id(T)).Id("Snapshot").Params().Id(S).BlockFunc(func(b *Group) {
		b.Id("s").Op(":=").Id(S).Values(Dict{Id("Version"): Lit(SnapshotVersion), Id("ID"): Id("m").Dot("ID"), Id("Seq"): Id("m").Dot("seq"), Id("State"): Id("m").Dot("state"), Id("UpdatedAt"): Id("m").Dot("updatedAt"), Id("Context"): Id("m").Dot("Context")})
		for _, e := range m.Events {
			if len(e.Payload) > 0 {
				b.Id("s").Dot("Payloads").Dot(e.GoName).Op("=").Id("m").Dot("payload" + e.GoName)
			}
		}
		if g.resumes {
			b.List(Id("s").Dot("Last").Dot("From"), Id("s").Dot("Last").Dot("Event")).Op("=").List(Id("m").Dot("lastFrom"), Id("m").Dot("lastEvent"))
		}
		if len(m.Policies) > 0 {
			b.Id("s").Dot("Policies").Op("=").Id("m").Dot("Policies")
		}
		for _, c := range m.Counters {
			if !c.PerState {
				b.Id("s").Dot("Counters").Dot(c.GoName).Op("=").Id("m").Dot(c.CountField())
				continue
			}
			b.For(List(Id("st"), Id("n")).Op(":=").Range().Id("m").Dot(c.CountField())).Block(
				If(Id("n").Op("!=").Lit(0)).Block(
					If(Id("s").Dot("Counters").Dot(c.GoName).Op("==").Nil()).Block(Id("s").Dot("Counters").Dot(c.GoName).Op("=").Map(Id("State")).Int().Values()),
					Id("s").Dot("Counters").Dot(c.GoName).Index(Id("State").Call(Id("st"))).Op("=").Id("n"),
				),
			)
		}
		for _, s := range m.States {
			if !s.Remembers {
				continue
			}
			st, set := s.MemoryFields()
			b.If(Id("m").Dot(set)).Block(
				If(Id("s").Dot("Remembered").Op("==").Nil()).Block(Id("s").Dot("Remembered").Op("=").Map(Id("State")).Id("State").Values()),
				Id("s").Dot("Remembered").Index(Id("State"+s.GoName)).Op("=").Id("m").Dot(st),
			)
		}
		if g.timing {
			b.Id("s").Dot("CreatedAt").Op(",").Id("s").Dot("EnteredAt").Op("=").List(Id("m").Dot("createdAt"), Id("m").Dot("enteredAt"))
			b.For(List(Id("st"), Id("d")).Op(":=").Range().Id("m").Dot("timeByState")).Block(
				If(Id("d").Op("!=").Lit(0)).Block(
					If(Id("s").Dot("TimeByState").Op("==").Nil()).Block(Id("s").Dot("TimeByState").Op("=").Map(Id("State")).Qual("time", "Duration").Values()),
					Id("s").Dot("TimeByState").Index(Id("State").Call(Id("st"))).Op("=").Id("d"),
				),
			)
		}
		if g.timeouts {
			b.Id("def").Op(":=").Id("defaultTimeouts").Call()
			b.For(List(Id("st"), Id("d")).Op(":=").Range().Id("m").Dot("timeouts")).Block(
				If(Id("d").Op("!=").Id("def").Index(Id("st"))).Block(
					If(Id("s").Dot("Timeouts").Op("==").Nil()).Block(Id("s").Dot("Timeouts").Op("=").Map(Id("State")).Qual("time", "Duration").Values()),
					Id("s").Dot("Timeouts").Index(Id("State").Call(Id("st"))).Op("=").Id("d"),
				),
			)
		}
		if len(g.configurables) > 0 {
			b.Id("s").Dot("Limits").Op("=").Id("m").Dot("changedLimits").Call()
		}
		b.Return(Id("s"))
	})
	f.Line()

	f.Comment(comment("UnmarshalJSON decodes a snapshot. It refuses with a fsmrt.SnapshotError a snapshot that does\nnot decode, or whose version or state is missing or null (decoding would leave the initial\nstate)."))
	f.Func().Params(Id("s").Op("*").Id(S)).Id("UnmarshalJSON").Params(Id("b").Index().Byte()).Error().Block(
		Type().Id("plain").Id(S),
		Return(Qual(rt, "DecodeSnapshot").Call(Op("&").Id("fsmSpec"), Id("b"), Parens(Op("*").Id("plain")).Call(Id("s")))),
	)
	f.Line()

	params := append([]Code{Id("s").Id(S)}, g.hookParams()...)
	// bad refuses the snapshot: field is its JSON path, the reason a format and arguments.
	bad := func(field Code, format string, args ...Code) Code {
		reason := Code(Lit(format))
		if len(args) > 0 {
			reason = Qual("fmt", "Sprintf").Call(append([]Code{Lit(format)}, args...)...)
		}
		return Return(Nil(), Qual(rt, "InvalidSnapshot").Call(Op("&").Id("fsmSpec"), field, reason))
	}
	f.Comment(comment("Restore" + T + " rebuilds a machine from a snapshot. It refuses, with a fsmrt.SnapshotError\n(errors.Is ErrInvalidSnapshot), a snapshot the machine could never have taken: of another\nformat version, with values that are not states or events of this machine, negative\ncounters or counters past their limit, a remembered state its state cannot remember,\ntimeouts of states whose timeout is not configurable, payloads that break their\nconstraints."))
	f.Func().Id("Restore"+T).Params(params...).Params(Op("*").Id(T), Error()).BlockFunc(func(b *Group) {
		b.If(Id("s").Dot("Version").Op("!=").Lit(SnapshotVersion)).Block(bad(Lit("version"), "unsupported snapshot version %d", Id("s").Dot("Version")))
		b.If(Id("s").Dot("State").Op(">=").Id("NumStates")).Block(bad(Lit("state"), "%d is not a state", Id("s").Dot("State")))
		b.If(Id("s").Dot("Seq").Op("<").Lit(0)).Block(bad(Lit("seq"), "%d is negative", Id("s").Dot("Seq")))
		if g.resumes {
			b.If(Id("s").Dot("Last").Dot("From").Op(">=").Id("NumStates").Op("||").Id("s").Dot("Last").Dot("Event").Op(">=").Id("NumEvents")).Block(
				bad(Lit("last"), "%d, %d is not a state and an event", Id("s").Dot("Last").Dot("From"), Id("s").Dot("Last").Dot("Event")))
		}
		for _, e := range m.Events {
			if len(e.Payload) == 0 {
				continue
			}
			p := Id("s").Dot("Payloads").Dot(e.GoName)
			b.If(Id("errs").Op(":=").Add(p.Clone()).Dot("Validate").Call(), Id("errs").Op("!=").Nil().Op("&&").Op("!").Add(g.payloadZero(p, e))).Block(
				bad(Lit("payloads."+e.Name), "%s: %s", Id("errs").Index(Lit(0)).Dot("Field"), Id("errs").Index(Lit(0)).Dot("Message")))
		}
		for _, c := range m.Counters {
			field := "counters." + c.GoName
			limit := c.Limit > 0 && !c.Configurable
			if !c.PerState {
				n := Id("s").Dot("Counters").Dot(c.GoName)
				b.If(n.Clone().Op("<").Lit(0)).Block(bad(Lit(field), "%d is negative", n.Clone()))
				if limit {
					b.If(n.Clone().Op(">=").Lit(c.Limit)).Block(bad(Lit(field), fmt.Sprintf("%%d is past the %s of %d", c.BoundKey(), c.Bound()), n.Clone()))
				}
				continue
			}
			body := []Code{
				If(Id("st").Op(">=").Id("NumStates")).Block(bad(Lit(field), "%d is not a state", Id("st"))),
				If(Id("n").Op("<").Lit(0)).Block(bad(Lit(field), "%d in %s is negative", Id("n"), Id("st"))),
			}
			if limit {
				body = append(body, If(Id("n").Op(">=").Lit(c.Limit)).Block(bad(Lit(field), fmt.Sprintf("%%d in %%s is past the %s of %d", c.BoundKey(), c.Bound()), Id("n"), Id("st"))))
			}
			b.For(List(Id("st"), Id("n")).Op(":=").Range().Id("s").Dot("Counters").Dot(c.GoName)).Block(body...)
		}
		if g.timeouts {
			var configurable []Code
			for _, st := range m.States {
				if st.Timeout != nil && st.Timeout.Configurable {
					configurable = append(configurable, Id("State"+st.GoName))
				}
			}
			check := []Code{
				If(Id("d").Op("<=").Lit(0)).Block(bad(Lit("timeouts"), "%s: %v is not positive", Id("st"), Id("d"))),
			}
			if len(configurable) > 0 {
				check = append([]Code{Switch(Id("st")).Block(Case(configurable...), Default().Block(bad(Lit("timeouts"), "the timeout of %s is not configurable", Id("st"))))}, check...)
			} else {
				check = []Code{bad(Lit("timeouts"), "the timeout of %s is not configurable", Id("st"))}
			}
			b.For(List(Id("st"), Id("d")).Op(":=").Range().Id("s").Dot("Timeouts")).Block(check...)
		}
		args := []Code{}
		if g.hooks {
			args = append(args, Id("hooks"))
		}
		b.Id("m").Op(":=").Id("New" + T).Call(args...)
		b.Id("m").Dot("state").Op("=").Id("s").Dot("State")
		b.List(Id("m").Dot("ID"), Id("m").Dot("seq"), Id("m").Dot("saved")).Op("=").List(Id("s").Dot("ID"), Id("s").Dot("Seq"), Id("s").Dot("Seq"))
		b.List(Id("m").Dot("Context"), Id("m").Dot("updatedAt")).Op("=").List(Id("s").Dot("Context"), Id("s").Dot("UpdatedAt"))
		if g.resumes {
			b.List(Id("m").Dot("lastFrom"), Id("m").Dot("lastEvent")).Op("=").List(Id("s").Dot("Last").Dot("From"), Id("s").Dot("Last").Dot("Event"))
		}
		for _, e := range m.Events {
			if len(e.Payload) > 0 {
				b.Id("m").Dot("payload" + e.GoName).Op("=").Id("s").Dot("Payloads").Dot(e.GoName)
			}
		}
		if len(m.Policies) > 0 {
			b.Id("m").Dot("Policies").Op("=").Id("s").Dot("Policies")
		}
		for _, c := range m.Counters {
			if !c.PerState {
				b.Id("m").Dot(c.CountField()).Op("=").Id("s").Dot("Counters").Dot(c.GoName)
				continue
			}
			b.For(List(Id("st"), Id("n")).Op(":=").Range().Id("s").Dot("Counters").Dot(c.GoName)).Block(
				Id("m").Dot(c.CountField()).Index(Id("st")).Op("=").Id("n"),
			)
		}
		if g.remembers {
			var cases []Code
			for _, s := range m.States {
				if s.Remembers {
					st, set := s.MemoryFields()
					var from []Code
					for _, x := range s.HistoryFrom {
						from = append(from, Id("State"+x.GoName))
					}
					cases = append(cases, Case(Id("State"+s.GoName)).Block(
						If(Op("!").Qual("slices", "Contains").Call(Index().Id("State").Values(from...), Id("from"))).Block(
							bad(Lit("remembered"), "%s cannot remember %s", Id("st"), Id("from"))),
						List(Id("m").Dot(st), Id("m").Dot(set)).Op("=").List(Id("from"), True())))
				}
			}
			cases = append(cases, Default().Block(bad(Lit("remembered"), "%s does not remember", Id("st"))))
			b.For(List(Id("st"), Id("from")).Op(":=").Range().Id("s").Dot("Remembered")).Block(
				If(Id("from").Op(">=").Id("NumStates")).Block(bad(Lit("remembered"), "%d is not a state", Id("from"))),
				Switch(Id("st")).Block(cases...),
			)
		}
		if g.timing {
			b.List(Id("m").Dot("createdAt"), Id("m").Dot("enteredAt")).Op("=").List(Id("s").Dot("CreatedAt"), Id("s").Dot("EnteredAt"))
			b.For(List(Id("st"), Id("d")).Op(":=").Range().Id("s").Dot("TimeByState")).Block(
				If(Id("st").Op(">=").Id("NumStates")).Block(bad(Lit("timeByState"), "%d is not a state", Id("st"))),
				Id("m").Dot("timeByState").Index(Id("st")).Op("=").Id("d"),
			)
		}
		if g.timeouts {
			b.For(List(Id("st"), Id("d")).Op(":=").Range().Id("s").Dot("Timeouts")).Block(
				Id("m").Dot("timeouts").Index(Id("st")).Op("=").Id("d"),
			)
		}
		if len(g.configurables) > 0 {
			b.If(Err().Op(":=").Id("m").Dot("setLimits").Call(Id("s").Dot("Limits")), Err().Op("!=").Nil()).Block(
				Return(Nil(), Qual(rt, "InvalidSnapshot").Call(Op("&").Id("fsmSpec"), Lit("limits"), Err().Dot("Error").Call())))
		}
		b.Return(Id("m"), Nil())
	})
	f.Line()
}

// payloadZero is the condition "payload p of event e is the zero value": the event has not
// fired, so its payload is not checked.
func (g *gen) payloadZero(p *Statement, e *ir.Event) *Statement {
	var out *Statement
	for _, fd := range e.Payload {
		c := zeroOf(fd, p.Clone().Dot(fd.GoName))
		if out == nil {
			out = c
		} else {
			out = out.Op("&&").Add(c)
		}
	}
	return Parens(out)
}

// checkpointError emits CheckpointError, what Fire returns when a checkpoint hook fails.
func (g *gen) checkpointError(f *File) {
	m := g.m
	f.Comment("// CheckpointError says a checkpoint hook failed. The transition has happened.")
	f.Type().Id("CheckpointError").Struct(Id("Checkpoint").Id("Checkpoint"), Id("Err").Error())
	f.Line()
	f.Func().Params(Id("e").Op("*").Id("CheckpointError")).Id("Error").Params().String().Block(
		Return(Lit(m.Package + ": checkpoint ").Op("+").Id("e").Dot("Checkpoint").Dot("String").Call().Op("+").Lit(": ").Op("+").Id("e").Dot("Err").Dot("Error").Call()),
	)
	f.Line()
	f.Comment("// Unwrap returns the hook's error.")
	f.Func().Params(Id("e").Op("*").Id("CheckpointError")).Id("Unwrap").Params().Error().Block(Return(Id("e").Dot("Err")))
	f.Line()
}
