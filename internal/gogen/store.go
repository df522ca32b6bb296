package gogen

import (
	. "github.com/dave/jennifer/jen"
)

// commitFunc emits commit: what every accepted transition does last. It counts the
// transition, records it in the history, appends it to the store's event log, and takes
// the checkpoints (the hook, then a snapshot saved to the store).
func (g *gen) commitFunc(f *File) {
	m := g.m
	T := g.T
	params := []Code{ctxParam(), Id("st").Id(g.name("Step")), g.inPtr()}
	if len(m.Checkpoints) > 0 {
		f.Comment("// noCheckpoint stands for a transition that names no checkpoint of its own.")
		f.Const().Id("noCheckpoint").Op("=").Id("Checkpoint").Call(Lit(len(m.Checkpoints)))
		f.Line()
		params = append(params, Id("cp").Id("Checkpoint"))
	}
	f.Comment("// commit finishes an accepted transition: sequence number and history here, event log\n// and checkpoints in persist, which a machine without a store or checkpoints skips.")
	f.Func().Params(Id("m").Op("*").Id(T)).Id("commit").Params(params...).Error().BlockFunc(func(b *Group) {
		b.Id("m").Dot("seq").Op("++")
		if m.RecordHistory {
			b.Id("m").Dot("history").Op("=").Append(Id("m").Dot("history"), Id(g.name("Record")).Values(Dict{
				Id("From"): Id("st").Dot("From"), Id("To"): Id("st").Dot("To"), Id("Event"): Id("st").Dot("Event"), Id("EventID"): Id("in").Dot("EventID"),
				Id("At"): Id("st").Dot("At"), Id("Actor"): Id("in").Dot("Actor"), Id("Reason"): Id("in").Dot("Reason")}))
		}
		args := []Code{Id("ctx"), Id("st"), Id("in")}
		skip := Id("m").Dot("store").Op("==").Nil()
		if len(m.Checkpoints) > 0 {
			args = append(args, Id("cp"))
			if len(m.EveryCheckpoints()) > 0 {
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
	f.Comment("// persist appends the transition to the store's event log and takes the checkpoints: the\n// hook, then a snapshot saved to the store.")
	f.Func().Params(Id("m").Op("*").Id(T)).Id("persist").Params(params...).Error().BlockFunc(func(b *Group) {
		b.If(Id("m").Dot("store").Op("!=").Nil()).Block(
			If(Err().Op(":=").Id("m").Dot("store").Dot("Append").Call(Id("ctx"), Id("m").Dot("ID"), Id("m").Dot("logEntry").Call(Id("st"), Id("in"))), Err().Op("!=").Nil()).Block(
				Return(Op("&").Id("StoreError").Values(Dict{Id("Op"): Lit("append"), Id("Seq"): Id("m").Dot("seq"), Id("Err"): Err()})),
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
					Return(Op("&").Id("StoreError").Values(Dict{Id("Op"): Lit("save"), Id("Seq"): Id("m").Dot("seq"), Id("Err"): Err()})),
				),
				Id("m").Dot("saved").Op("=").Id("m").Dot("seq"),
			),
		)
		b.Return(Nil())
	})
	f.Line()
}

// store emits the persistence seam: the Store interface, the event log entry, StoreError,
// an in-memory Store, and Replay.
func (g *gen) store(f *File) {
	m := g.m
	T := g.T
	S := g.name("Store")
	L := g.name("LogEntry")
	pkg := m.Package + ": "

	f.Comment(comment(S + " persists machines: an append-only log of every accepted transition, and\nsnapshots taken at the spec's checkpoints. It is the seam for database adapters.\n\nOptimistic concurrency: log entries carry consecutive sequence numbers (1, 2, 3, ...)\nper machine ID, and Append refuses an entry whose Seq is not the next one; Save replaces\nthe stored snapshot only if its Seq is prev (0 when none is stored). A refusal means\nanother writer got there first: reload with Load and Replay, then fire again."))
	f.Type().Id(S).Interface(
		doc("Append adds an entry to the log of machine id."),
		Id("Append").Params(ctxParam(), Id("id").String(), Id("e").Id(L)).Error(),
		doc("Save stores a snapshot of machine id taken at a checkpoint."),
		Id("Save").Params(ctxParam(), Id("id").String(), Id("prev").Int64(), Id("s").Id(g.name("Snapshot"))).Error(),
		doc("Load returns the last snapshot saved (ok false when none is) and the log entries\nafter it, in order."),
		Id("Load").Params(ctxParam(), Id("id").String()).Params(Id("s").Id(g.name("Snapshot")), Id("ok").Bool(), Id("log").Index().Id(L), Err().Error()),
	)
	f.Line()

	f.Comment("// ErrStoreConflict is what a Store returns when another writer got there first.")
	f.Var().Id("ErrStoreConflict").Op("=").Qual("errors", "New").Call(Lit(pkg + "store version conflict"))
	f.Line()
	f.Comment("// StoreError says the store refused or failed to persist an accepted transition. The\n// transition has happened in memory.")
	f.Type().Id("StoreError").Struct(Id("Op").String(), Id("Seq").Int64(), Id("Err").Error())
	f.Line()
	f.Func().Params(Id("e").Op("*").Id("StoreError")).Id("Error").Params().String().Block(
		Return(Qual("fmt", "Sprintf").Call(Lit(pkg+"store %s of seq %d: %v"), Id("e").Dot("Op"), Id("e").Dot("Seq"), Id("e").Dot("Err"))),
	)
	f.Line()
	f.Comment("// Unwrap returns the store's error.")
	f.Func().Params(Id("e").Op("*").Id("StoreError")).Id("Unwrap").Params().Error().Block(Return(Id("e").Dot("Err")))
	f.Line()

	entry := []Code{
		doc("Seq numbers the machine's accepted transitions from 1."),
		Id("Seq").Int64().Tag(map[string]string{"json": "seq"}),
		Id("Timestamp").Qual("time", "Time").Tag(map[string]string{"json": "timestamp"}),
		Id("TaskID").String().Tag(map[string]string{"json": "taskId"}),
		doc("Kind is always STATE_TRANSITION."),
		Id("Kind").String().Tag(map[string]string{"json": "event"}),
		Id("Trigger").Id("Event").Tag(map[string]string{"json": "trigger"}),
		Id("From").Id("State").Tag(map[string]string{"json": "from"}),
		Id("To").Id("State").Tag(map[string]string{"json": "to"}),
	}
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
		entry = append(entry, doc("Policies are the machine's policies when the event was fired."),
			Id("Policies").Op("*").Id(g.name("Policies")).Tag(map[string]string{"json": "policies,omitempty"}))
	}
	entry = append(entry,
		doc("Context is the machine's context when the event was fired, so that replaying the log\nsees what the guards and required fields saw."),
		Id("Context").Qual("encoding/json", "RawMessage").Tag(map[string]string{"json": "context,omitempty"}),
		doc("Payload is the event's payload, for events that carry one."),
		Id("Payload").Qual("encoding/json", "RawMessage").Tag(map[string]string{"json": "payload,omitempty"}),
		Id("Metadata").Map(String()).String().Tag(map[string]string{"json": "metadata"}),
	)
	f.Comment(comment(L + " is one entry of the event log, in the JSON form of the seed documents:\n{\"timestamp\", \"taskId\", \"event\": \"STATE_TRANSITION\", \"from\", \"to\", \"actor\", \"reason\",\n\"metadata\"}, plus what replaying it needs."))
	f.Type().Id(L).Struct(entry...)
	f.Line()

	f.Comment("// logEntry describes an accepted transition for the event log.")
	f.Func().Params(Id("m").Op("*").Id(T)).Id("logEntry").Params(Id("st").Id(g.name("Step")), g.inPtr()).Id(L).BlockFunc(func(b *Group) {
		if g.timing {
			b.Id("at").Op(":=").Id("st").Dot("At")
		} else {
			b.Id("at").Op(":=").Id("in").Dot("At")
			b.If(Id("at").Dot("IsZero").Call()).Block(Id("at").Op("=").Qual("time", "Now").Call())
		}
		d := Dict{
			Id("Seq"): Id("m").Dot("seq"), Id("Timestamp"): Id("at"), Id("TaskID"): Id("m").Dot("ID"), Id("Kind"): Lit("STATE_TRANSITION"),
			Id("Trigger"): Id("st").Dot("Event"), Id("From"): Id("st").Dot("From"), Id("To"): Id("st").Dot("To"),
			Id("Actor"): Id("in").Dot("Actor"), Id("Reason"): Id("in").Dot("Reason"), Id("Metadata"): Map(String()).String().Values(),
		}
		if len(m.Roles) > 0 {
			d[Id("Role")] = Id("in").Dot("Role")
		}
		d[Id("EventID")] = Id("in").Dot("EventID")
		if m.Idempotent {
			d[Id("Key")] = Id("in").Dot("Key")
		}
		d[Id("Context")] = Id("m").Dot("firedWith")
		if len(m.Policies) > 0 {
			b.Id("policies").Op(":=").Id("m").Dot("Policies").Comment("a copy: the entry must not change with the machine")
			d[Id("Policies")] = Op("&").Id("policies")
		}
		b.Id("e").Op(":=").Id(L).Values(d)
		var cases []Code
		for _, ev := range m.Events {
			if len(ev.Payload) > 0 {
				cases = append(cases, Case(Id("Event"+ev.GoName)).Block(
					List(Id("e").Dot("Payload"), Id("_")).Op("=").Qual("encoding/json", "Marshal").Call(Id("m").Dot("payload"+ev.GoName)),
				))
			}
		}
		if len(cases) > 0 {
			b.Switch(Id("st").Dot("Event")).Block(cases...)
		}
		b.Return(Id("e"))
	})
	f.Line()

	// Replay.
	hookParam := []Code{}
	hookArg := []Code{}
	if g.hooks {
		hookParam = append(hookParam, Id("hooks").Id(g.name("Hooks")))
		hookArg = append(hookArg, Id("hooks"))
	}
	f.Comment(comment("Replay" + T + " rebuilds machine id from its store: the last snapshot (or a new machine),\nthen every later log entry fired again with what it recorded. It fails if the log has a\ngap or a replayed event does not lead where the log says."))
	f.Func().Id("Replay"+T).Params(append([]Code{ctxParam(), Id("store").Id(S), Id("id").String()}, hookParam...)...).Params(Op("*").Id(T), Error()).BlockFunc(func(b *Group) {
		b.List(Id("s"), Id("ok"), Id("log"), Err()).Op(":=").Id("store").Dot("Load").Call(Id("ctx"), Id("id"))
		b.If(Err().Op("!=").Nil()).Block(Return(Nil(), Err()))
		b.Id("m").Op(":=").Id("New" + T).Call(hookArg...)
		b.Id("m").Dot("ID").Op("=").Id("id")
		b.If(Id("ok")).Block(
			If(List(Id("m"), Err()).Op("=").Id("Restore"+T).Call(append([]Code{Id("s")}, hookArg...)...), Err().Op("!=").Nil()).Block(Return(Nil(), Err())),
		)
		if g.timing {
			b.Comment("Without a snapshot the machine's creation time is not stored: take the first event's.")
			b.If(Op("!").Id("ok").Op("&&").Len(Id("log")).Op(">").Lit(0)).Block(
				List(Id("m").Dot("createdAt"), Id("m").Dot("enteredAt")).Op("=").List(Id("log").Index(Lit(0)).Dot("Timestamp"), Id("log").Index(Lit(0)).Dot("Timestamp")),
			)
		}
		b.Id("m").Dot("saved").Op("=").Id("m").Dot("seq")
		b.For(List(Id("_"), Id("e")).Op(":=").Range().Id("log")).BlockFunc(func(lb *Group) {
			lb.If(Id("e").Dot("Seq").Op("!=").Id("m").Dot("seq").Op("+").Lit(1)).Block(
				Return(Nil(), Qual("fmt", "Errorf").Call(Lit(pkg+"replay %s: log entry %d follows %d"), Id("id"), Id("e").Dot("Seq"), Id("m").Dot("seq"))),
			)
			in := Dict{Id("Actor"): Id("e").Dot("Actor"), Id("Reason"): Id("e").Dot("Reason"), Id("At"): Id("e").Dot("Timestamp")}
			if len(m.Roles) > 0 {
				in[Id("Role")] = Id("e").Dot("Role")
			}
			in[Id("EventID")] = Id("e").Dot("EventID")
			if m.Idempotent {
				in[Id("Key")] = Id("e").Dot("Key")
			}
			lb.Id("in").Op(":=").Id(g.name("Input")).Values(in)
			if len(m.Policies) > 0 {
				lb.If(Id("e").Dot("Policies").Op("!=").Nil()).Block(Id("m").Dot("Policies").Op("=").Op("*").Id("e").Dot("Policies"))
			}
			lb.If(Len(Id("e").Dot("Context")).Op(">").Lit(0)).Block(
				Id("m").Dot("Context").Op("=").Id(g.name("Context")).Values(),
				If(Err().Op("=").Qual("encoding/json", "Unmarshal").Call(Id("e").Dot("Context"), Op("&").Id("m").Dot("Context")), Err().Op("!=").Nil()).Block(Return(Nil(), Err())),
			)
			lb.Var().Id("to").Id("State")
			var cases []Code
			for _, ev := range m.Events {
				if len(ev.Payload) == 0 {
					continue
				}
				cases = append(cases, Case(Id("Event"+ev.GoName)).Block(
					Var().Id("p").Id(ev.GoName+"Payload"),
					If(Len(Id("e").Dot("Payload")).Op(">").Lit(0)).Block(
						If(Err().Op("=").Qual("encoding/json", "Unmarshal").Call(Id("e").Dot("Payload"), Op("&").Id("p")), Err().Op("!=").Nil()).Block(Return(Nil(), Err())),
					),
					List(Id("to"), Err()).Op("=").Id("m").Dot("Fire"+ev.GoName).Call(Id("ctx"), Id("p"), Id("in")),
				))
			}
			def := List(Id("to"), Err()).Op("=").Id("m").Dot("FireWith").Call(Id("ctx"), Id("e").Dot("Trigger"), Id("in"))
			if len(cases) > 0 {
				lb.Switch(Id("e").Dot("Trigger")).Block(append(cases, Default().Block(def))...)
			} else {
				lb.Add(def)
			}
			lb.If(Err().Op("!=").Nil()).Block(
				Return(Nil(), Qual("fmt", "Errorf").Call(Lit(pkg+"replay %s: seq %d (%s): %w"), Id("id"), Id("e").Dot("Seq"), Id("e").Dot("Trigger"), Err())),
			)
			lb.If(Id("to").Op("!=").Id("e").Dot("To")).Block(
				Return(Nil(), Qual("fmt", "Errorf").Call(Lit(pkg+"replay %s: seq %d (%s) led to %s, the log says %s"), Id("id"), Id("e").Dot("Seq"), Id("e").Dot("Trigger"), Id("to"), Id("e").Dot("To"))),
			)
		})
		b.Return(Id("m"), Nil())
	})
	f.Line()

	// In-memory store.
	MS := g.name("MemoryStore")
	f.Comment(comment(MS + " is a " + S + " in memory, safe for concurrent use: the embedded default that\nneeds no server. Snapshots are kept as JSON, so what Load returns is what a database\nadapter would return."))
	f.Type().Id(MS).Struct(
		Id("mu").Qual("sync", "Mutex"),
		Id("snaps").Map(String()).Index().Byte(),
		Id("seqs").Map(String()).Int64(),
		Id("logs").Map(String()).Index().Id(L),
	)
	f.Line()
	f.Comment("// New" + MS + " returns an empty store.")
	f.Func().Id("New" + MS).Params().Op("*").Id(MS).Block(
		Return(Op("&").Id(MS).Values(Dict{Id("snaps"): Map(String()).Index().Byte().Values(), Id("seqs"): Map(String()).Int64().Values(), Id("logs"): Map(String()).Index().Id(L).Values()})),
	)
	f.Line()
	f.Comment("// Append adds e to the log of id if it is the next entry.")
	f.Func().Params(Id("s").Op("*").Id(MS)).Id("Append").Params(Id("_").Qual("context", "Context"), Id("id").String(), Id("e").Id(L)).Error().Block(
		Id("s").Dot("mu").Dot("Lock").Call(),
		Defer().Id("s").Dot("mu").Dot("Unlock").Call(),
		Id("log").Op(":=").Id("s").Dot("logs").Index(Id("id")),
		Id("last").Op(":=").Id("s").Dot("seqs").Index(Id("id")),
		If(Id("n").Op(":=").Len(Id("log")), Id("n").Op(">").Lit(0)).Block(Id("last").Op("=").Id("log").Index(Id("n").Op("-").Lit(1)).Dot("Seq")),
		If(Id("e").Dot("Seq").Op("!=").Id("last").Op("+").Lit(1)).Block(
			Return(Qual("fmt", "Errorf").Call(Lit("%w: %s: entry %d after %d"), Id("ErrStoreConflict"), Id("id"), Id("e").Dot("Seq"), Id("last"))),
		),
		Id("s").Dot("logs").Index(Id("id")).Op("=").Append(Id("log"), Id("e")),
		Return(Nil()),
	)
	f.Line()
	f.Comment("// Save replaces the snapshot of id if the stored one has Seq prev, and drops the log\n// entries it covers.")
	f.Func().Params(Id("s").Op("*").Id(MS)).Id("Save").Params(Id("_").Qual("context", "Context"), Id("id").String(), Id("prev").Int64(), Id("snap").Id(g.name("Snapshot"))).Error().Block(
		List(Id("b"), Err()).Op(":=").Qual("encoding/json", "Marshal").Call(Id("snap")),
		If(Err().Op("!=").Nil()).Block(Return(Err())),
		Id("s").Dot("mu").Dot("Lock").Call(),
		Defer().Id("s").Dot("mu").Dot("Unlock").Call(),
		If(Id("s").Dot("seqs").Index(Id("id")).Op("!=").Id("prev")).Block(
			Return(Qual("fmt", "Errorf").Call(Lit("%w: %s: snapshot %d, not %d"), Id("ErrStoreConflict"), Id("id"), Id("s").Dot("seqs").Index(Id("id")), Id("prev"))),
		),
		Id("s").Dot("snaps").Index(Id("id")).Op(",").Id("s").Dot("seqs").Index(Id("id")).Op("=").List(Id("b"), Id("snap").Dot("Seq")),
		Id("log").Op(":=").Id("s").Dot("logs").Index(Id("id")),
		For(Len(Id("log")).Op(">").Lit(0).Op("&&").Id("log").Index(Lit(0)).Dot("Seq").Op("<=").Id("snap").Dot("Seq")).Block(Id("log").Op("=").Id("log").Index(Lit(1), Empty())),
		Id("s").Dot("logs").Index(Id("id")).Op("=").Id("log"),
		Return(Nil()),
	)
	f.Line()
	f.Comment("// Load returns the snapshot of id, if any, and the log after it.")
	f.Func().Params(Id("s").Op("*").Id(MS)).Id("Load").Params(Id("_").Qual("context", "Context"), Id("id").String()).Params(Id(g.name("Snapshot")), Bool(), Index().Id(L), Error()).Block(
		Id("s").Dot("mu").Dot("Lock").Call(),
		Defer().Id("s").Dot("mu").Dot("Unlock").Call(),
		Id("log").Op(":=").Append(Index().Id(L).Call(Nil()), Id("s").Dot("logs").Index(Id("id")).Op("...")),
		Var().Id("snap").Id(g.name("Snapshot")),
		List(Id("b"), Id("ok")).Op(":=").Id("s").Dot("snaps").Index(Id("id")),
		If(Op("!").Id("ok")).Block(Return(Id("snap"), False(), Id("log"), Nil())),
		Return(Id("snap"), True(), Id("log"), Qual("encoding/json", "Unmarshal").Call(Id("b"), Op("&").Id("snap"))),
	)
	f.Line()
	f.Var().Id("_").Id(S).Op("=").Params(Op("*").Id(MS)).Call(Nil())
	f.Line()
}
