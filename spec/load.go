package spec

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/fsmgen/fsmgen/internal/diag"
	"github.com/fsmgen/fsmgen/internal/names"
	"github.com/fsmgen/fsmgen/schema"
	"github.com/santhosh-tekuri/jsonschema/v5"
	"gopkg.in/yaml.v3"
)

// Limits on input, so that hostile specs are refused instead of exhausting the machine.
const (
	MaxBytes = 8 << 20   // file size
	MaxDepth = 100       // nesting of mappings and sequences
	MaxNodes = 1_000_000 // nodes after alias expansion
)

// Version is the only spec language version this package reads.
const Version = 1

// Load parses and validates one spec. It returns the syntax tree when the document is
// well-formed and matches the schema, and every finding either way; the tree is nil when
// there are errors.
func Load(path string, data []byte) (*File, diag.List) {
	var ds diag.List
	at := func(line, col int) Pos { return Pos{File: path, Line: line, Col: col} }
	if len(data) > MaxBytes {
		ds.Errorf(at(1, 1), "spec is %d bytes; the limit is %d", len(data), MaxBytes)
		return nil, ds
	}
	doc, err := parseYAML(data)
	if err != nil {
		line, msg := yamlErrorLine(err)
		ds.Errorf(at(line, 1), "%s", msg)
		return nil, ds
	}
	root := doc
	if root.Kind == yaml.DocumentNode {
		if len(root.Content) == 0 {
			ds.Errorf(at(1, 1), "empty spec: expected a mapping with version, machine, package, states and transitions")
			return nil, ds
		}
		root = root.Content[0]
	}
	l := &loader{path: path, ptrs: map[string]*yaml.Node{}}
	// Read the version first: a document of another version is not validated against
	// this version's schema.
	if root.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(root.Content); i += 2 {
			k, v := root.Content[i], resolve(root.Content[i+1])
			if k.Value != "version" {
				continue
			}
			if v.Kind != yaml.ScalarNode || v.Tag != "!!int" || v.Value != strconv.Itoa(Version) {
				ds.Errorf(l.pos(v), "unsupported version %s (this fsmgen reads version %d)", quoteShort(v), Version)
				return nil, ds
			}
		}
	}
	value := l.toJSON(root, "", 0)
	if len(l.ds) > 0 {
		return nil, l.ds
	}
	l.validate(value)
	if len(l.ds) > 0 {
		return nil, l.ds.Sorted()
	}
	f := l.decode(root)
	if len(l.ds) > 0 {
		return nil, l.ds.Sorted()
	}
	return f, nil
}

// parseYAML parses exactly one YAML document into a node tree.
func parseYAML(data []byte) (*yaml.Node, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return &yaml.Node{Kind: yaml.DocumentNode}, nil
		}
		return nil, err
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err == nil {
		return nil, fmt.Errorf("yaml: line %d: a spec is one YAML document; found a second one", extra.Line)
	} else if !errors.Is(err, io.EOF) {
		return nil, err
	}
	return &doc, nil
}

var yamlLineRE = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// yamlErrorLine extracts the line from a yaml.v3 error ("yaml: line 3: ...").
func yamlErrorLine(err error) (int, string) {
	msg := err.Error()
	if te, ok := err.(*yaml.TypeError); ok && len(te.Errors) > 0 {
		msg = te.Errors[0]
	}
	if m := yamlLineRE.FindStringSubmatch(msg); m != nil {
		n, _ := strconv.Atoi(m[1])
		return n, "yaml: " + m[2]
	}
	return 1, msg
}

func quoteShort(n *yaml.Node) string {
	if n.Kind == yaml.ScalarNode {
		s := n.Value
		if len(s) > 40 {
			s = s[:40] + "..."
		}
		return strconv.Quote(s)
	}
	return "of kind " + kindName(n)
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "mapping"
	case yaml.SequenceNode:
		return "sequence"
	}
	return "scalar"
}

