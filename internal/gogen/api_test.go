package gogen_test

import (
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestMachineAPIListed checks the doc comment of every generated example machine type
// against the methods the type really has from the runtime's machine it embeds, as go/types
// sees them: the listing names each promoted exported method once, with its signature in
// the machine's own types, and nothing else, so that go doc of the type shows its whole
// API truly.
func TestMachineAPIListed(t *testing.T) {
	if testing.Short() {
		t.Skip("type-checks the generated packages")
	}
	dirs, err := filepath.Glob("../../generated/*")
	if err != nil || len(dirs) < 5 {
		t.Fatalf("generated packages: %v %v", dirs, err)
	}
	fset := token.NewFileSet()
	imp := importer.ForCompiler(fset, "source", nil)
	for _, dir := range dirs {
		paths, _ := filepath.Glob(filepath.Join(dir, "*_fsm.go"))
		var files []*ast.File
		for _, path := range paths {
			f, err := parser.ParseFile(fset, path, nil, parser.ParseComments)
			if err != nil {
				t.Fatal(err)
			}
			files = append(files, f)
		}
		if len(files) == 0 {
			continue
		}
		conf := types.Config{Importer: imp}
		pkg, err := conf.Check(files[0].Name.Name, fset, files, nil)
		if err != nil {
			t.Fatalf("%s: %v", dir, err)
		}
		p := struct {
			PkgPath string
			Types   *types.Package
			Syntax  []*ast.File
		}{dir, pkg, files}
		qual := func(other *types.Package) string {
			if other == p.Types {
				return ""
			}
			return other.Name()
		}
		checked := false
		for _, f := range p.Syntax {
			for _, d := range f.Decls {
				gd, ok := d.(*ast.GenDecl)
				if !ok || gd.Doc == nil {
					continue
				}
				for _, spec := range gd.Specs {
					ts, ok := spec.(*ast.TypeSpec)
					if !ok {
						continue
					}
					st, ok := ts.Type.(*ast.StructType)
					if !ok || len(st.Fields.List) == 0 || st.Fields.List[0].Names != nil {
						continue // not a struct that embeds the runtime's machine first
					}
					obj := p.Types.Scope().Lookup(ts.Name.Name)
					var want []string
					ms := types.NewMethodSet(types.NewPointer(obj.Type()))
					for i := range ms.Len() {
						sel := ms.At(i)
						if len(sel.Index()) < 2 || !sel.Obj().Exported() {
							continue // the type's own method, or an unexported one
						}
						sig := types.TypeString(sel.Obj().Type(), qual)
						want = append(want, "func (m *"+ts.Name.Name+") "+sel.Obj().Name()+strings.TrimPrefix(sig, "func"))
					}
					var got []string
					recv := "m"
					listed := regexp.MustCompile(`^\tfunc \((\w+) \*` + ts.Name.Name + `\) `)
					for _, line := range strings.Split(gd.Doc.Text(), "\n") {
						if m := listed.FindStringSubmatch(line); m != nil {
							recv = m[1]
							got = append(got, strings.TrimPrefix(line, "\t"))
						}
					}
					for i, w := range want {
						want[i] = "func (" + recv + strings.TrimPrefix(w, "func (m")
					}
					slices.Sort(want)
					slices.Sort(got)
					if len(want) == 0 || !slices.Equal(got, want) {
						t.Errorf("%s.%s: the doc comment lists\n%s\nthe type has\n%s", p.PkgPath, ts.Name.Name, strings.Join(got, "\n"), strings.Join(want, "\n"))
					}
					checked = true
				}
			}
		}
		if !checked {
			t.Errorf("%s: no machine type found", p.PkgPath)
		}
	}
}
