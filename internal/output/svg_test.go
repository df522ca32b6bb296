package output

import (
	"bytes"
	"encoding/xml"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// An SVG picture is XML: its header and source line are XML comments, which no spec file
// name may end early or make malformed ("--" is not allowed in them), and the name must
// read back; the picture is then recognised as that spec's on the next run, replaced, and
// removed once the run no longer produces it.
func TestSourceLineOfAPictureStaysAComment(t *testing.T) {
	if h := Header("x.svg"); h != "<!-- "+headerText+" -->" {
		t.Fatalf("header %q", h)
	}
	for _, spec := range []string{
		"a--b.fsm.yaml", "a---b.fsm.yaml", "-.fsm.yaml", "x-", "--><svg onload=alert(1)>.fsm.yaml",
		"a--!><script>x</script>.fsm.yaml", "100%2D.fsm.yaml", "%25%-.fsm.yaml", "x<!-.fsm.yaml",
	} {
		src := "../" + spec
		data := Stamp("x.svg", []byte("<!-- "+headerText+" -->\n<svg>\n</svg>\n"), src)
		line := strings.Split(string(data), "\n")[1]
		body, ok := strings.CutPrefix(line, "<!-- ")
		if ok {
			body, ok = strings.CutSuffix(body, " -->")
		}
		if !ok || strings.ContainsAny(body, "<>") || strings.Contains(body, "--") {
			t.Errorf("%q: source line %q", spec, line)
		}
		if got, _ := parseSource("x.svg", line); got != src {
			t.Errorf("%q: the source line %q reads %q", spec, line, got)
		}
		d := xml.NewDecoder(bytes.NewReader(data))
		for {
			if _, err := d.Token(); err == io.EOF {
				break
			} else if err != nil {
				t.Errorf("%q: not well-formed XML: %v\n%s", spec, err, data)
				break
			}
		}
	}

	spec := "a--b.fsm.yaml"
	root := build(t, layout{spec: "spec"})
	t.Chdir(root)
	plan := func(body string) Plan {
		return Plan{Files: []File{{Path: filepath.Join("out", "x.svg"), Data: Stamp("x.svg", []byte("<!-- "+headerText+" -->\n"+body), "../"+spec), Spec: spec}}, Dirs: []string{"out"}}
	}
	for _, body := range []string{"<svg>one</svg>\n", "<svg>two</svg>\n"} {
		if _, err := Write(plan(body)); err != nil {
			t.Fatal(err)
		}
	}
	if b, _ := os.ReadFile(filepath.Join("out", "x.svg")); !strings.HasSuffix(string(b), "<svg>two</svg>\n") {
		t.Errorf("not updated: %q", b)
	}
	changes, err := Write(Plan{Files: []File{{Path: filepath.Join("out", "x.md"), Data: Stamp("x.md", []byte("<!-- "+headerText+" -->\n# x\n"), "../"+spec), Spec: spec}}, Dirs: []string{"out"}})
	if err != nil {
		t.Fatal(err)
	}
	removed := 0
	for _, c := range changes {
		if c.Kind == Remove && filepath.Base(c.Path) == "x.svg" {
			removed++
		}
	}
	if removed != 1 {
		t.Errorf("changes %+v, want the picture removed", changes)
	}
	if _, err := os.Stat(filepath.Join("out", "x.svg")); !os.IsNotExist(err) {
		t.Errorf("the picture is still there: %v", err)
	}
}
