package spec

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/url"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

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
	MaxNodes = 4_000_000 // nodes after alias expansion: what 8 MiB of plain YAML can hold
)

// Version is the only spec language version this package reads.
const Version = 1

// Load parses and validates one spec. It returns the syntax tree when the document is
// well-formed and matches the schema, and every finding either way; the tree is nil when
// there are errors.
func Load(path string, data []byte) (*File, diag.List) {
	f, ds := LoadPartial(path, data)
	if ds.HasErrors() {
		return nil, ds
	}
	return f, ds
}

// LoadPartial is Load for a checker that reports every finding: it returns a tree whenever
// the document is a mapping that could be read, errors or not, with the parts that have
// errors marked (see File). It returns nil only when nothing can be read soundly: YAML
// syntax errors, an unsupported version, hostile input (size, nesting, aliases), or a
// document that is not a mapping.
func LoadPartial(path string, data []byte) (*File, diag.List) {
	var ds diag.List
	at := func(line, col int) Pos { return Pos{File: path, Line: line, Col: col} }
	if len(data) > MaxBytes {
		ds.Errorf(at(1, 1), "spec is %d bytes; the limit is %d", len(data), MaxBytes)
		return nil, ds
	}
	doc, err := parseYAML(data)
	if err != nil {
		line, col, msg := yamlError(err, data)
		ds.Errorf(at(line, col), "%s", msg)
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
	l := newLoader(path)
	// Read the version first: a document of another version is not validated against
	// this version's schema.
	if root.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(root.Content); i += 2 {
			k, v := root.Content[i], resolve(root.Content[i+1])
			if k.Value != "version" {
				continue
			}
			if msg := versionProblem(v); msg != "" {
				ds.Errorf(l.pos(v), "%s", msg)
				return nil, ds
			}
			break
		}
	}
	if n, at := expandedSize(root); n > MaxNodes {
		if at == nil {
			ds.Errorf(l.pos(root), "spec has more than %d nodes", MaxNodes)
		} else {
			ds.Errorf(l.pos(at), "spec expands to more than %d nodes through aliases (alias bomb?)", MaxNodes)
		}
		return nil, ds
	}
	value := l.toJSON(root, "", 0)
	if l.fatal {
		return nil, l.ds.Sorted()
	}
	// Problems of single values (a duplicate key, an integer out of range) leave the rest of
	// the document readable: validate it, and decode what can be decoded.
	l.validate(value)
	if root.Kind != yaml.MappingNode || l.holes[""] {
		return nil, l.ds.Sorted()
	}
	l.markBroken()
	l.hadErrors = l.ds.HasErrors()
	f := l.decode(root)
	return f, l.ds.Sorted()
}

// versionProblem explains why a version value is not the one this package reads, or
// returns "".
func versionProblem(v *yaml.Node) string {
	want := strconv.Itoa(Version)
	switch {
	case v.Kind != yaml.ScalarNode:
		return fmt.Sprintf("version must be the number %d, not a %s", Version, kindName(v))
	case v.Tag == "!!int" && v.Value == want:
		return ""
	case v.Tag == "!!int" || v.Tag == "!!float":
		return fmt.Sprintf("unsupported version %s (this fsmgen reads version %d)", short(v.Value), Version)
	case v.Tag == "!!null":
		return fmt.Sprintf("version is empty: write version: %d", Version)
	case v.Value == want:
		return fmt.Sprintf("version must be the number %d, not the string %q: remove the quotes", Version, v.Value)
	}
	return fmt.Sprintf("unsupported version %q (this fsmgen reads version %d)", short(v.Value), Version)
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

var (
	yamlLineRE   = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)
	yamlAnchorRE = regexp.MustCompile(`^yaml: unknown anchor '(.*)' referenced$`)
)

// isParserProblem reports whether a problem is one yaml.v3's parser (as opposed to its
// scanner) reports. For these it prints the 0-based line of the construct being parsed, so
// one is added.
func isParserProblem(problem string) bool {
	switch problem {
	case "did not find expected ',' or ']'",
		"did not find expected ',' or '}'",
		"did not find expected '-' indicator",
		"did not find expected <document start>",
		"did not find expected <stream-start>",
		"did not find expected key",
		"did not find expected node content",
		"found duplicate %TAG directive",
		"found duplicate %YAML directive",
		"found incompatible YAML document",
		"found undefined tag handle":
		return true
	}
	return false
}

