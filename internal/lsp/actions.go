package lsp

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

var (
	didYouMeanRE = regexp.MustCompile(`\(did you mean ("(?:[^"\\]|\\.)*")\?\)`)
	quotedRE     = regexp.MustCompile(`"(?:[^"\\]|\\.)*"`)
	unknownRE    = regexp.MustCompile(`^unknown (event|guard|action) ("(?:[^"\\]|\\.)*")`)
	unmappedRE   = regexp.MustCompile(`^state ("(?:[^"\\]|\\.)*") of (.*) \(.*\) has no place in this spec`)
)

// migrationProposal starts the migrations entry that the checker proposes for a version
// of the lock that this spec strands.
const migrationProposal = "\n  migrations:\n"

func (s *Server) codeActions(p codeActionParams) (any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	uri := p.TextDocument.URI
	d := s.docs[pathOf(uri)]
	specDoc := d
	var diags []Diagnostic
	for _, raw := range p.Context.Diagnostics {
		var dg Diagnostic
		if json.Unmarshal(raw, &dg) == nil && dg.Message != "" {
			diags = append(diags, dg) // what a client sends that is not a diagnostic is passed over
		}
	}
	if len(diags) == 0 && d != nil && d.diagsText == d.t {
		// The client sent none: the server's own findings over the range.
		for _, f := range d.diags {
			if dg := s.inDoc(d, d.t, f); dg.Range.Start.Line <= p.Range.End.Line && dg.Range.End.Line >= p.Range.Start.Line {
				diags = append(diags, dg)
			}
		}
	}
	if specDoc == nil {
		// A finding published for a lock: its fix is made in the spec that has the lock.
		for _, od := range s.docs {
			for other := range od.others {
				if pathOf(other) == pathOf(uri) {
					specDoc = od
				}
			}
		}
	}
	actions := []CodeAction{}
	if specDoc == nil {
		return actions, nil
	}
	ix := specDoc.index()
	for _, dg := range diags {
		if d != nil {
			if a, ok := didYouMeanFix(d, dg); ok {
				actions = append(actions, a)
			}
		}
		if m := unknownRE.FindStringSubmatch(dg.Message); m != nil && ix.root != nil {
			name, err := strconv.Unquote(m[2])
			if err != nil {
				continue
			}
			section := map[string]string{"event": "events", "guard": "guards", "action": "actions"}[m[1]]
			if e, ok := insertDecl(ix, section, name); ok {
				actions = append(actions, CodeAction{Title: fmt.Sprintf("Declare %s %s under %s", m[1], m[2], section), Kind: "quickfix",
					Diagnostics: []Diagnostic{dg}, Edit: &WorkspaceEdit{Changes: map[string][]TextEdit{specDoc.uri: {e}}}})
			}
		}
		if m := unmappedRE.FindStringSubmatch(dg.Message); m != nil && ix.root != nil {
			if state, err := strconv.Unquote(m[1]); err == nil {
				if e, ok := unmappedFix(ix, state, m[2], "NEW_NAME"); ok {
					actions = append(actions, CodeAction{Title: fmt.Sprintf("Map state %s of %s to a state here (NEW_NAME, to fill in)", m[1], m[2]), Kind: "quickfix",
						Diagnostics: []Diagnostic{dg}, Edit: &WorkspaceEdit{Changes: map[string][]TextEdit{specDoc.uri: {e}}}})
				}
			}
		}
		if i := strings.Index(dg.Message, migrationProposal); i >= 0 && ix.root != nil {
			entry := dg.Message[i+len(migrationProposal):]
			if j := strings.Index(entry, "\n("); j >= 0 {
				entry = entry[:j] // the note on the versions the entry carries
			}
			if e, ok := insertMigration(ix, entry); ok {
				actions = append(actions, CodeAction{Title: "Add the migrations entry the checker proposes", Kind: "quickfix",
					Diagnostics: []Diagnostic{dg}, Edit: &WorkspaceEdit{Changes: map[string][]TextEdit{specDoc.uri: {e}}}})
			}
		}
	}
	return actions, nil
}

