package cli

import (
	"fmt"
	"strings"
	"time"
)

// delayValues reads import's --delay flags (name=duration, a Go duration such as 1500ms)
// into the values of named delays.
func delayValues(flags []string) (map[string]time.Duration, error) {
	if len(flags) == 0 {
		return nil, nil
	}
	out := map[string]time.Duration{}
	for _, f := range flags {
		name, v, ok := strings.Cut(f, "=")
		d, err := time.ParseDuration(v)
		switch {
		case !ok || name == "":
			return nil, fmt.Errorf("--delay %q: want name=duration, such as shortDelay=1500ms", f)
		case err != nil || d <= 0:
			return nil, fmt.Errorf("--delay %q: %q is not a positive duration such as 1500ms", f, v)
		}
		if _, dup := out[name]; dup {
			return nil, fmt.Errorf("--delay %q: delay %q is given twice", f, name)
		}
		out[name] = d
	}
	return out, nil
}
