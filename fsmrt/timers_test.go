package fsmrt

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"
)

// withTimers names the timeout levels and makes review's timeout expire into paused.
func withTimers(d *tDef) {
	d.LevelNames = []string{"info", "warning", "alert", "escalate"}
	d.States[sReview].Expires, d.States[sReview].Expiry = true, int32(ePause)
}

// timerRig returns a machine with durable timers on st, and how to load a machine of it.
func timerRig(st Store, opts ...func(*tDef)) (*rig, func(context.Context, string) (*tMachine, error)) {
	d := richDef(append([]func(*tDef){withTimers}, opts...)...)
	r := attach(d)
	r.m.SetStore(st)
	load := func(ctx context.Context, id string) (*tMachine, error) {
		l := attach(d)
		if err := Replay(ctx, l.m, st, id, nil); err != nil {
			return nil, err
		}
		l.m.SetStore(st)
		return l.m, nil
	}
	return r, load
}

// armed lists the deadlines st holds for doc-1 as name@minutes-after-t0:event.
func armed(t *testing.T, st Store) []string {
	t.Helper()
	var out []string
	for _, d := range claimAll(t, st, tStoreName) {
		out = append(out, fmt.Sprintf("%s@%v:%s", d.Name, d.At.Sub(t0), d.Event))
	}
	return out
}

