package lower_test

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
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

// TestMethodLimit checks the limit on the methods spec names make on one generated type:
// Go allows 65,535 methods on a type (beyond, the compiler stops with "too many methods",
// as it did for 65,600 guards), and fsmgen lets spec names make lower.MaxSpecMethods of
// them. The hooks get one per guard and action, the machine two per event with a payload.
func TestMethodLimit(t *testing.T) {
	hooks := func(guards, actions int) []byte {
		var b strings.Builder
		b.WriteString("version: 1\nmachine: M\npackage: m\nguards:\n")
		for i := range guards {
			fmt.Fprintf(&b, "  g%d: {}\n", i)
		}
		b.WriteString("actions:\n")
		for i := range actions {
			fmt.Fprintf(&b, "  a%d: {}\n", i)
		}
		b.WriteString("states:\n  s: { initial: true }\n  t: { terminal: true }\nevents:\n  go: {}\n")
		b.WriteString("transitions:\n  - { from: s, on: go, if: g0, to: t, do: [a0] }\n  - { from: s, on: go, to: s }\n")
		return []byte(b.String())
	}
	payloads := func(events int) []byte {
		var b strings.Builder
		b.WriteString("version: 1\nmachine: M\npackage: m\nstates:\n  s: { initial: true }\n  t: { terminal: true }\nevents:\n")
		for i := range events {
			fmt.Fprintf(&b, "  e%d: { payload: { x: { type: string } } }\n", i)
		}
		b.WriteString("transitions:\n  - { from: s, on: e0, to: t }\n")
		return []byte(b.String())
	}
	for _, tc := range []struct {
		name string
		spec []byte
		want string // the error, "" for none
	}{
		{"hooks at the limit", hooks(lower.MaxSpecMethods-1, 1), ""},
		{"hooks over the limit", hooks(lower.MaxSpecMethods-1, 2),
			`spec.fsm.yaml:65006:3: error: action "a1" would generate method A1 of MHooks, one more than the 65000 methods spec names may make on one type (one per guard and per action, on the hooks interface and the types that implement it): Go allows at most 65535 methods on a type, and the rest are kept for the methods every machine has`},
		{"payloads at the limit", payloads(lower.MaxSpecMethods / 2), ""},
		{"payloads over the limit", payloads(lower.MaxSpecMethods/2 + 1),
			`spec.fsm.yaml:32508:3: error: event "e32500" would generate method FireE32500 of M, one more than the 65000 methods spec names may make on one type (each event with a payload makes two, each counter one, a configurable one three): Go allows at most 65535 methods on a type, and the rest are kept for the methods every machine has`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var errs []string
			for _, d := range lower.Check("spec.fsm.yaml", tc.spec) {
				if d.Severity == diag.Error {
					errs = append(errs, d.String())
				}
			}
			var want []string
			if tc.want != "" {
				want = []string{tc.want}
			}
			if !slices.Equal(errs, want) {
				t.Errorf("errors:\n%s\nwant:\n%s", strings.Join(errs, "\n"), strings.Join(want, "\n"))
			}
		})
	}
}
