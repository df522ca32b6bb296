package lsp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// frame writes one message as the base protocol frames it.
func frame(body string, headers ...string) string {
	return strings.Join(append(headers, fmt.Sprintf("Content-Length: %d", len(body))), "\r\n") + "\r\n\r\n" + body
}

// serve runs a server on the given input to its end and returns what it wrote, each
// message's JSON, and Serve's error.
func serve(t *testing.T, input string) ([]message, error) {
	t.Helper()
	srv, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), reqTimeout)
	defer cancel()
	err = srv.Serve(ctx, strings.NewReader(input), &out)
	srv.Wait()
	var msgs []message
	r := bufio.NewReader(&out)
	for {
		body, rerr := readMessage(r)
		if rerr != nil {
			break
		}
		var m message
		if err := json.Unmarshal(body, &m); err != nil {
			t.Fatalf("malformed output %s: %v", body, err)
		}
		msgs = append(msgs, m)
	}
	return msgs, err
}

// TestFraming: the base protocol's framing, and the answers to what is not a request the
// server knows.
func TestFraming(t *testing.T) {
	in := frame(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`, "Content-Type: application/vscode-jsonrpc; charset=utf-8") +
		"content-length: 2\r\n\r\n{]" + // malformed JSON: a parse error, and the server goes on
		frame(`{"jsonrpc":"2.0","id":"two","method":"textDocument/formatting","params":{}}`) +
		frame(`{"jsonrpc":"2.0","method":"$/unknownNotification","params":{}}`) +
		frame(`{"jsonrpc":"2.0","id":3,"method":"textDocument/hover","params":{"textDocument":{"uri":"file:///nowhere.fsm.yaml"},"position":{"line":0,"character":0}}}`) +
		frame(`{"jsonrpc":"2.0","id":4,"method":"textDocument/hover","params":[1,2]}`) +
		frame(`{"jsonrpc":"2.0","id":5,"method":"shutdown"}`) +
		frame(`{"jsonrpc":"2.0","id":6,"method":"textDocument/hover","params":{}}`) +
		frame(`{"jsonrpc":"2.0","method":"exit"}`)
	msgs, err := serve(t, in)
	if err != nil {
		t.Fatalf("Serve: %v", err)
	}
	want := []struct {
		id   string
		code int
	}{{"1", 0}, {"", codeParseError}, {`"two"`, codeMethodNotFound}, {"3", codeInvalidParams}, {"4", codeInvalidParams}, {"5", 0}, {"6", codeInvalidRequest}}
	if len(msgs) != len(want) {
		t.Fatalf("%d answers, want %d: %+v", len(msgs), len(want), msgs)
	}
	for i, w := range want {
		m := msgs[i]
		id := ""
		if m.ID != nil {
			id = string(*m.ID)
		}
		code := 0
		if m.Error != nil {
			code = m.Error.Code
		}
		if id != w.id && !(w.id == "" && id == "null") || code != w.code {
			t.Errorf("answer %d: id %s, error %+v; want id %s, code %d", i, id, m.Error, w.id, w.code)
		}
	}
	var init struct {
		Capabilities map[string]any `json:"capabilities"`
	}
	json.Unmarshal(msgs[0].Result, &init)
	for _, c := range []string{"textDocumentSync", "completionProvider", "hoverProvider", "definitionProvider", "referencesProvider",
		"renameProvider", "documentSymbolProvider", "codeActionProvider"} {
		if init.Capabilities[c] == nil {
			t.Errorf("initialize does not announce %s", c)
		}
	}
}

// TestEnds: exit without shutdown, a stream that ends, and a broken frame end Serve with
// an error; shutdown then exit ends it with none.
func TestEnds(t *testing.T) {
	for _, tc := range []struct {
		in   string
		fail bool
	}{
		{frame(`{"jsonrpc":"2.0","id":1,"method":"shutdown"}`) + frame(`{"jsonrpc":"2.0","method":"exit"}`), false},
		{frame(`{"jsonrpc":"2.0","method":"exit"}`), true},
		{frame(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`), true},
		{"Content-Length: x\r\n\r\n{}", true},
		{"Content-Length: 100\r\n\r\n{}", true},
		{"no header at all\r\n\r\n", true},
		{fmt.Sprintf("Content-Length: %d\r\n\r\n", maxMessage+1), true},
	} {
		if _, err := serve(t, tc.in); (err != nil) != tc.fail {
			t.Errorf("%.60q: Serve: %v", tc.in, err)
		}
	}
}

// TestDebounce: changes that come faster than the debounce are checked once, for the last
// version (the first, after a quiet spell, may be checked at once); several changes in one
// notification apply in order.
func TestDebounce(t *testing.T) {
	c := newClient(t, Options{Debounce: 300 * time.Millisecond})
	uri := c.open(filepath.Join(t.TempDir(), "door.fsm.yaml"), miniSpec)
	c.waitDiags(uri, 1)
	text := miniSpec
	at := newText(text).position(strings.Index(text, "to: open }") + 8)
	for v := 2; v <= 10; v++ {
		// Type into a name, two changes a notification.
		c.send("textDocument/didChange", didChangeParams{TextDocument: versionedTextDocumentIdentifier{URI: uri, Version: v},
			ContentChanges: []contentChange{{Range: &Range{Start: at, End: at}, Text: "x"}, {Range: &Range{Start: at, End: Position{at.Line, at.Character + 1}}, Text: "yz"}}})
		text = newText(text).apply(contentChange{Range: &Range{Start: at, End: at}, Text: "yz"})
	}
	ds := c.waitDiags(uri, 10)
	if len(ds) != 3 || !strings.Contains(ds[2].Message, `unknown state "openyzyzyzyzyzyzyzyzyz"`) {
		t.Errorf("diagnostics of the last version: %v", ds)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, p := range c.diags[uri] {
		if p.Version != nil && *p.Version > 2 && *p.Version < 10 {
			t.Errorf("version %d was checked: the changes were not debounced", *p.Version)
		}
	}
}

// TestClose: closing a document clears its diagnostics; requests about it fail.
func TestClose(t *testing.T) {
	c := newClient(t, Options{})
	uri := c.open(filepath.Join(t.TempDir(), "door.fsm.yaml"), strings.Replace(miniSpec, "to: open }", "to: opn }", 1))
	if ds := c.waitDiags(uri, 1); len(ds) == 0 {
		t.Fatalf("diagnostics: %v", ds)
	}
	c.send("textDocument/didClose", didCloseParams{TextDocument: textDocumentIdentifier{URI: uri}})
	if _, err := c.call("textDocument/hover", pos(uri, Position{})); err == nil {
		t.Errorf("hover in a closed document: no error")
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	last := c.diags[uri][len(c.diags[uri])-1]
	if len(last.Diagnostics) != 0 {
		t.Errorf("diagnostics after close: %v", last)
	}
}

// TestOtherYAML: a client that starts the server for every YAML file gets nothing for
// those that are not specs: no diagnostics, empty answers.
func TestOtherYAML(t *testing.T) {
	c := newClient(t, Options{})
	dir := t.TempDir()
	other := c.open(filepath.Join(dir, "compose.yaml"), "services: { web: { image: x } }\n")
	if raw := c.request("textDocument/hover", pos(other, Position{0, 2})); string(raw) != "null" {
		t.Errorf("hover in another YAML file: %s", raw)
	}
	spec := c.open(filepath.Join(dir, "door.FSM.YML"), miniSpec)
	c.waitDiags(spec, 1)
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.diags[other]) != 0 {
		t.Errorf("diagnostics for another YAML file: %v", c.diags[other])
	}
}
