package ir

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"strings"
)

// Fingerprint identifies what a stored instance of m means: the states, events,
// transitions (a log entry names its transition by index), counters, context fields,
// payloads, roles, policies and timeouts, by name and in order. Documentation, source
// positions, Go names and what the generator emits do not count, so an upgrade of fsmgen
// or a reworded comment leaves stored instances readable; any change that could change
// what a stored snapshot or log entry means changes it. It reads "sha256:" and 32 hex
// digits.
func Fingerprint(m *Machine) string {
	h := sha256.New()
	p := func(format string, args ...any) { fmt.Fprintf(h, format+"\n", args...) }
	p("machine %q history=%t idempotent=%t", m.Name, m.RecordHistory, m.Idempotent)
	for _, s := range m.States {
		p("state %q initial=%t terminal=%t remembers=%t", s.Name, s.Initial, s.Terminal, s.Remembers)
		writeNames(h, "  requires", s.Requires, func(f *Field) string { return f.Name })
		if t := s.Timeout; t != nil {
			p("  timeout %d configurable=%t", t.After, t.Configurable)
			for _, l := range t.Levels {
				p("  level %q %d", l.Name, l.Percent)
			}
			if t.OnExpiry != nil {
				p("  expiry %q", t.OnExpiry.Name)
			}
			if s.SharesClock() {
				// Counted from a state around the configuration (timeoutSince).
				p("  since %q", s.Clock.Path)
			}
		}
	}
	for _, e := range m.Events {
		p("event %q", e.Name)
		for _, f := range e.Payload {
			writeField(h, f)
		}
	}
	for _, r := range m.Roles {
		p("role %q all=%t", r.Name, r.All)
	}
	for _, po := range m.Policies {
		p("policy %q default=%t", po.Name, po.Default)
	}
	for _, f := range m.Fields {
		writeField(h, f)
	}
	for _, c := range m.Counters {
		then := ""
		if c.Then != nil {
			then = c.Then.Name
		}
		p("counter %q per-state=%t reset-on-success=%t limit=%d max=%t then=%q configurable=%t", c.Name, c.PerState, c.ResetOnSuccess, c.Limit, c.Max, then, c.Configurable)
	}
	for _, c := range m.Checkpoints {
		p("checkpoint %q every=%t", c.Name, c.EveryTransition)
	}
	for _, t := range m.Transitions {
		p("transition %d", t.Index)
		writeNames(h, "  from", t.From, func(s *State) string { return s.Name })
		writeNames(h, "  on", t.Events, func(e *Event) string { return e.Name })
		writeTarget(h, t.Target)
		for _, c := range t.Choices {
			writeTarget(h, c.Target)
		}
		writeNames(h, "  increment", t.Increment, func(c *Counter) string { return c.Name })
		writeNames(h, "  reset", t.Reset, func(c *Counter) string { return c.Name })
		if t.Checkpoint != nil {
			p("  checkpoint %q", t.Checkpoint.Name)
		}
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil)[:16])
}

// writeNames writes a labelled line of quoted names.
func writeNames[T any](w io.Writer, label string, xs []T, name func(T) string) {
	var b strings.Builder
	b.WriteString(label)
	for _, x := range xs {
		fmt.Fprintf(&b, " %q", name(x))
	}
	fmt.Fprintln(w, b.String())
}

// writeTarget writes a transition's or a candidate's target.
func writeTarget(w io.Writer, t Target) {
	name := ""
	if t.State != nil {
		name = t.State.Name
	}
	fmt.Fprintf(w, "  target %d %q\n", t.Kind, name)
}

// writeField writes a context or payload field's name, type and values.
func writeField(w io.Writer, f *Field) {
	fmt.Fprintf(w, "field %q %s values=%q\n", f.Name, f.Type, f.Values)
}
