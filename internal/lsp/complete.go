package lsp

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"
)

// plainName reports whether name can be written as a plain scalar inside a flow
// collection, reading back as that string.
func plainName(name string) bool {
	if name == "" || strings.ContainsAny(name, ",[]{}#\"'\n\r\t") || strings.Contains(name, ": ") ||
		strings.HasSuffix(name, ":") || strings.HasPrefix(name, " ") || strings.HasSuffix(name, " ") {
		return false
	}
	if strings.ContainsRune("-?:!&*|>%@`", rune(name[0])) {
		return false
	}
	var n yaml.Node
	if err := yaml.Unmarshal([]byte(name), &n); err != nil || len(n.Content) != 1 {
		return false
	}
	v := n.Content[0]
	return v.Kind == yaml.ScalarNode && v.Tag == "!!str" && v.Value == name && v.Style == 0
}

// yamlName writes a name as a YAML scalar: plain when it can be, else double-quoted.
func yamlName(name string) string {
	if plainName(name) {
		return name
	}
	b, _ := json.Marshal(name)
	return string(b)
}

// stateLabel is how a state is best written: its name, or its path when another state
// has the name.
func (ix *index) stateLabel(d *decl) string {
	if len(ix.byName[kState][d.name]) > 1 {
		return d.path
	}
	return d.name
}

// label is how a declaration is written in a reference.
func (ix *index) label(d *decl) string {
	if d.kind == kState {
		return ix.stateLabel(d)
	}
	return d.name
}

// savedKeywords are what a checkpoint saves besides fields and counters.
var savedKeywords = []string{"state", "updated_at", "context", "counters", "history"}

// nameKinds returns the kinds of names a value at the cursor names; older is set for the
// older names of a migration's renames (the keys of its states, events, ...).
func nameKinds(c cursor) (kinds []kind, older bool) {
	ns := c.names()
	if len(ns) < 2 {
		return nil, false
	}
	last, parent := ns[len(ns)-1], ns[len(ns)-2]
	switch ns[0] {
	case "transitions":
		switch last {
		case "from", "to", "except", "history", "in":
			return []kind{kState}, false
		case "group":
			return []kind{kGroup}, false
		case "on", "raise":
			return []kind{kEvent}, false
		case "if", "unless", "and", "or", "not":
			return []kind{kGuard}, false
		case "by", "role":
			return []kind{kRole}, false
		case "policy":
			return []kind{kPolicy}, false
		case "do":
			return []kind{kAction}, false
		case "increment", "reset":
			return []kind{kCounter}, false
		case "checkpoint":
			return []kind{kCheckpoint}, false
		}
	case "states":
		if len(ns) < 3 || parent == "states" {
			return nil, false
		}
		switch last {
		case "groups":
			return []kind{kGroup}, false
		case "requires":
			return []kind{kField}, false
		case "entry", "exit":
			return []kind{kAction}, false
		case "on_expiry":
			return []kind{kEvent}, false
		case "default":
			return []kind{kState}, false
		}
	case "guards":
		if len(ns) < 3 {
			return nil, false
		}
		switch last {
		case "counter":
			return []kind{kCounter}, false
		case "field", "by", "len":
			return []kind{kField}, false
		case "and", "or", "not":
			return []kind{kGuard}, false
		case "in":
			return []kind{kState}, false
		}
	case "counters":
		if len(ns) < 3 {
			return nil, false
		}
		switch last {
		case "then":
			return []kind{kState}, false
		case "summary":
			return []kind{kField}, false
		}
	case "checkpoints":
		if len(ns) >= 3 && last == "save" {
			return []kind{kField, kCounter, kSaved}, false
		}
	case "migrations":
		if len(ns) == 2 && parent == "migrations" {
			if k, ok := migrationKinds[last]; ok {
				return []kind{k}, c.key
			}
			if last == "defaults" && c.key {
				return []kind{kField}, false
			}
		}
	}
	return nil, false
}

