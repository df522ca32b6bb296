package lower

import (
	"fmt"

	"github.com/fsmgen/fsmgen/internal/ir"
	"github.com/fsmgen/fsmgen/internal/names"
	"github.com/fsmgen/fsmgen/spec"
)

// Go names of the generated code.
//
// The generated package declares identifiers of its own (State, ErrGuard, NewTask, the
// machine's Fire method) beside those made from spec names (StateIdle, the enum type of a
// context field, a FireGo method for an event with a payload). A spec whose names would
// make one identifier twice in one scope generates Go that does not compile, so the
// checker refuses it. The functions below are the record of what the generator declares
// whatever the spec says; the generator should take its reserved names from them.

// Reserved is an identifier the generated code declares whatever the spec says.
type Reserved struct {
	Name string
	What string // type, function, variable, constant, method or field
}

func reserved(what string, ids ...string) []Reserved {
	out := make([]Reserved, len(ids))
	for i, id := range ids {
		out[i] = Reserved{id, what}
	}
	return out
}

// PackageDecls lists the package-level identifiers of the generated code that do not
// depend on the spec (some are declared only when the spec uses the feature, as Role; they
// are reserved anyway, so that adding the feature later cannot break a spec).
func PackageDecls() []Reserved {
	var out []Reserved
	out = append(out, reserved("type", "State", "Event", "Role", "Checkpoint", "TimeoutLevel", "Clock", "loggedTransition",
		"FieldError", "StoreError", "CheckpointError", "IdempotencyRecord", "ValidationError", "GuardError",
		"InvalidTransitionError", "LimitError", "NoChoiceError", "NoHistoryError", "PermissionError",
		"IdempotencyConflictError", "idempotencyRecord", "systemClock", "Node", "EventlessLoopError", "ActionError")...)
	out = append(out, reserved("variable", "ErrRefused", "ErrInvalidTransition", "ErrGuard", "ErrPermission",
		"ErrNoChoice", "ErrNoHistory", "ErrLimit", "ErrValidation", "ErrIdempotencyConflict", "ErrStoreConflict",
		"ErrNotRegistered", "ErrInvalidSnapshot", "ErrInvalidLog", "stateNames", "eventNames", "roleNames", "checkpointNames", "timeoutLevelNames",
		"guardRefusals", "invalidTransitions", "moves", "plainPermitted", "noInput", "defaultTimeouts", "counterLimits",
		"loggedTransitions", "resetOnSuccess", "fsmSpec", "fsmrt", "plainSteps", "def", "ops", "ErrEventlessLoop", "ErrActionFailed", "nodeNames", "contextBounds")...)
	out = append(out, reserved("constant", "NumStates", "NumEvents", "NumNodes", "RoleNone", "LevelNone", "noCheckpoint")...)
	out = append(out, reserved("function", "States", "Events", "ParseState", "ParseEvent", "ParseRole",
		"ParseCheckpoint", "ParseTimeoutLevel", "ParseNode", "accepted", "accepts", "moveRefused", "moveStep", "init")...)
	return out
}

// MachineDecls lists the package-level identifiers made from the machine's Go name T.
func MachineDecls(T string) []Reserved {
	var out []Reserved
	for _, s := range []string{"", "Hooks", "NopHooks", "Context", "Policies", "Input", "Step", "Snapshot",
		"Record", "Store", "MemoryStore", "LogEntry", "Registry", "Extra", "Effect"} {
		out = append(out, Reserved{T + s, "type"})
	}
	out = append(out, Reserved{"registered" + T, "type"})
	for _, s := range []string{"New" + T, "New" + T + "MemoryStore", "New" + T + "Registry", "Replay" + T,
		"Restore" + T, "Resume" + T, "FireDue" + T + "Timers", "FireDue" + T + "TimersWith", "Find" + T + "s", "Find" + T + "es"} {
		out = append(out, Reserved{s, "function"})
	}
	return out
}

