package lower

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/fsmgen/fsmgen/internal/ir"
	"github.com/fsmgen/fsmgen/internal/lock"
	"github.com/fsmgen/fsmgen/spec"
)

// readLock reads the version lock beside the spec (lock.Path), for the spec being loaded
// (not an older one read through a migration); nil when there is none or it has errors,
// which it reports at their positions.
func (l *lowerer) readLock() *lock.File {
	if l.reading.chain != nil || l.f.Path == "" {
		return nil
	}
	if fi, err := os.Stat(l.f.Path); err != nil || !fi.Mode().IsRegular() {
		return nil // a spec that is not a file on disk (given as data, under a name) has no lock
	}
	lk, exists, ds := lock.Read(l.f.Path)
	l.ds = append(l.ds, ds...)
	if !exists || ds.HasErrors() {
		return nil
	}
	return lk
}

// fromLocked resolves a migration whose from names a version of the lock by fingerprint.
func (l *lowerer) fromLocked(sm *spec.Migration, lk *lock.File) *migrationOf {
	if lk == nil {
		l.ds.Errorf(sm.From.Pos, "%s names a version by its fingerprint, and there is no version lock beside this spec (%s) to find it in: fsmgen generate writes it", sm.From.Value, filepath.Base(lock.Path(l.f.Path)))
		return nil
	}
	v, msg := lk.Find(sm.From.Value)
	if v == nil {
		l.ds.Errorf(sm.From.Pos, "%s", msg)
		return nil
	}
	old, err := v.Machine()
	if err != nil {
		l.ds.Errorf(sm.From.Pos, "version %s of the lock: %v", lock.Short(v.Fingerprint), err)
		return nil
	}
	return l.migrateFrom(old, v.Fingerprint, sm)
}

// lockedMigrations adds a migration from every version of the lock that no migration of
// the spec covers and that this spec can load: as it is, where the version's every state,
// event, counter and context field is still here (the field with a type its values decode
// as), with nothing written by hand; else through a migration the spec declares from a
// later version that has all of them (the version before a rename, say), its renames
// applied to the names this version has. So a breaking change is written once, for the
// version it broke, and carries every version before it too. A version neither carries is
// an error at its first line in the lock, proposing the migration entry to write.
func (l *lowerer) lockedMigrations(lk *lock.File, declared []*migrationOf) {
	if lk == nil {
		return
	}
	cur := ir.Fingerprint(l.m)
	covered := map[string]bool{cur: true}
	for _, mg := range l.m.Migrations {
		covered[mg.From] = true
	}
	type stranded struct {
		v    *lock.Version
		old  *ir.Machine
		gaps []gap
	}
	var lost []stranded
	for _, v := range lk.Versions {
		if covered[v.Fingerprint] {
			continue
		}
		old, err := v.Machine()
		if err != nil {
			l.ds.Errorf(v.Pos, "version %s: %v", lock.Short(v.Fingerprint), err)
			continue
		}
		name := lock.Short(v.Fingerprint)
		sm := &spec.Migration{Pos: v.Pos, From: spec.Str{Value: name, Pos: v.Pos, Set: true}}
		source := name + " (" + filepath.Base(lk.Path) + ")"
		if gaps := l.gaps(old, l.m); len(gaps) > 0 {
			via := l.carrier(old, declared)
			if via == nil {
				lost = append(lost, stranded{v, old, gaps})
				continue
			}
			sm = narrowed(via.sm, old, v.Pos, name)
			source = name + " (" + filepath.Base(lk.Path) + ") as " + via.sm.From.Value
		}
		if mg := l.migrateFrom(old, v.Fingerprint, sm); mg != nil {
			mg.Source = source
			l.m.Migrations = append(l.m.Migrations, mg.Migration)
		}
	}
	// One entry for the latest of the versions a change strands carries the earlier ones
	// (those whose names it has): the error is at the versions no other stranded version
	// carries, and names those it would carry. carries says the stranded version y carries
	// x: x has nothing y lacks, and y has more, or as much and comes first.
	carries := func(i, j int) bool {
		y, x := lost[i], lost[j]
		if i == j || len(l.gaps(x.old, y.old)) > 0 {
			return false
		}
		return len(l.gaps(y.old, x.old)) > 0 || i < j
	}
	for i, y := range lost {
		var carried []string
		top := true
		for j, x := range lost {
			if carries(j, i) {
				top = false
			}
			if carries(i, j) {
				carried = append(carried, lock.Short(x.v.Fingerprint))
			}
		}
		if !top {
			continue
		}
		msg := proposal(lock.Short(y.v.Fingerprint), y.gaps)
		if len(carried) > 0 {
			msg += "\n(the entry carries the earlier versions " + strings.Join(carried, ", ") + " too: they have nothing it lacks)"
		}
		l.ds.Errorf(y.v.Pos, "%s", msg)
	}
}

