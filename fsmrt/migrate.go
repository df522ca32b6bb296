package fsmrt

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"sync"
)

// Migration says how an instance stored under an older spec becomes an instance of this
// one: the generator derives it from a migration the spec declares (and composes the
// migrations of the older specs, so that one step covers a chain of versions). Names are
// spec names; a name that a map does not hold stays as it is.
type Migration struct {
	// From is the fingerprint of the older spec.
	From string
	// States maps the older spec's states that are named otherwise here (the checker
	// proved that every state has a place).
	States map[string]string
	// Events, Counters and Fields (of the context) map the older names renamed here, and
	// to "" those the spec no longer has: their values are dropped.
	Events, Counters, Fields map[string]string
	// Defaults are the values (JSON) of the context fields the older spec did not have,
	// given to the instances that have none.
	Defaults map[string]string
	// Transitions gives, by the older spec's index, the transition here that replays its
	// log entries: the same move on the same event, with the same bookkeeping; -1 where
	// there is none, and an entry of it cannot be replayed (a snapshot taken after it
	// can).
	Transitions []int32
	// Moves gives, by the older spec's index, what a transition without a counterpart
	// here did to the counters: its entries replay as recorded, to the state and with the
	// context they left.
	Moves []Move
}

// Move is what a transition of an older spec did to the counters, by this spec's counter
// indexes (those dropped left out): it incremented Inc and reset Reset, in the state it
// left; Internal says it stayed in that state.
type Move struct {
	Inc      []int32 `json:"inc,omitempty"`
	Reset    []int32 `json:"reset,omitempty"`
	Internal bool    `json:"internal,omitempty"`
}

// migration returns the migration of d from the spec of fingerprint from, if d has one.
func (d *Def[S, E, R]) migration(from string) *Migration {
	for i := range d.Migrations {
		if d.Migrations[i].From == from {
			return &d.Migrations[i]
		}
	}
	return nil
}

// migrators holds, by the generated state type, the snapshot migrations its package
// registered (RegisterMigrations), for Snapshot.UnmarshalJSON.
var migrators sync.Map

// RegisterMigrations makes the snapshots decoded as JSON into the Snapshot type of d's
// states migrate from the specs d declares migrations from. A generated package whose spec
// declares migrations calls it once, as a package variable's initializer; it returns true.
func RegisterMigrations[S StateType, E, R EnumType](d *Def[S, E, R]) bool {
	migrators.Store(reflect.TypeFor[S](), func(b []byte) ([]byte, error) { return d.migrateSnapshot(b) })
	return true
}

// migrateSnapshotJSON migrates the snapshot b if it was written under a spec whose
// migration the package of state type S registered; else it returns b.
func migrateSnapshotJSON[S StateType](b []byte) ([]byte, error) {
	f, ok := migrators.Load(reflect.TypeFor[S]())
	if !ok {
		return b, nil
	}
	return f.(func([]byte) ([]byte, error))(b)
}

// writtenUnder reports, without decoding b, whether it is JSON this package wrote under
// spec fp: "spec" is among its first members (first in an entry, after "version" in a
// snapshot). Decoding checks the spec again; this only spares migrations the decoding of
// what is of this spec already, which is almost everything they see.
func writtenUnder(b []byte, fp string) bool {
	const key = `"spec":"`
	i := bytes.Index(b[:min(len(b), 32)], []byte(key))
	if i < 0 {
		return false
	}
	rest := b[i+len(key):]
	return len(rest) > len(fp) && string(rest[:len(fp)]) == fp && rest[len(fp)] == '"'
}

// specOf returns the "spec" member of the JSON object b, "" when it has none.
func specOf(b []byte) string {
	var v struct {
		Spec string `json:"spec"`
	}
	if json.Unmarshal(b, &v) != nil {
		return ""
	}
	return v.Spec
}

