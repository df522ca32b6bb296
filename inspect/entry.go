package inspect

import (
	"encoding/json"

	"github.com/fsmgen/fsmgen/fsmrt"
)

// anyName stands for a generated enum (state, event, role) the inspector does not know
// the Go type of: it decodes any name to nothing, so that an entry of any machine decodes
// through fsmrt's own LogEntry type, with its own field names. The names the page shows
// come from the store's Entry (Event, From, To).
type anyName uint8

func (anyName) String() string                { return "" }
func (anyName) IsTerminal() bool              { return false }
func (*anyName) UnmarshalText(b []byte) error { return nil }
func (anyName) MarshalText() ([]byte, error)  { return nil, nil }
func (*anyName) UnmarshalJSON(b []byte) error { return nil }

// decodeEntry reads what the store does not index of a log entry: who fired it, why, and
// the context after it.
func decodeEntry(data []byte) (fsmrt.LogEntry[anyName, anyName, anyName], error) {
	var e fsmrt.LogEntry[anyName, anyName, anyName]
	err := json.Unmarshal(data, &e)
	return e, err
}
