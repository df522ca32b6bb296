// Package importer turns a statechart written for another tool, an XState v5 machine config
// (JSON) or a W3C SCXML document, into an fsmgen spec that `fsmgen check` accepts, keeping
// its names.
//
// The pipeline is: read the input with the position of every key and element; build a
// chart (states, transitions, names) while refusing, at its position, whatever the subset
// does not cover; resolve targets; write the spec, remembering for each line of it the
// input position it came from; check the spec (lower.Check) and report the checker's
// findings at those input positions. Nothing is returned when anything is refused.
package importer

import (
	"fmt"
	"go/token"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/fsmgen/fsmgen/internal/diag"
	"github.com/fsmgen/fsmgen/internal/lower"
	"github.com/fsmgen/fsmgen/internal/names"
	"github.com/fsmgen/fsmgen/spec"
)

// Limits on input, those of a spec (spec.MaxBytes, spec.MaxDepth), and MaxStates.
const (
	maxBytes = spec.MaxBytes
	maxDepth = spec.MaxDepth
)

// MaxStates is the most states (of every kind, the machine itself left out) an imported
// statechart may have: the checker computes every configuration of a statechart, and a
// larger one takes longer to check and generate than anyone waits for (a chart of 10,000
// states imports in about 10 s). A larger chart is refused at its first state past the
// limit.
const MaxStates = 10000

// Format names an input format.
type Format string

const (
	XState Format = "xstate" // an XState v5 machine config, as JSON
	SCXML  Format = "scxml"  // a W3C SCXML document
)

// ParseFormat checks a --from value.
func ParseFormat(s string) (Format, error) {
	switch f := Format(s); f {
	case XState, SCXML:
		return f, nil
	}
	return "", fmt.Errorf("unknown input format %q (want xstate or scxml)", s)
}

// FormatOf guesses the format of a file from its extension: .json is XState, .scxml SCXML.
func FormatOf(path string) (Format, bool) {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".json":
		return XState, true
	case ".scxml":
		return SCXML, true
	}
	return "", false
}

// Options name the imported machine.
type Options struct {
	// Machine is the spec's machine name; "" takes it from the XState id or the SCXML name,
	// made into a Go type name, or "Machine".
	Machine string
	// Package is the spec's Go package; "" is the machine name lower-cased (letters and
	// digits only).
	Package string
	// Events are events to declare besides those the input names: an XState config lists
	// none, so an event that only a wildcard ("*", "error.*") takes is known only so.
	Events []string
	// Delays are the values of the named delays an XState config's after names (the
	// machine's delays option, which a config written as JSON leaves out); each becomes the
	// configurable timeout of the state that waits it (named.go).
	Delays map[string]time.Duration
}

// Import reads the statechart in data (read from path, which findings and the spec's header
// name) and returns the fsmgen spec, with the findings: refusals of what the subset does
// not cover, and the checker's findings about the spec, each at the position in the input
// it comes from. The spec is nil when any finding is an error; warnings come with a spec.
func Import(from Format, path string, data []byte, opt Options) ([]byte, diag.List) {
	out, lines, ds := convert(from, path, data, opt)
	if out == nil {
		return nil, ds
	}
	for _, d := range lower.Check(path, out) {
		if d.Pos.Line >= 1 && d.Pos.Line <= len(lines) {
			d.Pos = lines[d.Pos.Line-1]
		} else {
			d.Pos = diag.Pos{File: path, Line: 1, Col: 1}
		}
		ds = append(ds, d)
	}
	ds = ds.Sorted()
	if ds.HasErrors() {
		return nil, ds
	}
	return out, ds
}

// convert is Import without the checker: the spec and the input position of each of its
// lines, or nil and the refusals.
func convert(from Format, path string, data []byte, opt Options) ([]byte, []diag.Pos, diag.List) {
	src := newSource(path, data)
	var ds diag.List
	if !src.validate(&ds) {
		return nil, nil, ds
	}
	var c *chart
	switch from {
	case XState:
		c, ds = readXState(src)
	case SCXML:
		c, ds = readSCXML(src)
	default:
		ds.Errorf(src.start(), "unknown input format %q", from)
	}
	if ds.HasErrors() || c == nil {
		return nil, nil, ds.Sorted()
	}
	count := 0
	c.root.walk(func(n *node) {
		if count++; count == MaxStates+2 { // the root is the machine, not a state
			ds.Errorf(n.pos, "the statechart has more than %d states; the limit is %d (split it into machines of their own)", MaxStates, MaxStates)
		}
	})
	if ds.HasErrors() {
		return nil, nil, ds.Sorted()
	}
	c.name(opt)
	if c.namedDelays(opt, &ds); ds.HasErrors() {
		return nil, nil, ds.Sorted()
	}
	for _, e := range opt.Events {
		c.extra = append(c.extra, named{e, src.start()})
	}
	out, lines := c.write(shownPath(path))
	return out, lines, ds
}

