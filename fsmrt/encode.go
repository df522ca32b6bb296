package fsmrt

import (
	"encoding/json"
	"reflect"
	"slices"
	"strconv"
	"time"
	"unicode/utf8"
)

// appendEntry appends to b the JSON of log entry e exactly as encoding/json writes it (the
// entry's wire form: the same fields, order, escaping and map order), without reflection:
// a commit encodes an entry every time. ok is false when the entry holds what only
// encoding/json may judge (a state, event or role out of range, a role of a machine without
// named roles, a time outside the years 0-9999): the caller then uses encoding/json.
func (m *Machine[S, E, R, C, X]) appendEntry(b []byte, e *LogEntry[S, E, R]) ([]byte, bool) {
	d := m.def
	ns := len(d.States)
	switch {
	case int(e.From) >= ns || int(e.To) >= ns,
		!isNote(e.Kind) && int(e.Event) >= d.NumEvents,
		e.Role != 0 && (!d.Roles || int(e.Role) >= d.NumRoles),
		!jsonTime(e.Timestamp) || !e.Created.IsZero() && !jsonTime(e.Created):
		return b, false
	}
	for s := range e.Timeouts {
		if int(s) >= ns {
			return b, false
		}
	}
	b = append(b, '{')
	if e.Spec != "" {
		b = appendKey(b, "spec", true)
		b = appendString(b, e.Spec)
	}
	b = appendKey(b, "seq", e.Spec == "")
	b = strconv.AppendInt(b, e.Seq, 10)
	b = appendKey(b, "timestamp", false)
	b = m.times.append(b, e.Timestamp)
	b = appendKey(b, "id", false)
	b = appendString(b, e.ID)
	b = appendKey(b, "kind", false)
	b = appendString(b, e.Kind)
	if !isNote(e.Kind) {
		b = appendKey(b, "event", false)
		b = appendString(b, e.Event.String())
	}
	b = appendKey(b, "from", false)
	b = appendString(b, e.From.String())
	b = appendKey(b, "to", false)
	b = appendString(b, e.To.String())
	b = appendKey(b, "transition", false)
	b = strconv.AppendInt(b, int64(e.Transition), 10)
	b = appendKey(b, "actor", false)
	b = appendString(b, e.Actor)
	b = appendKey(b, "reason", false)
	b = appendString(b, e.Reason)
	if e.EventID != "" {
		b = appendKey(b, "eventId", false)
		b = appendString(b, e.EventID)
	}
	if e.Role != 0 {
		b = appendKey(b, "role", false)
		b = appendString(b, e.Role.String())
	}
	if e.Key != "" {
		b = appendKey(b, "idempotencyKey", false)
		b = appendString(b, e.Key)
	}
	if !e.Created.IsZero() {
		b = appendKey(b, "created", false)
		b = m.times.append(b, e.Created)
	}
	for _, raw := range [...]struct {
		key string
		v   []byte
	}{{"context", e.Context}, {"payload", e.Payload}, {"policies", e.Policies}} {
		// What the engine records here is encoding/json's own output: compact and escaped.
		if len(raw.v) > 0 {
			b = appendKey(b, raw.key, false)
			b = append(b, raw.v...)
		}
	}
	if len(e.Limits) > 0 {
		b = appendKey(b, "limits", false)
		b = appendMap(b, e.Limits, func(k string) string { return k }, func(b []byte, v int) []byte { return strconv.AppendInt(b, int64(v), 10) })
	}
	if len(e.Timeouts) > 0 {
		b = appendKey(b, "timeouts", false)
		b = appendMap(b, e.Timeouts, S.String, func(b []byte, v time.Duration) []byte { return strconv.AppendInt(b, int64(v), 10) })
	}
	b = appendKey(b, "metadata", false)
	if e.Metadata == nil {
		b = append(b, "null"...)
	} else {
		b = appendMap(b, e.Metadata, func(k string) string { return k }, appendString)
	}
	if len(e.Micro) > 0 {
		b = appendKey(b, "microsteps", false)
		for i, t := range e.Micro {
			b = append(b, "[,"[min(i, 1)])
			b = strconv.AppendInt(b, int64(t), 10)
		}
		b = append(b, ']')
	}
	if len(e.History) > 0 {
		b = appendKey(b, "history", false)
		b = appendMap(b, e.History, func(k string) string { return k }, appendString)
	}
	return append(b, '}'), true
}

// encodeEntry returns the JSON of log entry e: appendEntry's, in the machine's entry
// buffer (valid until the next call), or encoding/json's when it cannot.
func (m *Machine[S, E, R, C, X]) encodeEntry(e *LogEntry[S, E, R]) ([]byte, error) {
	if b, ok := m.appendEntry(m.entryBuf[:0], e); ok {
		m.entryBuf = b
		return b, nil
	}
	return json.Marshal(e.wire())
}

