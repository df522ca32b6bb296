package fsmrt

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// ErrInvalidSnapshot and ErrInvalidLog say that what a store holds cannot be a machine of
// this spec: a snapshot with values the machine could never hold, or an event log entry
// that is not a transition the machine could have taken. errors.Is matches SnapshotError
// and LogError with them.
var (
	ErrInvalidSnapshot = errors.New("fsm: invalid snapshot")
	ErrInvalidLog      = errors.New("fsm: invalid event log")
)

// SnapshotError says a snapshot cannot be restored: Field (its JSON path, as
// "counters.failures"; "(json)" for bytes that are not a snapshot's JSON) holds what the
// machine could never be in. ID is the instance whose stored snapshot it is, when it was
// read from a store (Replay, Resume, StoredSnapshot).
type SnapshotError struct {
	ID     string
	Field  string
	Reason string
	spec   *Spec
}

// InvalidSnapshot returns the refusal to restore a snapshot whose field is wrong for reason.
func InvalidSnapshot(sp *Spec, field, reason string) *SnapshotError {
	return &SnapshotError{Field: field, Reason: reason, spec: sp}
}

// Error describes the refusal.
func (e *SnapshotError) Error() string {
	if e.ID != "" {
		return fmt.Sprintf("%srestore %.200s: %s: %s", e.spec.prefix(), e.ID, e.Field, e.Reason)
	}
	return e.spec.prefix() + "restore: " + e.Field + ": " + e.Reason
}

// Is matches ErrInvalidSnapshot.
func (e *SnapshotError) Is(target error) bool { return target == ErrInvalidSnapshot }

// LogError says entry Seq of the event log of machine ID cannot be replayed; Err says why.
type LogError struct {
	ID   string
	Seq  int64
	Err  error
	spec *Spec
}

// InvalidLog returns the refusal to replay entry seq of the log of machine id.
func InvalidLog(sp *Spec, id string, seq int64, err error) *LogError {
	return &LogError{ID: id, Seq: seq, Err: err, spec: sp}
}

// Error describes the refusal.
func (e *LogError) Error() string {
	return fmt.Sprintf("%sreplay %s: seq %d: %v", e.spec.prefix(), e.ID, e.Seq, e.Err)
}

// Is matches ErrInvalidLog.
func (e *LogError) Is(target error) bool { return target == ErrInvalidLog }

// Unwrap returns why the entry cannot be replayed.
func (e *LogError) Unwrap() error { return e.Err }

// RequireJSON refuses a JSON object in which one of keys is missing or null, with a
// SnapshotError naming it: decoding such an object would silently leave the zero value
// (for a state, the first one). Input that is not an object is left for json.Unmarshal to
// refuse.
func RequireJSON(sp *Spec, b []byte, keys ...string) error {
	var fields map[string]json.RawMessage
	if json.Unmarshal(b, &fields) != nil || fields == nil {
		return nil
	}
	for _, k := range keys {
		v, ok := fields[k]
		switch {
		case !ok:
			return InvalidSnapshot(sp, k, "missing")
		case bytes.Equal(bytes.TrimSpace(v), []byte("null")):
			return InvalidSnapshot(sp, k, "null")
		}
	}
	return nil
}

// DecodeSnapshot decodes the JSON snapshot b into v (the generated snapshot type, through a
// type without its UnmarshalJSON method). It refuses with a SnapshotError JSON that does not
// decode and a snapshot whose version or state is missing or null.
func DecodeSnapshot(sp *Spec, b []byte, v any) error {
	if err := RequireJSON(sp, b, "version", "state"); err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return InvalidSnapshot(sp, "(json)", err.Error())
	}
	return nil
}
