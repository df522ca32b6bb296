// Package lsp is fsmgen's language server: the Language Server Protocol over a pair of
// streams (stdio for fsmgen lsp) for *.fsm.yaml specs. It reports the checker's findings
// as the document changes (lower.Check, as fsmgen check runs it), completes names and
// keys, goes to definitions and references (into the older specs a spec migrates from),
// renames, hovers, outlines and fixes. The JSON-RPC framing and the protocol types are
// its own (the standard library only).
//
// Names and their positions come from the yaml.v3 node tree of the document; where the
// cursor stands is read from the lines around it, so that a half-typed document still
// completes. Positions are the protocol's: lines from 0, characters in UTF-16 code units.
package lsp

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"github.com/fsmgen/fsmgen/internal/diag"
	"github.com/fsmgen/fsmgen/internal/lower"
)

// DefaultDebounce is how long the server waits after a change before it checks the
// document: changes that come sooner are checked together. A change after a quiet spell is
// checked at once when checking the document takes less than that.
const DefaultDebounce = 50 * time.Millisecond

// GCPercent is the garbage collector's target that fsmgen lsp runs with (runtime/debug's
// SetGCPercent): a check allocates much and keeps little, and a collection every 400% of
// growth rather than 100% takes about a quarter off the time from a keystroke to its
// diagnostics on a big spec, for a heap of a few tens of megabytes.
const GCPercent = 400

// Options configure a server.
type Options struct {
	// Check returns the findings of a spec, as fsmgen check reports them (path as the
	// check names it, data the document's text). Nil: lower.Check.
	Check func(path string, data []byte) diag.List
	// Debounce is the wait after a change before checking (0: DefaultDebounce).
	Debounce time.Duration
	// Log receives the server's own messages (a handler that failed); nil discards them.
	Log io.Writer
	// Version is the server's version, told the client in initialize.
	Version string
}

// Server is a language server for one client.
type Server struct {
	opts   Options
	schema *specSchema
	out    *writer
	cwd    string

	mu       sync.Mutex
	docs     map[string]*document // by path
	closed   bool
	shutdown bool
	checks   sync.WaitGroup
}

// document is an open spec.
type document struct {
	uri, path string
	version   int // the client's version of the text
	edits     int // changes received: a check's result is published only for the last
	t         *text
	ix        *index // of t, built when asked for
	good      *index // the last index of a text that parsed: names to complete from
	timer     *time.Timer
	changed   time.Time     // when the last change came
	took      time.Duration // how long the last check took
	running   int           // checks in flight
	pending   bool          // a check is wanted once one in flight ends
	// The findings last published, with the text they are about.
	diags     diag.List
	diagsText *text
	others    map[string]bool // the URIs of other files findings were published for
}

// New returns a server.
func New(opts Options) (*Server, error) {
	if opts.Check == nil {
		opts.Check = lower.Check
	}
	if opts.Debounce <= 0 {
		opts.Debounce = DefaultDebounce
	}
	if opts.Log == nil {
		opts.Log = io.Discard
	}
	sc, err := loadSchema()
	if err != nil {
		return nil, fmt.Errorf("reading the spec schema: %w", err)
	}
	cwd, _ := os.Getwd()
	return &Server{opts: opts, schema: sc, docs: map[string]*document{}, cwd: cwd}, nil
}

// Serve answers the client's messages read from in, writing to out, until the client
// says exit, in ends or ctx is done. It returns nil after shutdown and exit.
func (s *Server) Serve(ctx context.Context, in io.Reader, out io.Writer) error {
	s.out = &writer{w: out}
	msgs := make(chan []byte)
	errc := make(chan error, 1)
	go func() {
		r := bufio.NewReaderSize(in, 1<<16)
		for {
			body, err := readMessage(r)
			if err != nil {
				errc <- err
				return
			}
			select {
			case msgs <- body:
			case <-ctx.Done():
				return
			}
		}
	}()
	defer s.stop()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case err := <-errc:
			if errors.Is(err, io.EOF) {
				if s.shutdown {
					return nil
				}
				return errors.New("the client closed the connection without shutdown and exit")
			}
			return err
		case body := <-msgs:
			if done := s.handle(body); done {
				if s.shutdown {
					return nil
				}
				return errors.New("exit without shutdown")
			}
		}
	}
}

