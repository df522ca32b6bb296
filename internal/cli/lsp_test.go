package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf16"
)

// lspSession runs fsmgen lsp in-process on pipes and speaks the protocol to it.
type lspSession struct {
	t    *testing.T
	in   io.WriteCloser
	out  *bufio.Reader
	code chan int
	id   int
}

func startLSP(t *testing.T, args ...string) *lspSession {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	s := &lspSession{t: t, in: inW, out: bufio.NewReader(outR), code: make(chan int, 1)}
	go func() {
		code := Run(context.Background(), append([]string{"lsp"}, args...), inR, outW, io.Discard)
		outW.Close()
		s.code <- code
	}()
	t.Cleanup(func() { inW.Close() })
	return s
}

func (s *lspSession) send(msg map[string]any) {
	s.t.Helper()
	msg["jsonrpc"] = "2.0"
	body, _ := json.Marshal(msg)
	if _, err := fmt.Fprintf(s.in, "Content-Length: %d\r\n\r\n%s", len(body), body); err != nil {
		s.t.Fatal(err)
	}
}

// next reads the server's next message (within 20 s).
func (s *lspSession) next() map[string]any {
	s.t.Helper()
	type result struct {
		m   map[string]any
		err error
	}
	ch := make(chan result, 1)
	go func() {
		n := -1
		for {
			line, err := s.out.ReadString('\n')
			if err != nil {
				ch <- result{err: err}
				return
			}
			line = strings.TrimSpace(line)
			if line == "" {
				break
			}
			if v, ok := strings.CutPrefix(line, "Content-Length: "); ok {
				n, _ = strconv.Atoi(v)
			}
		}
		body := make([]byte, n)
		if _, err := io.ReadFull(s.out, body); err != nil {
			ch <- result{err: err}
			return
		}
		var m map[string]any
		ch <- result{m: m, err: json.Unmarshal(body, &m)}
	}()
	select {
	case r := <-ch:
		if r.err != nil {
			s.t.Fatalf("reading from fsmgen lsp: %v", r.err)
		}
		return r.m
	case <-time.After(20 * time.Second):
		s.t.Fatalf("fsmgen lsp wrote nothing within 20 s")
	}
	return nil
}

// TestLSPReportsWhatCheckReports: the findings fsmgen lsp publishes for a spec are the
// lines fsmgen check prints for it, position for position, message for message: on each
// seed and a statechart, each with a misspelt state, an unknown key and a half of it, and
// on a spec whose file name generate refuses.
func TestLSPReportsWhatCheckReports(t *testing.T) {
	dir := t.TempDir()
	seeds, _ := filepath.Glob("../../examples/*/*.fsm.yaml")
	seeds = append(seeds, "../lower/testdata/build/chart_features.fsm.yaml")
	if len(seeds) < 6 {
		t.Fatalf("seeds: %v", seeds)
	}
	var specs []string
	for i, p := range seeds {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		text := string(data)
		for j, edit := range []string{
			strings.Replace(text, "\nstates:", "\nstatez:", 1),
			strings.Replace(text, "to: ", "to: nowhere_", 1),
			text[:len(text)/2],
		} {
			path := filepath.Join(dir, fmt.Sprintf("s%d_%d.fsm.yaml", i, j))
			os.WriteFile(path, []byte(edit), 0o644)
			specs = append(specs, path)
		}
	}
	refused := filepath.Join(dir, "_hidden.fsm.yaml")
	os.WriteFile(refused, []byte("version: 1\n"), 0o644)
	specs = append(specs, refused)

	s := startLSP(t, "--stdio")
	s.send(map[string]any{"id": 1, "method": "initialize", "params": map[string]any{}})
	if m := s.next(); m["result"] == nil {
		t.Fatalf("initialize: %v", m)
	}
	for _, path := range specs {
		data, _ := os.ReadFile(path)
		uri := (&url.URL{Scheme: "file", Path: filepath.ToSlash(path)}).String()
		s.send(map[string]any{"method": "textDocument/didOpen", "params": map[string]any{
			"textDocument": map[string]any{"uri": uri, "languageId": "yaml", "version": 1, "text": string(data)}}})
		var got []string
		for {
			m := s.next()
			p, _ := m["params"].(map[string]any)
			if m["method"] != "textDocument/publishDiagnostics" || p["uri"] != uri {
				continue
			}
			lines := strings.Split(string(data), "\n")
			for _, d := range p["diagnostics"].([]any) {
				d := d.(map[string]any)
				start := d["range"].(map[string]any)["start"].(map[string]any)
				line, char := int(start["line"].(float64)), int(start["character"].(float64))
				sev := map[float64]string{1: "error", 2: "warning"}[d["severity"].(float64)]
				msg := d["message"].(string)
				if strings.HasPrefix(msg, path) || strings.HasPrefix(msg, dir) {
					got = append(got, msg) // a finding of another file: its place in the message
					continue
				}
				col := 1
				if line < len(lines) {
					u := utf16.Encode([]rune(lines[line]))
					col = len([]rune(string(utf16.Decode(u[:min(char, len(u))])))) + 1
				}
				got = append(got, fmt.Sprintf("%s:%d:%d: %s: %s", path, line+1, col, sev, msg))
			}
			break
		}
		_, out, _ := run(t, "check", path)
		want := strings.TrimSuffix(out, "\n")
		if strings.Join(got, "\n") != want {
			t.Errorf("%s: fsmgen lsp published\n%s\nfsmgen check printed\n%s", path, strings.Join(got, "\n"), want)
		}
		if want == "" {
			t.Errorf("%s: no findings to compare", path)
		}
	}
	s.send(map[string]any{"id": 2, "method": "shutdown"})
	for m := s.next(); m["id"] != 2.0; m = s.next() {
	}
	s.send(map[string]any{"method": "exit"})
	select {
	case code := <-s.code:
		if code != ExitOK {
			t.Errorf("fsmgen lsp exited %d after shutdown and exit", code)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("fsmgen lsp did not exit within 20 s of exit")
	}
}

// TestLSPUsage: fsmgen lsp takes no arguments; a connection that breaks exits 2.
func TestLSPUsage(t *testing.T) {
	if code, _, stderr := run(t, "lsp", "spec.fsm.yaml"); code != ExitUsage || !strings.Contains(stderr, "lsp takes no arguments") {
		t.Errorf("lsp with an argument: %d, %q", code, stderr)
	}
	if code, _, stderr := run(t, "lsp"); code != ExitUsage || !strings.Contains(stderr, "without shutdown") {
		t.Errorf("lsp on an empty input: %d, %q", code, stderr)
	}
}