// migrateSnapshot returns the snapshot b as this spec writes it, when it was written under
// a spec d migrates from; else b (b that is not JSON too: decoding it refuses it). It fails
// with a SnapshotError when b holds a value the migration has no place for.
func (d *Def[S, E, R]) migrateSnapshot(b []byte) ([]byte, error) {
	if writtenUnder(b, d.Spec.Fingerprint) {
		return b, nil
	}
	from := specOf(b)
	mg := d.migration(from)
	if mg == nil || from == d.Spec.Fingerprint {
		return b, nil
	}
	var o map[string]json.RawMessage
	if err := json.Unmarshal(b, &o); err != nil {
		return nil, InvalidSnapshot(d.Spec, "(json)", err.Error())
	}
	r := rewriter{mg: mg}
	o["spec"] = r.quote(d.Spec.Fingerprint)
	r.name(o, "state", mg.States)
	r.keys(o, "counters", mg.Counters)
	r.keys(o, "limits", mg.Counters)
	if sc := r.object(o, "stateCounters"); sc != nil {
		sc = r.rename(sc, mg.Counters)
		for k, v := range sc {
			sc[k] = sumByState[int](&r, v, mg.States)
		}
		o["stateCounters"] = r.encode(sc)
	}
	if rem := r.object(o, "remembered"); rem != nil {
		rem = r.rename(rem, mg.States)
		for k, v := range rem {
			var left string
			if r.decode(v, &left) {
				rem[k] = r.quote(r.to(left, mg.States))
			}
		}
		o["remembered"] = r.encode(rem)
	}
	if b, ok := o["timeByState"]; ok {
		o["timeByState"] = sumByState[int64](&r, b, mg.States)
	}
	r.keys(o, "timeouts", mg.States)
	if _, ok := o["timeoutSince"]; ok {
		// A timeout counted from a state around the configuration counts from the
		// configuration's entry where this spec's configuration shares no timeout.
		var st string
		if r.decode(o["state"], &st) {
			if s, ok := named[S](len(d.States), st); !ok || d.States[s].Clock == 0 {
				delete(o, "timeoutSince")
			}
		}
	}
	d.clampCounts(&r, o)
	r.context(o, "context")
	if x := r.object(o, "extra"); x != nil {
		r.keys(x, "payloads", mg.Events)
		o["extra"] = r.encode(x)
	}
	if r.err != nil {
		return nil, InvalidSnapshot(d.Spec, "(migration from "+from+")", r.err.Error())
	}
	return json.Marshal(o)
}

// migrateEntry returns the log entry b as this spec writes it, when it was written under
// a spec d migrates from; else b. An entry of a transition without a counterpart here,
// nor a Move, decodes (what the machine recalls of its past needs no more) as an entry of
// no transition, which replaying it refuses. dropped says its event is one this spec no
// longer has: the entry names none.
func (d *Def[S, E, R]) migrateEntry(b []byte) (out []byte, dropped bool, err error) {
	if writtenUnder(b, d.Spec.Fingerprint) {
		return b, false, nil
	}
	from := specOf(b)
	mg := d.migration(from)
	if mg == nil || from == d.Spec.Fingerprint {
		return b, false, nil
	}
	var o map[string]json.RawMessage
	if err := json.Unmarshal(b, &o); err != nil {
		return nil, false, err
	}
	r := rewriter{mg: mg}
	upgradeEntry(o)
	o["spec"] = r.quote(d.Spec.Fingerprint)
	r.name(o, "from", mg.States)
	r.name(o, "to", mg.States)
	var ti int
	if t, ok := o["transition"]; ok && r.decode(t, &ti) {
		switch {
		case ti >= 0 && ti < len(mg.Transitions) && mg.Transitions[ti] < 0 && ti < len(mg.Moves):
			// No transition here replays it: it replays as recorded.
			o["transition"], o["moved"] = r.encode(-1), r.encode(mg.Moves[ti])
		case ti >= 0 && ti < len(mg.Transitions) && mg.Transitions[ti] < 0:
			o["transition"] = r.encode(-1)
		default:
			o["transition"] = r.encode(r.transition(ti))
		}
	}
	if t, ok := o["event"]; ok {
		var name string
		if r.decode(t, &name) {
			if to := r.to(name, mg.Events); to != "" {
				o["event"] = r.quote(to)
			} else {
				delete(o, "event") // an event this spec no longer has
				delete(o, "payload")
				dropped = true
			}
		}
	}
	if m, ok := o["microsteps"]; ok {
		var micro []int
		if r.decode(m, &micro) {
			for i, ti := range micro {
				micro[i] = r.transition(ti)
			}
			o["microsteps"] = r.encode(micro)
		}
	}
	r.keys(o, "limits", mg.Counters)
	r.keys(o, "timeouts", mg.States)
	r.context(o, "context")
	if r.err != nil {
		return nil, false, fmt.Errorf("migrating from %s: %w", from, r.err)
	}
	out, err = json.Marshal(o)
	return out, dropped, err
}

// upgradeEntry renames the keys of a log entry of format 1 (LogEntry.UnmarshalJSON) to
// this format's: "taskId" to "id", "event" (the kind) to "kind", "trigger" to "event".
func upgradeEntry(o map[string]json.RawMessage) {
	id, ok := o["taskId"]
	if !ok {
		return
	}
	kind := o["event"]
	event, hasEvent := o["trigger"]
	hasEvent = hasEvent && string(event) != "null"
	delete(o, "taskId")
	delete(o, "trigger")
	delete(o, "event")
	o["id"], o["kind"] = id, kind
	if hasEvent {
		o["event"] = event
	}
}

