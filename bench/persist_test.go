package bench_test

import (
	"context"
	"encoding/json"
	"strconv"
	"testing"
	"time"

	"github.com/fsmgen/fsmgen/bench/persist"
	"github.com/fsmgen/fsmgen/fsmrt"
)

// BenchmarkPersist measures one accepted Fire of bench/persist's machine with all that
// persists it: a history record, an idempotency key (a new one each time), the event log
// entry (its context encoded) appended to the memory store, and the snapshot of the
// checkpoint taken on every transition encoded and saved. The machine has made age
// transitions before the ones measured: the cost must not grow with age. One op is one
// Fire; machines are rebuilt off the clock every persistBatch firings.
//
// impl=floor is what a hand-written program must do at least: json.Marshal of an
// equivalent snapshot struct, plus one append of a log record to a slice.
func BenchmarkPersist(b *testing.B) {
	for _, age := range []int{0, 4000} {
		b.Run("machine=age"+strconv.Itoa(age)+"/impl=fsmgen", func(b *testing.B) {
			b.ReportAllocs()
			benchPersistFsmgen(b, age)
		})
		b.Run("machine=age"+strconv.Itoa(age)+"/impl=floor", func(b *testing.B) {
			b.ReportAllocs()
			benchPersistFloor(b, age)
		})
	}
}

const persistBatch = 200

var persistAt = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// persistCycle is the events of the review cycle, from draft back to draft.
var persistCycle = [...]persist.Event{persist.EventReview, persist.EventPublished, persist.EventDraft}

func benchPersistFsmgen(b *testing.B, age int) {
	ctx := context.Background()
	n := 0 // firings of the machine so far: its keys
	var m *persist.Doc
	keys := make([]string, persistBatch)
	fire := func() {
		if _, err := m.FireWith(ctx, persistCycle[n%3], persist.DocInput{Key: keys[n%persistBatch], At: persistAt}); err != nil {
			b.Fatal(err)
		}
		n++
	}
	fresh := func() {
		m = persist.NewDoc(persist.DocNopHooks{})
		m.ID = "doc"
		m.Context = persist.DocContext{Title: "The persistence benchmark", Revision: 3, Owner: "bench"}
		m.SetStore(fsmrt.NewMemoryStore())
		n = 0
		for n < age {
			for i := range keys {
				keys[i] = "key-" + strconv.Itoa(n+i)
			}
			for range min(persistBatch, age-n) {
				fire()
			}
		}
	}
	for i := 0; i < b.N; {
		b.StopTimer()
		fresh()
		for j := range keys {
			keys[j] = "key-" + strconv.Itoa(n+j)
		}
		b.StartTimer()
		for j := 0; j < persistBatch && i < b.N; j++ {
			fire()
			i++
		}
	}
}

// floorSnapshot is a hand-written snapshot of the same machine: what its checkpoint saves.
type floorSnapshot struct {
	Version   int       `json:"version"`
	ID        string    `json:"id"`
	Seq       int64     `json:"seq"`
	State     string    `json:"state"`
	UpdatedAt time.Time `json:"updatedAt"`
	Context   struct {
		Title    string `json:"title"`
		Revision int    `json:"revision"`
		Owner    string `json:"owner"`
	} `json:"context"`
	CreatedAt time.Time `json:"createdAt"`
	EnteredAt time.Time `json:"enteredAt"`
}

// floorRecord is a hand-written log record: the transition and its key.
type floorRecord struct {
	Seq      int64
	From, To string
	Event    string
	Key      string
	At       time.Time
}

var floorStates = [...]string{"draft", "review", "published"}

func benchPersistFloor(b *testing.B, age int) {
	var s floorSnapshot
	var log []floorRecord
	var saved []byte
	keys := make([]string, persistBatch)
	state := 0
	fire := func(key string) {
		from := state
		state = (state + 1) % 3
		s.Seq++
		s.State, s.UpdatedAt, s.EnteredAt = floorStates[state], persistAt, persistAt
		log = append(log, floorRecord{Seq: s.Seq, From: floorStates[from], To: floorStates[state], Event: floorStates[state], Key: key, At: persistAt})
		var err error
		if saved, err = json.Marshal(&s); err != nil {
			b.Fatal(err)
		}
	}
	fresh := func() {
		s = floorSnapshot{Version: 1, ID: "doc", CreatedAt: persistAt, EnteredAt: persistAt, State: "draft"}
		s.Context.Title, s.Context.Revision, s.Context.Owner = "The persistence benchmark", 3, "bench"
		log, state = log[:0], 0
		for range age {
			fire("")
		}
	}
	for i := 0; i < b.N; {
		b.StopTimer()
		fresh()
		for j := range keys {
			keys[j] = "key-" + strconv.Itoa(j)
		}
		b.StartTimer()
		for j := 0; j < persistBatch && i < b.N; j++ {
			fire(keys[j])
			i++
		}
	}
	_ = saved
}
