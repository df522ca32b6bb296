package scaleout

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/fsmgen/fsmgen/examples/scaleout/order"
	"github.com/fsmgen/fsmgen/fsmrt"
)

// Report is what Check verified of a run, and what it found wrong.
type Report struct {
	Orders, Entries int
	// Fresh is how many planned events had a key of their own: each must be in the log
	// exactly once. Duplicates and KeyConflicts are the planned events that reuse a key.
	Fresh, Duplicates, KeyConflicts int
	// Stays is how many holds were released by their timeout, Levels how many timeout
	// levels were recorded.
	Stays, Levels int
	// Effects is how many effects the outbox holds; Redelivered how many of them were
	// delivered more than once (allowed after a crash or a lease that ran out).
	Effects, Redelivered int
	// Problems lists what is wrong (at most maxProblems; Dropped counts the others).
	Problems []string
	Dropped  int
}

// maxProblems bounds the problems a Report lists.
const maxProblems = 40

// String summarises the report.
func (r *Report) String() string {
	return fmt.Sprintf("%d orders, %d log entries: %d fresh events each applied once, %d duplicates and %d key conflicts never applied; "+
		"%d holds released by their timeout, %d levels recorded; %d effects delivered (%d more than once); %d problems",
		r.Orders, r.Entries, r.Fresh, r.Duplicates, r.KeyConflicts, r.Stays, r.Levels, r.Effects, r.Redelivered, len(r.Problems)+r.Dropped)
}

// problem records a problem.
func (r *Report) problem(format string, args ...any) {
	if len(r.Problems) >= maxProblems {
		r.Dropped++
		return
	}
	r.Problems = append(r.Problems, fmt.Sprintf(format, args...))
}

// The timeout of held and its levels, as order.fsm.yaml declares them: a level is recorded
// as an entry of kind TIMEOUT_<LEVEL>, at its percentage of the timeout.
var (
	heldTimeout  = order.NewOrder(order.OrderNopHooks{}).Timeout(order.StateHeld)
	levelPercent = map[string]int{fsmrt.KindTimeoutPrefix + "REMIND": 25, fsmrt.KindTimeoutPrefix + "LATE": 60}
)

// scheduler is the actor of the transitions FireDue fires.
const scheduler = "scheduler"

// Check verifies, once a run has drained, every invariant of the proof, reading the store
// (Find, Load, Log and Replay) and the tables of the outbox, the deadlines and the
// deliveries (see the package documentation for the list). flaky says the workers' hooks
// were (see Flaky).
func Check(ctx context.Context, db *DB, p Plan, flaky bool) (*Report, error) {
	c := &checker{db: db, p: p, flaky: flaky, rep: &Report{}, effects: map[fsmrt.EffectID]string{}, found: map[string][]string{}}
	all, err := order.FindOrders(ctx, db.Store, fsmrt.Query{})
	if err != nil {
		return nil, err
	}
	if len(all) != p.Instances {
		c.rep.problem("the store has %d orders, the plan %d", len(all), p.Instances)
	}
	for _, inst := range all {
		i, err := strconv.Atoi(strings.TrimPrefix(inst.ID, "order-"))
		if err != nil || p.ID(i) != inst.ID || i >= p.Instances {
			c.rep.problem("the store has an order %q the plan does not", inst.ID)
			continue
		}
		if err := c.order(ctx, i, inst); err != nil {
			return nil, fmt.Errorf("%s: %w", inst.ID, err)
		}
	}
	for _, step := range []func(context.Context) error{c.outbox, c.deadlines, c.find} {
		if err := step(ctx); err != nil {
			return nil, err
		}
	}
	return c.rep, nil
}

// checker holds what Check gathers over the orders.
type checker struct {
	db    *DB
	p     Plan
	flaky bool
	rep   *Report
	// effects are the effects the logs call for, with their keys.
	effects map[fsmrt.EffectID]string
	// found are the IDs each Find query of c.find must return, by query name.
	found map[string][]string
}