// sumByState returns b, numbers by state, by the names states gives them: states merged
// into one add up their counts or times.
func sumByState[N int | int64](r *rewriter, b json.RawMessage, states map[string]string) json.RawMessage {
	var byState map[string]N
	if !r.decode(b, &byState) {
		return b
	}
	merged := make(map[string]N, len(byState))
	for st, n := range byState {
		merged[r.to(st, states)] += n
	}
	return r.encode(merged)
}

// rewriter rewrites the members of JSON objects by a migration, keeping the first error.
type rewriter struct {
	mg  *Migration
	err error
}

func (r *rewriter) fail(format string, args ...any) {
	if r.err == nil {
		r.err = fmt.Errorf(format, args...)
	}
}

func (r *rewriter) decode(b json.RawMessage, v any) bool {
	if err := json.Unmarshal(b, v); err != nil {
		r.fail("%v", err)
		return false
	}
	return true
}

func (r *rewriter) encode(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		r.fail("%v", err)
	}
	return b
}

func (r *rewriter) quote(s string) json.RawMessage { return r.encode(s) }

// to returns the name old becomes under names.
func (r *rewriter) to(old string, names map[string]string) string {
	if n, ok := names[old]; ok {
		return n
	}
	return old
}

// transition returns the transition that replays transition ti of the older spec: -1
// stays -1 (an entry of no transition).
func (r *rewriter) transition(ti int) int {
	switch {
	case ti == -1:
		return -1
	case ti < 0 || ti >= len(r.mg.Transitions):
		r.fail("%d is not a transition of the older spec", ti)
	case r.mg.Transitions[ti] < 0:
		r.fail("transition %d of the older spec has no counterpart in this spec", ti)
	default:
		return int(r.mg.Transitions[ti])
	}
	return ti
}

// object decodes member key of o, an object; nil when o has none (or null).
func (r *rewriter) object(o map[string]json.RawMessage, key string) map[string]json.RawMessage {
	b, ok := o[key]
	if !ok {
		return nil
	}
	var v map[string]json.RawMessage
	if !r.decode(b, &v) {
		return nil
	}
	return v
}

// name renames the string member key of o.
func (r *rewriter) name(o map[string]json.RawMessage, key string, names map[string]string) {
	var s string
	if b, ok := o[key]; ok && r.decode(b, &s) {
		o[key] = r.quote(r.to(s, names))
	}
}

// keys renames the keys of the object member key of o, dropping those renamed "".
func (r *rewriter) keys(o map[string]json.RawMessage, key string, names map[string]string) {
	if v := r.object(o, key); v != nil {
		o[key] = r.encode(r.rename(v, names))
	}
}

// rename returns v with its keys renamed, those renamed "" dropped. Two keys renamed
// alike fail.
func (r *rewriter) rename(v map[string]json.RawMessage, names map[string]string) map[string]json.RawMessage {
	out := make(map[string]json.RawMessage, len(v))
	for _, k := range slices.Sorted(maps.Keys(v)) {
		to := r.to(k, names)
		if to == "" {
			continue
		}
		if _, dup := out[to]; dup {
			r.fail("%q and another value both become %q", k, to)
		}
		out[to] = v[k]
	}
	return out
}

// context migrates the context, member key of o: fields renamed or dropped, the defaults
// of the fields it lacks.
func (r *rewriter) context(o map[string]json.RawMessage, key string) {
	b, ok := o[key]
	if !ok || string(b) == "null" {
		if len(r.mg.Defaults) == 0 {
			return
		}
		b = json.RawMessage("{}")
	}
	var c map[string]json.RawMessage
	if !r.decode(b, &c) {
		return
	}
	c = r.rename(c, r.mg.Fields)
	for f, v := range r.mg.Defaults {
		if _, ok := c[f]; !ok {
			c[f] = json.RawMessage(v)
		}
	}
	o[key] = r.encode(c)
}

// Migrate commits, to the machine's store, the migration of an instance Replay loaded
// from an older spec (a SPEC_MIGRATED entry of its event log, with a snapshot): the store
// keeps it under this spec from then on, under the names this spec gives its states and
// counters, with its deadlines rearmed. It reports whether there was a migration to
// commit: a machine loaded under this spec has none (its next transition would commit a
// migration all the same). It fails with ErrNoStore without a store, and as Fire's
// commits fail; nothing changes when it does.
func (m *Machine[S, E, R, C, X]) Migrate(ctx context.Context) (bool, error) {
	if m.migrated == "" {
		return false, nil
	}
	if err := m.note(ctx, KindMigrated, &Input[R]{}, map[string]string{"from": m.migrated}, true); err != nil {
		return false, err
	}
	return true, nil
}

