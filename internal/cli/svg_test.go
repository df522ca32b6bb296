package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The fsmgen command registers no SVG renderer: asked for a picture, it fails with a usage
// error that names the fsmgen that draws one, and writes nothing. (The pictures themselves
// are tested in the module github.com/fsmgen/fsmgen/svg, with Graphviz.)
func TestNoSVGRenderer(t *testing.T) {
	if svgRender != nil {
		t.Fatal("the fsmgen command registered an SVG renderer")
	}
	code, stdout, stderr := run(t, "diagram", "--format", "svg", kitchen)
	if code != ExitUsage || stdout != "" ||
		!strings.Contains(stderr, "this fsmgen draws no SVG") ||
		!strings.Contains(stderr, "go run github.com/fsmgen/fsmgen/svg/cmd/fsmgen diagram --format svg FILE") {
		t.Errorf("diagram --format svg: code %d, stdout %q, stderr %q", code, stdout, stderr)
	}

	out := filepath.Join(t.TempDir(), "out")
	code, stdout, stderr = run(t, "generate", "--outputs", "markdown,svg", "-o", out, kitchen)
	if code != ExitUsage || stdout != "" ||
		!strings.Contains(stderr, "--outputs svg: this fsmgen draws no SVG") ||
		!strings.Contains(stderr, "go run github.com/fsmgen/fsmgen/svg/cmd/fsmgen generate --outputs markdown,svg FILE...") {
		t.Errorf("generate --outputs svg: code %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("generate --outputs svg wrote %s (%v)", out, err)
	}

	// The other formats are as they were; an unknown one names svg among those known.
	if code, stdout, _ := run(t, "diagram", "--format", "dot", kitchen); code != ExitOK || !strings.Contains(stdout, "digraph") {
		t.Errorf("diagram --format dot: code %d", code)
	}
	if code, _, stderr := run(t, "diagram", "--format", "png", kitchen); code != ExitUsage || !strings.Contains(stderr, "want mermaid, dot, markdown or svg") {
		t.Errorf("diagram --format png: code %d, stderr %q", code, stderr)
	}
}
