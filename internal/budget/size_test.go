package budget

import (
	"flag"
	"io"
	"testing"
)

func TestParseSize(t *testing.T) {
	for in, want := range map[string]Size{
		"64MB": 64 << 20, "64mb": 64 << 20, "64M": 64 << 20, "64MiB": 64 << 20, " 64 MB ": 64 << 20,
		"1GB": 1 << 30, "1.5GB": 3 << 29, "800KB": 800 << 10, "2TB": 2 << 40,
		"4096": 4096, "4096B": 4096, "0": 0, "0MB": 0,
	} {
		got, err := ParseSize(in)
		if err != nil || got != want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "MB", "-1MB", "1e9", "0x10", "64XB", "inf", "NaN", "12 34", "64MBB", "9999999TB"} {
		if got, err := ParseSize(in); err == nil {
			t.Errorf("ParseSize(%q) = %d, want an error", in, got)
		}
	}
}

func TestSizeString(t *testing.T) {
	for n, want := range map[Size]string{
		0: "0 bytes", 1: "1 byte", 812: "812 bytes", 1 << 10: "1 KB", 1536: "1.5 KB",
		64 << 20: "64 MB", 1_992_294_400: "1.9 GB", 150<<20 + 400<<10: "150 MB", 3 << 40: "3 TB",
	} {
		if got := n.String(); got != want {
			t.Errorf("Size(%d) = %q, want %q", int64(n), got, want)
		}
	}
	for n, want := range map[int64]string{
		812: "812", 1 << 20: "1MB", 1<<20 + 1: "2MB", 2_469_606_195: "3GB", 149<<20 + 200<<10: "150MB",
	} {
		if got := roundUp(n); got != want {
			t.Errorf("roundUp(%d) = %q, want %q", n, got, want)
		}
	}
}

// TestSizeFlag: a Size is the flag's value, and what it prints reads back.
func TestSizeFlag(t *testing.T) {
	fs := flag.NewFlagSet("generate", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	limit := Default
	fs.Var(&limit, Flag, "")
	if err := fs.Parse([]string{"--max-output-size=1GB"}); err != nil || limit != 1<<30 {
		t.Fatalf("--max-output-size=1GB: %v, %d", err, limit)
	}
	if err := fs.Parse([]string{"--max-output-size=lots"}); err == nil {
		t.Error("--max-output-size=lots accepted")
	}
	if back, err := ParseSize(Default.String()); err != nil || back != Default {
		t.Errorf("Default prints as %q, which reads back as %d, %v", Default, back, err)
	}
}
