package gogen

import (
	"slices"

	. "github.com/dave/jennifer/jen"
	"github.com/fsmgen/fsmgen/internal/ir"
)

// fields is the body of a composite literal written on one line, keys in the order added.
type fields []Code

func (fs *fields) add(key string, v Code) { *fs = append(*fs, Id(key).Op(":").Add(v)) }

// int32s and intLits are slice literals of xs.
func int32s(xs []int) *Statement { return sliceLit(Int32(), xs) }

func intLits(xs []int) *Statement { return sliceLit(Int(), xs) }

func sliceLit(typ *Statement, xs []int) *Statement {
	return Index().Add(typ).ValuesFunc(func(v *Group) {
		for _, x := range xs {
			v.Lit(x)
		}
	})
}

func stateIdx(ss []*ir.State) []int {
	var out []int
	for _, s := range ss {
		out = append(out, s.Index)
	}
	return out
}

// engineDef emits def, the machine as data for the engine, and its dispatch table.
func (g *gen) engineDef(f *File) {
	m := g.m
	guardIdx := func(cs []ir.Cond) []int {
		var out []int
		for _, c := range cs {
			i := guardIndex(m, c.Guard)
			if c.Negate {
				i = ^i
			}
			out = append(out, i)
		}
		return out
	}
	actionIdx := func(as []*ir.Action) []int {
		var out []int
		for _, a := range as {
			out = append(out, slices.Index(m.Actions, a))
		}
		return out
	}
	counterIdx := func(cs []*ir.Counter) []int {
		var out []int
		for _, c := range cs {
			out = append(out, slices.Index(m.Counters, c))
		}
		return out
	}
	levels := g.levels()
	var d fields
	d.add("Spec", Op("&").Qual(rt, "Spec").Values(Id("Machine").Op(":").Lit(g.m.Name), Id("Package").Op(":").Lit(g.m.Package),
		Id("Fingerprint").Op(":").Lit(ir.Fingerprint(g.m))))
	if m.Chart != nil && len(g.external()) < len(m.Events) {
		d.add("NumEvents", Lit(len(m.Events)))
	} else {
		d.add("NumEvents", Id("NumEvents"))
	}
	d.add("Initial", Id("State"+m.Initial.GoName))
	d.add("Moves", Id("moves").Index(Empty(), Empty()))

	// Rows of their own, unless every state is plain enough for one line.
	var states []fields
	oneLine := len(m.States) <= 8
	for _, s := range m.States {
		var v fields
		if s.Terminal {
			v.add("Terminal", True())
		}
		if len(s.Entry) > 0 {
			v.add("Entry", int32s(actionIdx(s.Entry)))
		}
		if len(s.Exit) > 0 {
			v.add("Exit", int32s(actionIdx(s.Exit)))
		}
		if s.Remembers {
			v.add("Remembers", True())
			v.add("From", int32s(stateIdx(s.HistoryFrom)))
		}
		if t := s.Timeout; t != nil {
			v.add("Timeout", durationLit(int64(t.After)))
			if t.Configurable {
				v.add("Configurable", True())
			}
			var pct, vals []int
			for _, l := range t.Levels {
				pct = append(pct, l.Percent)
				vals = append(vals, 1+slices.IndexFunc(levels, func(x ir.Level) bool { return x.Name == l.Name }))
			}
			v.add("Levels", intLits(pct))
			v.add("LevelValues", intLits(vals))
			if t.OnExpiry != nil {
				v.add("Expires", True())
				v.add("Expiry", Lit(t.OnExpiry.Index))
			}
			if s.Clock != nil {
				v.add("Clock", Lit(s.Clock.Index))
			}
		}
		if len(s.Delays) > 0 {
			delayDef(m.Chart, s, &v)
		}
		oneLine = oneLine && len(s.Entry)+len(s.Exit) == 0 && !s.Remembers && s.Timeout == nil && len(s.Delays) == 0
		states = append(states, v)
	}
	d.add("States", Index().Qual(rt, "StateDef").ValuesFunc(func(rows *Group) {
		for _, v := range states {
			if oneLine {
				rows.Values(v...)
			} else {
				rows.Line().Values(v...)
			}
		}
		if !oneLine {
			rows.Line()
		}
	}))

	d.add("Transitions", Index().Qual(rt, "Transition").ValuesFunc(func(rows *Group) {
		for _, t := range m.Transitions {
			rows.Line().Values(g.transitionDef(t, guardIdx, actionIdx, counterIdx)...)
		}
		rows.Line()
	}))

	if len(m.Counters) > 0 {
		d.add("Counters", Index().Qual(rt, "Counter").ValuesFunc(func(rows *Group) {
			for _, c := range m.Counters {
				var v fields
				v.add("Name", Lit(c.Name))
				if c.PerState {
					v.add("PerState", True())
				}
				if c.Limit > 0 {
					v.add("Limit", Lit(c.Limit))
				}
				if c.Max {
					v.add("Max", True())
				}
				if c.Configurable && c.Limit > 0 {
					v.add("Configurable", True())
				}
				then, summary := -1, -1
				if c.Then != nil {
					then = c.Then.Index
				}
				if c.Summary != nil {
					summary = slices.Index(m.Fields, c.Summary)
				}
				v.add("Then", Lit(then))
				v.add("Summary", Lit(summary))
				if c.ResetOnSuccess {
					v.add("ResetOnSuccess", True())
				}
				rows.Line().Values(v...)
			}
			rows.Line()
		}))
	}
	var always []Code
	for _, r := range m.Roles {
		if r.All {
			always = append(always, Id("Role"+r.GoName))
		}
	}
	if len(always) > 0 {
		d.add("AlwaysRoles", Index().Id("Role").Values(always...))
	}
	if len(m.Roles) > 0 {
		d.add("NumRoles", Lit(len(m.Roles)+1))
	}
	every := -1
	for i, c := range m.Checkpoints {
		if c.EveryTransition {
			every = i
		}
	}
	d.add("EveryCheckpoint", Lit(every))
	flag := func(name string, ok bool) {
		if ok {
			d.add(name, True())
		}
	}
	if g.payloads() {
		d.add("Payloads", Index().Bool().ValuesFunc(func(v *Group) {
			for _, e := range m.Events {
				v.Lit(len(e.Payload) > 0)
			}
		}))
	}
	if len(levels) > 0 {
		d.add("LevelNames", Index().String().ValuesFunc(func(v *Group) {
			for _, l := range levels {
				v.Lit(l.Name)
			}
		}))
	}
	if g.effects() {
		d.add("Effects", Index().String().ValuesFunc(func(v *Group) {
			for _, a := range m.Actions {
				if a.Effect {
					v.Lit(a.Name)
				} else {
					v.Lit("")
				}
			}
		}))
	}
	flag("Policies", len(m.Policies) > 0)
	flag("Resumable", g.resumes)
	flag("Idempotent", m.Idempotent)
	flag("History", m.RecordHistory)
	flag("Timing", g.timing)
	flag("Roles", len(m.Roles) > 0)
	if g.mayFail() {
		d.add("MayFail", Index().String().ValuesFunc(func(v *Group) {
			for _, a := range m.Actions {
				if a.MayFail {
					v.Lit(a.Name)
				} else {
					v.Lit("")
				}
			}
		}))
	}
	if m.Chart != nil {
		d.add("Chart", g.chartDef(actionIdx))
	}
	logicDef(m, &d)
	if len(m.Migrations) > 0 {
		d.add("Migrations", Index().Qual(rt, "Migration").ValuesFunc(func(v *Group) {
			for _, mg := range m.Migrations {
				v.Line().Comment(comment("From " + mg.Source + ".")).Line().Values(migrationDef(mg)...)
			}
			v.Line()
		}))
	}
	f.Comment(comment("def is the machine as data for the engine (fsmrt.Def), indexed in spec order."))
	f.Var().Id("def").Op("=").Qual(rt, "Def").Types(Id("State"), Id("Event"), g.role()).ValuesFunc(func(v *Group) {
		for _, x := range d {
			v.Line().Add(x)
		}
		v.Line()
	})
	f.Line()
	if len(m.Migrations) > 0 {
		f.Comment(comment("Snapshots written under the specs def migrates from decode migrated (fsmrt.RegisterMigrations)."))
		f.Var().Id("_").Op("=").Qual(rt, "RegisterMigrations").Call(Op("&").Id("def"))
		f.Line()
	}

	f.Comment(comment("moves is the dispatch table (fsmrt.Def.Moves), a row per state and a column per event."))
	f.Var().Id("moves").Op("=").Index(Op("...")).Uint32().ValuesFunc(func(rows *Group) {
		for _, s := range m.States {
			for i, e := range m.Events {
				v := g.move(s, e)
				switch v {
				case moveRefused:
					v = len(m.States)
				case moveStep:
					v = len(m.States) + 1
				}
				if i == 0 {
					rows.Line().Lit(v)
				} else {
					rows.Lit(v)
				}
			}
		}
		rows.Line()
	})
	f.Line()
}

