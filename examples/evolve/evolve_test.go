package evolve_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	v1 "github.com/fsmgen/fsmgen/examples/evolve/v1"
	v2 "github.com/fsmgen/fsmgen/examples/evolve/v2"
	"github.com/fsmgen/fsmgen/fsmrt"
	"github.com/fsmgen/fsmgen/store/postgres"
	"github.com/fsmgen/fsmgen/store/postgres/pgtest"
	"github.com/fsmgen/fsmgen/store/sqlite"
)

// story is an instance stored under version 1: the events fired on it, and what version 2
// makes of it.
type story struct {
	id     string
	events []v1.Event
	// Under version 2: the state, the context, the counters.
	state    v2.State
	ctx      v2.TicketContext
	reopens  int
	comments map[v2.State]int
}

// stories cover every state of version 1, with and without a snapshot, with log entries
// after it or not.
func stories() []story {
	ana := func(urgency int) v2.TicketContext {
		return v2.TicketContext{Urgency: urgency, Assignee: "ana", Team: "support"}
	}
	return []story{
		// Nothing but a comment: open, and open still.
		{id: "open", events: []v1.Event{v1.EventComment}, state: v2.StateOpen,
			ctx: v2.TicketContext{Urgency: 3, Team: "support"}, comments: map[v2.State]int{v2.StateOpen: 1}},
		// In triage, never saved by a checkpoint: the whole log replays, the review as
		// recorded (version 2 has no such event), the comments of open and triage both
		// counted in open.
		{id: "triage", events: []v1.Event{v1.EventComment, v1.EventReview, v1.EventComment}, state: v2.StateOpen,
			ctx: v2.TicketContext{Urgency: 3, Team: "support"}, comments: map[v2.State]int{v2.StateOpen: 2}},
		// Approved: a snapshot (the decided checkpoint), then a comment after it.
		{id: "approved", events: []v1.Event{v1.EventReview, v1.EventComment, v1.EventApprove, v1.EventComment}, state: v2.StateAccepted,
			ctx: v2.TicketContext{Urgency: 3, Team: "support"}, comments: map[v2.State]int{v2.StateOpen: 1, v2.StateAccepted: 1}},
		{id: "working", events: []v1.Event{v1.EventReview, v1.EventApprove, v1.EventStart}, state: v2.StateInProgress, ctx: ana(3)},
		{id: "reopened", events: []v1.Event{v1.EventReview, v1.EventApprove, v1.EventStart, v1.EventReopen}, state: v2.StateAccepted, ctx: ana(3), reopens: 1},
		{id: "rejected", events: []v1.Event{v1.EventReview, v1.EventReject}, state: v2.StateRejected, ctx: v2.TicketContext{Urgency: 3, Team: "support"}},
		{id: "done", events: []v1.Event{v1.EventReview, v1.EventApprove, v1.EventStart, v1.EventFinish}, state: v2.StateDone, ctx: ana(3)},
	}
}

var t0 = time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC)

// writeV1 stores the instance of s under version 1, as its program did.
func writeV1(ctx context.Context, store fsmrt.Store, id string, events []v1.Event) (*v1.Ticket, error) {
	m := v1.NewTicket(v1.TicketNopHooks{})
	m.ID = id
	m.SetStore(store)
	m.Context.Priority = 3
	for i, e := range events {
		if e == v1.EventStart {
			m.Context.Assignee = "ana"
		}
		if _, err := m.FireWith(ctx, e, v1.TicketInput{At: t0.Add(time.Duration(i) * time.Minute), Actor: "v1"}); err != nil {
			return nil, fmt.Errorf("%s: %s: %w", id, e, err)
		}
	}
	return m, nil
}

// v1Spec and v2Spec are the fingerprints of the two versions.
func fingerprints() (string, string) {
	return v1.NewTicket(v1.TicketNopHooks{}).Snapshot().Spec, v2.NewTicket(v2.TicketNopHooks{}).Snapshot().Spec
}

