package fsmrt_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/fsmgen/fsmgen/fsmrt"
)

func TestRecordJSON(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	b, err := json.Marshal(fsmrt.Record[string, string]{From: "a", To: "b", Event: "go", At: at, Actor: "x"})
	if want := `{"from":"a","to":"b","event":"go","timestamp":"2026-01-02T03:04:05Z","actor":"x"}`; err != nil || string(b) != want {
		t.Errorf("Record JSON %s, %v; want %s", b, err, want)
	}
}

func TestSystemClock(t *testing.T) {
	var c fsmrt.Clock = fsmrt.SystemClock{}
	before := time.Now()
	now := c.Now()
	if now.Before(before) || time.Since(now) > time.Minute {
		t.Errorf("SystemClock.Now() = %v, around %v", now, before)
	}
}
