package lower

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/fsmgen/fsmgen/internal/diag"
	"github.com/fsmgen/fsmgen/internal/ir"
	"github.com/fsmgen/fsmgen/internal/lock"
	"github.com/fsmgen/fsmgen/spec"
)

// migrations resolves the migrations the spec declares: each names an older version of
// the spec, read and checked as a spec, and says where its states, events, counters and
// context fields went. The checker proves that every state of the older spec has a place
// here, that every field keeps a type its stored values decode as, and that the fields
// old instances lack and states require get a value; it pairs every older transition with
// the one here that replays its log entries.
func (l *lowerer) migrations() {
	if l.f.Broken["migrations"] || l.ds.HasErrors() || !l.reading.migrations {
		return
	}
	lk := l.readLock()
	var declared []*migrationOf
	for _, sm := range l.f.Migrations {
		if mg := l.migration(sm, lk); mg != nil {
			declared = append(declared, mg)
			l.m.Migrations = append(l.m.Migrations, mg.Migration)
			// The older spec's own migrations, carried on to here.
			for _, older := range mg.older {
				l.m.Migrations = append(l.m.Migrations, compose(older, mg.Migration, l.co))
			}
		}
	}
	l.lockedMigrations(lk, declared)
	seen := map[string]spec.Pos{}
	for _, mg := range l.m.Migrations {
		if pos, dup := seen[mg.From]; dup {
			l.ds.Errorf(mg.Pos, "a second migration from %s (the first is at %s): keep one", mg.Source, pos)
		}
		seen[mg.From] = mg.Pos
	}
}

// migrationOf is a migration resolved, with the older spec's own.
type migrationOf struct {
	*ir.Migration
	older []*ir.Migration
	sm    *spec.Migration // as the spec declares it
	old   *ir.Machine     // the older version
}

// migration resolves one migration; nil after errors.
func (l *lowerer) migration(sm *spec.Migration, lk *lock.File) *migrationOf {
	if sm.From.Bad || !sm.From.Set {
		return nil
	}
	if strings.HasPrefix(sm.From.Value, "sha256:") {
		return l.fromLocked(sm, lk)
	}
	path := sm.From.Value
	if !filepath.IsAbs(path) {
		path = filepath.Join(filepath.Dir(l.f.Path), path)
	}
	if l.reading.chain[filepath.Clean(path)] {
		l.ds.Errorf(sm.From.Pos, "%s migrates from this spec, which migrates from it: a migration names an older version", sm.From.Value)
		return nil
	}
	data, err := readSpec(path)
	if err != nil {
		l.ds.Errorf(sm.From.Pos, "cannot read the older spec: %v", err)
		return nil
	}
	chain := map[string]bool{filepath.Clean(l.f.Path): true}
	maps.Copy(chain, l.reading.chain)
	old, ds := loadAs(path, data, reading{migrations: true, chain: chain}) // its (state, event) table is not needed
	if old == nil {
		first := ""
		for _, d := range ds {
			if d.Severity == diag.Error {
				first = ": " + d.String()
				break
			}
		}
		l.ds.Errorf(sm.From.Pos, "the older spec %s has errors%s", sm.From.Value, first)
		return nil
	}
	return l.migrateFrom(old, ir.Fingerprint(old), sm)
}

