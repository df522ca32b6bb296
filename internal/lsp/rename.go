package lsp

import (
	"encoding/json"
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
	// Refused when the check of the renamed spec finds an error the spec did not have
	// (a name taken, two names one Go identifier): the rename would break the spec.
	renamed := applyEdits(d.t, edits)
	before := d.diags
	if d.diagsText != d.t {
		before = s.runCheck(d.path, d.t)
	}
	after := s.runCheck(d.path, newText(renamed))
	if f, ok := newError(before, after, dc.name, nn); ok {
		return nil, errorf(codeRequestFailed, "cannot rename %s %q to %q: %s", dc.kind, dc.name, nn, f.Message)
	}
	return WorkspaceEdit{Changes: map[string][]TextEdit{d.uri: edits}}, nil
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

// newError returns an error of after that before did not have, before's messages read
// with the old name renamed.
func newError(before, after diag.List, old, nn string) (diag.Diagnostic, bool) {
	had := map[string]int{}
	r := strings.NewReplacer(strconv.Quote(old), strconv.Quote(nn))
	for _, f := range before {
		if f.Severity == diag.Error {
			had[r.Replace(f.Message)]++
			had[f.Message]++
		}
	}
	for _, f := range after {
		if f.Severity != diag.Error {
			continue
		}
		if had[f.Message] > 0 {
			had[f.Message]--
			continue
		}
		return f, true
	}
	return diag.Diagnostic{}, false
}