// stop ends the timers and keeps checks in flight from publishing.
func (s *Server) stop() {
	s.mu.Lock()
	s.closed = true
	for _, d := range s.docs {
		if d.timer != nil {
			d.timer.Stop()
		}
	}
	s.mu.Unlock()
}

// Wait waits for the checks in flight (for tests: nothing is published after Serve
// returns, but a check may still be running).
func (s *Server) Wait() { s.checks.Wait() }

func (s *Server) logf(format string, args ...any) {
	fmt.Fprintf(s.opts.Log, "fsmgen lsp: "+format+"\n", args...)
}

// handle dispatches one message; it reports whether the client said exit.
func (s *Server) handle(body []byte) (exit bool) {
	var m message
	if err := json.Unmarshal(body, &m); err != nil {
		s.out.reply(nil, nil, errorf(codeParseError, "malformed message: %v", err))
		return false
	}
	if m.Method == "" {
		return false // a response: the server sends no requests that wait for one
	}
	if m.Method == "exit" {
		return true
	}
	result, err := s.call(m.Method, m.Params, m.ID != nil)
	if m.ID != nil {
		s.out.reply(m.ID, result, err)
	} else if err != nil && !errors.Is(err, errNoMethod) {
		s.logf("%s: %v", m.Method, err)
	}
	return false
}

var errNoMethod = errors.New("no such method")

// call runs a method's handler, turning a panic into an error: no input may bring the
// server down.
func (s *Server) call(method string, params json.RawMessage, request bool) (result any, err error) {
	defer func() {
		if r := recover(); r != nil {
			s.logf("%s panicked: %v\n%s", method, r, debug.Stack())
			result, err = nil, errorf(codeInternalError, "fsmgen lsp: %s failed: %v", method, r)
		}
	}()
	if s.shutdown && request && method != "shutdown" {
		return nil, errorf(codeInvalidRequest, "the server is shutting down")
	}
	if strings.HasPrefix(method, "textDocument/") && method != "textDocument/codeAction" {
		// A client that starts the server for every YAML file: the others are not its.
		var p struct {
			TextDocument textDocumentIdentifier `json:"textDocument"`
		}
		if json.Unmarshal(params, &p) == nil && p.TextDocument.URI != "" && !isSpec(pathOf(p.TextDocument.URI)) {
			return nil, nil
		}
	}
	decode := func(v any) error {
		if err := json.Unmarshal(params, v); err != nil {
			return errorf(codeInvalidParams, "%s: %v", method, err)
		}
		return nil
	}
	switch method {
	case "initialize":
		return s.initialize(), nil
	case "initialized", "$/cancelRequest", "$/setTrace", "workspace/didChangeConfiguration", "workspace/didChangeWatchedFiles":
		return nil, nil
	case "shutdown":
		s.shutdown = true
		return nil, nil
	case "textDocument/didOpen":
		return with(decode, notification(s.didOpen))
	case "textDocument/didChange":
		return with(decode, notification(s.didChange))
	case "textDocument/didSave":
		return with(decode, notification(s.didSave))
	case "textDocument/didClose":
		return with(decode, notification(s.didClose))
	case "textDocument/completion":
		return with(decode, s.completion)
	case "textDocument/hover":
		return with(decode, s.hover)
	case "textDocument/definition":
		return with(decode, s.definition)
	case "textDocument/references":
		return with(decode, s.references)
	case "textDocument/prepareRename":
		return with(decode, s.prepareRename)
	case "textDocument/rename":
		return with(decode, s.rename)
	case "textDocument/documentSymbol":
		return with(decode, s.documentSymbols)
	case "textDocument/codeAction":
		return with(decode, s.codeActions)
	}
	if request {
		return nil, errorf(codeMethodNotFound, "fsmgen lsp does not implement %s", method)
	}
	return nil, errNoMethod
}

