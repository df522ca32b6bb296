package lsp

import (
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/fsmgen/fsmgen/internal/diag"
	"github.com/fsmgen/fsmgen/internal/names"
)

// renamable are the kinds of names rename renames.
var renamable = map[kind]bool{
	kState: true, kEvent: true, kGuard: true, kAction: true, kRole: true, kCounter: true,
	kField: true, kPolicy: true, kCheckpoint: true, kGroup: true, kPayload: true,
}

// maxName is the longest name the schema accepts, in characters.
const maxName = 128

func (s *Server) prepareRename(p textDocumentPositionParams) (any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, err := s.targetAt(p.TextDocument.URI, p.Position)
	if err != nil {
		return nil, err
	}
	if t == nil || t.o.kind == 0 || t.o.older != nil || !renamable[t.o.kind] || len(t.decls) == 0 {
		return nil, errorf(codeRequestFailed, "no name to rename here")
	}
	return prepareRenameResult{Range: t.ix.t.rangeOf(t.o.from, t.o.to), Placeholder: t.o.name}, nil
}

func (s *Server) rename(p renameParams) (any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	d, err := s.doc(p.TextDocument.URI)
	if err != nil {
		return nil, err
	}
	t, err := s.targetAt(p.TextDocument.URI, p.Position)
	if err != nil {
		return nil, err
	}
	if t == nil || t.o.kind == 0 || !renamable[t.o.kind] {
		if d.index().root == nil {
			return nil, errorf(codeRequestFailed, "the spec does not parse: fix it first (%v)", d.index().err)
		}
		return nil, errorf(codeRequestFailed, "no name to rename here")
	}
	if t.o.older != nil {
		return nil, errorf(codeRequestFailed, "%q is a name of the older spec %s: rename it there", t.o.name, relTo(d.path, t.o.older.file))
	}
	switch {
	case len(t.decls) == 0:
		return nil, errorf(codeRequestFailed, "unknown %s %q: nothing to rename", t.o.kind, t.o.name)
	case len(t.decls) > 1 && t.o.kind != kGroup:
		return nil, errorf(codeRequestFailed, "%s %q is declared %d times (or names several states): rename a declaration", t.o.kind, t.o.name, len(t.decls))
	}
	dc := t.decls[0]
	nn := p.NewName
	if msg := badName(nn); msg != "" {
		return nil, errorf(codeRequestFailed, "cannot rename %s %q to %q: %s", dc.kind, dc.name, nn, msg)
	}
	ix := t.ix
	edits, err := renameEdits(ix, dc, nn)
	if err != nil {
		return nil, err
	}
	if nn == dc.name {
		return WorkspaceEdit{Changes: map[string][]TextEdit{d.uri: {}}}, nil
	}
	// The older specs this one migrates from keep their name for it: older: new.
	edits = mergeEdits(edits, s.olderNamesKept(ix, dc, nn))
	// Refused when the check of the renamed spec finds an error the spec did not have
	// (a name taken, two names one Go identifier): the rename would break the spec.
	renamed := applyEdits(d.t, edits)
	before := d.diags
	if d.diagsText != d.t {
		before = s.runCheck(d.path, d.t)
	}
	after := s.runCheck(d.path, newText(renamed))
	if more, ok := keepMigrating(ix, dc, nn, newErrors(before, after, dc.name, nn)); ok && len(more) > 0 {
		// The rename strands stored instances (a version of the lock, an older spec's
		// state): the migration that says where the name went comes with it, checked too.
		edits = mergeEdits(edits, more)
		after = s.runCheck(d.path, newText(applyEdits(d.t, edits)))
	}
	if fs := newErrors(before, after, dc.name, nn); len(fs) > 0 {
		return nil, errorf(codeRequestFailed, "cannot rename %s %q to %q: %s", dc.kind, dc.name, nn, fs[0].Message)
	}
	return WorkspaceEdit{Changes: map[string][]TextEdit{d.uri: edits}}, nil
}

// migrationSections are the sections of a migration's renames, by kind.
var migrationSections = map[kind]string{kState: "states", kEvent: "events", kCounter: "counters", kField: "context"}

