package gogen

import (
	"fmt"
	"slices"
	"strings"

	. "github.com/dave/jennifer/jen"
	"github.com/fsmgen/fsmgen/internal/ir"
	"github.com/fsmgen/fsmgen/internal/names"
)

// enumSpec describes one small integer type with named constants.
type enumSpec struct {
	Type     string   // Go type name
	What     string   // "state", "event", ...
	Doc      string   // the type's doc comment
	Prefix   string   // constant prefix
	GoNames  []string // constant suffixes
	Names    []string // spec names
	Docs     []string // per-constant docs
	Count    string   // exported count constant, or ""
	Offset   int      // 1 when the zero value means "none"
	NoneName string   // constant for the zero value when Offset is 1
}

// flagDocs are the docs of states that say nothing but what the state is.
var flagDocs = []string{"Initial.", "Terminal.", "Initial and terminal.", "May fire every transition.", "Taken on every transition."}

// enum emits the type, its constants, String, Parse, MarshalText/UnmarshalText and a
// compile guard that breaks the build if the constants are renumbered by hand.
func (g *gen) enum(f *File, e enumSpec) {
	n := len(e.Names)
	f.Comment(comment(e.Doc))
	f.Type().Id(e.Type).Id(uintType(n + e.Offset))
	f.Line()
	f.Const().DefsFunc(func(d *Group) {
		if e.Offset == 1 {
			d.Comment(comment(fmt.Sprintf("%s is the zero %s: none.", e.NoneName, e.Type)))
			d.Id(e.NoneName).Id(e.Type).Op("=").Lit(0)
		}
		for i, name := range e.Names {
			// A value the spec documents gets a doc comment; one it does not, at most a
			// trailing note (initial, terminal, ...).
			doc := ""
			if e.Docs != nil {
				doc = strings.TrimSpace(e.Docs[i])
			}
			flag := slices.Contains(flagDocs, doc)
			if doc != "" && !flag {
				d.Comment(comment(fmt.Sprintf("%s%s is the %s %s. %s", e.Prefix, e.GoNames[i], e.What, quoted(name), doc)))
			}
			c := d.Id(e.Prefix + e.GoNames[i]).Id(e.Type).Op("=").Lit(i + e.Offset)
			if flag {
				c.Comment(strings.ToLower(strings.TrimSuffix(doc, ".")))
			}
		}
		if e.Count != "" {
			d.Id(e.Count).Op("=").Lit(n).Comment(fmt.Sprintf("the number of %ss", e.What))
		}
	})
	f.Line()
	// The names, on one line; the constants are declared right above them, in the same
	// generated file, so no compile guard is needed to keep them in step.
	namesVar := names.LowerFirst(e.Type) + "Names"
	var nv fields
	nv.add("Package", Lit(g.m.Package))
	nv.add("Type", Lit(e.Type))
	nv.add("What", Lit(e.What))
	if e.Offset == 1 {
		nv.add("None", True())
	}
	nv.add("List", Index().String().ValuesFunc(func(v *Group) {
		if e.Offset == 1 {
			v.Lit("")
		}
		for _, name := range e.Names {
			v.Lit(name)
		}
	}))
	width := 0
	for _, name := range e.Names {
		width += len(name) + 4
	}
	if width <= 60 {
		f.Var().Id(namesVar).Op("=").Qual(rt, "Names").Values(nv...)
	} else {
		// A long list, a name per line.
		nv[len(nv)-1] = Id("List").Op(":").Index().String().ValuesFunc(func(v *Group) {
			if e.Offset == 1 {
				v.Line().Lit("")
			}
			for _, name := range e.Names {
				v.Line().Lit(name)
			}
			v.Line()
		})
		f.Var().Id(namesVar).Op("=").Qual(rt, "Names").Values(nv...)
	}
	f.Line()
	// Parse and the text methods, together: one doc says what they share (stringer, too,
	// leaves String undocumented).
	recv := "v"
	parse := "Parse" + e.Type
	f.Commentf("// %s returns the %s with the given spec name; String, MarshalText and UnmarshalText\n// use the same names.", parse, e.What)
	f.Func().Id(parse).Params(Id("name").String()).Params(Id(e.Type), Error()).Add(inline(
		Return(Qual(rt, "Parse").Index(Id(e.Type)).Call(Op("&").Id(namesVar), Id("name")))))
	f.Func().Params(Id(recv).Id(e.Type)).Id("String").Params().String().Add(inline(
		Return(Id(namesVar).Dot("String").Call(Int().Parens(Id(recv))))))
	f.Func().Params(Id(recv).Id(e.Type)).Id("MarshalText").Params().Params(Index().Byte(), Error()).Add(inline(
		Return(Id(namesVar).Dot("Marshal").Call(Int().Parens(Id(recv))))))
	f.Func().Params(Id(recv).Op("*").Id(e.Type)).Id("UnmarshalText").Params(Id("b").Index().Byte()).Error().Add(inline(
		Return(Qual(rt, "Unmarshal").Call(Op("&").Id(namesVar), Id("b"), Id(recv)))))
	f.Line()
}

