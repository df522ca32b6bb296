package budget

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Size is a number of bytes. It is a flag.Value: Set reads "64MB", "1.5GB", "800KB",
// "4096" (bytes) or "0" (no limit); units are powers of 1024, with or without the B and
// in any case (64M, 64mb, 64MiB are all 64 << 20).
type Size int64

const (
	kB Size = 1 << 10
	mB Size = 1 << 20
	gB Size = 1 << 30
	tB Size = 1 << 40
)

var units = []struct {
	name string
	size Size
}{{"TB", tB}, {"GB", gB}, {"MB", mB}, {"KB", kB}}

// ParseSize reads a size as Set does.
func ParseSize(s string) (Size, error) {
	t := strings.ToUpper(strings.TrimSpace(s))
	t = strings.TrimSuffix(strings.TrimSuffix(t, "IB"), "B")
	mult := Size(1)
	for _, u := range units {
		if strings.HasSuffix(t, u.name[:1]) {
			t, mult = strings.TrimSuffix(t, u.name[:1]), u.size
			break
		}
	}
	t = strings.TrimSpace(t)
	f, err := strconv.ParseFloat(t, 64)
	if err != nil || t == "" || strings.ContainsAny(t, "eEinfINFxXpP_") || f < 0 {
		return 0, fmt.Errorf("invalid size %q: want a number of bytes with an optional unit, as in 64MB or 1GB", s)
	}
	n := f * float64(mult)
	if n > math.MaxInt64/2 {
		return 0, fmt.Errorf("invalid size %q: too large", s)
	}
	return Size(math.Ceil(n)), nil
}

// Set implements flag.Value.
func (z *Size) Set(s string) error {
	v, err := ParseSize(s)
	if err != nil {
		return err
	}
	*z = v
	return nil
}

// String writes the size with one decimal in the largest unit it reaches: 64 MB, 1.9 GB,
// 812 bytes. A whole number of units has no decimal.
func (z Size) String() string {
	for _, u := range units {
		if z >= u.size {
			v := float64(z) / float64(u.size)
			if v >= 100 || z%u.size == 0 {
				return strconv.FormatFloat(math.Round(v), 'f', -1, 64) + " " + u.name
			}
			return strconv.FormatFloat(math.Round(v*10)/10, 'f', -1, 64) + " " + u.name
		}
	}
	if z == 1 {
		return "1 byte"
	}
	return strconv.FormatInt(int64(z), 10) + " bytes"
}

// roundUp is a flag value at least n: n rounded up to a whole number of its largest unit
// (2.3 GB -> 3GB, 149.2 MB -> 150MB).
func roundUp(n int64) string {
	for _, u := range units {
		if Size(n) >= u.size {
			return strconv.FormatInt((n+int64(u.size)-1)/int64(u.size), 10) + u.name
		}
	}
	return strconv.FormatInt(n, 10)
}
