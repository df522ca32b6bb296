package lsp

import (
	"encoding/json"
	"sort"
	"strings"

	"github.com/fsmgen/fsmgen/schema"
)

// jsonSchema is the part of a JSON Schema the server reads: enough to walk from the root
// to the object at a key path and list its keys with their descriptions.
type jsonSchema struct {
	Ref                  string                 `json:"$ref"`
	Description          string                 `json:"description"`
	Type                 any                    `json:"type"`
	Properties           map[string]*jsonSchema `json:"properties"`
	AdditionalProperties json.RawMessage        `json:"additionalProperties"`
	Items                *jsonSchema            `json:"items"`
	OneOf                []*jsonSchema          `json:"oneOf"`
	Enum                 []any                  `json:"enum"`
	Const                any                    `json:"const"`
	Defs                 map[string]*jsonSchema `json:"$defs"`
}

// specSchema is the spec's JSON Schema (package schema), read for key completion and the
// hover of keys.
type specSchema struct {
	root *jsonSchema
}

func loadSchema() (*specSchema, error) {
	var root jsonSchema
	if err := json.Unmarshal([]byte(schema.V1), &root); err != nil {
		return nil, err
	}
	return &specSchema{root: &root}, nil
}

// deref follows $ref (bounded: the schema's refs are not cyclic, but a walk must end).
func (s *specSchema) deref(n *jsonSchema) *jsonSchema {
	for i := 0; n != nil && n.Ref != "" && i < 16; i++ {
		name, ok := strings.CutPrefix(n.Ref, "#/$defs/")
		if !ok {
			return nil
		}
		next := s.root.Defs[name]
		if next == nil {
			return nil
		}
		// A $ref beside a description keeps the description.
		if n.Description != "" && next.Description == "" {
			cp := *next
			cp.Description = n.Description
			next = &cp
		}
		n = next
	}
	return n
}

// alternatives returns n dereferenced, or its oneOf alternatives dereferenced.
func (s *specSchema) alternatives(n *jsonSchema) []*jsonSchema {
	n = s.deref(n)
	if n == nil {
		return nil
	}
	if len(n.OneOf) == 0 {
		return []*jsonSchema{n}
	}
	var out []*jsonSchema
	for _, a := range n.OneOf {
		if a := s.deref(a); a != nil {
			out = append(out, a)
		}
	}
	return out
}

// child returns the schemas a key (or "-", a sequence item) of a value of schema n may
// have.
func (s *specSchema) child(ns []*jsonSchema, key string) []*jsonSchema {
	var out []*jsonSchema
	for _, n := range ns {
		for _, a := range s.alternatives(n) {
			if key == "-" {
				if a.Items != nil {
					out = append(out, s.alternatives(a.Items)...)
				}
				continue
			}
			if p, ok := a.Properties[key]; ok {
				out = append(out, s.alternatives(p)...)
				continue
			}
			if len(a.AdditionalProperties) > 0 && a.AdditionalProperties[0] == '{' {
				var ap jsonSchema
				if json.Unmarshal(a.AdditionalProperties, &ap) == nil {
					out = append(out, s.alternatives(&ap)...)
				}
			}
		}
	}
	return out
}

// at returns the schemas of the value at a key path from the root.
func (s *specSchema) at(path []string) []*jsonSchema {
	ns := []*jsonSchema{s.root}
	for _, k := range path {
		ns = s.child(ns, k)
		if len(ns) == 0 {
			return nil
		}
	}
	return ns
}

// schemaKey is a key an object may have, with its description.
type schemaKey struct {
	name, doc string
}

// keys lists the keys the objects of schemas ns may have, sorted.
func (s *specSchema) keys(ns []*jsonSchema) []schemaKey {
	seen := map[string]string{}
	for _, n := range ns {
		for _, a := range s.alternatives(n) {
			for k, p := range a.Properties {
				if _, ok := seen[k]; !ok || seen[k] == "" {
					if d := s.deref(p); d != nil {
						seen[k] = d.Description
					} else {
						seen[k] = ""
					}
				}
			}
		}
	}
	out := make([]schemaKey, 0, len(seen))
	for k, d := range seen {
		out = append(out, schemaKey{k, d})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out
}

// enumValues lists the constant values schemas ns allow (enum, const, booleans).
func (s *specSchema) enumValues(ns []*jsonSchema) []string {
	var out []string
	seen := map[string]bool{}
	add := func(v string) {
		if !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	for _, n := range ns {
		for _, a := range s.alternatives(n) {
			for _, e := range a.Enum {
				if str, ok := e.(string); ok {
					add(str)
				}
			}
			if a.Const != nil {
				b, _ := json.Marshal(a.Const)
				add(string(b))
			}
			if a.Type == "boolean" {
				add("true")
				add("false")
			}
		}
	}
	return out
}

// describe returns the description of the key that ends a key path ("" when there is
// none).
func (s *specSchema) describe(path []string) string {
	if len(path) == 0 {
		return ""
	}
	var parents []*jsonSchema
	if len(path) == 1 {
		parents = []*jsonSchema{s.root}
	} else {
		parents = s.at(path[:len(path)-1])
	}
	for _, n := range parents {
		for _, a := range s.alternatives(n) {
			if d := s.deref(a.Properties[path[len(path)-1]]); d != nil && d.Description != "" {
				return d.Description
			}
		}
	}
	return ""
}