// structLine is a struct type of one field (an embedding) on one line.
func structLine(fields ...Code) *Statement {
	return Id("struct").Add(Custom(Options{Open: "{ ", Close: " }", Separator: "; "}, fields...))
}

// inline is a function body on one line, as gofmt keeps a short one.
func inline(stmts ...Code) *Statement {
	return Custom(Options{Open: "{ ", Close: " }", Separator: "; "}, stmts...)
}

// types emits State, Event, Role, Checkpoint, TimeoutLevel and the enum types of context
// fields, with their queries.
func (g *gen) types(f *File) {
	m := g.m
	st := enumSpec{Type: "State", What: "state", Prefix: "State", Count: "NumStates",
		Doc: "State is a state of the " + m.Name + " machine."}
	for _, s := range m.States {
		st.Names = append(st.Names, s.Name)
		st.GoNames = append(st.GoNames, s.GoName)
		doc := s.Doc
		switch {
		case s.Initial && s.Terminal:
			doc = "Initial and terminal. " + doc
		case s.Initial:
			doc = "Initial. " + doc
		case s.Terminal:
			doc = "Terminal. " + doc
		}
		st.Docs = append(st.Docs, doc)
	}
	g.enum(f, st)

	ev := enumSpec{Type: "Event", What: "event", Prefix: "Event", Count: "NumEvents",
		Doc: "Event is an event of the " + m.Name + " machine."}
	for _, e := range g.external() {
		ev.Names = append(ev.Names, e.Name)
		ev.GoNames = append(ev.GoNames, e.GoName)
		ev.Docs = append(ev.Docs, e.Doc)
	}
	g.enum(f, ev)

	// States and Events.
	f.Comment("// States and Events return every state and every event, in declaration order.")
	for _, x := range []struct{ fn, typ, count string }{{"States", "State", "NumStates"}, {"Events", "Event", "NumEvents"}} {
		f.Func().Id(x.fn).Params().Index().Id(x.typ).Add(inline(Return(Qual(rt, "All").Index(Id(x.typ)).Call(Id(x.count)))))
	}
	f.Line()
	if m.Chart != nil {
		g.nodes(f)
	}

	// IsTerminal and group membership.
	var terminals []Code
	for _, s := range m.States {
		if s.Terminal {
			terminals = append(terminals, Id("State"+s.GoName))
		}
	}
	g.stateSet(f, "IsTerminal", "reports whether no event is accepted in s.", terminals)
	for _, gr := range m.Groups {
		var members []Code
		for _, s := range gr.States {
			members = append(members, Id("State"+s.GoName))
		}
		g.stateSet(f, "Is"+gr.GoName, fmt.Sprintf("reports whether s is in the group %s.", quoted(gr.Name)), members)
	}

	if len(m.Roles) > 0 {
		ro := enumSpec{Type: "Role", What: "role", Prefix: "Role", Offset: 1, NoneName: "RoleNone",
			Doc: "Role says who fires an event. The zero Role is nobody in particular: it may fire only transitions that name no roles."}
		for _, r := range m.Roles {
			ro.Names = append(ro.Names, r.Name)
			ro.GoNames = append(ro.GoNames, r.GoName)
			doc := r.Doc
			if r.All {
				doc = "May fire every transition. " + doc
			}
			ro.Docs = append(ro.Docs, doc)
		}
		g.enum(f, ro)
	}
	if len(m.Checkpoints) > 0 {
		cp := enumSpec{Type: "Checkpoint", What: "checkpoint", Prefix: "Checkpoint",
			Doc: "Checkpoint names a persistence point of the spec."}
		for _, c := range m.Checkpoints {
			cp.Names = append(cp.Names, c.Name)
			cp.GoNames = append(cp.GoNames, c.GoName)
			doc := c.Doc
			if c.EveryTransition {
				doc = "Taken on every transition. " + doc
			}
			if len(c.Save) > 0 {
				doc += " Saves: " + joinNames(c.Save) + "."
			}
			cp.Docs = append(cp.Docs, doc)
		}
		g.enum(f, cp)
	}
	if levels := g.levels(); len(levels) > 0 {
		lv := enumSpec{Type: "TimeoutLevel", What: "timeout level", Prefix: "Level", Offset: 1, NoneName: "LevelNone",
			Doc: "TimeoutLevel is how far past its timeout a machine is. Levels are reported, never enforced."}
		for _, l := range levels {
			lv.Names = append(lv.Names, l.Name)
			lv.GoNames = append(lv.GoNames, l.GoName)
		}
		g.enum(f, lv)
	}
	for _, fd := range m.Fields {
		if fd.Type.Kind == ir.Enum {
			g.fieldEnum(f, fd)
		}
	}
	for _, e := range m.Events {
		for _, fd := range e.Payload {
			if fd.Type.Kind == ir.Enum {
				g.fieldEnum(f, fd)
			}
		}
	}
}

