package fsmrt

import "time"

// Record is one entry of a machine's transition history (record_history: true): a
// generated package names it (review.TaskRecord is Record[review.State, review.Event]).
type Record[S, E any] struct {
	From    S         `json:"from"`
	To      S         `json:"to"`
	Event   E         `json:"event"`
	EventID string    `json:"eventId,omitempty"`
	At      time.Time `json:"timestamp"`
	Actor   string    `json:"actor,omitempty"`
	Reason  string    `json:"reason,omitempty"`
}

// Clock tells the time. Machines read it only when the spec asks for time (timeouts,
// history); tests set a fake one, or callers pass the time of each event.
type Clock interface {
	Now() time.Time
}

// SystemClock is the Clock of time.Now.
type SystemClock struct{}

// Now returns time.Now().
func (SystemClock) Now() time.Time { return time.Now() }
