package gogen

import (
	"fmt"
	"slices"
	"strings"

	. "github.com/dave/jennifer/jen"
	"github.com/fsmgen/fsmgen/internal/ir"
)

// goType is the Go type of a field.
func (g *gen) goType(fd *ir.Field) *Statement {
	var scalar *Statement
	switch fd.Type.Kind {
	case ir.String:
		scalar = String()
	case ir.Int:
		scalar = Int()
	case ir.Float:
		scalar = Float64()
	case ir.Bool:
		scalar = Bool()
	case ir.Duration:
		scalar = Qual("time", "Duration")
	case ir.Time:
		scalar = Qual("time", "Time")
	case ir.Enum:
		scalar = Id(g.enumType(fd))
	}
	switch {
	case fd.Type.List:
		return Index().Add(scalar)
	case fd.Type.Map:
		return Map(String()).Add(scalar)
	}
	return scalar
}

// JSONKey is the key of a context or payload field in the generated code's JSON: the spec
// name when encoding/json accepts it as a struct tag, else the Go name (a spec name with
// quotes or backslashes, say).
func JSONKey(f *ir.Field) string {
	if tagged(f.Name) {
		return f.Name
	}
	return f.GoName
}

// tagged reports whether encoding/json accepts name as a struct tag's name.
func tagged(name string) bool {
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("!#$%&()*+-./:;<=>?@[]^_{|}~ ", r)) {
			return false
		}
	}
	return true
}

func (g *gen) structFields(fields []*ir.Field) []Code {
	var out []Code
	for _, fd := range fields {
		doc := fmt.Sprintf("%s is %s (%s).", fd.GoName, quoted(fd.Name), fd.Type)
		if fd.Doc != "" {
			doc += " " + fd.Doc
		}
		out = append(out, Comment(comment(doc)))
		st := Id(fd.GoName).Add(g.goType(fd))
		if tagged(fd.Name) {
			st.Tag(map[string]string{"json": fd.Name + ",omitempty"})
		}
		out = append(out, st)
	}
	return out
}

// context emits the context struct, the policies struct, one struct per event payload and
// the field checks.
func (g *gen) context(f *File) {
	m := g.m
	if len(m.Fields) == 0 {
		f.Comment(comment(g.name("Context") + " holds the machine's data; its spec declares none."))
	} else {
		f.Comment(comment(g.name("Context") + " holds the machine's data: the spec's context fields. States check the\nfields they require on entry; guards may compare them."))
	}
	f.Type().Id(g.name("Context")).Struct(g.structFields(m.Fields)...)
	f.Line()
	if len(m.Policies) > 0 {
		var fields []Code
		for _, p := range m.Policies {
			doc := fmt.Sprintf("%s is the policy %s (default %v).", p.GoName, quoted(p.Name), p.Default)
			if p.Doc != "" {
				doc += " " + p.Doc
			}
			fields = append(fields, Comment(comment(doc)), Id(p.GoName).Bool().Tag(map[string]string{"json": p.GoName}))
		}
		f.Comment(comment(g.name("Policies") + " are the run-time switches role rules depend on."))
		f.Type().Id(g.name("Policies")).Struct(fields...)
		f.Line()
	}
	// Field checks, shared by requirements and payloads.
	for _, fd := range m.Fields {
		if g.required(fd) {
			g.fieldCheck(f, "check"+g.name("Context")+fd.GoName, fd, false)
		}
	}
	if g.requires() {
		g.requirements(f)
	}
	g.invariantTable(f)

	for _, e := range m.Events {
		if len(e.Payload) == 0 {
			continue
		}
		name := payloadType(e)
		f.Comment(comment(fmt.Sprintf("%s is the payload of the event %s.", name, quoted(e.Name))))
		f.Type().Id(name).Struct(g.structFields(e.Payload)...)
		f.Line()
		for _, fd := range e.Payload {
			g.fieldCheck(f, "check"+name+fd.GoName, fd, true)
		}
		f.Comment("// Validate checks the payload's constraints; it returns nil when they hold.")
		f.Func().Params(Id("p").Op("*").Id(name)).Id("Validate").Params().Index().Id("FieldError").BlockFunc(func(b *Group) {
			b.Var().Id("errs").Index().Id("FieldError")
			for _, fd := range e.Payload {
				b.Id("errs").Op("=").Id("check"+name+fd.GoName).Call(Id("p").Dot(fd.GoName), Id("errs"))
			}
			b.Return(Id("errs"))
		})
		f.Line()
	}
}

