package postgres

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/fsmgen/fsmgen/fsmrt"
)

// BenchmarkCommitNotify measures what the NOTIFY of a commit that arms a deadline costs
// (wake.go): the store's commit ("notify") against the same commit whose NOTIFY statement
// is replaced by one that sends nothing, in the same batch ("quiet"), serial and in
// parallel, with one listening store watching the machine.
func BenchmarkCommitNotify(b *testing.B) {
	dsn := newDatabase(b)
	st := openStore(b, dsn)
	listener := openStore(b, dsn)
	w := listener.WatchWork("bench")
	defer w.Close()
	go func() {
		for range w.C() {
		}
	}()
	quiet := *st
	quiet.sql.notify = `SELECT WHERE $1::text IS NULL AND $2::text IS NULL AND $3::text IS NULL`
	for _, c := range []struct {
		name   string
		commit committer
	}{{"notify", st.Commit}, {"quiet", quiet.Commit}} {
		b.Run(c.name+"/serial", func(b *testing.B) { benchArming(b, c.commit, false) })
		b.Run(c.name+"/parallel", func(b *testing.B) { benchArming(b, c.commit, true) })
	}
}

// benchArming commits versions of new instances, each arming a deadline.
func benchArming(b *testing.B, commit committer, parallel bool) {
	ctx := context.Background()
	run := func(id string, next func() bool) {
		for seq := int64(1); next(); seq++ {
			c := testCommit("bench", id, seq, "", `{"event":"go"}`)
			c.Rearm, c.Deadlines = true, []fsmrt.Deadline{{Name: "expiry", At: c.Entry.At.Add(time.Hour), State: c.State, Event: "expire"}}
			if err := commit(ctx, c); err != nil {
				b.Error(err)
				return
			}
		}
	}
	b.ReportAllocs()
	if !parallel {
		n := 0
		run(fmt.Sprint("arm-", benchInstances.Add(1)), func() bool { n++; return n <= b.N })
		return
	}
	b.RunParallel(func(pb *testing.PB) { run(fmt.Sprint("arm-", benchInstances.Add(1)), pb.Next) })
}
