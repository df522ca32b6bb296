package specdiff

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/fsmgen/fsmgen/internal/diag"
)

// Write prints the changes and the verdict: as text (path:line:col: class: message, with
// where the same thing was in the old spec, then a verdict line), as one JSON object
// ({"verdict", "counts", "changes"}), or as GitHub Actions annotations (breaking changes as
// errors, behaviour changes as warnings, compatible ones as notices).
func Write(w io.Writer, cs []Change, f diag.Format) error {
	var b strings.Builder
	switch f {
	case diag.FormatJSON:
		type change struct {
			Class   string    `json:"class"`
			Message string    `json:"message"`
			Pos     diag.Pos  `json:"pos"`
			Was     *diag.Pos `json:"was,omitempty"`
			Stored  *int      `json:"stored,omitempty"`
			// Deadlines: of the stored instances, those with deadlines of the state.
			Deadlines *int `json:"deadlines,omitempty"`
		}
		out := struct {
			Verdict string         `json:"verdict"`
			Counts  map[string]int `json:"counts"`
			Changes []change       `json:"changes"`
		}{Verdict: Verdict(cs).String(), Counts: counts(cs), Changes: []change{}}
		for _, c := range cs {
			x := change{Class: c.Class.String(), Message: c.Message + storedText(c), Pos: c.Pos, Stored: c.Stored, Deadlines: c.Deadlines}
			if c.Was != (diag.Pos{}) {
				was := c.Was
				x.Was = &was
			}
			out.Changes = append(out.Changes, x)
		}
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(out)
	case diag.FormatGitHubActions:
		for _, c := range cs {
			b.WriteString(diag.GitHubAnnotation([...]string{"notice", "warning", "error"}[c.Class], c.Pos, c.Class.String()+": "+c.Message+storedText(c)))
		}
	default:
		for _, c := range cs {
			fmt.Fprintf(&b, "%s: %s: %s%s", c.Pos, c.Class, c.Message, storedText(c))
			if c.Was != (diag.Pos{}) && c.Was != c.Pos {
				fmt.Fprintf(&b, " (was at %s)", c.Was)
			}
			b.WriteByte('\n')
		}
		n := counts(cs)
		fmt.Fprintf(&b, "verdict: %s (%d breaking, %d behaviour, %d compatible)\n", Verdict(cs), n["breaking"], n["behaviour"], n["compatible"])
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func counts(cs []Change) map[string]int {
	n := map[string]int{"breaking": 0, "behaviour": 0, "compatible": 0}
	for _, c := range cs {
		n[c.Class.String()]++
	}
	return n
}

// storedText says how many stored instances a change concerns, when a store was asked.
func storedText(c Change) string {
	if c.Stored == nil {
		return ""
	}
	n, s := *c.Stored, "s"
	if n == 1 {
		s = ""
	}
	if c.State != "" {
		text := fmt.Sprintf("; %d stored instance%s in %q", n, s, c.State)
		if c.Deadlines != nil {
			text += fmt.Sprintf(", %d with deadlines of it to arm again", *c.Deadlines)
		}
		return text
	}
	return fmt.Sprintf("; %d stored instance%s count %q", n, s, c.Counter)
}