// required reports whether some state requires the context field.
func (g *gen) required(fd *ir.Field) bool {
	for _, s := range g.m.States {
		if slices.Contains(s.Requires, fd) {
			return true
		}
	}
	for _, t := range g.m.Transitions {
		if slices.Contains(t.Requires, fd) {
			return true
		}
	}
	return false
}

// fieldCheck emits func name(v T, errs []FieldError) []FieldError that appends the first
// problem of v, mirroring the reference interpreter: zero value, then non_empty, item counts,
// bounds and enum range. For context fields the zero value always fails ("required"); for
// payload fields only when the field is required.
func (g *gen) fieldCheck(f *File, name string, fd *ir.Field, payload bool) {
	msg := func(text Code) Code {
		if fd.Message != "" {
			return Lit(fd.Message)
		}
		return text
	}
	var cases []Code
	lenOf := Len(Id("v"))
	if (!payload || fd.Required) && (fd.Type.Kind != ir.Enum || fd.Type.Collection() || fd.Unset()) {
		cases = append(cases, Case(g.zero(fd)).Block(Id("msg").Op("=").Add(msg(Lit(fd.Name+" is required")))))
	}
	zeroIsEmpty := (!payload || fd.Required) && (fd.Type.Collection() || fd.Type.Kind == ir.String)
	if fd.NonEmpty && !zeroIsEmpty { // otherwise the zero-value case already reports it
		cases = append(cases, Case(Len(Id("v")).Op("==").Lit(0)).Block(Id("msg").Op("=").Add(msg(Lit(fd.Name+" must not be empty")))))
	}
	if fd.Type.Collection() {
		if fd.MinItems >= 0 {
			cases = append(cases, Case(lenOf.Clone().Op("<").Lit(fd.MinItems)).Block(Id("msg").Op("=").Add(msg(
				Qual("fmt", "Sprintf").Call(Lit(fmt.Sprintf("%s must have at least %d items (has %%d)", fd.Name, fd.MinItems)), Len(Id("v")))))))
		}
		if fd.MaxItems >= 0 {
			cases = append(cases, Case(lenOf.Clone().Op(">").Lit(fd.MaxItems)).Block(Id("msg").Op("=").Add(msg(
				Qual("fmt", "Sprintf").Call(Lit(fmt.Sprintf("%s must have at most %d items (has %%d)", fd.Name, fd.MaxItems)), Len(Id("v")))))))
		}
	} else {
		if fd.Min.Set {
			op := "<"
			if fd.MinExclusive {
				op = "<="
			}
			cases = append(cases, Case(Id("v").Op(op).Add(g.bound(fd, fd.Min))).Block(Id("msg").Op("=").Add(msg(Lit(fd.MinProblem())))))
		}
		if fd.Max.Set {
			op := ">"
			if fd.MaxExclusive {
				op = ">="
			}
			cases = append(cases, Case(Id("v").Op(op).Add(g.bound(fd, fd.Max))).Block(Id("msg").Op("=").Add(msg(Lit(fd.MaxProblem())))))
		}
		if fd.Type.Kind == ir.Enum {
			n, op := len(fd.Values), ">="
			if fd.Unset() {
				op = ">" // 0 is unset, the values are 1..n
			}
			cases = append(cases, Case(Int().Parens(Id("v")).Op(op).Lit(n)).Block(Id("msg").Op("=").Add(msg(Lit(fd.Name+" must be one of "+strings.Join(fd.Values, ", "))))))
		}
	}
	f.Func().Id(name).Params(Id("v").Add(g.goType(fd)), Id("errs").Index().Id("FieldError")).Index().Id("FieldError").BlockFunc(func(b *Group) {
		if len(cases) == 0 {
			b.Return(Id("errs"))
			return
		}
		b.Var().Id("msg").String()
		b.Switch().Block(cases...)
		b.If(Id("msg").Op("!=").Lit("")).Block(
			Id("errs").Op("=").Append(Id("errs"), Id("FieldError").Values(Dict{Id("Field"): Lit(fd.Name), Id("Message"): Id("msg")})),
		)
		b.Return(Id("errs"))
	})
	f.Line()
}

