package chartdiff

import (
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"

	"github.com/fsmgen/fsmgen/internal/gogen/gocheck"
)

// TestGeneratedCode builds the Go code and the generated tests of random statecharts (the
// charts TestAgainstXState runs, with jump events so that every state is reachable) in one
// throwaway module and runs those tests: every configuration and event against the
// interpreter, and walks from the start through history, eventless transitions and done
// events, replayed from a store. FSMGEN_CHARTDIFF_CODE sets how many (make fuzz raises it).
func TestGeneratedCode(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a module")
	}
	n := 12
	if s := os.Getenv("FSMGEN_CHARTDIFF_CODE"); s != "" {
		v, err := strconv.Atoi(s)
		if err != nil || v < 1 {
			t.Fatalf("FSMGEN_CHARTDIFF_CODE=%q: want a positive number", s)
		}
		n = v
	}
	r := rand.New(rand.NewPCG(3, 4))
	mod := gocheck.New(t, "../..")
	for tries := 0; mod.Len() < n; tries++ {
		if tries > 50*n {
			t.Fatalf("the checker refuses nearly every random chart")
		}
		c := Generate(r, SpecOptions())
		addJumps(r, c)
		spec := c.SpecYAML()
		ok, err := mod.Add(fmt.Sprintf("random chart %d:\n%s", tries, spec), spec)
		if err != nil {
			t.Fatal(err)
		}
		_ = ok
	}
	mod.Check(t)
	t.Logf("%d random statecharts built and tested", mod.Len())
}
