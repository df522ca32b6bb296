package names

import (
	"fmt"
	"go/token"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode"
)

func TestGoName(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		// The table of docs/spec.md.
		{"in_progress", "InProgress"},
		{"IN_PROGRESS", "InProgress"},
		{"In Review", "InReview"},
		{"half-closed (local)", "HalfClosedLocal"},
		{"toolCall", "ToolCall"},
		{"2fa_sent", "2faSent"},

		// snake_case and UPPER_SNAKE.
		{"task_created", "TaskCreated"},
		{"a", "A"},
		{"_leading_and_trailing_", "LeadingAndTrailing"},
		{"double__underscore", "DoubleUnderscore"},
		{"TASK_CREATED", "TaskCreated"},
		{"A", "A"},
		{"NEEDS_APPROVAL", "NeedsApproval"},

		// camelCase and mixed case words keep their inner capitals; only all-upper words
		// are lower-cased.
		{"camelCase", "CamelCase"},
		{"PascalCase", "PascalCase"},
		{"HTTPServer", "HTTPServer"},
		{"userID", "UserID"},
		{"ID", "Id"},
		{"user_ID", "UserId"},
		{"OK", "Ok"},

		// Free-form names: every run of non-alphanumerics separates words.
		{"in review", "InReview"},
		{"a--b", "AB"},
		{"needs approval!", "NeedsApproval"},
		{"state.with.dots", "StateWithDots"},
		{"  spaced   out  ", "SpacedOut"},
		{"x/y", "XY"},

		// Digits are word characters; a word may start with one.
		{"x1_y2", "X1Y2"},
		{"v2", "V2"},
		{"2", "2"},
		{"404_not_found", "404NotFound"},
		{"step_2", "Step2"},
		{"RETRY_3X", "Retry3x"},

		// Unicode letters and digits.
		{"état_fermé", "ÉtatFermé"},
		{"Ünïcode_ÜBER", "ÜnïcodeÜber"},
		{"ΑΒΓ_δ", "ΑβγΔ"},
		{"日本語", "日本語"},
		{"ǅx", "Ǆx"},             // a title-case letter becomes upper case
		{"İSTANBUL", "Istanbul"}, // lower-casing keeps one rune per rune
		{"２fa", "２fa"},           // a full-width digit is a digit

		// No letter or digit at all.
		{"", ""},
		{"!!", ""},
		{"-", ""},
		{"_", ""},
		{"( )", ""},
		{"\u0301", ""}, // a combining mark alone
	} {
		if got := GoName(c.in); got != c.want {
			t.Errorf("GoName(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// Whatever the name, GoName gives "" or an identifier that Go accepts after a prefix
// (StateX), made of letters and digits only.
func TestGoNameIsAnIdentifier(t *testing.T) {
	inputs := []string{"in_progress", "İSTANBUL", "ﬁle", "ß", "ǲ", "Σ_ΑΣ", "a\u0301b", "x\u200by", "🙂 smile", "\uFFFD", "ʰx", "Ⅻ", "x²", "٣_arabic_digit"}
	for r := rune(0); r < 0x3000; r += 7 {
		inputs = append(inputs, string(r)+"a", "A"+string(r), strings.ToUpper(string(r))+"_"+string(r))
	}
	for _, in := range inputs {
		id := GoName(in)
		if id == "" {
			continue
		}
		for _, r := range id {
			if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
				t.Errorf("GoName(%q) = %q holds %U, which is neither a letter nor a digit", in, id, r)
			}
		}
		if !token.IsIdentifier("State" + id) {
			t.Errorf("GoName(%q) = %q: State%s is not a Go identifier", in, id, id)
		}
		if Exported(id) && !token.IsExported(id) {
			t.Errorf("GoName(%q) = %q: Exported says yes, go/token says no", in, id)
		}
	}
}

func TestStartsWithLetterAndExported(t *testing.T) {
	for _, c := range []struct {
		id             string
		letter, export bool
	}{
		{"InProgress", true, true},
		{"2faSent", false, false},
		{"２fa", false, false},
		{"日本語", true, false}, // a letter without case: valid, but unexported
		{"ßX", true, false},  // ß has no single upper-case rune
		{"Ǆemal", true, true},
		{"", false, false},
	} {
		if got := StartsWithLetter(c.id); got != c.letter {
			t.Errorf("StartsWithLetter(%q) = %v, want %v", c.id, got, c.letter)
		}
		if got := Exported(c.id); got != c.export {
			t.Errorf("Exported(%q) = %v, want %v", c.id, got, c.export)
		}
	}
}

func TestSuggest(t *testing.T) {
	keys := []string{"version", "machine", "package", "states", "events", "transitions", "guards", "actions"}
	for _, c := range []struct {
		name       string
		candidates []string
		want       string
	}{
		{"reviw", []string{"draft", "review", "done"}, "review"},           // one deletion
		{"tranistions", keys, "transitions"},                               // adjacent swap counts one
		{"stats", keys, "states"},                                          // one insertion
		{"evnets", keys, "events"},                                         // swap
		{"REVIEW", []string{"review"}, "review"},                           // case is ignored
		{"In review", []string{"In Review", "review"}, "In Review"},        // free-form names
		{"etat", []string{"état"}, "état"},                                 // runes, not bytes
		{"colour", keys, ""},                                               // nothing close
		{"go", []string{"stop"}, ""},                                       // too far for a short name
		{"abcdefghijkl", []string{"abcdefghijkl_extra_xx"}, ""},            // the distance limit caps at 4
		{"abcdefghijkl", []string{"abcdefghijklmnop"}, "abcdefghijklmnop"}, // 4 insertions on 12 runes
		{"x", nil, ""}, // no candidates
		{"gard", []string{"card", "guard"}, "card"},                      // a tie goes to the first
		{"gard", []string{"guard", "card"}, "guard"},                     // (whatever the order)
		{"ready", []string{"redy", "ready"}, "ready"},                    // an exact match wins
		{strings.Repeat("a", 65), []string{strings.Repeat("a", 66)}, ""}, // long names: exact only
		{strings.Repeat("a", 65), []string{strings.Repeat("a", 65)}, strings.Repeat("a", 65)},
	} {
		if got := Suggest(c.name, c.candidates); got != c.want {
			t.Errorf("Suggest(%q, %q) = %q, want %q", c.name, c.candidates, got, c.want)
		}
		if got := NewSuggester(c.candidates).Suggest(c.name); got != c.want {
			t.Errorf("NewSuggester(%q).Suggest(%q) = %q, want %q", c.candidates, c.name, got, c.want)
		}
	}
}

func TestDidYouMean(t *testing.T) {
	for _, c := range []struct {
		name       string
		candidates []string
		want       string
	}{
		{"reviw", []string{"review"}, ` (did you mean "review"?)`},
		{"Review", []string{"review"}, ` (did you mean "review"?)`},
		{"review", []string{"review"}, ""}, // the name itself is no suggestion
		{"colour", []string{"states"}, ""},
		{"x", nil, ""},
	} {
		if got := DidYouMean(c.name, c.candidates); got != c.want {
			t.Errorf("DidYouMean(%q, %q) = %q, want %q", c.name, c.candidates, got, c.want)
		}
	}
}

func TestDistance(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want int
	}{
		{"", "", 0},
		{"a", "", 1},
		{"", "abc", 3},
		{"kitten", "sitting", 3},
		{"ab", "ba", 1},
		{"abc", "ca", 3}, // optimal string alignment: no edits of a swapped pair
		{"état", "etat", 1},
		{"same", "same", 0},
	} {
		if got := distance(c.a, c.b); got != c.want {
			t.Errorf("distance(%q, %q) = %d, want %d", c.a, c.b, got, c.want)
		}
		if got := distance(c.b, c.a); got != c.want {
			t.Errorf("distance(%q, %q) = %d, want %d (symmetry)", c.b, c.a, got, c.want)
		}
	}
}

// osa is the optimal-string-alignment distance by the textbook table, to check within.
func osa(a, b []rune) int {
	d := make([][]int, len(a)+1)
	for i := range d {
		d[i] = make([]int, len(b)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(a)][len(b)]
}

// TestWithin checks the banded, early-stopping distance against the whole table, on random
// words over a small alphabet (so that they are often close) and on long ones.
func TestWithin(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	word := func(max int) []rune {
		w := make([]rune, r.IntN(max+1))
		for i := range w {
			w[i] = rune('a' + r.IntN(3))
		}
		return w
	}
	for range 20000 {
		a, b := word(10), word(10)
		if r.IntN(4) == 0 {
			a, b = word(maxRunes), word(maxRunes)
		}
		k := r.IntN(6)
		want := min(osa(a, b), k+1)
		if got := within(a, b, k); got != want {
			t.Fatalf("within(%q, %q, %d) = %d, want %d", string(a), string(b), k, got, want)
		}
	}
}

// TestSuggesterAgrees: within its bounds, a Suggester suggests what Suggest does.
func TestSuggesterAgrees(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	word := func() string {
		w := make([]rune, 1+r.IntN(9))
		for i := range w {
			w[i] = []rune("abcAB_é")[r.IntN(7)]
		}
		return string(w)
	}
	for range 200 {
		var cands []string
		for range r.IntN(40) {
			cands = append(cands, word())
		}
		s := NewSuggester(cands)
		for range 50 {
			name := word()
			if got, want := s.Suggest(name), Suggest(name, cands); got != want {
				t.Fatalf("NewSuggester(%q).Suggest(%q) = %q, Suggest says %q", cands, name, got, want)
			}
		}
	}
}

// misspelt returns n names, and n misspellings of them (a letter changed), as a spec with
// thousands of unknown references has.
func misspelt(n int) (names, typos []string) {
	for i := range n {
		names = append(names, fmt.Sprintf("state_%d", i))
		typos = append(typos, fmt.Sprintf("statx_%d", i))
	}
	return names, typos
}

// TestSuggesterIsBounded: 8,000 misspelt names among 8,000 candidates compare each name
// with every candidate of a close length, about 64 million comparisons; the Suggester
// answers the first 100 names, each correctly, within a fixed number of comparisons.
func TestSuggesterIsBounded(t *testing.T) {
	for _, n := range []int{10, 1000, 8000, 16000} {
		cands, typos := misspelt(n)
		s := NewSuggester(cands)
		suggested := 0
		for i, typo := range typos {
			got := s.Suggest(typo)
			if got != "" {
				suggested++
				// statx_12 is one change from state_12, and two from state_1 or state_123.
				if got != cands[i] {
					t.Errorf("%d candidates: Suggest(%q) = %q, want %q", n, typo, got, cands[i])
				}
			}
		}
		if s.compared > maxCompared {
			t.Errorf("%d candidates: compared %d times, more than %d", n, s.compared, maxCompared)
		}
		if want := min(n, maxSuggested); suggested > want || n <= 1000 && suggested != want {
			t.Errorf("%d candidates: %d names got a suggestion, want %d", n, suggested, want)
		}
		// An exact match in another case costs nothing and is always found.
		if got := s.Suggest(strings.ToUpper(cands[n-1])); got != cands[n-1] {
			t.Errorf("%d candidates: no suggestion for the upper-case %q: %q", n, cands[n-1], got)
		}
	}
}

func TestLowerFirst(t *testing.T) {
	for in, want := range map[string]string{"": "", "Crit": "crit", "État": "état", "ΣTag": "σTag", "X": "x", "数": "数"} {
		if got := LowerFirst(in); got != want {
			t.Errorf("LowerFirst(%q) = %q, want %q", in, got, want)
		}
	}
}
