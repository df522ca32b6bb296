package evolve_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	v2 "github.com/fsmgen/fsmgen/examples/evolve/v2"
	v3 "github.com/fsmgen/fsmgen/examples/evolve/v3"
	v4 "github.com/fsmgen/fsmgen/examples/evolve/v4"
	v5 "github.com/fsmgen/fsmgen/examples/evolve/v5"
	"github.com/fsmgen/fsmgen/fsmrt"
	"github.com/fsmgen/fsmgen/store/postgres"
	"github.com/fsmgen/fsmgen/store/postgres/pgtest"
	"github.com/fsmgen/fsmgen/store/sqlite"
)

// fireAll fires events on m through fire, a minute apart.
func fireAll[E any](ctx context.Context, id string, events []E, fire func(E, time.Time) error) error {
	for i, e := range events {
		if err := fire(e, t0.Add(time.Duration(i)*time.Minute)); err != nil {
			return fmt.Errorf("%s: %v: %w", id, e, err)
		}
	}
	return nil
}

// chainWant is what version 5 makes of a ticket stored under an older version.
type chainWant struct {
	state              v5.State
	comments           map[v5.State]int
	handovers, reopens int
}

// storeChain stores tickets under each of versions 1 to 4 (every story under version 1,
// one ticket under each later one) and returns what version 5 should make of each, by ID.
func storeChain(t *testing.T, store fsmrt.Store) map[string]chainWant {
	t.Helper()
	ctx := context.Background()
	type want = chainWant
	wants := map[string]want{}
	// Version 1: every story.
	for _, s := range stories() {
		id := "c1-" + s.id
		if _, err := writeV1(ctx, store, id, s.events); err != nil {
			t.Fatal(err)
		}
		w := want{state: v5.State(0), comments: map[v5.State]int{}, reopens: s.reopens}
		for _, st := range v5.States() {
			if st.String() == s.state.String() {
				w.state = st
			}
			for st2, n := range s.comments {
				if st2.String() == st.String() {
					w.comments[st] = n
				}
			}
		}
		wants[id] = w
	}
	// Version 2: a blocked ticket with a comment while blocked.
	if _, err := writeV2(ctx, store, "c2-blocked", []v2.Event{v2.EventAccept, v2.EventStart, v2.EventBlock, v2.EventComment}); err != nil {
		t.Fatal(err)
	}
	wants["c2-blocked"] = want{state: v5.StateWaiting, comments: map[v5.State]int{v5.StateWaiting: 1}}
	// Version 3: blocked (a comment), escalated (two comments): waiting, three comments, a
	// handover.
	m3 := v3.NewTicket(v3.TicketNopHooks{})
	m3.ID = "c3-escalated"
	m3.SetStore(store)
	m3.Context = v3.TicketContext{Urgency: 2, Assignee: "cy", Team: "core"}
	if err := fireAll(ctx, m3.ID, []v3.Event{v3.EventAccept, v3.EventStart, v3.EventBlock, v3.EventComment, v3.EventEscalate, v3.EventComment, v3.EventComment},
		func(e v3.Event, at time.Time) error {
			_, err := m3.FireWith(ctx, e, v3.TicketInput{At: at, Actor: "v3"})
			return err
		}); err != nil {
		t.Fatal(err)
	}
	wants[m3.ID] = want{state: v5.StateWaiting, comments: map[v5.State]int{v5.StateWaiting: 3}, handovers: 1}
	// Version 4: waiting, handed to a lead twice.
	m4 := v4.NewTicket(v4.TicketNopHooks{})
	m4.ID = "c4-waiting"
	m4.SetStore(store)
	m4.Context = v4.TicketContext{Urgency: 1, Assignee: "di", Team: "ops"}
	if err := fireAll(ctx, m4.ID, []v4.Event{v4.EventAccept, v4.EventStart, v4.EventBlock, v4.EventHandToLead, v4.EventHandToLead},
		func(e v4.Event, at time.Time) error {
			_, err := m4.FireWith(ctx, e, v4.TicketInput{At: at, Actor: "v4"})
			return err
		}); err != nil {
		t.Fatal(err)
	}
	wants[m4.ID] = want{state: v5.StateWaiting, comments: map[v5.State]int{}, handovers: 2}

	return wants
}

// testChain: five versions of the ticket, additive (2 to 3, 4 to 5) and breaking (1 to 2:
// renames and a merge of triage into open; 3 to 4: blocked and escalated merged into
// waiting, an event and a counter renamed), with tickets stored under each of the first
// four. Code of version 5, whose spec declares two migrations (from versions 1 and 3) and
// whose lock records all five versions, loads every one of them with what it stored
// (merged states' per-state counts added up) and carries each to an end.
func testChain(t *testing.T, store fsmrt.Store) {
	ctx := context.Background()
	wants := storeChain(t, store)
	spec5 := v5.NewTicket(v5.TicketNopHooks{}).Snapshot().Spec
	next := map[v5.State]v5.Event{v5.StateOpen: v5.EventAccept, v5.StateAccepted: v5.EventStart, v5.StateInProgress: v5.EventFinish, v5.StateWaiting: v5.EventResolve}
	for id, w := range wants {
		m, err := v5.ReplayTicket(ctx, store, id, v5.TicketNopHooks{})
		if err != nil {
			t.Fatalf("%s: version 5 does not load it: %v", id, err)
		}
		if m.State() != w.state || m.CountHandovers() != w.handovers || m.CountReopenCount() != w.reopens || m.Context.Channel != "email" {
			t.Errorf("%s: %s, %d handovers, %d reopens, channel %q; want %s, %d, %d, email", id, m.State(), m.CountHandovers(), m.CountReopenCount(), m.Context.Channel, w.state, w.handovers, w.reopens)
		}
		for _, st := range v5.States() {
			if got := m.CountComments(st); got != w.comments[st] {
				t.Errorf("%s: %d comments in %s, want %d", id, got, st, w.comments[st])
			}
		}
		m.SetStore(store)
		if m.State() == v5.StateWaiting {
			if _, err := m.Fire(ctx, v5.EventRemind); err != nil {
				t.Fatalf("%s: remind (new in version 5): %v", id, err)
			}
		}
		if m.State().IsTerminal() {
			_, err = m.Migrate(ctx)
		}
		for err == nil && !m.State().IsTerminal() {
			if m.Context.Assignee == "" {
				m.Context.Assignee = "ed"
			}
			_, err = m.Fire(ctx, next[m.State()])
		}
		if err != nil {
			t.Fatalf("%s: carrying it to an end under version 5: %v", id, err)
		}
		if l, err := store.Load(ctx, m.StoreName(), id); err != nil || l.Spec != spec5 {
			t.Errorf("%s: stored under %q (%v), want version 5's", id, l.Spec, err)
		}
	}
}

func TestChainMemory(t *testing.T) { testChain(t, fsmrt.NewMemoryStore()) }

func TestChainSQLite(t *testing.T) {
	store, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "tickets.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	testChain(t, store)
}

func TestChainPostgres(t *testing.T) {
	ctx := context.Background()
	srv := pgtest.New(t, pgtest.Options{})
	dsn, err := srv.CreateDatabase(ctx, "chain")
	if err != nil {
		t.Fatal(err)
	}
	store, err := postgres.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	testChain(t, store)
}
