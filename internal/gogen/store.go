package gogen

import (
	"slices"

	. "github.com/dave/jennifer/jen"
	"github.com/fsmgen/fsmgen/internal/ir"
)

// commitFunc emits commit: what every accepted transition does last. It counts the
// transition, records it in the history, appends it to the store's event log, and takes
// the checkpoints (the hook, then a snapshot saved to the store).
func (g *gen) commitFunc(f *File) {
	m := g.m
	T := g.T
	params := []Code{ctxParam(), Id("st").Id(g.name("Step")), g.inPtr(), Id("t").Int()}
	if len(m.Checkpoints) > 0 {
		f.Comment("// noCheckpoint stands for a transition that names no checkpoint of its own.")
		f.Const().Id("noCheckpoint").Op("=").Id("Checkpoint").Call(Lit(len(m.Checkpoints)))
		f.Line()
		params = append(params, Id("cp").Id("Checkpoint"))
	}
	f.Comment("// commit finishes an accepted transition (t is its index in the spec): sequence number and\n// history here, event log and checkpoints in persist, which a machine without a store or\n// checkpoints skips.")
	f.Func().Params(Id("m").Op("*").Id(T)).Id("commit").Params(params...).Error().BlockFunc(func(b *Group) {
		b.Id("m").Dot("seq").Op("++")
		if g.timing {
			b.Id("m").Dot("updatedAt").Op("=").Id("st").Dot("At")
		}
		if g.resumes {
			b.List(Id("m").Dot("lastFrom"), Id("m").Dot("lastEvent")).Op("=").List(Id("st").Dot("From"), Id("st").Dot("Event"))
		}
		if m.RecordHistory {
			b.Id("m").Dot("history").Dot("Add").Call(Id(g.name("Record")).Values(Dict{
				Id("From"): Id("st").Dot("From"), Id("To"): Id("st").Dot("To"), Id("Event"): Id("st").Dot("Event"), Id("EventID"): Id("in").Dot("EventID"),
				Id("At"): Id("st").Dot("At"), Id("Actor"): Id("in").Dot("Actor"), Id("Reason"): Id("in").Dot("Reason")}))
		}
		args := []Code{Id("ctx"), Id("st"), Id("in"), Id("t")}
		skip := Id("m").Dot("store").Op("==").Nil()
		if len(m.Checkpoints) > 0 {
			args = append(args, Id("cp"))
			if g.everyCheckpoint {
				skip = nil
			} else {
				skip = skip.Op("&&").Id("cp").Op("==").Id("noCheckpoint")
			}
		}
		if skip != nil {
			b.If(skip).Block(Return(Nil()))
		}
		b.Return(Id("m").Dot("persist").Call(args...))
	})
	f.Line()
	f.Comment("// persist appends the transition to the store's event log and takes the checkpoints: the\n// hook, then a snapshot saved to the store. It is the only place a machine that keeps no\n// time reads the clock, for the time of the transition.")
	f.Func().Params(Id("m").Op("*").Id(T)).Id("persist").Params(params...).Error().BlockFunc(func(b *Group) {
		if !g.timing {
			stampUntimed(b)
		}
		b.If(Id("m").Dot("store").Op("!=").Nil()).Block(
			List(Id("e"), Err()).Op(":=").Id("m").Dot("logEntry").Call(Id("st"), Id("in"), Id("t")),
			If(Err().Op("==").Nil()).Block(Err().Op("=").Id("m").Dot("store").Dot("Append").Call(Id("ctx"), Id("m").Dot("ID"), Id("e"))),
			If(Err().Op("!=").Nil()).Block(
				Return(Qual(rt, "StoreFailed").Call(Op("&").Id("fsmSpec"), Lit("append"), Id("m").Dot("seq"), Err())),
			),
		)
		if len(m.Checkpoints) == 0 {
			b.Return(Nil())
			return
		}
		b.For(List(Id("i"), Id("c")).Op(":=").Range().Index(Op("...")).Id("Checkpoint").ValuesFunc(func(v *Group) {
			v.Id("cp")
			for _, c := range m.EveryCheckpoints() {
				v.Id("Checkpoint" + c.GoName)
			}
		})).Block(
			If(Id("c").Op("==").Id("noCheckpoint").Op("||").Id("i").Op(">").Lit(0).Op("&&").Id("c").Op("==").Id("cp")).Block(Continue()),
			If(Err().Op(":=").Id("m").Dot("hooks").Dot("Checkpoint").Call(Id("ctx"), Id("m"), Id("c"), Id("st")), Err().Op("!=").Nil()).Block(
				Return(Op("&").Id("CheckpointError").Values(Dict{Id("Checkpoint"): Id("c"), Id("Err"): Err()})),
			),
			If(Id("m").Dot("store").Op("!=").Nil().Op("&&").Id("m").Dot("saved").Op("!=").Id("m").Dot("seq")).Block(
				If(Err().Op(":=").Id("m").Dot("store").Dot("Save").Call(Id("ctx"), Id("m").Dot("ID"), Id("m").Dot("saved"), Id("m").Dot("Snapshot").Call()), Err().Op("!=").Nil()).Block(
					Return(Qual(rt, "StoreFailed").Call(Op("&").Id("fsmSpec"), Lit("save"), Id("m").Dot("seq"), Err())),
				),
				Id("m").Dot("saved").Op("=").Id("m").Dot("seq"),
			),
		)
		b.Return(Nil())
	})
	f.Line()
}

