package fsmrt

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"time"
)

// Effects are the actions a spec marks `effect: true`: what must happen once per committed
// transition (send the message, call the tool), not while the transition is being decided.
// Guards and the other actions run before the commit and may only compute; effects run
// after it:
//   - a machine without a store runs them right after the transition, in order, and
//     returns the first failure as an EffectError (the transition has happened);
//   - a machine with a store writes them to the store's outbox in the transition's commit,
//     leased to itself, and delivers them once the commit succeeded; an effect that fails,
//     or that a crash left undelivered, is claimed again when its lease runs out, by
//     DeliverEffects in this process or any other. Delivery is at least once: each call
//     carries a Key the receiver deduplicates on.

// EffectCall is what an effect's hook receives: the effect and the committed transition it
// belongs to, with the machine's context as the transition left it.
type EffectCall[S StateType, E EnumType, C any] struct {
	// Name is the effect's action, by spec name.
	Name string `json:"name"`
	// Key is unique per effect of a committed transition: the firing's idempotency key (or,
	// without one, the machine's name, ID and sequence number), the effect's position and
	// its name.
	Key string `json:"key"`
	// ID and Seq name the machine and its transition.
	ID  string `json:"id"`
	Seq int64  `json:"seq"`
	// Event, From and To are the transition; At is when it happened.
	Event  E         `json:"event"`
	From   S         `json:"from"`
	To     S         `json:"to"`
	At     time.Time `json:"at"`
	Actor  string    `json:"actor,omitempty"`
	Reason string    `json:"reason,omitempty"`
	// Context is the machine's context after the transition.
	Context C `json:"context"`
	// Attempt counts the deliveries, this one included (1 the first time).
	Attempt int `json:"-"`
}

// Effector delivers effect a, for a machine whose spec has effects. An error means not
// delivered: the call is made again later.
type Effector[S StateType, E EnumType, C any] interface {
	Effect(ctx context.Context, a int, call *EffectCall[S, E, C]) error
}

// ErrEffect is matched by every EffectError.
var ErrEffect = errors.New("fsm: effect failed")

// EffectError says an effect of a transition that has happened failed (a machine without a
// store: nothing will call it again), or that a delivered effect came back with an error.
type EffectError struct {
	Effect string
	Seq    int64
	Err    error
}

// Error describes the failure.
func (e *EffectError) Error() string {
	return fmt.Sprintf("fsm: effect %s of seq %d: %v", e.Effect, e.Seq, e.Err)
}

// Unwrap returns the effect's error.
func (e *EffectError) Unwrap() error { return e.Err }

// Is makes EffectError match ErrEffect.
func (e *EffectError) Is(target error) bool { return target == ErrEffect }

// DefaultLease is how long an effect or a deadline claimed stays with its claimer before
// others may claim it.
const DefaultLease = time.Minute

// processOwner names this process as a claimer: host, process id and start time.
var processOwner = func() string {
	host, _ := os.Hostname()
	return host + "/" + strconv.Itoa(os.Getpid()) + "/" + strconv.FormatInt(time.Now().UnixNano(), 36)
}()

// SetOwner names the machine as a claimer of effects and deadlines (this process's host,
// pid and start time unless told otherwise) and sets how long what it claims stays its own
// (DefaultLease when lease is 0).
func (m *Machine[S, E, R, C, X]) SetOwner(owner string, lease time.Duration) {
	m.owner, m.lease = owner, lease
}

// claimer returns the machine's owner name and lease.
func (m *Machine[S, E, R, C, X]) claimer() (string, time.Duration) {
	owner, lease := m.owner, m.lease
	if owner == "" {
		owner = processOwner
	}
	if lease <= 0 {
		lease = DefaultLease
	}
	return owner, lease
}

