package gogen

import (
	"slices"

	. "github.com/dave/jennifer/jen"

	"github.com/fsmgen/fsmgen/internal/ir"
)

// delayDef adds to state s's StateDef its delays (fsmrt.DelayDef), and the state whose
// clock they count on in a statechart when no timeout has added it.
func delayDef(c *ir.Chart, s *ir.State, v *fields) {
	v.add("Delays", Index().Qual(rt, "DelayDef").ValuesFunc(func(g *Group) {
		for _, d := range s.Delays {
			vals := []Code{Id("After").Op(":").Add(durationLit(int64(d.After))), Id("Event").Op(":").Lit(d.Event.Index)}
			if slot := clockSlot(c, d.Node); slot > 0 {
				vals = append(vals, Id("Clock").Op(":").Lit(slot))
			}
			g.Values(vals...)
		}
	}))
	if s.Timeout == nil && s.Clock != nil {
		v.add("Clock", Lit(s.Clock.Index))
	}
}

// clockSlot is the clock (fsmrt.Chart.Clocks slot, from 1) of a statechart state with
// delays, 0 for none.
func clockSlot(c *ir.Chart, n *ir.Node) int {
	if c == nil || n == nil {
		return 0
	}
	return 1 + slices.Index(c.Clocks, n)
}

// expireNext writes Expire for a machine with delays (fsmrt.ExpireNext), and reports
// whether it did; a machine without keeps the Expire of its timeouts.
func (g *gen) expireNext(f *File) bool {
	if !g.m.HasDelays() {
		return false
	}
	f.Comment("// Expire fires, of the current state's timers that have run out at now and not fired\n// this stay (its timeout's on_expiry event, its delays), the one that ran out first, at\n// its deadline (fsmrt.ExpireNext), and reports whether it did: call it until it reports\n// false to catch up with now. Timeouts without on_expiry are reports.")
	f.Func().Params(Id("m").Op("*").Id(g.T)).Id("Expire").Params(ctxParam(), Id("now").Qual("time", "Time")).Params(Bool(), Id("State"), Error()).Block(
		Return(Qual(rt, "ExpireNext").Call(Id("ctx"), self(), Id("now"))),
	)
	f.Line()
	return true
}
