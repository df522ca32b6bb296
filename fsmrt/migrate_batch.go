package fsmrt

import (
	"context"
	"errors"
	"fmt"
)

// MigrateOptions says how MigrateStored goes through a store.
type MigrateOptions struct {
	// Batch is how many instances are read at a time (100 when 0).
	Batch int
	// After starts after the instance of this ID (IDs in order), to resume a run.
	After string
	// DryRun changes nothing: the report says what would move.
	DryRun bool
	// Progress, when set, is told each instance as it is checked: its ID, the spec it was
	// stored under, and the error that refused it (nil when it moved or was current).
	Progress func(id, spec string, err error)
}

// MigrateReport says what MigrateStored found and did.
type MigrateReport struct {
	// Checked counts the instances read; Current those stored under this spec already;
	// Moved those moved to it (with DryRun, those that would move).
	Checked, Current, Moved int
	// Before counts the instances of older specs, by fingerprint and by the state they
	// were stored in (its name under that spec); After, those moved, by their state here.
	Before map[string]map[string]int
	After  map[string]int
	// Refused lists the instances that cannot move, each with why (a *SpecMismatchError
	// for a spec this one declares no migration from, a *SnapshotError or *LogError for
	// stored data that does not load, a store error).
	Refused []MigrateRefusal
	// Last is the ID of the last instance checked: a run stopped by an error resumes
	// after it (MigrateOptions.After).
	Last string
}

// MigrateRefusal is an instance that cannot move, and why.
type MigrateRefusal struct {
	ID  string
	Err error
}

// MigrateStored moves every instance of the machine stored in store under an older spec
// to this spec, a batch at a time, in ID order: each is loaded (load: the generated
// Replay<Machine>, which migrates it as it loads) and committed under this spec with a
// SPEC_MIGRATED entry (Machine.Migrate), its deadlines armed again. Each instance moves in
// one commit of its own, so a run stopped at any point leaves every instance under
// exactly one spec, and running it again finishes the job: instances already moved are
// counted as current. Any number of runs may go at once: an instance another run (or a
// worker firing on it) moved first is read again and counted as it is then. It stops at
// the first error that is not an instance's own (the store failing, ctx done).
func MigrateStored[S StateType, E, R EnumType, C, X any](ctx context.Context, store Store, name string,
	load func(ctx context.Context, id string) (*Machine[S, E, R, C, X], error), o MigrateOptions) (MigrateReport, error) {
	r := MigrateReport{Before: map[string]map[string]int{}, After: map[string]int{}}
	batch := o.Batch
	if batch <= 0 {
		batch = 100
	}
	q := Query{Machine: name, After: o.After, Limit: batch}
	for {
		page, err := store.Find(ctx, q)
		if err != nil {
			return r, fmt.Errorf("migrating %s: listing instances after %q: %w", name, q.After, err)
		}
		for _, in := range page {
			if err := ctx.Err(); err != nil {
				return r, err
			}
			spec, err := migrateOne(ctx, &r, in, load, o.DryRun)
			r.Checked++
			r.Last = in.ID
			var own *instanceRefusal
			switch {
			case errors.As(err, &own):
				r.Refused = append(r.Refused, MigrateRefusal{ID: in.ID, Err: own.err})
				err = own.err
			case err != nil:
				return r, fmt.Errorf("migrating %s %s: %w", name, in.ID, err)
			}
			if o.Progress != nil {
				o.Progress(in.ID, spec, err)
			}
		}
		if len(page) < batch {
			return r, nil
		}
		q.After = page[len(page)-1].ID
	}
}

// instanceRefusal wraps what refuses one instance, as opposed to what stops the run.
type instanceRefusal struct{ err error }

func (e *instanceRefusal) Error() string { return e.err.Error() }

// migrateOne moves instance in (found in state in.State), counting it in r, and returns
// the spec it was stored under. An error of the instance's own is an *instanceRefusal.
func migrateOne[S StateType, E, R EnumType, C, X any](ctx context.Context, r *MigrateReport, in Instance,
	load func(ctx context.Context, id string) (*Machine[S, E, R, C, X], error), dry bool) (string, error) {
	for attempt := 0; ; attempt++ {
		m, err := load(ctx, in.ID)
		if err != nil {
			var mismatch *SpecMismatchError
			spec := ""
			if errors.As(err, &mismatch) {
				spec = mismatch.Stored
			}
			if isInstanceError(err) {
				return spec, &instanceRefusal{err}
			}
			return spec, err
		}
		from := m.Migrated()
		if from == "" {
			r.Current++
			return m.def.Spec.Fingerprint, nil
		}
		if !dry {
			if _, err := m.Migrate(ctx); err != nil {
				if errors.Is(err, ErrStoreConflict) && attempt < 3 {
					// Moved on meanwhile (another run, a worker): read it again.
					continue
				}
				if isInstanceError(err) {
					return from, &instanceRefusal{err}
				}
				return from, err
			}
		}
		states := r.Before[from]
		if states == nil {
			states = map[string]int{}
			r.Before[from] = states
		}
		states[in.State]++
		r.After[m.state.String()]++
		r.Moved++
		return from, nil
	}
}

// isInstanceError reports whether err is about one instance's data (it cannot move) rather
// than the store or the run.
func isInstanceError(err error) bool {
	var (
		mismatch *SpecMismatchError
		snap     *SnapshotError
		logErr   *LogError
		conflict *ConflictError
	)
	return errors.As(err, &mismatch) || errors.As(err, &snap) || errors.As(err, &logErr) || errors.As(err, &conflict) ||
		errors.Is(err, ErrNotFound)
}
