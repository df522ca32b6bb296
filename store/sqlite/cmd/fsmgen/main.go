// Command fsmgen is fsmgen with the SQLite store linked in, for what needs a store:
// fsmgen diff --store FILE counts the instances stored in the SQLite file FILE that each
// change of a spec concerns, and fsmgen inspect --store FILE serves the inspector of its
// machines on 127.0.0.1. Everything else is the fsmgen command's.
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/fsmgen/fsmgen/fsmrt"
	"github.com/fsmgen/fsmgen/internal/cli"
	"github.com/fsmgen/fsmgen/store/sqlite"
)

func main() {
	cli.RegisterStore(cli.StoreOpener{
		Name: "sqlite",
		// A file that exists: a store is counted, never created.
		Match: func(dsn string) bool {
			fi, err := os.Stat(dsn)
			return err == nil && fi.Mode().IsRegular()
		},
		Open: func(ctx context.Context, dsn string) (fsmrt.Store, func(), error) {
			s, err := sqlite.Open(ctx, dsn)
			if err != nil {
				return nil, nil, fmt.Errorf("%s: %w", dsn, err)
			}
			return s, func() { s.Close() }, nil
		},
	})
	os.Exit(cli.Run(context.Background(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