// MachineMembers lists the methods and fields of the machine type that do not depend on
// the spec. Spec names add Count<Counter>, Fire<Event> and <Event>Payload methods, and
// n<Counter>, prev<State>, prev<State>Set and payload<Event> fields.
func MachineMembers() []Reserved {
	var out []Reserved
	out = append(out, reserved("method", "Fire", "FireWith", "Can", "CanWith", "Permitted", "PermittedWith", "Start", "StartWith", "Started",
		"State", "Seq", "SetStore", "SetLogger", "Remembered", "History", "Snapshot", "Clock", "SetClock",
		"Timeout", "SetTimeout", "TimeoutLevel", "TimeInState", "TotalTime", "TimeByState", "EnteredAt",
		"CreatedAt", "Expire", "apply", "commit", "counter", "enter", "exit", "fire", "logEntry", "logRefusal",
		"moveClock", "now", "once", "persist", "remember", "step", "take", "changedLimits", "setLimits", "limit",
		"SetHistoryWindow", "SetKeyWindow", "recall", "Policies", "SetPolicies")...)
	out = append(out, reserved("field", "ID", "Context", "Machine", "state", "seq", "hooks", "store", "saved",
		"updatedAt", "lastFrom", "lastEvent", "logger", "watched", "clock", "createdAt", "enteredAt", "timeByState", "timeouts", "history", "keys")...)
	return out
}

// StateMethods lists the methods of State that do not depend on the spec; each group adds
// Is<Group>.
func StateMethods() []Reserved {
	return reserved("method", "IsTerminal", "String", "MarshalText", "UnmarshalText")
}

// PayloadMethods lists the methods of an event's payload struct, whose fields are the
// payload fields.
func PayloadMethods() []Reserved { return reserved("method", "Validate") }

// HookMethods lists the methods of the hooks interface that do not come from guards and
// actions.
func HookMethods() []Reserved { return reserved("method", "Checkpoint") }

// goDecl is one identifier in a scope of the generated code.
type goDecl struct {
	what  string // type, constant, function, variable, method, field
	owner string // what makes it: `state "idle"`; "" for the generated code itself
	// from says how the identifier is made (a pattern such as "State"+state, and the Go
	// names it is made of): two names made the same way from the same Go names collide in
	// goNames already, which reports them.
	from string
	pos  spec.Pos
}

// goScope is one Go scope of the generated code: the package, or the members of a type.
type goScope struct {
	l       *lowerer
	of      string // " of T" for the members of type T, "" for the package
	decls   map[string]goDecl
	refused map[string]bool // owners already reported
	// methods counts the methods that spec names make in the scope (Go limits the methods
	// of a type: MaxSpecMethods); makes says what makes them, for the message.
	methods int
	makes   string
}

func (l *lowerer) newScope(of string, fixed []Reserved) *goScope {
	if of != "" {
		of = " of " + of
	}
	sc := &goScope{l: l, of: of, decls: map[string]goDecl{}, refused: map[string]bool{}}
	for _, r := range fixed {
		sc.decls[r.Name] = goDecl{what: r.What}
	}
	return sc
}

// add declares id, made as from says for owner (written at pos), reporting a collision
// once per owner.
func (sc *goScope) add(id, what, from, owner string, pos spec.Pos) {
	if sc.refused[owner] {
		return
	}
	prev, ok := sc.decls[id]
	if !ok {
		sc.decls[id] = goDecl{what: what, owner: owner, from: from, pos: pos}
		if what == "method" {
			sc.methods++
			if sc.methods == MaxSpecMethods+1 {
				sc.l.ds.Errorf(pos, "%s would generate method %s%s, one more than the %d methods spec names may make on one type (%s): Go allows at most 65535 methods on a type, and the rest are kept for the methods every machine has",
					owner, id, sc.of, MaxSpecMethods, sc.makes)
			}
		}
		return
	}
	if prev.owner == owner || prev.from == from {
		return
	}
	sc.refused[owner] = true
	if prev.owner == "" {
		sc.l.ds.Errorf(pos, "%s would generate %s %s%s, which collides with %s %s the generated code always declares; rename it",
			owner, what, id, sc.of, article(prev.what), prev.what)
		return
	}
	sc.l.ds.Errorf(pos, "%s would generate %s %s%s, which collides with the %s %s made for %s (%d:%d)",
		owner, what, id, sc.of, prev.what, id, prev.owner, prev.pos.Line, prev.pos.Col)
}

