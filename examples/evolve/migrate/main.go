// Command migrate moves the tickets stored in an SQLite file or a PostgreSQL database under
// older versions of the ticket spec to version 5, a batch at a time, and prints what it
// found and did. The evolution example's tests kill it at random points and run it again.
//
//	migrate -db tickets.db [-dry-run] [-batch N]
//	migrate -postgres DSN [-dry-run] [-batch N]
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"sort"
	"time"

	v5 "github.com/fsmgen/fsmgen/examples/evolve/v5"
	"github.com/fsmgen/fsmgen/fsmrt"
	"github.com/fsmgen/fsmgen/store/postgres"
	"github.com/fsmgen/fsmgen/store/sqlite"
)

func main() {
	db := flag.String("db", "", "the SQLite `file`")
	dsn := flag.String("postgres", "", "the PostgreSQL `DSN`")
	dry := flag.Bool("dry-run", false, "change nothing; say what would move")
	batch := flag.Int("batch", 100, "instances read at a `time`")
	pause := flag.Duration("pause", 0, "wait this long after each instance (for the tests that kill it)")
	flag.Parse()
	ctx := context.Background()
	var store fsmrt.Store
	switch {
	case *db != "" && *dsn == "":
		s, err := sqlite.Open(ctx, *db)
		if err != nil {
			fail(err)
		}
		defer s.Close()
		store = s
	case *dsn != "" && *db == "":
		s, err := postgres.Open(ctx, *dsn)
		if err != nil {
			fail(err)
		}
		defer s.Close()
		store = s
	default:
		fmt.Fprintln(os.Stderr, "migrate: give -db FILE or -postgres DSN")
		os.Exit(2)
	}
	r, err := v5.MigrateTickets(ctx, store, v5.TicketNopHooks{}, fsmrt.MigrateOptions{Batch: *batch, DryRun: *dry,
		Progress: func(string, string, error) { time.Sleep(*pause) }})
	for spec, states := range sorted(r.Before) {
		fmt.Printf("before %s:%s\n", spec, states)
	}
	fmt.Printf("checked %d, current %d, moved %d, refused %d\n", r.Checked, r.Current, r.Moved, len(r.Refused))
	for _, rf := range r.Refused {
		fmt.Printf("refused %s: %v\n", rf.ID, rf.Err)
	}
	if err != nil {
		fail(err)
	}
}

// sorted lists the counts by spec in order, each as " state=n" pairs in order.
func sorted(m map[string]map[string]int) map[string]string {
	out := map[string]string{}
	for spec, states := range m {
		var names []string
		for s := range states {
			names = append(names, s)
		}
		sort.Strings(names)
		text := ""
		for _, s := range names {
			text += fmt.Sprintf(" %s=%d", s, states[s])
		}
		out[spec] = text
	}
	return out
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "migrate:", err)
	os.Exit(1)
}