// stampUntimed emits how a machine that keeps no time dates a transition: the input's At,
// else the time now.
func stampUntimed(b *Group) {
	b.Id("m").Dot("updatedAt").Op("=").Id("in").Dot("At")
	b.If(Id("m").Dot("updatedAt").Dot("IsZero").Call()).Block(Id("m").Dot("updatedAt").Op("=").Qual("time", "Now").Call())
}

// Kinds of event log entries.
const (
	kindTransition = "STATE_TRANSITION"
	kindResumed    = "STATE_RESUMED"
)

// store emits the persistence seam: the Store interface, the event log entry, StoreError,
// an in-memory Store, Replay and, for machines that checkpoint every transition, Resume.
func (g *gen) store(f *File) {
	S := g.name("Store")
	L := g.name("LogEntry")

	f.Comment(comment(S + " persists machines: an append-only event log of every accepted transition, and\nthe snapshot taken at the last checkpoint (fsmrt.Store: optimistic concurrency on sequence\nnumbers, conflicts wrap ErrStoreConflict). It is the seam for database adapters."))
	f.Type().Id(S).Op("=").Qual(rt, "Store").Types(Id(L), Id(g.name("Snapshot")))
	f.Line()
	f.Comment("// ErrStoreConflict is what a Store returns when another writer got there first.")
	f.Var().Id("ErrStoreConflict").Op("=").Qual(rt, "ErrStoreConflict")
	f.Line()
	f.Comment("// StoreError says the store refused or failed to persist an accepted transition. The\n// transition has happened in memory.")
	f.Type().Id("StoreError").Op("=").Qual(rt, "StoreError")
	f.Line()
	g.logEntryType(f)
	g.loggedTransitions(f)
	g.replay(f)
	if g.resumes {
		g.resume(f)
	}
	g.memoryStore(f)
}

