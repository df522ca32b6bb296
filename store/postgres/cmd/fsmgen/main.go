// Command fsmgen is fsmgen with the PostgreSQL store linked in, for what needs a store:
// fsmgen diff --store postgres://... counts the stored instances each change of a spec
// concerns, and fsmgen inspect --store postgres://... serves the inspector of its machines on
// 127.0.0.1. Everything else is the fsmgen command's.
package main

import (
	"context"
	"os"
	"strings"

	"github.com/fsmgen/fsmgen/fsmrt"
	"github.com/fsmgen/fsmgen/internal/cli"
	"github.com/fsmgen/fsmgen/store/postgres"
)

func main() {
	cli.RegisterStore(cli.StoreOpener{
		Name: "postgres",
		Match: func(dsn string) bool {
			return strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") || strings.Contains(dsn, "dbname=")
		},
		Open: func(ctx context.Context, dsn string) (fsmrt.Store, func(), error) {
			s, err := postgres.Open(ctx, dsn)
			if err != nil {
				return nil, nil, err
			}
			return s, s.Close, nil
		},
	})
	os.Exit(cli.Run(context.Background(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
