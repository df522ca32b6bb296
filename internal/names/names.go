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
// likely typo. Ties go to the earlier candidate, so the result is deterministic. It
// compares name with every candidate of a close enough length; to suggest for many names
// among many candidates, use a Suggester.
func Suggest(name string, candidates []string) string {
	lname := strings.ToLower(name)
	rn := []rune(lname)
	limit := min(len(rn)/3+1, 4)
	best, bestD := "", limit+1
	for _, c := range candidates {
		lc := strings.ToLower(c)
		if lc == lname { // distance 0: nothing is closer, nor earlier
			return c
		}
		if n := utf8.RuneCountInString(lc); len(rn) > maxRunes || n > maxRunes || n < len(rn)-limit || n > len(rn)+limit {
			continue
		}
		if d := within(rn, []rune(lc), limit); d < bestD {
			best, bestD = c, d
		}
	}
	return best
}

// DidYouMean formats a suggestion as ` (did you mean "x"?)`, or "" when there is none.
func DidYouMean(name string, candidates []string) string {
	return didYouMean(name, Suggest(name, candidates))
}

func didYouMean(name, suggestion string) string {
	if suggestion != "" && suggestion != name {
		return ` (did you mean "` + suggestion + `"?)`
	}
	return ""
}

// Bounds of a Suggester's work.
const (
	// maxRunes is the longest name compared by edit distance; longer names are suggested
	// only a candidate that differs from them in case alone.
	maxRunes = 64
	// maxSuggested is how many names a Suggester looks for near misses of; it answers ""
	// for the names after them.
	maxSuggested = 100
	// maxCompared is how many candidates a Suggester compares names with, over all the
	// names asked; a name whose comparisons would go past it gets "".
	maxCompared = 1 << 20
)

// Suggester suggests near misses among a fixed list of candidates, for many names, as
// Suggest does. It reads the candidates once and compares a name only with candidates of a
// close enough length (an edit distance is at least the difference of the lengths). Its
// work is bounded: it looks for near misses of the first 100 names only, and compares
// about a million candidates at most in all, so that a spec with thousands of misspelt
// names among thousands of declarations is checked in linear time. Past those bounds it
// suggests nothing, except a candidate that differs in case alone: a suggestion may be
// missing, never worse.
type Suggester struct {
	cands []string
	lower [][]rune       // the candidates lower-cased, when at most maxRunes long
	exact map[string]int // a lower-cased candidate -> its first index
	byLen [][]int        // rune length -> the indexes of the candidates that long, ascending

	asked    int // names looked for, past the exact matches
	compared int // candidates compared with
}

// NewSuggester returns a Suggester for candidates, which it keeps (the caller must not
// change them).
func NewSuggester(candidates []string) *Suggester {
	s := &Suggester{cands: candidates, lower: make([][]rune, len(candidates)), exact: make(map[string]int, len(candidates))}
	for i, c := range candidates {
		lc := strings.ToLower(c)
		if _, ok := s.exact[lc]; !ok {
			s.exact[lc] = i
		}
		n := utf8.RuneCountInString(lc)
		if n > maxRunes {
			continue
		}
		s.lower[i] = []rune(lc)
		for len(s.byLen) <= n {
			s.byLen = append(s.byLen, nil)
		}
		s.byLen[n] = append(s.byLen[n], i)
	}
	return s
}

// Suggest returns the candidate closest to name, or "" when none is close enough or the
// Suggester's bounds are reached.
func (s *Suggester) Suggest(name string) string {
	lname := strings.ToLower(name)
	if i, ok := s.exact[lname]; ok { // distance 0: nothing is closer, nor earlier
		return s.cands[i]
	}
	rn := []rune(lname)
	if len(rn) > maxRunes {
		return ""
	}
	limit := min(len(rn)/3+1, 4)
	lo, hi := max(len(rn)-limit, 0), min(len(rn)+limit, len(s.byLen)-1)
	window := 0
	for n := lo; n <= hi; n++ {
		window += len(s.byLen[n])
	}
	s.asked++
	if s.asked > maxSuggested || s.compared+window > maxCompared {
		return ""
	}
	s.compared += window
	best, bestD := -1, limit+1
	for n := lo; n <= hi; n++ {
		for _, i := range s.byLen[n] {
			if d := within(rn, s.lower[i], limit); d < bestD || d == bestD && i < best {
				best, bestD = i, d
			}
		}
	}
	if best < 0 {
		return ""
	}
	return s.cands[best]
}

// DidYouMean formats Suggest's suggestion as ` (did you mean "x"?)`, or "" when there is
// none.
func (s *Suggester) DidYouMean(name string) string {
	return didYouMean(name, s.Suggest(name))
}

// distance is the optimal-string-alignment edit distance (adjacent swaps count one), of
// names of at most maxRunes runes; longer names are at distance 0 when equal, else far.
func distance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	if len(ra) > maxRunes || len(rb) > maxRunes {
		if a == b {
			return 0
		}
		return 1 << 20
	}
	return within(ra, rb, maxRunes)
}

// within is the optimal-string-alignment distance of a and b (at most maxRunes runes each)
// when it is at most k, and k+1 otherwise. It computes only the cells of the table within k
// of its diagonal (a cheaper path never leaves them) and stops at the first row whose
// cells all exceed k.
func within(a, b []rune, k int) int {
	if len(a) > len(b) {
		a, b = b, a
	}
	n, m := len(a), len(b)
	far := k + 1
	if m-n > k {
		return far
	}
	var rows [3][maxRunes + 2]int
	prev2, prev, cur := &rows[0], &rows[1], &rows[2]
	for j := 0; j <= m; j++ {
		prev[j] = min(j, far)
	}
	if m < len(prev)-1 {
		prev[m+1] = far
	}
	for i := 1; i <= n; i++ {
		lo, hi := max(1, i-k), min(m, i+k)
		if lo == 1 {
			cur[0] = min(i, far)
		} else {
			cur[lo-1] = far
		}
		best := cur[lo-1]
		for j := lo; j <= hi; j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			v := min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				v = min(v, prev2[j-2]+1)
			}
			v = min(v, far)
			cur[j] = v
			best = min(best, v)
		}
		if hi < m {
			cur[hi+1] = far
		}
		if best > k {
			return far
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return min(prev[m], far)
}
