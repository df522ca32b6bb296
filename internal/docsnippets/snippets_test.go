package docsnippets

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/fsmgen/fsmgen/internal/fixture"
	"github.com/fsmgen/fsmgen/internal/gogen"
)

// TestDocSnippets compiles and vets every ```go block of README.md and docs/*.md, as its
// annotation says (see the package documentation), in one throwaway module.
func TestDocSnippets(t *testing.T) {
	root := repoRoot(t)
	blocks, errs := readDocs(root)
	for _, err := range errs {
		t.Error(err)
	}
	if testing.Short() {
		t.Skip("builds a module")
	}
	mod := newModule(t, root)
	for _, b := range blocks {
		if b.kind == "skip" {
			continue
		}
		src, err := mod.source(b)
		if err != nil {
			msg := mod.explain([]byte(err.Error()))
			if !strings.HasPrefix(msg, b.doc+":") {
				msg = fmt.Sprintf("%s:%d: %s", b.doc, b.line, msg)
			}
			t.Error(msg)
			continue
		}
		mod.write(filepath.Join("snippets", b.dirName(), "snippet.go"), src)
	}
	if t.Failed() {
		return
	}
	for _, args := range [][]string{{"build", "-gcflags=-e", "./..."}, {"vet", "./..."}} {
		if out, err := mod.goCmd(args...); err != nil {
			t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, mod.explain(out))
		}
	}
}