// appendKey appends a member's key (and the comma before all but the first).
func appendKey(b []byte, key string, first bool) []byte {
	if !first {
		b = append(b, ',')
	}
	b = append(b, '"')
	b = append(b, key...)
	return append(b, '"', ':')
}

// jsonTime reports whether encoding/json encodes t (its year is within 0-9999).
func jsonTime(t time.Time) bool {
	y := t.Year()
	return y >= 0 && y <= 9999
}

// appendTime appends t as time.Time's MarshalJSON writes it.
func appendTime(b []byte, t time.Time) []byte {
	b = append(b, '"')
	b = t.AppendFormat(b, time.RFC3339Nano)
	return append(b, '"')
}

// timeCache keeps the encodings of the last two times appended: a commit writes the same
// few instants several times (the entry's time is the snapshot's update and often its
// entry into the state; the creation never changes).
type timeCache struct {
	t    [2]time.Time
	b    [2][]byte
	next int
}

// append appends t as appendTime does.
func (c *timeCache) append(b []byte, t time.Time) []byte {
	for i := range c.t {
		if c.b[i] != nil && c.t[i] == t {
			return append(b, c.b[i]...)
		}
	}
	i := c.next
	c.next = 1 - i
	c.t[i], c.b[i] = t, appendTime(c.b[i][:0], t)
	return append(b, c.b[i]...)
}

// appendMap appends a JSON object of m, its keys (by name) in order, as encoding/json does.
func appendMap[K comparable, V any](b []byte, m map[K]V, name func(K) string, value func([]byte, V) []byte) []byte {
	type kv struct {
		name string
		v    V
	}
	members := make([]kv, 0, len(m))
	for k, v := range m {
		members = append(members, kv{name(k), v})
	}
	slices.SortFunc(members, func(a, b kv) int {
		switch {
		case a.name < b.name:
			return -1
		case a.name > b.name:
			return 1
		}
		return 0
	})
	b = append(b, '{')
	for i, x := range members {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, x.name)
		b = append(b, ':')
		b = value(b, x.v)
	}
	return append(b, '}')
}

const hexDigits = "0123456789abcdef"

// jsonSafe says which ASCII bytes encoding/json writes as they are in a string (it escapes
// control characters, quotes, backslashes and <, >, & for HTML).
var jsonSafe = func() (safe [utf8.RuneSelf]bool) {
	for c := range safe {
		safe[c] = c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&'
	}
	return safe
}()