func article(what string) string {
	if what == "" {
		return "a"
	}
	switch what[0] {
	case 'a', 'e', 'i', 'o', 'u':
		return "an"
	}
	return "a"
}

// checkGoDecls refuses specs whose names would make the generated code declare one Go
// identifier twice: the machine's name against the generated declarations, and every
// family of names made from spec names against each other.
func (l *lowerer) checkGoDecls() {
	m, f := l.m, l.f
	T := m.GoName
	pkg := l.newScope("", PackageDecls())
	members := l.newScope(T, MachineMembers())
	members.makes = "each event with a payload makes two, each counter one, a configurable one three"
	stateMethods := l.newScope("State", StateMethods())
	stateMethods.makes = "one per group"
	hooks := l.newScope(T+"Hooks", HookMethods())
	hooks.makes = "one per guard and per action, on the hooks interface and the types that implement it"

	if T != "" && names.Exported(T) && f.Machine.Set && !f.Machine.Bad && !f.Broken["machine"] {
		owner := fmt.Sprintf("machine name %q", f.Machine.Value)
		for _, r := range MachineDecls(T) {
			pkg.add(r.Name, r.What, "machine", owner, f.Machine.Pos)
		}
	}
	for _, s := range m.States {
		if s.GoName != "" {
			pkg.add("State"+s.GoName, "constant", "state "+s.GoName, fmt.Sprintf("state %q", s.Name), s.Pos)
		}
	}
	for _, e := range m.Events {
		if e.GoName != "" {
			pkg.add("Event"+e.GoName, "constant", "event "+e.GoName, fmt.Sprintf("event %q", e.Name), e.Pos)
		}
	}
	for _, r := range f.Roles {
		if ro := l.ro[r.Name.Value]; ro != nil && ro.GoName != "" && !r.Name.Bad {
			pkg.add("Role"+ro.GoName, "constant", "role "+ro.GoName, fmt.Sprintf("role %q", ro.Name), r.Name.Pos)
		}
	}
	for _, c := range f.Checkpoints {
		if cp := l.cp[c.Name.Value]; cp != nil && cp.GoName != "" && !c.Name.Bad {
			pkg.add("Checkpoint"+cp.GoName, "constant", "checkpoint "+cp.GoName, fmt.Sprintf("checkpoint %q", cp.Name), c.Name.Pos)
		}
	}
	// Timeout levels: one constant per level name, whether declared for the spec or a state.
	// Within one list goNames reports levels of one Go name.
	levels := map[string]bool{}
	addLevels := func(list int, ls []*spec.Level) {
		for _, lv := range ls {
			if id := names.GoName(lv.Name.Value); id != "" && !lv.Name.Bad && !levels[lv.Name.Value] {
				levels[lv.Name.Value] = true
				pkg.add("Level"+id, "constant", fmt.Sprintf("level %d %s", list, id), fmt.Sprintf("timeout level %q", lv.Name.Value), lv.Name.Pos)
			}
		}
	}
	addLevels(0, f.TimeoutLevels)
	for i, s := range f.States {
		if s.Timeout != nil {
			addLevels(i+1, s.Timeout.Levels)
		}
	}
	// Context fields: their check functions, and for enums a type, its constants, its
	// Parse function and its names.
	// ns is the namespace in which goNames compares the fields' Go names.
	addField := func(fd *ir.Field, owner, ns, check string) {
		if fd.GoName == "" || !names.StartsWithLetter(fd.GoName) {
			return
		}
		if check != "" {
			pkg.add(check+fd.GoName, "function", "check "+ns+" "+fd.GoName, owner, fd.Pos)
		}
		if fd.Type.Kind != ir.Enum || fd.Type.Collection() {
			return
		}
		pkg.add(fd.GoName, "type", "enum "+ns+" "+fd.GoName, owner, fd.Pos)
		pkg.add("Parse"+fd.GoName, "function", "parse "+ns+" "+fd.GoName, owner, fd.Pos)
		pkg.add(names.LowerFirst(fd.GoName)+"Names", "variable", "names "+ns+" "+fd.GoName, owner, fd.Pos)
		for _, v := range fd.Values {
			if id := names.GoName(v); id != "" {
				pkg.add(fd.GoName+id, "constant", "value "+ns+" "+fd.GoName+" "+id, owner, fd.Pos)
			}
		}
	}
	check := ""
	if T != "" {
		check = "check" + T + "Context"
	}
	for _, fd := range m.Fields {
		addField(fd, fmt.Sprintf("context field %q", fd.Name), "context", check)
	}
	// Events with a payload: a payload type, Fire<Event> and <Event>Payload methods and a
	// field of the machine, and the payload's own fields and enums. The event's Go name may
	// start with a digit or a letter without case: its payload type and accessor then take
	// the prefix Event (PayloadName).
	for _, e := range m.Events {
		if len(e.Payload) == 0 || e.GoName == "" {
			continue
		}
		owner := fmt.Sprintf("event %q", e.Name)
		p := PayloadName(e.GoName)
		pkg.add(p, "type", "payload "+e.GoName, owner, e.Pos)
		members.add("Fire"+e.GoName, "method", "fire "+e.GoName, owner, e.Pos)
		members.add(p, "method", "payload "+e.GoName, owner, e.Pos)
		members.add("payload"+e.GoName, "field", "payload field "+e.GoName, owner, e.Pos)
		payload := l.newScope(p, PayloadMethods())
		for _, fd := range e.Payload {
			fowner := fmt.Sprintf("payload field %q of event %q", fd.Name, e.Name)
			if fd.GoName != "" {
				payload.add(fd.GoName, "field", "field "+fd.GoName, fowner, fd.Pos)
			}
			addField(fd, fowner, "payload "+e.GoName, "check"+p)
		}
	}
	for _, c := range m.Counters {
		if c.GoName != "" {
			owner := fmt.Sprintf("counter %q", c.Name)
			members.add("Count"+c.GoName, "method", "count "+c.GoName, owner, c.Pos)
			members.add(c.CountField(), "field", "counter "+c.GoName, owner, c.Pos)
			if c.Configurable && c.Limit > 0 {
				members.add(c.LimitMethod()+c.GoName, "method", "limit "+c.GoName, owner, c.Pos)
				members.add("Set"+c.LimitMethod()+c.GoName, "method", "set limit "+c.GoName, owner, c.Pos)
				members.add(c.LimitField(), "field", "limit field "+c.GoName, owner, c.Pos)
			}
		}
	}
	for _, s := range m.States {
		if s.Remembers && s.GoName != "" {
			owner := fmt.Sprintf("state %q", s.Name)
			st, set := s.MemoryFields()
			members.add(st, "field", "prev "+s.GoName, owner, s.Pos)
			members.add(set, "field", "prev set "+s.GoName, owner, s.Pos)
		}
	}
	for _, g := range m.Groups {
		if g.GoName != "" {
			stateMethods.add("Is"+g.GoName, "method", "group "+g.GoName, fmt.Sprintf("group %q", g.Name), l.groupPos[g])
		}
	}
	if m.Chart != nil {
		for _, n := range m.Chart.Nodes[1:] {
			if n.GoName != "" {
				stateMethods.add("Is"+n.GoName, "method", "state "+n.GoName, fmt.Sprintf("%s state %q", n.Kind, n.Path), n.Pos)
			}
		}
	}
	for _, g := range m.Guards {
		if g.Kind == ir.Hook && g.GoName != "" {
			owner := fmt.Sprintf("guard %q", g.Name)
			hooks.add(g.GoName, "method", "hook "+g.GoName, owner, g.Pos)
			l.vetMethod(g.GoName, T+"Hooks", owner, "can_"+g.Name, g.Pos)
		}
	}
	for _, a := range f.Actions {
		if ac := l.ac[a.Name.Value]; ac != nil && ac.GoName != "" && !a.Name.Bad {
			owner := fmt.Sprintf("action %q", ac.Name)
			hooks.add(ac.GoName, "method", "hook "+ac.GoName, owner, a.Name.Pos)
			l.vetMethod(ac.GoName, T+"Hooks", owner, "do_"+ac.Name, a.Name.Pos)
		}
	}
}