// TestAnnotations checks that the extraction finds every kind of annotation, and refuses
// a block without one or with one it does not know.
func TestAnnotations(t *testing.T) {
	doc := strings.Join([]string{
		"# Title",
		"<!-- compile: decls -->",
		"```go",
		"type T int",
		"```",
		"```yaml",
		"```go",
		"```",
		"<!-- compile: body func(ctx context.Context) error -->",
		"```go",
		"return nil",
		"```",
		"- in a list:",
		"  <!-- compile: api fsmrt -->",
		"  ```go",
		"  func NewMemoryStore() *MemoryStore",
		"  ```",
		"<!-- compile: skip (an excerpt) -->",
		"````go",
		"```",
		"````",
		"```go",
		"x := 1",
		"```",
		"<!-- compile: skip -->",
		"```go",
		"```",
		"<!-- compile: decl -->",
		"```go",
		"```",
		"<!-- compile: api -->",
		"```go",
		"```",
		"",
	}, "\n")
	blocks, errs := extract("x.md", []byte(doc))
	var got []string
	for _, b := range blocks {
		got = append(got, fmt.Sprintf("%d %s %q %q", b.line, b.kind, b.arg, b.code))
	}
	want := []string{
		`4 decls "" "type T int\n"`,
		`11 body "func(ctx context.Context) error" "return nil\n"`,
		`16 api "fsmrt" "func NewMemoryStore() *MemoryStore\n"`,
		"20 skip \"(an excerpt)\" \"```\\n\"",
	}
	if !slices.Equal(got, want) {
		t.Errorf("blocks:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	var msgs []string
	for _, err := range errs {
		msgs = append(msgs, err.Error())
	}
	wantErrs := []string{
		"x.md:22: ```go block without an annotation: put <!-- compile: file|decls|body|api PKG|skip (why) --> on the line before the fence",
		"x.md:25: compile: skip needs a reason in parentheses",
		`x.md:28: compile: unknown kind "decl" (file, decls, body, api or skip)`,
		"x.md:31: compile: api needs the package it lists",
	}
	if !slices.Equal(msgs, wantErrs) {
		t.Errorf("errors:\n%s\nwant\n%s", strings.Join(msgs, "\n"), strings.Join(wantErrs, "\n"))
	}
}

// A block is one ```go fenced block of a Markdown file, with its annotation.
type block struct {
	doc  string // the Markdown file, relative to the repository root, slash-separated
	path string // the Markdown file, absolute, for line directives
	line int    // the line of the block's first line of code, from 1
	code string // the code, without the fence's indentation
	kind string // file, decls, body, api or skip
	arg  string // body: the signature of the function around it; api: the package; skip: why
}

// dirName is the name of the package directory the block compiles in.
func (b block) dirName() string {
	name := strings.ToLower(fmt.Sprintf("%s_%d", b.doc, b.line))
	return regexp.MustCompile(`[^a-z0-9]+`).ReplaceAllString(name, "_")
}

// lineDirective makes the compiler report the next line as line n of the block's document.
func (b block) lineDirective(n int) string {
	return fmt.Sprintf("//line %s:%d\n", b.path, n)
}

// readDocs extracts the ```go blocks of README.md and docs/*.md.
func readDocs(root string) ([]block, []error) {
	docs, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		return nil, []error{err}
	}
	docs = append([]string{filepath.Join(root, "README.md")}, docs...)
	var blocks []block
	var errs []error
	for _, p := range docs {
		data, err := os.ReadFile(p)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		bs, es := extract(filepath.ToSlash(rel), data)
		for i := range bs {
			bs[i].path = p
		}
		blocks = append(blocks, bs...)
		errs = append(errs, es...)
	}
	return blocks, errs
}

// extract returns the ```go blocks of the Markdown document data, named doc, each with its
// annotation, and an error for each block whose annotation is missing or wrong.
func extract(doc string, data []byte) ([]block, []error) {
	noteRE := regexp.MustCompile(`^<!--\s*compile:\s*(.*?)\s*-->$`)
	lines := strings.Split(string(data), "\n")
	var blocks []block
	var errs []error
	for i := 0; i < len(lines); i++ {
		trimmed := strings.TrimLeft(lines[i], " \t")
		indent := lines[i][:len(lines[i])-len(trimmed)]
		fence := trimmed[:len(trimmed)-len(strings.TrimLeft(trimmed, "`"))]
		if len(fence) < 3 {
			continue
		}
		info := strings.Fields(trimmed[len(fence):])
		end := i + 1
		for end < len(lines) {
			t := strings.TrimSpace(lines[end])
			if strings.HasPrefix(t, fence) && strings.Trim(t, "`") == "" {
				break
			}
			end++
		}
		start := i
		i = end
		if len(info) == 0 || info[0] != "go" {
			continue
		}
		var code strings.Builder
		for _, l := range lines[start+1 : min(end, len(lines))] {
			code.WriteString(strings.TrimPrefix(l, indent))
			code.WriteByte('\n')
		}
		b := block{doc: doc, line: start + 2, code: code.String()}
		note := ""
		if start > 0 {
			note = strings.TrimSpace(lines[start-1])
		}
		m := noteRE.FindStringSubmatch(note)
		if m == nil {
			errs = append(errs, fmt.Errorf("%s:%d: ```go block without an annotation: put <!-- compile: file|decls|body|api PKG|skip (why) --> on the line before the fence", doc, start+1))
			continue
		}
		var err error
		if b.kind, b.arg, err = parseNote(m[1]); err != nil {
			errs = append(errs, fmt.Errorf("%s:%d: compile: %v", doc, start, err))
			continue
		}
		blocks = append(blocks, b)
	}
	return blocks, errs
}

// parseNote splits an annotation into its kind and argument, and checks them.
func parseNote(note string) (kind, arg string, err error) {
	kind, arg, _ = strings.Cut(note, " ")
	arg = strings.TrimSpace(arg)
	switch kind {
	case "file", "decls":
		if arg != "" {
			return "", "", fmt.Errorf("%s takes no argument", kind)
		}
	case "body":
		if arg != "" && !strings.HasPrefix(arg, "func(") {
			return "", "", fmt.Errorf("body takes the signature of the function around it, func(...) ...")
		}
	case "api":
		if arg == "" || strings.ContainsAny(arg, " \t") {
			return "", "", fmt.Errorf("api needs the package it lists")
		}
	case "skip":
		if len(arg) < 2 || arg[0] != '(' || arg[len(arg)-1] != ')' || strings.TrimSpace(arg[1:len(arg)-1]) == "" {
			return "", "", fmt.Errorf("skip needs a reason in parentheses")
		}
	default:
		return "", "", fmt.Errorf("unknown kind %q (file, decls, body, api or skip)", kind)
	}
	return kind, arg, nil
}

// repoRoot returns the directory of the go.mod above the test's working directory.
func repoRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the working directory")
		}
		dir = parent
	}
}

// A module is the throwaway module the snippets compile in.
type module struct {
	t    *testing.T
	dir  string
	root string
	// pkgs are the packages a snippet may use without importing them: name -> import path.
	pkgs map[string]string
}

