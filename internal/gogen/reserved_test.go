package gogen_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"strings"
	"testing"

	"github.com/fsmgen/fsmgen/internal/gogen"
	"github.com/fsmgen/fsmgen/internal/ir"
	"github.com/fsmgen/fsmgen/internal/lower"
	"github.com/fsmgen/fsmgen/internal/names"
)

// TestReservedNamesCoverGeneratedDecls keeps the checker's record of what the generated
// code declares (internal/lower/gonames.go) in step with the generator: every package-level
// identifier, machine method and machine field the generated code declares must either be
// made from a spec name or be in that record, or the checker cannot refuse a spec whose
// names would declare it twice.
func TestReservedNamesCoverGeneratedDecls(t *testing.T) {
	for _, p := range specs(t) {
		m := loadSpec(t, p)
		code, err := gogen.Generate(m, p)
		if err != nil {
			t.Fatal(err)
		}
		f, err := parser.ParseFile(token.NewFileSet(), p, code, 0)
		if err != nil {
			t.Fatal(err)
		}
		known := map[string]bool{}
		for _, r := range append(lower.PackageDecls(), lower.MachineDecls(m.GoName)...) {
			known[r.Name] = true
		}
		members := map[string]bool{}
		for _, r := range lower.MachineMembers() {
			members[r.Name] = true
		}
		fromSpec := specDerived(m)
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if d.Recv == nil {
					if !known[d.Name.Name] && !fromSpec(d.Name.Name) {
						t.Errorf("%s: function %s is neither reserved nor made from a spec name", p, d.Name.Name)
					}
					continue
				}
				if recvName(d) == m.GoName && !members[d.Name.Name] && !fromSpec(d.Name.Name) {
					t.Errorf("%s: method %s.%s is neither reserved nor made from a spec name", p, m.GoName, d.Name.Name)
				}
			case *ast.GenDecl:
				for _, sp := range d.Specs {
					switch sp := sp.(type) {
					case *ast.TypeSpec:
						if !known[sp.Name.Name] && !fromSpec(sp.Name.Name) {
							t.Errorf("%s: type %s is neither reserved nor made from a spec name", p, sp.Name.Name)
						}
						if st, ok := sp.Type.(*ast.StructType); ok && sp.Name.Name == m.GoName {
							for _, fd := range st.Fields.List {
								for _, n := range fd.Names {
									if n.Name != "_" && !members[n.Name] && !fromSpec(n.Name) {
										t.Errorf("%s: field %s.%s is neither reserved nor made from a spec name", p, m.GoName, n.Name)
									}
								}
							}
						}
					case *ast.ValueSpec:
						for _, n := range sp.Names {
							if n.Name != "_" && !known[n.Name] && !fromSpec(n.Name) {
								t.Errorf("%s: %s is neither reserved nor made from a spec name", p, n.Name)
							}
						}
					}
				}
			}
		}
	}
}

func recvName(d *ast.FuncDecl) string {
	t := d.Recv.List[0].Type
	if s, ok := t.(*ast.StarExpr); ok {
		t = s.X
	}
	if id, ok := t.(*ast.Ident); ok {
		return id.Name
	}
	return ""
}

// specDerived reports whether an identifier is made from one of the machine's spec names,
// as docs/spec.md and the generator make them.
func specDerived(m *ir.Machine) func(string) bool {
	exact := map[string]bool{}
	var prefixes []string
	add := func(ids ...string) {
		for _, id := range ids {
			exact[id] = true
		}
	}
	for _, s := range m.States {
		st, set := s.MemoryFields()
		add("State"+s.GoName, st, set)
		if s.Timeout != nil {
			for _, l := range s.Timeout.Levels {
				add("Level" + l.GoName)
			}
		}
	}
	if m.Chart != nil {
		for _, n := range m.Chart.Nodes[1:] {
			add("Node" + names.GoName(strings.ReplaceAll(n.Path, ".", "_")))
			if n.GoName != "" {
				add("Is" + n.GoName)
			}
		}
	}
	for _, e := range m.Events {
		add("Event" + e.GoName)
		if len(e.Payload) > 0 {
			add(lower.PayloadName(e.GoName), "Fire"+e.GoName, "payload"+e.GoName)
			prefixes = append(prefixes, "check"+lower.PayloadName(e.GoName))
		}
	}
	for _, r := range m.Roles {
		add("Role" + r.GoName)
	}
	for _, c := range m.Checkpoints {
		add("Checkpoint" + c.GoName)
	}
	for _, l := range m.Levels {
		add("Level" + l.GoName)
	}
	for _, c := range m.Counters {
		add("Count"+c.GoName, c.CountField())
		if c.Configurable && c.Limit > 0 {
			add(c.LimitMethod()+c.GoName, "Set"+c.LimitMethod()+c.GoName, c.LimitField())
		}
	}
	for _, g := range m.Guards {
		add("threshold" + g.GoName)
	}
	fields := m.Fields
	for _, e := range m.Events {
		fields = append(fields[:len(fields):len(fields)], e.Payload...)
	}
	for _, f := range fields {
		prefixes = append(prefixes, "check"+m.GoName+"Context")
		if f.Type.Kind == ir.Enum {
			add(f.GoName, "Parse"+f.GoName, names.LowerFirst(f.GoName)+"Names")
			prefixes = append(prefixes, f.GoName)
		}
	}
	return func(id string) bool {
		if exact[id] || strings.HasPrefix(id, "transition") {
			return true
		}
		for _, p := range prefixes {
			if strings.HasPrefix(id, p) {
				return true
			}
		}
		return false
	}
}