// check compares a machine of version 2 with what its story says.
func check(t *testing.T, m *v2.Ticket, s story) {
	t.Helper()
	if m.State() != s.state || m.Context != s.ctx || m.CountReopenCount() != s.reopens {
		t.Errorf("%s: %s %+v reopens %d, want %s %+v reopens %d", s.id, m.State(), m.Context, m.CountReopenCount(), s.state, s.ctx, s.reopens)
	}
	for _, st := range v2.States() {
		if got := m.CountComments(st); got != s.comments[st] {
			t.Errorf("%s: %d comments in %s, want %d", s.id, got, st, s.comments[st])
		}
	}
}

// testEvolution stores every story under version 1, then carries them on under version 2.
func testEvolution(t *testing.T, store fsmrt.Store) {
	ctx := context.Background()
	old, spec := fingerprints()
	stale := map[string]*v1.Ticket{}
	for _, s := range stories() {
		m, err := writeV1(ctx, store, s.id, s.events)
		if err != nil {
			t.Fatal(err)
		}
		stale[s.id] = m
	}

	// Version 2 loads each instance migrated, stored as it was until it commits.
	hooks := v2.TicketNopHooks{}
	for _, s := range stories() {
		m, err := v2.ReplayTicket(ctx, store, s.id, hooks)
		if err != nil {
			t.Fatalf("%s: %v", s.id, err)
		}
		check(t, m, s)
		if m.Migrated() != old || int(m.Seq()) != len(s.events) {
			t.Errorf("%s: migrated from %q at %d, want %q at %d", s.id, m.Migrated(), m.Seq(), old, len(s.events))
		}
		if l, err := store.Load(ctx, m.StoreName(), s.id); err != nil || l.Spec != old {
			t.Errorf("%s: stored under %q (%v) before any commit, want %q", s.id, l.Spec, err, old)
		}
	}

	// It carries them on: the first commit stores each under version 2.
	carry := map[string][]v2.Event{
		"triage":   {v2.EventAccept, v2.EventStart, v2.EventBlock},
		"approved": {v2.EventComment, v2.EventStart},
		"working":  {v2.EventBlock, v2.EventUnblock, v2.EventFinish},
		"reopened": {v2.EventStart, v2.EventFinish},
	}
	for id, events := range carry {
		m, err := v2.ReplayTicket(ctx, store, id, hooks)
		if err != nil {
			t.Fatal(err)
		}
		m.SetStore(store)
		for i, e := range events {
			if e == v2.EventStart && m.Context.Assignee == "" {
				m.Context.Assignee = "bo"
			}
			if _, err := m.FireWith(ctx, e, v2.TicketInput{At: t0.Add(time.Hour + time.Duration(i)*time.Minute), Actor: "v2"}); err != nil {
				t.Fatalf("%s: %s: %v", id, e, err)
			}
		}
		if m.Migrated() != "" {
			t.Errorf("%s: still migrating from %q after its commits", id, m.Migrated())
		}
	}
	// An instance nobody fires on is migrated in place, so that queries by the new names
	// find it.
	m, err := v2.ReplayTicket(ctx, store, "open", hooks)
	if err != nil {
		t.Fatal(err)
	}
	m.SetStore(store)
	if ok, err := m.Migrate(ctx); !ok || err != nil {
		t.Fatalf("Migrate: %v, %v", ok, err)
	}
	if ok, err := m.Migrate(ctx); ok || err != nil {
		t.Errorf("Migrate again: %v, %v; want nothing to do", ok, err)
	}
	found, err := v2.FindTickets(ctx, store, fsmrt.Query{States: []string{"open"}})
	if err != nil || len(found) != 1 || found[0].ID != "open" || found[0].Version != 2 {
		t.Errorf("open tickets: %+v, %v; want the migrated one at version 2", found, err)
	}

	// Loaded again, each is where version 2 left it, stored under version 2.
	want := map[string]v2.State{"triage": v2.StateBlocked, "approved": v2.StateInProgress, "working": v2.StateDone, "reopened": v2.StateDone, "open": v2.StateOpen}
	for id, st := range want {
		m, err := v2.ReplayTicket(ctx, store, id, hooks)
		if err != nil {
			t.Fatalf("%s: %v", id, err)
		}
		l, err := store.Load(ctx, m.StoreName(), id)
		if err != nil {
			t.Fatal(err)
		}
		if m.State() != st || m.Migrated() != "" || l.Spec != spec || l.Snapshot == nil {
			t.Errorf("%s: %s, migrating from %q, stored under %q (snapshot %t); want %s under %q", id, m.State(), m.Migrated(), l.Spec, l.Snapshot != nil, st, spec)
		}
	}
	if m, err := v2.ReplayTicket(ctx, store, "approved", hooks); err != nil || m.CountComments(v2.StateAccepted) != 2 || m.Context.Team != "support" {
		t.Errorf("approved: %v, %d comments in accepted, team %q", err, m.CountComments(v2.StateAccepted), m.Context.Team)
	}

	// Version 1 can neither load an instance stored under version 2 nor write over it: a
	// typed error names both fingerprints, and nothing changes.
	var se *fsmrt.SpecMismatchError
	if _, err := v1.ReplayTicket(ctx, store, "working", v1.TicketNopHooks{}); !errors.As(err, &se) || se.Stored != spec || se.Spec != old ||
		!strings.Contains(err.Error(), spec) || !strings.Contains(err.Error(), old) {
		t.Errorf("version 1 loading an instance of version 2: %v", err)
	}
	before, err := store.Load(ctx, "ticket.Ticket", "working")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := stale["working"].FireWith(ctx, v1.EventFinish, v1.TicketInput{At: t0.Add(2 * time.Hour)}); !errors.As(err, &se) {
		t.Errorf("version 1 writing over an instance of version 2: %v", err)
	}
	if after, err := store.Load(ctx, "ticket.Ticket", "working"); err != nil || after.Version != before.Version || after.State != before.State || after.Spec != spec {
		t.Errorf("after version 1's refused write: %+v, %v; want %+v", after, err, before)
	}
	// Instances version 2 has not touched load under version 1 as they were.
	if m, err := v1.ReplayTicket(ctx, store, "done", v1.TicketNopHooks{}); err != nil || m.State() != v1.StateDone {
		t.Errorf("version 1 loading its own instance: %v", err)
	}
}

