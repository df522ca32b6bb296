// Package preview is the spec author's live page (fsmgen preview): for each spec, its
// diagram drawn by the Mermaid library served from the binary, its findings with their
// positions, and a simulator that runs the reference interpreter (package interp) on the
// server, as fsmgen sim does, and prints the fsmgen sim command that replays the session.
// The page follows the spec files: Watch notices a change within its poll interval, and
// the page, waiting on /api/wait, loads the new version and runs its session again on it.
//
// Everything from a spec (names, docs, messages) reaches the page as JSON that the page's
// script puts in as text, never as HTML, and the diagram as Mermaid text whose labels
// package mermaid escapes; the page's Content-Security-Policy runs no script but its own
// files. Handler serves only requests addressed to a loopback host (a DNS name that
// resolves elsewhere cannot reach it from a browser).
package preview

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/fsmgen/fsmgen/internal/ir"
	specfile "github.com/fsmgen/fsmgen/spec"
)

// Server serves the page of a list of spec files and watches them. Make one with New.
type Server struct {
	specs []*spec
	mux   *http.ServeMux
	tmpl  *template.Template

	mu      sync.Mutex
	gen     int           // bumped by every change of any spec
	changed chan struct{} // closed (and replaced) at every change

	closing   chan struct{} // closed by Close
	closeOnce sync.Once
}

// spec is one spec file as last read.
type spec struct {
	path    string
	version int // bumped when its content, or whether it can be read, changes
	data    []byte
	readErr string
	stat    fileStat
	// findings are those of the current content; machine is the last version that checked
	// clean (stale: it is not the current content, which has errors or cannot be read).
	findings []Finding
	machine  *ir.Machine
	view     *Machine
	stale    bool
}

type fileStat struct {
	size  int64
	mtime time.Time
}

// New reads and checks each spec file. It fails when one cannot be read; findings do not
// fail it (the page shows them).
func New(paths ...string) (*Server, error) {
	if len(paths) == 0 {
		return nil, errors.New("preview: no spec file")
	}
	t, err := template.ParseFS(assets, "assets/index.html")
	if err != nil {
		return nil, err
	}
	s := &Server{mux: http.NewServeMux(), tmpl: t, changed: make(chan struct{}), closing: make(chan struct{})}
	for _, p := range paths {
		data, err := readSpec(p)
		if err != nil {
			return nil, err
		}
		sp := &spec{path: p}
		if fi, err := os.Stat(p); err == nil {
			sp.stat = fileStat{fi.Size(), fi.ModTime()}
		}
		sp.update(data, "")
		s.specs = append(s.specs, sp)
	}
	s.mux.HandleFunc("GET /{$}", s.index)
	s.mux.HandleFunc("GET /assets/{name}", serveAsset)
	s.mux.HandleFunc("GET /api/specs", s.list)
	s.mux.HandleFunc("GET /api/spec", s.spec)
	s.mux.HandleFunc("GET /api/wait", s.wait)
	s.mux.HandleFunc("POST /api/sim", s.sim)
	return s, nil
}

// update takes the spec's new content (or the error reading it).
func (sp *spec) update(data []byte, readErr string) {
	sp.version++
	sp.data, sp.readErr = data, readErr
	if readErr != "" {
		sp.findings = []Finding{{File: sp.path, Line: 1, Col: 1, Severity: "error", Message: readErr, Text: sp.path + ": " + readErr}}
		sp.stale = sp.machine != nil
		return
	}
	m, fs := load(sp.path, data)
	sp.findings = fs
	if m != nil {
		sp.machine, sp.view, sp.stale = m, describe(m), false
	} else {
		sp.stale = sp.machine != nil
	}
}

// readSpec reads a spec file, up to one byte past the loader's limit (spec.MaxBytes): the
// loader refuses a larger one, so a huge file is not read whole.
func readSpec(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, specfile.MaxBytes+1))
}

// settleTime is how long a spec file must have been left alone before a change of it is taken:
// an editor that writes a file in place truncates it first, and a poll between the two
// would show an empty spec's finding.
const settleTime = 100 * time.Millisecond

// Poll checks every spec file once and takes the new content of those that changed, and
// were last modified settleTime ago or more. It returns whether one did.
func (s *Server) Poll(full bool) bool {
	any := false
	for _, sp := range s.specs {
		fi, err := os.Stat(sp.path)
		var data []byte
		readErr := ""
		if err == nil {
			st := fileStat{fi.Size(), fi.ModTime()}
			s.mu.Lock()
			same := st == sp.stat && sp.readErr == ""
			s.mu.Unlock()
			if same && !full {
				continue
			}
			if age := time.Since(st.mtime); !same && age >= 0 && age < settleTime {
				continue // being written, maybe (truncated, not yet filled): taken once it holds still
			}
			data, err = readSpec(sp.path)
			if err == nil {
				s.mu.Lock()
				sp.stat = st
				s.mu.Unlock()
			}
		}
		if err != nil {
			readErr = "cannot read the spec: " + err.Error()
		}
		s.mu.Lock()
		if readErr != sp.readErr || (readErr == "" && !bytes.Equal(data, sp.data)) {
			sp.update(data, readErr)
			any = true
		}
		s.mu.Unlock()
	}
	if any {
		s.mu.Lock()
		s.gen++
		close(s.changed)
		s.changed = make(chan struct{})
		s.mu.Unlock()
	}
	return any
}