// act runs action a of the step st, or keeps it for after the commit (m.pending) when it is
// an effect. An action that fails returns an ActionError, its State and Event to be set by
// the caller (they are the event's, not the microstep's).
func (m *Machine[S, E, R, C, X]) act(ctx context.Context, a int32, st *Step[S, E, R]) error {
	if ef := m.def.Effects; ef != nil && ef[a] != "" {
		m.pending = append(m.pending, a)
		return nil
	}
	if err := m.actions.Act(ctx, int(a), *st); err != nil {
		name := ""
		if int(a) < len(m.def.MayFail) {
			name = m.def.MayFail[a]
		}
		return &ActionError[S, E]{Action: name, Err: err, spec: m.def.Spec}
	}
	return nil
}

// acts runs actions as in order, up to the first that fails.
func (m *Machine[S, E, R, C, X]) acts(ctx context.Context, as []int32, st *Step[S, E, R]) error {
	for _, a := range as {
		if err := m.act(ctx, a, st); err != nil {
			return err
		}
	}
	return nil
}

// calls returns the calls of the effects kept during the transition just taken.
func (m *Machine[S, E, R, C, X]) calls(st Step[S, E, R], in *Input[R], at time.Time) []EffectCall[S, E, C] {
	d := m.def
	// Idempotency keys are unique per machine only: the machine's name and ID come first.
	key := d.storeName + "/" + m.ID + "/"
	if in.Key != "" {
		key += "key:" + in.Key
	} else {
		key += strconv.FormatInt(m.seq, 10)
	}
	out := make([]EffectCall[S, E, C], len(m.pending))
	for i, a := range m.pending {
		name := d.Effects[a]
		out[i] = EffectCall[S, E, C]{
			Name: name, Key: key + "/" + strconv.Itoa(i) + "-" + name, ID: m.ID, Seq: m.seq,
			Event: st.Event, From: st.From, To: st.To, At: at, Actor: in.Actor, Reason: in.Reason,
			Context: m.Context, Attempt: 1,
		}
	}
	return out
}

// runEffects runs the effects of a transition taken without a store: all of them, in
// order; the first failure is returned.
func (m *Machine[S, E, R, C, X]) runEffects(ctx context.Context, st Step[S, E, R], in *Input[R]) error {
	var first error
	for i, call := range m.calls(st, in, m.now(in)) {
		if err := m.effector.Effect(ctx, int(m.pending[i]), &call); err != nil && first == nil {
			first = &EffectError{Effect: call.Name, Seq: m.seq, Err: err}
		}
	}
	return first
}

// effects returns the effects of the transition being committed, for the outbox, and
// their calls.
func (m *Machine[S, E, R, C, X]) effects(st Step[S, E, R], in *Input[R], at time.Time) ([]Effect, []EffectCall[S, E, C], error) {
	calls := m.calls(st, in, at)
	out := make([]Effect, len(calls))
	for i := range calls {
		data, err := json.Marshal(&calls[i])
		if err != nil {
			return nil, nil, err
		}
		out[i] = Effect{Name: calls[i].Name, Key: calls[i].Key, Data: data}
	}
	return out, calls, nil
}

// deliver delivers the effects of a transition just committed, leased to this machine, and
// records those delivered; what fails stays in the outbox for DeliverEffects to retry.
func (m *Machine[S, E, R, C, X]) deliver(ctx context.Context, calls []EffectCall[S, E, C], actions []int32) {
	d := m.def
	var done []EffectID
	for i := range calls {
		err := m.effector.Effect(ctx, int(actions[i]), &calls[i])
		if m.observer != nil {
			m.observer.Effect(ctx, &EffectInfo{Machine: d.storeName, ID: m.ID, Effect: calls[i].Name, Seq: calls[i].Seq, Attempt: calls[i].Attempt, Err: err})
		}
		id := EffectID{Machine: d.storeName, ID: m.ID, Seq: calls[i].Seq, Index: i}
		if err != nil {
			m.effectFailed(ctx, id, &calls[i], err)
			continue
		}
		done = append(done, id)
	}
	if len(done) > 0 {
		if err := m.store.CompleteEffects(ctx, done, m.clockNow()); err != nil && m.logger != nil {
			m.logger.LogAttrs(ctx, slog.LevelWarn, "effects delivered, not recorded", slog.String("machine", d.Spec.Machine),
				slog.String("id", m.ID), slog.Int64("seq", calls[0].Seq), slog.String("error", err.Error()))
		}
	}
}

