package fsmrt

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"time"
)

// The test machine's names in a store.
const tStoreName = "review.Review"

// tStore is a MemoryStore with typed views of what it holds.
type tStore struct {
	*MemoryStore
	name string // the machine's name in the store
}

func newStore() *tStore { return &tStore{NewMemoryStore(), tStoreName} }

// storeEntry is e as a store keeps it.
func storeEntry(e tEntryLog) Entry {
	data, err := json.Marshal(e)
	if err != nil {
		panic(err)
	}
	if e.Reason == "no state" {
		// A timeout of a state the machine does not have: what no machine encodes.
		data = bytes.Replace(data, []byte(`"timeouts":{"review"`), []byte(`"timeouts":{"nowhere"`), 1)
	}
	return Entry{Seq: e.Seq, Kind: e.Kind, Event: e.Event.String(), From: e.From.String(), To: e.To.String(), At: e.Timestamp, Key: e.Key, Data: data}
}

// typedEntries decodes what a store keeps.
func typedEntries(es []Entry, _ ...error) []tEntryLog {
	var out []tEntryLog
	for _, e := range es {
		var le tEntryLog
		if err := json.Unmarshal(e.Data, &le); err != nil {
			panic(err)
		}
		out = append(out, le)
	}
	return out
}

// appendEntry commits e, with snap as its snapshot when not nil.
func (s *tStore) appendEntry(ctx context.Context, id string, e tEntryLog, snap *tSnapshot) error {
	c := &Commit{Machine: s.name, ID: id, Version: e.Seq - 1, State: e.To.String(), Entry: storeEntry(e)}
	if snap != nil {
		b, err := json.Marshal(snap)
		if err != nil {
			return err
		}
		c.Snapshot = b
	}
	return s.Commit(ctx, c)
}

// loadT is Load, decoded.
func (s *tStore) loadT(ctx context.Context, id string) (tSnapshot, bool, []tEntryLog, error) {
	l, err := s.Load(ctx, s.name, id)
	var snap tSnapshot
	if err != nil || l.Snapshot == nil {
		return snap, false, typedEntries(l.Entries), err
	}
	return snap, true, typedEntries(l.Entries), json.Unmarshal(l.Snapshot, &snap)
}

// logT is Log, decoded.
func (s *tStore) logT(ctx context.Context, id string, after int64) ([]tEntryLog, error) {
	es, err := s.Log(ctx, s.name, id, after)
	return typedEntries(es), err
}

// failStore is a store whose operations fail as told.
type failStore struct {
	*tStore
	commitErr, loadErr, logErr, findErr, claimErr, claimDeadlinesErr error
	loads, finds                                                     int
	commits                                                          []Commit // those it was given, refused ones too
}

func (s *failStore) Commit(ctx context.Context, c *Commit) error {
	s.commits = append(s.commits, *c)
	if s.commitErr != nil {
		return s.commitErr
	}
	return s.tStore.Commit(ctx, c)
}

func (s *failStore) Load(ctx context.Context, machine, id string) (Loaded, error) {
	s.loads++
	if s.loadErr != nil {
		return Loaded{}, s.loadErr
	}
	return s.tStore.Load(ctx, machine, id)
}

func (s *failStore) Log(ctx context.Context, machine, id string, after int64) ([]Entry, error) {
	if s.logErr != nil {
		return nil, s.logErr
	}
	return s.tStore.Log(ctx, machine, id, after)
}

func (s *failStore) ClaimEffects(ctx context.Context, machine, owner string, now time.Time, lease time.Duration, limit int) ([]PendingEffect, error) {
	if s.claimErr != nil {
		return nil, s.claimErr
	}
	return s.tStore.ClaimEffects(ctx, machine, owner, now, lease, limit)
}

func (s *failStore) ClaimDeadlines(ctx context.Context, machine, owner string, now time.Time, lease time.Duration, limit int) ([]DueDeadline, error) {
	if s.claimDeadlinesErr != nil {
		return nil, s.claimDeadlinesErr
	}
	return s.tStore.ClaimDeadlines(ctx, machine, owner, now, lease, limit)
}

func (s *failStore) FindKey(ctx context.Context, machine, id, key string) (Entry, bool, error) {
	s.finds++
	if s.findErr != nil {
		return Entry{}, false, s.findErr
	}
	return s.tStore.FindKey(ctx, machine, id, key)
}

// fixedStore returns what it is given: a snapshot (when ok), the log after it, and the
// past before it (what Log returns).
type fixedStore struct {
	Store           // nil: the outbox and deadlines are never asked for
	snap            tSnapshot
	ok              bool
	log, past       []tEntryLog
	loadErr, logErr error
	after           int64 // what Log was asked for
}

func (s *fixedStore) Commit(context.Context, *Commit) error { return errors.New("read only") }

func (s *fixedStore) Load(_ context.Context, _, id string) (Loaded, error) {
	if s.loadErr != nil {
		return Loaded{}, s.loadErr
	}
	var l Loaded
	if s.ok {
		if s.snap.ID == "" {
			// Snapshots name the machine they are of.
			s.snap.ID = id
			defer func() { s.snap.ID = "" }()
		}
		b, err := json.Marshal(s.snap)
		if err != nil {
			return l, err
		}
		l.Snapshot, l.SnapshotSeq, l.Version, l.State = b, s.snap.Seq, s.snap.Seq, s.snap.State.String()
		if l.Snapshot == nil {
			l.Snapshot = []byte{}
		}
	}
	for _, e := range s.log {
		l.Entries = append(l.Entries, storeEntry(e))
		l.Version, l.State = e.Seq, e.To.String()
	}
	return l, nil
}

func (s *fixedStore) Log(_ context.Context, _, _ string, after int64) ([]Entry, error) {
	s.after = after
	var out []Entry
	for _, e := range s.past {
		out = append(out, storeEntry(e))
	}
	return out, s.logErr
}

func (s *fixedStore) FindKey(context.Context, string, string, string) (Entry, bool, error) {
	return Entry{}, false, nil
}