// with decodes a method's parameters and calls its handler with them.
func with[P any](decode func(any) error, handle func(P) (any, error)) (any, error) {
	var p P
	if err := decode(&p); err != nil {
		return nil, err
	}
	return handle(p)
}

// notification makes a handler of a notification, which answers nothing.
func notification[P any](handle func(P)) func(P) (any, error) {
	return func(p P) (any, error) {
		handle(p)
		return nil, nil
	}
}

func (s *Server) initialize() any {
	return map[string]any{
		"capabilities": map[string]any{
			"positionEncoding": "utf-16",
			"textDocumentSync": map[string]any{
				"openClose": true,
				"change":    2, // incremental
				"save":      map[string]any{"includeText": false},
			},
			"completionProvider": map[string]any{
				"triggerCharacters": []string{" ", ":", "[", ",", "{", "."},
			},
			"hoverProvider":          true,
			"definitionProvider":     true,
			"referencesProvider":     true,
			"renameProvider":         map[string]any{"prepareProvider": true},
			"documentSymbolProvider": true,
			"codeActionProvider":     map[string]any{"codeActionKinds": []string{"quickfix"}},
		},
		"serverInfo": map[string]any{"name": "fsmgen lsp", "version": s.opts.Version},
	}
}

// isSpec reports whether a path names a spec (*.fsm.yaml, *.fsm.yml): the server serves
// those alone.
func isSpec(path string) bool {
	p := strings.ToLower(path)
	return strings.HasSuffix(p, ".fsm.yaml") || strings.HasSuffix(p, ".fsm.yml")
}

// pathOf returns the file path of a file URI ("" for another scheme).
func pathOf(uri string) string {
	u, err := url.Parse(uri)
	if err != nil || u.Scheme != "file" {
		return ""
	}
	p := u.Path
	if p == "" {
		p = u.Opaque
	}
	if len(p) > 2 && p[0] == '/' && p[2] == ':' {
		p = p[1:] // /C:/dir/spec.fsm.yaml on Windows
	}
	return filepath.Clean(filepath.FromSlash(p))
}

// uriOf returns the file URI of a path.
func uriOf(path string) string {
	abs, err := filepath.Abs(path)
	if err == nil {
		path = abs
	}
	p := filepath.ToSlash(path)
	if !strings.HasPrefix(p, "/") {
		p = "/" + p // C:/dir on Windows
	}
	return (&url.URL{Scheme: "file", Path: p}).String()
}

// checkPath is the path the checker is given for a document: relative to the server's
// working directory when the document is under it, as fsmgen check is usually run, so that
// findings read the same.
func (s *Server) checkPath(path string) string {
	if s.cwd != "" {
		if rel, err := filepath.Rel(s.cwd, path); err == nil && !strings.HasPrefix(rel, "..") && !filepath.IsAbs(rel) {
			return rel
		}
	}
	return path
}

// doc returns the open document of a URI, or an error for the client.
func (s *Server) doc(uri string) (*document, error) {
	d := s.docs[pathOf(uri)]
	if d == nil {
		return nil, errorf(codeInvalidParams, "%s is not open", uri)
	}
	return d, nil
}

// index returns the index of a document's current text (s.mu held).
func (d *document) index() *index {
	if d.ix == nil {
		d.ix = buildIndex(d.path, d.t)
		if d.ix.root != nil {
			d.good = d.ix
		}
	}
	return d.ix
}

// names returns the index to complete names from at byte offset off: the current text's
// when it parses; else that of the text without the cursor's line (the line being typed),
// when it parses; else the last that parsed.
func (d *document) names(off int) *index {
	ix := d.index()
	if ix.root != nil {
		return ix
	}
	start := d.t.starts[d.t.position(off).Line]
	if rest := buildIndex(d.path, newText(d.t.s[:start]+d.t.s[lineEnd(d.t, start):])); rest.root != nil {
		return rest
	}
	if d.good != nil {
		return d.good
	}
	return ix
}