// newModule writes the module's go.mod, which replaces this repository's module with its
// directory, and generates the machines of testdata/*.fsm.yaml into it.
func newModule(t *testing.T, root string) *module {
	gomod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	goLine := regexp.MustCompile(`(?m)^go \S+$`).Find(gomod)
	if goLine == nil {
		t.Fatal("go.mod has no go line")
	}
	m := &module{t: t, dir: t.TempDir(), root: root, pkgs: map[string]string{}}
	m.write("go.mod", []byte("module docsnippets\n\n"+string(goLine)+"\n\nrequire github.com/fsmgen/fsmgen v0.0.0\n\n"+
		"replace github.com/fsmgen/fsmgen => "+strconv.Quote(root)+"\n"))
	for _, p := range []string{"context", "database/sql", "encoding/json", "errors", "fmt", "log", "log/slog", "os", "strings", "sync", "sync/atomic", "testing", "time"} {
		m.pkgs[filepath.Base(p)] = p
	}
	m.pkgs["fsmrt"] = "github.com/fsmgen/fsmgen/fsmrt"
	m.pkgs["storetest"] = "github.com/fsmgen/fsmgen/fsmrt/storetest"
	seeds, err := filepath.Glob(filepath.Join(root, "generated", "*", "*_fsm.go"))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range seeds {
		name := filepath.Base(filepath.Dir(p))
		m.pkgs[name] = "github.com/fsmgen/fsmgen/generated/" + name
	}
	specs, err := filepath.Glob(filepath.Join(root, "internal", "docsnippets", "testdata", "*.fsm.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range specs {
		mach := fixture.Load(t, p)
		code, err := gogen.Generate(mach, filepath.Base(p))
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		m.write(filepath.Join(mach.Package, gogen.Filename(p)), code)
		m.pkgs[mach.Package] = "docsnippets/" + mach.Package
	}
	return m
}

func (m *module) write(rel string, data []byte) {
	p := filepath.Join(m.dir, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		m.t.Fatal(err)
	}
	if err := os.WriteFile(p, data, 0o644); err != nil {
		m.t.Fatal(err)
	}
}

// goCmd runs the go command in the module, offline.
func (m *module) goCmd(args ...string) ([]byte, error) {
	cmd := exec.Command("go", args...)
	cmd.Dir = m.dir
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod -trimpath", "GOPROXY=off", "GOTOOLCHAIN=local") // -trimpath: see gocheck
	return cmd.CombinedOutput()
}

// explain makes the go command's output read in the repository's terms.
func (m *module) explain(out []byte) string {
	s := strings.ReplaceAll(string(out), m.root+string(filepath.Separator), "")
	return strings.ReplaceAll(s, "duplicate key false in map literal", "the constant's value is not the one listed")
}

// source returns the Go file the block compiles as.
func (m *module) source(b block) ([]byte, error) {
	switch b.kind {
	case "file":
		return []byte(b.lineDirective(b.line) + b.code), nil
	case "decls":
		return m.withImports(b, "package snippet\n", b.lineDirective(b.line)+b.code)
	case "body":
		return m.body(b)
	case "api":
		return m.api(b)
	}
	return nil, fmt.Errorf("cannot compile a block of kind %q", b.kind)
}

// body wraps the block's statements in a function and marks the variables they declare
// at the top level used.
func (m *module) body(b block) ([]byte, error) {
	sig := "func()"
	if b.arg != "" {
		sig = b.arg
	}
	head := "package snippet\n"
	src := "func _" + strings.TrimPrefix(sig, "func") + " {\n" + b.lineDirective(b.line) + b.code + "}\n"
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "", head+src, parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	fn, ok := f.Decls[0].(*ast.FuncDecl)
	if !ok || len(f.Decls) != 1 {
		return nil, fmt.Errorf("body: the block is not only statements")
	}
	type insert struct {
		at   int
		text string
	}
	var inserts []insert
	for _, st := range fn.Body.List {
		var names []string
		switch st := st.(type) {
		case *ast.AssignStmt:
			if st.Tok == token.DEFINE {
				for _, l := range st.Lhs {
					if id, ok := l.(*ast.Ident); ok && id.Name != "_" {
						names = append(names, id.Name)
					}
				}
			}
		case *ast.DeclStmt:
			if gd, ok := st.Decl.(*ast.GenDecl); ok && gd.Tok == token.VAR {
				for _, sp := range gd.Specs {
					for _, id := range sp.(*ast.ValueSpec).Names {
						if id.Name != "_" {
							names = append(names, id.Name)
						}
					}
				}
			}
		}
		if len(names) > 0 {
			text := "; " + strings.Repeat("_, ", len(names)-1) + "_ = " + strings.Join(names, ", ")
			inserts = append(inserts, insert{fset.Position(st.End()).Offset - len(head), text})
		}
	}
	for i := len(inserts) - 1; i >= 0; i-- {
		src = src[:inserts[i].at] + inserts[i].text + src[inserts[i].at:]
	}
	return m.withImports(b, head, src)
}

// withImports parses head+src (a package clause, then declarations) and returns it with
// an import declaration, between the two, of the packages it uses without declaring them.
func (m *module) withImports(b block, head, src string) ([]byte, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "", head+src, parser.SkipObjectResolution|parser.ParseComments)
	if err != nil {
		return nil, err
	}
	if len(f.Imports) > 0 {
		return nil, fmt.Errorf("%s: imports are added by the test (use compile: file for a whole file)", b.kind)
	}
	declared := map[string]bool{}
	used := map[string]bool{}
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.SelectorExpr:
			if id, ok := n.X.(*ast.Ident); ok {
				used[id.Name] = true
			}
		case *ast.Field:
			for _, id := range n.Names {
				declared[id.Name] = true
			}
		case *ast.ValueSpec:
			for _, id := range n.Names {
				declared[id.Name] = true
			}
		case *ast.TypeSpec:
			declared[n.Name.Name] = true
		case *ast.FuncDecl:
			if n.Recv == nil {
				declared[n.Name.Name] = true
			}
		case *ast.AssignStmt:
			if n.Tok == token.DEFINE {
				for _, l := range n.Lhs {
					if id, ok := l.(*ast.Ident); ok {
						declared[id.Name] = true
					}
				}
			}
		case *ast.RangeStmt:
			if n.Tok == token.DEFINE {
				for _, e := range []ast.Expr{n.Key, n.Value} {
					if id, ok := e.(*ast.Ident); ok {
						declared[id.Name] = true
					}
				}
			}
		}
		return true
	})
	var imports []string
	for name := range used {
		if p, ok := m.pkgs[name]; ok && !declared[name] {
			imports = append(imports, strconv.Quote(p))
		}
	}
	slices.Sort(imports)
	var out bytes.Buffer
	out.WriteString(head)
	if len(imports) > 0 {
		out.WriteString("\nimport (\n\t" + strings.Join(imports, "\n\t") + "\n)\n")
	}
	out.WriteString("\n" + src)
	return out.Bytes(), nil
}