// transitionDef is the engine's description of t, on one line.
func (g *gen) transitionDef(t *ir.Transition, guardIdx func([]ir.Cond) []int, actionIdx func([]*ir.Action) []int, counterIdx func([]*ir.Counter) []int) fields {
	m := g.m
	var to []int
	for _, s := range t.From {
		for _, x := range t.Targets(s) {
			if !slices.Contains(to, x.Index) {
				to = append(to, x.Index)
			}
		}
	}
	slices.Sort(to)
	var on []int
	for _, e := range t.Events {
		on = append(on, e.Index)
	}
	var v fields
	v.add("From", int32s(stateIdx(t.From)))
	v.add("On", int32s(on))
	v.add("To", int32s(to))
	if t.Guarded() {
		v.add("Conds", int32s(guardIdx(t.Conds)))
	}
	switch t.Target.Kind {
	case ir.Fixed:
		if t.Stays() {
			v.add("Kind", Qual(rt, "TargetInternal")) // a statechart's microstep that exits and enters nothing
		}
		v.add("Target", Lit(t.Target.State.Index))
	case ir.Internal:
		v.add("Kind", Qual(rt, "TargetInternal"))
	case ir.History:
		v.add("Kind", Qual(rt, "TargetHistory"))
		v.add("Target", Lit(t.Target.State.Index))
	case ir.Choice:
		v.add("Kind", Qual(rt, "TargetChoice"))
		v.add("Choices", Index().Qual(rt, "ChoiceDef").ValuesFunc(func(cs *Group) {
			for _, c := range t.Choices {
				var cv fields
				if len(c.Conds) > 0 {
					cv.add("Conds", int32s(guardIdx(c.Conds)))
				}
				if c.Target.Kind == ir.History {
					cv.add("Kind", Qual(rt, "TargetHistory"))
				}
				cv.add("Target", Lit(c.Target.State.Index))
				cs.Values(cv...)
			}
		}))
	}
	if len(t.Roles) > 0 {
		v.add("Roles", Index().Qual(rt, "RoleRule").ValuesFunc(func(rs *Group) {
			for _, r := range t.Roles {
				p := -1
				if r.Policy != nil {
					p = slices.Index(m.Policies, r.Policy)
				}
				rs.Values(Id("Role").Op(":").Lit(slices.Index(m.Roles, r.Role)+1), Id("Policy").Op(":").Lit(p))
			}
		}))
	}
	if len(t.Actions) > 0 {
		v.add("Actions", int32s(actionIdx(t.Actions)))
	}
	if len(t.Increment) > 0 {
		v.add("Inc", int32s(counterIdx(t.Increment)))
	}
	if len(t.Reset) > 0 {
		v.add("Reset", int32s(counterIdx(t.Reset)))
	}
	cp := -1
	if t.Checkpoint != nil {
		cp = slices.Index(m.Checkpoints, t.Checkpoint)
	}
	v.add("Checkpoint", Lit(cp))
	if g.targetsRequire(t) {
		v.add("Require", True())
	}
	if g.plain(t) {
		v.add("Plain", True())
	}
	if len(t.Mem) > 0 {
		v.add("Mem", memories(t.Mem))
	}
	if len(t.Record) > 0 {
		v.add("Record", memories(t.Record))
	}
	if len(t.Raise) > 0 {
		v.add("Raise", int32s(eventIdx(t.Raise)))
	}
	if t.Changes {
		v.add("Changes", True())
	}
	if t.KeepsClock {
		v.add("KeepsClock", True())
	}
	if len(t.Enters) > 0 {
		var slots []int
		for _, n := range t.Enters {
			slots = append(slots, clockSlot(m.Chart, n)-1)
		}
		v.add("Enters", int32s(slots))
	}
	if m.Chart != nil {
		if then, ok := g.fold(t); ok {
			v.add("Settled", True())
			if len(then) > 0 {
				var idx []int
				for _, x := range then {
					idx = append(idx, x.Index)
				}
				v.add("Then", int32s(idx))
			}
		}
	}
	return v
}

