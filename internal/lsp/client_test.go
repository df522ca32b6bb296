package lsp

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fsmgen/fsmgen/internal/testtool"
)

// client is a test's end of a server's connection: it sends requests and notifications
// and collects what the server publishes.
type client struct {
	tb     testing.TB
	srv    *Server
	in     *io.PipeWriter // what the server reads
	w      *writer
	done   chan error
	mu     sync.Mutex
	nextID int
	resps  map[int]chan *message
	diags  map[string][]publishDiagnosticsParams // by URI, in order
	notify chan struct{}
	cancel context.CancelFunc
	what   string // what the test is doing, for its failures
}

// reqTimeout bounds every wait of the tests for an answer: a server that hangs fails the
// test, naming what it waited for.
const reqTimeout = 20 * time.Second

func newClient(tb testing.TB, opts Options) *client {
	tb.Helper()
	srv, err := New(opts)
	if err != nil {
		tb.Fatal(err)
	}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	c := &client{tb: tb, srv: srv, in: inW, w: &writer{w: inW}, done: make(chan error, 1),
		resps: map[int]chan *message{}, diags: map[string][]publishDiagnosticsParams{},
		notify: make(chan struct{}, 1), cancel: cancel}
	go func() {
		err := srv.Serve(ctx, inR, outW)
		outW.Close()
		c.done <- err
	}()
	go c.read(outR)
	tb.Cleanup(func() {
		cancel()
		inW.Close()
		srv.Wait()
	})
	c.request("initialize", map[string]any{"capabilities": map[string]any{}})
	c.send("initialized", map[string]any{})
	return c
}

func (c *client) read(r io.Reader) {
	br := bufio.NewReader(r)
	for {
		body, err := readMessage(br)
		if err != nil {
			return
		}
		var m message
		if err := json.Unmarshal(body, &m); err != nil {
			c.tb.Errorf("the server wrote malformed JSON: %v: %s", err, body)
			return
		}
		c.mu.Lock()
		switch {
		case m.Method == "textDocument/publishDiagnostics":
			var p publishDiagnosticsParams
			json.Unmarshal(m.Params, &p)
			c.diags[p.URI] = append(c.diags[p.URI], p)
			select {
			case c.notify <- struct{}{}:
			default:
			}
		case m.ID != nil && m.Method == "":
			var id int
			json.Unmarshal(*m.ID, &id)
			if ch := c.resps[id]; ch != nil {
				ch <- &m
				delete(c.resps, id)
			}
		}
		c.mu.Unlock()
	}
}

func (c *client) send(method string, params any) {
	c.tb.Helper()
	if err := c.w.notify(method, params); err != nil {
		c.tb.Fatalf("%s: %v", method, err)
	}
}

// call sends a request and waits for its answer: the result, or the error's message.
func (c *client) call(method string, params any) (json.RawMessage, *rpcError) {
	c.tb.Helper()
	c.mu.Lock()
	c.nextID++
	id := c.nextID
	ch := make(chan *message, 1)
	c.resps[id] = ch
	c.mu.Unlock()
	raw, _ := json.Marshal(params)
	idRaw := json.RawMessage(fmt.Sprint(id))
	if err := c.w.write(&message{ID: &idRaw, Method: method, Params: raw}); err != nil {
		c.tb.Fatalf("%s: %v", method, err)
	}
	select {
	case m := <-ch:
		return m.Result, m.Error
	case err := <-c.done:
		c.tb.Fatalf("%sthe server stopped while answering %s: %v", c.what, method, err)
	case <-time.After(reqTimeout):
		c.tb.Fatalf("%sno answer to %s %s within %s", c.what, method, raw, reqTimeout)
	}
	return nil, nil
}

// request is call for a request that must succeed, decoding its result into a value of
// type any (or returning the raw JSON).
func (c *client) request(method string, params any) json.RawMessage {
	c.tb.Helper()
	res, err := c.call(method, params)
	if err != nil {
		c.tb.Fatalf("%s: %v", method, err.Message)
	}
	return res
}

func decodeAs[T any](tb testing.TB, raw json.RawMessage) T {
	tb.Helper()
	var v T
	if err := json.Unmarshal(raw, &v); err != nil {
		tb.Fatalf("decoding %s: %v", raw, err)
	}
	return v
}

// open opens a document of the given text at path.
func (c *client) open(path, text string) string {
	uri := uriOf(path)
	c.send("textDocument/didOpen", didOpenParams{TextDocument: textDocumentItem{URI: uri, LanguageID: "yaml", Version: 1, Text: text}})
	return uri
}

// change replaces the whole text.
func (c *client) change(uri string, version int, text string) {
	c.send("textDocument/didChange", didChangeParams{TextDocument: versionedTextDocumentIdentifier{URI: uri, Version: version},
		ContentChanges: []contentChange{{Text: text}}})
}

// waitDiags waits for the diagnostics of a document's version.
func (c *client) waitDiags(uri string, version int) []Diagnostic {
	c.tb.Helper()
	deadline := time.After(reqTimeout)
	for {
		c.mu.Lock()
		for _, p := range c.diags[uri] {
			if p.Version != nil && *p.Version == version {
				c.mu.Unlock()
				return p.Diagnostics
			}
		}
		c.mu.Unlock()
		select {
		case <-c.notify:
		case <-time.After(10 * time.Millisecond):
		case <-deadline:
			c.tb.Fatalf("%sno diagnostics for version %d of %s within %s", c.what, version, uri, reqTimeout)
		}
	}
}

// pos is a position in a document.
func pos(uri string, p Position) textDocumentPositionParams {
	return textDocumentPositionParams{TextDocument: textDocumentIdentifier{URI: uri}, Position: p}
}

// marked splits a text with one "|" marking the cursor into the text and the position.
func marked(tb testing.TB, s string) (string, Position) {
	tb.Helper()
	i := strings.Index(s, "|")
	if i < 0 || strings.Count(s, "|") != 1 {
		tb.Fatalf("no single | in %q", s)
	}
	t := newText(s[:i] + s[i+1:])
	return t.s, t.position(i)
}

// seeds returns the seed specs (examples/*/*.fsm.yaml) and a statechart, by path.
func seeds(tb testing.TB) []string {
	tb.Helper()
	r := testtool.Root(tb)
	paths, err := filepath.Glob(filepath.Join(r, "examples", "*", "*.fsm.yaml"))
	if err != nil || len(paths) < 5 {
		tb.Fatalf("seed specs: %v (%d found)", err, len(paths))
	}
	return append(paths, filepath.Join(r, "internal", "lower", "testdata", "build", "chart_features.fsm.yaml"))
}

// copySpec copies a spec into a new directory (with its lock, when it has one) and returns
// the copy's path and text.
func copySpec(tb testing.TB, path string) (string, string) {
	tb.Helper()
	dir := tb.TempDir()
	data, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	out := filepath.Join(dir, filepath.Base(path))
	if err := os.WriteFile(out, data, 0o644); err != nil {
		tb.Fatal(err)
	}
	lock := strings.TrimSuffix(path, ".yaml") + ".lock"
	if b, err := os.ReadFile(lock); err == nil {
		os.WriteFile(strings.TrimSuffix(out, ".yaml")+".lock", b, 0o644)
	}
	return out, string(data)
}

// diagContext is a code action request's context holding diagnostics ds.
func diagContext(ds ...Diagnostic) (ctx struct {
	Diagnostics []json.RawMessage `json:"diagnostics"`
}) {
	for _, d := range ds {
		raw, _ := json.Marshal(d)
		ctx.Diagnostics = append(ctx.Diagnostics, raw)
	}
	return ctx
}
