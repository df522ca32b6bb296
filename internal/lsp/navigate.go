package lsp

import (
	"fmt"
	"path/filepath"
	"strings"
)

// relTo writes path relative to the directory of from, when it can.
func relTo(from, path string) string {
	if rel, err := filepath.Rel(filepath.Dir(from), path); err == nil {
		return filepath.ToSlash(rel)
	}
	return path
}

// location returns the location of an occurrence in the spec of index ix.
func (s *Server) location(ix *index, o *occ) Location {
	return Location{URI: s.uriFor(ix.path), Range: ix.t.rangeOf(o.from, o.to)}
}

// uriFor returns the URI of a path: an open document's as the client sent it.
func (s *Server) uriFor(path string) string {
	if d := s.docs[path]; d != nil {
		return d.uri
	}
	return uriOf(path)
}

// target is what the occurrence at the cursor names: declarations of the spec of ix.
type target struct {
	ix    *index
	decls []*decl
	o     *occ
}

// targetAt resolves the occurrence at a position of a document: the declarations it names,
// in this spec or, for a migration's older name, in the older spec.
func (s *Server) targetAt(uri string, pos Position) (*target, error) {
	d, err := s.doc(uri)
	if err != nil {
		return nil, err
	}
	ix := d.index()
	if ix.root == nil {
		return nil, nil
	}
	o := ix.at(d.t.offset(pos))
	if o == nil {
		return nil, nil
	}
	t := &target{ix: ix, o: o}
	switch {
	case o.decl != nil:
		t.decls = []*decl{o.decl}
		if o.kind == kGroup {
			t.decls = ix.resolve(kGroup, o.name)
		}
	case o.older != nil:
		if o.older.file == "" {
			return t, nil
		}
		old := s.indexOf(o.older.file)
		if old == nil || old.root == nil {
			return t, nil
		}
		t.ix = old
		t.decls = old.resolve(o.kind, o.name)
	default:
		t.decls = ix.resolve(o.kind, o.name)
	}
	return t, nil
}

func (s *Server) definition(p textDocumentPositionParams) (any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, err := s.targetAt(p.TextDocument.URI, p.Position)
	if err != nil || t == nil {
		return nil, err
	}
	if t.o.kind == 0 && t.o.role == "migration" {
		// The from of a migration: the older spec.
		for _, mg := range t.ix.migrations {
			if mg.from == t.o && mg.file != "" && s.indexOf(mg.file) != nil {
				return []Location{{URI: s.uriFor(mg.file)}}, nil
			}
		}
		return nil, nil
	}
	locs := []Location{}
	for _, dc := range t.decls {
		if dc.occ != nil {
			locs = append(locs, s.location(t.ix, dc.occ))
		}
	}
	return locs, nil
}

func (s *Server) references(p referenceParams) (any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, err := s.targetAt(p.TextDocument.URI, p.Position)
	if err != nil || t == nil || len(t.decls) == 0 {
		return nil, err
	}
	var locs []Location
	seen := map[Location]bool{}
	addLoc := func(l Location) {
		if !seen[l] {
			seen[l] = true
			locs = append(locs, l)
		}
	}
	s.collectRefs(t.ix, t.decls, p.Context.IncludeDeclaration, map[string]bool{}, addLoc)
	// A reference made from a newer spec's migration to an older name.
	if t.o.older != nil {
		addLoc(s.location(s.docs[pathOf(p.TextDocument.URI)].index(), t.o))
	}
	return locs, nil
}

// collectRefs adds the occurrences of declarations ds of spec ix, then those of the names
// they had in the older specs ix migrates from, and so on down the chain.
func (s *Server) collectRefs(ix *index, ds []*decl, withDecl bool, visited map[string]bool, add func(Location)) {
	if visited[ix.path] || len(visited) > 32 {
		return
	}
	visited[ix.path] = true
	for _, d := range ds {
		for _, o := range ix.uses(d) {
			if o.decl != nil && !withDecl {
				continue
			}
			add(s.location(ix, o))
		}
		for _, o := range ix.implicitUses(d) {
			add(s.location(ix, o))
		}
	}
	for _, mg := range ix.migrations {
		if mg.file == "" {
			continue
		}
		old := s.indexOf(mg.file)
		if old == nil || old.root == nil {
			continue
		}
		var olds []*decl
		for _, d := range ds {
			for _, name := range ix.olderNames(mg, d) {
				for _, od := range old.resolve(d.kind, name) {
					olds = append(olds, od)
				}
			}
		}
		// The older names in this spec's migration are references too.
		for _, o := range ix.occs {
			if o.older == mg {
				for _, od := range olds {
					if o.kind == od.kind && (o.name == od.name || o.name == od.path) {
						add(s.location(ix, o))
						break
					}
				}
			}
		}
		s.collectRefs(old, olds, withDecl, visited, add)
	}
}