// order checks order i, as Find returned it.
func (c *checker) order(ctx context.Context, i int, inst fsmrt.Instance) error {
	id := inst.ID
	loaded, err := c.db.Store.Load(ctx, machineName, id)
	if err != nil {
		return err
	}
	raw, err := c.db.Store.Log(ctx, machineName, id, 0)
	if err != nil {
		return err
	}
	reader := order.NewOrder(order.OrderNopHooks{})
	reader.ID = id
	reader.SetStore(c.db.Store)
	log, err := reader.EventLog(ctx, 0)
	if err != nil {
		return err
	}
	c.rep.Orders++
	c.rep.Entries += len(log)
	c.sequence(id, inst, loaded, raw)
	c.keys(i, log)
	c.stays(id, log)
	c.expectEffects(id, log)
	return c.replays(ctx, id, loaded, log)
}

// sequence checks that the log is numbered 1, 2, ... up to the version, and that Find
// and Load agree with it.
func (c *checker) sequence(id string, inst fsmrt.Instance, loaded fsmrt.Loaded, raw []fsmrt.Entry) {
	for k, e := range raw {
		if e.Seq != int64(k+1) {
			c.rep.problem("%s: entry %d has seq %d", id, k+1, e.Seq)
			return
		}
	}
	n := int64(len(raw))
	switch {
	case n == 0:
		c.rep.problem("%s: empty log", id)
	case loaded.Version != n || inst.Version != n:
		c.rep.problem("%s: version %d (Find: %d), log of %d entries", id, loaded.Version, inst.Version, n)
	case inst.State != loaded.State:
		c.rep.problem("%s: Find says %s, Load %s", id, inst.State, loaded.State)
	case !inst.UpdatedAt.Equal(raw[n-1].At):
		c.rep.problem("%s: Find's time %v is not that of the last entry, %v", id, inst.UpdatedAt, raw[n-1].At)
	}
}

// keys checks the log against the plan of order i: each fresh event's key once, with its
// event; no other keyed entry; entries without a key only the creation, the timeout
// levels and the releases the scheduler fired.
func (c *checker) keys(i int, log []order.OrderLogEntry) {
	id, fresh := c.p.ID(i), c.p.Fresh(i)
	for _, it := range c.p.Items(i) {
		switch it.Kind {
		case Duplicate:
			c.rep.Duplicates++
		case KeyConflict:
			c.rep.KeyConflicts++
		}
	}
	c.rep.Fresh += len(fresh)
	seen := map[string]bool{}
	for _, e := range log {
		if e.Key == "" {
			c.unkeyed(id, e)
			continue
		}
		want, ok := fresh[e.Key]
		switch {
		case !ok:
			c.rep.problem("%s: entry %d has key %q, which no fresh event of the plan has", id, e.Seq, e.Key)
		case e.Kind != fsmrt.KindTransition || e.Event != want:
			c.rep.problem("%s: entry %d of key %q is %s %s, the plan's event is %s", id, e.Seq, e.Key, e.Kind, e.Event, want)
		case seen[e.Key]:
			c.rep.problem("%s: key %q applied twice (again at %d)", id, e.Key, e.Seq)
		}
		seen[e.Key] = true
	}
	for _, key := range slices.Sorted(maps.Keys(fresh)) {
		if !seen[key] {
			c.rep.problem("%s: the event of key %q (%s) was lost", id, key, fresh[key])
		}
	}
}

// unkeyed checks an entry without a key: the creation, a level or a release.
func (c *checker) unkeyed(id string, e order.OrderLogEntry) {
	switch {
	case e.Kind == fsmrt.KindCreated && e.Seq == 1:
	case levelPercent[e.Kind] > 0:
	case e.Kind == fsmrt.KindTransition && e.Event == order.EventRelease && e.Actor == scheduler:
	default:
		c.rep.problem("%s: entry %d (%s %s by %q) has no key", id, e.Seq, e.Kind, e.Event, e.Actor)
	}
}

// stay is a stay of an order in held.
type stay struct {
	entered time.Time
	from    order.State
	levels  map[string]int
}