// keepMigrating returns the edits that keep stored instances loading after declaration d
// is renamed to nn, given the new errors of the renamed spec: the migrations entry the
// checker proposes for a version of the lock that has d (with d: nn), or d: nn in the
// migration from an older spec whose state d was. ok is false when an error is of another
// kind, or names more than d.
func keepMigrating(ix *index, d *decl, nn string, errs []diag.Diagnostic) (edits []TextEdit, ok bool) {
	section := migrationSections[d.kind]
	if section == "" {
		return nil, len(errs) == 0
	}
	for _, f := range errs {
		if m := unmappedRE.FindStringSubmatch(f.Message); m != nil && d.kind == kState {
			state, err := strconv.Unquote(m[1])
			if err != nil || state != ix.shortest(d) || len(d.children) > 0 {
				return nil, false
			}
			e, ok := unmappedFix(ix, state, m[2], yamlName(nn))
			if !ok {
				return nil, false
			}
			edits = append(edits, e)
			continue
		}
		i := strings.Index(f.Message, migrationProposal)
		if i < 0 {
			return nil, false
		}
		entry := f.Message[i+len(migrationProposal):]
		if j := strings.Index(entry, "\n("); j >= 0 {
			entry = entry[:j]
		}
		// The entry names d alone: "- from: V" and one line "section: { d: NEW_NAME }" (a
		// statechart's state by its shortest path, as its configurations name it).
		old, now := ix.migrationNames(d, nn)
		lines := strings.Split(entry, "\n")
		want := fmt.Sprintf("      %s: { %s: NEW_NAME }", section, old)
		if len(lines) != 2 || lines[1] != want || d.kind == kState && len(d.children) > 0 {
			return nil, false
		}
		lines[1] = fmt.Sprintf("      %s: { %s: %s }", section, yamlName(old), yamlName(now))
		e, ok := insertMigration(ix, strings.Join(lines, "\n"))
		if !ok {
			return nil, false
		}
		edits = append(edits, e)
	}
	return edits, true
}

// migrationNames are the names a migration gives declaration d, renamed to nn: a
// statechart's leaf state by its shortest path (as its configurations name it), the rest
// by their names.
func (ix *index) migrationNames(d *decl, nn string) (old, now string) {
	if d.kind != kState {
		return d.path, nn
	}
	old, now = ix.shortest(d), nn
	if len(ix.byName[kState][nn]) > 0 {
		now = strings.TrimSuffix(old, d.name) + nn
	}
	return old, now
}

// olderNamesKept returns the edits that map, in each migration from an older spec's file,
// the older spec's name for declaration d (its own, which the migration does not rename)
// to nn, the name d is renamed to: so its stored instances, log entries and values keep
// going where they went.
func (s *Server) olderNamesKept(ix *index, d *decl, nn string) []TextEdit {
	section := migrationSections[d.kind]
	if section == "" || d.kind == kState && len(d.children) > 0 {
		return nil
	}
	old, now := ix.migrationNames(d, nn)
	var edits []TextEdit
	for _, mg := range ix.migrations {
		if mg.file == "" {
			continue
		}
		older := s.indexOf(mg.file)
		if older == nil || older.root == nil || len(older.resolve(d.kind, old)) == 0 {
			continue
		}
		mapped := false
		for _, p := range mg.pairs {
			for _, o := range p.old {
				mapped = mapped || p.kind == d.kind && o.name == old
			}
		}
		if mapped {
			continue
		}
		if e, ok := migrationEntry(ix, mg, section, yamlName(old)+": "+yamlName(now)); ok {
			edits = append(edits, e)
		}
	}
	return edits
}

// shortest is the shortest end of a state's path that names it alone: how the
// configurations of a statechart name a leaf (a flat machine's states, by their names).
func (ix *index) shortest(d *decl) string {
	segs := strings.Split(d.path, ".")
	for i := len(segs) - 1; i > 0; i-- {
		if end := strings.Join(segs[i:], "."); len(ix.byName[kState][end]) == 1 {
			return end
		}
	}
	return d.path
}