// didYouMeanFix replaces the misspelt name a finding is about with its suggestion.
func didYouMeanFix(d *document, dg Diagnostic) (CodeAction, bool) {
	m := didYouMeanRE.FindStringSubmatch(dg.Message)
	if m == nil {
		return CodeAction{}, false
	}
	want, err := strconv.Unquote(m[1])
	if err != nil {
		return CodeAction{}, false
	}
	q := quotedRE.FindString(dg.Message)
	got, err := strconv.Unquote(q)
	if err != nil || got == "" {
		return CodeAction{}, false
	}
	off := d.t.offset(dg.Range.Start)
	quote := byte(0)
	if off < len(d.t.s) && (d.t.s[off] == '"' || d.t.s[off] == '\'') {
		quote = d.t.s[off]
		off++
	}
	if !strings.HasPrefix(d.t.s[off:], got) {
		return CodeAction{}, false
	}
	written := want
	switch {
	case quote == '"':
		written = strings.Trim(strconv.Quote(want), `"`)
	case quote == '\'':
		written = strings.ReplaceAll(want, "'", "''")
	case !plainName(want):
		written = yamlName(want)
	}
	return CodeAction{
		Title: fmt.Sprintf("Change %q to %q", got, want), Kind: "quickfix", IsPreferred: true,
		Diagnostics: []Diagnostic{dg},
		Edit:        &WorkspaceEdit{Changes: map[string][]TextEdit{d.uri: {{Range: d.t.rangeOf(off, off+len(got)), NewText: written}}}},
	}, true
}

// lineEnd returns the offset of the end of the line holding off (before its line break).
func lineEnd(t *text, off int) int {
	i := strings.IndexByte(t.s[off:], '\n')
	if i < 0 {
		return len(t.s)
	}
	if i > 0 && t.s[off+i-1] == '\r' {
		i--
	}
	return off + i
}

// insertDecl returns the edit that declares name (as name: {}) under section.
func insertDecl(ix *index, section, name string) (TextEdit, bool) {
	entry := yamlName(name) + ": {}"
	k := ix.sectionKeys[section]
	if k == nil {
		// No such section: a new one, before transitions (or at the end).
		block := section + ":\n  " + entry + "\n"
		if tk := ix.sectionKeys["transitions"]; tk != nil && tk.Column == 1 {
			at := ix.t.loaderOffset(tk.Line, 1)
			return TextEdit{Range: ix.t.rangeOf(at, at), NewText: block + "\n"}, true
		}
		return appendText(ix, block), true
	}
	return insertEntry(ix, k, field(ix.root, section), entry)
}

// insertEntry returns the edit that adds entry ("key: value") to the mapping v, the value
// of key k: in its style, flow or block (indented as its first key, or two columns past
// k), or as the mapping's only entry when v is null.
func insertEntry(ix *index, k, v *yaml.Node, entry string) (TextEdit, bool) {
	switch {
	case v == nil || v.Kind == yaml.ScalarNode && v.Tag == "!!null":
		if v != nil && v.Value != "" {
			// key: ~ or key: null
			from := ix.t.loaderOffset(v.Line, v.Column)
			return TextEdit{Range: ix.t.rangeOf(from, from+len(v.Value)), NewText: "{ " + entry + " }"}, true
		}
		at := lineEnd(ix.t, ix.t.loaderOffset(k.Line, k.Column))
		return TextEdit{Range: ix.t.rangeOf(at, at), NewText: "\n" + strings.Repeat(" ", k.Column+1) + entry}, true
	case v.Kind != yaml.MappingNode:
		return TextEdit{}, false
	case v.Style&yaml.FlowStyle != 0:
		end := ix.end(v)
		if end == 0 || ix.t.s[end-1] != '}' {
			return TextEdit{}, false
		}
		at := end - 1
		for at > 0 && ix.t.s[at-1] == ' ' {
			at--
		}
		sep := ", "
		if len(v.Content) == 0 {
			sep = " "
		}
		return TextEdit{Range: ix.t.rangeOf(at, at), NewText: sep + entry}, true
	case len(v.Content) == 0:
		return TextEdit{}, false
	}
	indent := strings.Repeat(" ", max(0, v.Content[0].Column-1))
	at := lineEnd(ix.t, ix.end(v))
	return TextEdit{Range: ix.t.rangeOf(at, at), NewText: "\n" + indent + entry}, true
}