// logEntryType emits the event log entry and logEntry, which describes a transition.
func (g *gen) logEntryType(f *File) {
	m := g.m
	T := g.T
	L := g.name("LogEntry")
	entry := []Code{
		doc("Seq numbers the machine's accepted transitions from 1."),
		Id("Seq").Int64().Tag(map[string]string{"json": "seq"}),
		doc("Timestamp is when the transition happened: the input's At, else the machine's clock."),
		Id("Timestamp").Qual("time", "Time").Tag(map[string]string{"json": "timestamp"}),
		Id("TaskID").String().Tag(map[string]string{"json": "taskId"}),
	}
	if g.timing {
		entry = append(entry, doc("Created is when the machine was created, in its first entry only: replaying the whole\nlog restores the time spent in the initial state."),
			Id("Created").Qual("time", "Time").Tag(map[string]string{"json": "created,omitzero"}))
	}
	kindDoc := "Kind is STATE_TRANSITION."
	if g.resumes {
		kindDoc = "Kind is STATE_TRANSITION, or STATE_RESUMED for a machine Resume" + T + " took out of a terminal\nstate (From) back to the state it had left (To); Trigger is then the event that had\nended it."
	}
	entry = append(entry,
		doc(kindDoc),
		Id("Kind").String().Tag(map[string]string{"json": "event"}),
		Id("Trigger").Id("Event").Tag(map[string]string{"json": "trigger"}),
		Id("From").Id("State").Tag(map[string]string{"json": "from"}),
		Id("To").Id("State").Tag(map[string]string{"json": "to"}),
		doc("Transition is the index of the declared transition that fired, in spec order from 0\n(-1 for a resumption): replaying applies its bookkeeping without asking the guards."),
		Id("Transition").Int().Tag(map[string]string{"json": "transition"}),
	)
	if len(m.Roles) > 0 {
		entry = append(entry, Id("Role").Id("Role").Tag(map[string]string{"json": "role,omitempty"}))
	}
	entry = append(entry,
		Id("Actor").String().Tag(map[string]string{"json": "actor"}),
		Id("Reason").String().Tag(map[string]string{"json": "reason"}),
	)
	entry = append(entry, Id("EventID").String().Tag(map[string]string{"json": "eventId,omitempty"}))
	if m.Idempotent {
		entry = append(entry, Id("Key").String().Tag(map[string]string{"json": "idempotencyKey,omitempty"}))
	}
	if len(m.Policies) > 0 {
		entry = append(entry, doc("Policies are the machine's policies after the transition."),
			Id("Policies").Op("*").Id(g.name("Policies")).Tag(map[string]string{"json": "policies,omitempty"}))
	}
	if len(g.configurables) > 0 {
		entry = append(entry, doc("Limits are the configurable limits changed at run time, by counter name, as the spec\nwrites them (nil: the spec's)."),
			Id("Limits").Map(String()).Int().Tag(map[string]string{"json": "limits,omitempty"}))
	}
	entry = append(entry,
		doc("Context is the machine's context after the transition, as its actions left it."),
		Id("Context").Qual("encoding/json", "RawMessage").Tag(map[string]string{"json": "context,omitempty"}),
		doc("Payload is the event's payload, for events that carry one."),
		Id("Payload").Qual("encoding/json", "RawMessage").Tag(map[string]string{"json": "payload,omitempty"}),
		Id("Metadata").Map(String()).String().Tag(map[string]string{"json": "metadata"}),
	)
	f.Comment(comment(L + " is one entry of the event log, in the JSON form of the seed documents:\n{\"timestamp\", \"taskId\", \"event\": \"STATE_TRANSITION\", \"from\", \"to\", \"actor\", \"reason\",\n\"metadata\"}, plus what replaying it needs: the transition that fired and the machine's\ndata after it."))
	f.Type().Id(L).Struct(entry...)
	f.Line()

	f.Comment("// logEntry describes an accepted transition (t: its index) for the event log.")
	f.Func().Params(Id("m").Op("*").Id(T)).Id("logEntry").Params(Id("st").Id(g.name("Step")), g.inPtr(), Id("t").Int()).Params(Id(L), Error()).BlockFunc(func(b *Group) {
		d := Dict{
			Id("Seq"): Id("m").Dot("seq"), Id("Timestamp"): Id("m").Dot("updatedAt"), Id("TaskID"): Id("m").Dot("ID"), Id("Kind"): Lit(kindTransition),
			Id("Trigger"): Id("st").Dot("Event"), Id("From"): Id("st").Dot("From"), Id("To"): Id("st").Dot("To"), Id("Transition"): Id("t"),
			Id("Actor"): Id("in").Dot("Actor"), Id("Reason"): Id("in").Dot("Reason"), Id("Metadata"): Map(String()).String().Values(),
		}
		if len(m.Roles) > 0 {
			d[Id("Role")] = Id("in").Dot("Role")
		}
		d[Id("EventID")] = Id("in").Dot("EventID")
		if m.Idempotent {
			d[Id("Key")] = Id("in").Dot("Key")
		}
		if len(m.Policies) > 0 {
			b.Id("policies").Op(":=").Id("m").Dot("Policies").Comment("a copy: the entry must not change with the machine")
			d[Id("Policies")] = Op("&").Id("policies")
		}
		if len(g.configurables) > 0 {
			d[Id("Limits")] = Id("m").Dot("changedLimits").Call()
		}
		b.Id("e").Op(":=").Id(L).Values(d)
		if g.timing {
			b.If(Id("m").Dot("seq").Op("==").Lit(1)).Block(Id("e").Dot("Created").Op("=").Id("m").Dot("createdAt"))
		}
		b.Var().Err().Error()
		var cases []Code
		for _, ev := range m.Events {
			if len(ev.Payload) > 0 {
				cases = append(cases, Case(Id("Event"+ev.GoName)).Block(
					List(Id("e").Dot("Payload"), Err()).Op("=").Qual("encoding/json", "Marshal").Call(Id("m").Dot("payload"+ev.GoName)),
				))
			}
		}
		context := List(Id("e").Dot("Context"), Err()).Op("=").Qual("encoding/json", "Marshal").Call(Id("m").Dot("Context"))
		if len(cases) > 0 {
			b.Switch(Id("st").Dot("Event")).Block(cases...)
			b.If(Err().Op("==").Nil()).Block(context)
		} else {
			b.Add(context)
		}
		b.Return(Id("e"), Err())
	})
	f.Line()
}

// replayTrip restarts counter c (at *n) when the replayed increment tripped its limit: the
// limit in force, for a machine with configurable limits.
func (g *gen) replayTrip() *Statement {
	if len(g.configurables) > 0 {
		return If(Id("limit").Op(":=").Id("m").Dot("limit").Call(Id("c")), Id("limit").Op(">").Lit(0).Op("&&").Op("*").Id("n").Op(">=").Id("limit")).Block(Op("*").Id("n").Op("=").Lit(0))
	}
	return If(Id("counterLimits").Index(Id("c")).Op(">").Lit(0).Op("&&").Op("*").Id("n").Op(">=").Id("counterLimits").Index(Id("c"))).Block(Op("*").Id("n").Op("=").Lit(0))
}

// internalFlag reports whether loggedTransitions says which transitions are internal: for
// replay (see replayInternal) or for take.
func (g *gen) internalFlag() bool { return g.replayInternal() || g.plains }

