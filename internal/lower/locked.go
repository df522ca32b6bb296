package lower

import (
	"fmt"
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
// the spec covers and that this spec can load as it is: where the version's every state,
// event, counter and context field is still here (the field with a type its values decode
// as), its instances migrate with nothing written by hand. A version that has something
// this spec has not is an error at its first line in the lock, proposing the migration
// entry to write.
func (l *lowerer) lockedMigrations(lk *lock.File) {
	if lk == nil {
		return
	}
	cur := ir.Fingerprint(l.m)
	covered := map[string]bool{cur: true}
	for _, mg := range l.m.Migrations {
		covered[mg.From] = true
	}
	for _, v := range lk.Versions {
		if covered[v.Fingerprint] {
			continue
		}
		old, err := v.Machine()
		if err != nil {
			l.ds.Errorf(v.Pos, "version %s: %v", lock.Short(v.Fingerprint), err)
			continue
		}
		if proposal := l.breaking(old, v); proposal != "" {
			l.ds.Errorf(v.Pos, "%s", proposal)
			continue
		}
		name := lock.Short(v.Fingerprint)
		sm := &spec.Migration{Pos: v.Pos, From: spec.Str{Value: name, Pos: v.Pos, Set: true}}
		if mg := l.migrateFrom(old, v.Fingerprint, sm); mg != nil {
			mg.Source = name + " (" + filepath.Base(lk.Path) + ")"
			l.m.Migrations = append(l.m.Migrations, mg.Migration)
		}
	}
}

// breaking returns, when the locked version old has a state, event, counter or context
// field that this spec has not (or a field whose values would not decode here), the error
// that says so and proposes the migration entry to write; "" when it has none.
func (l *lowerer) breaking(old *ir.Machine, v *lock.Version) string {
	news := namesOf(l.m)
	type gap struct{ section, name, why string }
	var gaps []gap
	missing := func(section string, olds, news []string) {
		for _, n := range olds {
			if !slices.Contains(news, n) {
				gaps = append(gaps, gap{section, n, ""})
			}
		}
	}
	olds := namesOf(old)
	missing("states", olds.states, news.states)
	missing("events", olds.events, news.events)
	missing("counters", olds.counters, news.counters)
	missing("context", olds.fields, news.fields)
	for _, f := range old.Fields {
		if nf := l.fi[f.Name]; nf != nil && !decodesAs(f, nf) {
			gaps = append(gaps, gap{"context", f.Name, fmt.Sprintf("%s there, %s here", typeOf(f), typeOf(nf))})
		}
	}
	if len(gaps) == 0 {
		return ""
	}
	name := lock.Short(v.Fingerprint)
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
