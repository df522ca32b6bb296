package storetest

import (
	"context"
	"errors"
	"reflect"
	"testing"

	"github.com/fsmgen/fsmgen/fsmrt"
)

// testDelayDeadlines: a state with several delays arms a deadline per delay beside its
// timeout's; handling one keeps the others; entering the state again arms them all again,
// the one handled included, from then; leaving it disarms them.
func testDelayDeadlines(t *testing.T, s *suite) {
	ctx := context.Background()
	id := s.id("d")
	short, long := fsmrt.DelayDeadline("b.after.1m"), fsmrt.DelayDeadline("b.after.5m")
	c := s.commit(id, 1, "", false)
	c.Rearm, c.Deadlines = true, []fsmrt.Deadline{dl(short, at(60), "b.after.1m", 0), dl("expiry", at(100), "expire", 0), dl(long, at(300), "b.after.5m", 0)}
	if err := s.Commit(ctx, c); err != nil {
		t.Fatal(err)
	}
	if got, want := s.claimDue(t, "s1", at(60)), []string{id + "/" + short + "@60:b.after.1m:0"}; !reflect.DeepEqual(got, want) {
		t.Errorf("due at 60: %v, want %v", got, want)
	}
	// Its event taken without leaving the state: the delay handled, the others armed.
	c = s.commit(id, 2, "", false)
	c.Fired = short
	if err := s.Commit(ctx, c); err != nil {
		t.Fatal(err)
	}
	c = s.commit(id, 3, "", false)
	c.Fired = short
	if err := s.Commit(ctx, c); !errors.Is(err, fsmrt.ErrStoreConflict) {
		t.Errorf("handling the delay twice: %v", err)
	}
	if got, want := s.claimDue(t, "s2", at(400)), []string{id + "/expiry@100:expire:0", id + "/" + long + "@300:b.after.5m:0"}; !reflect.DeepEqual(got, want) {
		t.Errorf("due at 400: %v, want %v", got, want)
	}
	// Entered again at 400: every delay again, from then.
	c = s.commit(id, 3, "", false)
	c.Rearm, c.Deadlines = true, []fsmrt.Deadline{dl(short, at(460), "b.after.1m", 0), dl(long, at(700), "b.after.5m", 0)}
	if err := s.Commit(ctx, c); err != nil {
		t.Fatal(err)
	}
	if got, want := s.claimDue(t, "s3", at(1000)), []string{id + "/" + short + "@460:b.after.1m:0", id + "/" + long + "@700:b.after.5m:0"}; !reflect.DeepEqual(got, want) {
		t.Errorf("due after entering again: %v, want %v", got, want)
	}
	// Left: none.
	c = s.commit(id, 4, "", false)
	c.Rearm = true
	if err := s.Commit(ctx, c); err != nil {
		t.Fatal(err)
	}
	if got := s.claimDue(t, "s4", at(2000)); len(got) != 0 {
		t.Errorf("after leaving: %v", got)
	}
}