// replayInternal reports whether replaying a log entry must know that its transition is
// internal: such a transition neither moves the clock nor resets the counters that reset on
// success.
func (g *gen) replayInternal() bool { return g.timing || g.resetsOnSuccess }

// loggedTransitions emits the table Replay checks log entries against and applies their
// bookkeeping from, and the counter accessor it uses.
func (g *gen) loggedTransitions(f *File) {
	m := g.m
	T := g.T
	fields := []Code{List(Id("from"), Id("to")).Index().Id("State"), Id("on").Index().Id("Event")}
	if g.internalFlag() {
		fields = append(fields, Id("internal").Bool())
	}
	if len(m.Counters) > 0 {
		fields = append(fields, List(Id("inc"), Id("reset")).Index().Int().Comment("counters, by index"))
	}
	cps := g.plains && len(m.Checkpoints) > 0
	if cps {
		fields = append(fields, Id("cp").Id("Checkpoint").Comment("its own checkpoint, or noCheckpoint"))
	}
	f.Comment(comment("loggedTransition is a declared transition as replaying the event log sees it (and take, which\napplies a plain transition): the states it leaves, its events, the states it can lead to" + map[bool]string{true: ", whether it is internal", false: ""}[g.internalFlag()] + map[bool]string{true: ", the\ncounters it increments and resets", false: ""}[len(m.Counters) > 0] + map[bool]string{true: ", its checkpoint", false: ""}[cps] + "."))
	f.Type().Id("loggedTransition").Struct(fields...)
	f.Line()
	states := func(ss []*ir.State) Code {
		return Index().Id("State").ValuesFunc(func(v *Group) {
			for _, s := range ss {
				v.Id("State" + s.GoName)
			}
		})
	}
	f.Comment("// loggedTransitions are the spec's transitions, in order: a log entry's Transition indexes it.")
	f.Var().Id("loggedTransitions").Op("=").Index(Op("...")).Id("loggedTransition").ValuesFunc(func(rows *Group) {
		for _, t := range m.Transitions {
			var to []*ir.State
			for _, s := range t.From {
				for _, x := range t.Targets(s) {
					if !slices.Contains(to, x) {
						to = append(to, x)
					}
				}
			}
			slices.SortFunc(to, func(a, b *ir.State) int { return a.Index - b.Index })
			// One line per transition, fields in declaration order.
			var items []Code
			field := func(name string, v Code) { items = append(items, Id(name).Op(":").Add(v)) }
			field("from", states(t.From))
			field("to", states(to))
			field("on", Index().Id("Event").ValuesFunc(func(v *Group) {
				for _, e := range t.Events {
					v.Id("Event" + e.GoName)
				}
			}))
			if g.internalFlag() && t.Target.Kind == ir.Internal {
				field("internal", True())
			}
			counters := func(cs []*ir.Counter) Code {
				return Index().Int().ValuesFunc(func(v *Group) {
					for _, c := range cs {
						v.Lit(c.Index)
					}
				})
			}
			if len(t.Increment) > 0 {
				field("inc", counters(t.Increment))
			}
			if len(t.Reset) > 0 {
				field("reset", counters(t.Reset))
			}
			if cps {
				if t.Checkpoint != nil {
					field("cp", Id("Checkpoint"+t.Checkpoint.GoName))
				} else {
					field("cp", Id("noCheckpoint"))
				}
			}
			rows.Line().Values(items...)
		}
		rows.Line()
	})
	f.Line()
	if len(m.Counters) == 0 {
		return
	}
	if g.limited {
		f.Comment("// counterLimits are the counters' limits (0: none), by index.")
		f.Var().Id("counterLimits").Op("=").Index(Lit(len(m.Counters))).Int().ValuesFunc(func(v *Group) {
			for _, c := range m.Counters {
				v.Lit(c.Limit)
			}
		})
		f.Line()
	}
	if len(g.configurables) > 0 {
		f.Comment("// limit returns the limit of counter i in force (0: none), as counterLimits counts it.")
		f.Func().Params(Id("m").Op("*").Id(T)).Id("limit").Params(Id("i").Int()).Int().BlockFunc(func(b *Group) {
			var cases []Code
			for _, c := range g.configurables {
				cases = append(cases, Case(Lit(c.Index)).Block(Return(Id("m").Dot(c.LimitField()))))
			}
			b.Switch(Id("i")).Block(cases...)
			b.Return(Id("counterLimits").Index(Id("i")))
		})
		f.Line()
	}
	if g.resetsOnSuccess {
		f.Comment("// resetOnSuccess are the counters every successful transition resets, by index.")
		f.Var().Id("resetOnSuccess").Op("=").Index().Int().ValuesFunc(func(v *Group) {
			for _, c := range m.Counters {
				if c.ResetOnSuccess {
					v.Lit(c.Index)
				}
			}
		})
		f.Line()
	}
	f.Comment("// counter returns counter i (of state s for a per-state counter).")
	f.Func().Params(Id("m").Op("*").Id(T)).Id("counter").Params(Id("i").Int(), Id("s").Id("State")).Op("*").Int().BlockFunc(func(b *Group) {
		ref := func(c *ir.Counter) Code {
			v := Id("m").Dot(c.CountField())
			if c.PerState {
				v = v.Index(Id("s"))
			}
			return Return(Op("&").Add(v))
		}
		last := m.Counters[len(m.Counters)-1]
		if len(m.Counters) == 1 {
			b.Add(ref(last))
			return
		}
		var cases []Code
		for _, c := range m.Counters[:len(m.Counters)-1] {
			cases = append(cases, Case(Lit(c.Index)).Block(ref(c)))
		}
		b.Switch(Id("i")).Block(cases...)
		b.Add(ref(last))
	})
	f.Line()
}

