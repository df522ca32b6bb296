package output

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A spec's file name is written into the document's HTML comment: no name may end the
// comment early (and so put live HTML into the document), and the name must read back.
func TestSourceLineOfADocumentStaysAComment(t *testing.T) {
	for _, spec := range []string{
		"--><img src=x onerror=alert(1)>.fsm.yaml",
		"a--!><script>x</script>.fsm.yaml",
		">x.fsm.yaml", "->x.fsm.yaml", "100%3E.fsm.yaml", "%25%.fsm.yaml", "x<!-.fsm.yaml",
	} {
		src := "../" + spec
		data := Stamp("x.md", []byte("<!-- "+headerText+" -->\n# x\n"), src)
		line := strings.Split(string(data), "\n")[1]
		body, ok := strings.CutPrefix(line, "<!-- ")
		if ok {
			body, ok = strings.CutSuffix(body, " -->")
		}
		if !ok || strings.ContainsAny(body, "<>") {
			t.Errorf("%q: source line %q", spec, line)
		}
		if got, _ := parseSource("x.md", line); got != src {
			t.Errorf("%q: the source line %q reads %q", spec, line, got)
		}
	}
	// The generated document is recognised as that spec's on the next run.
	spec := "--><img src=x onerror=alert(1)>.fsm.yaml"
	root := build(t, layout{spec: "spec"})
	t.Chdir(root)
	plan := func(body string) Plan {
		return Plan{Files: []File{{Path: filepath.Join("out", "x.md"), Data: Stamp("x.md", []byte("<!-- "+headerText+" -->\n"+body), "../"+spec), Spec: spec}}, Dirs: []string{"out"}}
	}
	for _, body := range []string{"# one\n", "# two\n"} {
		if _, err := Write(plan(body)); err != nil {
			t.Fatal(err)
		}
	}
	if b, _ := os.ReadFile(filepath.Join("out", "x.md")); !strings.HasSuffix(string(b), "# two\n") {
		t.Errorf("not updated: %q", b)
	}
}
