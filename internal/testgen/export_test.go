package testgen

import "github.com/fsmgen/fsmgen/internal/ir"

// GoodContext is the context of the generated tests' fixture (every field at its good
// value), for this package's tests.
func GoodContext(m *ir.Machine) []any {
	ctx := make([]any, len(m.Fields))
	for _, f := range m.Fields {
		ctx[f.Index] = good(f).json
	}
	return ctx
}
