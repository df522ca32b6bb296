package fsmrt_test

import "github.com/fsmgen/fsmgen/fsmrt"

// The small enum types below stand in for a generated package's State, Event and Role
// types, to instantiate the generic API the way generated code does.

type tState uint8

const (
	sIdle tState = iota
	sRunning
	sDone   // terminal
	sFailed // terminal
	numStates
)

var stateNames = fsmrt.Names{
	Package: "review",
	Type:    "State",
	What:    "state",
	List:    []string{"idle", "running", "done", "failed"},
}

func (s tState) String() string               { return stateNames.String(int(s)) }
func (s tState) IsTerminal() bool             { return s == sDone || s == sFailed }
func (s tState) MarshalText() ([]byte, error) { return stateNames.Marshal(int(s)) }

type tEvent uint8

const (
	eStart tEvent = iota
	eFinish
	eCancel
	eRetry
	numEvents
)

var eventNames = fsmrt.Names{
	Package: "review",
	Type:    "Event",
	What:    "event",
	List:    []string{"start", "finish", "cancel", "retry"},
}

func (e tEvent) String() string               { return eventNames.String(int(e)) }
func (e tEvent) MarshalText() ([]byte, error) { return eventNames.Marshal(int(e)) }

// tRole has a None value: the zero Role is no role.
type tRole uint8

const (
	rNone tRole = iota
	rAdmin
	rViewer
)

var roleNames = fsmrt.Names{
	Package: "review",
	Type:    "Role",
	What:    "role",
	List:    []string{"", "admin", "viewer"},
	None:    true,
}

func (r tRole) String() string { return roleNames.String(int(r)) }

// tWideEvent is an event type with a wider underlying type and no MarshalText: it encodes
// in JSON as a number.
type tWideEvent uint16

func (e tWideEvent) String() string { return "wide" }

// tWideState is a State type with the widest underlying type the constraint allows.
type tWideState uint32

func (s tWideState) String() string   { return "wide" }
func (s tWideState) IsTerminal() bool { return s == 7 }
