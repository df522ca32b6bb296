package postgres

import (
	"context"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// silentConn is a connection to the server that a test can silence, as a network that
// drops every packet without closing anything would: what the client writes is lost, and
// what the server sends is never read. Reads still end at the connection's deadlines.
type silentConn struct {
	net.Conn
	silent atomic.Bool
}

// Write sends p, or loses it when the connection is silent.
func (c *silentConn) Write(p []byte) (int, error) {
	if c.silent.Load() {
		return len(p), nil
	}
	return c.Conn.Write(p)
}

// Read reads from the server, or, when the connection is silent, loses what comes until
// a deadline or an error ends the read.
func (c *silentConn) Read(p []byte) (int, error) {
	for {
		n, err := c.Conn.Read(p)
		if err != nil || !c.silent.Load() {
			return n, err
		}
	}
}

// TestWakeAfterSilentConnection: a listening connection that goes silent, which neither
// side closes, is found dead by its ping (listenPing, shortened here), and the store
// listens again on a new connection, waking every watch: a commit made while nobody heard
// is not missed, and commits after it wake the watch as before.
func TestWakeAfterSilentConnection(t *testing.T) {
	ctx := context.Background()
	dsn := newDatabase(t)
	var mu sync.Mutex
	var conns []*silentConn
	st := openStoreWrapping(t, dsn, func(conn net.Conn) net.Conn {
		sc := &silentConn{Conn: conn}
		mu.Lock()
		conns = append(conns, sc)
		mu.Unlock()
		return sc
	})
	st.wake.ping = 200 * time.Millisecond // before the listener starts
	other := openStore(t, dsn)

	watch := st.WatchWork("test.M")
	defer watch.Close()
	listening(t, st, 1)
	woken := func(what string) {
		t.Helper()
		select {
		case <-watch.C():
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: the watch was not woken in 10s", what)
		}
	}
	woken("the first connection")
	mu.Lock()
	for _, c := range conns { // the listening connection among them
		c.silent.Store(true)
	}
	mu.Unlock()
	start := time.Now()
	if err := other.Commit(ctx, orderCommit("o1", 1, "")); err != nil {
		t.Fatal(err)
	}
	listening(t, st, 2)
	woken("the silent connection replaced")
	t.Logf("a new listening connection %v after the old one went silent", time.Since(start).Round(time.Millisecond))
	for quiet := false; !quiet; { // the wake-ups of the loss and of the new connection, if apart
		select {
		case <-watch.C():
		case <-time.After(200 * time.Millisecond):
			quiet = true
		}
	}
	if err := other.Commit(ctx, orderCommit("o2", 1, "")); err != nil {
		t.Fatal(err)
	}
	woken("a commit on the new connection")
}
