package inspect_test

import (
	"testing"

	"github.com/fsmgen/fsmgen/fsmrt"
	"github.com/fsmgen/fsmgen/inspect/inspecttest"
)

// TestMemoryStore runs the inspector's page checks over the memory store; the SQLite and
// PostgreSQL stores run the same in the inspect/browsertest module.
func TestMemoryStore(t *testing.T) {
	inspecttest.Run(t, fsmrt.NewMemoryStore())
}