func TestEvolutionMemory(t *testing.T) { testEvolution(t, fsmrt.NewMemoryStore()) }

func TestEvolutionSQLite(t *testing.T) {
	store, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "tickets.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	testEvolution(t, store)
}

// TestEvolutionPostgres: the same on a PostgreSQL server; then workers running version 2
// take over, at once, tickets stored under version 1 in every state and carry each to its
// end, two workers racing on each.
func TestEvolutionPostgres(t *testing.T) {
	ctx := context.Background()
	srv := pgtest.New(t, pgtest.Options{})
	dsn, err := srv.CreateDatabase(ctx, "evolve")
	if err != nil {
		t.Fatal(err)
	}
	store, err := postgres.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	t.Run("stories", func(t *testing.T) { testEvolution(t, store) })
	t.Run("workers", func(t *testing.T) { testWorkers(t, dsn) })
}

func testWorkers(t *testing.T, dsn string) {
	ctx := context.Background()
	const tickets, workers = 140, 4
	store, err := postgres.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	all := stories()
	ids := make(chan string, 2*tickets)
	for i := range tickets {
		s := all[i%len(all)]
		id := fmt.Sprintf("w-%03d-%s", i, s.id)
		if _, err := writeV1(ctx, store, id, s.events); err != nil {
			t.Fatal(err)
		}
		ids <- id
		ids <- id // two workers race on each
	}
	close(ids)
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	conflicts := make([]int, workers)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			st, err := postgres.Open(ctx, dsn)
			if err != nil {
				errs <- err
				return
			}
			defer st.Close()
			for id := range ids {
				n, err := finish(ctx, st, id)
				conflicts[w] += n
				if err != nil {
					errs <- fmt.Errorf("worker %d: %s: %w", w, id, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	_, spec := fingerprints()
	ended := map[v2.State]int{}
	for i := range tickets {
		id := fmt.Sprintf("w-%03d-%s", i, all[i%len(all)].id)
		m, err := v2.ReplayTicket(ctx, store, id, v2.TicketNopHooks{})
		if err != nil {
			t.Fatalf("%s: %v", id, err)
		}
		l, err := store.Load(ctx, m.StoreName(), id)
		if err != nil || l.Spec != spec || !m.State().IsTerminal() || m.Migrated() != "" {
			t.Errorf("%s: %s under %q (%v), want an end under version 2", id, m.State(), l.Spec, err)
		}
		ended[m.State()]++
	}
	// The rejected ones stay rejected; every other ticket was carried to done.
	if per := tickets / len(all); ended[v2.StateRejected] != per || ended[v2.StateDone] != tickets-per {
		t.Errorf("ended: %v", ended)
	}
	t.Logf("%d tickets stored under version 1 carried on by %d workers of version 2; conflicts %v", tickets, workers, conflicts)
}

// finish carries ticket id to an end under version 2 (one at its end already is migrated in
// place), loading it again whenever another worker got there first; it returns how many
// times that happened.
func finish(ctx context.Context, store fsmrt.Store, id string) (int, error) {
	conflicts := 0
	for {
		m, err := v2.ReplayTicket(ctx, store, id, v2.TicketNopHooks{})
		if err != nil {
			return conflicts, err
		}
		m.SetStore(store)
		next := map[v2.State]v2.Event{v2.StateOpen: v2.EventAccept, v2.StateAccepted: v2.EventStart, v2.StateInProgress: v2.EventFinish, v2.StateBlocked: v2.EventUnblock}
		if m.State().IsTerminal() {
			// Nothing to fire: stored under version 2 all the same.
			_, err = m.Migrate(ctx)
		}
		for err == nil && !m.State().IsTerminal() {
			e := next[m.State()]
			if e == v2.EventStart && m.Context.Assignee == "" {
				m.Context.Assignee = "bo"
			}
			if _, err = m.Fire(ctx, e); err != nil {
				break
			}
		}
		switch {
		case err == nil:
			return conflicts, nil
		case errors.Is(err, fsmrt.ErrStoreConflict):
			conflicts++
		default:
			return conflicts, err
		}
	}
}

// TestSnapshotJSON: a snapshot version 1 wrote decodes as version 2's, migrated.
func TestSnapshotJSON(t *testing.T) {
	ctx := context.Background()
	for _, s := range stories() {
		m, err := writeV1(ctx, fsmrt.NewMemoryStore(), s.id, s.events)
		if err != nil {
			t.Fatal(err)
		}
		b, err := json.Marshal(m.Snapshot())
		if err != nil {
			t.Fatal(err)
		}
		var snap v2.TicketSnapshot
		if err := json.Unmarshal(b, &snap); err != nil {
			t.Fatalf("%s: %v", s.id, err)
		}
		m2, err := v2.RestoreTicket(snap, v2.TicketNopHooks{})
		if err != nil {
			t.Fatalf("%s: %v", s.id, err)
		}
		check(t, m2, s)
	}
}

// TestContextInEachEntry: every entry records the context as the transition left it, even
// when a commit reuses the encoding of a context it did not change.
func TestContextInEachEntry(t *testing.T) {
	ctx := context.Background()
	store := fsmrt.NewMemoryStore()
	m := v2.NewTicket(v2.TicketNopHooks{})
	m.ID = "t"
	m.SetStore(store)
	want := []string{}
	fire := func(e v2.Event) {
		t.Helper()
		if _, err := m.Fire(ctx, e); err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(m.Context)
		want = append(want, string(b))
	}
	fire(v2.EventComment)
	fire(v2.EventComment) // unchanged
	m.Context.Urgency = 2
	fire(v2.EventComment)
	m.Context.Assignee, m.Context.Team = "ana", "ops"
	fire(v2.EventAccept)
	fire(v2.EventStart)
	m.Context.Assignee = "bo"
	fire(v2.EventBlock)
	m.Context.Assignee = "ana" // back to an earlier value
	fire(v2.EventUnblock)
	log, err := store.Log(ctx, m.StoreName(), "t", 0)
	if err != nil || len(log) != len(want) {
		t.Fatalf("%d entries, %v", len(log), err)
	}
	for i, e := range log {
		var entry struct{ Context json.RawMessage }
		if err := json.Unmarshal(e.Data, &entry); err != nil || string(entry.Context) != want[i] {
			t.Errorf("entry %d: context %s, want %s (%v)", i+1, entry.Context, want[i], err)
		}
	}
	r, err := v2.ReplayTicket(ctx, store, "t", v2.TicketNopHooks{})
	if err != nil || r.Context != m.Context {
		t.Errorf("replayed %+v, %v; want %+v", r.Context, err, m.Context)
	}
}