// migrateFrom resolves the migration sm from the older version old, of fingerprint from.
func (l *lowerer) migrateFrom(old *ir.Machine, from string, sm *spec.Migration) *migrationOf {
	switch {
	case old.Name != l.m.Name || old.Package != l.m.Package:
		l.ds.Errorf(sm.From.Pos, "%s is machine %s.%s, this spec %s.%s: a store finds instances by package and machine, so both must stay", sm.From.Value, old.Package, old.Name, l.m.Package, l.m.Name)
		return nil
	case from == ir.Fingerprint(l.m):
		l.ds.Warnf(sm.From.Pos, "%s means what this spec means (the same fingerprint, %s): stored instances load as they are, with nothing to migrate", sm.From.Value, from)
		return nil
	}
	mg := &ir.Migration{From: from, Source: sm.From.Value, Pos: sm.Pos,
		States: map[string]string{}, Events: map[string]string{}, Counters: map[string]string{}, Fields: map[string]string{}, Defaults: map[string]string{}}
	ok := true
	// renames checks a section: each older name is one of old's, each new one of the spec's.
	renames := func(kind string, rs []*spec.Rename, olds, news []string, drop bool, into map[string]string) {
		for _, r := range rs {
			switch {
			case r.Old.Bad || r.New.Bad:
				ok = false
			case !slices.Contains(olds, r.Old.Value):
				l.ds.Errorf(r.Old.Pos, "%s has no %s %q%s", sm.From.Value, kind, r.Old.Value, l.didYouMean("older "+kind+" "+sm.From.Value, r.Old.Value, func() []string { return olds }))
				ok = false
			case r.New.Value == "" && !drop:
				ok = false // null, which the schema refuses here
			case r.New.Value != "" && !slices.Contains(news, r.New.Value):
				l.ds.Errorf(r.New.Pos, "unknown %s %q%s", kind, r.New.Value, l.didYouMean("migration "+kind, r.New.Value, func() []string { return news }))
				ok = false
			default:
				into[r.Old.Value] = r.New.Value
			}
		}
	}
	oldN, newN := namesOf(old), namesOf(l.m)
	renames("state", sm.States, oldN.states, newN.states, false, mg.States)
	renames("event", sm.Events, oldN.events, newN.events, false, mg.Events)
	renames("counter", sm.Counters, oldN.counters, newN.counters, false, mg.Counters)
	renames("context field", sm.Context, oldN.fields, newN.fields, true, mg.Fields)
	if !ok {
		return nil
	}
	// Two older events, counters or fields never become one: their values would collide.
	for _, x := range []struct {
		kind       string
		olds       []string
		into       map[string]string
		renamesPos []*spec.Rename
	}{{"event", oldN.events, mg.Events, sm.Events}, {"counter", oldN.counters, mg.Counters, sm.Counters}, {"context field", oldN.fields, mg.Fields, sm.Context}} {
		by := map[string]string{}
		for _, n := range x.olds {
			to := mapped(n, x.into)
			if to == "" {
				continue
			}
			if other, dup := by[to]; dup {
				pos := sm.From.Pos
				for _, r := range x.renamesPos {
					if r.Old.Value == n || r.Old.Value == other {
						pos = r.Old.Pos
					}
				}
				l.ds.Errorf(pos, "%ss %q and %q of %s both become %q here: their values would collide; rename or drop one", x.kind, other, n, sm.From.Value, to)
				ok = false
			}
			by[to] = n
		}
	}
	// Every older state has a place: its own name here, or the state it is mapped to.
	for _, s := range old.States {
		if _, mapped := mg.States[s.Name]; !mapped && !slices.Contains(newN.states, s.Name) {
			l.ds.Errorf(sm.From.Pos, "state %q of %s (%s) has no place in this spec: instances stored in it would be stranded; map it to a state under states", s.Name, sm.From.Value, s.Pos)
			ok = false
		}
	}
	// Names that are gone: events and counters dropped with their values.
	drop := func(olds, news []string, into map[string]string) {
		for _, n := range olds {
			if _, mapped := into[n]; !mapped && !slices.Contains(news, n) {
				into[n] = ""
			}
		}
	}
	drop(oldN.events, newN.events, mg.Events)
	drop(oldN.counters, newN.counters, mg.Counters)
	drop(oldN.fields, newN.fields, mg.Fields)
	for _, c := range old.Counters {
		if to := mapped(c.Name, mg.Counters); to != "" {
			if nc := l.co[to]; nc != nil && nc.PerState != c.PerState {
				l.ds.Errorf(sm.From.Pos, "counter %q of %s is %s, counter %q here %s: its stored values would not fit", c.Name, sm.From.Value, perState(c.PerState), to, perState(nc.PerState))
				ok = false
			}
		}
	}
	// Fields keep a type their stored values decode as.
	had := map[string]bool{}
	for _, f := range old.Fields {
		to := mapped(f.Name, mg.Fields)
		if to == "" {
			continue
		}
		had[to] = true
		if nf := l.fi[to]; nf != nil && !decodesAs(f, nf) {
			l.ds.Errorf(sm.From.Pos, "context field %q of %s is %s, field %q here %s: its stored values would not decode; drop them (context: {%s: null}) or keep the type", f.Name, sm.From.Value, typeOf(f), to, typeOf(nf), f.Name)
			ok = false
		}
	}
	// The fields old instances lack: the migration's default, else the spec's.
	given := map[string]bool{}
	for _, d := range sm.Defaults {
		fd := l.fi[d.Field.Value]
		switch {
		case d.Field.Bad || d.Value.Bad:
			ok = false
			continue
		case fd == nil:
			l.ds.Errorf(d.Field.Pos, "unknown context field %q%s", d.Field.Value, l.didYouMean("migration context field", d.Field.Value, func() []string { return newN.fields }))
			ok = false
			continue
		case had[fd.Name]:
			l.ds.Errorf(d.Field.Pos, "instances stored under %s have context field %q: a default is for the fields they lack", sm.From.Value, fd.Name)
			ok = false
			continue
		case fd.Type.Collection():
			l.ds.Errorf(d.Field.Pos, "context field %q is a %s: a default is a single value", fd.Name, fd.Type)
			ok = false
			continue
		}
		lit, good := l.literal(d.Value, fd, "the default")
		if !good {
			ok = false
			continue
		}
		mg.Defaults[fd.Name], given[fd.Name] = literalJSON(fd, lit), true
	}
	for _, fd := range l.m.Fields {
		if had[fd.Name] || given[fd.Name] {
			continue
		}
		if fd.Default.Set && !fd.Type.Collection() {
			mg.Defaults[fd.Name] = literalJSON(fd, fd.Default)
			continue
		}
		if by := l.m.RequiredBy(fd); len(by) > 0 {
			l.ds.Errorf(sm.From.Pos, "context field %q is new and %s requires it: give the instances stored under %s a value under defaults", fd.Name, strings.Join(by, ", "), sm.From.Value)
			ok = false
		}
	}
	if !ok {
		return nil
	}
	mg.OldStates = oldN.states
	mg.Transitions = pairTransitions(old, l.m, mg)
	if l.m.Chart == nil && old.Chart == nil {
		mg.Moves = map[int]*ir.Move{}
		for i, t := range mg.Transitions {
			if t < 0 {
				ot := old.Transitions[i]
				mg.Moves[i] = &ir.Move{Increment: renamed(ot.Increment, mg, l.co), Reset: renamed(ot.Reset, mg, l.co), Internal: ot.Target.Kind == ir.Internal}
			}
		}
	}
	dropIdentities(mg.States, mg.Events, mg.Counters, mg.Fields)
	return &migrationOf{Migration: mg, older: old.Migrations, sm: sm, old: old}
}