func (g *gen) fieldEnum(f *File, fd *ir.Field) {
	en := enumSpec{Type: g.enumType(fd), What: fd.Name + " value", Prefix: g.enumType(fd),
		Doc: fmt.Sprintf("%s is the type of the enum field %s.%s", g.enumType(fd), quoted(fd.Name), docSuffix(fd.Doc))}
	if fd.Unset() {
		// A required enum: its zero value is none of its values, so a missing one shows.
		en.Offset, en.NoneName = 1, g.enumType(fd)+"Unset"
	}
	for _, v := range fd.Values {
		en.Names = append(en.Names, v)
		en.GoNames = append(en.GoNames, names.GoName(v))
	}
	g.enum(f, en)
}

// enumType is the Go type of an enum field.
func (g *gen) enumType(fd *ir.Field) string { return fd.GoName }

// stateSet emits a State method reporting membership in a fixed set.
func (g *gen) stateSet(f *File, name, doc string, members []Code) {
	f.Comment(comment(name + " " + doc))
	switch {
	case len(members) == 0:
		f.Func().Params(Id("s").Id("State")).Id(name).Params().Bool().Add(inline(Return(False())))
	case len(members) <= 3:
		cond := Id("s").Op("==").Add(members[0])
		for _, x := range members[1:] {
			cond = cond.Op("||").Id("s").Op("==").Add(x)
		}
		f.Func().Params(Id("s").Id("State")).Id(name).Params().Bool().Add(inline(Return(cond)))
	default:
		f.Func().Params(Id("s").Id("State")).Id(name).Params().Bool().Block(
			Switch(Id("s")).Block(Case(members...).Block(Return(True()))),
			Return(False()),
		)
	}
	f.Line()
}

// levels is the union of every timeout level, by ascending percentage then name order.
func (g *gen) levels() []ir.Level {
	var out []ir.Level
	seen := map[string]bool{}
	add := func(ls []ir.Level) {
		for _, l := range ls {
			if !seen[l.Name] {
				seen[l.Name] = true
				out = append(out, l)
			}
		}
	}
	add(g.m.Levels)
	for _, s := range g.m.States {
		if s.Timeout != nil {
			add(s.Timeout.Levels)
		}
	}
	return out
}

func joinNames(names []string) string {
	out := ""
	for i, n := range names {
		if i > 0 {
			out += ", "
		}
		out += n
	}
	return out
}

func goNameOf(v string) string { return names.GoName(v) }

// article is "a thing" or "an thing", as the thing sounds.
func article(thing string) string {
	if strings.ContainsRune("aeiou", rune(thing[0])) {
		return "an " + thing
	}
	return "a " + thing
}
