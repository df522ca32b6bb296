package cli

import (
	"strings"
	"testing"
)

// A required enum has a value of its own for "unset": a payment without a currency is
// refused, not taken as the first currency. Exclusive bounds refuse the bound itself.
func TestSimValueConstraints(t *testing.T) {
	const spec = "../gogen/testdata/values.fsm.yaml"
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--set", "amount=5"}, ExitFindings, "currency: currency is required"},
		{[]string{"--set", `currency="EUR"`, "--set", "amount=5"}, ExitOK, "quote: draft -> quoted"},
		{[]string{"--set", `currency="EUR"`, "--set", "amount=1000000"}, ExitFindings, "amount: amount must be below 1000000"},
		{[]string{"--set", `currency="EUR"`, "--set", "amount=-0.5"}, ExitFindings, "amount: amount must be above 0"},
		{[]string{"--set", `currency="GBP"`, "--set", "amount=5"}, ExitUsage, "EUR, USD, JPY"},
	} {
		code, out, errs := run(t, append([]string{"sim", spec, "--events", "quote"}, c.args...)...)
		if code != c.code || !strings.Contains(out+errs, c.want) {
			t.Errorf("%v: exit %d, want %d with %q:\n%s%s", c.args, code, c.code, c.want, out, errs)
		}
	}
}
