// Package names maps spec names to Go identifiers and suggests near misses.
package names

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// GoName maps a spec name to an exported Go identifier by the one rule of docs/spec.md:
// split at every rune that is not a letter or digit; lower-case words that are all upper
// case; upper-case the first letter of each word; join. It returns "" when the name holds
// no letter or digit. The result may start with a digit; callers that use it without a
// prefix must check.
func GoName(name string) string {
	var b strings.Builder
	for _, w := range strings.FieldsFunc(name, func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	}) {
		if isUpper(w) {
			// Rune by rune: strings.ToLower may grow a rune into a letter and a combining
			// mark (İ -> i + U+0307), which no Go identifier may hold.
			w = strings.Map(unicode.ToLower, w)
		}
		rs := []rune(w)
		rs[0] = unicode.ToUpper(rs[0])
		b.WriteString(string(rs))
	}
	return b.String()
}

// LowerFirst lower-cases the first rune of a Go identifier: the unexported name that goes
// with an exported one (enum type Crit, its names table critNames).
func LowerFirst(id string) string {
	if id == "" {
		return id
	}
	r, n := utf8.DecodeRuneInString(id)
	return string(unicode.ToLower(r)) + id[n:]
}

// StartsWithLetter reports whether an identifier can stand without a prefix.
func StartsWithLetter(id string) bool {
	for _, r := range id {
		return unicode.IsLetter(r)
	}
	return false
}

// Exported reports whether id starts with an upper-case letter, so that Go exports it when
// it stands without a prefix (a method or a struct field). Letters without case, as in most
// CJK scripts, are letters but not upper case.
func Exported(id string) bool {
	for _, r := range id {
		return unicode.IsUpper(r)
	}
	return false
}

// isUpper reports whether w has a letter and no lower-case letter.
func isUpper(w string) bool {
	letter := false
	for _, r := range w {
		if unicode.IsLower(r) {
			return false
		}
		if unicode.IsLetter(r) {
			letter = true
		}
	}
	return letter
}

// Suggest returns the candidate closest to name, or "" when none is close enough to be a
// likely typo. Ties go to the earlier candidate, so the result is deterministic.
func Suggest(name string, candidates []string) string {
	best, bestD := "", -1
	limit := len([]rune(name))/3 + 1
	if limit > 4 {
		limit = 4
	}
	lname := strings.ToLower(name)
	for _, c := range candidates {
		d := distance(lname, strings.ToLower(c))
		if d <= limit && (bestD < 0 || d < bestD) {
			best, bestD = c, d
		}
	}
	return best
}

// DidYouMean formats a suggestion as ` (did you mean "x"?)`, or "" when there is none.
func DidYouMean(name string, candidates []string) string {
	if s := Suggest(name, candidates); s != "" && s != name {
		return ` (did you mean "` + s + `"?)`
	}
	return ""
}

// distance is the optimal-string-alignment edit distance (adjacent swaps count one).
func distance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	if len(ra) > 64 || len(rb) > 64 {
		if a == b {
			return 0
		}
		return 1 << 20
	}
	prev2 := make([]int, len(rb)+1)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(rb)]
}
