package lower_test

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fsmgen/fsmgen/internal/diag"
	"github.com/fsmgen/fsmgen/internal/lower"
	"golang.org/x/tools/txtar"
)

var update = flag.Bool("update", false, "rewrite the expected output of testdata/check/*.txtar")

// TestCheck runs every case in testdata/check. A case is a txtar archive holding
// spec.fsm.yaml and want: the exact findings of `fsmgen check`, one per line (empty for a
// clean spec). -update rewrites want from what the checker says now.
func TestCheck(t *testing.T) {
	files, err := filepath.Glob("testdata/check/*.txtar")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no cases in testdata/check")
	}
	for _, file := range files {
		name := strings.TrimSuffix(filepath.Base(file), ".txtar")
		t.Run(name, func(t *testing.T) {
			ar, err := txtar.ParseFile(file)
			if err != nil {
				t.Fatal(err)
			}
			var src []byte
			srcIdx, wantIdx := -1, -1
			for i, f := range ar.Files {
				switch f.Name {
				case "spec.fsm.yaml":
					src, srcIdx = f.Data, i
				case "want":
					wantIdx = i
				}
			}
			if srcIdx < 0 || wantIdx < 0 {
				t.Fatalf("%s: needs the files spec.fsm.yaml and want", file)
			}
			if first, _, _ := strings.Cut(string(ar.Comment), "\n"); strings.TrimSpace(first) == "" {
				t.Errorf("%s: the first line of the archive comment should say what the case shows", file)
			}
			_, ds := lower.Load("spec.fsm.yaml", src)
			var got bytes.Buffer
			if err := diag.Write(&got, ds, diag.FormatText); err != nil {
				t.Fatal(err)
			}
			var checked bytes.Buffer
			if err := diag.Write(&checked, lower.Check("spec.fsm.yaml", src), diag.FormatText); err != nil {
				t.Fatal(err)
			}
			if checked.String() != got.String() {
				t.Errorf("Check and Load differ\n--- Check\n%s--- Load\n%s", checked.String(), got.String())
			}
			if *update {
				ar.Files[wantIdx].Data = got.Bytes()
				if err := os.WriteFile(file, txtar.Format(ar), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			if want := string(ar.Files[wantIdx].Data); got.String() != want {
				t.Errorf("findings differ\n--- got\n%s--- want\n%s", got.String(), want)
			}
		})
	}
}
