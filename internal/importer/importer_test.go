package importer

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fsmgen/fsmgen/internal/lower"
)

var update = flag.Bool("update", false, "rewrite the golden outputs in testdata")

// TestGolden imports every fixture in testdata (xstate/*.json, scxml/*.scxml) and
// compares the spec, byte for byte, with the golden one beside it (NAME.fsm.yaml); each
// must pass the checker with no finding at all. -update rewrites the goldens.
func TestGolden(t *testing.T) {
	var inputs []string
	for _, pat := range []string{"testdata/xstate/*.json", "testdata/scxml/*.scxml"} {
		m, _ := filepath.Glob(pat)
		inputs = append(inputs, m...)
	}
	if len(inputs) < 2 {
		t.Fatalf("found %d fixtures, want at least 4", len(inputs))
	}
	for _, in := range inputs {
		t.Run(filepath.Base(in), func(t *testing.T) {
			data, err := os.ReadFile(in)
			if err != nil {
				t.Fatal(err)
			}
			from, _ := FormatOf(in)
			out, ds := Import(from, in, data, Options{})
			if len(ds) > 0 || out == nil {
				t.Fatalf("findings:\n%s", ds.Sorted())
			}
			golden := strings.TrimSuffix(in, filepath.Ext(in)) + ".fsm.yaml"
			if *update {
				if err := os.WriteFile(golden, out, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test -update to write it)", err)
			}
			if !bytes.Equal(out, want) {
				t.Errorf("%s differs from the import (go test -update rewrites it):\n--- got\n%s--- want\n%s", golden, out, want)
			}
			if ds := lower.Check(golden, want); len(ds) > 0 {
				t.Errorf("the checker reports:\n%s", ds)
			}
			// Deterministic: a second import gives the same bytes.
			again, _ := Import(from, in, data, Options{})
			if !bytes.Equal(out, again) {
				t.Errorf("a second import differs")
			}
		})
	}
}
