package cli

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"

	"github.com/fsmgen/fsmgen/internal/ir"
	"github.com/fsmgen/fsmgen/internal/lock"
)

// lockUpdate is a version lock as generate leaves it: the lock beside a spec with the
// version code is generated from added.
type lockUpdate struct {
	path    string
	data    []byte
	current []byte // what is on disk; nil when there is no lock
	added   string // the fingerprint added, or ""
}

// lockFor returns the lock beside the spec at path with m's version recorded. The loader
// has read the lock already (and refused the spec when it is malformed).
func lockFor(path string, m *ir.Machine) (*lockUpdate, error) {
	f, exists, ds := lock.Read(path)
	if ds.HasErrors() {
		return nil, fmt.Errorf("%v", ds[0])
	}
	u := &lockUpdate{path: f.Path}
	if exists {
		cur, err := os.ReadFile(f.Path)
		if err != nil {
			return nil, err
		}
		u.current = cur
	}
	if f.Add(m) {
		u.added = ir.Fingerprint(m)
	}
	u.data = f.Bytes()
	return u, nil
}

// stale reports whether the lock on disk differs from what generate would leave.
func (u *lockUpdate) stale() bool { return u.current == nil || !bytes.Equal(u.current, u.data) }

// why says what is out of date, for generate --check.
func (u *lockUpdate) why() string {
	switch {
	case u.current == nil:
		return fmt.Sprintf("missing: %s (the spec's version lock)", u.path)
	case u.added != "":
		return fmt.Sprintf("out of date: %s does not record this version of the spec (%s)", u.path, u.added)
	}
	return fmt.Sprintf("out of date: %s is not as fsmgen writes it", u.path)
}

// write replaces the lock on disk, atomically: a new file beside it, synced, renamed over.
func (u *lockUpdate) write() error {
	dir, name := filepath.Split(u.path)
	if dir == "" {
		dir = "."
	}
	tmp, err := os.CreateTemp(dir, "."+name+".*.tmp")
	if err != nil {
		return err
	}
	_, err = tmp.Write(u.data)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp.Name(), 0o644)
	}
	if err == nil {
		err = os.Rename(tmp.Name(), u.path)
	}
	if err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("writing the version lock: %v", err)
	}
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
	return nil
}
