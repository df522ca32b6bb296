package svg

import (
	"bytes"
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/fsmgen/fsmgen/internal/dot"
	"github.com/fsmgen/fsmgen/internal/ir"
	"github.com/fsmgen/fsmgen/internal/lower"
	"github.com/fsmgen/fsmgen/internal/names"
	"github.com/fsmgen/fsmgen/internal/testtool"
)

// specs are the machines the pictures are tested on: every seed, the statecharts of the
// diagram tests (studio: nested, parallel and history states whose names and docs hold
// <, &, quotes and the diagram languages' syntax; corners), and the flat machine of
// hostile names.
func specs(t *testing.T) []string {
	root := testtool.Root(t)
	seeds, err := filepath.Glob(filepath.Join(root, "examples", "*", "*.fsm.yaml"))
	if err != nil || len(seeds) < 5 {
		t.Fatalf("seeds: %v %v", seeds, err)
	}
	for _, s := range []string{"studio", "corners", "hostile"} {
		seeds = append(seeds, filepath.Join(root, "internal", "mermaid", "testdata", s+".fsm.yaml"))
	}
	return seeds
}

func load(t *testing.T, path string) *ir.Machine {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	m, ds := lower.Load(path, data)
	if ds.HasErrors() || m == nil {
		t.Fatalf("%s: %v", path, ds)
	}
	return m
}

func name(path string) string { return strings.TrimSuffix(filepath.Base(path), ".fsm.yaml") }

// picture is what a test reads of an SVG document.
type picture struct {
	elements map[string]int // element names and their counts
	texts    []string       // the content of each <text>, decoded
	titles   []string       // the xlink:title of each <a>, decoded
	graph    string         // the <title> of the graph
	nodes    []string       // the <title> of each <g class="node">
	edges    []string       // the <title> of each <g class="edge">
	clusters []string       // the <title> of each <g class="cluster">
}

// parse reads an SVG document with encoding/xml (strict: any error is malformed XML),
// refusing what no diagram of fsmgen's may hold: an element that is not drawing (script,
// foreignObject, style, image...), an event handler attribute, a link.
func parse(t *testing.T, doc []byte) picture {
	t.Helper()
	p := picture{elements: map[string]int{}}
	allowed := []string{"svg", "g", "title", "a", "text", "path", "polygon", "polyline", "ellipse"}
	d := xml.NewDecoder(bytes.NewReader(doc))
	var stack []xml.StartElement
	var class []string // the class of each open <g>
	var text strings.Builder
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("not well-formed XML: %v", err)
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			n := tok.Name.Local
			p.elements[n]++
			if !slices.Contains(allowed, n) {
				t.Errorf("element <%s> in the picture", n)
			}
			cls := ""
			for _, a := range tok.Attr {
				switch {
				case strings.HasPrefix(strings.ToLower(a.Name.Local), "on"), a.Name.Local == "href", a.Name.Local == "style":
					t.Errorf("attribute %s=%q on <%s>", a.Name.Local, a.Value, n)
				case n == "a" && a.Name.Local == "title":
					p.titles = append(p.titles, a.Value)
				case a.Name.Local == "class":
					cls = a.Value
				}
			}
			if n == "g" {
				class = append(class, cls)
			}
			stack = append(stack, tok)
			text.Reset()
		case xml.CharData:
			text.Write(tok)
		case xml.EndElement:
			n := tok.Name.Local
			stack = stack[:len(stack)-1]
			switch n {
			case "g":
				class = class[:len(class)-1]
			case "text":
				p.texts = append(p.texts, text.String())
			case "title":
				if len(class) > 0 {
					switch class[len(class)-1] {
					case "graph":
						p.graph = text.String()
					case "node":
						p.nodes = append(p.nodes, text.String())
					case "edge":
						p.edges = append(p.edges, text.String())
					case "cluster":
						p.clusters = append(p.clusters, text.String())
					}
				}
			}
			text.Reset()
		}
	}
	if p.elements["svg"] != 1 {
		t.Errorf("%d <svg> elements", p.elements["svg"])
	}
	return p
}

// labels are the names the picture of m must show as text: its states' (a statechart's
// nodes' but the history states, drawn H and H*), as the DOT labels write them.
func labels(m *ir.Machine) []string {
	var out []string
	if m.Chart != nil {
		for _, n := range m.Chart.Nodes[1:] {
			if n.Kind != ir.NodeHistory {
				out = append(out, names.CleanText(n.Name))
			}
		}
		return out
	}
	for _, s := range m.States {
		out = append(out, names.CleanText(s.Name))
	}
	return out
}

