package importer

import (
	"fmt"
	"regexp"
	"time"

	"github.com/fsmgen/fsmgen/internal/diag"
)

// Named delays. XState's after may name a delay ({"shortDelay": "a"}) whose value the
// machine's options define (delays: {shortDelay: 1000}), which a config written as JSON
// leaves out: the import is given it (Options.Delays, fsmgen import --delay
// shortDelay=1s). The state that waits it gets a configurable timeout of that value, whose
// on_expiry event "after.shortDelay" its transitions on the delay take: the program
// changes it at run time with SetTimeout, as the delays option changes it in XState, and a
// store's deadline is the value in force. A state waits one named delay (it has one
// timeout), beside any delays in milliseconds.

// namedWait is the named delay a state waits, and the event its timeout fires.
type namedWait struct {
	delay named
	after time.Duration
	event string
}

// delayName is a name a named delay may have: it names an event.
var delayName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// namedDelays gives each state that waits a named delay its timeout, and makes the
// transitions on it transitions on its expiry event.
func (c *chart) namedDelays(opt Options, ds *diag.List) {
	c.root.walk(func(n *node) {
		for _, t := range n.trans {
			if t.delay.name == "" {
				continue
			}
			d := t.delay
			after, ok := opt.Delays[d.name]
			switch {
			case !delayName.MatchString(d.name):
				ds.Errorf(d.pos, "delay %q is neither a number of milliseconds nor the name of a delay (letters, digits and _)", d.name)
				continue
			case !ok:
				ds.Errorf(d.pos, "delay %q is a named delay, whose value the machine's options define: give it to the import (--delay %s=DURATION), which makes it the configurable timeout of %q", d.name, d.name, n.name)
				continue
			case n.wait != nil && n.wait.delay.name != d.name:
				ds.Errorf(d.pos, "state %q waits the named delays %q (%d:%d) and %q: a state has one timeout, which a named delay becomes", n.name, n.wait.delay.name, n.wait.delay.pos.Line, n.wait.delay.pos.Col, d.name)
				continue
			case n.wait == nil:
				n.wait = &namedWait{delay: d, after: after, event: "after." + d.name}
			}
			t.events, t.delay = []named{{n.wait.event, d.pos}}, named{}
		}
	})
}

// attr is the state's timeout as the spec writes it.
func (w *namedWait) attr() string {
	return fmt.Sprintf("timeout: { after: %s, configurable: true, on_expiry: %s }", durationText(w.after), dquote(w.event))
}

// durationText writes d as a spec duration: "1m", not Go's "1m0s".
func durationText(d time.Duration) string {
	if d%time.Millisecond == 0 {
		return msDuration(int64(d / time.Millisecond))
	}
	return d.String()
}
