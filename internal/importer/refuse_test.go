package importer

import (
	"strings"

	"github.com/fsmgen/fsmgen/internal/diag"
	"testing"
)

type refusal struct {
	name string
	from Format
	in   string
	want string // the findings, one per line, with "m.json" or "m.scxml" as the file
}

func (c refusal) file() string {
	if c.from == SCXML {
		return "m.scxml"
	}
	return "m.json"
}

// x wraps the states of an XState machine (a JSON object's members) in a machine
// {"initial": "a", "states": {...}}; the states begin on line 2, column 3.
func x(states string) string {
	return "{\"initial\": \"a\", \"states\": {\n  " + states + "\n}}\n"
}

// s wraps SCXML states in a document; they begin on line 2, column 3.
func s(states string) string {
	return "<scxml xmlns=\"http://www.w3.org/2005/07/scxml\" version=\"1.0\">\n  " + states + "\n</scxml>\n"
}

func refusalCases() []refusal {
	return []refusal{
		// XState.
		{"after named delay", XState, x(`"a": {"after": {"slow": "a"}}`), "m.json:2:19: error: delay \"slow\" is a named delay, whose value the machine's options define: give it to the import (--delay slow=DURATION), which makes it the configurable timeout of \"a\"\n"},
		{"after zero", XState, x(`"a": {"after": {"0": "a"}}`), "m.json:2:19: error: delay \"0\" must be a positive number of milliseconds, at most 9223372036854\n"},
		{"after not an object", XState, x(`"a": {"after": ["a"]}`), "m.json:2:18: error: after must be an object of delays in milliseconds, not an array\n"},
		{"invoke", XState, x(`"a": {"invoke": {"src": "fetch"}}`), "m.json:2:9: error: invoke (invoked actors) cannot be imported: an fsmgen machine invokes no actors\n"},
		{"context", XState, `{"context": {"n": 1}, "initial": "a", "states": {"a": {}}}`, "m.json:1:2: error: context (extended state) cannot be imported: declare the context the machine needs in the spec\n"},
		{"output", XState, x(`"a": {"type": "final", "output": {"n": 1}}`), "m.json:2:26: error: output cannot be imported: an fsmgen machine and its final states have no output\n"},
		{"tags", XState, x(`"a": {"tags": ["busy"]}`), "m.json:2:9: error: tags cannot be imported: fsmgen states have no tags\n"},
		{"guard params", XState, x(`"a": {"on": {"go": {"target": "a", "guard": {"type": "ok", "params": {"n": 1}}}}}`), "m.json:2:62: error: guard \"ok\" has params, which cannot be imported: an fsmgen guard is a named hook without arguments\n"},
		{"guard not of two", XState, x(`"a": {"on": {"go": {"target": "a", "guard": {"type": "not", "guards": ["p", "q"]}}}}`), "m.json:2:73: error: not takes one guard: guards must be an array of one\n"},
		{"guard in state", XState, x(`"a": {"on": {"go": {"target": "a", "guard": "xstate.stateIn"}}}`), "m.json:2:47: error: guard \"xstate.stateIn\" is one of XState's own, which take arguments: write it as an object, {\"type\": \"xstate.stateIn\", ...}\n"},
		{"stateIn of a state value", XState, x(`"a": {"on": {"go": {"target": "a", "guard": {"type": "xstate.stateIn", "stateValue": {"a": "b"}}}}}`), "m.json:2:88: error: stateIn's stateValue cannot be imported as an object: write the state's id, \"#id\"\n"},
		{"stateIn of no state", XState, x(`"a": {"on": {"go": {"target": "a", "guard": {"type": "xstate.stateIn", "stateValue": "#nope"}}}}`), "m.json:2:88: error: target \"#nope\": no state has id \"nope\"\n"},
		{"guard of XState's not read", XState, x(`"a": {"on": {"go": {"target": "a", "guard": {"type": "xstate.xor", "guards": ["p"]}}}}`), "m.json:2:56: error: guard \"xstate.xor\" is one of XState's own that fsmgen does not have: it reads xstate.and, xstate.or, xstate.not and xstate.stateIn\n"},
		{"and of nothing", XState, x(`"a": {"on": {"go": {"target": "a", "guard": {"type": "xstate.and", "guards": []}}}}`), "m.json:2:80: error: and takes guards, an array of guards\n"},
		{"wildcard matching no event", XState, x(`"a": {"initial": "b", "states": {"b": {"on": {"mouse.*": "c"}}, "c": {"on": {"go": "b"}}}}`), "m.json:2:60: error: event descriptor \"mouse.*\" matches no event: declare an event \"mouse\" or one whose name starts with \"mouse.\"\n"},
		{"xstate event", XState, x(`"a": {"on": {"xstate.done.state.a": "a"}}`), "m.json:2:16: error: event \"xstate.done.state.a\" is raised by XState itself and cannot be imported (a state's done event is onDone)\n"},
		{"v4 eventless", XState, x(`"a": {"on": {"": "a"}}`), "m.json:2:16: error: the event \"\" is XState v4's eventless transition: XState v5 and the import read always\n"},
		{"event with a comma", XState, x(`"a": {"on": {"go,now": "a"}}`), "m.json:2:16: error: event name \"go,now\" holds a comma, which an fsmgen name may not hold; rename it\n"},
		{"event with a control character", XState, x(`"a": {"on": {"go\u0007": "a"}}`), "m.json:2:16: error: event name \"go\\a\" holds U+0007, a control character: an fsmgen name may hold only printable characters; rename it\n"},
		{"state with a bidi control", XState, x(`"a": {}, "b\u202e": {}`), "m.json:2:12: error: state name \"b\\u202e\" holds U+202E, a bidirectional text control: an fsmgen name may hold only printable characters; rename it\n"},
		{"several targets in one region", XState, x(`"a": {"on": {"go": {"target": ["#b1", "#b2"]}}}, "b": {"initial": "b1", "states": {"b1": {"id": "b1", "on": {"go": "b2"}}, "b2": {"id": "b2", "on": {"stop": "b1"}}}}`), "m.json:2:22: error: targets \"b.b1\" and \"b.b2\" cannot both be entered: they are in the same region (\"b\", where one state is active at a time); several targets go one into each region of a parallel state\n"},
		{"reenter without target", XState, x(`"a": {"on": {"go": {"actions": "x", "reenter": true}}}`), "m.json:2:39: error: reenter: true on a transition without a target: XState exits and enters nothing for it; remove reenter\n"},
		{"state name with a dot", XState, x(`"a": {}, "b.c": {}`), "m.json:2:12: error: state name \"b.c\" holds a dot, which separates the states of a path in an fsmgen statechart; rename it\n"},
		{"id with a dot", XState, x(`"a": {"id": "a.b"}`), "m.json:2:15: error: id \"a.b\" holds a dot: a target \"#a.b\" would name a state within \"a\"; rename it\n"},
		{"duplicate id", XState, x(`"a": {"id": "x"}, "b": {"id": "x"}`), "m.json:2:33: error: duplicate id \"x\" (first at 2:15)\n"},
		{"unknown key", XState, x(`"a": {"entyr": ["x"]}`), "m.json:2:9: error: unknown key \"entyr\" in state \"a\" (did you mean \"entry\"?)\n"},
		{"cond", XState, x(`"a": {"on": {"go": {"target": "a", "cond": "ok"}}}`), "m.json:2:38: error: cond is XState v4's name for a guard: XState v5 and the import read guard\n"},
		{"internal", XState, x(`"a": {"on": {"go": {"target": "a", "internal": false}}}`), "m.json:2:38: error: internal is XState v4's: XState v5 and the import read reenter (internal: false is reenter: true)\n"},
		{"action params", XState, x(`"a": {"entry": {"type": "log", "params": {"m": "hi"}}}`), "m.json:2:34: error: action \"log\" has params, which cannot be imported: an fsmgen action is a named hook without arguments\n"},
		{"built-in action", XState, x(`"a": {"entry": "xstate.raise"}`), "m.json:2:18: error: action \"xstate.raise\" is one of XState's own and cannot be imported: fsmgen actions are named hooks\n"},
		{"unknown id", XState, x(`"a": {"on": {"go": "#nowhere"}}`), "m.json:2:22: error: target \"#nowhere\": no state has id \"nowhere\"\n"},
		{"unknown sibling", XState, x(`"a": {"on": {"go": "bb"}}, "b": {}`), "m.json:2:22: error: target \"bb\": the machine has no state \"bb\" (did you mean \"b\"?)\n"},
		{"target of the machine", XState, `{"initial": "a", "on": {"go": "a"}, "states": {"a": {}}}`, "m.json:1:31: error: target \"a\" of the machine itself: write \".a\" for a state of the machine, or \"#id\"\n"},
		{"no initial", XState, x(`"a": {"states": {"b": {}}}`), "m.json:2:3: error: state \"a\" has states but no initial: name the state it starts in with initial\n"},
		{"unknown initial", XState, `{"initial": "z", "states": {"a": {}}}`, "m.json:1:13: error: initial \"z\" is not a state of the machine (did you mean \"a\"?)\n"},
		{"onDone of the machine", XState, `{"initial": "a", "onDone": "a", "states": {"a": {}}}`, "m.json:1:18: error: onDone of the machine itself cannot be imported: nothing above the machine takes it\n"},
		{"type", XState, x(`"a": {"type": "choice"}`), "m.json:2:17: error: type \"choice\" is not one of atomic, compound, parallel, final, history\n"},
		{"not an object", XState, `["a"]`, "m.json:1:1: error: an XState machine config is an object, not an array\n"},
		{"syntax", XState, "{\"initial\": \"a\",\n  \"states\": {\"a\": {},}}", "m.json:2:22: error: json: unexpected '}': expected a key (a string)\n"},
		{"duplicate key", XState, x(`"a": {}, "a": {}`), "m.json:2:12: error: json: duplicate key \"a\" (first at 2:3)\n"},
		{"checker: unreachable state", XState, x(`"a": {"on": {"go": "a"}}, "b": {}`), "m.json:2:29: error: state \"b\" is unreachable from the initial configuration \"a\"\n"},
		{"id with a comma, wrapped", XState, `{"id": "a,b", "initial": "a", "on": {"go": ".a"}, "states": {"a": {}}}`, "m.json:1:8: error: id \"a,b\" holds a comma, which an fsmgen name may not hold; rename it\n"},
		{"checker: final region", XState, x(`"a": {"type": "parallel", "states": {"r": {"type": "final"}}}`), "m.json:2:40: error: \"a.r\" cannot be a region of parallel state \"a\": a region is a state, or a compound state\n"},

		// SCXML.
		{"datamodel", SCXML, s(`<datamodel><data id="n"/></datamodel><state id="a"/>`), "m.scxml:2:3: error: <datamodel> cannot be imported: fsmgen statecharts have no data model; guards and actions are named hooks\n"},
		{"invoke", SCXML, s(`<state id="a"><invoke src="x"/></state>`), "m.scxml:2:17: error: <invoke> cannot be imported: an fsmgen machine invokes no services\n"},
		{"send without a delay", SCXML, s(`<state id="a"><onentry><send event="go"/></onentry></state>`), "m.scxml:2:26: error: <send> without an event and a delay cannot be imported: an fsmgen state sends nothing but the events of its delays\n"},
		{"send delay without cancel", SCXML, s(`<state id="a"><onentry><send id="t" event="go" delay="1s"/></onentry><transition event="go" target="a"/></state>`), "m.scxml:2:26: error: <send delay> without <cancel sendid=\"t\"> in the <onexit> of \"a\" cannot be imported: SCXML's event would outlive the state, fsmgen's delay ends with it\n"},
		{"send delay in minutes", SCXML, s(`<state id="a"><onentry><send id="t" event="go" delay="1m"/></onentry><onexit><cancel sendid="t"/></onexit></state>`), "m.scxml:2:50: error: delay \"1m\" cannot be imported: write a positive whole number of milliseconds as a CSS2 time (500ms, 1.5s)\n"},
		{"send delay taken elsewhere", SCXML, s(`<state id="a"><onentry><send id="t" event="go" delay="1s"/></onentry><onexit><cancel sendid="t"/></onexit><transition event="x" target="b"/></state><state id="b"><transition event="go" target="a"/></state>`), "m.scxml:2:177: error: a transition on \"go\", which \"a\" sends itself after 1s, cannot be imported unless it is a transition of \"a\" on that event alone: an fsmgen delayed transition leaves the state that waits\n"},
		{"raise in onentry", SCXML, s(`<state id="p"><state id="a"><onentry><raise event="x"/></onentry><transition event="x" target="b"/></state><state id="b"><transition event="go" target="a"/></state></state>`), "m.scxml:2:47: error: <raise> here cannot be imported: an fsmgen state raises no events; raise \"x\" on the transitions into it\n"},
		{"assign", SCXML, s(`<state id="a"><onexit><assign location="n" expr="1"/></onexit></state>`), "m.scxml:2:25: error: <assign> cannot be imported: only <log label=\"NAME\"/> and <script>NAME</script>, each naming an action, may stand in <onentry>, <onexit> and <transition>, and <raise event=\"NAME\"/> in <transition>\n"},
		{"log with expr", SCXML, s(`<state id="a"><onentry><log label="x" expr="n"/></onentry></state>`), "m.scxml:2:41: error: expr of <log> cannot be imported: <log label=\"NAME\"/> names an action by its label\n"},
		{"log without label", SCXML, s(`<state id="a"><onentry><log/></onentry></state>`), "m.scxml:2:26: error: <log> without a label cannot be imported: its label names the action\n"},
		{"script with code", SCXML, s(`<state id="a"><onentry><script>n = n + 1</script></onentry></state>`), "m.scxml:2:34: error: action \"n = n + 1\" cannot be imported: <script> must name an action, a plain identifier\n"},
		{"foreign action", SCXML, s(`<state id="a" xmlns:fsm="urn:fsm"><onentry><fsm:action name="x"/></onentry></state>`), "m.scxml:2:46: error: <action> (namespace \"urn:fsm\") cannot be imported: only <log label=\"NAME\"/> and <script>NAME</script>, each naming an action, may stand in <onentry>, <onexit> and <transition>, and <raise event=\"NAME\"/> in <transition>\n"},
		{"cond expression", SCXML, s(`<state id="a"><transition event="go" cond="n &gt; 1" target="a"/></state>`), "m.scxml:2:40: error: cond \"n > 1\" cannot be imported: expected && or || here, at \"> 1\" (character 3); a cond is guard names, In('id'), !, &&, || and parentheses\n"},
		{"cond call", SCXML, s(`<state id="a"><transition event="go" cond="ok(1)" target="a"/></state>`), "m.scxml:2:40: error: cond \"ok(1)\" cannot be imported: a call is not a guard (In('id') is the one function read), at \"ok(1)\" (character 1); a cond is guard names, In('id'), !, &&, || and parentheses\n"},
		{"cond unclosed", SCXML, s(`<state id="a"><transition event="go" cond="(a || b" target="a"/></state>`), "m.scxml:2:40: error: cond \"(a || b\" cannot be imported: expected ), at its end; a cond is guard names, In('id'), !, &&, || and parentheses\n"},
		{"cond In of no state", SCXML, s(`<state id="a"><transition event="go" cond="In('b')" target="a"/></state>`), "m.scxml:2:40: error: target \"b\": no state has that id (did you mean \"a\"?)\n"},
		{"cond literal", SCXML, s(`<state id="a"><transition event="go" cond="true" target="a"/></state>`), "m.scxml:2:40: error: cond \"true\" cannot be imported: a literal is not a guard, at \"true\" (character 1); a cond is guard names, In('id'), !, &&, || and parentheses\n"},
		{"wildcard before a transition it matches", SCXML, s(`<state id="p"><state id="a"><transition event="*" target="b"/><transition event="go" target="b"/></state><state id="b"><transition event="go" target="a"/></state></state>`), "m.scxml:2:43: error: \"*\" is written before \"go\" (2:77) in the same state: SCXML tries it first, the spec (as XState) tries the more specific \"go\" first; write the more specific transition first\n"},
		{"platform event", SCXML, s(`<state id="a"><transition event="error.execution" target="a"/></state>`), "m.scxml:2:29: error: event \"error.execution\" is raised by an SCXML processor, which fsmgen does not raise\n"},
		{"prefix of another event", SCXML, s(`<state id="a"><transition event="go" target="a"/><transition event="go.fast" target="a"/></state>`), "m.scxml:2:29: error: event \"go\" also matches \"go.fast\" (2:64) in SCXML, where a descriptor matches the events it is a prefix of; fsmgen matches names exactly: rename one\n"},
		{"several targets, one a history state", SCXML, s(`<state id="z"><transition event="go" target="h b"/></state><parallel id="p"><state id="r1"><history id="h"/><state id="a"/></state><state id="r2"><state id="b"/></state><transition event="go" target="z"/></parallel>`), "m.scxml:2:17: error: a transition with several targets, one a history state (\"h\"), cannot be imported: target states\n"},
		{"done of another state", SCXML, s(`<state id="a"><transition event="done.state.b" target="a"/></state><state id="b"/>`), "m.scxml:2:29: error: done.state.b on a transition of \"a\" cannot be imported: an fsmgen done transition is written on the state that is done\n"},
		{"no id", SCXML, s(`<state><transition event="go"/></state>`), "m.scxml:2:3: error: <state> has no id: an fsmgen state is named by it\n"},
		{"id with a dot", SCXML, s(`<state id="a.b"/>`), "m.scxml:2:10: error: state id \"a.b\" holds a dot, which separates the states of a path in an fsmgen statechart; rename it\n"},
		{"unknown attribute", SCXML, s(`<state id="a" inital="b"><state id="b"/></state>`), "m.scxml:2:17: error: unknown attribute \"inital\" of <state> (did you mean \"initial\"?)\n"},
		{"unknown target", SCXML, s(`<state id="a"><transition event="go" target="aa"/></state>`), "m.scxml:2:40: error: target \"aa\": no state has that id (did you mean \"a\"?)\n"},
		{"initial not a child", SCXML, s(`<state id="a" initial="c"><state id="b"/></state><state id="c"/>`), "m.scxml:2:17: error: initial \"c\" is not a state of \"a\": fsmgen starts a compound state in one of its own states (did you mean \"b\"?)\n"},
		{"internal to a history around it", SCXML, s(`<state id="p"><history id="h"/><state id="a"><state id="a1"/><transition event="go" target="h" type="internal"/></state></state>`), "m.scxml:2:98: error: type=\"internal\" on a transition from \"a\" to history state \"h\", whose parent holds \"a\", cannot be imported: whether SCXML re-enters \"a\" depends on what the history restores\n"},
		{"transition in a final state", SCXML, s(`<state id="a"/><final id="f"><transition event="go" target="a"/></final>`), "m.scxml:2:32: error: <transition> cannot stand in <final>\n"},
		{"not scxml", SCXML, "<html/>\n", "m.scxml:1:1: error: the document's root element is <html>, not SCXML's <scxml>\n"},
		{"syntax", SCXML, s(`<state id="a">`), "m.scxml:3:9: error: xml: element <state> closed by </scxml>\n"},
		{"checker: dead end", SCXML, s(`<state id="a"><transition event="go" target="b"/></state><state id="b"/><state id="c"/>`), "m.scxml:2:60: error: non-terminal state \"b\" has no outgoing transition (mark it terminal: true, or add one)\nm.scxml:2:75: error: non-terminal state \"c\" has no outgoing transition (mark it terminal: true, or add one)\nm.scxml:2:75: error: state \"c\" is unreachable from the initial state \"a\"\n"},
	}
}