// indentTab finds the tab behind a yaml.v3 error about indentation. For its tab messages
// yaml.v3 gives the line where the scalar being read starts, so the tab is the first one
// in the indentation of that line or a later one; for "cannot start any token" it gives the
// line of the character, which is a tab when the indentation ends in one.
func indentTab(msg string, data []byte) (line, col int, ok bool) {
	from, problem := 1, strings.TrimPrefix(msg, "yaml: ")
	if m := yamlLineRE.FindStringSubmatch(msg); m != nil {
		from, _ = strconv.Atoi(m[1])
		problem = m[2]
	}
	exact := false
	switch problem {
	case "found a tab character that violates indentation",
		"found a tab character where an indentation space is expected":
	case "found character that cannot start any token":
		exact = true
	default:
		return 0, 0, false
	}
	for i, text := range bytes.Split(data, []byte("\n")) {
		if i+1 < from {
			continue
		}
		rest := bytes.TrimLeft(text, " \t")
		indent := text[:len(text)-len(rest)]
		if tab := bytes.IndexByte(indent, '\t'); tab >= 0 && !(exact && len(rest) > 0 && (rest[0] == '@' || rest[0] == '`')) {
			return i + 1, tab + 1, true
		}
		if exact {
			break
		}
	}
	return 0, 0, false
}

// yamlError turns a yaml.v3 error into a position and a message. yaml.v3 gives at best a
// line, and for some errors none; where the input itself shows the place (a control
// character, invalid UTF-8, an unknown alias, a tab in the indentation) the position is
// found in data.
func yamlError(err error, data []byte) (line, col int, msg string) {
	msg = err.Error()
	if te, ok := err.(*yaml.TypeError); ok && len(te.Errors) > 0 {
		msg = te.Errors[0]
	}
	if line, col, ok := indentTab(msg, data); ok {
		return line, col, "yaml: tabs cannot indent YAML; indent with spaces"
	}
	if m := yamlLineRE.FindStringSubmatch(msg); m != nil {
		n, _ := strconv.Atoi(m[1])
		if isParserProblem(m[2]) {
			n++
		}
		return max(n, 1), 1, "yaml: " + m[2]
	}
	if m := yamlAnchorRE.FindStringSubmatch(msg); m != nil {
		if line, col, ok := findAlias(data, m[1]); ok {
			return line, col, fmt.Sprintf("yaml: unknown alias *%s: no anchor &%s comes before it", short(m[1]), short(m[1]))
		}
	}
	if isParserProblem(strings.TrimPrefix(msg, "yaml: ")) {
		return 1, 1, msg
	}
	if line, col, what, ok := findBadByte(data); ok {
		return line, col, "yaml: " + what
	}
	return 1, 1, msg
}

// findBadByte finds the first character YAML refuses: invalid UTF-8, or a control
// character other than tab, line feed and carriage return.
func findBadByte(data []byte) (line, col int, what string, ok bool) {
	line, col = 1, 1
	for i := 0; i < len(data); {
		r, size := utf8.DecodeRune(data[i:])
		switch {
		case r == utf8.RuneError && size <= 1:
			return line, col, fmt.Sprintf("invalid UTF-8 (byte 0x%02x): a spec is UTF-8 text", data[i]), true
		case r == '\n':
			line, col = line+1, 0
		case r == '\t' || r == '\r' || r == 0xFEFF && i == 0:
		case r < 0x20 || r == 0x7f || (r >= 0x80 && r <= 0x9f && r != 0x85) || r == 0xFFFE || r == 0xFFFF:
			return line, col, fmt.Sprintf("control character %U is not allowed", r), true
		}
		i += size
		col++
	}
	return 0, 0, "", false
}

// findAlias finds the first use of the alias *name in data.
func findAlias(data []byte, name string) (line, col int, ok bool) {
	needle := []byte("*" + name)
	for i := 0; i+len(needle) <= len(data); i++ {
		if !bytes.HasPrefix(data[i:], needle) {
			continue
		}
		if end := i + len(needle); end < len(data) && !isAliasEnd(data[end]) {
			continue
		}
		start := bytes.LastIndexByte(data[:i], '\n') + 1
		return bytes.Count(data[:i], []byte("\n")) + 1, utf8.RuneCount(data[start:i]) + 1, true
	}
	return 0, 0, false
}

func isAliasEnd(b byte) bool {
	return b == ' ' || b == '\t' || b == '\n' || b == '\r' || b == ',' || b == ']' || b == '}'
}

