package fsmrt

// Coverage: built with the build tag fsmcover, the runtime records what each machine
// fires, for fsmgen cover: every transition taken (with the microsteps of a statechart),
// every guard's outcome, every refusal by kind, every timeout level recorded and every
// expiry. Each process writes the records it has not written yet to a file of its own in
// the directory FSMGEN_COVERDIR names (one line of JSON each), so that the runs of several
// packages and processes merge; go test -race and parallel tests are safe. Without the tag
// the calls are compiled away: coverOn is a false constant.

// CoverRecord is one thing a machine did, as the coverage files hold it (one JSON object
// per line). fsmgen cover reads them with the specs.
type CoverRecord struct {
	// Machine is the machine's name (Spec.Name) and Spec the fingerprint of the spec the
	// code was generated from: records of another version are not counted.
	Machine string `json:"machine"`
	Spec    string `json:"spec"`
	// Kind is CoverTransition, CoverGuard, CoverRefusal, CoverLevel or CoverExpiry.
	Kind string `json:"kind"`
	// State is the state the machine was in (a statechart's configuration); Event the event
	// fired, if any.
	State string `json:"state"`
	Event string `json:"event,omitempty"`
	// To is the state a transition left the machine in (after a statechart's microsteps).
	To string `json:"to,omitempty"`
	// Transition is the index of the transition taken (a statechart's microstep), for
	// CoverTransition.
	Transition int `json:"transition"`
	// Guard is the index of the guard asked and Held its answer, for CoverGuard.
	Guard int  `json:"guard"`
	Held  bool `json:"held,omitempty"`
	// Refusal is the kind of refusal (RefusalInvalid, ...), for CoverRefusal.
	Refusal string `json:"refusal,omitempty"`
	// Level is the timeout level recorded, for CoverLevel.
	Level string `json:"level,omitempty"`
}

// The kinds of coverage records.
const (
	CoverTransition = "transition"
	CoverGuard      = "guard"
	CoverRefusal    = "refusal"
	CoverLevel      = "level"
	CoverExpiry     = "expiry"
)

// The kinds of refusal a coverage record names.
const (
	RefusalInvalid    = "invalid"    // the state does not accept the event
	RefusalGuards     = "guards"     // no transition's guards held
	RefusalNoChoice   = "no-choice"  // no candidate of a choice held
	RefusalNoHistory  = "no-history" // nothing remembered for a history target
	RefusalLimit      = "limit"      // a counter's limit refused it
	RefusalValidation = "validation" // required fields or constraints
	RefusalRole       = "role"       // the role may not fire it
	RefusalOther      = "other"
)

// coverRecord records r (fsmcover builds).
func (m *Machine[S, E, R, C, X]) coverRecord(r CoverRecord) {
	r.Machine, r.Spec = m.def.storeName, m.def.Spec.Fingerprint
	coverWrite(r)
}

// coverTaken records transition t (and a statechart's microsteps after it) taken from st.
func (m *Machine[S, E, R, C, X]) coverTaken(st *Step[S, E, R], t int) {
	m.coverRecord(CoverRecord{Kind: CoverTransition, State: st.From.String(), Event: st.Event.String(), To: m.state.String(), Transition: t})
	for _, x := range m.micro {
		m.coverRecord(CoverRecord{Kind: CoverTransition, State: st.From.String(), To: m.state.String(), Transition: int(x)})
	}
}

// coverGuard records guard g's answer held in step st.
func (m *Machine[S, E, R, C, X]) coverGuard(g int32, st *Step[S, E, R], held bool) {
	m.coverRecord(CoverRecord{Kind: CoverGuard, State: st.From.String(), Event: st.Event.String(), Guard: int(g), Held: held})
}

// coverRefused records the refusal err of e in state from.
func (m *Machine[S, E, R, C, X]) coverRefused(from S, e E, err error) {
	m.coverRecord(CoverRecord{Kind: CoverRefusal, State: from.String(), Event: e.String(), Refusal: refusalKind[S, E, R](err)})
}

// refusalKind classifies a refusal (the engine's own error values, unwrapped: a type
// switch, which allocates nothing, unlike errors.As).
func refusalKind[S StateType, E, R EnumType](err error) string {
	switch err.(type) {
	case *InvalidTransitionError[S, E]:
		return RefusalInvalid
	case *GuardError[S, E]:
		return RefusalGuards
	case *NoChoiceError[S, E]:
		return RefusalNoChoice
	case *NoHistoryError[S, E]:
		return RefusalNoHistory
	case *LimitError[S, E]:
		return RefusalLimit
	case *ValidationError[S, E]:
		return RefusalValidation
	case *PermissionError[S, E, R]:
		return RefusalRole
	}
	return RefusalOther
}