// TestWarnings: the checker's warnings come with the spec, at the input that made them.
func TestWarnings(t *testing.T) {
	in := x(`"a": {"initial": "x", "on": {"go": "b", "leave": "b"}, "states": {"x": {"on": {"go": "y"}}, "y": {"on": {"go": "x"}}}},
  "b": {"on": {"go": "a"}}`)
	out, ds := Import(XState, "m.json", []byte(in), Options{})
	want := "m.json:2:38: warning: transition from \"a\" on \"go\" is never taken: the states within its source handle the event first, or an earlier transition always holds\n"
	if out == nil || text(ds) != want {
		t.Errorf("spec %v, findings\n%s\nwant\n%s", out != nil, text(ds), want)
	}
}

func TestRefusals(t *testing.T) {
	for _, c := range refusalCases() {
		out, ds := Import(c.from, c.file(), []byte(c.in), Options{})
		got := text(ds)
		if out != nil || got != c.want {
			t.Errorf("%s: spec %v, findings\n%s\nwant\n%s", c.name, out != nil, got, c.want)
		}
	}
}

// text is the findings as check prints them, one per line.
func text(ds diag.List) string {
	var b strings.Builder
	for _, d := range ds {
		b.WriteString(d.String() + "\n")
	}
	return b.String()
}

