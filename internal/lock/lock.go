// Package lock reads and writes a spec's version lock, <name>.fsm.lock beside the spec:
// for every version of the spec that code was generated from, what its stored instances
// mean, so that code generated from a later version loads them without the older spec's
// file.
//
// A version is recorded as the text its fingerprint is the hash of (ir.Canonical): its
// states, events, transitions in order, counters, context and payload fields, roles,
// policies and timeouts. Each line of the lock is one line of that text, prefixed by the
// version's fingerprint, the line's number within the version and its section:
//
//	sha256:0f3e…a921 000003 state state "open" initial=true terminal=false remembers=false
//
// Lines of the section "lock" are the lock's own (the machine's package, whether it is a
// statechart) and are not hashed. The lines are sorted, so the lock is deterministic, a
// version's lines are contiguous, and two branches that each add a version merge as the
// union of their lines, as go.sum does. Reading a lock checks that each version's lines
// hash to its fingerprint: a lock edited or merged by hand is refused with the position
// of the version's first line.
package lock

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/fsmgen/fsmgen/internal/diag"
	"github.com/fsmgen/fsmgen/internal/ir"
)

// MaxSize is the largest lock read: a lock holds a few lines per state, event and
// transition of every version, far below it for any spec the output budget accepts.
const MaxSize = 64 << 20

// seqWidth is the width of a line's number within its version.
const seqWidth = 6

// header starts every lock.
const header = `# fsmgen version lock: every version of the spec beside it that code was generated from,
# as its fingerprint covers it (what stored instances mean). fsmgen generate keeps it:
# commit it with the spec. Two branches' locks merge as the union of their lines.
`

// Path returns the lock's path for a spec's: name.fsm.yaml gives name.fsm.lock.
func Path(spec string) string {
	base := strings.TrimSuffix(spec, filepath.Ext(spec))
	if filepath.Ext(base) == ".fsm" {
		return base + ".lock"
	}
	return base + ".fsm.lock"
}

// Version is one version of a spec as the lock records it.
type Version struct {
	Fingerprint string
	Pos         diag.Pos // where its first line is
	Package     string
	Chart       bool
	Lines       []ir.Line  // the canonical text, in order
	pos         []diag.Pos // by line of Lines
}

// File is a lock: the versions it records, by fingerprint.
type File struct {
	Path     string
	Versions []*Version
}

// Find returns the version of fingerprint fp, or the one version whose fingerprint starts
// with fp when fp is a prefix of at least 8 hex digits ("sha256:0f3e4c1a"); nil and a
// message saying why when there is none or more than one.
func (f *File) Find(fp string) (*Version, string) {
	var found []*Version
	for _, v := range f.Versions {
		if v.Fingerprint == fp {
			return v, ""
		}
		if strings.HasPrefix(v.Fingerprint, fp) {
			found = append(found, v)
		}
	}
	switch {
	case len(strings.TrimPrefix(fp, "sha256:")) < 8:
		return nil, fmt.Sprintf("%s is too short to name a version: give at least 8 hex digits of its fingerprint", fp)
	case len(found) == 0:
		return nil, fmt.Sprintf("%s records no version %s", filepath.Base(f.Path), fp)
	case len(found) > 1:
		return nil, fmt.Sprintf("%s records %d versions whose fingerprints start with %s: give more digits", filepath.Base(f.Path), len(found), fp)
	}
	return found[0], ""
}

// Has reports whether the lock records the version of fingerprint fp.
func (f *File) Has(fp string) bool {
	return slices.ContainsFunc(f.Versions, func(v *Version) bool { return v.Fingerprint == fp })
}

// VersionOf returns m as the lock records it.
func VersionOf(m *ir.Machine) *Version {
	return &Version{Fingerprint: ir.Fingerprint(m), Package: m.Package, Chart: m.Chart != nil, Lines: ir.Canonical(m)}
}

// Add records the version of m unless the lock has it; it reports whether it added it.
func (f *File) Add(m *ir.Machine) bool {
	v := VersionOf(m)
	if f.Has(v.Fingerprint) {
		return false
	}
	f.Versions = append(f.Versions, v)
	slices.SortFunc(f.Versions, func(a, b *Version) int { return strings.Compare(a.Fingerprint, b.Fingerprint) })
	return true
}

// Bytes returns the lock's text: the header, then every version's lines, sorted.
func (f *File) Bytes() []byte {
	var b bytes.Buffer
	b.WriteString(header)
	for _, v := range f.Versions {
		line := func(seq int, section, text string) {
			fmt.Fprintf(&b, "%s %0*d %s %s\n", v.Fingerprint, seqWidth, seq, section, text)
		}
		line(0, "lock", fmt.Sprintf("package %q chart=%t", v.Package, v.Chart))
		for i, l := range v.Lines {
			line(i+1, l.Section, l.Text)
		}
	}
	return b.Bytes()
}