// resolve follows aliases.
func resolve(n *yaml.Node) *yaml.Node {
	for i := 0; n.Kind == yaml.AliasNode && n.Alias != nil && i < MaxDepth; i++ {
		n = n.Alias
	}
	return n
}

type loader struct {
	path  string
	ds    diag.List
	ptrs  map[string]*yaml.Node // JSON pointer -> value node
	nodes int
}

func (l *loader) pos(n *yaml.Node) Pos { return Pos{File: l.path, Line: n.Line, Col: n.Column} }

// toJSON converts the node tree to the values encoding/json would produce, recording the
// node of every JSON pointer, refusing duplicate keys, merge keys, deep nesting and alias
// expansion past MaxNodes. It stops at the first structural problem of a subtree.
func (l *loader) toJSON(n *yaml.Node, ptr string, depth int) any {
	l.nodes++
	if l.nodes > MaxNodes {
		if l.nodes == MaxNodes+1 {
			l.ds.Errorf(l.pos(n), "spec expands to more than %d nodes (alias bomb?)", MaxNodes)
		}
		return nil
	}
	if depth > MaxDepth {
		l.ds.Errorf(l.pos(n), "spec nests deeper than %d levels", MaxDepth)
		return nil
	}
	if n.Kind == yaml.AliasNode {
		if n.Alias == nil {
			l.ds.Errorf(l.pos(n), "unknown alias %q", n.Value)
			return nil
		}
		v := l.toJSON(n.Alias, ptr, depth+1)
		l.ptrs[ptr] = n
		return v
	}
	l.ptrs[ptr] = n
	switch n.Kind {
	case yaml.MappingNode:
		obj := make(map[string]any, len(n.Content)/2)
		first := map[string]*yaml.Node{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := resolve(n.Content[i]), n.Content[i+1]
			if k.Kind != yaml.ScalarNode {
				l.ds.Errorf(l.pos(k), "mapping keys must be plain names, not a %s", kindName(k))
				continue
			}
			if k.Tag == "!!merge" {
				l.ds.Errorf(l.pos(k), "merge keys (<<) are not supported; write the keys out")
				continue
			}
			if prev, ok := first[k.Value]; ok {
				l.ds.Errorf(l.pos(k), "duplicate key %q (first at %d:%d)", k.Value, prev.Line, prev.Column)
				continue
			}
			first[k.Value] = k
			obj[k.Value] = l.toJSON(v, ptr+"/"+escapePointer(k.Value), depth+1)
		}
		return obj
	case yaml.SequenceNode:
		arr := make([]any, 0, len(n.Content))
		for i, c := range n.Content {
			arr = append(arr, l.toJSON(c, ptr+"/"+strconv.Itoa(i), depth+1))
		}
		return arr
	case yaml.ScalarNode:
		return l.scalarJSON(n)
	}
	l.ds.Errorf(l.pos(n), "unexpected YAML node")
	return nil
}

func (l *loader) scalarJSON(n *yaml.Node) any {
	switch n.Tag {
	case "!!null":
		return nil
	case "!!bool":
		var b bool
		if err := n.Decode(&b); err != nil {
			l.ds.Errorf(l.pos(n), "invalid boolean %q", n.Value)
		}
		return b
	case "!!int":
		var i int64
		if err := n.Decode(&i); err != nil {
			l.ds.Errorf(l.pos(n), "integer %s out of range", n.Value)
			return nil
		}
		return json.Number(strconv.FormatInt(i, 10))
	case "!!float":
		var f float64
		if err := n.Decode(&f); err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
			l.ds.Errorf(l.pos(n), "number %s is not a finite number", n.Value)
			return nil
		}
		return json.Number(strconv.FormatFloat(f, 'g', -1, 64))
	case "!!str", "":
		return n.Value
	case "!!binary", "!!timestamp":
		return n.Value
	}
	l.ds.Errorf(l.pos(n), "unsupported YAML tag %s", n.Tag)
	return nil
}