func (s *Server) didOpen(p didOpenParams) {
	path := pathOf(p.TextDocument.URI)
	if path == "" {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	d := &document{uri: p.TextDocument.URI, path: path, version: p.TextDocument.Version, t: newText(p.TextDocument.Text)}
	if old := s.docs[path]; old != nil && old.timer != nil {
		old.timer.Stop()
	}
	s.docs[path] = d
	s.startCheck(d)
}

func (s *Server) didChange(p didChangeParams) {
	s.mu.Lock()
	defer s.mu.Unlock()
	d := s.docs[pathOf(p.TextDocument.URI)]
	if d == nil {
		return
	}
	for _, c := range p.ContentChanges {
		d.t = newText(d.t.apply(c))
	}
	d.version = p.TextDocument.Version
	d.edits++
	d.ix = nil
	if d.timer != nil {
		d.timer.Stop()
	}
	// A change after a quiet spell (no change for the debounce, no check running) is checked
	// at once, if a check takes less than the debounce; one that follows another closely,
	// or of a spec whose check takes longer, waits for the changes to stop: on a big spec a
	// check started at the first keystroke of several would hold a core that the check of
	// the last one needs.
	now := time.Now()
	quiet := now.Sub(d.changed) >= s.opts.Debounce && d.running == 0 && d.took < s.opts.Debounce
	d.changed = now
	if quiet {
		s.startCheck(d)
		return
	}
	d.timer = time.AfterFunc(s.opts.Debounce, func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.docs[d.path] == d {
			s.startCheck(d)
		}
	})
}

func (s *Server) didSave(p didSaveParams) {
	s.mu.Lock()
	defer s.mu.Unlock()
	// An older spec on disk may have changed: every open spec is checked again.
	for _, d := range s.docs {
		if d.timer != nil {
			d.timer.Stop()
		}
		s.startCheck(d)
	}
}

func (s *Server) didClose(p didCloseParams) {
	s.mu.Lock()
	defer s.mu.Unlock()
	path := pathOf(p.TextDocument.URI)
	d := s.docs[path]
	if d == nil {
		return
	}
	if d.timer != nil {
		d.timer.Stop()
	}
	delete(s.docs, path)
	s.out.notify("textDocument/publishDiagnostics", publishDiagnosticsParams{URI: d.uri, Diagnostics: []Diagnostic{}})
	for uri := range d.others {
		s.out.notify("textDocument/publishDiagnostics", publishDiagnosticsParams{URI: uri, Diagnostics: []Diagnostic{}})
	}
}

// maxChecks is how many checks of one document may run at once: a change that comes while
// one runs starts another (on another core) rather than wait for a result that will be
// thrown away.
const maxChecks = 2

// startCheck checks the document's current text in the background and publishes the
// findings if no change came meanwhile (s.mu held).
func (s *Server) startCheck(d *document) {
	if s.closed {
		return
	}
	if d.running >= maxChecks {
		d.pending = true
		return
	}
	d.running++
	edits, version, t := d.edits, d.version, d.t
	s.checks.Add(1)
	go func() {
		defer s.checks.Done()
		start := time.Now()
		ds := s.runCheck(d.path, t)
		s.mu.Lock()
		defer s.mu.Unlock()
		d.took = time.Since(start)
		d.running--
		if d.pending && d.running < maxChecks {
			d.pending = false
			if d.edits != edits {
				s.startCheck(d)
			}
		}
		if s.closed || s.docs[d.path] != d || d.edits != edits {
			return
		}
		s.publish(d, version, t, ds)
	}()
}

// runCheck runs the checker on a text; a checker that panics is a finding, not a crash.
func (s *Server) runCheck(path string, t *text) (ds diag.List) {
	cp := s.checkPath(path)
	defer func() {
		if r := recover(); r != nil {
			s.logf("checking %s panicked: %v\n%s", path, r, debug.Stack())
			ds = diag.List{{Pos: diag.Pos{File: cp, Line: 1, Col: 1}, Severity: diag.Error,
				Message: fmt.Sprintf("fsmgen lsp: the checker failed on this text: %v", r)}}
		}
	}()
	return s.opts.Check(cp, []byte(t.s))
}