// Read reads the lock beside the spec at spec; a spec without one has an empty lock
// (exists false). A lock that is not a regular file, too large, or malformed is an error
// at its position.
func Read(spec string) (f *File, exists bool, ds diag.List) {
	path := Path(spec)
	f = &File{Path: path}
	fi, err := os.Stat(path)
	switch {
	case os.IsNotExist(err):
		return f, false, nil
	case err != nil:
		ds.Errorf(diag.Pos{File: path}, "cannot read the version lock: %v", err)
		return f, true, ds
	case !fi.Mode().IsRegular():
		ds.Errorf(diag.Pos{File: path}, "the version lock is not a regular file")
		return f, true, ds
	case fi.Size() > MaxSize:
		ds.Errorf(diag.Pos{File: path}, "the version lock is %d bytes, more than the %d a lock may be", fi.Size(), MaxSize)
		return f, true, ds
	}
	r, err := os.Open(path)
	if err != nil {
		ds.Errorf(diag.Pos{File: path}, "cannot read the version lock: %v", err)
		return f, true, ds
	}
	defer r.Close()
	data, err := io.ReadAll(io.LimitReader(r, MaxSize+1))
	if err != nil {
		ds.Errorf(diag.Pos{File: path}, "cannot read the version lock: %v", err)
		return f, true, ds
	}
	f, ds = Parse(path, data)
	return f, true, ds
}

// Parse reads a lock's text. path names it in positions.
func Parse(path string, data []byte) (*File, diag.List) {
	f := &File{Path: path}
	var ds diag.List
	var cur *Version
	finish := func() {
		if cur == nil {
			return
		}
		if got := ir.Hash(cur.Lines); got != cur.Fingerprint {
			ds.Errorf(cur.Pos, "the lines of version %s hash to %s: the lock was edited or merged by hand (restore it from version control, or delete it and run fsmgen generate)", cur.Fingerprint, got)
		} else {
			f.Versions = append(f.Versions, cur)
		}
		cur = nil
	}
	prev := ""
	for i, raw := range strings.Split(string(data), "\n") {
		pos := diag.Pos{File: path, Line: i + 1, Col: 1}
		line := strings.TrimSuffix(raw, "\r")
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fp, rest, ok1 := strings.Cut(line, " ")
		seqText, rest, ok2 := strings.Cut(rest, " ")
		section, text, ok3 := strings.Cut(rest, " ")
		seq, err := strconv.Atoi(seqText)
		switch {
		case !ok1 || !ok2 || !ok3 || err != nil || len(seqText) != seqWidth:
			ds.Errorf(pos, "not a line of a version lock: want FINGERPRINT NUMBER SECTION TEXT")
			continue
		case !validFingerprint(fp):
			ds.Errorf(pos, "%.80q is not a fingerprint (sha256: and 32 hex digits)", fp)
			continue
		case line <= prev:
			ds.Errorf(pos, "the lines are out of order or repeated: the lock was edited or merged by hand (a merge keeps both sides' lines, sorted)")
			continue
		}
		prev = line
		if cur == nil || cur.Fingerprint != fp {
			finish()
			if seq != 0 || section != "lock" {
				ds.Errorf(pos, "version %s starts without its lock line (number %0*d)", fp, seqWidth, 0)
				cur = nil
				continue
			}
			cur = &Version{Fingerprint: fp, Pos: pos}
			if err := cur.header(text); err != "" {
				ds.Errorf(pos, "%s", err)
			}
			continue
		}
		if seq != len(cur.Lines)+1 {
			ds.Errorf(pos, "line %d of version %s follows line %d: lines are missing", seq, fp, len(cur.Lines))
			continue
		}
		cur.Lines = append(cur.Lines, ir.Line{Section: section, Text: text})
		cur.pos = append(cur.pos, pos)
	}
	finish()
	if ds.HasErrors() {
		return &File{Path: path}, ds
	}
	return f, ds
}

// header reads a version's lock line.
func (v *Version) header(text string) string {
	name, rest, ok := quoted(strings.TrimPrefix(text, "package "))
	if !strings.HasPrefix(text, "package ") || !ok {
		return "a version's lock line reads package \"NAME\" chart=BOOL"
	}
	v.Package = name
	switch strings.TrimSpace(rest) {
	case "chart=true":
		v.Chart = true
	case "chart=false":
	default:
		return "a version's lock line reads package \"NAME\" chart=BOOL"
	}
	return ""
}

// Short returns the fingerprint's first 8 hex digits, as messages name a version.
func Short(fp string) string {
	if len(fp) > len("sha256:")+8 {
		return fp[:len("sha256:")+8]
	}
	return fp
}

func validFingerprint(fp string) bool {
	hexPart, ok := strings.CutPrefix(fp, "sha256:")
	if !ok || len(hexPart) != 32 {
		return false
	}
	for _, c := range hexPart {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// quoted reads a Go-quoted string at the start of s.
func quoted(s string) (string, string, bool) {
	q, err := strconv.QuotedPrefix(s)
	if err != nil {
		return "", s, false
	}
	v, err := strconv.Unquote(q)
	return v, s[len(q):], err == nil
}