// effectFailed logs an effect that failed, and records its error in a store that keeps
// them (EffectErrorRecorder); the outbox retries it.
func (m *Machine[S, E, R, C, X]) effectFailed(ctx context.Context, id EffectID, call *EffectCall[S, E, C], err error) {
	m.recordEffectError(ctx, id, err)
	if m.logger != nil {
		m.logger.LogAttrs(ctx, slog.LevelWarn, "effect not delivered", slog.String("machine", m.def.Spec.Machine),
			slog.String("id", call.ID), slog.Int64("seq", call.Seq), slog.String("effect", call.Name),
			slog.Int("attempt", call.Attempt), slog.String("error", err.Error()))
	}
}

// clockNow is the machine's clock's time, or the system's for a machine that keeps none.
func (m *Machine[S, E, R, C, X]) clockNow() time.Time {
	if m.clock != nil {
		return m.clock.Now()
	}
	return time.Now()
}

// DeliverEffects claims from the machine's store up to limit effects of machines of its
// type that are due for delivery (never delivered, or whose lease ran out: a failed or
// crashed delivery), delivers them through the machine's hooks and records those
// delivered. Any number of processes may run it at once: each effect goes to one of them
// at a time. m is the carrier of the hooks, the store, the clock and the claimer: it
// claims at its clock's now (SetClock; the system clock for a machine that keeps no
// time), as its owner, for its lease (SetOwner), and records the deliveries at its clock's
// time; its state, context and ID are not read. A lease is measured on the clock it was
// taken by: give every process that shares the store the same clock.
//
// It returns how many it delivered and, when a hook failed, an EffectError for the first
// failure (errors.Is ErrEffect), the other effects of the batch delivered all the same: the
// failed one stays in the outbox, leased, and is claimed again when its lease runs out. So
// a pass over the outbox goes on past an EffectError and stops at a batch that delivers
// nothing and fails nothing; any other error is the store's:
//
//	for {
//		n, err := m.DeliverEffects(ctx, 100)
//		if err != nil && !errors.Is(err, fsmrt.ErrEffect) {
//			return err // the store failed
//		}
//		if n == 0 && err == nil {
//			return nil // nothing left that is due
//		}
//	}
//
// It fails with ErrNoStore without a store.
func (m *Machine[S, E, R, C, X]) DeliverEffects(ctx context.Context, limit int) (int, error) {
	d := m.def
	if m.store == nil {
		return 0, ErrNoStore
	}
	if d.Effects == nil {
		return 0, nil
	}
	owner, lease := m.claimer()
	pending, err := m.store.ClaimEffects(ctx, d.storeName, owner, m.clockNow(), lease, limit)
	if err != nil {
		return 0, err
	}
	var done []EffectID
	var first error
	for _, p := range pending {
		var call EffectCall[S, E, C]
		a, ok := d.effectIndex[p.Name]
		err := json.Unmarshal(p.Data, &call)
		if err == nil && !ok {
			err = fmt.Errorf("%s is not an effect of %s", p.Name, d.storeName)
		}
		if err == nil {
			call.Attempt = p.Attempts
			err = m.effector.Effect(ctx, int(a), &call)
		}
		if err != nil {
			m.effectFailed(ctx, p.EffectID, &call, err)
			if first == nil {
				first = &EffectError{Effect: p.Name, Seq: p.Seq, Err: err}
			}
			continue
		}
		done = append(done, p.EffectID)
	}
	if len(done) > 0 {
		if err := m.store.CompleteEffects(ctx, done, m.clockNow()); err != nil {
			return 0, err
		}
	}
	return len(done), first
}