// stays checks the timers of the order: each stay in held ends with one release fired by
// the scheduler once the timeout has passed, back to where the order came from, after one
// entry of each level, each at or after its deadline; nothing else of the timers.
func (c *checker) stays(id string, log []order.OrderLogEntry) {
	var in *stay
	for _, e := range log {
		switch {
		case strings.HasPrefix(e.Kind, fsmrt.KindTimeoutPrefix):
			c.level(id, in, e)
		case e.Kind != fsmrt.KindTransition:
		case e.From != order.StateHeld && e.To == order.StateHeld:
			in = &stay{entered: e.Timestamp, from: e.From, levels: map[string]int{}}
		case e.From == order.StateHeld && e.To != order.StateHeld:
			c.release(id, in, e)
			in = nil
		case e.Event == order.EventRelease:
			c.rep.problem("%s: entry %d releases from %s", id, e.Seq, e.From)
		}
	}
	if in != nil {
		c.rep.problem("%s: still held at the end (since %v)", id, in.entered)
	}
}

// level checks a timeout level's entry e, in stay in.
func (c *checker) level(id string, in *stay, e order.OrderLogEntry) {
	pct, ok := levelPercent[e.Kind]
	if !ok || in == nil || e.From != order.StateHeld || e.To != order.StateHeld {
		c.rep.problem("%s: entry %d is %s in %s", id, e.Seq, e.Kind, e.From)
		return
	}
	due := in.entered.Add(heldTimeout * time.Duration(pct) / 100)
	if got := e.Metadata["deadline"]; got != due.UTC().Format(time.RFC3339Nano) {
		c.rep.problem("%s: %s at %d for the deadline %s, due at %v", id, e.Kind, e.Seq, got, due)
	}
	if e.Timestamp.Before(due) {
		c.rep.problem("%s: %s at %d fired at %v, before its deadline %v", id, e.Kind, e.Seq, e.Timestamp, due)
	}
	in.levels[e.Kind]++
	c.rep.Levels++
}

// release checks the entry e that ends stay in.
func (c *checker) release(id string, in *stay, e order.OrderLogEntry) {
	expiry := in.entered.Add(heldTimeout)
	switch {
	case e.Event != order.EventRelease || e.Actor != scheduler:
		c.rep.problem("%s: entry %d leaves held on %s by %q", id, e.Seq, e.Event, e.Actor)
	case e.To != in.from:
		c.rep.problem("%s: entry %d releases to %s, held from %s", id, e.Seq, e.To, in.from)
	case e.Timestamp.Before(expiry):
		c.rep.problem("%s: entry %d released at %v, before the expiry %v", id, e.Seq, e.Timestamp, expiry)
	}
	for _, kind := range slices.Sorted(maps.Keys(levelPercent)) {
		if n := in.levels[kind]; n != 1 {
			c.rep.problem("%s: the hold released at %d recorded %s %d times", id, e.Seq, kind, n)
		}
	}
	c.rep.Stays++
}

// expectEffects notes the effects the log calls for: notify on shipping and on release,
// keyed by the order and the firing's key (or the entry, for the scheduler's firings).
func (c *checker) expectEffects(id string, log []order.OrderLogEntry) {
	for _, e := range log {
		ships := e.Event == order.EventAdvance && e.From == order.StateCheckout && e.To == order.StateShipped
		if e.Kind != fsmrt.KindTransition || !ships && e.Event != order.EventRelease {
			continue
		}
		// The machine's name and ID, then the firing's key or the entry's sequence number.
		base := machineName + "/" + id + "/" + strconv.FormatInt(e.Seq, 10)
		if e.Key != "" {
			base = machineName + "/" + id + "/key:" + e.Key
		}
		c.effects[fsmrt.EffectID{Machine: machineName, ID: id, Seq: e.Seq}] = base + "/0-notify"
	}
}

// replays checks the order's replays against each other and the store: the whole log
// replayed, the store's Replay (snapshot and later entries), the stored snapshot against
// the log replayed up to it, and the counters and context against what the log says.
func (c *checker) replays(ctx context.Context, id string, loaded fsmrt.Loaded, log []order.OrderLogEntry) error {
	full, err := replayLog(ctx, c.db.Store, id, 0)
	if err != nil {
		return fmt.Errorf("replaying the log: %w", err)
	}
	via, err := order.ReplayOrder(ctx, c.db.Store, id, order.OrderNopHooks{})
	if err != nil {
		return fmt.Errorf("replaying from the snapshot: %w", err)
	}
	if a, b := snapshotJSON(full), snapshotJSON(via); !bytes.Equal(a, b) {
		c.rep.problem("%s: the log replays to\n%s\nthe snapshot and the entries after it to\n%s", id, a, b)
	}
	if full.State().String() != loaded.State {
		c.rep.problem("%s: the log replays to %s, the store says %s", id, full.State(), loaded.State)
	}
	if err := c.snapshot(ctx, id, loaded, log); err != nil {
		return err
	}
	c.counters(id, full, log)
	return nil
}