// olderNames returns the names declaration d had in the older spec of migration mg: those
// the migration renames to it, and its own name unless the migration renames that away.
func (ix *index) olderNames(mg *migration, d *decl) []string {
	var out []string
	renamedAway := false
	for _, p := range mg.pairs {
		if p.kind != d.kind {
			continue
		}
		for _, o := range p.old {
			if o.name == d.name || o.name == d.path {
				renamedAway = true
			}
		}
		for _, n := range p.now {
			if ix.refersTo(n, d) {
				for _, o := range p.old {
					out = append(out, o.name)
				}
			}
		}
	}
	if !renamedAway {
		out = append(out, d.path)
	}
	return out
}

func (s *Server) hover(p textDocumentPositionParams) (any, error) {
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
	if t == nil || (len(t.decls) == 0 && t.o.kind != 0) {
		if t != nil && t.o != nil {
			r := t.ix.t.rangeOf(t.o.from, t.o.to)
			return hover{Contents: markupContent{Kind: "markdown", Value: fmt.Sprintf("unknown %s `%s`", t.o.kind, code(t.o.name))}, Range: &r}, nil
		}
		return s.keyHover(d, p.Position), nil
	}
	if t.o.kind == 0 {
		return nil, nil
	}
	var b strings.Builder
	for i, dc := range t.decls {
		if i > 0 {
			b.WriteString("\n\n---\n\n")
		}
		s.describeDecl(&b, t.ix, dc, d.path)
	}
	ix := d.index()
	r := ix.t.rangeOf(t.o.from, t.o.to)
	return hover{Contents: markupContent{Kind: "markdown", Value: b.String()}, Range: &r}, nil
}

// keyHover describes the schema key under the cursor.
func (s *Server) keyHover(d *document, pos Position) any {
	off := d.t.offset(pos)
	c := cursorAt(d.t, off)
	line := d.t.line(pos.Line)
	start := d.t.starts[pos.Line]
	word := d.t.s[c.from:c.to]
	rest := line[min(c.to-start, len(line)):]
	if word == "" || !strings.HasPrefix(rest, ":") {
		return nil
	}
	// The cursor stands on a key: its path is the cursor's, which ends at the key's value
	// when the cursor is past the key, or at its parent.
	path := append([]string(nil), c.path...)
	if !c.key && len(path) > 0 && path[len(path)-1] == word {
		path = path[:len(path)-1]
	}
	desc := s.schema.describe(append(path, word))
	if desc == "" {
		return nil
	}
	r := d.t.rangeOf(c.from, c.to)
	return hover{Contents: markupContent{Kind: "markdown", Value: fmt.Sprintf("**%s**: %s", word, desc)}, Range: &r}
}

// code makes text safe inside a Markdown code span.
func code(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "`", "'"), "\n", " ")
}

// maxListed bounds the transitions and uses a hover lists.
const maxListed = 20