// zero is the condition "v is missing" of a required field: its zero value, except for an
// enum without an unset value, whose zero value is its first value.
func (g *gen) zero(fd *ir.Field) *Statement {
	if !fd.Type.Collection() && fd.Type.Kind == ir.Enum && !fd.Unset() {
		return False()
	}
	return zeroOf(fd, Id("v"))
}

// zeroOf is the condition "v is the zero value of the field's type".
func zeroOf(fd *ir.Field, v *Statement) *Statement {
	if fd.Type.Collection() {
		return Len(v).Op("==").Lit(0)
	}
	switch fd.Type.Kind {
	case ir.String:
		return v.Op("==").Lit("")
	case ir.Bool:
		return Op("!").Add(v)
	case ir.Time:
		return v.Dot("IsZero").Call()
	}
	return v.Op("==").Lit(0)
}

// bound is a numeric literal of the field's type.
func (g *gen) bound(fd *ir.Field, lit ir.Literal) *Statement {
	switch fd.Type.Kind {
	case ir.Int:
		return Lit(int(lit.Num))
	case ir.Duration:
		return Qual("time", "Duration").Call(Lit(int64(lit.Num)))
	}
	return Lit(lit.Num)
}

// requirements emits the check of the fields each state requires on entry.
func (g *gen) requirements(f *File) {
	m := g.m
	if m.Chart != nil {
		g.chartRequirements(f)
		return
	}
	f.Comment(comment("requirements checks the fields state s requires on entry and appends what fails to errs."))
	f.Func().Params(Id("c").Op("*").Id(g.name("Context"))).Id("requirements").Params(Id("s").Id("State"), Id("errs").Index().Id("FieldError")).Index().Id("FieldError").BlockFunc(func(b *Group) {
		var cases []Code
		for _, s := range m.States {
			if len(s.Requires) == 0 {
				continue
			}
			var body []Code
			for _, fd := range s.Requires {
				body = append(body, Id("errs").Op("=").Id("check"+g.name("Context")+fd.GoName).Call(Id("c").Dot(fd.GoName), Id("errs")))
			}
			cases = append(cases, Case(Id("State"+s.GoName)).Block(body...))
		}
		if len(cases) > 0 {
			b.Switch(Id("s")).Block(cases...)
		}
		b.Return(Id("errs"))
	})
	f.Line()
}

// chartRequirements emits the check of the fields a statechart's microstep requires, by
// transition index: those the states it enters require. Microsteps that check the same
// fields share a case.
func (g *gen) chartRequirements(f *File) {
	var keys []string
	byKey := map[string][]*ir.Transition{}
	for _, t := range g.m.Transitions {
		if len(t.Requires) == 0 {
			continue
		}
		var names []string
		for _, fd := range t.Requires {
			names = append(names, fd.Name)
		}
		k := strings.Join(names, ",")
		if byKey[k] == nil {
			keys = append(keys, k)
		}
		byKey[k] = append(byKey[k], t)
	}
	f.Comment(comment("requirements checks the fields the states microstep t (a transition's index) enters require, and appends what fails to errs."))
	f.Func().Params(Id("c").Op("*").Id(g.name("Context"))).Id("requirements").Params(Id("t").Int32(), Id("errs").Index().Id("FieldError")).Index().Id("FieldError").BlockFunc(func(b *Group) {
		var cases []Code
		for _, k := range keys {
			ts := byKey[k]
			var idx []Code
			for _, t := range ts {
				idx = append(idx, Lit(t.Index))
			}
			var body []Code
			for _, fd := range ts[0].Requires {
				body = append(body, Id("errs").Op("=").Id("check"+g.name("Context")+fd.GoName).Call(Id("c").Dot(fd.GoName), Id("errs")))
			}
			cases = append(cases, Case(idx...).Block(body...))
		}
		b.Switch(Id("t")).Block(cases...)
		b.Return(Id("errs"))
	})
	f.Line()
}