// snapshot checks the stored snapshot: taken at the last transition, and equal, byte for
// byte, to the snapshot of the log replayed up to it.
func (c *checker) snapshot(ctx context.Context, id string, loaded fsmrt.Loaded, log []order.OrderLogEntry) error {
	var last int64
	for _, e := range log {
		if e.Kind == fsmrt.KindTransition || e.Kind == fsmrt.KindCreated {
			last = e.Seq
		}
	}
	if loaded.Snapshot == nil || loaded.SnapshotSeq != last {
		c.rep.problem("%s: snapshot at %d (present: %v), the last transition is %d", id, loaded.SnapshotSeq, loaded.Snapshot != nil, last)
		return nil
	}
	upTo, err := replayLog(ctx, c.db.Store, id, last)
	if err != nil {
		return fmt.Errorf("replaying the log up to %d: %w", last, err)
	}
	if want := snapshotJSON(upTo); !bytes.Equal(loaded.Snapshot, want) {
		c.rep.problem("%s: the stored snapshot\n%s\nthe log replayed up to %d\n%s", id, loaded.Snapshot, last, want)
	}
	return nil
}

// counters checks the replayed counters and context against the log: the items and the
// adds of each state are the adds, the holds the holds that entered held.
func (c *checker) counters(id string, m *order.Order, log []order.OrderLogEntry) {
	adds := map[order.State]int{}
	holds, items := 0, 0
	for _, e := range log {
		switch {
		case e.Kind != fsmrt.KindTransition:
		case e.Event == order.EventAdd:
			adds[e.From]++
			items++
		case e.Event == order.EventHold && e.From != order.StateHeld:
			holds++
		}
	}
	most := 0
	for _, s := range order.States() {
		if m.CountAdds(s) != adds[s] {
			c.rep.problem("%s: %d adds in %s, the log has %d", id, m.CountAdds(s), s, adds[s])
		}
		most = max(most, adds[s])
	}
	if m.CountHolds() != holds || m.Context.Items != items {
		c.rep.problem("%s: %d holds and %d items, the log has %d and %d", id, m.CountHolds(), m.Context.Items, holds, items)
	}
	if holds >= 1 {
		c.found["holds"] = append(c.found["holds"], id)
	}
	if most >= 3 {
		c.found["adds"] = append(c.found["adds"], id)
	}
}

// outbox checks the outbox against the effects the logs call for, and the deliveries
// against the outbox: every effect once in the outbox, with its key, recorded delivered;
// delivered under its key at least once and at most as many times as it was tried; no
// delivery of anything else.
func (c *checker) outbox(ctx context.Context) error {
	rows, err := c.db.Outbox(ctx, machineName)
	if err != nil {
		return err
	}
	got, err := c.db.Deliveries(ctx)
	if err != nil {
		return err
	}
	seen := map[fsmrt.EffectID]bool{}
	for _, r := range rows {
		eid := fsmrt.EffectID{Machine: machineName, ID: r.ID, Seq: r.Seq, Index: r.Index}
		want, ok := c.effects[eid]
		switch {
		case !ok || seen[eid]:
			c.rep.problem("outbox: %s %d #%d (%s), which no transition called for (or twice)", r.ID, r.Seq, r.Index, r.Name)
			continue
		case r.Key != want || r.Name != "notify":
			c.rep.problem("outbox: %s %d has effect %s with key %q, want notify with %q", r.ID, r.Seq, r.Name, r.Key, want)
		case !r.Delivered:
			c.rep.problem("outbox: %s %d is not recorded delivered", r.ID, r.Seq)
		}
		seen[eid] = true
		c.rep.Effects++
		d, ok := got[r.Key]
		switch {
		case !ok:
			c.rep.problem("deliveries: %s %d (%s) never delivered", r.ID, r.Seq, r.Key)
		case d.ID != r.ID || d.Seq != r.Seq:
			c.rep.problem("deliveries: %s delivered for %s %d, the outbox has %s %d", r.Key, d.ID, d.Seq, r.ID, r.Seq)
		case d.Count < 1 || d.Count > int64(r.Attempts):
			c.rep.problem("deliveries: %s delivered %d times in %d attempts", r.Key, d.Count, r.Attempts)
		case c.flaky && Flaky(r.Key) == FailBefore && r.Attempts < 2:
			c.rep.problem("deliveries: %s failed at its first attempt, and was not tried again", r.Key)
		case c.flaky && Flaky(r.Key) == LoseAck && d.Count < 2:
			c.rep.problem("deliveries: %s lost its first answer, and was delivered %d times", r.Key, d.Count)
		}
		if d.Count > 1 {
			c.rep.Redelivered++
		}
		delete(got, r.Key)
	}
	for eid := range c.effects {
		if !seen[eid] {
			c.rep.problem("outbox: no effect for %s %d", eid.ID, eid.Seq)
		}
	}
	for key := range got {
		c.rep.problem("deliveries: %s delivered, not in the outbox", key)
	}
	return nil
}