// short cuts a value for a message.
func short(s string) string {
	if utf8.RuneCountInString(s) > 40 {
		s = string([]rune(s)[:40]) + "..."
	}
	return s
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

// expandedSize counts the nodes of the tree with every alias expanded, without expanding
// them: each node's size is computed once. Counts stop growing past MaxNodes. When the
// count is over the limit, at is the first alias whose expansion alone is over it, or else
// the alias with the largest expansion, or nil when there are no aliases.
func expandedSize(root *yaml.Node) (n int, at *yaml.Node) {
	memo := map[*yaml.Node]int{}
	var size func(n *yaml.Node) int
	size = func(n *yaml.Node) int {
		if v, ok := memo[n]; ok {
			return v
		}
		memo[n] = 1 // a cycle counts once here; toJSON reports it
		total := 1
		if n.Kind == yaml.AliasNode && n.Alias != nil {
			total = size(n.Alias)
		}
		for _, c := range n.Content {
			total = min(total+size(c), MaxNodes+1)
		}
		memo[n] = total
		return total
	}
	n = size(root)
	if n <= MaxNodes {
		return n, nil
	}
	best := 0
	var walk func(n *yaml.Node, depth int)
	walk = func(n *yaml.Node, depth int) {
		if depth > MaxDepth {
			return
		}
		if n.Kind == yaml.AliasNode {
			if s := memo[n]; best <= MaxNodes && s > best {
				best, at = s, n
			}
			return
		}
		for _, c := range n.Content {
			walk(c, depth+1)
		}
	}
	walk(root, 0)
	return n, at
}

type loader struct {
	path string
	ds   diag.List
	ptrs map[string]*yaml.Node // JSON pointer -> value node
	keys map[string]*yaml.Node // JSON pointer -> the key node of a mapping entry
	open map[*yaml.Node]bool   // collections being converted: an alias to one is a cycle
	deep bool                  // the nesting error has been reported
	// outerAlias is the outermost alias being expanded, if any.
	outerAlias *yaml.Node
	nodes      int

	// What went wrong where, so that later stages skip what depends on it.
	fatal     bool                // the tree cannot be used at all (nesting, aliases, size)
	nulled    []string            // pointers whose value toJSON could not convert (nil in the JSON)
	holes     map[string]bool     // mappings that lost keys (merge keys, non-scalar keys)
	broken    map[string]bool     // pointers with a reported error at or below them
	bad       map[*yaml.Node]bool // nodes a reported error is about
	sections  map[string]bool     // top-level keys that are unusable as a whole
	decls     map[string]bool     // section + "\x00" + name (or index): declarations with errors
	under     map[string]bool     // pointers with a broken pointer at or below them
	hadErrors bool                // errors were reported before decoding

	// The keys of the mappings whose keys findings are about, by mapping (see keyNode),
	// and how many keys were read into it.
	keyIndex    map[*yaml.Node]map[string]*yaml.Node
	keysIndexed int
}

func newLoader(path string) *loader {
	return &loader{path: path, ptrs: map[string]*yaml.Node{}, keys: map[string]*yaml.Node{},
		holes: map[string]bool{}, broken: map[string]bool{}, bad: map[*yaml.Node]bool{},
		sections: map[string]bool{}, decls: map[string]bool{}, under: map[string]bool{}}
}

// markBad records that a reported error is about node n (and what n aliases).
func (l *loader) markBad(n *yaml.Node) {
	l.bad[n] = true
	l.bad[resolve(n)] = true
}

// markBroken turns the pointers with errors into the sections and declarations they break.
func (l *loader) markBroken() {
	for p := range l.broken {
		for q := p; q != "" && !l.under[q]; q = parentPointer(q) {
			l.under[q] = true
		}
		if p == "" {
			continue
		}
		segs := strings.SplitN(strings.TrimPrefix(p, "/"), "/", 3) // section, declaration, rest
		if len(segs) == 1 {
			l.sections[unescapePointer(segs[0])] = true
			continue
		}
		l.decls[unescapePointer(segs[0])+"\x00"+unescapePointer(segs[1])] = true
	}
}

// declBroken reports whether the declaration name of a top-level section had errors.
func (l *loader) declBroken(section, name string) bool {
	return l.decls[section+"\x00"+name]
}

func (l *loader) pos(n *yaml.Node) Pos { return Pos{File: l.path, Line: n.Line, Col: n.Column} }

// toJSON converts the node tree to the values encoding/json would produce, recording the
// node of every JSON pointer, refusing duplicate keys, merge keys, deep nesting and alias
// expansion past MaxNodes. It stops at the first structural problem of a subtree.
func (l *loader) toJSON(n *yaml.Node, ptr string, depth int) any {
	l.nodes++
	if l.nodes > MaxNodes { // expandedSize has refused such specs; this is a second line
		if l.nodes == MaxNodes+1 {
			l.ds.Errorf(l.pos(n), "spec expands to more than %d nodes through aliases (alias bomb?)", MaxNodes)
		}
		l.fatal = true
		return nil
	}
	if depth > MaxDepth {
		if !l.deep { // once: every sibling of a deep node is as deep
			at, how := n, ""
			if l.outerAlias != nil { // report where the author wrote the alias that nests
				at, how = l.outerAlias, " through aliases"
			}
			l.ds.Errorf(l.pos(at), "spec nests deeper than %d levels%s", MaxDepth, how)
			l.deep = true
		}
		l.fatal = true
		return nil
	}
	if n.Kind == yaml.AliasNode {
		if n.Alias == nil {
			l.ds.Errorf(l.pos(n), "unknown alias %q", short(n.Value))
			l.fatal = true
			return nil
		}
		if l.open[n.Alias] {
			l.ds.Errorf(l.pos(n), "alias *%s is inside the node its anchor names, so it would nest forever", short(n.Value))
			l.fatal = true
			return nil
		}
		if l.outerAlias == nil {
			l.outerAlias = n
			defer func() { l.outerAlias = nil }()
		}
		v := l.toJSON(n.Alias, ptr, depth+1)
		l.ptrs[ptr] = n
		return v
	}
	l.ptrs[ptr] = n
	if n.Kind == yaml.MappingNode || n.Kind == yaml.SequenceNode {
		if l.open == nil {
			l.open = map[*yaml.Node]bool{}
		}
		l.open[n] = true
		defer delete(l.open, n)
	}
	switch n.Kind {
	case yaml.MappingNode:
		obj := make(map[string]any, len(n.Content)/2)
		first := map[string]*yaml.Node{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := resolve(n.Content[i]), n.Content[i+1]
			if k.Kind != yaml.ScalarNode {
				l.ds.Errorf(l.pos(n.Content[i]), "mapping keys must be plain names, not a %s", kindName(k))
				l.hole(ptr)
				continue
			}
			if k.Tag == "!!merge" {
				l.ds.Errorf(l.pos(n.Content[i]), "merge keys (<<) are not supported; write the keys out")
				l.hole(ptr)
				continue
			}
			if prev, ok := first[k.Value]; ok {
				if kind := declKind(ptr); kind != "" {
					l.ds.Errorf(l.pos(k), "duplicate %s %q (first declared at %d:%d)", kind, short(k.Value), prev.Line, prev.Column)
				} else {
					l.ds.Errorf(l.pos(k), "duplicate key %q (first at %d:%d)", short(k.Value), prev.Line, prev.Column)
				}
				// The first is kept; which one the author meant is unknown.
				l.broken[ptr+"/"+escapePointer(k.Value)] = true
				continue
			}
			first[k.Value] = k
			kptr := ptr + "/" + escapePointer(k.Value)
			l.keys[kptr] = n.Content[i]
			obj[k.Value] = l.toJSON(v, kptr, depth+1)
		}
		return obj
	case yaml.SequenceNode:
		arr := make([]any, 0, len(n.Content))
		for i, c := range n.Content {
			arr = append(arr, l.toJSON(c, ptr+"/"+strconv.Itoa(i), depth+1))
		}
		return arr
	case yaml.ScalarNode:
		v, ok := l.scalarJSON(n)
		if !ok {
			l.nulled = append(l.nulled, ptr)
			l.broken[ptr] = true
			l.markBad(n)
		}
		return v
	}
	l.ds.Errorf(l.pos(n), "unexpected YAML node")
	l.fatal = true
	return nil
}

// hole records that the mapping at ptr lost keys, so that the schema's complaints about
// missing keys there may be wrong.
func (l *loader) hole(ptr string) {
	l.holes[ptr] = true
	l.broken[ptr] = true
}

// scalarJSON converts a scalar; ok is false when it is reported as invalid.
func (l *loader) scalarJSON(n *yaml.Node) (v any, ok bool) {
	switch n.Tag {
	case "!!null":
		return nil, true
	case "!!bool":
		var b bool
		if err := n.Decode(&b); err != nil {
			l.ds.Errorf(l.pos(n), "invalid boolean %q", short(n.Value))
			return nil, false
		}
		return b, true
	case "!!int":
		var i int64
		if err := n.Decode(&i); err != nil {
			l.ds.Errorf(l.pos(n), "integer %s is out of range", short(n.Value))
			return nil, false
		}
		return json.Number(strconv.FormatInt(i, 10)), true
	case "!!float":
		var f float64
		if err := n.Decode(&f); err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
			l.ds.Errorf(l.pos(n), "number %s is not a finite number", short(n.Value))
			return nil, false
		}
		return json.Number(strconv.FormatFloat(f, 'g', -1, 64)), true
	case "!!str", "":
		return n.Value, true
	case "!!binary", "!!timestamp":
		return n.Value, true
	}
	l.ds.Errorf(l.pos(n), "unsupported YAML tag %s", short(n.Tag))
	return nil, false
}