// TestRender draws every spec: a well-formed picture holding nothing but drawing, its
// graph titled with the machine's name and every state's name shown as text, exactly as
// the spec writes it (so names that hold <, &, quotes and markup are escaped, not read as
// XML), and the same bytes every time.
func TestRender(t *testing.T) {
	ctx := context.Background()
	for _, path := range specs(t) {
		t.Run(name(path), func(t *testing.T) {
			m := load(t, path)
			g := []byte(dot.Graph(m))
			pic, err := Render(ctx, g)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.HasPrefix(pic, []byte("<svg ")) || !bytes.HasSuffix(pic, []byte("</svg>\n")) {
				t.Fatalf("not an <svg> element alone: %q ... %q", pic[:min(len(pic), 80)], pic[max(0, len(pic)-20):])
			}
			if bytes.Contains(pic, []byte("graphviz version")) {
				t.Error("the picture names the Graphviz version")
			}
			p := parse(t, pic)
			if want := names.CleanText(m.Name); p.graph != want {
				t.Errorf("graph title %q, want %q", p.graph, want)
			}
			for _, l := range labels(m) {
				if !slices.Contains(p.texts, l) {
					t.Errorf("no text %q in the picture; texts: %q", l, p.texts)
				}
			}
			if len(p.nodes) == 0 || len(p.edges) == 0 {
				t.Errorf("%d nodes, %d edges", len(p.nodes), len(p.edges))
			}
			again, err := Render(ctx, g)
			if err != nil || !bytes.Equal(pic, again) {
				t.Errorf("a second render differs (%v)", err)
			}
		})
	}
}

// TestHostileText checks the text of the hostile specs character for character: the docs
// (tooltips) that hold markup, entities, quotes and line breaks come back as written.
func TestHostileText(t *testing.T) {
	root := testtool.Root(t)
	m := load(t, filepath.Join(root, "internal", "mermaid", "testdata", "hostile.fsm.yaml"))
	pic, err := Render(context.Background(), []byte(dot.Graph(m)))
	if err != nil {
		t.Fatal(err)
	}
	p := parse(t, pic)
	for _, s := range m.States {
		doc := strings.TrimSpace(s.Doc)
		if doc == "" {
			continue
		}
		if want := names.CleanText(doc); !slices.Contains(p.titles, want) {
			t.Errorf("state %q: no tooltip %q; tooltips: %q", s.Name, want, p.titles)
		}
	}
	for _, bad := range []string{"<script", "<b>", "<img", "<i>"} {
		if bytes.Contains(pic, []byte(bad)) {
			t.Errorf("the picture holds %q unescaped", bad)
		}
	}
	if n := p.elements["text"]; n < len(m.States) {
		t.Errorf("%d texts for %d states", n, len(m.States))
	}
}

// TestSameAsGraphviz compares each picture with what Graphviz's own dot draws of the same
// graph (dot -Tsvg): the same nodes, edges and clusters, by their titles. Layouts differ
// between Graphviz versions; the graph drawn may not.
func TestSameAsGraphviz(t *testing.T) {
	dotCmd := testtool.Program(t, "dot", testtool.InstallGraphviz)
	if dotCmd == "" {
		return
	}
	for _, path := range specs(t) {
		t.Run(name(path), func(t *testing.T) {
			g := []byte(dot.Graph(load(t, path)))
			pic, err := Render(context.Background(), g)
			if err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(dotCmd, "-Tsvg")
			cmd.Stdin = bytes.NewReader(g)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			theirs, err := cmd.Output()
			if err != nil {
				t.Fatalf("dot -Tsvg: %v\n%s", err, stderr.Bytes())
			}
			ours, ref := parse(t, pic), parse(t, theirs)
			for _, c := range []struct {
				what      string
				ours, ref []string
			}{{"nodes", ours.nodes, ref.nodes}, {"edges", ours.edges, ref.edges}, {"clusters", ours.clusters, ref.clusters}} {
				slices.Sort(c.ours)
				slices.Sort(c.ref)
				if !slices.Equal(c.ours, c.ref) {
					t.Errorf("%s differ:\n ours %q\n dot  %q", c.what, c.ours, c.ref)
				}
			}
			texts := [][]string{ours.texts, ref.texts}
			for _, ts := range texts {
				slices.Sort(ts)
			}
			if !slices.Equal(texts[0], texts[1]) {
				t.Errorf("texts differ:\n ours %q\n dot  %q", texts[0], texts[1])
			}
			if ours.graph != ref.graph {
				t.Errorf("graph title %q, dot's %q", ours.graph, ref.graph)
			}
			t.Logf("%d nodes, %d edges, %d clusters, as dot draws them", len(ours.nodes), len(ours.edges), len(ours.clusters))
		})
	}
}