// specNames are the names of a machine's states, events, counters and context fields.
type specNames struct{ states, events, counters, fields []string }

func namesOf(m *ir.Machine) specNames {
	return specNames{
		states:   nameList(m.States, func(s *ir.State) string { return s.Name }),
		events:   nameList(m.Events, func(e *ir.Event) string { return e.Name }),
		counters: nameList(m.Counters, func(c *ir.Counter) string { return c.Name }),
		fields:   nameList(m.Fields, func(f *ir.Field) string { return f.Name }),
	}
}

// nameList returns the names of xs.
func nameList[T any](xs []T, name func(T) string) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = name(x)
	}
	return out
}

// dropIdentities removes from renamings the names that stay as they are.
func dropIdentities(ms ...map[string]string) {
	for _, m := range ms {
		maps.DeleteFunc(m, func(k, v string) bool { return k == v })
	}
}

// mapped returns what name becomes under a migration's map.
func mapped(name string, m map[string]string) string {
	if to, ok := m[name]; ok {
		return to
	}
	return name
}

func perState(b bool) string {
	if b {
		return "per state"
	}
	return "not per state"
}

// typeOf describes a field's type, with an enum's values.
func typeOf(f *ir.Field) string {
	if f.Type.Kind == ir.Enum {
		return fmt.Sprintf("%s (%s)", f.Type, strings.Join(f.Values, ", "))
	}
	return f.Type.String()
}