// declKind names what the keys of the mapping at ptr declare, for messages about
// duplicates; "" for mappings whose keys are the schema's own.
func declKind(ptr string) string {
	segs := strings.Split(ptr, "/")
	switch last := segs[len(segs)-1]; {
	case len(segs) == 2:
		switch last {
		case "states":
			return "state"
		case "events":
			return "event"
		case "roles":
			return "role"
		case "policies":
			return "policy"
		case "context":
			return "context field"
		case "counters":
			return "counter"
		case "guards":
			return "guard"
		case "actions":
			return "action"
		case "checkpoints":
			return "checkpoint"
		case "timeout_levels":
			return "timeout level"
		}
	case len(segs) >= 4 && len(segs)%2 == 0 && segs[1] == "states" && last == "states":
		return "state"
	case len(segs) == 4 && segs[1] == "events" && last == "payload":
		return "payload field"
	case len(segs) == 5 && segs[1] == "states" && segs[3] == "timeout" && last == "levels":
		return "timeout level"
	case len(segs) == 5 && segs[1] == "guards" && last == "values":
		return "threshold value"
	}
	return ""
}

// escapePointer escapes one JSON pointer token the way the schema validator does in the
// instance locations of its errors.
func escapePointer(s string) string {
	return url.PathEscape(strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1"))
}

func unescapePointer(s string) string {
	if u, err := url.PathUnescape(s); err == nil {
		s = u
	}
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
		l.ds.Errorf(Pos{File: l.path, Line: 1, Col: 1}, "internal error: schema does not compile: %v", err)
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

// finding is one schema error mapped back to the spec, before it is reported.
type finding struct {
	loc     string // instance location (JSON pointer)
	kw      string // the keyword that failed
	node    *yaml.Node
	msg     string   // the whole message, path included
	missing []string // kw "required": the missing keys
	suggest string   // kw "additionalProperties": the key suggested for the unknown one
}

// report turns the validator's error tree into findings: one per problem, at the node it is
// about, worded for a YAML author. It leaves out findings that only restate another: a key
// reported missing because it was misspelt, or an empty name that also fails the name
// pattern.
func (l *loader) report(c *compiled, ve *jsonschema.ValidationError) {
	var fs []*finding
	l.collect(c, ve, &fs)
	explained := map[string]bool{} // loc + "\x00" + key: a missing key a misspelling explains
	emptyAt := map[string]bool{}
	for _, f := range fs {
		switch f.kw {
		case "additionalProperties":
			if f.suggest != "" {
				explained[f.loc+"\x00"+f.suggest] = true
			}
		case "minLength":
			emptyAt[f.loc] = true
		}
	}
	for _, f := range fs {
		if l.consequence(f) {
			continue
		}
		l.record(f)
		switch f.kw {
		case "required":
			var left []string
			for _, k := range f.missing {
				if !explained[f.loc+"\x00"+k] {
					left = append(left, k)
				}
			}
			if len(left) == 0 {
				continue
			}
			f.msg = fmt.Sprintf("%s: missing %s", displayPath(f.loc), keyList(left))
		case "pattern":
			if emptyAt[f.loc] {
				continue
			}
		}
		l.ds.Errorf(l.pos(f.node), "%s", f.msg)
	}
}

// consequence reports whether a schema finding may only restate a problem toJSON has
// reported: a complaint at or below a value it could not convert (which is null in the
// JSON), about the alternatives of a value that holds one, or about missing keys or
// emptiness of a mapping that lost keys.
func (l *loader) consequence(f *finding) bool {
	for _, p := range l.nulled {
		if f.loc == p || strings.HasPrefix(f.loc, p+"/") {
			return true
		}
		if (f.kw == "oneOf" || f.kw == "anyOf") && strings.HasPrefix(p, f.loc+"/") {
			return true
		}
	}
	if l.holes[f.loc] {
		switch f.kw {
		case "required", "minProperties", "oneOf", "anyOf":
			return true
		}
	}
	return false
}

// record notes what a schema finding breaks: the value it is about, and the section or
// declaration holding it. At the top level, a missing key breaks that section, and an
// unknown key breaks the section it looks like a misspelling of (when that is absent).
func (l *loader) record(f *finding) {
	l.markBad(f.node)
	if f.loc != "" {
		l.broken[f.loc] = true
		return
	}
	switch f.kw {
	case "required":
		for _, k := range f.missing {
			l.broken["/"+escapePointer(k)] = true
		}
	case "additionalProperties":
		if _, present := l.ptrs["/"+escapePointer(f.suggest)]; f.suggest != "" && !present {
			l.broken["/"+escapePointer(f.suggest)] = true
		}
	}
}

// keyList formats missing keys: key "a", keys "a" and "b".
func keyList(keys []string) string {
	q := make([]string, len(keys))
	for i, k := range keys {
		q[i] = strconv.Quote(k)
	}
	if len(q) == 1 {
		return "key " + q[0]
	}
	return "keys " + strings.Join(q[:len(q)-1], ", ") + " and " + q[len(q)-1]
}

// collect walks the error tree. For oneOf/anyOf it descends into the one alternative the
// value was meant to be (the only one of the right type, or the only one whose required
// keys are present); failing that it reports keys no alternative knows, or describes the
// alternatives in one message.
func (l *loader) collect(c *compiled, ve *jsonschema.ValidationError, out *[]*finding) {
	kw := lastSegment(ve.KeywordLocation)
	loc := ve.InstanceLocation
	if (kw == "oneOf" || kw == "anyOf") && len(ve.Causes) > 0 {
		var matched []*jsonschema.ValidationError
		for _, cause := range ve.Causes {
			if !typeMismatch(cause, loc) {
				matched = append(matched, cause)
			}
		}
		if len(matched) == 1 {
			l.collect(c, matched[0], out)
			return
		}
		var complete []*jsonschema.ValidationError
		for _, m := range matched {
			if !failsAt(m, loc, "required") {
				complete = append(complete, m)
			}
		}
		if len(complete) == 1 {
			l.collect(c, complete[0], out)
			return
		}
		if len(matched) > 1 && l.unknownKeys(c, ve, matched, out) {
			return
		}
		*out = append(*out, &finding{loc: loc, kw: kw, node: l.nodeAt(loc),
			msg: fmt.Sprintf("%s: %s", displayPath(loc), describeAlternatives(c, ve.KeywordLocation))})
		return
	}
	if len(ve.Causes) > 0 {
		for _, cause := range ve.Causes {
			l.collect(c, cause, out)
		}
		return
	}
	node := l.nodeAt(loc)
	path := displayPath(loc)
	f := &finding{loc: loc, kw: kw, node: node}
	switch {
	case kw == "additionalProperties":
		allowed := c.propertiesAt(ve.KeywordLocation)
		for _, m := range quotedRE.FindAllStringSubmatch(ve.Message, -1) {
			key := m[1]
			sug := names.Suggest(key, allowed)
			*out = append(*out, &finding{loc: loc, kw: kw, node: l.keyNode(node, key), suggest: sug,
				msg: fmt.Sprintf("unknown key %q%s", short(key), didYouMean(key, sug))})
		}
		return
	case kw == "required":
		for _, m := range quotedRE.FindAllStringSubmatch(ve.Message, -1) {
			f.missing = append(f.missing, m[1])
		}
		f.msg = fmt.Sprintf("%s: missing %s", path, keyList(f.missing))
	case strings.Contains(ve.KeywordLocation, "/propertyNames/"):
		// The value is a key: report at the key.
		if k, ok := l.keys[loc]; ok {
			f.node = k
		}
		f.msg = fmt.Sprintf("%s: %s", displayPath(parentPointer(loc)), nameMessage(c, ve, kw, unescapePointer(lastSegment(loc))))
	case kw == "pattern":
		f.msg = fmt.Sprintf("%s: %s", path, patternMessage(c, ve, node))
	case kw == "type":
		if t := patternText(c.defName(strings.TrimSuffix(ve.KeywordLocation, "/type"))); strings.HasPrefix(t, "expected ") && resolve(node).Kind == yaml.ScalarNode {
			f.msg = fmt.Sprintf("%s: %s, not %s", path, t, short(resolve(node).Value))
			break
		}
		f.msg = fmt.Sprintf("%s: %s", path, yamlTypes(ve.Message))
		if v := resolve(node); strings.HasPrefix(ve.Message, "expected boolean,") && v.Kind == yaml.ScalarNode && yaml11Bool(v.Value) {
			f.msg = fmt.Sprintf("%s: expected boolean, but got string %q: write true or false", path, v.Value)
		}
	case (kw == "minItems" || kw == "minProperties" || kw == "minLength") && isEmpty(node):
		f.msg = fmt.Sprintf("%s: must not be empty", path)
	default:
		f.msg = fmt.Sprintf("%s: %s", path, ve.Message)
	}
	*out = append(*out, f)
}

// unknownKeys reports the keys of a mapping that none of the alternatives it was matched
// against allows, with suggestions from all of them. It reports nothing, and returns false,
// when every key is known to some alternative.
func (l *loader) unknownKeys(c *compiled, ve *jsonschema.ValidationError, alts []*jsonschema.ValidationError, out *[]*finding) bool {
	node := resolve(l.nodeAt(ve.InstanceLocation))
	if node.Kind != yaml.MappingNode {
		return false
	}
	known := map[string]bool{}
	for _, alt := range alts {
		rest := strings.TrimPrefix(alt.KeywordLocation, ve.KeywordLocation+"/")
		if rest == alt.KeywordLocation {
			return false
		}
		idx, _, _ := strings.Cut(rest, "/")
		props, _ := c.sub(ve.KeywordLocation + "/" + idx)["properties"].(map[string]any)
		for k := range props {
			known[k] = true
		}
	}
	allowed := make([]string, 0, len(known))
	for k := range known {
		allowed = append(allowed, k)
	}
	sort.Strings(allowed)
	found := false
	for i := 0; i+1 < len(node.Content); i += 2 {
		k := resolve(node.Content[i])
		if known[k.Value] {
			continue
		}
		found = true
		sug := names.Suggest(k.Value, allowed)
		*out = append(*out, &finding{loc: ve.InstanceLocation, kw: "additionalProperties", node: k,
			suggest: sug, msg: fmt.Sprintf("unknown key %q%s", short(k.Value), didYouMean(k.Value, sug))})
	}
	return found
}

// failsAt reports whether ve, or one of its causes about the same value, is a failure of
// keyword kw.
func failsAt(ve *jsonschema.ValidationError, loc, kw string) bool {
	if ve.InstanceLocation == loc && lastSegment(ve.KeywordLocation) == kw {
		return true
	}
	for _, c := range ve.Causes {
		if c.InstanceLocation == loc && failsAt(c, loc, kw) {
			return true
		}
	}
	return false
}

func parentPointer(ptr string) string {
	if i := strings.LastIndexByte(ptr, '/'); i >= 0 {
		return ptr[:i]
	}
	return ""
}

func isEmpty(n *yaml.Node) bool {
	n = resolve(n)
	switch n.Kind {
	case yaml.MappingNode, yaml.SequenceNode:
		return len(n.Content) == 0
	case yaml.ScalarNode:
		return n.Value == "" || n.Tag == "!!null"
	}
	return false
}

// yaml11Bool reports whether s was a boolean in YAML 1.1 (yes, no, on, off, ...), which
// YAML 1.2 and this loader read as a string.
func yaml11Bool(s string) bool {
	switch strings.ToLower(s) {
	case "y", "yes", "n", "no", "on", "off", "true", "false":
		return true
	}
	return false
}

// yamlTypes rewords a JSON type error ("expected object, but got array") in YAML terms.
func yamlTypes(msg string) string {
	return strings.NewReplacer("object", "mapping", "array", "list").Replace(msg)
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

// keyNode returns the first key of the mapping obj written as key, or obj when there is
// none. Each mapping is indexed once, so that reporting every key of a mapping with tens of
// thousands of unknown keys takes linear time.
func (l *loader) keyNode(obj *yaml.Node, key string) *yaml.Node {
	obj = resolve(obj)
	if obj.Kind != yaml.MappingNode {
		return obj
	}
	if l.keyIndex == nil {
		l.keyIndex = map[*yaml.Node]map[string]*yaml.Node{}
	}
	index, ok := l.keyIndex[obj]
	if !ok {
		index = make(map[string]*yaml.Node, len(obj.Content)/2)
		for i := 0; i+1 < len(obj.Content); i += 2 {
			if _, dup := index[obj.Content[i].Value]; !dup {
				index[obj.Content[i].Value] = obj.Content[i]
			}
		}
		l.keysIndexed += len(obj.Content) / 2
		l.keyIndex[obj] = index
	}
	if k, ok := index[key]; ok {
		return k
	}
	return obj
}

// didYouMean formats a suggestion for an unknown key as names.DidYouMean does.
func didYouMean(key, suggestion string) string {
	if suggestion == "" || suggestion == key {
		return ""
	}
	return ` (did you mean "` + suggestion + `"?)`
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

// describeAlternatives explains a failed oneOf by the description of the schema there.
func describeAlternatives(c *compiled, kwloc string) string {
	loc := strings.TrimSuffix(strings.TrimSuffix(kwloc, "/oneOf"), "/anyOf")
	if d := alternativesText(c.defName(loc)); d != "" {
		return "expected " + d
	}
	if d, ok := c.sub(loc)["description"].(string); ok && d != "" {
		return "expected " + lowerFirst(strings.TrimSuffix(d, "."))
	}
	return "value matches none of the allowed forms"
}

// alternativesText describes the forms of the schema's oneOf definitions whose
// descriptions say what they mean rather than what they look like; "" for the others.
func alternativesText(def string) string {
	if def == "timeout" {
		return "a duration such as 15m, or a mapping with after: DURATION"
	}
	return ""
}

// patternText explains a pattern of the schema in words, by definition name (or keyword
// location, for patterns outside a definition); "" when there is no explanation.
func patternText(key string) string {
	switch key {
	case "name":
		return "names may not contain a comma or a control character"
	case "/properties/package":
		return "a Go package name is lower-case letters and digits, starting with a letter"
	case "duration":
		return "expected a Go duration such as 90s, 15m, 4h or 1h30m"
	case "percent":
		return "expected a percentage of the timeout, such as 80%"
	case "fieldType":
		return "expected string, int, float, bool, duration, time, enum, a list []T or a map map[string]T of a scalar T"
	}
	return ""
}

func patternMessage(c *compiled, ve *jsonschema.ValidationError, node *yaml.Node) string {
	loc := strings.TrimSuffix(ve.KeywordLocation, "/pattern")
	value := resolve(node).Value
	if t := patternText(c.defName(loc)); t != "" {
		return fmt.Sprintf("invalid value %q: %s", short(value), t)
	}
	if d, ok := c.sub(loc)["description"].(string); ok && d != "" {
		return fmt.Sprintf("invalid value %q: expected %s", short(value), lowerFirst(strings.TrimSuffix(d, ".")))
	}
	return ve.Message
}

// nameMessage explains why a mapping key is not a valid name.
func nameMessage(c *compiled, ve *jsonschema.ValidationError, kw, key string) string {
	switch kw {
	case "pattern":
		return fmt.Sprintf("invalid name %q: %s", short(key), patternText("name"))
	case "minLength":
		return "a name must not be empty"
	case "maxLength":
		return fmt.Sprintf("name %q is too long: %s", short(key), ve.Message)
	}
	return fmt.Sprintf("invalid name %q: %s", short(key), ve.Message)
}

// defName names the schema at a keyword location: the $defs entry when the location ends
// in a $ref, else the location itself (without $ref segments).
func (c *compiled) defName(kwloc string) string {
	if strings.HasSuffix(kwloc, "/$ref") {
		ref, _ := c.sub(strings.TrimSuffix(kwloc, "/$ref"))["$ref"].(string)
		return strings.TrimPrefix(ref, "#/$defs/")
	}
	return kwloc
}

func lowerFirst(s string) string {
	if s == "" || strings.HasPrefix(s, "Go ") {
		return s
	}
	return strings.ToLower(s[:1]) + s[1:]
}
