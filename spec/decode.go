package spec

import (
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// decode builds the syntax tree. The document may have failed the schema: decode still
// checks every shape it relies on, so that nothing can panic, but reports a wrong shape
// only when no error was reported before (then it is a schema bug). Values with errors come
// out Bad, and declarations with errors Broken.
func (l *loader) decode(root *yaml.Node) *File {
	f := &File{Path: l.path, Broken: l.sections}
	l.fields(root, func(key string, k, v *yaml.Node) {
		switch key {
		case "version":
			f.Version = l.int(v)
		case "machine":
			f.Machine = l.str(v)
		case "package":
			f.Package = l.str(v)
		case "doc":
			f.Doc = l.str(v)
		case "record_history":
			f.RecordHistory = l.bool(v)
		case "idempotent":
			f.Idempotent = l.bool(v)
		case "timeout_levels":
			f.TimeoutLevels, f.LevelsPos = l.levels(v), l.pos(v)
		case "roles":
			l.entries(v, func(name Str, b *yaml.Node) {
				r := &Role{Name: name, Broken: l.declBroken("roles", name.Value)}
				l.fields(b, func(key string, _, v *yaml.Node) {
					switch key {
					case "doc":
						r.Doc = l.str(v)
					case "all":
						r.All = l.bool(v)
					}
				})
				f.Roles = append(f.Roles, r)
			})
		case "policies":
			l.entries(v, func(name Str, b *yaml.Node) {
				p := &Policy{Name: name, Broken: l.declBroken("policies", name.Value)}
				l.fields(b, func(key string, _, v *yaml.Node) {
					switch key {
					case "doc":
						p.Doc = l.str(v)
					case "default":
						p.Default = l.bool(v)
					}
				})
				f.Policies = append(f.Policies, p)
			})
		case "context":
			f.Context = l.fieldMap(v, func(name string) bool { return l.declBroken("context", name) })
		case "counters":
			l.entries(v, func(name Str, b *yaml.Node) {
				c := &Counter{Name: name, Broken: l.declBroken("counters", name.Value)}
				l.fields(b, func(key string, _, v *yaml.Node) {
					switch key {
					case "doc":
						c.Doc = l.str(v)
					case "per_state":
						c.PerState = l.bool(v)
					case "reset_on_success":
						c.ResetOnSuccess = l.bool(v)
					case "limit":
						c.Limit = l.int(v)
					case "max":
						c.Max = l.int(v)
					case "then":
						c.Then = l.str(v)
					case "summary":
						c.Summary = l.str(v)
					case "configurable":
						c.Configurable = l.bool(v)
					}
				})
				f.Counters = append(f.Counters, c)
			})
		case "guards":
			l.entries(v, func(name Str, b *yaml.Node) {
				g := &Guard{Name: name, Broken: l.declBroken("guards", name.Value)}
				l.fields(b, func(key string, k, v *yaml.Node) {
					switch key {
					case "doc":
						g.Doc = l.str(v)
					case "counter":
						g.Counter = l.str(v)
					case "field":
						g.Field = l.str(v)
					case "at_least":
						g.AtLeast = l.threshold(v)
					case "below":
						g.Below = l.threshold(v)
					case "equals":
						g.Equals = l.scalar(v)
					case "contains":
						g.Contains = l.scalar(v)
					case "and", "or", "not", "in":
						g.Expr = l.guardOp(g.Expr, key, k, v)
					}
				})
				f.Guards = append(f.Guards, g)
			})
		case "actions":
			l.entries(v, func(name Str, b *yaml.Node) {
				a := &Action{Name: name, Broken: l.declBroken("actions", name.Value)}
				l.fields(b, func(key string, _, v *yaml.Node) {
					switch key {
					case "doc":
						a.Doc = l.str(v)
					case "effect":
						a.Effect = l.bool(v)
					case "may_fail":
						a.MayFail = l.bool(v)
					}
				})
				f.Actions = append(f.Actions, a)
			})
		case "checkpoints":
			l.entries(v, func(name Str, b *yaml.Node) {
				c := &Checkpoint{Name: name, Broken: l.declBroken("checkpoints", name.Value)}
				l.fields(b, func(key string, _, v *yaml.Node) {
					switch key {
					case "doc":
						c.Doc = l.str(v)
					case "every_transition":
						c.EveryTransition = l.bool(v)
					case "save":
						c.Save = l.strs(v)
					}
				})
				f.Checkpoints = append(f.Checkpoints, c)
			})
		case "states":
			l.entries(v, func(name Str, b *yaml.Node) {
				f.States = append(f.States, l.state(name, b, l.declBroken("states", name.Value)))
			})
		case "events":
			l.entries(v, func(name Str, b *yaml.Node) {
				e := &Event{Name: name, Broken: l.declBroken("events", name.Value)}
				l.fields(b, func(key string, _, v *yaml.Node) {
					switch key {
					case "doc":
						e.Doc = l.str(v)
					case "payload":
						e.Payload = l.fieldMap(v, func(string) bool { return e.Broken })
					}
				})
				f.Events = append(f.Events, e)
			})
		case "transitions":
			v = resolve(v)
			if v.Kind != yaml.SequenceNode {
				l.shape(v, "expected a list")
				return
			}
			for i, t := range v.Content {
				tr := l.transition(resolve(t))
				if ptr := "/transitions/" + strconv.Itoa(i); l.under[ptr] {
					tr.Broken = true
					tr.From.Bad = l.under[ptr+"/from"]
					tr.To.Bad = l.under[ptr+"/to"]
					tr.OnBad = l.under[ptr+"/on"]
					tr.ChooseBad = tr.ChooseBad || l.under[ptr+"/choose"]
				}
				f.Transitions = append(f.Transitions, tr)
			}
		case "migrations":
			v = resolve(v)
			if v.Kind != yaml.SequenceNode {
				l.shape(v, "expected a list")
				return
			}
			for _, n := range v.Content {
				f.Migrations = append(f.Migrations, l.migration(resolve(n)))
			}
		}
	})
	return f
}

// migration reads one migration.
func (l *loader) migration(n *yaml.Node) *Migration {
	mg := &Migration{Pos: l.pos(n)}
	renames := func(v *yaml.Node) []*Rename {
		var out []*Rename
		l.entries(v, func(name Str, b *yaml.Node) {
			r := &Rename{Old: name}
			if b = resolve(b); b.Kind == yaml.ScalarNode && b.Tag == "!!null" {
				r.New = Str{Pos: l.pos(b), Set: true}
			} else {
				r.New = l.str(b)
			}
			out = append(out, r)
		})
		return out
	}
	l.fields(n, func(key string, _, v *yaml.Node) {
		switch key {
		case "from":
			mg.From = l.str(v)
		case "states":
			mg.States = renames(v)
		case "events":
			mg.Events = renames(v)
		case "counters":
			mg.Counters = renames(v)
		case "context":
			mg.Context = renames(v)
		case "defaults":
			l.entries(v, func(name Str, b *yaml.Node) {
				mg.Defaults = append(mg.Defaults, &Default{Field: name, Value: l.scalar(b)})
			})
		}
	})
	return mg
}

// shape reports that n does not have the shape decoding relies on, unless an error has
// been reported already (the schema's, about the same thing, said it better).
func (l *loader) shape(n *yaml.Node, msg string) {
	if !l.hadErrors {
		l.ds.Errorf(l.pos(n), "%s", msg)
	}
}

// state reads a state and the states nested in it (broken when its top-level state is).
func (l *loader) state(name Str, b *yaml.Node, broken bool) *State {
	s := &State{Name: name, Broken: broken}
	l.fields(b, func(key string, _, v *yaml.Node) {
		switch key {
		case "doc":
			s.Doc = l.str(v)
		case "initial":
			s.Initial = l.bool(v)
		case "terminal":
			s.Terminal = l.bool(v)
		case "groups":
			s.Groups = l.strs(v)
		case "remembers":
			s.Remembers = l.bool(v)
		case "requires":
			s.Requires = l.strs(v)
		case "entry":
			s.Entry = l.strs(v)
		case "exit":
			s.Exit = l.strs(v)
		case "timeout":
			s.Timeout = l.timeout(v)
		case "states":
			s.StatesPos = l.pos(v)
			l.entries(v, func(name Str, b *yaml.Node) {
				s.Children = append(s.Children, l.state(name, b, broken))
			})
		case "parallel":
			s.Parallel = l.bool(v)
		case "history":
			s.History = l.str(v)
		case "default":
			s.Default = l.str(v)
		}
	})
	return s
}

func (l *loader) timeout(v *yaml.Node) *Timeout {
	v = resolve(v)
	t := &Timeout{Pos: l.pos(v)}
	if v.Kind == yaml.ScalarNode {
		t.After = l.str(v)
		return t
	}
	l.fields(v, func(key string, _, v *yaml.Node) {
		switch key {
		case "after":
			t.After = l.str(v)
		case "levels":
			t.Levels, t.LevelsPos = l.levels(v), l.pos(v)
		case "configurable":
			t.Configurable = l.bool(v)
		case "on_expiry":
			t.OnExpiry = l.str(v)
		case "doc":
			t.Doc = l.str(v)
		}
	})
	return t
}

func (l *loader) levels(v *yaml.Node) []*Level {
	var out []*Level
	l.entries(v, func(name Str, b *yaml.Node) {
		lv := &Level{Name: name}
		s := l.str(b)
		n, err := strconv.ParseInt(strings.TrimSuffix(s.Value, "%"), 10, 64)
		bad := s.Bad
		if err != nil && !bad {
			l.ds.Errorf(s.Pos, "invalid percentage %q", short(s.Value))
			bad = true
		}
		lv.Percent = Int{Value: n, Pos: s.Pos, Set: true, Bad: bad}
		out = append(out, lv)
	})
	return out
}

func (l *loader) fieldMap(v *yaml.Node, broken func(name string) bool) []*Field {
	var out []*Field
	l.entries(v, func(name Str, b *yaml.Node) {
		fd := &Field{Name: name, Broken: broken(name.Value)}
		l.fields(b, func(key string, _, v *yaml.Node) {
			switch key {
			case "type":
				fd.Type = l.str(v)
			case "doc":
				fd.Doc = l.str(v)
			case "required":
				fd.Required = l.bool(v)
			case "non_empty":
				fd.NonEmpty = l.bool(v)
			case "min_items":
				fd.MinItems = l.int(v)
			case "max_items":
				fd.MaxItems = l.int(v)
			case "min":
				fd.Min = l.scalar(v)
			case "max":
				fd.Max = l.scalar(v)
			case "above":
				fd.Above = l.scalar(v)
			case "below":
				fd.Below = l.scalar(v)
			case "values":
				fd.Values = l.strs(v)
			case "default":
				fd.Default = l.scalar(v)
			case "message":
				fd.Message = l.str(v)
			}
		})
		out = append(out, fd)
	})
	return out
}

func (l *loader) threshold(v *yaml.Node) Threshold {
	v = resolve(v)
	t := Threshold{Pos: l.pos(v), Set: true}
	if v.Kind == yaml.ScalarNode {
		t.Num = l.scalar(v)
		return t
	}
	l.fields(v, func(key string, _, v *yaml.Node) {
		switch key {
		case "by":
			t.By = l.str(v)
		case "values":
			l.entries(v, func(name Str, b *yaml.Node) {
				t.Values = append(t.Values, ThresholdValue{Name: name, Value: l.scalar(b)})
			})
		case "len":
			t.Len = l.str(v)
		}
	})
	return t
}

func (l *loader) transition(n *yaml.Node) *Transition {
	t := &Transition{Pos: l.pos(n)}
	l.fields(n, func(key string, k, v *yaml.Node) {
		switch key {
		case "from":
			t.From = l.from(v)
		case "on":
			t.On, t.OnSet, t.OnPos = l.strs(v), true, l.pos(resolve(v))
		case "to":
			t.To = l.target(v)
		case "internal":
			t.Internal = l.bool(v)
		case "choose":
			v = resolve(v)
			t.ChoosePos = l.pos(k)
			if v.Kind != yaml.SequenceNode {
				l.shape(v, "expected a list")
				t.ChooseBad = true
				return
			}
			for _, c := range v.Content {
				t.Choose = append(t.Choose, l.choice(resolve(c)))
			}
		case "if":
			t.If, t.IfExpr = l.conditions(v)
		case "unless":
			t.Unless, t.UnlessExpr = l.conditions(v)
		case "by":
			v = resolve(v)
			if v.Kind == yaml.ScalarNode {
				t.By = append(t.By, l.roleRule(v))
				return
			}
			for _, r := range v.Content {
				t.By = append(t.By, l.roleRule(resolve(r)))
			}
		case "do":
			t.Do = l.strs(v)
		case "increment":
			t.Increment = l.strs(v)
		case "reset":
			t.Reset = l.strs(v)
		case "checkpoint":
			t.Checkpoint = l.str(v)
		case "doc":
			t.Doc = l.str(v)
		case "always":
			t.Always = l.bool(v)
		case "done":
			t.Done = l.bool(v)
		case "reenter":
			t.Reenter = l.bool(v)
		case "raise":
			t.Raise = l.strs(v)
		case "after":
			t.After = l.str(v)
		}
	})
	return t
}

func (l *loader) from(v *yaml.Node) From {
	v = resolve(v)
	f := From{Pos: l.pos(v), Set: true}
	switch v.Kind {
	case yaml.ScalarNode, yaml.SequenceNode:
		f.States = l.strs(v)
	case yaml.MappingNode:
		l.fields(v, func(key string, _, v *yaml.Node) {
			switch key {
			case "group":
				f.Group = l.str(v)
			case "any":
				f.Any = l.bool(v).Value
			case "except":
				f.Except = l.strs(v)
			}
		})
	}
	return f
}

func (l *loader) target(v *yaml.Node) Target {
	v = resolve(v)
	t := Target{Pos: l.pos(v), Set: true}
	if v.Kind == yaml.ScalarNode {
		t.State = l.str(v)
		return t
	}
	if v.Kind == yaml.SequenceNode {
		names := l.strs(v)
		if len(names) == 0 {
			t.Bad = true // the schema says why
			return t
		}
		t.State, t.More = names[0], names[1:]
		return t
	}
	l.fields(v, func(key string, _, v *yaml.Node) {
		if key == "history" {
			t.History = l.str(v)
		}
	})
	return t
}

func (l *loader) choice(n *yaml.Node) *Choice {
	c := &Choice{Pos: l.pos(n)}
	l.fields(n, func(key string, _, v *yaml.Node) {
		switch key {
		case "if":
			c.If, c.IfExpr = l.conditions(v)
		case "unless":
			c.Unless, c.UnlessExpr = l.conditions(v)
		case "to":
			c.To = l.target(v)
		case "doc":
			c.Doc = l.str(v)
		}
	})
	return c
}

func (l *loader) roleRule(n *yaml.Node) RoleRule {
	r := RoleRule{Pos: l.pos(n)}
	if n.Kind == yaml.ScalarNode {
		r.Role = l.str(n)
		return r
	}
	l.fields(n, func(key string, _, v *yaml.Node) {
		switch key {
		case "role":
			r.Role = l.str(v)
		case "policy":
			r.Policy = l.str(v)
		}
	})
	return r
}

// fields calls fn for each key of a mapping, in order. A null node has no fields. Keys
// toJSON refused (merge keys, keys that are not scalars, the second of a duplicate) are
// left out.
func (l *loader) fields(n *yaml.Node, fn func(key string, k, v *yaml.Node)) {
	n = resolve(n)
	if n.Kind != yaml.MappingNode {
		if !(n.Kind == yaml.ScalarNode && n.Tag == "!!null") {
			l.shape(n, "expected a mapping")
		}
		return
	}
	var seen map[string]bool
	if len(n.Content) > 2 {
		seen = make(map[string]bool, len(n.Content)/2)
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := resolve(n.Content[i])
		if k.Kind != yaml.ScalarNode || k.Tag == "!!merge" || seen[k.Value] {
			continue
		}
		if seen != nil {
			seen[k.Value] = true
		}
		fn(k.Value, n.Content[i], n.Content[i+1])
	}
}

// entries calls fn for each name: body entry of a mapping, in order; name carries the
// key's position.
func (l *loader) entries(n *yaml.Node, fn func(name Str, body *yaml.Node)) {
	l.fields(n, func(key string, k, v *yaml.Node) {
		fn(Str{Value: key, Pos: l.pos(k), Set: true, Bad: l.bad[k] || l.bad[resolve(k)]}, v)
	})
}

func (l *loader) str(n *yaml.Node) Str {
	n = resolve(n)
	if n.Kind != yaml.ScalarNode {
		l.shape(n, "expected a string")
		return Str{Pos: l.pos(n), Set: true, Bad: true}
	}
	return Str{Value: n.Value, Pos: l.pos(n), Set: true, Bad: l.bad[n]}
}

// strs reads one string or a list of strings. A value of the wrong shape reads as one Bad
// string.
func (l *loader) strs(n *yaml.Node) []Str {
	n = resolve(n)
	switch n.Kind {
	case yaml.ScalarNode:
		if n.Tag == "!!null" {
			return nil
		}
		return []Str{l.str(n)}
	case yaml.SequenceNode:
		out := make([]Str, 0, len(n.Content))
		for _, c := range n.Content {
			out = append(out, l.str(c))
		}
		return out
	}
	l.shape(n, "expected a string or a list of strings")
	return []Str{{Pos: l.pos(n), Set: true, Bad: true}}
}

func (l *loader) bool(n *yaml.Node) Bool {
	n = resolve(n)
	var b bool
	if n.Kind != yaml.ScalarNode || n.Decode(&b) != nil {
		l.shape(n, "expected a boolean")
		return Bool{Pos: l.pos(n), Set: true, Bad: true}
	}
	return Bool{Value: b, Pos: l.pos(n), Set: true, Bad: l.bad[n]}
}

func (l *loader) int(n *yaml.Node) Int {
	n = resolve(n)
	var i int64
	if n.Kind != yaml.ScalarNode || n.Decode(&i) != nil {
		if n.Kind == yaml.ScalarNode && (n.Tag == "!!int" || n.Tag == "!!float") {
			if !l.bad[n] { // a valid number the schema accepts, too large for an integer
				l.ds.Errorf(l.pos(n), "integer %s is out of range", short(n.Value))
			}
		} else {
			l.shape(n, "expected an integer")
		}
		return Int{Pos: l.pos(n), Set: true, Bad: true}
	}
	return Int{Value: i, Pos: l.pos(n), Set: true, Bad: l.bad[n]}
}

func (l *loader) scalar(n *yaml.Node) Scalar {
	n = resolve(n)
	s := Scalar{Text: n.Value, Pos: l.pos(n), Set: true, Bad: l.bad[n]}
	if n.Kind != yaml.ScalarNode {
		l.shape(n, "expected a scalar")
		s.Text, s.Bad = "", true
		return s
	}
	switch n.Tag {
	case "!!int", "!!float":
		s.Kind = ScalarNumber
		if n.Decode(&s.Num) != nil {
			if !s.Bad {
				l.ds.Errorf(l.pos(n), "invalid number %q", short(n.Value))
			}
			s.Bad = true
		}
	case "!!bool":
		s.Kind = ScalarBool
		_ = n.Decode(&s.Bool)
	default:
		s.Kind = ScalarString
	}
	return s
}