var completionKinds = map[kind]int{
	kState: completionClass, kEvent: completionEvent, kGuard: completionFunction,
	kAction: completionFunction, kRole: completionConstant, kPolicy: completionConstant,
	kCounter: completionVariable, kField: completionField, kPayload: completionField,
	kCheckpoint: completionValue, kGroup: completionEnum, kLevel: completionValue,
}

func (s *Server) completion(p textDocumentPositionParams) (any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	d, err := s.doc(p.TextDocument.URI)
	if err != nil {
		return nil, err
	}
	off := d.t.offset(p.Position)
	c := cursorAt(d.t, off)
	rng := d.t.rangeOf(c.from, c.to)
	items := []CompletionItem{}
	seen := map[string]bool{}
	add := func(it CompletionItem) {
		if seen[it.Label] {
			return
		}
		seen[it.Label] = true
		if it.TextEdit == nil {
			it.TextEdit = &TextEdit{Range: rng, NewText: it.Label}
		}
		items = append(items, it)
	}
	kinds, older := nameKinds(c)
	listItem := len(c.path) > 0 && c.path[len(c.path)-1] == "-"
	if len(kinds) > 0 && (!c.key || listItem || older || kinds[0] == kField) {
		ix := d.names(off)
		if older {
			ix = nil
			if mg := s.migrationAt(d, off); mg != nil && mg.file != "" {
				ix = s.indexOf(mg.file)
			}
		}
		if ix != nil {
			for _, k := range kinds {
				if k == kSaved {
					for _, kw := range savedKeywords {
						add(CompletionItem{Label: kw, Kind: completionKeyword, Detail: "saved with the checkpoint"})
					}
					continue
				}
				for _, dc := range ix.decls {
					if dc.kind != k || (k == kState && c.names()[len(c.names())-1] == "from" && dc.terminal) {
						continue
					}
					label := ix.label(dc)
					it := CompletionItem{Label: label, Kind: completionKinds[k], Detail: k.String(), SortText: fmt.Sprintf("%d_%s", k, label),
						TextEdit: &TextEdit{Range: rng, NewText: yamlName(label)}}
					if older {
						it.Detail = fmt.Sprintf("%s of %s", k, relTo(d.path, ix.path))
					}
					if dc.doc != "" {
						it.Documentation = &markupContent{Kind: "plaintext", Value: dc.doc}
					}
					add(it)
				}
			}
		}
		if !c.key || !listItem {
			return completionList{Items: items}, nil
		}
	}
	if c.key {
		// A key typed over one that has its colon keeps it.
		suffix := ": "
		if strings.HasPrefix(d.t.s[c.to:], ":") {
			suffix = ""
		}
		for _, k := range s.schema.keys(s.schema.at(c.path)) {
			if slices.Contains(c.siblings, k.name) {
				continue // the mapping has it
			}
			it := CompletionItem{Label: k.name, Kind: completionProperty, Detail: "key", SortText: "~" + k.name,
				TextEdit: &TextEdit{Range: rng, NewText: k.name + suffix}}
			if k.doc != "" {
				it.Documentation = &markupContent{Kind: "plaintext", Value: k.doc}
			}
			add(it)
		}
	} else {
		for _, v := range s.schema.enumValues(s.schema.at(c.path)) {
			add(CompletionItem{Label: v, Kind: completionValue, Detail: "value"})
		}
	}
	sort.SliceStable(items, func(i, j int) bool { return items[i].SortText < items[j].SortText })
	return completionList{Items: items}, nil
}

// migrationAt returns the migration whose entry holds byte offset off (the document's
// current index, else its last good one).
func (s *Server) migrationAt(d *document, off int) *migration {
	ix := d.names(off)
	var best *migration
	for _, mg := range ix.migrations {
		if ix.t.loaderOffset(mg.item.Line, mg.item.Column) <= off {
			best = mg
		}
	}
	return best
}

// indexOf returns the index of a spec file: an open document's, else read from disk; nil
// when it cannot be read.
func (s *Server) indexOf(path string) *index {
	if d := s.docs[path]; d != nil {
		return d.names(0)
	}
	t := s.fileText(path)
	if t == nil {
		return nil
	}
	return buildIndex(path, t)
}
