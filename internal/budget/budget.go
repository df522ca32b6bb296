// Package budget estimates how much generate would write for a machine, before anything
// is emitted, and refuses a machine whose outputs would exceed a budget.
//
// Some outputs grow with the product of the states and the events (the generated tests
// have a case for every pair, the dispatch table a cell), and the Markdown and the diagrams
// with the expanded transitions (a `from: {any: true}` rule is one row, one edge, per
// state). A spec of a few hundred kilobytes can therefore ask for gigabytes of output, and
// the emitters hold what they build in memory: about twenty times the output at their
// peak. The estimate is computed from the resolved machine in one pass over its
// transitions' expanded sources, without building any output, so that such a spec is
// refused at once, with the numbers.
package budget

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/fsmgen/fsmgen/internal/ir"
)

// Default is the budget generate applies unless --max-output-size says otherwise: the total
// of one spec's outputs. The largest machines in this repository (the 20,000-state spec of
// the scaling benchmark, about 100 MB with its tests) fit; a run near it takes about half
// a minute and two to three gigabytes of memory.
const Default Size = 128 << 20

// Flag is the name of the command-line flag that sets the budget.
const Flag = "max-output-size"

// Part is the estimated size of one output.
type Part struct {
	Kind  string // go, tests, mermaid, markdown or dot
	Bytes int64
}

// Estimate is the estimated size of what generate writes for one machine.
type Estimate struct {
	Source         string // the spec path, as the machine records it
	States, Events int
	// Rows is the number of (source state, event) pairs of the declared transitions once
	// their sources are expanded: the rows of the Markdown transition table.
	Rows  int64
	Parts []Part // one per kind asked for, in that order
}

// Total is the estimated size of all the outputs.
func (e Estimate) Total() int64 {
	var n int64
	for _, p := range e.Parts {
		n += p.Bytes
	}
	return n
}

// Of estimates the size of the outputs of kinds (go, tests, mermaid, markdown, dot) for m.
// It takes time linear in the size of m (the transitions' expanded sources included) and
// builds nothing. Unknown kinds count zero bytes. The estimate is meant to be within a
// factor of 1.5 of what the emitters write.
func Of(m *ir.Machine, kinds []string) Estimate {
	size, c := estimate(m)
	e := Estimate{Source: m.Source, States: len(m.States), Events: len(m.Events), Rows: c.cells}
	for _, k := range kinds {
		var n float64
		switch k {
		case "go":
			n = size.code
		case "tests":
			n = size.tests
		case "mermaid":
			n = size.mermaid
		case "markdown":
			n = size.markdown
		case "dot":
			n = size.dot
		}
		e.Parts = append(e.Parts, Part{Kind: k, Bytes: int64(n)})
	}
	return e
}

// Check returns an error when the estimate is over limit (a limit of 0 or less is none),
// saying how much would be written, which output takes most and why, and how to raise the
// limit; the error's text starts with the spec's path.
func Check(e Estimate, limit Size) error {
	total := e.Total()
	if limit <= 0 || total <= int64(limit) {
		return nil
	}
	big := e.Parts[0]
	for _, p := range e.Parts {
		if p.Bytes > big.Bytes {
			big = p
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s: generate would write about %s", e.Source, Size(total))
	if len(e.Parts) > 1 {
		fmt.Fprintf(&b, ", %s of it %s", Size(big.Bytes), e.why(big.Kind))
	} else {
		fmt.Fprintf(&b, " of %s", e.why(big.Kind))
	}
	fmt.Fprintf(&b, "; the budget is %s; raise it with --%s=%s", limit, Flag, roundUp(total))
	if big.Kind == "tests" && total-big.Bytes <= int64(limit) {
		b.WriteString(", or leave the tests out with --no-tests")
	}
	return errors.New(b.String())
}

// why names an output and what makes it large.
func (e Estimate) why(kind string) string {
	pairs := group(int64(e.States)) + " states × " + group(int64(e.Events)) + " events"
	rows := group(e.Rows) + " transitions once their sources are expanded"
	switch kind {
	case "go":
		return "Go code (" + pairs + " in the dispatch table)"
	case "tests":
		return "Go tests (" + pairs + ")"
	case "mermaid":
		return "Mermaid (" + rows + ")"
	case "markdown":
		return "Markdown (" + rows + ")"
	case "dot":
		return "DOT (" + rows + ")"
	}
	return kind
}

// group writes a count with thousands separators: 2,000.
func group(n int64) string {
	s := strconv.FormatInt(n, 10)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
