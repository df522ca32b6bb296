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
	canonical(m, h)
	return "sha256:" + hex.EncodeToString(h.Sum(nil)[:16])
}

// Line is one line of the text a fingerprint is the hash of, with the section it is in:
// machine, state, event (an event's lines and its payload fields), role, policy, field
// (context fields), counter, checkpoint or transition.
type Line struct {
	Section, Text string
}

// Canonical returns the text Fingerprint hashes, line by line: the fingerprint of m is
// the hash of the lines' texts, each ended by a newline (Hash).
func Canonical(m *Machine) []Line {
	var c canonWriter
	canonical(m, &c)
	return c.lines
}

// Hash returns the fingerprint of the canonical text lines.
func Hash(lines []Line) string {
	h := sha256.New()
	for _, l := range lines {
		io.WriteString(h, l.Text)
		io.WriteString(h, "\n")
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil)[:16])
}

// canonWriter collects the canonical text as lines, in the section section sets.
type canonWriter struct {
	section string
	partial []byte
	lines   []Line
}

func (c *canonWriter) Write(b []byte) (int, error) {
	for _, x := range b {
		if x != '\n' {
			c.partial = append(c.partial, x)
			continue
		}
		c.lines = append(c.lines, Line{c.section, string(c.partial)})
		c.partial = c.partial[:0]
	}
	return len(b), nil
}

// section starts a section of the canonical text, for Canonical.
func section(w io.Writer, name string) {
	if c, ok := w.(*canonWriter); ok {
		c.section = name
	}
}

// canonical writes the text Fingerprint hashes to h.
func canonical(m *Machine, h io.Writer) {
	p := func(format string, args ...any) { fmt.Fprintf(h, format+"\n", args...) }
	section(h, "machine")
	p("machine %q history=%t idempotent=%t", m.Name, m.RecordHistory, m.Idempotent)
	section(h, "state")
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
		for _, d := range s.Delays {
			if d.Node != nil && d.Node != s.Clock {
				// A clock of its own, beside the configuration's (Chart.Clocks).
				p("  delay %d %q since %q", d.After, d.Event.Name, d.Node.Path)
				continue
			}
			p("  delay %d %q", d.After, d.Event.Name)
		}
		if s.Timeout == nil && len(s.Delays) > 0 && s.SharesClock() {
			p("  since %q", s.Clock.Path)
		}
	}
	section(h, "event")
	for _, e := range m.Events {
		p("event %q", e.Name)
		for _, f := range e.Payload {
			writeField(h, f)
		}
	}
	section(h, "role")
	for _, r := range m.Roles {
		p("role %q all=%t", r.Name, r.All)
	}
	section(h, "policy")
	for _, po := range m.Policies {
		p("policy %q default=%t", po.Name, po.Default)
	}
	section(h, "field")
	for _, f := range m.Fields {
		writeField(h, f)
	}
	section(h, "counter")
	for _, c := range m.Counters {
		then := ""
		if c.Then != nil {
			then = c.Then.Name
		}
		p("counter %q per-state=%t reset-on-success=%t limit=%d max=%t then=%q configurable=%t", c.Name, c.PerState, c.ResetOnSuccess, c.Limit, c.Max, then, c.Configurable)
	}
	section(h, "checkpoint")
	for _, c := range m.Checkpoints {
		p("checkpoint %q every=%t", c.Name, c.EveryTransition)
	}
	section(h, "transition")
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