// decodesAs reports whether every value stored of field old decodes as field nf: the
// same type, an enum that kept its values, an int read as a float.
func decodesAs(old, nf *ir.Field) bool {
	switch {
	case old.Type.List != nf.Type.List || old.Type.Map != nf.Type.Map:
		return false
	case old.Type.Kind == nf.Type.Kind && old.Type.Kind == ir.Enum:
		for _, v := range old.Values {
			if !slices.Contains(nf.Values, v) {
				return false
			}
		}
		return true
	case old.Type.Kind == ir.Int && nf.Type.Kind == ir.Float, old.Type.Kind == ir.Enum && nf.Type.Kind == ir.String:
		return true // an int reads as a float, an enum's value (its name) as a string
	}
	return old.Type.Kind == nf.Type.Kind
}

// literalJSON is a literal as the generated context encodes field f's values.
func literalJSON(f *ir.Field, lit ir.Literal) string {
	var v any
	switch f.Type.Kind {
	case ir.Int, ir.Duration: // a duration encodes in nanoseconds
		v = int64(lit.Num)
	case ir.Float:
		v = lit.Num
	case ir.Bool:
		v = lit.Bool
	default:
		v = lit.Str
	}
	b, _ := json.Marshal(v) // scalars always encode
	return string(b)
}

// pairTransitions gives each transition of old the first transition of m that replays its
// log entries: from the states it leaves from, on its events, to its targets, of the same
// kind, with the same counters incremented and reset (by their names here).
func pairTransitions(old, m *ir.Machine, mg *ir.Migration) []int {
	shapes := make([]transShape, len(m.Transitions))
	for i, t := range m.Transitions {
		shapes[i] = shapeOf(t, nil)
	}
	out := make([]int, len(old.Transitions))
	for i, ot := range old.Transitions {
		out[i] = -1
		want := shapeOf(ot, mg)
		for j, t := range m.Transitions {
			if replays(shapes[j], want) {
				out[i] = t.Index
				break
			}
		}
	}
	return out
}

// transShape is what replaying a transition's entry depends on, by names.
type transShape struct {
	from, on           []string
	targets            []string
	inc, reset, micros []string
}

// shapeOf describes t, under mg's names when mg is not nil.
func shapeOf(t *ir.Transition, mg *ir.Migration) transShape {
	st, ev, co := func(s string) string { return s }, func(s string) string { return s }, func(s string) string { return s }
	if mg != nil {
		st = func(s string) string { return mapped(s, mg.States) }
		ev = func(s string) string { return mapped(s, mg.Events) }
		co = func(s string) string { return mapped(s, mg.Counters) }
	}
	target := func(tg ir.Target) string {
		name := ""
		if tg.State != nil {
			name = st(tg.State.Name)
		}
		return fmt.Sprintf("%d %s", tg.Kind, name)
	}
	var s transShape
	for _, f := range t.From {
		s.from = append(s.from, st(f.Name))
	}
	for _, e := range t.Events {
		s.on = append(s.on, ev(e.Name))
	}
	s.targets = append(s.targets, target(t.Target))
	for _, c := range t.Choices {
		s.targets = append(s.targets, target(c.Target))
	}
	// Counters the migration drops count nothing any more.
	for _, c := range t.Increment {
		if n := co(c.Name); n != "" {
			s.inc = append(s.inc, n)
		}
	}
	for _, c := range t.Reset {
		if n := co(c.Name); n != "" {
			s.reset = append(s.reset, n)
		}
	}
	for _, r := range t.Raise {
		s.micros = append(s.micros, ev(r.Name))
	}
	return s
}