// Migrated returns the fingerprint of the spec the machine was loaded from, when Replay
// migrated it and no commit has stored it under this spec yet; "" otherwise.
func (m *Machine[S, E, R, C, X]) Migrated() string { return m.migrated }

// migrating completes c, a commit of a machine loaded from an older spec: the store is
// told where it comes from, and gets a snapshot, the counters and the deadlines under this
// spec's names. contextJSON is the context the entry recorded, for the snapshot.
func (m *Machine[S, E, R, C, X]) migrating(c *Commit, contextJSON []byte) error {
	if m.migrated == "" {
		return nil
	}
	c.Migrated, c.CountersKept, c.CountersDelta, c.CountersChanged = m.migrated, false, false, nil
	if !c.Rearm {
		c.Rearm, c.Deadlines = true, m.deadlines(m.state, m.since)
	}
	if c.Snapshot == nil {
		var err error
		c.Snapshot, err = m.encodeSnapshot(contextJSON)
		return err
	}
	return nil
}

// applyMoved replays entry e of a transition of an older spec that none here replays: to
// the state it recorded, with the bookkeeping the migration says it did.
func (m *Machine[S, E, R, C, X]) applyMoved(e *LogEntry[S, E, R]) error {
	d := m.def
	mv := e.Moved
	switch {
	case e.From != m.state || int(e.To) >= len(d.States) || e.Transition != -1 || d.Chart != nil:
		return fmt.Errorf("%s -> %s, migrated, in %s", e.From, e.To, m.state)
	case mv.Internal && e.To != e.From:
		return fmt.Errorf("%s -> %s, migrated, is not internal", e.From, e.To)
	}
	for _, c := range slices.Concat(mv.Inc, mv.Reset) {
		if c < 0 || int(c) >= len(d.Counters) {
			return fmt.Errorf("%d is not a counter", c)
		}
	}
	m.count(&Transition{Inc: mv.Inc, Reset: mv.Reset}, e.From, 0, !mv.Internal)
	for _, c := range mv.Inc {
		// A count the older spec allowed past a limit of this one stops below it: the
		// next increment trips the limit.
		if p := m.counter(c, e.From); d.Counters[c].Limit > 0 && *p >= m.limits[c] {
			*p = m.limits[c] - 1
		}
	}
	if e.To != e.From && d.remembers && d.States[e.To].Remembers {
		m.memory[e.To], m.remembered[e.To] = e.From, true
	}
	m.state = e.To
	if !mv.Internal && d.Timing {
		m.moveClock(e.From, e.Timestamp, false)
	}
	m.recallEntry(e)
	m.seq, m.updatedAt = e.Seq, e.Timestamp
	m.passed(e.From, e.Event)
	return nil
}

// clampCounts keeps the counts of snapshot o (migrated) below the limits in force here: a
// count the older spec allowed past a limit of this one stops below it, and the next
// increment trips the limit.
func (d *Def[S, E, R]) clampCounts(r *rewriter, o map[string]json.RawMessage) {
	var changed map[string]int
	if b, ok := o["limits"]; ok && !r.decode(b, &changed) {
		return
	}
	limit := func(name string) int {
		i := slices.IndexFunc(d.Counters, func(c Counter) bool { return c.Name == name })
		if i < 0 || d.Counters[i].Limit == 0 {
			return 0
		}
		c := &d.Counters[i]
		if n, ok := changed[name]; ok && c.Configurable {
			if l, err := limitOf(d.Spec, c, n); err == nil {
				return l
			}
		}
		return c.Limit
	}
	if b, ok := o["counters"]; ok {
		var counts map[string]int
		if r.decode(b, &counts) {
			for name, n := range counts {
				if l := limit(name); l > 0 && n >= l {
					counts[name] = l - 1
				}
			}
			o["counters"] = r.encode(counts)
		}
	}
	if b, ok := o["stateCounters"]; ok {
		var counts map[string]map[string]int
		if r.decode(b, &counts) {
			for name, byState := range counts {
				for st, n := range byState {
					if l := limit(name); l > 0 && n >= l {
						byState[st] = l - 1
					}
				}
			}
			o["stateCounters"] = r.encode(counts)
		}
	}
}