func escapePointer(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

func unescapePointer(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~1", "/"), "~0", "~")
}

type compiled struct {
	schema *jsonschema.Schema
	raw    map[string]any
}

// compiledSchema compiles the embedded schema once per process.
var compiledSchema = sync.OnceValues(func() (*compiled, error) {
	c := jsonschema.NewCompiler()
	c.Draft = jsonschema.Draft2020
	if err := c.AddResource(schema.V1URL, strings.NewReader(schema.V1)); err != nil {
		return nil, err
	}
	s, err := c.Compile(schema.V1URL)
	if err != nil {
		return nil, err
	}
	var raw map[string]any
	if err := json.Unmarshal([]byte(schema.V1), &raw); err != nil {
		return nil, err
	}
	return &compiled{schema: s, raw: raw}, nil
})

// validate checks the JSON value against the schema and maps every leaf error back to the
// YAML node it is about.
func (l *loader) validate(v any) {
	c, err := compiledSchema()
	if err != nil {
		l.ds.Errorf(Pos{File: l.path}, "internal error: schema does not compile: %v", err)
		return
	}
	err = c.schema.Validate(v)
	if err == nil {
		return
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		l.ds.Errorf(Pos{File: l.path, Line: 1, Col: 1}, "%v", err)
		return
	}
	l.report(c, ve)
}

var quotedRE = regexp.MustCompile(`'((?:[^'\\]|\\.)*)'`)

// report walks the error tree. For oneOf/anyOf it descends into the one alternative whose
// type matched, if exactly one did; otherwise it reports the alternatives as one message.
func (l *loader) report(c *compiled, ve *jsonschema.ValidationError) {
	kw := lastSegment(ve.KeywordLocation)
	if (kw == "oneOf" || kw == "anyOf") && len(ve.Causes) > 0 {
		var matched []*jsonschema.ValidationError
		for _, cause := range ve.Causes {
			if !typeMismatch(cause, ve.InstanceLocation) {
				matched = append(matched, cause)
			}
		}
		if len(matched) == 1 {
			l.report(c, matched[0])
			return
		}
		node := l.nodeAt(ve.InstanceLocation)
		l.ds.Errorf(l.pos(node), "%s: %s", displayPath(ve.InstanceLocation), describeAlternatives(c, ve.KeywordLocation))
		return
	}
	if len(ve.Causes) > 0 {
		for _, cause := range ve.Causes {
			l.report(c, cause)
		}
		return
	}
	node := l.nodeAt(ve.InstanceLocation)
	switch kw {
	case "additionalProperties":
		allowed := c.propertiesAt(ve.KeywordLocation)
		for _, m := range quotedRE.FindAllStringSubmatch(ve.Message, -1) {
			key := m[1]
			kn := keyNode(node, key)
			l.ds.Errorf(l.pos(kn), "unknown key %q%s", key, names.DidYouMean(key, allowed))
		}
		return
	case "required":
		l.ds.Errorf(l.pos(node), "%s: %s", displayPath(ve.InstanceLocation), ve.Message)
		return
	case "pattern", "propertyNames":
		l.ds.Errorf(l.pos(node), "%s: %s", displayPath(ve.InstanceLocation), patternMessage(c, ve))
		return
	}
	l.ds.Errorf(l.pos(node), "%s: %s", displayPath(ve.InstanceLocation), ve.Message)
}

// typeMismatch reports whether an alternative failed because the value had the wrong type
// (or failed a const), at the alternative's own location.
func typeMismatch(ve *jsonschema.ValidationError, loc string) bool {
	if ve.InstanceLocation == loc {
		switch lastSegment(ve.KeywordLocation) {
		case "type", "const":
			return true
		case "$ref":
		default:
			if len(ve.Causes) == 0 {
				return false
			}
		}
	}
	for _, c := range ve.Causes {
		if c.InstanceLocation == loc && typeMismatch(c, loc) {
			return true
		}
	}
	return false
}

func lastSegment(p string) string {
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		return p[i+1:]
	}
	return p
}