// replay emits Replay and apply, which replays one log entry.
func (g *gen) replay(f *File) {
	m := g.m
	T := g.T
	S := g.name("Store")
	L := g.name("LogEntry")
	hookParam, hookArg := g.hookParams(), g.hookArgs()
	f.Comment(comment("Replay" + T + " rebuilds machine id from its store: the last snapshot (or a new machine),\nthen every later log entry applied as it was recorded: the transition's counters, memory,\nhistory and idempotency key, and the state, context, policies and payload after it. No\nhook runs: guards are not asked again, and actions and checkpoints, done when the\ntransitions happened, are not repeated. It fails with a fsmrt.LogError (errors.Is\nErrInvalidLog) if the log has a gap or an entry is not a transition of this machine from\nthe state the log has reached, and with a fsmrt.SnapshotError if the snapshot is not one\nthe machine could have taken. The machine returned has no store: set one to fire on."))
	f.Func().Id("Replay"+T).Params(append([]Code{ctxParam(), Id("store").Id(S), Id("id").String()}, hookParam...)...).Params(Op("*").Id(T), Error()).BlockFunc(func(b *Group) {
		b.List(Id("s"), Id("ok"), Id("log"), Err()).Op(":=").Id("store").Dot("Load").Call(Id("ctx"), Id("id"))
		b.If(Err().Op("!=").Nil()).Block(Return(Nil(), Err()))
		b.Id("m").Op(":=").Id("New" + T).Call(hookArg...)
		b.Id("m").Dot("ID").Op("=").Id("id")
		restore := []Code{
			If(List(Id("m"), Err()).Op("=").Id("Restore"+T).Call(append([]Code{Id("s")}, hookArg...)...), Err().Op("!=").Nil()).Block(Return(Nil(), Err())),
		}
		if m.RecordHistory || m.Idempotent {
			restore = append(restore,
				Comment("The snapshot holds the present; the last of the past is in the log before it."),
				List(Id("past"), Err()).Op(":=").Id("store").Dot("Log").Call(Id("ctx"), Id("id"), Max(Lit(0), Id("s").Dot("Seq").Op("-").Int64().Call(Qual(rt, "DefaultWindow")))),
				If(Err().Op("!=").Nil()).Block(Return(Nil(), Err())),
				For(Id("i").Op(":=").Range().Id("past")).Block(
					If(Id("past").Index(Id("i")).Dot("Seq").Op(">").Id("s").Dot("Seq")).Block(Break()),
					Id("m").Dot("recall").Call(Op("&").Id("past").Index(Id("i"))),
				),
			)
		}
		b.If(Id("ok")).Block(restore...)
		if g.timing {
			b.Comment("Without a snapshot the creation time is in the first entry.")
			b.If(Op("!").Id("ok").Op("&&").Len(Id("log")).Op(">").Lit(0)).Block(
				List(Id("m").Dot("createdAt"), Id("m").Dot("enteredAt")).Op("=").List(Id("log").Index(Lit(0)).Dot("Created"), Id("log").Index(Lit(0)).Dot("Created")),
			)
		}
		b.Id("m").Dot("saved").Op("=").Id("m").Dot("seq")
		b.For(Id("i").Op(":=").Range().Id("log")).Block(
			If(Err().Op(":=").Id("m").Dot("apply").Call(Op("&").Id("log").Index(Id("i"))), Err().Op("!=").Nil()).Block(
				Return(Nil(), Qual(rt, "InvalidLog").Call(Op("&").Id("fsmSpec"), Id("id"), Id("log").Index(Id("i")).Dot("Seq"), Err())),
			),
		)
		b.Return(Id("m"), Nil())
	})
	f.Line()

	f.Comment(comment("apply replays log entry e: it checks that e is the next entry and a transition of this\nmachine from the current state, then applies what the transition did, without hooks."))
	f.Func().Params(Id("m").Op("*").Id(T)).Id("apply").Params(Id("e").Op("*").Id(L)).Error().BlockFunc(func(b *Group) {
		b.If(Id("e").Dot("Seq").Op("!=").Id("m").Dot("seq").Op("+").Lit(1)).Block(
			Return(Qual("fmt", "Errorf").Call(Lit("the log has a gap: seq %d follows %d"), Id("e").Dot("Seq"), Id("m").Dot("seq"))),
		)
		b.If(Id("e").Dot("Timestamp").Dot("IsZero").Call()).Block(
			Return(Qual("errors", "New").Call(Lit("the entry has no timestamp"))),
		)
		if len(m.Policies) > 0 {
			b.If(Id("e").Dot("Policies").Op("!=").Nil()).Block(Id("m").Dot("Policies").Op("=").Op("*").Id("e").Dot("Policies"))
		}
		if len(g.configurables) > 0 {
			b.If(Err().Op(":=").Id("m").Dot("setLimits").Call(Id("e").Dot("Limits")), Err().Op("!=").Nil()).Block(Return(Err()))
		}
		b.If(Len(Id("e").Dot("Context")).Op(">").Lit(0)).Block(
			Id("m").Dot("Context").Op("=").Id(g.name("Context")).Values(),
			If(Err().Op(":=").Qual("encoding/json", "Unmarshal").Call(Id("e").Dot("Context"), Op("&").Id("m").Dot("Context")), Err().Op("!=").Nil()).Block(Return(Err())),
		)
		var cases []Code
		for _, ev := range m.Events {
			if len(ev.Payload) == 0 {
				continue
			}
			p := Id("m").Dot("payload" + ev.GoName)
			cases = append(cases, Case(Id("Event"+ev.GoName)).Block(
				p.Clone().Op("=").Id(ev.GoName+"Payload").Values(),
				Err().Op("=").Qual("encoding/json", "Unmarshal").Call(Id("e").Dot("Payload"), Op("&").Add(p.Clone())),
				Comment("A payload the event was refused with cannot have been recorded."),
				If(Id("errs").Op(":=").Add(p.Clone()).Dot("Validate").Call(), Err().Op("==").Nil().Op("&&").Id("errs").Op("!=").Nil()).Block(
					Err().Op("=").Qual("fmt", "Errorf").Call(Lit("invalid payload: %s: %s"), Id("errs").Index(Lit(0)).Dot("Field"), Id("errs").Index(Lit(0)).Dot("Message")),
				),
			))
		}
		if len(cases) > 0 {
			b.Var().Err().Error()
			b.Switch(Id("e").Dot("Trigger")).Block(cases...)
			b.If(Err().Op("!=").Nil()).Block(Return(Err()))
		}
		resumable := g.resumes
		needT := len(m.Counters) > 0 || g.replayInternal()
		// transition checks an entry against the declared transition it names and applies
		// the transition's counters.
		transition := func(b *Group) {
			at := Id("loggedTransitions").Index(Id("e").Dot("Transition"))
			b.If(Id("e").Dot("From").Op("!=").Id("m").Dot("state").Op("||").Id("e").Dot("Transition").Op("<").Lit(0).Op("||").Id("e").Dot("Transition").Op(">=").Len(Id("loggedTransitions")).Op("||").
				Op("!").Qual("slices", "Contains").Call(at.Clone().Dot("from"), Id("e").Dot("From")).Op("||").
				Op("!").Qual("slices", "Contains").Call(at.Clone().Dot("on"), Id("e").Dot("Trigger")).Op("||").
				Op("!").Qual("slices", "Contains").Call(at.Clone().Dot("to"), Id("e").Dot("To"))).Block(
				Return(Qual("fmt", "Errorf").Call(Lit("%s -> %s on %s is not transition %d from %s"), Id("e").Dot("From"), Id("e").Dot("To"), Id("e").Dot("Trigger"), Id("e").Dot("Transition"), Id("m").Dot("state"))),
			)
			if !needT {
				return
			}
			b.Id("t").Op(":=").Op("&").Add(at)
			if g.replayInternal() {
				// An internal transition (unless a limit redirected it) neither moves the clock
				// nor resets the counters that reset on success.
				op := ":="
				if resumable && g.timing {
					op = "="
				}
				b.Id("moved").Op(op).Op("!").Id("t").Dot("internal").Op("||").Id("e").Dot("To").Op("!=").Id("e").Dot("From")
			}
			if len(m.Counters) > 0 {
				counter := Id("m").Dot("counter").Call(Id("c"), Id("e").Dot("From"))
				if g.limited {
					b.For(List(Id("_"), Id("c")).Op(":=").Range().Id("t").Dot("inc")).Block(
						Id("n").Op(":=").Add(counter),
						Op("*").Id("n").Op("++"),
						Comment("A tripped limit redirected the transition and restarted the counter."),
						g.replayTrip(),
					)
				} else {
					b.For(List(Id("_"), Id("c")).Op(":=").Range().Id("t").Dot("inc")).Block(Op("*").Add(counter.Clone()).Op("++"))
				}
				b.For(List(Id("_"), Id("c")).Op(":=").Range().Id("t").Dot("reset")).Block(Op("*").Add(counter.Clone()).Op("=").Lit(0))
				if g.resetsOnSuccess {
					b.If(Id("moved")).Block(
						For(List(Id("_"), Id("c")).Op(":=").Range().Id("resetOnSuccess")).Block(
							If(Op("!").Qual("slices", "Contains").Call(Id("t").Dot("inc"), Id("c"))).Block(Op("*").Add(counter.Clone()).Op("=").Lit(0)),
						),
					)
				}
			}
		}
		if resumable && g.timing {
			b.Id("moved").Op(":=").True()
		}
		if resumable {
			b.Id("resumed").Op(":=").Id("e").Dot("Kind").Op("==").Lit(kindResumed)
			b.If(Id("resumed")).Block(
				Comment("Out of a terminal state, back to a state that is not: no transition of the spec."),
				If(Id("e").Dot("From").Op("!=").Id("m").Dot("state").Op("||").Op("!").Id("e").Dot("From").Dot("IsTerminal").Call().Op("||").Id("e").Dot("To").Op(">=").Id("NumStates").Op("||").Id("e").Dot("To").Dot("IsTerminal").Call()).Block(
					Return(Qual("fmt", "Errorf").Call(Lit("resumed from %s to %s in %s"), Id("e").Dot("From"), Id("e").Dot("To"), Id("m").Dot("state"))),
				),
				Comment("A resumption goes back to the state the last transition left, and nowhere else."),
				If(Id("e").Dot("To").Op("!=").Id("m").Dot("lastFrom")).Block(
					Return(Qual("fmt", "Errorf").Call(Lit("resumed to %s, but the last transition left %s"), Id("e").Dot("To"), Id("m").Dot("lastFrom"))),
				),
			).Else().BlockFunc(transition)
		} else {
			transition(b)
		}
		notResumed := func(c *Statement) *Statement {
			if resumable {
				return Op("!").Id("resumed").Op("&&").Add(c)
			}
			return c
		}
		if g.remembers {
			b.If(notResumed(Id("e").Dot("To").Op("!=").Id("e").Dot("From"))).Block(Id("m").Dot("remember").Call(Id("e").Dot("From"), Id("e").Dot("To")))
		}
		b.Id("m").Dot("state").Op("=").Id("e").Dot("To")
		if g.timing {
			b.If(Id("moved")).Block(Id("m").Dot("moveClock").Call(Id(g.name("Step")).Values(Dict{Id("From"): Id("e").Dot("From"), Id("To"): Id("e").Dot("To"), Id("At"): Id("e").Dot("Timestamp")})))
		}
		if m.RecordHistory || m.Idempotent {
			b.Id("m").Dot("recall").Call(Id("e"))
		}
		b.List(Id("m").Dot("seq"), Id("m").Dot("updatedAt")).Op("=").List(Id("e").Dot("Seq"), Id("e").Dot("Timestamp"))
		if resumable {
			b.List(Id("m").Dot("lastFrom"), Id("m").Dot("lastEvent")).Op("=").List(Id("e").Dot("From"), Id("e").Dot("Trigger"))
		}
		b.Return(Nil())
	})
	f.Line()
	if m.RecordHistory || m.Idempotent {
		what := map[bool]string{true: "the history record", false: ""}[m.RecordHistory]
		if m.Idempotent {
			if what != "" {
				what += " and "
			}
			what += "the idempotency key"
		}
		f.Comment(comment("recall puts what log entry e says of the machine's past into the windows it keeps in\nmemory: " + what + "."))
		f.Func().Params(Id("m").Op("*").Id(T)).Id("recall").Params(Id("e").Op("*").Id(L)).BlockFunc(func(b *Group) {
			if m.RecordHistory {
				rec := Id("m").Dot("history").Dot("Add").Call(Id(g.name("Record")).Values(Dict{
					Id("From"): Id("e").Dot("From"), Id("To"): Id("e").Dot("To"), Id("Event"): Id("e").Dot("Trigger"), Id("EventID"): Id("e").Dot("EventID"),
					Id("At"): Id("e").Dot("Timestamp"), Id("Actor"): Id("e").Dot("Actor"), Id("Reason"): Id("e").Dot("Reason")}))
				if g.resumes {
					b.If(Id("e").Dot("Kind").Op("!=").Lit(kindResumed)).Block(rec)
				} else {
					b.Add(rec)
				}
			}
			if m.Idempotent {
				b.If(Id("e").Dot("Key").Op("!=").Lit("")).Block(
					Id("m").Dot("keys").Dot("Put").Call(Id("e").Dot("Key"), Id("idempotencyRecord").Values(Dict{Id("event"): Id("e").Dot("Trigger"), Id("state"): Id("e").Dot("To")})),
				)
			}
		})
		f.Line()
	}
}

