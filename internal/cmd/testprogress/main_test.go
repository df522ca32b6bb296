package main

import (
	"strings"
	"testing"
)

func TestPrinter(t *testing.T) {
	var b strings.Builder
	p := newPrinter(&b)
	p.read(strings.NewReader(strings.Join([]string{
		`{"Action":"start","Package":"a"}`,
		`{"Action":"start","Package":"b"}`,
		`{"Action":"run","Package":"b","Test":"TestSlow"}`,
		`{"Action":"output","Package":"b","Test":"TestSlow","Output":"quiet\n"}`,
		`{"Action":"pass","Package":"b","Test":"TestSlow","Elapsed":12.5}`,
		`{"Action":"run","Package":"a","Test":"TestBad"}`,
		`{"Action":"run","Package":"a","Test":"TestBad/sub"}`,
		`{"Action":"output","Package":"a","Test":"TestBad/sub","Output":"    bad_test.go:3: boom\n"}`,
		`{"Action":"fail","Package":"a","Test":"TestBad/sub","Elapsed":0}`,
		`{"Action":"fail","Package":"a","Test":"TestBad","Elapsed":0.1}`,
		`{"Action":"output","Package":"a","Output":"FAIL\n"}`,
		`{"Action":"fail","Package":"a","Elapsed":0.2}`,
		`{"Action":"pass","Package":"b","Elapsed":13}`,
		`{"ImportPath":"d [d.test]","Action":"build-output","Output":"# d [d.test]\n"}`,
		`{"ImportPath":"d [d.test]","Action":"build-output","Output":"d/d.go:3:12: undefined: x\n"}`,
		`{"ImportPath":"d [d.test]","Action":"build-fail"}`,
		`{"Action":"start","Package":"d"}`,
		`{"Action":"output","Package":"d","Output":"FAIL\td [build failed]\n"}`,
		`{"Action":"fail","Package":"d","Elapsed":0,"FailedBuild":"d [d.test]"}`,
		`# c`,
		`c/c.go:1:1: expected 'package'`,
	}, "\n")))
	// In the order things finish; a failing test's output in full; a quiet fast one not at all.
	want := "     b TestSlow (12.5s)\n" +
		"    bad_test.go:3: boom\n" +
		"FAIL\nFAIL a (0.2s)\n" +
		"ok   b (13.0s)\n" +
		"# d [d.test]\nd/d.go:3:12: undefined: x\n" +
		"FAIL\td [build failed]\nFAIL d (0.0s)\n" +
		"# c\nc/c.go:1:1: expected 'package'\n"
	if got := b.String(); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	if len(p.running) != 0 {
		t.Errorf("still running: %v", p.running)
	}
}
