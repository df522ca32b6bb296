package chartdiff

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// XStateConfig renders c as the config argument of XState v5's createMachine, as JSON.
// Every state's id is its name and targets are written "#name"; states, transitions and
// actions keep document order (JSON objects are written in order, and JavaScript keeps the
// insertion order of keys like "s3"). Guards and actions are referred to by name: the
// runner supplies them through setup (see RunXState).
func (c *Chart) XStateConfig() ([]byte, error) {
	if err := c.Check(); err != nil {
		return nil, err
	}
	return json.Marshal(c.xstateNode(c.Root))
}

// object is a JSON object that keeps the order of its members.
type object []member

type member struct {
	key   string
	value any
}

func (o object) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, m := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		k, err := json.Marshal(m.key)
		if err != nil {
			return nil, err
		}
		v, err := json.Marshal(m.value)
		if err != nil {
			return nil, err
		}
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

func (c *Chart) xstateNode(n *Node) object {
	var o object
	add := func(k string, v any) { o = append(o, member{k, v}) }
	if n.Parent != nil {
		add("id", n.Name)
	}
	switch n.Kind {
	case Parallel:
		add("type", "parallel")
	case Final:
		add("type", "final")
	case ShallowHistory, DeepHistory:
		add("type", "history")
		if n.Kind == DeepHistory {
			add("history", "deep")
		} else {
			add("history", "shallow")
		}
		if n.Default != "" {
			add("target", c.ref(n.Default))
		}
	}
	if n.Kind == Compound {
		add("initial", n.Initial)
	}
	if len(n.Entry) > 0 {
		add("entry", n.Entry)
	}
	if len(n.Exit) > 0 {
		add("exit", n.Exit)
	}
	var on, after object
	var always, done []object
	for _, t := range n.On {
		switch {
		case t.Delay > 0:
			after = addTo(after, delayKey(t.Delay), c.xstateTrans(t))
		case t.Always:
			always = append(always, c.xstateTrans(t))
		case t.Done:
			done = append(done, c.xstateTrans(t))
		default:
			i := 0
			for i < len(on) && on[i].key != t.Event {
				i++
			}
			if i == len(on) {
				on = append(on, member{t.Event, []object(nil)})
			}
			on[i].value = append(on[i].value.([]object), c.xstateTrans(t))
		}
	}
	if len(on) > 0 {
		add("on", on)
	}
	if len(always) > 0 {
		add("always", always)
	}
	if len(after) > 0 {
		add("after", after)
	}
	if len(done) > 0 {
		add("onDone", done)
	}
	if len(n.Children) > 0 {
		var states object
		for _, ch := range n.Children {
			states = append(states, member{ch.Name, c.xstateNode(ch)})
		}
		add("states", states)
	}
	return o
}

func (c *Chart) xstateTrans(t *Trans) object {
	var o object
	switch {
	case len(t.More) > 0:
		refs := []string{c.ref(t.Target)}
		for _, m := range t.More {
			refs = append(refs, c.ref(m))
		}
		o = append(o, member{"target", refs})
	case t.Target != "":
		o = append(o, member{"target", c.ref(t.Target)})
	}
	if t.Guard != "" {
		o = append(o, member{"guard", t.Guard})
	}
	if t.Expr != nil {
		o = append(o, member{"guard", c.xstateGuard(t.Expr)})
	}
	if len(t.Actions)+len(t.Raise) > 0 {
		var acts []any
		for _, a := range t.Actions {
			acts = append(acts, a)
		}
		for _, e := range t.Raise { // XState's raise action, which the runner makes so
			acts = append(acts, object{{"type", "xstate.raise"}, {"event", object{{"type", e}}}})
		}
		o = append(o, member{"actions", acts})
	}
	return append(o, member{"reenter", t.Reenter})
}

// ref is the XState target for the node at path: its id.
func (c *Chart) ref(path string) string {
	return "#" + c.Lookup(path).Name
}

