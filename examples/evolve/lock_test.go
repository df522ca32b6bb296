package evolve_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	v2 "github.com/fsmgen/fsmgen/examples/evolve/v2"
	v3 "github.com/fsmgen/fsmgen/examples/evolve/v3"
	"github.com/fsmgen/fsmgen/fsmrt"
	"github.com/fsmgen/fsmgen/store/postgres"
	"github.com/fsmgen/fsmgen/store/postgres/pgtest"
	"github.com/fsmgen/fsmgen/store/sqlite"
)

// writeV2 stores ticket id under version 2, fired through events.
func writeV2(ctx context.Context, store fsmrt.Store, id string, events []v2.Event) (*v2.Ticket, error) {
	m := v2.NewTicket(v2.TicketNopHooks{})
	m.ID = id
	m.SetStore(store)
	m.Context = v2.TicketContext{Urgency: 2, Assignee: "bo", Team: "core"}
	for i, e := range events {
		if _, err := m.FireWith(ctx, e, v2.TicketInput{At: t0.Add(time.Duration(i) * time.Minute), Actor: "v2"}); err != nil {
			return nil, fmt.Errorf("%s: %s: %w", id, e, err)
		}
	}
	return m, nil
}

// testLocked: version 3 adds to version 2 and declares no migration from it; its version
// lock records versions 1 and 2. Tickets stored under either load under version 3, fire
// what version 3 added, and are stored under version 3 from then on.
func testLocked(t *testing.T, store fsmrt.Store) {
	ctx := context.Background()
	spec3 := v3.NewTicket(v3.TicketNopHooks{}).Snapshot().Spec
	// Under version 1: every story, carried as version 2 carries them (the mapping version 3
	// names version 1 by its fingerprint).
	for _, s := range stories() {
		id := "v1-" + s.id
		if _, err := writeV1(ctx, store, id, s.events); err != nil {
			t.Fatal(err)
		}
		m, err := v3.ReplayTicket(ctx, store, id, v3.TicketNopHooks{})
		if err != nil {
			t.Fatalf("%s: version 3 does not load it: %v", id, err)
		}
		if m.State().String() != s.state.String() || m.CountReopenCount() != s.reopens || m.Context.Team != s.ctx.Team {
			t.Errorf("%s: %s, %d reopens, team %q; want %s, %d, %q", id, m.State(), m.CountReopenCount(), m.Context.Team, s.state, s.reopens, s.ctx.Team)
		}
	}
	// Under version 2: a blocked ticket, escalated and sent back under version 3.
	before, err := writeV2(ctx, store, "v2-blocked", []v2.Event{v2.EventAccept, v2.EventStart, v2.EventComment, v2.EventBlock})
	if err != nil {
		t.Fatal(err)
	}
	m, err := v3.ReplayTicket(ctx, store, "v2-blocked", v3.TicketNopHooks{})
	if err != nil {
		t.Fatalf("version 3 does not load a ticket of version 2: %v", err)
	}
	if m.State() != v3.StateBlocked || m.Seq() != before.Seq() || m.Context != (v3.TicketContext{Urgency: 2, Assignee: "bo", Team: "core"}) || m.CountComments(v3.StateInProgress) != 1 {
		t.Fatalf("loaded: %s at %d, %+v, %d comments; stored %s at %d", m.State(), m.Seq(), m.Context, m.CountComments(v3.StateInProgress), before.State(), before.Seq())
	}
	m.SetStore(store)
	for _, e := range []v3.Event{v3.EventEscalate, v3.EventResolve} {
		if _, err := m.Fire(ctx, e); err != nil {
			t.Fatalf("%s under version 3: %v", e, err)
		}
	}
	again, err := v3.ReplayTicket(ctx, store, "v2-blocked", v3.TicketNopHooks{})
	if err != nil || again.State() != v3.StateInProgress || again.CountEscalations() != 1 {
		t.Fatalf("reloaded: %v, %v", err, again)
	}
	if l, err := store.Load(ctx, again.StoreName(), "v2-blocked"); err != nil || l.Spec != spec3 {
		t.Errorf("stored under %q (%v), want version 3's %s", l.Spec, err, spec3)
	}
	// Once under version 3, code of version 2 no longer loads it.
	if _, err := v2.ReplayTicket(ctx, store, "v2-blocked", v2.TicketNopHooks{}); err == nil {
		t.Error("version 2 loads a ticket stored under version 3")
	}
}

func TestLockedMemory(t *testing.T) { testLocked(t, fsmrt.NewMemoryStore()) }

func TestLockedSQLite(t *testing.T) {
	store, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "tickets.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	testLocked(t, store)
}

func TestLockedPostgres(t *testing.T) {
	ctx := context.Background()
	srv := pgtest.New(t, pgtest.Options{})
	dsn, err := srv.CreateDatabase(ctx, "locked")
	if err != nil {
		t.Fatal(err)
	}
	store, err := postgres.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	testLocked(t, store)
}