// TestConcurrentRenders renders the seeds from several goroutines at once: each picture is
// the one rendered alone.
func TestConcurrentRenders(t *testing.T) {
	ctx := context.Background()
	var graphs [][]byte
	var want [][]byte
	for _, path := range specs(t) {
		g := []byte(dot.Graph(load(t, path)))
		pic, err := Render(ctx, g)
		if err != nil {
			t.Fatal(err)
		}
		graphs, want = append(graphs, g), append(want, pic)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 4*len(graphs))
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range graphs {
				i := (i + w) % len(graphs)
				pic, err := Render(ctx, graphs[i])
				if err != nil {
					errs <- err
				} else if !bytes.Equal(pic, want[i]) {
					errs <- fmt.Errorf("graph %d drawn differently", i)
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// TestBadGraph: what Graphviz cannot read is an error, never a panic, and the renders
// after it still work; a cancelled context renders nothing.
func TestBadGraph(t *testing.T) {
	ctx := context.Background()
	for _, g := range []string{"", "digraph {", "not a graph at all", "digraph x { a -> }", "\x00\xff"} {
		if pic, err := Render(ctx, []byte(g)); err == nil {
			t.Errorf("%q: no error, picture %q", g, pic)
		}
	}
	pic, err := Render(ctx, []byte("digraph \"a & <b>\" { x [label=\"<i> & \\\"q\\\"\"]; x -> y; }"))
	if err != nil {
		t.Fatalf("a good graph after bad ones: %v", err)
	}
	p := parse(t, pic)
	if !slices.Contains(p.texts, `<i> & "q"`) || p.graph != "a & <b>" {
		t.Errorf("texts %q, graph %q", p.texts, p.graph)
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := Render(cancelled, []byte("digraph { a }")); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled context: %v", err)
	}
}

// TestEmptyLabels: an empty label draws nothing, as Graphviz draws it: no node shows its
// name for want of a label (go-graphviz gives such nodes their name when it reads the
// graph), and an empty edge or graph label takes no room, as no label.
func TestEmptyLabels(t *testing.T) {
	ctx := context.Background()
	render := func(g string) []byte {
		t.Helper()
		pic, err := Render(ctx, []byte(g))
		if err != nil {
			t.Fatalf("%s: %v", g, err)
		}
		return pic
	}
	empty := render(`digraph G { graph [label=""]; subgraph cluster_x { graph [ "label" = /* c */ "" ]; a } a -> b [label=""]; c [label=""]; edge [label=""]; b -> c }`)
	without := render(`digraph G { subgraph cluster_x { a } a -> b; c [label="\E"]; b -> c }`)
	if !bytes.Equal(empty, without) {
		t.Errorf("empty labels are not drawn as no labels:\n%s\n%s", empty, without)
	}
	if p := parse(t, empty); !slices.Equal(p.texts, []string{"a", "b"}) {
		t.Errorf("texts %q, want a and b", p.texts)
	}

	for _, tc := range []struct{ in, want string }{
		{`a [label=""]`, `a [label="\E"]`},
		{`a [label = "", xlabel=""]`, `a [label = "\E", xlabel=""]`},
		{`a ["label"=""]`, `a ["label"="\E"]`},
		{`a [tooltip="label=\"\""] // label=""` + "\n" + `/* label="" */ b [label=<label="">]`, ""},
		{"# label=\"\"\nx [mylabel=\"\", label=\"x\", label=\"\" ]", "# label=\"\"\nx [mylabel=\"\", label=\"x\", label=\"\\E\" ]"},
		{`unterminated "label=""`, ""},
	} {
		got, changed := emptyLabels([]byte(tc.in))
		want := tc.want
		if want == "" {
			want = tc.in
		}
		if string(got) != want || changed != (tc.want != "") {
			t.Errorf("emptyLabels(%q) = %q, %v; want %q", tc.in, got, changed, want)
		}
	}
}