// resume emits Resume, for machines that checkpoint every transition.
func (g *gen) resume(f *File) {
	T := g.T
	S := g.name("Store")
	hookParam, hookArg := g.hookParams(), g.hookArgs()
	storeErr := func(op string) Code {
		return Return(Nil(), Qual(rt, "StoreFailed").Call(Op("&").Id("fsmSpec"), Lit(op), Id("m").Dot("seq"), Err()))
	}
	f.Comment(comment("Resume" + T + " loads machine id from its store, as Replay" + T + " does, and resumes it if it has\nended: a machine in a terminal state goes back to the state its last transition left,\nwith everything else (context, counters, ...) as that transition's checkpoint saved it,\nsince the checkpoint taken on every transition is kept.\nThe resumption is appended to the event log as a STATE_RESUMED entry, which replaying\napplies, and a snapshot of the resumed machine is saved. A machine that has not ended is\nreturned as loaded. No hook runs. The machine returned has the store set, so that its\nlog continues; in says who resumes it, when and why."))
	f.Func().Id("Resume"+T).Params(append(append([]Code{ctxParam(), Id("store").Id(S), Id("id").String()}, hookParam...), g.in())...).Params(Op("*").Id(T), Error()).BlockFunc(func(b *Group) {
		b.List(Id("m"), Err()).Op(":=").Id("Replay" + T).Call(append([]Code{Id("ctx"), Id("store"), Id("id")}, hookArg...)...)
		b.If(Err().Op("!=").Nil()).Block(Return(Nil(), Err()))
		b.Id("m").Dot("SetStore").Call(Id("store"))
		b.If(Op("!").Id("m").Dot("state").Dot("IsTerminal").Call()).Block(Return(Id("m"), Nil()))
		b.Id("st").Op(":=").Id(g.name("Step")).Values(Dict{Id("From"): Id("m").Dot("state"), Id("To"): Id("m").Dot("lastFrom"), Id("Event"): Id("m").Dot("lastEvent")})
		b.List(Id("m").Dot("state"), Id("m").Dot("lastFrom")).Op("=").List(Id("st").Dot("To"), Id("st").Dot("From"))
		b.Id("m").Dot("seq").Op("++")
		if g.timing {
			b.Id("st").Dot("At").Op("=").Id("m").Dot("now").Call(Op("&").Id("in"))
			b.Id("m").Dot("moveClock").Call(Id("st"))
			b.Id("m").Dot("updatedAt").Op("=").Id("st").Dot("At")
		} else {
			stampUntimed(b)
		}
		b.List(Id("e"), Err()).Op(":=").Id("m").Dot("logEntry").Call(Id("st"), Op("&").Id("in"), Lit(-1))
		b.Id("e").Dot("Kind").Op("=").Lit(kindResumed)
		b.If(Err().Op("==").Nil()).Block(Err().Op("=").Id("store").Dot("Append").Call(Id("ctx"), Id("id"), Id("e")))
		b.If(Err().Op("!=").Nil()).Block(storeErr("append"))
		b.If(Err().Op(":=").Id("store").Dot("Save").Call(Id("ctx"), Id("id"), Id("m").Dot("saved"), Id("m").Dot("Snapshot").Call()), Err().Op("!=").Nil()).Block(storeErr("save"))
		b.Id("m").Dot("saved").Op("=").Id("m").Dot("seq")
		b.Return(Id("m"), Nil())
	})
	f.Line()
}

