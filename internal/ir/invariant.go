package ir

// Invariant reports whether the context field has constraints that a value, once set, can
// break: bounds (min, max, above, below) on a number or a duration, or item counts
// (min_items above 1, max_items) on a list or a map. Such constraints hold whenever the
// field is set, that is not its zero value: every transition the machine commits checks
// them, whether or not a state requires the field. The others hold of every set value
// (required, non_empty, min_items 1) or are the field's type (an enum's values), and only
// requires checks them.
func (f *Field) Invariant() bool {
	if f.Type.Collection() {
		return f.MinItems > 1 || f.MaxItems >= 0
	}
	return f.Type.Kind.Numeric() && (f.Min.Set || f.Max.Set)
}

// Invariants lists the context fields whose constraints hold whenever they are set
// (Field.Invariant), in field order.
func (m *Machine) Invariants() []*Field {
	var out []*Field
	for _, f := range m.Fields {
		if f.Invariant() {
			out = append(out, f)
		}
	}
	return out
}
