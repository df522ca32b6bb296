// Package evolve is the spec-evolution example: a ticket machine whose spec changed while
// its instances were stored. Version 1 (v1/ticket.fsm.yaml) has a triage state, an
// approved state, a priority and a reopens counter; version 2 (v2/ticket.fsm.yaml) folds
// triage into open, calls approved accepted, priority urgency and reopens reopen_count,
// drops the review event, and adds a blocked state and a team that work requires. Its
// migrations section says so, and the checker proves that every state of version 1 has a
// place in version 2 and that the instances it stored get a team.
//
// Both versions are generated here, so that the tests can store instances with the code
// of version 1 and carry them on with the code of version 2: on an in-memory store, an
// SQLite file and a PostgreSQL server, where workers running version 2 take over
// instances stored under version 1 at once.
//
// Version 3 (v3/ticket.fsm.yaml) only adds to version 2 (an escalated state, the events
// escalate and resolve, an escalations counter) and declares no migration from it: its
// version lock (v3/ticket.fsm.lock, versions 1 and 2 merged as a branch merge would merge
// them, and 3) is all the checker needs to prove that version 2's tickets load as they are.
// Version 1's tickets still need version 2's mapping, which version 3 keeps with version 1
// named by its fingerprint instead of its file. The tests store tickets under versions 1
// and 2 and carry them on under version 3, on every store.
//
// Version 4 (v4/ticket.fsm.yaml) breaks version 3: blocked and escalated merge into
// waiting, escalate is called hand_to_lead and escalations handovers. Its one new
// migration, from version 3, carries version 2 too; version 1 keeps its own. Version 5
// (v5/ticket.fsm.yaml) adds to version 4 and declares nothing for it. The tests store
// tickets under each of versions 1 to 4 and carry them all to an end with the code of
// version 5, on every store (TestChain*).
package evolve

// The generator runs in the repository's main module, which has what it imports.
//go:generate go run -C ../.. ./cmd/fsmgen generate -o examples/evolve/v1 examples/evolve/v1/ticket.fsm.yaml
//go:generate go run -C ../.. ./cmd/fsmgen generate -o examples/evolve/v2 examples/evolve/v2/ticket.fsm.yaml
//go:generate go run -C ../.. ./cmd/fsmgen generate -o examples/evolve/v3 examples/evolve/v3/ticket.fsm.yaml
//go:generate go run -C ../.. ./cmd/fsmgen generate -o examples/evolve/v4 examples/evolve/v4/ticket.fsm.yaml
//go:generate go run -C ../.. ./cmd/fsmgen generate -o examples/evolve/v5 examples/evolve/v5/ticket.fsm.yaml
