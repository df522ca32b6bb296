package lsp

import (
	"fmt"
	"strings"

	"gopkg.in/yaml.v3"
)

var symbolKinds = map[kind]int{
	kState: symbolClass, kEvent: symbolEvent, kGuard: symbolFunction, kAction: symbolMethod,
	kRole: symbolConstant, kPolicy: symbolConstant, kCounter: symbolVariable, kField: symbolField,
	kPayload: symbolField, kCheckpoint: symbolKey, kLevel: symbolEnumMem,
}

func (s *Server) documentSymbols(p documentSymbolParams) (any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	d, err := s.doc(p.TextDocument.URI)
	if err != nil {
		return nil, err
	}
	ix := d.index()
	out := []DocumentSymbol{}
	if ix.root == nil {
		return out, nil
	}
	eachPair(ix.root, func(k, v *yaml.Node) {
		sym := ix.symbol(k, v, k.Value, symbolNamespace)
		if kd, ok := sections[k.Value]; ok {
			start, end := ix.t.loaderOffset(k.Line, k.Column), ix.end(v)
			for _, dc := range ix.decls {
				if at := ix.t.loaderOffset(dc.key.Line, dc.key.Column); dc.kind == kd && dc.parent == nil && at > start && at <= end {
					sym.Children = append(sym.Children, ix.declSymbol(dc))
				}
			}
		}
		switch k.Value {
		case "transitions":
			for i, tr := range ix.transitions {
				name := strings.NewReplacer("`", "").Replace(describeTransition(tr))
				if j := strings.LastIndex(name, " (line "); j > 0 {
					name = name[:j]
				}
				sym.Children = append(sym.Children, ix.symbol(tr.item, tr.item, name, symbolOperator))
				sym.Children[len(sym.Children)-1].Detail = fmt.Sprintf("transition %d", i+1)
			}
		case "migrations":
			for _, mg := range ix.migrations {
				name := "migration"
				if mg.from != nil {
					name = "from " + mg.from.name
				}
				sym.Children = append(sym.Children, ix.symbol(mg.item, mg.item, name, symbolStruct))
			}
		case "version", "machine", "package", "doc", "record_history", "idempotent":
			sym.Kind = symbolProperty
			if v.Kind == yaml.ScalarNode {
				sym.Detail = shorten(v.Value, 60)
			}
		}
		out = append(out, sym)
	})
	return out, nil
}

// symbol makes an outline entry from the key (or item) k to the end of its value v.
func (ix *index) symbol(k, v *yaml.Node, name string, kd int) DocumentSymbol {
	from := ix.t.loaderOffset(k.Line, k.Column)
	sel := from + len(k.Value)
	if k.Kind != yaml.ScalarNode {
		sel = from
	}
	end := max(ix.end(v), sel)
	if name == "" {
		name = "(empty)"
	}
	return DocumentSymbol{Name: name, Kind: kd, Range: ix.t.rangeOf(from, end), SelectionRange: ix.t.rangeOf(from, min(sel, end))}
}

// declSymbol is a declaration's entry, with its nested states or payload fields.
func (ix *index) declSymbol(d *decl) DocumentSymbol {
	sym := ix.symbol(d.key, d.value, d.name, symbolKinds[d.kind])
	sym.Detail = d.kind.String()
	if d.doc != "" {
		sym.Detail += ": " + shorten(d.doc, 60)
	}
	for _, c := range d.children {
		sym.Children = append(sym.Children, ix.declSymbol(c))
	}
	return sym
}

// shorten cuts s to n characters on one line.
func shorten(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "..."
	}
	return s
}