// Watch polls the spec files every interval (and reads them whole every tenth time, for
// a change that kept the size and modification time) until ctx is done.
func (s *Server) Watch(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for i := 1; ; i++ {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			s.Poll(i%10 == 0)
		}
	}
}

// ServeHTTP serves the page and its API to requests addressed to a loopback host.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !loopbackHost(r.Host) {
		http.Error(w, "fsmgen preview answers only requests to 127.0.0.1, [::1] or localhost", http.StatusMisdirectedRequest)
		return
	}
	h := w.Header()
	h.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; font-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	s.mux.ServeHTTP(w, r)
}

// loopbackHost reports whether the Host header names a loopback address or localhost.
func loopbackHost(host string) bool {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func (s *Server) index(w http.ResponseWriter, r *http.Request) {
	var paths []string
	for _, sp := range s.specs {
		paths = append(paths, sp.path)
	}
	var b bytes.Buffer
	if err := s.tmpl.Execute(&b, struct{ Specs []string }{paths}); err != nil {
		http.Error(w, "preview: rendering the page failed", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.Write(b.Bytes())
}

// SpecList is the answer of /api/specs and /api/wait: the generation of the whole and the
// version of each spec.
type SpecList struct {
	Gen   int        `json:"gen"`
	Specs []SpecInfo `json:"specs"`
}

// SpecInfo names a spec and its version.
type SpecInfo struct {
	Path    string `json:"path"`
	Version int    `json:"version"`
}

func (s *Server) specList() SpecList {
	s.mu.Lock()
	defer s.mu.Unlock()
	l := SpecList{Gen: s.gen}
	for _, sp := range s.specs {
		l.Specs = append(l.Specs, SpecInfo{sp.path, sp.version})
	}
	return l
}

func (s *Server) list(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, s.specList())
}

// SpecView is the answer of /api/spec: a spec's findings and its machine.
type SpecView struct {
	Path     string    `json:"path"`
	Version  int       `json:"version"`
	Findings []Finding `json:"findings"`
	Errors   bool      `json:"errors"`
	// Machine is the last version of the spec that checked clean (nil: none yet); Stale
	// says it is not the current content.
	Machine *Machine `json:"machine"`
	Stale   bool     `json:"stale"`
}

// at returns the spec of the request's i, or writes a 404.
func (s *Server) at(w http.ResponseWriter, r *http.Request) (*spec, bool) {
	i, err := strconv.Atoi(r.URL.Query().Get("i"))
	if err != nil || i < 0 || i >= len(s.specs) {
		writeJSON(w, http.StatusNotFound, map[string]string{"error": "no such spec"})
		return nil, false
	}
	return s.specs[i], true
}

func (s *Server) spec(w http.ResponseWriter, r *http.Request) {
	sp, ok := s.at(w, r)
	if !ok {
		return
	}
	s.mu.Lock()
	v := SpecView{Path: sp.path, Version: sp.version, Findings: sp.findings, Machine: sp.view, Stale: sp.stale}
	s.mu.Unlock()
	for _, f := range v.Findings {
		v.Errors = v.Errors || f.Severity == "error"
	}
	writeJSON(w, http.StatusOK, v)
}

// Close answers the requests waiting for a change at once, so that an http.Server that
// serves s can shut down without waiting for them (register it with RegisterOnShutdown).
func (s *Server) Close() { s.closeOnce.Do(func() { close(s.closing) }) }

// wait answers when the generation differs from the request's gen, or after 25 s.
func (s *Server) wait(w http.ResponseWriter, r *http.Request) {
	gen, _ := strconv.Atoi(r.URL.Query().Get("gen"))
	s.mu.Lock()
	cur, ch := s.gen, s.changed
	s.mu.Unlock()
	if cur == gen {
		t := time.NewTimer(25 * time.Second)
		defer t.Stop()
		select {
		case <-ch:
		case <-t.C:
		case <-s.closing:
		case <-r.Context().Done():
			return
		}
	}
	writeJSON(w, http.StatusOK, s.specList())
}

// SimRequest is the body of POST /api/sim?i=N: the session to run on the spec's machine,
// and the version of the spec the page shows (the answer says which it ran).
type SimRequest struct {
	Session Session `json:"session"`
}

// SimAnswer is the answer of /api/sim.
type SimAnswer struct {
	Version int  `json:"version"`
	Run     *Run `json:"run"`
}

// maxBody bounds a request's body.
const maxBody = 4 << 20

func (s *Server) sim(w http.ResponseWriter, r *http.Request) {
	sp, ok := s.at(w, r)
	if !ok {
		return
	}
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		writeJSON(w, http.StatusUnsupportedMediaType, map[string]string{"error": "want application/json"})
		return
	}
	var req SimRequest
	dec := json.NewDecoder(io.LimitReader(r.Body, maxBody))
	if err := dec.Decode(&req); err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": fmt.Sprintf("reading the session: %v", err)})
		return
	}
	s.mu.Lock()
	m, version := sp.machine, sp.version
	s.mu.Unlock()
	if m == nil {
		writeJSON(w, http.StatusConflict, map[string]string{"error": "the spec has errors: fix them to run it"})
		return
	}
	writeJSON(w, http.StatusOK, SimAnswer{Version: version, Run: Simulate(m, sp.path, req.Session)})
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		http.Error(w, "preview: encoding the answer failed", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	w.Write(b)
}
