package fsmrt

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// IndexReader is implemented by a Store that returns, for one instance, the rows it keeps
// beside the log for Find and the timers: the instance's row (its state, version and time
// of its last entry), its counters and its deadlines, handled or not, all read at one point
// in time. Find answers from these rows and a scheduler claims from them; a replay answers
// from the log. Audit compares the two. It is a separate interface so that a Store written
// before it keeps compiling: test for it with a type assertion. MemoryStore and the SQLite
// and PostgreSQL stores implement it, and fsmrt/storetest checks it of every store that
// does.
type IndexReader interface {
	// IndexRows returns the rows of instance (machine, id); an instance never committed
	// has none (a zero Instance).
	IndexRows(ctx context.Context, machine, id string) (IndexRows, error)
}

// IndexRows are the rows a store keeps of one instance beside its log (IndexReader).
type IndexRows struct {
	// Instance is the instance's row, as Find returns it.
	Instance Instance
	// Counters are its counters that are not zero, in any order.
	Counters []CounterValue
	// Deadlines are its deadlines, handled or not, in any order.
	Deadlines []IndexDeadline
}

// IndexDeadline is a deadline as a store keeps it: Handled says a scheduler handled it.
type IndexDeadline struct {
	Deadline
	Handled bool
}

// ErrIndexDisagrees says a store's rows beside an instance's log (its state and version,
// counters, deadlines) say otherwise than the log: they were edited, or lost, behind the
// store's back.
var ErrIndexDisagrees = errors.New("fsm: the store's rows disagree with the log")

// AuditError is Audit's finding: each of Disagreements says what a row holds and what the
// log says it should. errors.Is(err, ErrIndexDisagrees) holds.
type AuditError struct {
	Machine, ID string
	// Version is the instance's version (the sequence number of its last entry) audited.
	Version       int64
	Disagreements []string
}

func (e *AuditError) Error() string {
	return fmt.Sprintf("%s %.64q at version %d: the store's rows disagree with the log: %s", e.Machine, e.ID, e.Version, strings.Join(e.Disagreements, "; "))
}

// Is makes errors.Is(err, ErrIndexDisagrees) hold.
func (e *AuditError) Is(target error) bool { return target == ErrIndexDisagrees }

// auditTries bounds how many times Audit reads an instance that keeps moving.
const auditTries = 5

// Audit checks what store keeps of instance id beside its log against the machine its log
// replays to: the instance's row (state, version, time of its last entry), its counters
// and its deadlines, those Find and the timers read. It returns nil when they agree, an
// *AuditError (errors.Is ErrIndexDisagrees) listing every disagreement, or the error of the
// replay itself (a *LogError for a log that cannot be replayed, or whose entries' columns
// disagree with their JSON; ErrNotFound for an ID the store never saw). A store that is not
// an IndexReader is refused with an error saying so.
//
// newMachine returns a new machine of the generated type (for the order example,
// func() *fsmrt.Machine[...] { return &order.NewOrder(nil).Machine }): Audit replays one
// per try. The rows are read before and after the replay; when the instance moved in
// between (another process committed), Audit tries again, and returns a ConflictError
// when it kept moving. It changes nothing: an operator decides what to repair.
func Audit[S StateType, E, R EnumType, C, X any](ctx context.Context, store Store, id string, newMachine func() *Machine[S, E, R, C, X]) error {
	ir, ok := store.(IndexReader)
	if !ok {
		return fmt.Errorf("audit: the store (%T) does not read its rows (fsmrt.IndexReader)", store)
	}
	var m *Machine[S, E, R, C, X]
	var before IndexRows
	for range auditTries {
		m = newMachine()
		name := m.def.storeName
		var err error
		if before, err = ir.IndexRows(ctx, name, id); err != nil {
			return err
		}
		if err := Replay(ctx, m, store, id, nil); err != nil {
			return err
		}
		after, err := ir.IndexRows(ctx, name, id)
		if err != nil {
			return err
		}
		if before.Instance.Version == after.Instance.Version && after.Instance.Version == m.seq {
			return m.audit(&after)
		}
	}
	return &ConflictError{Machine: m.def.storeName, ID: id, Version: m.seq, Stored: before.Instance.Version}
}

