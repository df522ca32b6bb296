package specdiff

import (
	"fmt"
	"strings"

	"github.com/fsmgen/fsmgen/internal/ir"
)

// Proposal returns, when changes a store was asked about (Count) strand stored instances
// (a state removed with instances in it), the migrations entry that gives them a place,
// to fill in: each such state, with how many instances are in it and how many have
// deadlines of it; "" when nothing stored is stranded.
func Proposal(old *ir.Machine, cs []Change) string {
	var lines []string
	for _, c := range cs {
		if c.Class != Breaking || c.State == "" || c.Stored == nil || *c.Stored == 0 || !strings.Contains(c.Message, "removed") {
			continue
		}
		note := fmt.Sprintf("%d stored", *c.Stored)
		if c.Deadlines != nil {
			note += fmt.Sprintf(", %d with deadlines", *c.Deadlines)
		}
		lines = append(lines, fmt.Sprintf("        %s: NEW_STATE   # %s", quoteName(c.State), note))
	}
	if len(lines) == 0 {
		return ""
	}
	fp := ir.Fingerprint(old)
	return fmt.Sprintf("proposal: the instances stored in the states this spec removed have no place in it; give them one:\n"+
		"  migrations:\n    - from: %s   # the old version, as the version lock beside the spec records it once code was generated from it\n      states:\n%s\n",
		fp[:len("sha256:")+8], strings.Join(lines, "\n"))
}

// quoteName writes a state name as a YAML key: plain when it is a plain word.
func quoteName(s string) string {
	for _, r := range s {
		if !(r == '_' || r == '-' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			return fmt.Sprintf("%q", s)
		}
	}
	return s
}