// NeedXState skips t when node or the xstate package in dir (testdata/xstate of this
// package, which holds the runner and the lockfile) is missing, and fails it instead under
// CI=true: .ci/run installs both.
func NeedXState(t testing.TB, dir string) {
	t.Helper()
	if err := nodeReady(dir); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("CI=true but the XState runner is not ready: %v (.ci/run runs npm ci in internal/chartdiff/testdata/xstate)", err)
		}
		t.Skipf("XState is not installed: %v (run npm ci in internal/chartdiff/testdata/xstate)", err)
	}
}

// nodeReady reports whether node and dir/node_modules/xstate are present.
func nodeReady(dir string) error {
	if _, err := exec.LookPath("node"); err != nil {
		return fmt.Errorf("node is not on PATH: %w", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "xstate", "package.json")); err != nil {
		return fmt.Errorf("xstate is not installed (run npm ci in %s): %w", dir, err)
	}
	return nil
}

type runnerCase struct {
	Machine   json.RawMessage `json:"machine"`
	Guards    map[string]bool `json:"guards"`
	Actions   []string        `json:"actions"`
	Sequences [][]string      `json:"sequences"`
}

type runnerResult struct {
	Error string          `json:"error"`
	Runs  [][]Observation `json:"runs"` // per sequence, per step
}

// RunXState runs every case in one node process (the runner in dir, normally
// "testdata/xstate" relative to the package) and returns, per case, per sequence, len(seq)+1
// observations: after start, then after each event. Each sequence starts from a fresh actor.
//
// Cancelling ctx kills node. A case that XState rejects or fails on makes RunXState return
// an error naming the case (its index in cases), sequence and step; the errors of all
// cases are joined, and the observations of the other cases are returned with them.
func RunXState(ctx context.Context, dir string, cases []Case) ([][][]Observation, error) {
	in := struct {
		Cases []runnerCase `json:"cases"`
	}{Cases: make([]runnerCase, len(cases))}
	for i, cs := range cases {
		cfg, err := cs.Chart.XStateConfig()
		if err != nil {
			return nil, fmt.Errorf("case %d: %w", i, err)
		}
		seqs := cs.Sequences
		if seqs == nil {
			seqs = [][]string{}
		}
		guards := cs.Chart.Guards
		if guards == nil {
			guards = map[string]bool{}
		}
		in.Cases[i] = runnerCase{Machine: cfg, Guards: guards, Actions: cs.Chart.Actions(), Sequences: seqs}
	}
	stdin, err := json.Marshal(in)
	if err != nil {
		return nil, err
	}

	cmd := exec.CommandContext(ctx, "node", "run.mjs")
	cmd.Dir = dir
	cmd.Stdin = bytes.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("xstate runner: %w", ctx.Err())
		}
		if msg := strings.TrimSpace(stderr.String()); msg != "" {
			return nil, fmt.Errorf("xstate runner in %s: %v\n%s", dir, err, msg)
		}
		return nil, fmt.Errorf("xstate runner in %s: %w", dir, err)
	}

	var out struct {
		Results []runnerResult `json:"results"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
		return nil, fmt.Errorf("xstate runner: bad output: %v\nstderr:\n%s", err, strings.TrimSpace(stderr.String()))
	}
	if len(out.Results) != len(cases) {
		return nil, fmt.Errorf("xstate runner: %d results for %d cases", len(out.Results), len(cases))
	}
	var errs []error
	res := make([][][]Observation, len(cases))
	for i, r := range out.Results {
		if r.Error != "" {
			errs = append(errs, fmt.Errorf("xstate: case %d: %s", i, r.Error))
			continue
		}
		seqs := cases[i].Sequences
		if len(r.Runs) != len(seqs) {
			errs = append(errs, fmt.Errorf("xstate: case %d: %d runs for %d sequences", i, len(r.Runs), len(seqs)))
			continue
		}
		for j, run := range r.Runs {
			if len(run) != len(seqs[j])+1 {
				errs = append(errs, fmt.Errorf("xstate: case %d sequence %d: %d observations for %d events", i, j, len(run), len(seqs[j])))
			}
			for k := range run {
				if len(run[k].Actions) == 0 {
					run[k].Actions = nil
				}
			}
		}
		res[i] = r.Runs
	}
	if len(errs) > 0 {
		return res, errors.Join(errs...)
	}
	return res, nil
}