// TestListingsThatDrift checks that the checks fail where a document no longer says what
// the code declares: each listing below is wrong on the line its comment names.
func TestListingsThatDrift(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a module")
	}
	root := repoRoot(t)
	doc := strings.Join([]string{
		"<!-- compile: api fsmrt -->",
		"```go",
		"type Store interface { // 3: a method missing",
		"	Commit(ctx context.Context, c *Commit) error",
		"}",
		"type Clock interface { // 6: a method too many",
		"	Now() time.Time",
		"	Since(t time.Time) time.Duration",
		"}",
		"func NewMemoryStore() Store        // 10: another result",
		"func Retry(ctx context.Context, n int64, attempt func(ctx context.Context) error) error // 11: another parameter",
		"func (s *MemoryStore) Close() error // 12: no such method",
		"const DefaultWindow = 100          // 13: another value",
		"type NoRole uint16                 // 14: another underlying type",
		"type Instance struct {",
		"	Version int                     // 16: another field type",
		"}",
		"var ErrRefused = ErrGuard          // 18 compiles: values are compared by type only",
		"var ErrNoStore string              // 19: another type",
		"```",
		"<!-- compile: api task -->",
		"```go",
		"type GuardError = fsmrt.GuardError[Event, State] // 23: another alias",
		"const StateCreated Event = 0                     // 24: another type",
		"```",
		"<!-- compile: body func(ctx context.Context) -->",
		"```go",
		"m := review.NewTask()",
		"m.Fire(ctx, review.EventDone) // 29: no such event",
		"```",
		"",
	}, "\n")
	blocks, errs := extract("drift.md", []byte(doc))
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	mod := newModule(t, root)
	for i := range blocks {
		blocks[i].path = filepath.Join(mod.dir, "drift.md")
		src, err := mod.source(blocks[i])
		if err != nil {
			t.Fatal(err)
		}
		mod.write(filepath.Join("snippets", blocks[i].dirName(), "snippet.go"), src)
	}
	out, err := mod.goCmd("build", "-gcflags=-e", "./...")
	if err == nil {
		t.Fatal("the listings compiled")
	}
	got := mod.explain(out)
	for _, line := range []int{3, 6, 10, 11, 12, 13, 14, 16, 19, 23, 24, 29} {
		if !strings.Contains(got, fmt.Sprintf("drift.md:%d:", line)) {
			t.Errorf("no error on line %d", line)
		}
	}
	if strings.Contains(got, "drift.md:18:") {
		t.Error("an error on line 18")
	}
	if t.Failed() {
		t.Log(got)
	}
}
