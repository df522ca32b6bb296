package docsnippets

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"strings"

	"golang.org/x/tools/go/ast/astutil"
)

// api returns the assertions that the declarations an api block lists are its package's,
// one line of them per declaration (per field, for a struct), reported at the line of the
// listing that declares it.
func (m *module) api(b block) ([]byte, error) {
	pkg := b.arg
	if _, ok := m.pkgs[pkg]; !ok {
		return nil, fmt.Errorf("api: unknown package %q", pkg)
	}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "", "package listing\n"+b.lineDirective(b.line)+b.code, parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	var out strings.Builder
	var errs []string
	check := func(n ast.Node, lines ...string) {
		out.WriteString(b.lineDirective(fset.Position(n.Pos()).Line))
		out.WriteString(strings.Join(lines, "; ") + "\n")
	}
	refuse := func(n ast.Node, format string, args ...any) {
		errs = append(errs, fmt.Sprintf("%s: %s", fset.Position(n.Pos()), fmt.Sprintf(format, args...)))
	}
	q := func(e ast.Expr) string { return types.ExprString(qualify(e, pkg)) }
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			if d.Body != nil {
				refuse(d, "an api listing declares %s without a body", d.Name.Name)
				continue
			}
			if d.Type.TypeParams != nil {
				refuse(d, "an api listing cannot check the generic function %s", d.Name.Name)
				continue
			}
			sig := &ast.FuncType{Params: &ast.FieldList{}, Results: d.Type.Results}
			target := pkg + "." + d.Name.Name
			if d.Recv != nil {
				recv := d.Recv.List[0].Type
				base := recv
				if star, ok := recv.(*ast.StarExpr); ok {
					base = star.X
				}
				if _, ok := base.(*ast.Ident); !ok {
					refuse(d, "an api listing cannot check the methods of a generic type")
					continue
				}
				// A method expression: its type has the receiver as first parameter.
				target = "(" + types.ExprString(qualify(recv, pkg)) + ")." + d.Name.Name
				sig.Params.List = append(sig.Params.List, &ast.Field{Type: recv})
			}
			sig.Params.List = append(sig.Params.List, d.Type.Params.List...)
			check(d, fmt.Sprintf("var _ %s = %s", q(sig), target))
		case *ast.GenDecl:
			for _, sp := range d.Specs {
				switch sp := sp.(type) {
				case *ast.TypeSpec:
					if sp.TypeParams != nil {
						refuse(sp, "an api listing cannot check the generic type %s", sp.Name.Name)
						continue
					}
					name := pkg + "." + sp.Name.Name
					switch t := sp.Type.(type) {
					case *ast.InterfaceType:
						if sp.Assign.IsValid() {
							check(sp, fmt.Sprintf("var _ = func(x *%s) *%s { return x }", name, q(t)))
							continue
						}
						// Assignable both ways: the method sets are the same.
						local := "listed" + sp.Name.Name
						check(sp, "type "+local+" "+q(t), fmt.Sprintf("var _ %s = %s(nil)", name, local), fmt.Sprintf("var _ %s = %s(nil)", local, name))
					case *ast.StructType:
						if sp.Assign.IsValid() {
							check(sp, fmt.Sprintf("var _ = func(x *%s) *%s { return x }", name, q(t)))
							continue
						}
						for _, fld := range t.Fields.List {
							names := fld.Names
							if len(names) == 0 {
								names = []*ast.Ident{embeddedName(fld.Type)}
							}
							ft := q(fld.Type)
							for _, n := range names {
								check(fld, fmt.Sprintf("var _ = func(x *%s) *%s { return &x.%s }", name, ft, n.Name))
							}
						}
					default:
						if sp.Assign.IsValid() {
							check(sp, fmt.Sprintf("var _ = func(x *%s) *%s { return x }", name, q(t)))
						} else {
							check(sp, fmt.Sprintf("var _ = func(x *%s) *%s { return (*%s)(x) }", name, q(t), q(t)))
						}
					}
				case *ast.ValueSpec:
					for i, id := range sp.Names {
						name := pkg + "." + id.Name
						var lines []string
						switch d.Tok {
						case token.CONST:
							if sp.Type != nil {
								lines = append(lines, fmt.Sprintf("var _ = func() *%s { x := %s; return &x }", q(sp.Type), name))
							} else {
								lines = append(lines, "var _ = "+name)
							}
							if i < len(sp.Values) && literal(sp.Values[i]) {
								// A duplicate key unless the value is the one listed.
								lines = append(lines, fmt.Sprintf("var _ = map[bool]int{false: 0, %s == (%s): 1}", name, q(sp.Values[i])))
							}
						case token.VAR:
							switch {
							case sp.Type != nil:
								lines = append(lines, fmt.Sprintf("var _ *%s = &%s", q(sp.Type), name))
							case i < len(sp.Values):
								lines = append(lines, fmt.Sprintf("var _ = func() { a, b := %s, %s; a, b = b, a; _, _ = a, b }", name, q(sp.Values[i])))
							default:
								lines = append(lines, "var _ = &"+name)
							}
						}
						check(id, lines...)
					}
				default:
					refuse(sp, "an api listing has no imports: names are its package's unless qualified")
				}
			}
		}
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("%s", strings.Join(errs, "\n"))
	}
	return m.withImports(b, "package snippet\n", out.String())
}

// qualify rewrites e, an expression of a listing of package pkg, so that it reads the same
// outside pkg: the names it declares are qualified with pkg, and the parameters of function
// types lose their names (whose names could hide a package).
func qualify(e ast.Expr, pkg string) ast.Expr {
	return astutil.Apply(e, func(c *astutil.Cursor) bool {
		switch n := c.Node().(type) {
		case *ast.SelectorExpr:
			return false // qualified already
		case *ast.FuncType:
			n.Params = unnamed(n.Params)
			n.Results = unnamed(n.Results)
		case *ast.Ident:
			if c.Name() != "Names" && n.Name != "_" && types.Universe.Lookup(n.Name) == nil {
				c.Replace(&ast.SelectorExpr{X: ast.NewIdent(pkg), Sel: ast.NewIdent(n.Name)})
			}
		}
		return true
	}, nil).(ast.Expr)
}

// unnamed returns the fields of l without their names, one per name.
func unnamed(l *ast.FieldList) *ast.FieldList {
	if l == nil {
		return nil
	}
	out := &ast.FieldList{}
	for _, f := range l.List {
		for range max(1, len(f.Names)) {
			out.List = append(out.List, &ast.Field{Type: f.Type})
		}
	}
	return out
}

// embeddedName is the field name of an embedded field of type t.
func embeddedName(t ast.Expr) *ast.Ident {
	for {
		switch x := t.(type) {
		case *ast.StarExpr:
			t = x.X
		case *ast.IndexExpr:
			t = x.X
		case *ast.IndexListExpr:
			t = x.X
		case *ast.SelectorExpr:
			return x.Sel
		case *ast.Ident:
			return x
		default:
			return ast.NewIdent("_")
		}
	}
}

// literal reports whether e is a number, string or character literal, possibly negated.
func literal(e ast.Expr) bool {
	if u, ok := e.(*ast.UnaryExpr); ok && u.Op == token.SUB {
		e = u.X
	}
	_, ok := e.(*ast.BasicLit)
	return ok
}