// migrationDef is the engine's description of a migration (fsmrt.Migration): its maps in
// key order, so that the output is the same every time.
func migrationDef(mg *ir.Migration) []Code {
	out := []Code{Id("From").Op(":").Lit(mg.From)}
	for _, x := range []struct {
		key string
		m   map[string]string
	}{{"States", mg.States}, {"Events", mg.Events}, {"Counters", mg.Counters}, {"Fields", mg.Fields}, {"Defaults", mg.Defaults}} {
		if len(x.m) == 0 {
			continue
		}
		out = append(out, Line().Id(x.key).Op(":").Map(String()).String().Values(DictFunc(func(d Dict) {
			for k, v := range x.m {
				d[Lit(k)] = Lit(v)
			}
		})))
	}
	out = append(out, Line().Id("Transitions").Op(":").Add(int32s(mg.Transitions)))
	if len(mg.Moves) > 0 {
		counters := func(cs []*ir.Counter) []int {
			var out []int
			for _, c := range cs {
				out = append(out, c.Index)
			}
			return out
		}
		out = append(out, Line().Id("Moves").Op(":").Index().Qual(rt, "Move").Values(DictFunc(func(d Dict) {
			for i, mv := range mg.Moves {
				var fs []Code
				if len(mv.Increment) > 0 {
					fs = append(fs, Id("Inc").Op(":").Add(int32s(counters(mv.Increment))))
				}
				if len(mv.Reset) > 0 {
					fs = append(fs, Id("Reset").Op(":").Add(int32s(counters(mv.Reset))))
				}
				if mv.Internal {
					fs = append(fs, Id("Internal").Op(":").True())
				}
				d[Lit(i)] = Values(fs...)
			}
		})))
	}
	return append(out, Line())
}
