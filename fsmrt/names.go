package fsmrt

import (
	"fmt"
	"strconv"
)

// Names are the spec names of one enum type of a generated package (states, events, roles,
// the values of an enum field, ...), indexed by value. The generated String, Parse,
// MarshalText and UnmarshalText methods of the type call them.
type Names struct {
	// Package prefixes error messages, as the generated package's name.
	Package string
	// Type is the Go type's name, as String writes an out-of-range value: "State(9)".
	Type string
	// What names one value in error messages: "state", "event", "criticality value".
	What string
	// List holds the spec names by value. With None set, List[0] is "" and stands for no
	// value (the zero Role, the zero TimeoutLevel).
	List []string
	None bool
}

// String returns the name of value v, or Type(v) when v is not a value of the type.
func (n *Names) String(v int) string {
	if v >= 0 && v < len(n.List) {
		return n.List[v]
	}
	return n.Type + "(" + strconv.Itoa(v) + ")"
}

// Parse returns the value named name. The empty name is no value's.
func (n *Names) Parse(name string) (int, error) {
	if name != "" {
		for i, x := range n.List {
			if x == name {
				return i, nil
			}
		}
	}
	return 0, fmt.Errorf("%s: unknown %s %q", n.Package, n.What, name)
}

// Marshal encodes value v by name, and refuses a value out of range.
func (n *Names) Marshal(v int) ([]byte, error) {
	if v < 0 || v >= len(n.List) {
		return nil, fmt.Errorf("%s: invalid %s %d", n.Package, n.What, v)
	}
	return []byte(n.List[v]), nil
}

// Parse returns the value of an enum named name (the generated ParseState, ParseEvent, ...).
func Parse[T ~uint8 | ~uint16 | ~uint32](n *Names, name string) (T, error) {
	i, err := n.Parse(name)
	return T(i), err
}

// Unmarshal decodes a name into *v. With None set, the empty name decodes to 0.
func Unmarshal[T ~uint8 | ~uint16 | ~uint32](n *Names, b []byte, v *T) error {
	if n.None && len(b) == 0 {
		*v = 0
		return nil
	}
	i, err := n.Parse(string(b))
	if err != nil {
		return err
	}
	*v = T(i)
	return nil
}

// All returns every value of an enum with n values, in order.
func All[T ~uint8 | ~uint16 | ~uint32](n int) []T {
	out := make([]T, n)
	for i := range out {
		out[i] = T(i)
	}
	return out
}