// appendString appends s as a JSON string the way encoding/json writes it: HTML-safe (<,
// > and & escaped), invalid UTF-8 as U+FFFD, U+2028 and U+2029 escaped.
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if jsonSafe[c] {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// appendSnapshot appends to b the JSON of the machine's snapshot exactly as encoding/json
// writes m.Snapshot(), from the machine's own arrays (only the counters go through maps), with ctx the
// encoding of its context (the log entry's). ok is false when only encoding/json may judge
// (a time outside the years 0-9999).
func (m *Machine[S, E, R, C, X]) appendSnapshot(b []byte, ctx []byte) ([]byte, bool) {
	d := m.def
	if !jsonTime(m.updatedAt) || d.Timing && (!jsonTime(m.createdAt) || !jsonTime(m.enteredAt) || !jsonTime(m.since)) || int(m.state) >= len(d.States) {
		return b, false
	}
	b = append(b, `{"version":1`...)
	if d.Spec.Fingerprint != "" {
		b = appendKey(b, "spec", false)
		b = appendString(b, d.Spec.Fingerprint)
	}
	b = appendKey(b, "id", false)
	b = appendString(b, m.ID)
	b = appendKey(b, "seq", false)
	b = strconv.AppendInt(b, m.seq, 10)
	b = appendKey(b, "state", false)
	b = appendString(b, m.state.String())
	b = appendKey(b, "updatedAt", false)
	b = m.times.append(b, m.updatedAt)
	b = appendKey(b, "context", false)
	b = append(b, ctx...)
	if counters := m.counterValues(); len(counters) > 0 {
		plain := map[string]int{}
		perState := map[string]map[string]int{}
		for _, c := range counters {
			if c.State == "" {
				plain[c.Name] = c.Value
				continue
			}
			if perState[c.Name] == nil {
				perState[c.Name] = map[string]int{}
			}
			perState[c.Name][c.State] = c.Value
		}
		appendInt := func(b []byte, v int) []byte { return strconv.AppendInt(b, int64(v), 10) }
		name := func(k string) string { return k }
		if len(plain) > 0 {
			b = appendKey(b, "counters", false)
			b = appendMap(b, plain, name, appendInt)
		}
		if len(perState) > 0 {
			b = appendKey(b, "stateCounters", false)
			b = appendMap(b, perState, name, func(b []byte, v map[string]int) []byte { return appendMap(b, v, name, appendInt) })
		}
	}
	if limits := m.changedLimits(); len(limits) > 0 {
		b = appendKey(b, "limits", false)
		b = appendMap(b, limits, func(k string) string { return k }, func(b []byte, v int) []byte { return strconv.AppendInt(b, int64(v), 10) })
	}
	if n := countTrue(m.remembered); n > 0 {
		b = appendKey(b, "remembered", false)
		b = appendStates(m, b, len(m.remembered), func(s int) bool { return m.remembered[s] }, func(b []byte, s int) []byte { return appendString(b, m.memory[s].String()) })
	}
	if d.Timing {
		if !m.createdAt.IsZero() {
			b = appendKey(b, "createdAt", false)
			b = m.times.append(b, m.createdAt)
		}
		if !m.enteredAt.IsZero() {
			b = appendKey(b, "enteredAt", false)
			b = m.times.append(b, m.enteredAt)
		}
		if slices.ContainsFunc(m.timeByState, func(t time.Duration) bool { return t != 0 }) {
			b = appendKey(b, "timeByState", false)
			b = appendStates(m, b, len(m.timeByState), func(s int) bool { return m.timeByState[s] != 0 }, func(b []byte, s int) []byte { return strconv.AppendInt(b, int64(m.timeByState[s]), 10) })
		}
		if timeouts := m.changedTimeouts(); len(timeouts) > 0 {
			b = appendKey(b, "timeouts", false)
			b = appendMap(b, timeouts, S.String, func(b []byte, v time.Duration) []byte { return strconv.AppendInt(b, int64(v), 10) })
		}
		if !m.since.Equal(m.enteredAt) {
			b = appendKey(b, "timeoutSince", false)
			b = m.times.append(b, m.since)
		}
		if starts, fired := m.snapshotClocks(); starts != nil || fired != nil {
			// Rare (states of a statechart entered after its configuration's clock): the
			// standard encoder.
			if starts != nil {
				x, err := json.Marshal(starts)
				if err != nil {
					return b, false
				}
				b = append(appendKey(b, "clocks", false), x...)
			}
			if fired != nil {
				x, err := json.Marshal(fired)
				if err != nil {
					return b, false
				}
				b = append(appendKey(b, "delaysFired", false), x...)
			}
		}
	}
	if !reflect.ValueOf(&m.extra).Elem().IsZero() {
		x, err := json.Marshal(&m.extra)
		if err != nil {
			return b, false
		}
		b = appendKey(b, "extra", false)
		b = append(b, x...)
	}
	if h := m.historyValues(); len(h) > 0 {
		b = appendKey(b, "history", false)
		b = appendMap(b, h, func(k string) string { return k }, appendString)
	}
	if m.unstarted {
		b = appendKey(b, "unstarted", false)
		b = append(b, "true"...)
	}
	return append(b, '}'), true
}

// appendStates appends a JSON object keyed by the names of the states s (of n) for which
// has holds, in the order of their names, each with value's encoding.
func appendStates[S StateType, E, R EnumType, C, X any](m *Machine[S, E, R, C, X], b []byte, n int, has func(int) bool, value func([]byte, int) []byte) []byte {
	b = append(b, '{')
	first := true
	for _, s := range m.def.byName {
		if int(s) >= n || !has(int(s)) {
			continue
		}
		if !first {
			b = append(b, ',')
		}
		first = false
		b = appendString(b, S(s).String())
		b = append(b, ':')
		b = value(b, int(s))
	}
	return append(b, '}')
}

// countTrue counts the true values of bs.
func countTrue(bs []bool) int {
	n := 0
	for _, b := range bs {
		if b {
			n++
		}
	}
	return n
}

// encodeSnapshot returns the JSON of the machine's snapshot, with ctx its context's
// encoding: appendSnapshot's, in the machine's snapshot buffer (valid until the next
// call), or encoding/json's when it cannot.
func (m *Machine[S, E, R, C, X]) encodeSnapshot(ctx []byte) ([]byte, error) {
	if len(ctx) > 0 {
		if b, ok := m.appendSnapshot(m.snapBuf[:0], ctx); ok {
			m.snapBuf = b
			return b, nil
		}
	}
	s := m.Snapshot()
	return json.Marshal(&s)
}
