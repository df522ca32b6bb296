package scaleout

import (
	"bytes"
	"encoding/binary"
	"io"
	"net"
	"net/url"
	"sync"
)

// CutProxy is a TCP proxy between the workers and a PostgreSQL server that loses the
// connection in the middle of commits: it reads the messages the client sends, and of
// every Every-th COMMIT (the simple query "commit" a pgx transaction ends with) it
// either drops the COMMIT and closes both sides (the transaction is rolled back by the
// server) or forwards it and closes both sides once the server has answered, without
// passing the answer on (the transaction is committed): both in turn. Either way the
// client cannot tell whether it committed (postgres.ErrCommitUnknown), which is what a
// connection lost mid-commit does to a worker.
type CutProxy struct {
	ln     net.Listener
	target string
	every  int

	mu      sync.Mutex
	commits int
	// CutBefore and CutAfter count the COMMITs dropped, and those committed whose
	// answer was dropped.
	cutBefore, cutAfter int
	conns               map[net.Conn]struct{}
	closed              bool
	wg                  sync.WaitGroup
}

// StartCutProxy listens on a free port of 127.0.0.1 and proxies to the server of dsn,
// cutting every every-th COMMIT.
func StartCutProxy(dsn string, every int) (*CutProxy, error) {
	u, err := url.Parse(dsn)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &CutProxy{ln: ln, target: u.Host, every: max(every, 1), conns: map[net.Conn]struct{}{}}
	p.wg.Add(1)
	go p.accept()
	return p, nil
}

// DSN returns dsn with its host the proxy's.
func (p *CutProxy) DSN(dsn string) string {
	u, err := url.Parse(dsn)
	if err != nil {
		return dsn
	}
	u.Host = p.ln.Addr().String()
	return u.String()
}

// Cuts returns how many COMMITs were dropped before the server saw them, and how many
// were committed and their answer dropped.
func (p *CutProxy) Cuts() (before, after int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.cutBefore, p.cutAfter
}

// Close stops the proxy and closes its connections.
func (p *CutProxy) Close() {
	p.mu.Lock()
	p.closed = true
	for c := range p.conns {
		c.Close()
	}
	p.mu.Unlock()
	p.ln.Close()
	p.wg.Wait()
}

// track records a connection to close with the proxy; it reports false once closed.
func (p *CutProxy) track(c net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return false
	}
	p.conns[c] = struct{}{}
	return true
}

func (p *CutProxy) untrack(c net.Conn) {
	p.mu.Lock()
	delete(p.conns, c)
	p.mu.Unlock()
}

func (p *CutProxy) accept() {
	defer p.wg.Done()
	for {
		client, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			p.serve(client)
		}()
	}
}

// cutMode is what the proxy does to the COMMIT it is passing.
type cutMode int

const (
	pass cutMode = iota
	dropCommit
	dropAnswer
)

// decide counts a COMMIT and says whether, and how, to cut it.
func (p *CutProxy) decide() cutMode {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.commits++
	if p.commits%p.every != 0 {
		return pass
	}
	if p.cutBefore <= p.cutAfter {
		p.cutBefore++
		return dropCommit
	}
	p.cutAfter++
	return dropAnswer
}

// serve proxies one connection.
func (p *CutProxy) serve(client net.Conn) {
	server, err := net.Dial("tcp", p.target)
	if err != nil {
		client.Close()
		return
	}
	if !p.track(client) || !p.track(server) {
		client.Close()
		server.Close()
		return
	}
	defer p.untrack(client)
	defer p.untrack(server)
	var once sync.Once
	cut := func() { once.Do(func() { client.Close(); server.Close() }) }
	defer cut()
	// dropping: the answer to a COMMIT forwarded is not passed on; its first bytes
	// close the connection.
	var mu sync.Mutex
	dropping := false
	done := make(chan struct{})
	go func() {
		defer close(done)
		buf := make([]byte, 32<<10)
		for {
			n, err := server.Read(buf)
			mu.Lock()
			drop := dropping
			mu.Unlock()
			if n > 0 && drop {
				cut()
				return
			}
			if n > 0 {
				if _, werr := client.Write(buf[:n]); werr != nil {
					cut()
					return
				}
			}
			if err != nil {
				cut()
				return
			}
		}
	}()
	p.clientToServer(client, server, func() cutMode { return p.decide() }, func() {
		mu.Lock()
		dropping = true
		mu.Unlock()
	})
	cut()
	<-done
}

// commitQuery is the body of the simple query message pgx ends a transaction with.
var commitQuery = []byte("commit\x00")

// clientToServer forwards the client's messages to the server, message by message: the
// startup message (no type byte), then typed ones. A COMMIT decide says to cut is dropped
// (and the connection closed), or forwarded after drop makes its answer dropped.
func (p *CutProxy) clientToServer(client, server net.Conn, decide func() cutMode, drop func()) {
	var head [5]byte
	// The startup message: its length, then the rest.
	if _, err := io.ReadFull(client, head[:4]); err != nil {
		return
	}
	n := int(binary.BigEndian.Uint32(head[:4]))
	if n < 4 || n > 1<<20 {
		return
	}
	msg := make([]byte, n)
	copy(msg, head[:4])
	if _, err := io.ReadFull(client, msg[4:]); err != nil {
		return
	}
	if _, err := server.Write(msg); err != nil {
		return
	}
	for {
		if _, err := io.ReadFull(client, head[:]); err != nil {
			return
		}
		n := int(binary.BigEndian.Uint32(head[1:]))
		if n < 4 || n > 1<<30 {
			return
		}
		msg := make([]byte, 1+n)
		copy(msg, head[:])
		if _, err := io.ReadFull(client, msg[5:]); err != nil {
			return
		}
		if head[0] == 'Q' && bytes.EqualFold(msg[5:], commitQuery) {
			switch decide() {
			case dropCommit:
				return
			case dropAnswer:
				drop()
			}
		}
		if _, err := server.Write(msg); err != nil {
			return
		}
	}
}
