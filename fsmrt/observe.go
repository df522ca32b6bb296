package fsmrt

import (
	"context"
	"sync/atomic"
	"time"
)

// Observer is told what machines do, for telemetry: an OpenTelemetry adapter (its own
// module, so that a program without it downloads no SDK), a log, a test. A machine has
// none unless one is set (SetObserver, or SetDefaultObserver before it is made): without,
// nothing below runs and Fire allocates nothing more. With one, each call gets the
// machine's spec names only (never a value from the context), and the instance's ID.
type Observer interface {
	// FireStart is told a firing begins; the context it returns (a span's, say) is the one
	// the firing runs with, its hooks and its store included, and the one FireEnd gets.
	FireStart(ctx context.Context, f *FireInfo) context.Context
	// FireEnd is told how the firing ended: f has its outcome filled in.
	FireEnd(ctx context.Context, f *FireInfo)
	// Commit is told a commit to the store ended.
	Commit(ctx context.Context, c *CommitInfo)
	// Timer is told a deadline was handled.
	Timer(ctx context.Context, t *TimerInfo)
	// Effect is told an effect was delivered, or failed.
	Effect(ctx context.Context, e *EffectInfo)
}

// FireInfo describes a firing: the machine (Spec.Name), the instance, the state it was
// fired in and the event; once it ended, the state it left the machine in, whether it was
// accepted, the kind of refusal (RefusalInvalid, ..., "" when accepted; RefusalOther for
// an error of a hook or the store) and the error.
type FireInfo struct {
	Machine, ID, From, Event string
	Start                    time.Time
	To                       string
	Accepted                 bool
	Refusal                  string
	Err                      error
}

// CommitInfo describes a commit: its entry's sequence number, how long the store took, and
// its error (nil; a conflict, errors.Is ErrStoreConflict; a failure).
type CommitInfo struct {
	Machine, ID string
	Seq         int64
	Took        time.Duration
	Err         error
}

// TimerInfo describes a deadline handled: its name ("expiry", "level:warn", "after:e"),
// when it was due, when it was handled (the scheduler's clock) and the error, if any.
type TimerInfo struct {
	Machine, ID, Name string
	Due, Handled      time.Time
	Err               error
}

// EffectInfo describes an effect's delivery: the effect, its attempt, and the error
// (nil: delivered).
type EffectInfo struct {
	Machine, ID, Effect string
	Seq                 int64
	Attempt             int
	Err                 error
}

// defaultObserver is what SetDefaultObserver set.
var defaultObserver atomic.Pointer[Observer]

// SetDefaultObserver makes o the observer of every machine made from now on in this
// process (Init): the machines a scheduler or a registry loads included. Nil stops it.
func SetDefaultObserver(o Observer) {
	if o == nil {
		defaultObserver.Store(nil)
		return
	}
	defaultObserver.Store(&o)
}

// SetObserver makes o the observer of m (nil: none).
func SetObserver[S StateType, E, R EnumType, C, X any](m *Machine[S, E, R, C, X], o Observer) {
	m.observer = o
	m.setSlow()
}

// observed fires e as fire does, telling m's observer.
func (m *Machine[S, E, R, C, X]) observed(ctx context.Context, e E, in *Input[R]) (S, error) {
	f := &FireInfo{Machine: m.def.storeName, ID: m.ID, From: m.state.String(), Event: e.String(), Start: time.Now()}
	ctx = m.observer.FireStart(ctx, f)
	seq := m.seq
	m.observing = true
	to, err := m.fire(ctx, e, in)
	m.observing = false
	f.To, f.Err = to.String(), err
	switch {
	case err == nil:
		f.Accepted = true
	case m.seq == seq:
		f.Refusal = refusalKind[S, E, R](err)
	default:
		f.Accepted, f.Refusal = true, RefusalOther
	}
	m.observer.FireEnd(ctx, f)
	return to, err
}

// observeCommit tells m's observer of a commit that took since start.
func (m *Machine[S, E, R, C, X]) observeCommit(ctx context.Context, start time.Time, err error) {
	m.observer.Commit(ctx, &CommitInfo{Machine: m.def.storeName, ID: m.ID, Seq: m.seq, Took: time.Since(start), Err: err})
}