// memoryStore emits the in-memory Store: the runtime's, for the machine's types.
func (g *gen) memoryStore(f *File) {
	L := g.name("LogEntry")
	SN := g.name("Snapshot")
	MS := g.name("MemoryStore")
	f.Comment(comment(MS + " is a " + g.name("Store") + " in memory, safe for concurrent use: the default that needs no\nserver (fsmrt.MemoryStore). It keeps snapshots as JSON, so that what Load returns is what\na database adapter would return."))
	f.Type().Id(MS).Op("=").Qual(rt, "MemoryStore").Types(Id(L), Id(SN))
	f.Line()
	f.Comment("// New" + MS + " returns an empty store.")
	f.Func().Id("New" + MS).Params().Op("*").Id(MS).Block(Return(Qual(rt, "NewMemoryStore").Types(Id(L), Id(SN)).Call()))
	f.Line()
	f.Comment("// Sequence returns the entry's sequence number, for the store.")
	f.Func().Params(Id("e").Id(L)).Id("Sequence").Params().Int64().Block(Return(Id("e").Dot("Seq")))
	f.Line()
	if g.m.Idempotent {
		f.Comment("// IdempotencyKey returns the entry's idempotency key, for the store (fsmrt.KeyFinder).")
		f.Func().Params(Id("e").Id(L)).Id("IdempotencyKey").Params().String().Block(Return(Id("e").Dot("Key")))
		f.Line()
	}
	f.Comment("// Sequence returns the snapshot's sequence number, for the store.")
	f.Func().Params(Id("s").Id(SN)).Id("Sequence").Params().Int64().Block(Return(Id("s").Dot("Seq")))
	f.Line()
}
