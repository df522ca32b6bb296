// Helpers of the emitter: constructor parameters, guard conditions, thresholds, which
// (state, event) pairs the dispatch table answers alone, and duration literals.

package gogen

import (
	"fmt"
	"math"

	. "github.com/dave/jennifer/jen"
	"github.com/fsmgen/fsmgen/internal/ir"
)

// in is the input parameter of the methods that fire: in <T>Input.
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

// Outcomes of move other than a target state index.
const (
	moveRefused = -1
	moveStep    = -2
)

// move is the dispatch table's entry for s and e (the generated moves): the index of the
// target state, moveRefused or moveStep. An entry with a target is one the engine's Fire
// takes from the table alone, so the transition must do nothing but move the state: no
// guard, role, hook, counter, required field, memory, payload, clock or checkpoint, and no
// context field whose constraints every transition checks (invariants).
func (g *gen) move(s *ir.State, e *ir.Event) int {
	m := g.m
	ts := m.Lookup(s, e)
	switch {
	case len(ts) == 0, e.Internal:
		return moveRefused
	case g.invariants():
		return moveStep // every transition checks the context's invariants
	case m.Chart != nil:
		if len(ts) > 1 || ts[0].Guarded() || len(ts[0].Roles) > 0 || len(e.Payload) > 0 || g.timing || m.RecordHistory || g.everyCheckpoint || g.resetsOnSuccess {
			return moveStep
		}
		if end := g.chartMove(ts[0]); end != nil {
			return end.Index
		}
		return moveStep
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
	if len(s.Exit) > 0 || len(to.Entry) > 0 || len(t.Required(to)) > 0 || (to.Remembers && to != s) || g.resetsOnSuccess {
		return moveStep
	}
	return to.Index
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

// targetsRequire reports whether any state t can enter requires context fields.
func (g *gen) targetsRequire(t *ir.Transition) bool {
	if len(t.Taken) > 0 {
		return len(t.Requires) > 0
	}
	for _, s := range t.From {
		for _, d := range t.Targets(s) {
			if len(d.Requires) > 0 {
				return true
			}
		}
	}
	return false
}

// plain reports whether t does nothing but move to a fixed target (or stay, internal) and
// increment counters without limits and reset counters (fsmrt.Transition.Plain).
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

// checkpointError emits CheckpointError, what Fire returns when a checkpoint hook fails.
func (g *gen) checkpointError(f *File) {
	m := g.m
	f.Comment("// CheckpointError says a checkpoint hook failed. Without a store the transition has\n// happened but was not saved; with one it was taken back, and the machine is as it was\n// before Fire.")
	f.Type().Id("CheckpointError").Struct(Id("Checkpoint").Id("Checkpoint"), Id("Err").Error())
	f.Line()
	f.Comment("// Error names the checkpoint and the hook's error.")
	f.Func().Params(Id("e").Op("*").Id("CheckpointError")).Id("Error").Params().String().Block(
		Return(Lit(m.Package + ": checkpoint ").Op("+").Id("e").Dot("Checkpoint").Dot("String").Call().Op("+").Lit(": ").Op("+").Id("e").Dot("Err").Dot("Error").Call()),
	)
	f.Line()
	f.Comment("// Unwrap returns the hook's error.")
	f.Func().Params(Id("e").Op("*").Id("CheckpointError")).Id("Unwrap").Params().Error().Block(Return(Id("e").Dot("Err")))
	f.Line()
}

// durationLit is a duration in the largest unit that divides it.
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