// nodeAt finds the node of an instance location, falling back to the nearest ancestor.
func (l *loader) nodeAt(ptr string) *yaml.Node {
	for {
		if n, ok := l.ptrs[ptr]; ok {
			return n
		}
		i := strings.LastIndexByte(ptr, '/')
		if i < 0 {
			return &yaml.Node{Line: 1, Column: 1}
		}
		ptr = ptr[:i]
	}
}

func keyNode(obj *yaml.Node, key string) *yaml.Node {
	obj = resolve(obj)
	if obj.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(obj.Content); i += 2 {
			if obj.Content[i].Value == key {
				return obj.Content[i]
			}
		}
	}
	return obj
}

// displayPath turns /states/idle/initial into states.idle.initial (and /transitions/3/to
// into transitions[3].to), the way a spec author reads it.
func displayPath(ptr string) string {
	if ptr == "" {
		return "spec"
	}
	var b strings.Builder
	for _, seg := range strings.Split(strings.TrimPrefix(ptr, "/"), "/") {
		seg = unescapePointer(seg)
		if _, err := strconv.Atoi(seg); err == nil {
			b.WriteString("[" + seg + "]")
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		if strings.ContainsAny(seg, ". []\"") {
			seg = strconv.Quote(seg)
		}
		b.WriteString(seg)
	}
	return b.String()
}

// sub navigates the raw schema along a keyword location, following $ref.
func (c *compiled) sub(kwloc string) map[string]any {
	cur := c.raw
	for _, seg := range strings.Split(strings.TrimPrefix(kwloc, "/"), "/") {
		if seg == "" {
			continue
		}
		if seg == "$ref" {
			ref, _ := cur["$ref"].(string)
			cur = c.resolveRef(ref)
			continue
		}
		switch next := cur[unescapePointer(seg)].(type) {
		case map[string]any:
			cur = next
		case []any:
			// handled by the following numeric segment
			cur = map[string]any{}
			for i, x := range next {
				if m, ok := x.(map[string]any); ok {
					cur[strconv.Itoa(i)] = m
				}
			}
		default:
			return cur
		}
		if cur == nil {
			return map[string]any{}
		}
	}
	return cur
}

func (c *compiled) resolveRef(ref string) map[string]any {
	if !strings.HasPrefix(ref, "#/") {
		return map[string]any{}
	}
	cur := c.raw
	for _, seg := range strings.Split(ref[2:], "/") {
		next, ok := cur[unescapePointer(seg)].(map[string]any)
		if !ok {
			return map[string]any{}
		}
		cur = next
	}
	return cur
}

// propertiesAt lists the property names allowed where an additionalProperties error was
// raised (the keyword location ends in /additionalProperties).
func (c *compiled) propertiesAt(kwloc string) []string {
	obj := c.sub(strings.TrimSuffix(kwloc, "/additionalProperties"))
	props, _ := obj["properties"].(map[string]any)
	out := make([]string, 0, len(props))
	for k := range props {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// describeAlternatives explains a failed oneOf by the descriptions of the schema there.
func describeAlternatives(c *compiled, kwloc string) string {
	parent := c.sub(strings.TrimSuffix(strings.TrimSuffix(kwloc, "/oneOf"), "/anyOf"))
	if d, ok := parent["description"].(string); ok && d != "" {
		return "expected " + lowerFirst(strings.TrimSuffix(d, "."))
	}
	return "value matches none of the allowed forms"
}

func patternMessage(c *compiled, ve *jsonschema.ValidationError) string {
	s := c.sub(strings.TrimSuffix(ve.KeywordLocation, "/pattern"))
	if d, ok := s["description"].(string); ok && d != "" {
		return "invalid value: expected " + lowerFirst(strings.TrimSuffix(d, "."))
	}
	return ve.Message
}

func lowerFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToLower(s[:1]) + s[1:]
}
