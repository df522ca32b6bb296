package build_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/fsmgen/fsmgen/generated/build"
)

// TestSeed004CtoIntervention: "cto_intervention: Timeout 1h, Escalation: Human". A task
// left there reaches each level of its timeout, escalate at 150 %. And "return to previous
// state" needs a previous state: a task restored in cto_intervention from a snapshot that
// kept none (one written by hand, or by a program that dropped the memory) cannot be sent
// back, and says so, where a human can still take it.
func TestSeed004CtoIntervention(t *testing.T) {
	ctx := context.Background()
	c := &seedClock{now: seedT0}
	m, _ := seedNew(c)
	seedRun(t, m, seedTo(build.StateInProgress)...)
	for i := 0; i < 2; i++ {
		seedRun(t, m, implFailed)
	}
	seedRun(t, m, developer.do(build.EventImplementationFailed, "Implementation failed 3 times", build.StateCtoIntervention))
	entered := m.EnteredAt()
	for _, p := range []struct {
		after time.Duration
		want  build.TimeoutLevel
	}{{47 * time.Minute, build.LevelNone}, {48 * time.Minute, build.LevelWarn}, {time.Hour, build.LevelAlert}, {90 * time.Minute, build.LevelEscalate}} {
		if got := m.TimeoutLevel(entered.Add(p.after)); got != p.want {
			t.Errorf("after %v in cto_intervention: level %v, want %v", p.after, got, p.want)
		}
	}

	snap := m.Snapshot()
	snap.Remembered = nil
	r, err := build.RestoreTask(snap, &seedHooks{})
	if err != nil {
		t.Fatal(err)
	}
	var nh *build.NoHistoryError
	if _, err := r.FireWith(ctx, build.EventRetry, build.TaskInput{Role: build.RoleCto}); !errors.As(err, &nh) || r.State() != build.StateCtoIntervention {
		t.Fatalf("guided retry with no previous state: %v, now %s", err, r.State())
	}
}