// publish sends the findings of text t of document d: those of the document at their
// positions, those of another file (a version lock, say) both to that file and at the
// start of the document, with their place in the message.
func (s *Server) publish(d *document, version int, t *text, ds diag.List) {
	cp := s.checkPath(d.path)
	mine := []Diagnostic{}
	others := map[string][]Diagnostic{}
	for _, f := range ds {
		mine = append(mine, s.inDoc(d, t, f))
		if f.Pos.File == cp || f.Pos.File == d.path || f.Pos.File == "" {
			continue
		}
		other := f.Pos.File
		if !filepath.IsAbs(other) {
			other = filepath.Join(s.cwd, other)
		}
		uri := uriOf(other)
		ot := s.fileText(other)
		if ot != nil {
			others[uri] = append(others[uri], toDiagnostic(ot, f, f.Message))
		}
	}
	d.diags, d.diagsText = ds, t
	v := version
	s.out.notify("textDocument/publishDiagnostics", publishDiagnosticsParams{URI: d.uri, Version: &v, Diagnostics: mine})
	for uri := range d.others {
		if _, ok := others[uri]; !ok {
			s.out.notify("textDocument/publishDiagnostics", publishDiagnosticsParams{URI: uri, Diagnostics: []Diagnostic{}})
		}
	}
	d.others = map[string]bool{}
	for uri, list := range others {
		d.others[uri] = true
		s.out.notify("textDocument/publishDiagnostics", publishDiagnosticsParams{URI: uri, Diagnostics: list})
	}
}

// inDoc is a finding of document d (of its text t) as the document shows it: at its
// position, or, a finding of another file, at the start with its place in the message.
func (s *Server) inDoc(d *document, t *text, f diag.Diagnostic) Diagnostic {
	if f.Pos.File == s.checkPath(d.path) || f.Pos.File == d.path || f.Pos.File == "" {
		return toDiagnostic(t, f, f.Message)
	}
	return Diagnostic{Severity: severity(f.Severity), Source: "fsmgen", Message: f.String()}
}

func severity(s diag.Severity) int {
	if s == diag.Warning {
		return severityWarning
	}
	return severityError
}

// toDiagnostic places a finding in text t: from its position to the end of the word there.
func toDiagnostic(t *text, f diag.Diagnostic, msg string) Diagnostic {
	if f.Pos.Line > t.lines() {
		// After the last line (an error at the end of a document cut short).
		p := t.fromLoader(f.Pos.Line, f.Pos.Col)
		return Diagnostic{Range: Range{Start: p, End: p}, Severity: severity(f.Severity), Source: "fsmgen", Message: msg}
	}
	start := t.loaderOffset(f.Pos.Line, f.Pos.Col)
	if f.Pos.Line <= 0 {
		start = 0
	}
	end := start
	for end < len(t.s) && isWordByte(t.s[end]) {
		end++
	}
	if end == start && end < len(t.s) && t.s[end] != '\n' && t.s[end] != '\r' {
		// Not a word: the quoted scalar, or the one character there.
		if q := t.s[end]; q == '"' || q == '\'' {
			if j := strings.IndexByte(t.s[end+1:], q); j >= 0 && !strings.Contains(t.s[end:end+1+j], "\n") {
				end += j + 2
			} else {
				end++
			}
		} else {
			end++
		}
	}
	return Diagnostic{Range: t.rangeOf(start, end), Severity: severity(f.Severity), Source: "fsmgen", Message: msg}
}

// fileText returns the text of a file: an open document's, else the file's on disk
// (nil when it cannot be read or is larger than a spec may be).
func (s *Server) fileText(path string) *text {
	if d := s.docs[filepath.Clean(path)]; d != nil {
		return d.t
	}
	fi, err := os.Stat(path)
	if err != nil || !fi.Mode().IsRegular() || fi.Size() > maxFile {
		return nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	return newText(string(b))
}

// maxFile bounds the files read from disk (an older spec, a lock): what a spec may be.
const maxFile = 8 << 20
