package sqlite

import (
	"testing"

	"github.com/fsmgen/fsmgen/fsmrt"
	"github.com/fsmgen/fsmgen/fsmrt/storetest"
)

func TestConformance(t *testing.T) {
	t.Run("FreshStores", func(t *testing.T) {
		storetest.RunComplete(t, func(t *testing.T) fsmrt.Store { return openStore(t, tempPath(t)) })
	})
	t.Run("SharedStore", func(t *testing.T) {
		s := openStore(t, tempPath(t))
		storetest.RunComplete(t, func(*testing.T) fsmrt.Store { return s })
	})
	t.Run("SynchronousNormal", func(t *testing.T) {
		s := openStore(t, tempPath(t), WithSynchronousNormal())
		storetest.RunComplete(t, func(*testing.T) fsmrt.Store { return s })
	})
}
