package main

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// syncBuffer is a buffer the worker writes while the test reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestOperatorView: the worker with -inspect and -traces, as an operator runs it. The
// inspector shows the task the commands made, /metrics has its transition for
// Prometheus, and the traces file has the span of the firing.
func TestOperatorView(t *testing.T) {
	dir := t.TempDir()
	traces := filepath.Join(dir, "traces.json")
	in, feed := io.Pipe()
	var stdout, stderr syncBuffer
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"-db", filepath.Join(dir, "build.db"), "-speed", "0", "-start", start,
			"-inspect", "127.0.0.1:0", "-traces", traces}, in, &stdout, &stderr)
	}()
	io.WriteString(feed, "create TASK-1\nfire TASK-1 picked_up build_orchestrator picked up\nadvance 13m\n")
	var base string
	re := regexp.MustCompile(`inspector on (http://\S+)/,`)
	for deadline := time.Now().Add(time.Minute); base == "" || !strings.Contains(stdout.String(), "TIMEOUT_WARN"); {
		if time.Now().After(deadline) {
			t.Fatalf("the worker did not get there:\n%s\n%s", stderr.String(), stdout.String())
		}
		if m := re.FindStringSubmatch(stderr.String()); m != nil {
			base = m[1]
		}
		time.Sleep(20 * time.Millisecond)
	}
	get := func(path string) string {
		t.Helper()
		resp, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %s\n%s", path, resp.Status, b)
		}
		return string(b)
	}
	if page := get("/instance?m=build.Task&id=TASK-1"); !strings.Contains(page, "assigned") || !strings.Contains(page, "picked up") {
		t.Errorf("the task's page does not show its state and its transition:\n%s", page)
	}
	if page := get("/machine?m=" + url.QueryEscape("build.Task")); !strings.Contains(page, "assigned") {
		t.Errorf("the machine's page:\n%s", page)
	}
	metrics := get("/metrics")
	for _, want := range []string{`fsm_transitions_total{fsm_event="picked_up",fsm_from="pending",fsm_machine="build.Task",fsm_to="assigned"`, `fsm_instances{fsm_machine="build.Task",fsm_state="assigned"`, `fsm_timer_lag_seconds`} {
		if !strings.Contains(metrics, want) {
			t.Errorf("no %s in /metrics", want)
		}
	}
	feed.Write([]byte("quit\n"))
	select {
	case code := <-done:
		if code != 0 {
			t.Fatalf("exit %d: %s", code, stderr.String())
		}
	case <-time.After(time.Minute):
		t.Fatal("the worker did not stop")
	}
	spans, err := os.ReadFile(traces)
	if err != nil || !strings.Contains(string(spans), `"Name":"fire picked_up"`) || !strings.Contains(string(spans), `"Name":"commit"`) {
		t.Errorf("traces: %v\n%.2000s", err, spans)
	}
}