// describeDecl writes a declaration's hover: kind, name, doc and its uses.
func (s *Server) describeDecl(b *strings.Builder, ix *index, d *decl, from string) {
	name := d.path
	fmt.Fprintf(b, "**%s** `%s`", d.kind, code(name))
	if ix.path != from {
		fmt.Fprintf(b, " of %s", code(relTo(from, ix.path)))
	}
	if d.initial {
		b.WriteString(" (initial)")
	}
	if d.terminal {
		b.WriteString(" (terminal)")
	}
	if d.kind == kPayload && d.parent != nil {
		fmt.Fprintf(b, " of event `%s`", code(d.parent.name))
	}
	if d.kind == kGroup && d.parent != nil {
		var members []string
		for _, g := range ix.resolve(kGroup, d.name) {
			if g.parent != nil {
				members = append(members, "`"+code(g.parent.path)+"`")
			}
		}
		fmt.Fprintf(b, ": %s", strings.Join(members, ", "))
	}
	b.WriteString("\n")
	if d.doc != "" {
		b.WriteString("\n" + d.doc + "\n")
	}
	list := func(title string, trs []*transition) {
		if len(trs) == 0 {
			return
		}
		fmt.Fprintf(b, "\n%s (%d):\n", title, len(trs))
		for i, tr := range trs {
			if i == maxListed {
				fmt.Fprintf(b, "- ... and %d more\n", len(trs)-maxListed)
				break
			}
			fmt.Fprintf(b, "- %s\n", describeTransition(tr))
		}
	}
	switch d.kind {
	case kState:
		var in, out []*transition
		for _, tr := range ix.transitions {
			if anyRefers(ix, tr.to, d) {
				in = append(in, tr)
			}
			if leaves(ix, tr, d) {
				out = append(out, tr)
			}
		}
		list("Transitions into it", in)
		list("Transitions out of it", out)
	case kEvent:
		var on []*transition
		for _, tr := range ix.transitions {
			if anyRefers(ix, tr.on, d) || (tr.implicitEvent && implicitNames(tr, d.name)) {
				on = append(on, tr)
			}
		}
		list("Transitions on it", on)
	case kGuard:
		var used []*transition
		for _, tr := range ix.transitions {
			if anyRefers(ix, tr.guards, d) {
				used = append(used, tr)
			}
		}
		list("Used by the transitions", used)
		var by []string
		for _, o := range ix.uses(d) {
			if o.decl == nil && o.trans == nil {
				by = append(by, fmt.Sprintf("line %d", ix.t.position(o.from).Line+1))
			}
		}
		if len(by) > 0 {
			fmt.Fprintf(b, "\nUsed in guard expressions at %s\n", strings.Join(by, ", "))
		}
	default:
		var lines []string
		for _, o := range ix.uses(d) {
			if o.decl == nil {
				lines = append(lines, fmt.Sprint(ix.t.position(o.from).Line+1))
			}
		}
		if len(lines) > maxListed {
			lines = append(lines[:maxListed], "...")
		}
		if len(lines) > 0 {
			fmt.Fprintf(b, "\nUsed on lines %s\n", strings.Join(lines, ", "))
		} else {
			b.WriteString("\nNot used\n")
		}
	}
}

func anyRefers(ix *index, os []*occ, d *decl) bool {
	for _, o := range os {
		if ix.refersTo(o, d) {
			return true
		}
	}
	return false
}

func implicitNames(tr *transition, name string) bool {
	for _, o := range tr.to {
		if o.name == name || lastSegment(o.name) == name {
			return true
		}
	}
	return false
}

// leaves reports whether transition tr leaves state d: from it, from a group it is in, or
// from any state (d not excepted, not terminal).
func leaves(ix *index, tr *transition, d *decl) bool {
	if anyRefers(ix, tr.from, d) {
		return true
	}
	if tr.group != "" {
		for _, g := range ix.resolve(kGroup, tr.group) {
			if g.parent == d {
				return true
			}
		}
	}
	if tr.any && !d.terminal {
		for _, o := range ix.occs {
			if o.trans == tr && o.role == "except" && ix.refersTo(o, d) {
				return false
			}
		}
		return true
	}
	return false
}

// describeTransition writes a transition as "from -> to on event (line N)".
func describeTransition(tr *transition) string {
	names := func(os []*occ) string {
		var ns []string
		for _, o := range os {
			ns = append(ns, "`"+code(o.name)+"`")
		}
		return strings.Join(ns, ", ")
	}
	from := names(tr.from)
	switch {
	case tr.group != "":
		from = "group `" + code(tr.group) + "`"
	case tr.any:
		from = "any state"
	}
	to := names(tr.to)
	if to == "" {
		to = "itself"
	}
	var on string
	switch {
	case len(tr.on) > 0:
		on = " on " + names(tr.on)
	case tr.always:
		on = " (always)"
	case tr.done:
		on = " (done)"
	case tr.implicitEvent:
		on = " on " + names(tr.to)
	}
	var guards []string
	for _, g := range tr.guards {
		guards = append(guards, g.role+" `"+code(g.name)+"`")
	}
	out := fmt.Sprintf("%s → %s%s", from, to, on)
	if len(guards) > 0 {
		out += " " + strings.Join(guards, ", ")
	}
	return out + fmt.Sprintf(" (line %d)", tr.line+1)
}
