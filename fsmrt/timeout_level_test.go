package fsmrt

import (
	"reflect"
	"testing"
)

// TestTimeoutLevelAtTheExpiry: a level that falls due with the expiry (the 100 % level a
// timeout without levels reports) is not armed beside it, so that the log does not depend
// on which of the two a scheduler claims first; levels before it are.
func TestTimeoutLevelAtTheExpiry(t *testing.T) {
	st := newStore()
	r, _ := timerRig(st, draftTimesOut, func(d *tDef) {
		d.States[sDraft].Levels, d.States[sDraft].LevelValues = []int{50, 100}, []int{1, 2}
	})
	if err := r.m.Create(bg, tIn{}); err != nil {
		t.Fatal(err)
	}
	if got, want := armed(t, st), []string{"level:info@5m0s:", "expiry@10m0s:submit"}; !reflect.DeepEqual(got, want) {
		t.Errorf("armed %v, want %v", got, want)
	}
	// Without an expiry the level at 100 % is armed.
	st = newStore()
	r, _ = timerRig(st, draftTimesOut, func(d *tDef) {
		d.States[sDraft].Levels, d.States[sDraft].LevelValues = []int{50, 100}, []int{1, 2}
		d.States[sDraft].Expires = false
	})
	if err := r.m.Create(bg, tIn{}); err != nil {
		t.Fatal(err)
	}
	if got, want := armed(t, st), []string{"level:info@5m0s:", "level:warning@10m0s:"}; !reflect.DeepEqual(got, want) {
		t.Errorf("armed without an expiry %v, want %v", got, want)
	}
}