// TestHostileInput: input too large, not UTF-8, or nested too deep is refused with one
// finding.
func TestHostileInput(t *testing.T) {
	for _, c := range []struct {
		name string
		from Format
		in   string
		want string
	}{
		{"too large", XState, "{" + strings.Repeat(" ", maxBytes) + "}", "m.json:1:1: error: m.json is 8388610 bytes; the limit is 8388608\n"},
		{"not UTF-8", SCXML, "<scxml>\n  <state id=\"a\xff\"/>\n</scxml>\n", "m.scxml:2:15: error: m.scxml is not UTF-8 text (byte 0xff)\n"},
		{"deep JSON", XState, strings.Repeat("[", 200) + strings.Repeat("]", 200), "m.json:1:101: error: json: the config nests deeper than 100 levels\n"},
		{"deep XML", SCXML, strings.Repeat("<state>", 200) + strings.Repeat("</state>", 200), "m.scxml:1:701: error: xml: the document nests deeper than 100 levels\n"},
		{"empty", XState, " \n", "m.json:2:1: error: json: the file is empty: expected an XState machine config, an object\n"},
		{"no root element", SCXML, "<?xml version=\"1.0\"?>\n", "m.scxml:1:1: error: xml: the document has no root element: expected <scxml>\n"},
	} {
		f := refusal{from: c.from}.file()
		out, ds := Import(c.from, f, []byte(c.in), Options{})
		if out != nil || text(ds) != c.want {
			t.Errorf("%s: spec %v, findings\n%s\nwant\n%s", c.name, out != nil, text(ds), c.want)
		}
	}
}

// TestPositions: columns count characters, not bytes; a byte-order mark is skipped; escapes
// in JSON strings are decoded.
func TestPositions(t *testing.T) {
	in := "\ufeff{\"initial\": \"caf\\u00e9\", \"states\": {\"café\": {}, \"日本\": {\"invoke\": {}}}}"
	_, ds := Import(XState, "m.json", []byte(in), Options{})
	want := "m.json:1:56: error: invoke (invoked actors) cannot be imported: an fsmgen machine invokes no actors\n"
	if text(ds) != want {
		t.Errorf("findings\n%s\nwant\n%s", text(ds), want)
	}
	in = "{\"initial\": \"caf\\u00e9\", \"states\": {\"café\": {\"type\": \"final\"}}}"
	out, ds := Import(XState, "m.json", []byte(in), Options{})
	if out == nil || !strings.Contains(string(out), "  café: { initial: true, terminal: true }\n") {
		t.Errorf("findings\n%s\nspec\n%s", text(ds), out)
	}
}
