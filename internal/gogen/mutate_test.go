package gogen_test

import (
	"fmt"
	"math/rand/v2"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/fsmgen/fsmgen/internal/fixture"
	"github.com/fsmgen/fsmgen/internal/gogen"
	"github.com/fsmgen/fsmgen/internal/lower"
	"github.com/fsmgen/fsmgen/internal/testgen"
)

// mutation is a spec changed in one place: a line left out, a number or a boolean changed.
type mutation struct {
	from, what string
	spec       []byte
}

// mutations returns, for each spec, up to perSpec variants that the checker accepts, chosen
// by a fixed seed so that a failure names a variant that can be made again.
func mutations(t *testing.T, paths []string, perSpec int) []mutation {
	t.Helper()
	rng := rand.New(rand.NewPCG(2026, 11))
	number := regexp.MustCompile(`\b\d+(\.\d+)?\b`)
	var out []mutation
	for _, p := range paths {
		data, err := os.ReadFile(p)
		must(t, err)
		lines := strings.Split(string(data), "\n")
		var cands []mutation
		for i, l := range lines {
			if s := strings.TrimSpace(l); s == "" || strings.HasPrefix(s, "#") {
				continue
			}
			// with records the spec with line i replaced by repl (none: left out).
			with := func(what string, repl ...string) {
				next := append(append(append([]string(nil), lines[:i]...), repl...), lines[i+1:]...)
				cands = append(cands, mutation{p, fmt.Sprintf("line %d %s", i+1, what), []byte(strings.Join(next, "\n"))})
			}
			with("left out")
			for _, loc := range number.FindAllStringIndex(l, -1) {
				for _, n := range []string{"0", "1", "2"} {
					if l[loc[0]:loc[1]] != n {
						with("number "+n, l[:loc[0]]+n+l[loc[1]:])
					}
				}
			}
			if strings.Contains(l, "true") {
				with("true->false", strings.Replace(l, "true", "false", 1))
			}
			if strings.Contains(l, "false") {
				with("false->true", strings.Replace(l, "false", "true", 1))
			}
		}
		rng.Shuffle(len(cands), func(i, j int) { cands[i], cands[j] = cands[j], cands[i] })
		n := 0
		for _, c := range cands {
			if n == perSpec {
				break
			}
			if _, ds := lower.Load(p, c.spec); !ds.HasErrors() {
				out = append(out, c)
				n++
			}
		}
	}
	return out
}

// TestMutatedSpecs generates specs the checker accepts that no one wrote: each spec
// TestGeneratedCompiles uses, changed in one place (a line left out, a number or a boolean
// changed), a few variants each. Every variant's Go code must vet and its generated tests,
// which hold the interpreter's outcomes, must pass: the combinations the written specs do
// not happen to contain are where generator and interpreter could disagree. make test
// takes 2 variants of each spec; FSMGEN_MUTATIONS sets how many (make fuzz, 8).
func TestMutatedSpecs(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a module")
	}
	paths := specs(t)
	perSpec := fixture.Count(t, "FSMGEN_MUTATIONS", 2)
	all := mutations(t, paths, perSpec)
	defer func() {
		if t.Failed() {
			for i, m := range all {
				t.Logf("fsmtest/m%d: %s, %s", i, m.from, m.what)
			}
		}
	}()
	mod := newModule(t)
	for i, mu := range all {
		m, ds := lower.Load(mu.from, mu.spec)
		if ds.HasErrors() {
			t.Fatalf("%s, %s: %v", mu.from, mu.what, ds)
		}
		code, err := gogen.Generate(m, mu.from)
		if err != nil {
			t.Fatalf("%s, %s: %v", mu.from, mu.what, err)
		}
		tests, err := testgen.Generate(m, mu.from)
		if err != nil {
			t.Fatalf("%s, %s: %v", mu.from, mu.what, err)
		}
		mod.write(fmt.Sprintf("m%d/%s", i, gogen.Filename(mu.from)), code)
		mod.write(fmt.Sprintf("m%d/%s", i, testgen.Filename(gogen.Base(mu.from))), tests)
	}
	mod.run(t, nil, "vet", "./...")
	out := mod.run(t, nil, "test", "./...")
	for i, mu := range all {
		if !regexp.MustCompile(fmt.Sprintf(`(?m)^ok\s+fsmtest/m%d\s`, i)).Match(out) {
			t.Errorf("%s, %s: the generated tests of fsmtest/m%d did not run", mu.from, mu.what, i)
		}
	}
	t.Logf("%d variants of %d specs", len(all), len(paths))
}
