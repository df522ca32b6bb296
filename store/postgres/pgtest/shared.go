package pgtest

import (
	"context"
	"errors"
	"sync"
	"testing"
)

// shared is the server of [Shared], started by the first test that asks for it.
var shared struct {
	mu      sync.Mutex
	started bool
	srv     *Server
	err     error
}

// Shared returns the one server that the tests of a test binary share, starting it (with
// the zero Options) the first time a test asks for it; tests that need a database of their
// own create it with [Server.CreateDatabase]. Like [New], it skips the test when the
// PostgreSQL binaries are not installed, or fails it when the environment variable CI is
// true. A server that failed to start fails every test that asks for it, without another
// attempt. [StopShared], called from TestMain once the tests have run, stops it:
//
//	func TestMain(m *testing.M) {
//		code := m.Run()
//		pgtest.StopShared()
//		os.Exit(code)
//	}
func Shared(tb testing.TB) *Server {
	tb.Helper()
	shared.mu.Lock()
	if !shared.started {
		shared.started = true
		shared.srv, shared.err = Start(context.Background(), Options{})
	}
	srv, err := shared.srv, shared.err
	shared.mu.Unlock()
	if errors.Is(err, ErrNotInstalled) {
		notInstalled(tb, err)
	}
	if err != nil {
		tb.Fatal(err)
	}
	return srv
}

// StopShared stops the server [Shared] started, if any, and removes its directory. A later
// Shared starts a new one.
func StopShared() {
	shared.mu.Lock()
	defer shared.mu.Unlock()
	if shared.srv != nil {
		shared.srv.Stop()
	}
	shared.started, shared.srv, shared.err = false, nil, nil
}
