package cli

import (
	"context"

	"github.com/fsmgen/fsmgen/fsmrt"
)

// StoreOpener opens the stores whose DSN it recognises, for fsmgen diff --store. The
// fsmgen command links none, so that it needs no database driver; each store's module
// builds an fsmgen that registers its own (store/postgres/cmd/fsmgen,
// store/sqlite/cmd/fsmgen).
type StoreOpener struct {
	// Name names the store in messages ("postgres").
	Name string
	// Match reports whether dsn names a store of this kind.
	Match func(dsn string) bool
	// Open opens the store; close releases it.
	Open func(ctx context.Context, dsn string) (store fsmrt.Store, close func(), err error)
}

var storeOpeners []StoreOpener

// RegisterStore makes fsmgen diff --store open the stores o recognises. A main package
// calls it before Run.
func RegisterStore(o StoreOpener) { storeOpeners = append(storeOpeners, o) }

// storeFor returns the opener of dsn's store.
func storeFor(dsn string) (StoreOpener, bool) {
	for _, o := range storeOpeners {
		if o.Match(dsn) {
			return o, true
		}
	}
	return StoreOpener{}, false
}