// mergeEdits adds the insertions more to edits: an insertion where an edit ends is joined
// to it, so that no two edits touch.
func mergeEdits(edits, more []TextEdit) []TextEdit {
	out := append([]TextEdit(nil), edits...)
	for _, m := range more {
		joined := false
		for i, e := range out {
			if e.Range.End == m.Range.Start && m.Range.Start == m.Range.End {
				out[i].NewText += m.NewText
				joined = true
				break
			}
		}
		if !joined {
			out = append(out, m)
		}
	}
	return out
}

// badName says why a new name cannot be a name at all ("" when it can).
func badName(n string) string {
	switch {
	case n == "":
		return "a name is not empty"
	case !utf8.ValidString(n):
		return "a name is UTF-8 text"
	case strings.Contains(n, ","):
		return "a name holds no comma"
	case utf8.RuneCountInString(n) > maxName:
		return "a name is at most 128 characters"
	}
	if r, ok := names.FirstUnprintable(n); ok {
		return "a name holds no " + names.DescribeUnprintable(r)
	}
	return ""
}

// renameEdits returns the edits that rename declaration d to nn in the spec of ix.
func renameEdits(ix *index, d *decl, nn string) ([]TextEdit, error) {
	var edits []TextEdit
	dsegs := strings.Split(d.path, ".")
	for _, o := range ix.occs {
		if o.older != nil || o.kind != d.kind {
			continue
		}
		written := ""
		switch {
		case o.decl == d:
			written = nn
		case o.decl != nil && d.kind != kGroup:
			continue
		case d.kind == kGroup:
			if o.name != d.name {
				continue
			}
			written = nn
		case d.kind == kState && strings.Contains(o.name, "."):
			// A path, or the end of one: the segment that names d, if it is written.
			ts := ix.resolve(kState, o.name)
			if len(ts) != 1 || (ts[0].path != d.path && !strings.HasPrefix(ts[0].path, d.path+".")) {
				continue
			}
			osegs := strings.Split(o.name, ".")
			at := len(dsegs) - 1 - (strings.Count(ts[0].path, ".") + 1 - len(osegs))
			if at < 0 {
				continue
			}
			osegs[at] = nn
			written = strings.Join(osegs, ".")
		case ix.refersTo(o, d):
			written = nn
		default:
			continue
		}
		switch {
		case o.quote == '"':
			b, _ := json.Marshal(written)
			written = string(b[1 : len(b)-1])
		case o.quote == '\'':
			written = strings.ReplaceAll(written, "'", "''")
		case !plainName(written):
			if o.part {
				return nil, errorf(codeRequestFailed, "%q cannot be written inside the configuration %q: quote it by hand", written, o.name)
			}
			written = yamlName(written)
		}
		edits = append(edits, TextEdit{Range: ix.t.rangeOf(o.from, o.to), NewText: written})
	}
	return edits, nil
}

// applyEdits returns the text with edits (not overlapping) applied.
func applyEdits(t *text, edits []TextEdit) string {
	type span struct {
		from, to int
		s        string
	}
	var spans []span
	for _, e := range edits {
		spans = append(spans, span{t.offset(e.Range.Start), t.offset(e.Range.End), e.NewText})
	}
	sort.SliceStable(spans, func(i, j int) bool { return spans[i].from > spans[j].from })
	out := t.s
	for _, sp := range spans {
		out = out[:sp.from] + sp.s + out[sp.to:]
	}
	return out
}

// newErrors returns the errors of after that before did not have, before's messages read
// with the old name renamed.
func newErrors(before, after diag.List, old, nn string) []diag.Diagnostic {
	had := map[string]int{}
	r := strings.NewReplacer(strconv.Quote(old), strconv.Quote(nn))
	for _, f := range before {
		if f.Severity == diag.Error {
			had[r.Replace(f.Message)]++
			had[f.Message]++
		}
	}
	var out []diag.Diagnostic
	for _, f := range after {
		if f.Severity != diag.Error {
			continue
		}
		if had[f.Message] > 0 {
			had[f.Message]--
			continue
		}
		out = append(out, f)
	}
	return out
}