// audit compares rows with the machine, replayed from the log at the rows' version.
func (m *Machine[S, E, R, C, X]) audit(rows *IndexRows) error {
	var out []string
	in := rows.Instance
	if in.State != m.state.String() {
		out = append(out, fmt.Sprintf("the instance's state is %.64q, the log's %s", in.State, m.state))
	}
	if !in.UpdatedAt.IsZero() && absDuration(in.UpdatedAt.Sub(m.updatedAt)) >= time.Microsecond {
		out = append(out, fmt.Sprintf("its last entry was at %v, the log says %v", in.UpdatedAt.UTC(), m.updatedAt.UTC()))
	}
	out = append(out, auditCounters(rows.Counters, m.counterValues())...)
	if m.def.Timing {
		out = append(out, auditDeadlines(rows.Deadlines, m.deadlines(m.state, m.since))...)
	}
	if len(out) == 0 {
		return nil
	}
	return &AuditError{Machine: m.def.storeName, ID: m.ID, Version: m.seq, Disagreements: out}
}

// auditCounters compares the counters a store keeps with the machine's (want), each
// counter by name and state.
func auditCounters(got, want []CounterValue) []string {
	type key struct{ name, state string }
	name := func(k key) string {
		if k.state == "" {
			return fmt.Sprintf("counter %.64q", k.name)
		}
		return fmt.Sprintf("counter %.64q in %.64q", k.name, k.state)
	}
	stored := map[key]int{}
	for _, v := range got {
		stored[key{v.Name, v.State}] += v.Value
	}
	var out []string
	for _, v := range want {
		k := key{v.Name, v.State}
		if n, ok := stored[k]; !ok || n != v.Value {
			out = append(out, fmt.Sprintf("%s is %d, the log says %d", name(k), n, v.Value))
		}
		delete(stored, k)
	}
	rest := make([]key, 0, len(stored))
	for k := range stored {
		rest = append(rest, k)
	}
	slices.SortFunc(rest, func(a, b key) int { return cmp.Or(cmp.Compare(a.name, b.name), cmp.Compare(a.state, b.state)) })
	for _, k := range rest {
		out = append(out, fmt.Sprintf("%s is %d, the log says 0", name(k), stored[k]))
	}
	return out
}

// auditDeadlines compares the deadlines a store keeps with those the machine armed when it
// entered its state (want), by name: the same names, each at the same time (stores keep
// times to the microsecond), expiring with the same event.
func auditDeadlines(got []IndexDeadline, want []Deadline) []string {
	stored := make(map[string]IndexDeadline, len(got))
	for _, d := range got {
		stored[d.Name] = d
	}
	var out []string
	for _, w := range want {
		d, ok := stored[w.Name]
		delete(stored, w.Name)
		switch {
		case !ok:
			out = append(out, fmt.Sprintf("deadline %s is missing, the log arms it at %v", w.Name, w.At.UTC()))
		case !d.At.Truncate(time.Microsecond).Equal(w.At.Truncate(time.Microsecond)):
			out = append(out, fmt.Sprintf("deadline %s falls due at %v, the log says %v", w.Name, d.At.UTC(), w.At.UTC()))
		case d.Event != w.Event:
			out = append(out, fmt.Sprintf("deadline %s fires %.64q, the log says %q", w.Name, d.Event, w.Event))
		}
	}
	rest := make([]string, 0, len(stored))
	for name := range stored {
		rest = append(rest, name)
	}
	slices.Sort(rest)
	for _, name := range rest {
		out = append(out, fmt.Sprintf("deadline %.64q (at %v) is none the log arms", name, stored[name].At.UTC()))
	}
	return out
}

var _ IndexReader = (*MemoryStore)(nil)

// IndexRows returns the rows of instance (machine, id) (IndexReader.IndexRows).
func (s *MemoryStore) IndexRows(ctx context.Context, machine, id string) (IndexRows, error) {
	if err := ctx.Err(); err != nil {
		return IndexRows{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	in, ok := s.instances[[2]string{machine, id}]
	if !ok || len(in.log) == 0 {
		return IndexRows{}, nil
	}
	rows := IndexRows{
		Instance: Instance{ID: id, State: in.state, Version: int64(len(in.log)), UpdatedAt: in.log[len(in.log)-1].At},
		Counters: slices.Clone(in.counters),
	}
	for _, d := range in.deadlines {
		rows.Deadlines = append(rows.Deadlines, IndexDeadline{Deadline: d.Deadline, Handled: d.handled})
	}
	return rows, nil
}