// claimAll claims every deadline of machine not handled, for a lease already over, so that
// the next claim gets them again.
func claimAll(t *testing.T, st Store, machine string) []DueDeadline {
	t.Helper()
	got, err := st.ClaimDeadlines(bg, machine, "probe", t0.Add(1000*time.Hour), -2000*time.Hour, 100)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func TestTimersArmAndDisarm(t *testing.T) {
	st := newStore()
	r, _ := timerRig(st)
	r.walk(t, eSubmit) // at t0: review, 10 minutes, levels at 80, 100, 150 %
	// The alert, at 100 %, falls due with the expiry, which supersedes it: not armed.
	want := []string{"level:warning@8m0s:", "expiry@10m0s:pause", "level:escalate@15m0s:"}
	if got := armed(t, st); !reflect.DeepEqual(got, want) {
		t.Errorf("armed on entering review: %v, want %v", got, want)
	}
	// An internal transition keeps them; a change of the timeout rearms them from the time
	// the state was entered.
	r.clk.add(time.Minute)
	r.walk(t, eComment)
	if err := SetTimeout(r.m, sReview, 20*time.Minute); err != nil {
		t.Fatal(err)
	}
	want = []string{"level:warning@16m0s:", "expiry@20m0s:pause", "level:escalate@30m0s:"}
	if got := armed(t, st); !reflect.DeepEqual(got, want) {
		t.Errorf("after SetTimeout: %v, want %v", got, want)
	}
	// Leaving review for draft, which has no timeout, disarms them; paused arms its hour.
	r.clk.add(time.Minute)
	r.walk(t, eReject)
	if got := armed(t, st); len(got) != 0 {
		t.Errorf("armed in draft: %v", got)
	}
	// paused has a timeout of an hour without levels or expiry: nothing to arm.
	r.walk(t, ePause)
	if got := armed(t, st); len(got) != 0 {
		t.Errorf("armed in paused: %v", got)
	}
	// The log replays, notes included.
	l := attach(r.d)
	if err := Replay(bg, l.m, st, "doc-1", nil); err != nil {
		t.Fatal(err)
	}
	if got, want := snapJSON(t, l.m.Snapshot()), snapJSON(t, r.m.Snapshot()); got != want {
		t.Errorf("replayed\n%s\nwant\n%s", got, want)
	}
	// SetTimeout whose commit fails changes nothing.
	r.m.SetStore(&failStore{tStore: st, commitErr: errors.New("boom")})
	seq := r.m.Seq()
	if err := SetTimeout(r.m, sReview, 30*time.Minute); err == nil || Timeout(r.m, sReview) != 20*time.Minute || r.m.Seq() != seq {
		t.Errorf("SetTimeout with a failing store: %v, timeout %v", err, Timeout(r.m, sReview))
	}
}

// TestTimersRearmOnlyWhenArmed: a transition rearms the instance's deadlines when the state
// it enters arms some or the state it leaves had some; between two states without a
// timeout it leaves the store's deadlines alone.
func TestTimersRearmOnlyWhenArmed(t *testing.T) {
	fs := &failStore{tStore: newStore()}
	r, _ := timerRig(fs)
	r.m.Context = tCtx{Title: "t", Reviewer: "bo"}
	r.ops.guards[gOK] = true
	for _, x := range []struct {
		e         tEvent
		in        tIn
		rearm     bool
		deadlines int
	}{
		{eSubmit, tIn{}, true, 3},              // draft to review: arms review's
		{eApprove, tIn{Role: rAdmin}, true, 0}, // review to approved: disarms them
		{eRework, tIn{}, false, 0},             // approved to draft: neither has a timeout
		{eSubmit, tIn{}, true, 3},              // draft to review
		{ePause, tIn{}, true, 0},               // review to paused (an hour, nothing to arm)
		{eResume, tIn{}, true, 3},              // paused to review
		{eComment, tIn{}, false, 0},            // internal: review stays entered
	} {
		n := len(fs.commits)
		r.fire(t, x.e, x.in)
		c := fs.commits[n]
		if c.Rearm != x.rearm || len(c.Deadlines) != x.deadlines {
			t.Errorf("%s to %s: rearm %v with %d deadlines, want %v with %d", x.e, r.m.State(), c.Rearm, len(c.Deadlines), x.rearm, x.deadlines)
		}
	}
}

func TestFireDue(t *testing.T) {
	st := newStore()
	r, load := timerRig(st)
	r.walk(t, eSubmit) // review at t0
	fire := func(at time.Duration) (int, error) {
		return FireDue(bg, st, tStoreName, "s1", t0.Add(at), time.Minute, 10, load)
	}
	if n, err := fire(7 * time.Minute); n != 0 || err != nil {
		t.Fatalf("before any level: %d, %v", n, err)
	}
	// The warning, recorded once as an entry of the log, at its deadline (8 minutes), not
	// when the scheduler got to it.
	if n, err := fire(9 * time.Minute); n != 1 || err != nil {
		t.Fatalf("at 9 minutes: %d, %v", n, err)
	}
	if n, err := fire(9*time.Minute + 30*time.Second); n != 0 || err != nil {
		t.Fatalf("again: %d, %v", n, err)
	}
	log := logOf(t, st)
	if e := log[len(log)-1]; e.Kind != "TIMEOUT_WARNING" || e.From != sReview || e.To != sReview || e.Actor != "scheduler" || e.Metadata["level"] != "warning" ||
		e.Metadata["deadline"] != t0.Add(8*time.Minute).Format(time.RFC3339Nano) || e.Metadata["timeout"] != "10m0s" || !e.Timestamp.Equal(t0.Add(8*time.Minute)) {
		t.Errorf("warning entry %+v", e)
	}
	// At 12 minutes the expiry fires pause, at 10 minutes.
	if n, err := fire(12 * time.Minute); n != 1 || err != nil {
		t.Fatalf("at 12 minutes: %d, %v", n, err)
	}
	m, err := load(bg, "doc-1")
	if err != nil || m.State() != sPaused {
		t.Fatalf("after the expiry: %v, %v", m, err)
	}
	log = logOf(t, st)
	if e := log[len(log)-1]; e.Kind != KindTransition || e.Event != ePause || e.Reason != "timeout expired" || e.Actor != "scheduler" || !e.Timestamp.Equal(t0.Add(10*time.Minute)) {
		t.Errorf("expiry entry %+v", e)
	}
	if n, err := fire(time.Hour); n != 0 || err != nil {
		t.Errorf("after leaving review: %d, %v", n, err)
	}
}

func TestFireDueRefusedExpiry(t *testing.T) {
	st := newStore()
	// review expires into approve, which needs a role the scheduler does not have.
	r, load := timerRig(st, func(d *tDef) { d.States[sReview].Expiry = int32(eApprove) })
	r.walk(t, eSubmit)
	if n, err := FireDue(bg, st, tStoreName, "", t0.Add(11*time.Minute), 0, 10, load); n != 2 || err != nil {
		t.Fatalf("FireDue = %d, %v", n, err)
	}
	log := logOf(t, st)
	kinds := []string{}
	for _, e := range log {
		kinds = append(kinds, e.Kind)
	}
	// The alert, at the expiry's instant, is not armed: the TIMEOUT_EXPIRED entry records
	// the timeout passed, whichever scheduler gets there first.
	if want := []string{KindTransition, "TIMEOUT_WARNING", KindTimeoutExpired}; !reflect.DeepEqual(kinds, want) {
		t.Errorf("kinds %v, want %v", kinds, want)
	}
	if e := log[2]; e.To != sReview || e.Reason == "" {
		t.Errorf("expired entry %+v", e)
	}
	// A loader that fails, and a store that fails to claim.
	boom := errors.New("boom")
	r2, _ := timerRig(st)
	r2.m.ID = "doc-2"
	r2.walk(t, eSubmit)
	fail := func(context.Context, string) (*tMachine, error) { return nil, boom }
	if n, err := FireDue(bg, st, tStoreName, "", t0.Add(time.Hour), 0, 10, fail); n != 0 || err != boom {
		t.Errorf("FireDue with a failing loader = %d, %v", n, err)
	}
	fs := &failStore{tStore: newStore()}
	fs.claimDeadlinesErr = boom
	if _, err := FireDue(bg, fs, tStoreName, "", t0, 0, 10, load); err != boom {
		t.Errorf("FireDue with a failing store: %v", err)
	}
}

// TestFireDueOnce: schedulers racing over many machines handle each deadline once.
func TestFireDueOnce(t *testing.T) {
	st := newStore()
	const machines = 20
	var load func(context.Context, string) (*tMachine, error)
	for i := range machines {
		r, l := timerRig(st)
		load = l
		r.m.ID = fmt.Sprint("doc-", i)
		r.walk(t, eSubmit)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	total := 0
	for s := range 4 {
		wg.Go(func() {
			for {
				n, err := FireDue(bg, st, tStoreName, fmt.Sprint("s", s), t0.Add(9*time.Minute), time.Minute, 3, load)
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				total += n
				mu.Unlock()
				if n == 0 {
					return
				}
			}
		})
	}
	wg.Wait()
	if total != machines {
		t.Errorf("%d warnings handled, want %d", total, machines)
	}
	for i := range machines {
		l, _ := st.Log(bg, tStoreName, fmt.Sprint("doc-", i), 0)
		if len(l) != 2 || l[1].Kind != "TIMEOUT_WARNING" {
			t.Errorf("doc-%d: %+v", i, l)
		}
	}
}

func TestCreate(t *testing.T) {
	st := newStore()
	draftTimed := func(d *tDef) {
		d.States[sDraft].Timeout, d.States[sDraft].Levels, d.States[sDraft].LevelValues = 5*time.Minute, []int{100}, []int{3}
	}
	r, load := timerRig(st, draftTimed)
	r.m.Context.Title = "t"
	if err := r.m.Create(bg, tIn{Actor: "ann", Reason: "new"}); err != nil {
		t.Fatal(err)
	}
	if got := armed(t, st); !reflect.DeepEqual(got, []string{"level:alert@5m0s:"}) {
		t.Errorf("armed on creation: %v", got)
	}
	log := logOf(t, st)
	if len(log) != 1 || log[0].Kind != KindCreated || log[0].From != sDraft || log[0].Actor != "ann" || !log[0].Created.Equal(t0) || r.m.Seq() != 1 {
		t.Errorf("log %+v", log)
	}
	if s, ok := loadSnapshotOK(t, st); !ok || s.Seq != 1 || s.Context.Title != "t" {
		t.Errorf("snapshot %+v, %v", s, ok)
	}
	// The alert falls due in draft, where the machine was created.
	if n, err := FireDue(bg, st, tStoreName, "", t0.Add(6*time.Minute), 0, 10, load); n != 1 || err != nil {
		t.Fatalf("FireDue = %d, %v", n, err)
	}
	m, err := load(bg, "doc-1")
	if err != nil || m.Seq() != 2 || m.State() != sDraft || m.Context.Title != "t" {
		t.Fatalf("loaded %v, %v", m, err)
	}
	// Once only: another machine of the same ID, and a machine that has moved, are refused.
	r2, _ := timerRig(st, draftTimed)
	if err := r2.m.Create(bg, tIn{}); !errors.Is(err, ErrStoreConflict) {
		t.Errorf("created twice: %v", err)
	}
	if err := m.Create(bg, tIn{}); err == nil {
		t.Error("created a machine that exists")
	}
	if err := newRig().m.Create(bg, tIn{}); err != ErrNoStore {
		t.Errorf("created without a store: %v", err)
	}
	// A creation entry anywhere but first does not replay.
	fs := &fixedStore{log: []tEntryLog{
		{Seq: 1, Timestamp: t0, Kind: KindTransition, Event: eComment, From: sDraft, To: sDraft, Transition: 6},
		{Seq: 2, Timestamp: t0, Kind: KindCreated, From: sDraft, To: sDraft, Transition: -1},
	}}
	var le *LogError
	if err := Replay(bg, attach(r.d).m, fs, "doc-1", nil); !errors.As(err, &le) || le.Seq != 2 {
		t.Errorf("a late creation entry: %v", err)
	}
}

// loadSnapshotOK returns the snapshot st holds for doc-1, if any.
func loadSnapshotOK(t *testing.T, st *tStore) (tSnapshot, bool) {
	t.Helper()
	s, ok, _, err := st.loadT(bg, "doc-1")
	if err != nil {
		t.Fatal(err)
	}
	return s, ok
}

// TestLogEntryJSON: the encoding of a log entry has LogEntry's fields and tags, and leaves
// the event out of a note.
func TestLogEntryJSON(t *testing.T) {
	a, b := reflect.TypeFor[tEntryLog](), reflect.TypeFor[logEntryJSON[tState, tEvent, tRole]]()
	if a.NumField() != b.NumField() {
		t.Fatalf("%d fields, %d encoded", a.NumField(), b.NumField())
	}
	for i := range a.NumField() {
		fa, fb := a.Field(i), b.Field(i)
		if fa.Name != fb.Name || fa.Tag != fb.Tag && fa.Name != "Event" {
			t.Errorf("field %d: %s %q, encoded as %s %q", i, fa.Name, fa.Tag, fb.Name, fb.Tag)
		}
	}
	for kind, want := range map[string]bool{KindTransition: true, KindResumed: true, KindCreated: false, "TIMEOUT_WARN": false} {
		b, err := json.Marshal(tEntryLog{Kind: kind, Event: eSubmit})
		if err != nil || strings.Contains(string(b), `"event":"submit"`) != want {
			t.Errorf("%s: %s, %v", kind, b, err)
		}
	}
}

// TestClockBackwards: a transition timed before its state was entered (an input's At in
// the past) adds nothing to the time by state, so that every snapshot the machine takes
// restores.
func TestClockBackwards(t *testing.T) {
	r := newRig()
	r.fire(t, eSubmit, tIn{At: t0.Add(-time.Hour)})
	r.fire(t, eComment, tIn{})
	r.fire(t, eReject, tIn{At: t0.Add(-2 * time.Hour)})
	for st, d := range TimeByState(r.m, t0.Add(-3*time.Hour)) {
		if d < 0 {
			t.Errorf("time in %s: %v", tState(st), d)
		}
	}
	again := attach(r.d)
	if err := Restore(again.m, r.m.Snapshot(), nil); err != nil {
		t.Errorf("the machine's own snapshot: %v", err)
	}
}

// TestFireDueStaleClaim: a claim that outlived its lease, of a stay in a state the machine
// has left and entered again since, does not fire the new stay's deadlines.
func TestFireDueStaleClaim(t *testing.T) {
	st := newStore()
	r, load := timerRig(st)
	r.walk(t, eSubmit) // review at t0: the warning due at 8 minutes
	stale, err := st.ClaimDeadlines(bg, tStoreName, "slow", t0.Add(9*time.Minute), time.Second, 1)
	if err != nil || len(stale) != 1 || stale[0].Name != "level:warning" {
		t.Fatalf("claimed %+v, %v", stale, err)
	}
	// The machine leaves review and enters it again at 20 minutes: a new warning at 28.
	r.clk.t = t0.Add(20 * time.Minute)
	r.walk(t, eReject, eSubmit)
	if err := handleDue(bg, stale[0], load); !errors.Is(err, ErrStoreConflict) {
		t.Errorf("the stale claim: %v", err)
	}
	for _, e := range logOf(t, st) {
		if e.Kind == "TIMEOUT_WARNING" {
			t.Errorf("the new stay's warning fired early: %+v", e)
		}
	}
}

// TestFireDueFreshLoad: a loader may give the machine it keeps in memory; when that one is
// out of date (another process moved the instance on), FireDue asks again for one read from
// the store, once.
func TestFireDueFreshLoad(t *testing.T) {
	st := newStore()
	r, load := timerRig(st)
	r.walk(t, eSubmit) // review at t0: its deadlines armed
	kept, err := load(bg, "doc-1")
	if err != nil {
		t.Fatal(err)
	}
	// Another process comments on it: the one kept is a version behind.
	other, err := load(bg, "doc-1")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := other.Fire(bg, eComment); err != nil {
		t.Fatal(err)
	}
	var asked []bool
	cached := func(ctx context.Context, id string) (*tMachine, error) {
		asked = append(asked, FreshLoad(ctx))
		if FreshLoad(ctx) {
			return load(ctx, id)
		}
		return kept, nil
	}
	if n, err := FireDue(bg, st, tStoreName, "s1", t0.Add(9*time.Minute), time.Minute, 10, cached); n != 1 || err != nil {
		t.Fatalf("FireDue = %d, %v", n, err)
	}
	if !reflect.DeepEqual(asked, []bool{false, true}) {
		t.Errorf("loads asked fresh: %v, want the kept one, then one fresh", asked)
	}
	if log := logOf(t, st); log[len(log)-1].Kind != "TIMEOUT_WARNING" {
		t.Errorf("last entry %+v", log[len(log)-1])
	}
	// A loader that only ever gives an out-of-date machine is asked twice, and the
	// deadline is left to a later claim.
	asked = nil
	stale := func(ctx context.Context, id string) (*tMachine, error) {
		asked = append(asked, FreshLoad(ctx))
		return kept, nil
	}
	if n, err := FireDue(bg, st, tStoreName, "s2", t0.Add(11*time.Minute), time.Minute, 10, stale); n != 0 || err != nil || len(asked) != 2 {
		t.Errorf("FireDue with a stale loader = %d, %v, asked %v", n, err, asked)
	}
}

// TestExpireOnceAStay: an expiry that leaves the machine in its state (here an internal
// comment) fires once; the state expires again only once entered again, as a durable
// deadline is handled once.
func TestExpireOnceAStay(t *testing.T) {
	st := newStore()
	r, _ := timerRig(st, func(d *tDef) { d.States[sReview].Expiry = int32(eComment) })
	r.walk(t, eSubmit) // review at t0, a 10-minute timeout
	expire := func(at time.Duration) bool {
		t.Helper()
		fired, to, err := Expire(bg, r.m, eComment, t0.Add(at))
		if err != nil || to != sReview {
			t.Fatalf("Expire at %v: %v, %s, %v", at, fired, to, err)
		}
		return fired
	}
	if expire(9 * time.Minute) {
		t.Error("expired before its timeout")
	}
	seq := r.m.Seq()
	if !expire(10*time.Minute) || r.m.Seq() != seq+1 {
		t.Errorf("not expired at its timeout (seq %d)", r.m.Seq())
	}
	if e := logOf(t, st)[seq]; e.Event != eComment || e.Reason != "timeout expired" {
		t.Errorf("the expiry's entry %+v", e)
	}
	if expire(11*time.Minute) || expire(time.Hour) || r.m.Seq() != seq+1 {
		t.Errorf("expired again in the same stay (seq %d)", r.m.Seq())
	}
	// Entered again, it expires again.
	r.fire(t, ePause, tIn{At: t0.Add(2 * time.Hour)})
	r.fire(t, eResume, tIn{At: t0.Add(3 * time.Hour)})
	if expire(3*time.Hour+9*time.Minute) || !expire(3*time.Hour+10*time.Minute) || expire(4*time.Hour) {
		t.Error("a new stay does not expire once")
	}
}

// draftTimesOut gives draft a 10-minute timeout whose expiry submits (draft -> review, with
// submit's and review's effects when the spec has them) and a level at half of it.
func draftTimesOut(d *tDef) {
	d.States[sDraft].Timeout, d.States[sDraft].Expires, d.States[sDraft].Expiry = 10*time.Minute, true, int32(eSubmit)
	d.States[sDraft].Levels, d.States[sDraft].LevelValues = []int{50}, []int{1}
}