// deadlines checks that no deadline is left: every hold was released, which disarms its
// deadlines.
func (c *checker) deadlines(ctx context.Context) error {
	rows, err := c.db.Deadlines(ctx, machineName)
	if err != nil {
		return err
	}
	for _, r := range rows {
		c.rep.problem("deadlines: %s %s left (handled: %v)", r.ID, r.Name, r.Handled)
	}
	return nil
}

// find checks Find's answers against what the replays found: no order held or with an
// expiry armed, the orders put on hold at least once, and those with 3 adds in a state.
func (c *checker) find(ctx context.Context) error {
	far := time.Date(3000, 1, 1, 0, 0, 0, 0, time.UTC)
	queries := map[string]fsmrt.Query{
		"held":   {States: []string{order.StateHeld.String()}},
		"expiry": {Deadline: fsmrt.ExpiryDeadline, Due: far},
		"holds":  {Counter: "holds", AtLeast: 1},
		"adds":   {Counter: "adds", AtLeast: 3},
	}
	for _, name := range slices.Sorted(maps.Keys(queries)) {
		found, err := order.FindOrders(ctx, c.db.Store, queries[name])
		if err != nil {
			return err
		}
		var ids []string
		for _, inst := range found {
			ids = append(ids, inst.ID)
		}
		if want := c.found[name]; !slices.Equal(ids, want) {
			c.rep.problem("Find %s: %d orders, the replays say %d", name, len(ids), len(want))
		}
	}
	return nil
}

// replayLog replays order id from its whole log, without the stored snapshot, up to
// entry upTo (0: all).
func replayLog(ctx context.Context, store fsmrt.Store, id string, upTo int64) (*order.Order, error) {
	return order.ReplayOrder(ctx, logOnly{Store: store, upTo: upTo}, id, order.OrderNopHooks{})
}

// logOnly is a store whose Load returns no snapshot and the whole log (up to upTo when
// it is not 0): what a Replay of it rebuilds comes from the log alone.
type logOnly struct {
	fsmrt.Store
	upTo int64
}

// Load returns the instance's log, without its snapshot.
func (s logOnly) Load(ctx context.Context, machine, id string) (fsmrt.Loaded, error) {
	l, err := s.Store.Load(ctx, machine, id)
	if err != nil {
		return l, err
	}
	log, err := s.Store.Log(ctx, machine, id, 0)
	if err != nil {
		return l, err
	}
	if s.upTo > 0 && int64(len(log)) > s.upTo {
		log = log[:s.upTo]
	}
	return fsmrt.Loaded{Version: int64(len(log)), Spec: l.Spec, Entries: log}, nil
}

// snapshotJSON returns the JSON of m's snapshot.
func snapshotJSON(m *order.Order) []byte {
	s := m.Snapshot()
	b, err := json.Marshal(&s)
	if err != nil {
		return []byte(err.Error())
	}
	return b
}