// carrier returns the declared migration whose older version has everything old has (so
// that old's instances are instances of it too, as far as names and field types go); nil
// when none does.
func (l *lowerer) carrier(old *ir.Machine, declared []*migrationOf) *migrationOf {
	for _, d := range declared {
		if d.old != nil && len(l.gaps(old, d.old)) == 0 {
			return d
		}
	}
	return nil
}

// narrowed is the declared migration sm applied to the older version old: its renames of
// the names old has, its defaults for the fields old lacks, named and placed as the
// locked version.
func narrowed(sm *spec.Migration, old *ir.Machine, pos spec.Pos, name string) *spec.Migration {
	has := namesOf(old)
	keep := func(rs []*spec.Rename, names []string) []*spec.Rename {
		var out []*spec.Rename
		for _, r := range rs {
			if slices.Contains(names, r.Old.Value) {
				out = append(out, r)
			}
		}
		return out
	}
	out := &spec.Migration{Pos: pos, From: spec.Str{Value: name, Pos: pos, Set: true},
		States: keep(sm.States, has.states), Events: keep(sm.Events, has.events),
		Counters: keep(sm.Counters, has.counters), Context: keep(sm.Context, has.fields)}
	for _, d := range sm.Defaults {
		if !slices.Contains(has.fields, d.Field.Value) {
			out.Defaults = append(out.Defaults, d)
		}
	}
	return out
}

// gap is a name of an older version that a later one has not.
type gap struct{ section, name, why string }

// gaps returns what the older version old has that the machine m has not: states, events,
// counters and context fields, and fields whose values would not decode as m's.
func (l *lowerer) gaps(old, m *ir.Machine) []gap {
	var gaps []gap
	olds, news := namesOf(old), namesOf(m)
	missing := func(section string, olds, news []string) {
		for _, n := range olds {
			if !slices.Contains(news, n) {
				gaps = append(gaps, gap{section, n, ""})
			}
		}
	}
	missing("states", olds.states, news.states)
	missing("events", olds.events, news.events)
	missing("counters", olds.counters, news.counters)
	missing("context", olds.fields, news.fields)
	for _, f := range old.Fields {
		for _, nf := range m.Fields {
			if nf.Name == f.Name && !decodesAs(f, nf) {
				gaps = append(gaps, gap{"context", f.Name, fmt.Sprintf("%s there, %s here", typeOf(f), typeOf(nf))})
			}
		}
	}
	return gaps
}

// proposal is the error for a locked version (name) that has what this spec has not:
// what, and the migration entry to write.
func proposal(name string, gaps []gap) string {
	var what []string
	for _, g := range gaps {
		kind := map[string]string{"states": "state", "events": "event", "counters": "counter", "context": "context field"}[g.section]
		if g.why != "" {
			what = append(what, fmt.Sprintf("%s %q (%s)", kind, g.name, g.why))
		} else {
			what = append(what, fmt.Sprintf("%s %q", kind, g.name))
		}
	}
	var entry strings.Builder
	fmt.Fprintf(&entry, "  migrations:\n    - from: %s\n", name)
	for _, section := range []string{"states", "events", "counters", "context"} {
		var pairs []string
		for _, g := range gaps {
			if g.section == section {
				pairs = append(pairs, fmt.Sprintf("%s: NEW_NAME", g.name))
			}
		}
		if len(pairs) > 0 {
			fmt.Fprintf(&entry, "      %s: { %s }\n", section, strings.Join(pairs, ", "))
		}
	}
	return fmt.Sprintf("version %s of this spec, which code was generated from, has %s, which this spec has not: "+
		"its stored instances would not load. Say where they went with a migration from it (fill in the names; "+
		"an event or counter left out is dropped, its log entries replaying as recorded, and a context field mapped to ~ drops its values):\n%s",
		name, strings.Join(what, ", "), strings.TrimSuffix(entry.String(), "\n"))
}
