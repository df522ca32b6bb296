package gogen_test

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/fsmgen/fsmgen/internal/gogen"
	"github.com/fsmgen/fsmgen/internal/interp"
	"github.com/fsmgen/fsmgen/internal/ir"
)

// logicUse fires the guard-expression chart of testdata/logic.fsm.yaml under every
// combination of its three hook guards, printing the hooks asked in order (a line per
// firing), and checks that a guarded Fire allocates nothing.
const logicUse = `package logic

import (
	"context"
	"fmt"
	"strings"
	"testing"
)

type hooks struct {
	LogicNopHooks
	loaded, licensed, blocked bool
	asked                     []string
}

func (h *hooks) Loaded(context.Context, *Logic, LogicStep) bool {
	h.asked = append(h.asked, "loaded")
	return h.loaded
}

func (h *hooks) Licensed(context.Context, *Logic, LogicStep) bool {
	h.asked = append(h.asked, "licensed")
	return h.licensed
}

func (h *hooks) Blocked(context.Context, *Logic, LogicStep) bool {
	h.asked = append(h.asked, "blocked")
	return h.blocked
}

func TestAskedInOrder(t *testing.T) {
	ctx := context.Background()
	for bits := range 8 {
		for _, seq := range [][]Event{{EventPlay}, {EventMute}, {EventNext}, {EventEject}, {EventPlay, EventMute, EventEject}} {
			h := &hooks{loaded: bits&1 != 0, licensed: bits&2 != 0, blocked: bits&4 != 0}
			m := NewLogic(h)
			var names []string
			for _, e := range seq {
				h.asked = nil
				_, err := m.Fire(ctx, e)
				names = append(names, fmt.Sprintf("%s:%s:%v:%s", e, strings.Join(h.asked, "+"), err == nil, m.State()))
			}
			fmt.Printf("ASKED %d %s\n", bits, strings.Join(names, " "))
		}
	}
}

func TestGuardedFireAllocatesNothing(t *testing.T) {
	ctx := context.Background()
	h := &hooks{loaded: true}
	m := NewLogic(h)
	if n := testing.AllocsPerRun(200, func() {
		h.asked = h.asked[:0]
		if _, err := m.Fire(ctx, EventPlay); err != nil {
			t.Fatal(err)
		}
		if _, err := m.Fire(ctx, EventStop); err != nil {
			t.Fatal(err)
		}
	}); n != 0 {
		t.Errorf("Fire guarded by expressions: %v allocations, want 0", n)
	}
}
`

// TestGuardLogicInGo: the generated code asks the hook guards of guard expressions in
// exactly the order the interpreter asks them (left to right, and and or stopping at the
// argument that decides them), takes the same transitions, and allocates nothing.
func TestGuardLogicInGo(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a module")
	}
	const path = "testdata/logic.fsm.yaml"
	m := loadSpec(t, path)
	// The interpreter's answers, in the generated program's words.
	event := map[string]*ir.Event{}
	for _, e := range m.Events {
		event[e.Name] = e
	}
	var want []string
	for bits := range 8 {
		for _, seq := range [][]string{{"play"}, {"mute"}, {"next"}, {"eject"}, {"play", "mute", "eject"}} {
			x := interp.New(m)
			var asked []string
			in := interp.Inputs{Guard: func(g *ir.Guard) bool {
				asked = append(asked, g.Name)
				return map[string]bool{"loaded": bits&1 != 0, "licensed": bits&2 != 0, "blocked": bits&4 != 0}[g.Name]
			}}
			var names []string
			for _, e := range seq {
				asked = nil
				_, rej := x.Fire(event[e], in)
				names = append(names, fmt.Sprintf("%s:%s:%v:%s", e, strings.Join(asked, "+"), rej == nil, x.State.Name))
			}
			want = append(want, fmt.Sprintf("ASKED %d %s", bits, strings.Join(names, " ")))
		}
	}
	code, err := gogen.Generate(m, path)
	if err != nil {
		t.Fatal(err)
	}
	mod := newModule(t)
	mod.write("logic/"+gogen.Filename(path), code)
	mod.write("logic/use_test.go", []byte(logicUse))
	out := mod.run(t, nil, "test", "-count=1", "-v", "./logic")
	got := regexp.MustCompile(`(?m)^ASKED .*$`).FindAllString(string(out), -1)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("the generated code asks\n%s\nthe interpreter\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if !regexp.MustCompile(`(?m)^--- PASS: TestGuardedFireAllocatesNothing`).Match(out) {
		t.Errorf("TestGuardedFireAllocatesNothing did not pass:\n%s", out)
	}
}