// unmappedFix maps a state of an older spec that has no place in this one, in the
// migration from that spec: older: to under its states (NEW_NAME, to fill in, for the
// code action).
func unmappedFix(ix *index, state, file, to string) (TextEdit, bool) {
	for _, mg := range ix.migrations {
		if mg.from != nil && mg.from.name == file {
			return migrationEntry(ix, mg, "states", yamlName(state)+": "+to)
		}
	}
	return TextEdit{}, false
}

// migrationEntry returns the edit that adds entry ("older: name") to section (states,
// events, counters, context) of migration mg: to the section there, or as a new one.
func migrationEntry(ix *index, mg *migration, section, entry string) (TextEdit, bool) {
	var fromKey *yaml.Node
	for i := 0; i+1 < len(mg.item.Content); i += 2 {
		switch k := mg.item.Content[i]; k.Value {
		case section:
			return insertEntry(ix, k, mg.item.Content[i+1], entry)
		case "from":
			fromKey = k
		}
	}
	if fromKey == nil {
		return TextEdit{}, false
	}
	return insertEntry(ix, fromKey, mg.item, section+": { "+entry+" }")
}

// appendText returns the edit that adds block at the end of the document, on a line of
// its own.
func appendText(ix *index, block string) TextEdit {
	end := len(ix.t.s)
	if end > 0 && ix.t.s[end-1] != '\n' {
		block = "\n" + block
	}
	return TextEdit{Range: ix.t.rangeOf(end, end), NewText: block}
}

// insertMigration returns the edit that adds a migrations entry, given as the checker
// proposes it (its lines indented by four spaces, the first "- from: ..."), to the spec.
func insertMigration(ix *index, entry string) (TextEdit, bool) {
	lines := strings.Split(strings.TrimRight(entry, "\n"), "\n")
	if len(lines) == 0 || !strings.HasPrefix(lines[0], "    - from: ") {
		return TextEdit{}, false
	}
	reindent := func(indent string) string {
		var b strings.Builder
		for _, l := range lines {
			b.WriteString(indent + strings.TrimPrefix(l, "    ") + "\n")
		}
		return b.String()
	}
	k := ix.sectionKeys["migrations"]
	if k == nil {
		return appendText(ix, "migrations:\n"+reindent("  ")), true
	}
	v := field(ix.root, "migrations")
	switch {
	case v == nil || v.Kind == yaml.ScalarNode && v.Tag == "!!null" && v.Value == "":
		at := lineEnd(ix.t, ix.t.loaderOffset(k.Line, k.Column))
		return TextEdit{Range: ix.t.rangeOf(at, at), NewText: "\n" + strings.TrimSuffix(reindent("  "), "\n")}, true
	case v.Kind != yaml.SequenceNode || v.Style&yaml.FlowStyle != 0 || len(v.Content) == 0:
		return TextEdit{}, false
	}
	// The items' dash stands two columns before their mapping.
	indent := strings.Repeat(" ", max(0, v.Content[0].Column-3))
	at := lineEnd(ix.t, ix.end(v))
	return TextEdit{Range: ix.t.rangeOf(at, at), NewText: "\n" + strings.TrimSuffix(reindent(indent), "\n")}, true
}