// PayloadName is the Go name of the payload type of an event whose Go name is id, and of
// the machine's method that returns the event's last payload: <id>Payload, with the prefix
// Event when id does not start with an upper-case letter (Event2faSentPayload), since the
// type must be exported (snapshots encode payloads as JSON, which leaves out unexported
// fields) and no Go identifier starts with a digit.
func PayloadName(id string) string { return names.Bare("Event", id) + "Payload" }

// MaxSpecMethods is the number of methods that spec names may make on one generated type.
// Go allows at most 65,535 methods on a type (the compiler stops with "too many methods"
// beyond); the rest is kept for the methods every machine has (its own and those of the
// runtime's fsmrt.Machine, about a hundred) and for the test hooks' helpers.
const MaxSpecMethods = 65000

// vetSignature returns, for a method name that go vet's stdmethods check holds to the
// signature of a standard interface whatever type declares it, that signature and the
// interface; "" for any other name. A hook of that name has the hooks' signature, so the
// generated code (the hooks interface, NopHooks, the tests' hooks) would fail go vet.
// Format, Scan, Seek, ReadFrom and WriteTo are checked only when their first parameter is
// the interface's (fmt.State, fmt.ScanState, int64, io.Reader, io.Writer), and Is, As and
// Unwrap only on error types, so hooks may have those names.
func vetSignature(id string) string {
	switch id {
	case "GobDecode":
		return "GobDecode([]byte) error (gob.GobDecoder)"
	case "GobEncode":
		return "GobEncode() ([]byte, error) (gob.GobEncoder)"
	case "MarshalJSON":
		return "MarshalJSON() ([]byte, error) (json.Marshaler)"
	case "UnmarshalJSON":
		return "UnmarshalJSON([]byte) error (json.Unmarshaler)"
	case "MarshalXML":
		return "MarshalXML(*xml.Encoder, xml.StartElement) error (xml.Marshaler)"
	case "UnmarshalXML":
		return "UnmarshalXML(*xml.Decoder, xml.StartElement) error (xml.Unmarshaler)"
	case "ReadByte":
		return "ReadByte() (byte, error) (io.ByteReader)"
	case "ReadRune":
		return "ReadRune() (rune, int, error) (io.RuneReader)"
	case "UnreadByte":
		return "UnreadByte() error (io.ByteScanner)"
	case "UnreadRune":
		return "UnreadRune() error (io.RuneScanner)"
	case "WriteByte":
		return "WriteByte(byte) error (io.ByteWriter)"
	}
	return ""
}

// vetMethod refuses a hook whose method go vet would hold to a standard signature.
func (l *lowerer) vetMethod(id, of, owner, rename string, pos spec.Pos) {
	if sig := vetSignature(id); sig != "" {
		l.ds.Errorf(pos, "%s would generate method %s of %s, but go vet requires a method of that name to have the signature %s; rename it (to %q, say)",
			owner, id, of, sig, rename)
	}
}
