// Package seedlog writes a build task's log entries in the event format of the build
// workflow's design document (seed 004, "Event Format"):
//
//	{"timestamp", "taskId", "event": "STATE_TRANSITION", "from", "to", "actor", "reason", "metadata"}
//
// numbered by "seq". The runtime's own entries (build.TaskLogEntry) name the instance
// "id", the kind "kind" and the event "event", and carry what replaying needs; this is
// the document's view of them, for the programs that print a task's log.
package seedlog

import (
	"time"

	"github.com/fsmgen/fsmgen/generated/build"
)

// Event is one entry in the document's format.
type Event struct {
	Seq       int64     `json:"seq"`
	Timestamp time.Time `json:"timestamp"`
	TaskID    string    `json:"taskId"`
	// Event is the entry's kind: STATE_TRANSITION, MACHINE_CREATED, TIMEOUT_WARN, ...
	Event    string            `json:"event"`
	From     string            `json:"from"`
	To       string            `json:"to"`
	Actor    string            `json:"actor"`
	Reason   string            `json:"reason"`
	Metadata map[string]string `json:"metadata"`
}

// Of returns log entry e in the document's format.
func Of(e build.TaskLogEntry) Event {
	md := e.Metadata
	if md == nil {
		md = map[string]string{}
	}
	return Event{
		Seq: e.Seq, Timestamp: e.Timestamp, TaskID: e.ID, Event: e.Kind, From: e.From.String(), To: e.To.String(),
		Actor: e.Actor, Reason: e.Reason, Metadata: md,
	}
}