// replays reports whether a transition of shape t replays the entries of one of shape
// want: it leaves from all its states on all its events, alike otherwise.
func replays(t, want transShape) bool {
	for _, f := range want.from {
		if !slices.Contains(t.from, f) {
			return false
		}
	}
	for _, e := range want.on {
		if !slices.Contains(t.on, e) {
			return false
		}
	}
	return slices.Equal(t.targets, want.targets) && sameSet(t.inc, want.inc) && sameSet(t.reset, want.reset) && slices.Equal(t.micros, want.micros)
}

func sameSet(a, b []string) bool {
	a, b = slices.Sorted(slices.Values(a)), slices.Sorted(slices.Values(b))
	return slices.Equal(a, b)
}

// compose returns the migration from older's spec to this one: older, then mg; counters
// are this spec's, by name.
func compose(older, mg *ir.Migration, counters map[string]*ir.Counter) *ir.Migration {
	out := &ir.Migration{From: older.From, Source: mg.Source + " < " + older.Source, Pos: mg.Pos,
		States: composeNames(older.States, mg.States), Events: composeNames(older.Events, mg.Events),
		Counters: composeNames(older.Counters, mg.Counters), Fields: composeNames(older.Fields, mg.Fields),
		Defaults: maps.Clone(mg.Defaults), OldStates: older.OldStates}
	for f, v := range older.Defaults {
		if to := mapped(f, mg.Fields); to != "" {
			if _, set := out.Defaults[to]; !set {
				out.Defaults[to] = v
			}
		}
	}
	for i := range older.Transitions {
		t := older.Transitions[i]
		if t >= 0 && t < len(mg.Transitions) {
			t = mg.Transitions[t]
		} else {
			t = -1
		}
		out.Transitions = append(out.Transitions, t)
	}
	// An entry the older migration replays as recorded still does; one it pairs with a
	// transition replays as that transition does under mg.
	if older.Moves != nil && mg.Moves != nil {
		out.Moves = map[int]*ir.Move{}
		for i, t := range older.Transitions {
			switch {
			case t < 0:
				mv := older.Moves[i]
				out.Moves[i] = &ir.Move{Increment: renamed(mv.Increment, mg, counters), Reset: renamed(mv.Reset, mg, counters), Internal: mv.Internal}
			case out.Transitions[i] < 0:
				out.Moves[i] = mg.Moves[t]
			}
		}
	}
	return out
}

// renamed returns the counters here (by name in counters) that counters of mg's older
// spec became.
func renamed(cs []*ir.Counter, mg *ir.Migration, counters map[string]*ir.Counter) []*ir.Counter {
	var out []*ir.Counter
	for _, c := range cs {
		if nc := counters[mapped(c.Name, mg.Counters)]; nc != nil {
			out = append(out, nc)
		}
	}
	return out
}

// composeNames composes two renamings: a then b.
func composeNames(a, b map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range a {
		if v != "" {
			v = mapped(v, b)
		}
		out[k] = v
	}
	for k, v := range b {
		if _, ok := a[k]; !ok {
			out[k] = v
		}
	}
	dropIdentities(out)
	return out
}

// readSpec reads the older spec at path: a regular file no larger than a spec may be (a
// migration names a spec, never a device or a directory to read forever). The path is
// tested before it is opened, and opened without blocking: opening a FIFO for reading
// would wait for a writer.
func readSpec(path string) ([]byte, error) {
	notFile := fmt.Errorf("%s is not a regular file", path)
	if fi, err := os.Stat(path); err == nil && !fi.Mode().IsRegular() {
		return nil, notFile
	}
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	switch {
	case err != nil:
		return nil, err
	case !fi.Mode().IsRegular():
		return nil, notFile
	case fi.Size() > spec.MaxBytes:
		return nil, fmt.Errorf("%s is larger than a spec may be (%d bytes)", path, spec.MaxBytes)
	}
	return io.ReadAll(io.LimitReader(f, spec.MaxBytes+1))
}
