package markdown

import (
	"regexp"
	"strings"
	"testing"

	"github.com/fsmgen/fsmgen/internal/mermaid"
)

// TestDocumentImage: without a picture the document is Document's, byte for byte; with
// one, it is the same document with one paragraph more under the Mermaid block, the image
// of the picture, whose alternative text is the machine's name escaped as all text is.
func TestDocumentImage(t *testing.T) {
	for _, path := range specs(t) {
		t.Run(name(path), func(t *testing.T) {
			m := load(t, path)
			diagram := mermaid.StateDiagram(m)
			plain := document(t, path)
			none, err := DocumentImage(m, diagram, "")
			if err != nil || string(none) != plain {
				t.Fatalf("without a picture the document differs from Document's (%v)", err)
			}
			with, err := DocumentImage(m, diagram, name(path)+".svg")
			if err != nil {
				t.Fatal(err)
			}
			img := Image(m.Name+" state diagram", name(path)+".svg")
			if want := "![" + Text(m.Name) + " state diagram](" + name(path) + ".svg)"; img != want {
				t.Errorf("image %q, want %q", img, want)
			}
			fence := fence(diagram)
			block := fence + "mermaid\n" + strings.TrimSuffix(diagram, "\n") + "\n" + fence + "\n"
			if !strings.Contains(string(with), block+"\n"+img+"\n\n## States\n") {
				t.Errorf("no image under the diagram:\n%s", with)
			}
			if strings.Replace(string(with), block+"\n"+img+"\n", block, 1) != plain {
				t.Error("the document with a picture differs from Document's by more than the image")
			}
			checkInert(t, strings.Replace(string(with), img, Text(m.Name), 1))
		})
	}
}

// TestImage: the alternative text is inert text, and the link is a path that no file name
// can end early or turn into anything else.
func TestImage(t *testing.T) {
	for _, tc := range []struct{ alt, file, want string }{
		{"Task state diagram", "review.svg", "![Task state diagram](review.svg)"},
		{`Evil "Machine" --> ] <b> & [x](y)`, "a b(1)<x>[2].svg",
			`![Evil "Machine" --\> \] \<b\> \& \[x\](y)](a%20b%281%29%3Cx%3E%5B2%5D.svg)`},
		{"état", "état ünï.svg", "![état](%C3%A9tat%20%C3%BCn%C3%AF.svg)"},
		{"x", "../pics/x-1_~.svg", "![x](../pics/x-1_~.svg)"},
	} {
		if got := Image(tc.alt, tc.file); got != tc.want {
			t.Errorf("Image(%q, %q) = %q, want %q", tc.alt, tc.file, got, tc.want)
		}
	}
	dest := regexp.MustCompile(`^[A-Za-z0-9%._~/-]*$`)
	for _, file := range []string{"a)b.svg", "a b.svg", "<x>.svg", "a\nb.svg", "a\\b.svg", "a`b.svg", "a\"b'.svg"} {
		img := Image("x", file)
		link := strings.TrimSuffix(strings.TrimPrefix(img, "![x]("), ")")
		if !dest.MatchString(link) {
			t.Errorf("Image(x, %q) = %q: the link holds more than a path", file, img)
		}
	}
}
