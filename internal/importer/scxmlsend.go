package importer

import (
	"regexp"
	"slices"
	"strconv"

	"github.com/fsmgen/fsmgen/internal/diag"
)

// SCXML writes a delayed transition as a delayed event the state sends itself on entry,
// cancelled on exit, and a transition on it:
//
//	<state id="ringing">
//	  <onentry><send id="t" event="timeout" delay="30s"/></onentry>
//	  <onexit><cancel sendid="t"/></onexit>
//	  <transition event="timeout" target="voicemail"/>
//	</state>
//
// which is the spec's { from: ringing, after: 30s, to: voicemail }. The import reads that
// pattern: a <send> with an id, an event and a delay (CSS2 time: 500ms, 1.5s) in <onentry>,
// the <cancel> of its id in the same state's <onexit> (without it SCXML's event outlives
// the state, and fsmgen's delay does not), and transitions on the event, each from that
// state and on that event alone. Anything else about such an event is refused where it
// stands.

// delayedSend is a <send delay> of a state's <onentry>.
type delayedSend struct {
	n         *node
	event, id named
	after     string // as a spec duration
	pos       diag.Pos
	cancelled bool
}

// cssTime is an SCXML delay: a CSS2 time.
var cssTime = regexp.MustCompile(`^([0-9]+)(\.[0-9]+)?(ms|s)$`)

// takeSends reads the <send> elements of onentry e of state n and returns e without them.
func (r *sreader) takeSends(n *node, e *xelem) *xelem {
	out := *e
	out.kids = nil
	for _, k := range e.kids {
		if !r.scxml(k) || k.name != "send" {
			out.kids = append(out.kids, k)
			continue
		}
		at := r.attrs(k, "event", "delay", "id")
		r.noText(k)
		for _, kk := range k.kids {
			r.ds.Errorf(kk.pos, "<%s> in <send> cannot be imported: the event of a delayed transition carries no data", kk.name)
		}
		ev, okEv := at["event"]
		d, okD := at["delay"]
		id, okID := at["id"]
		switch {
		case !okEv || !okD:
			r.ds.Errorf(k.pos, "<send> without an event and a delay cannot be imported: an fsmgen state sends nothing but the events of its delays")
			continue
		case !okID:
			r.ds.Errorf(k.pos, "<send> without an id cannot be imported: its <cancel sendid> in <onexit> makes it a delay of the state, which leaving it cancels")
			continue
		}
		after, ok := sendDelay(d.value)
		if !ok {
			r.ds.Errorf(d.pos, "delay %q cannot be imported: write a positive whole number of milliseconds as a CSS2 time (500ms, 1.5s)", d.value)
			continue
		}
		if !checkName(&r.ds, "event name", named{ev.value, ev.pos}, false) {
			continue
		}
		r.sends = append(r.sends, delayedSend{n: n, event: named{ev.value, ev.pos}, id: named{id.value, id.pos}, after: after, pos: k.pos})
	}
	return &out
}

// sendDelay converts a CSS2 time to a spec duration in milliseconds.
func sendDelay(v string) (string, bool) {
	m := cssTime.FindStringSubmatch(v)
	if m == nil {
		return "", false
	}
	whole, err := strconv.ParseInt(m[1], 10, 64)
	if err != nil || whole > 1<<40 {
		return "", false
	}
	frac := m[2]
	scale := int64(1)
	if m[3] == "s" {
		scale = 1000
	}
	ms := whole * scale
	if frac != "" {
		f, err := strconv.ParseFloat("0"+frac, 64)
		if err != nil {
			return "", false
		}
		x := f * float64(scale)
		if x != float64(int64(x)) {
			return "", false
		}
		ms += int64(x)
	}
	if ms <= 0 {
		return "", false
	}
	return msDuration(ms), true
}

// takeCancels reads the <cancel> elements of onexit e of state n and returns e without
// them.
func (r *sreader) takeCancels(n *node, e *xelem) *xelem {
	out := *e
	out.kids = nil
	for _, k := range e.kids {
		if !r.scxml(k) || k.name != "cancel" {
			out.kids = append(out.kids, k)
			continue
		}
		at := r.attrs(k, "sendid")
		r.noText(k)
		id, ok := at["sendid"]
		if !ok {
			r.ds.Errorf(k.pos, "<cancel> without a sendid cannot be imported")
			continue
		}
		r.cancel = append(r.cancel, delayedSend{n: n, id: named{id.value, id.pos}})
	}
	return &out
}

// delayedSends makes the transitions on each state's delayed event its delayed
// transitions, and refuses what the pattern does not allow.
func (r *sreader) delayedSends() {
	for _, c := range r.cancel {
		if !slices.ContainsFunc(r.sends, func(s delayedSend) bool { return s.n == c.n && s.id.name == c.id.name }) {
			r.ds.Errorf(c.id.pos, "<cancel sendid=%q> cannot be imported: it cancels no <send delay> of the <onentry> of %q", c.id.name, c.n.name)
		}
	}
	for i := range r.sends {
		s := &r.sends[i]
		if !slices.ContainsFunc(r.cancel, func(c delayedSend) bool { return s.n == c.n && s.id.name == c.id.name }) {
			r.ds.Errorf(s.pos, "<send delay> without <cancel sendid=%q> in the <onexit> of %q cannot be imported: SCXML's event would outlive the state, fsmgen's delay ends with it", s.id.name, s.n.name)
			continue
		}
		for j := range r.sends[:i] {
			if o := &r.sends[j]; o.event.name == s.event.name {
				r.ds.Errorf(s.event.pos, "event %q is sent by a second <send delay> (first at %d:%d): a delayed transition waits the delay of one state", s.event.name, o.pos.Line, o.pos.Col)
			}
		}
		for _, x := range r.trans {
			if !slices.ContainsFunc(x.t.events, func(e named) bool { return e.name == s.event.name }) {
				continue
			}
			if x.src != s.n || len(x.t.events) != 1 {
				r.ds.Errorf(x.t.events[0].pos, "a transition on %q, which %q sends itself after %s, cannot be imported unless it is a transition of %q on that event alone: an fsmgen delayed transition leaves the state that waits", s.event.name, s.n.name, s.after, s.n.name)
				continue
			}
			x.t.events, x.t.after = nil, s.after
		}
		r.events = slices.DeleteFunc(r.events, func(e named) bool { return e.name == s.event.name })
	}
}
