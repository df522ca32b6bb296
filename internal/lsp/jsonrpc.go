package lsp

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
)

// maxMessage bounds the body of one message: a spec is at most spec.MaxBytes (8 MiB), and a
// full-text change carries it escaped as a JSON string.
const maxMessage = 64 << 20

// JSON-RPC 2.0 error codes the server answers with.
const (
	codeParseError     = -32700
	codeInvalidRequest = -32600
	codeMethodNotFound = -32601
	codeInvalidParams  = -32602
	codeInternalError  = -32603
	codeRequestFailed  = -32803
)

// message is one JSON-RPC 2.0 message: a request (ID and Method), a notification (Method
// alone) or a response (ID and Result or Error).
type message struct {
	JSONRPC string           `json:"jsonrpc"`
	ID      *json.RawMessage `json:"id,omitempty"`
	Method  string           `json:"method,omitempty"`
	Params  json.RawMessage  `json:"params,omitempty"`
	Result  json.RawMessage  `json:"result,omitempty"`
	Error   *rpcError        `json:"error,omitempty"`
}

// rpcError is a JSON-RPC error object; as a Go error it is what a handler returns to
// answer a request with that code.
type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

func (e *rpcError) Error() string { return e.Message }

func errorf(code int, format string, args ...any) *rpcError {
	return &rpcError{Code: code, Message: fmt.Sprintf(format, args...)}
}

// readMessage reads one message framed as the base protocol frames it: headers
// (Content-Length required), a blank line, and that many bytes of JSON.
func readMessage(r *bufio.Reader) ([]byte, error) {
	length := -1
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			if errors.Is(err, io.EOF) && line == "" && length < 0 {
				return nil, io.EOF
			}
			return nil, fmt.Errorf("reading a header: %w", err)
		}
		if len(line) > 1024 {
			return nil, fmt.Errorf("header line of %d bytes", len(line))
		}
		line = strings.TrimRight(line, "\r\n")
		if line == "" {
			if length < 0 {
				continue // stray blank lines between messages
			}
			break
		}
		name, value, ok := strings.Cut(line, ":")
		if !ok {
			return nil, fmt.Errorf("malformed header %q", line)
		}
		if strings.EqualFold(strings.TrimSpace(name), "Content-Length") {
			n, err := strconv.Atoi(strings.TrimSpace(value))
			if err != nil || n < 0 {
				return nil, fmt.Errorf("bad Content-Length %q", value)
			}
			if n > maxMessage {
				return nil, fmt.Errorf("message of %d bytes; the limit is %d", n, maxMessage)
			}
			length = n
		}
	}
	body := make([]byte, length)
	if _, err := io.ReadFull(r, body); err != nil {
		return nil, fmt.Errorf("reading a message body: %w", err)
	}
	return body, nil
}

// writer writes framed messages; it is safe for concurrent use (the server answers
// requests from its loop and publishes diagnostics from the goroutines that check).
type writer struct {
	mu  sync.Mutex
	w   io.Writer
	err error
}

func (w *writer) write(m *message) error {
	m.JSONRPC = "2.0"
	body, err := json.Marshal(m)
	if err != nil {
		return err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return w.err
	}
	if _, err := fmt.Fprintf(w.w, "Content-Length: %d\r\n\r\n%s", len(body), body); err != nil {
		w.err = err
	}
	return w.err
}

func (w *writer) notify(method string, params any) error {
	raw, err := json.Marshal(params)
	if err != nil {
		return err
	}
	return w.write(&message{Method: method, Params: raw})
}

func (w *writer) reply(id *json.RawMessage, result any, err error) error {
	m := &message{ID: id}
	if err != nil {
		var re *rpcError
		if !errors.As(err, &re) {
			re = &rpcError{Code: codeRequestFailed, Message: err.Error()}
		}
		m.Error = re
	} else {
		raw, merr := json.Marshal(result)
		if merr != nil {
			m.Error = &rpcError{Code: codeInternalError, Message: merr.Error()}
		} else {
			m.Result = raw
		}
	}
	return w.write(m)
}