// shownPath is the input's path as the header shows it: as given, with forward slashes; the
// base name of an absolute path, which would differ from one machine to the next.
func shownPath(path string) string {
	if filepath.IsAbs(path) {
		path = filepath.Base(path)
	}
	return filepath.ToSlash(path)
}

// The chart both readers build.

type kind int

const (
	atomic kind = iota
	compound
	parallel
	final
	history
)

type node struct {
	name     string
	pos      diag.Pos // of its key (XState) or element (SCXML)
	kind     kind
	deep     bool // a deep history state
	doc      string
	entry    []named
	exit     []named
	parent   *node
	children []*node
	initial  *node // the initial child of a compound state
	def      *node // the default of a history state
	trans    []*trans
	path     string // the path the spec names the state by (see chart.layout)
	// wait is the named delay the state waits, as its timeout (named.go).
	wait *namedWait
}

// named is a name of an event, a guard or an action where the input writes it.
type named struct {
	name string
	pos  diag.Pos
}

type trans struct {
	pos     diag.Pos
	events  []named // none for always and done transitions
	always  bool
	done    bool
	after   string  // a delayed transition's delay, as a duration ("1.5s")
	delay   named   // a delayed transition's named delay (XState's delays option)
	target  *node   // nil: targetless, internal: true
	more    []*node // further targets: with target, one in each region of a parallel state
	reenter *bool   // written when set
	ifs     []named
	unless  []named
	do      []named
	raise   []named // events raised for the machine itself
	doc     string
	expr    *gexpr // a guard expression (logic.go), besides ifs and unless
}

type chart struct {
	extra   []named  // events to declare besides those the transitions name (Options.Events)
	from    string   // the input format, for the header
	id      string   // the XState id or SCXML name, "" when none
	idPos   diag.Pos // where the id is, or the root's position
	machine string
	pkg     string
	doc     string
	root    *node
	// wrap puts the root into the spec as a top-level state named wrapName, for what only a
	// state can have: transitions, entry and exit actions, history states, regions.
	wrap     bool
	wrapName string
}

// isDescriptor reports whether an event name is a wildcard descriptor ("*", "error.*"),
// written as such in the spec and not declared as an event.
func isDescriptor(name string) bool { return name == "*" || strings.HasSuffix(name, ".*") }

// isDescendant reports whether n lies strictly within a.
func (n *node) isDescendant(a *node) bool {
	for p := n.parent; p != nil; p = p.parent {
		if p == a {
			return true
		}
	}
	return false
}

func (n *node) child(name string) *node {
	for _, c := range n.children {
		if c.name == name {
			return c
		}
	}
	return nil
}

// walk visits n and every state below it in document order.
func (n *node) walk(f func(*node)) {
	f(n)
	for _, c := range n.children {
		c.walk(f)
	}
}

// Names.

// checkName refuses a name an fsmgen spec cannot hold (docs/spec.md, Names): an empty one,
// one with a comma, or with a character that is not printable; a state's may not hold a
// dot either, which separates the states of a path.
func checkName(ds *diag.List, what string, n named, state bool) bool {
	switch r, bad := names.FirstUnprintable(n.name); {
	case n.name == "":
		ds.Errorf(n.pos, "%s is empty: an fsmgen name has at least one character", what)
	case strings.Contains(n.name, ","):
		ds.Errorf(n.pos, "%s %q holds a comma, which an fsmgen name may not hold; rename it", what, n.name)
	case bad:
		ds.Errorf(n.pos, "%s %q holds %U, %s: an fsmgen name may hold only printable characters; rename it", what, n.name, r, names.DescribeUnprintable(r))
	case state && strings.Contains(n.name, "."):
		ds.Errorf(n.pos, "%s %q holds a dot, which separates the states of a path in an fsmgen statechart; rename it", what, n.name)
	default:
		return true
	}
	return false
}

var identRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// name sets the machine and package names: the options', or made from the id.
func (c *chart) name(opt Options) {
	c.machine = opt.Machine
	if c.machine == "" {
		c.machine = MachineName(c.id)
	}
	c.pkg = opt.Package
	if c.pkg == "" {
		c.pkg = PackageName(c.machine)
	}
}

// MachineName makes a machine name from an XState id or SCXML name: its Go name
// (trafficLight -> TrafficLight), or "Machine" when that is not an exported identifier.
func MachineName(id string) string {
	g := names.GoName(id)
	if g == "" || !names.Exported(g) {
		return "Machine"
	}
	return g
}

// PackageName makes a package name from a machine name: its ASCII letters and digits,
// lower-cased; "machine" when that does not start with a letter; with "fsm" after it when
// it is a Go keyword.
func PackageName(machine string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(machine) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
		}
	}
	p := b.String()
	if p == "" || p[0] < 'a' || p[0] > 'z' {
		p = "machine"
	}
	if token.IsKeyword(p) {
		p += "fsm"
	}
	return p
}

var packageRE = regexp.MustCompile(`^[a-z][a-z0-9]*$`)

// ValidPackage reports whether p can name the package of a spec.
func ValidPackage(p string) bool { return packageRE.MatchString(p) && !token.IsKeyword(p) }
