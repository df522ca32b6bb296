package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/fsmgen/fsmgen/internal/diag"
	"github.com/fsmgen/fsmgen/internal/importer"
	"github.com/fsmgen/fsmgen/internal/names"
)

// importVerb is `fsmgen import`: a statechart of another tool in, an fsmgen spec out.
func importVerb() verb {
	return verb{
		name:    "import",
		args:    "[--from xstate|scxml] [-o FILE [--force]] [--machine NAME]\n[--package NAME] FILE",
		summary: "write an fsmgen spec from an XState machine config or an SCXML document",
		about: `Import reads a statechart written for another tool, an XState v5 machine config as
JSON (--from xstate) or a W3C SCXML document (--from scxml; without --from the extension,
.json or .scxml, says which), and prints an fsmgen spec that check accepts, with the
same names; -o writes it to FILE atomically, replacing a file only with --force. What
the import cannot keep is refused at its position, as check reports (path:line:col:
error: message, on stderr), as are the checker's errors about the spec, which it gives
at the input that made them: then nothing is written and the exit status is 1. An input
may be 8 MB (8,388,608 bytes), nest 100 levels deep and hold 10,000 states; larger is
refused at the position past the limit.

XState: id (the machine's name), initial, states, type (parallel, final, history),
history and a history state's target (its default), on, always, onDone, entry, exit,
description (doc); after with delays in milliseconds ({"30000": ...} is after: 30s),
several delays per state ({"1000": ..., "5000": ...}, a clock each), from any state
but a final or history one, one state's delays per configuration; targets "#id", "#id.child", "sibling", ".child", or an array of them
(several targets, one in each region of a parallel state, are to: [a, b]);
guards and actions by name or {"type": name}; XState's and, or, not and stateIn as a
config in JSON writes them ({"type": "xstate.and", "guards": [...]}, xstate.or, {"type":
"xstate.not", "guards": [g]}, {"type": "xstate.stateIn", "stateValue": "#id"}) are the
spec's {and: [...]}, {or: [...]}, {not: ...} and {in: path} (the not of a name is
unless); a transition's {"type": "xstate.raise", "event": {"type": E}} is raise: [E]. meta (and the machine's version) is left out. A named delay ({"shortDelay": ...}) is the
configurable timeout of the state that waits it, of the value --delay shortDelay=1s gives
(one per state; without --delay it is refused). Refused: invoke, context,
output, tags, params, other guards of XState's own, a stateValue that is not a string,
reenter: true without a target.
Wildcards ("*", "error.*") are kept; a config lists no events, so --event declares those
only a wildcard takes. reenter is written for a transition to its source or
a state within it, so that it means what it means in XState. A machine with
transitions, actions or history states of its own, or parallel, becomes one top-level
state named by its id ("machine" without one), its final states beside it.

SCXML: <state id initial>, <initial>, <parallel>, <final>, <history type> with its
default <transition>, <transition event cond target type>, <onentry>, <onexit>. cond is
guard names, In('id'), !, &&, || and parentheses (the spec's {in: path}, {not: ...},
{and: [...]}, {or: [...]}; anything else is refused, naming where it stands in the
cond); event="a b" is on: [a, b]; target="a b"
is to: [a, b] (not with a history state among them); done.state.ID
on state ID is done: true; no event is always: true. Actions are <log label="NAME"/>
and <script>NAME</script>. An external transition (the default) to its source or a
state within it is reenter: true; with type="internal", one to a state within its
compound source is reenter: false. Elements and attributes of other namespaces (an
editor's layout) are left out; <raise event="E"/> in a <transition> is raise: [E]; a
<send id="T" event="E" delay="1.5s"/> in a state's <onentry>, with <cancel sendid="T"/>
in its <onexit>, makes its transitions on E after: 1500ms (the delay as CSS2 time, in
whole milliseconds; E taken by no other transition); data
models, other <send>, <assign>, <if>, <invoke>, and <raise> in <onentry> or <onexit>, are refused. event="*" and "net.*" (or "net.") are wildcards; a wildcard written before a
more specific transition of its state is refused (SCXML tries transitions in document
order, the spec the most specific first). Where SCXML and XState mean
different things (docs/spec.md, Statecharts), the spec means XState's.`,
		examples: []string{
			"fsmgen import --from xstate machine.json > machine.fsm.yaml",
			"fsmgen import chart.scxml -o chart.fsm.yaml          # the extension says SCXML",
			"fsmgen import --package lights -o light.fsm.yaml --force light.json",
			"fsmgen import light.json -o light.fsm.yaml && fsmgen sim light.fsm.yaml --events TIMER",
		},
		run: (*command).importSpec,
	}
}

func (c *command) importSpec(args []string) int {
	fs := c.flags("import")
	from := fs.String("from", "", "input `format`: xstate or scxml (default: from the file's extension)")
	out := fs.String("o", "", "write the spec to `FILE`, atomically, instead of stdout")
	force := fs.Bool("force", false, "with -o, replace FILE when it exists")
	machine := fs.String("machine", "", "the spec's machine `name` (default: from the XState id or SCXML name, else Machine)")
	pkg := fs.String("package", "", "the spec's Go `package` (default: the machine name lower-cased)")
	var events listFlag
	fs.Var(&events, "event", "declare event `name` besides those the input names, for wildcards to take (repeatable; an XState config lists no events)")
	var delayFlags listFlag
	fs.Var(&delayFlags, "delay", "`name=duration`: the value of a named delay XState's after names (its delays option, which a config in JSON leaves out), made the configurable timeout of the state that waits it (repeatable)")
	files, err := parse(fs, args)
	if err != nil {
		return ExitUsage
	}
	if len(files) != 1 {
		return c.usageErr("import needs exactly one input file")
	}
	delays, err := delayValues(delayFlags)
	if err != nil {
		return c.usageErr("%v", err)
	}
	path := files[0]
	format, ok := importer.FormatOf(path)
	if *from != "" {
		if format, err = importer.ParseFormat(*from); err != nil {
			return c.usageErr("%v", err)
		}
	} else if !ok {
		return c.usageErr("import: say --from xstate or --from scxml (the extension of %s does not say which)", path)
	}
	if *force && *out == "" {
		return c.usageErr("--force replaces the file -o names; give -o FILE")
	}
	if *pkg != "" && !importer.ValidPackage(*pkg) {
		return c.usageErr("--package %q is not a Go package name: lower-case letters and digits, starting with a letter, not a keyword", *pkg)
	}
	if *machine != "" {
		if g := names.GoName(*machine); g == "" || !names.Exported(g) {
			return c.usageErr("--machine %q does not make an exported Go type name (its Go name must start with an upper-case letter)", *machine)
		}
	}
	if *out != "" && !*force {
		if _, err := os.Lstat(*out); err == nil {
			return c.usageErr("%s exists; pass --force to replace it", *out)
		}
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return c.usageErr("%v", unwrapPath(err))
	}
	spec, ds := importer.Import(format, path, data, importer.Options{Machine: *machine, Package: *pkg, Events: events, Delays: delays})
	if len(ds) > 0 {
		diag.Write(c.stderr, ds, diag.FormatText)
	}
	if ds.HasErrors() {
		fmt.Fprintln(c.stderr, "fsmgen: nothing written")
		return ExitFindings
	}
	if *out == "" {
		if _, err := c.stdout.Write(spec); err != nil {
			return ExitUsage
		}
		return ExitOK
	}
	if err := writeAtomic(*out, spec, *force); err != nil {
		return c.usageErr("%v", err)
	}
	return ExitOK
}

// errExists is the error of writeAtomic for a file that exists when it may not be replaced.
var errExists = errors.New("exists; pass --force to replace it")

// writeAtomic writes data to path through a temporary file in the same directory, so that
// path holds either what it held or all of data. Unless replace, a file that exists (even
// one created while this one was written) is left alone and the write fails.
func writeAtomic(path string, data []byte, replace bool) (err error) {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, unwrapPath(err))
	}
	tmp := f.Name()
	defer func() {
		os.Remove(tmp) // after a rename there is nothing left to remove; after a link, the second name
		if err != nil {
			err = fmt.Errorf("writing %s: %w", path, err)
		}
	}()
	_, err = f.Write(data)
	if err == nil {
		err = f.Chmod(0o644)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	if replace {
		err = os.Rename(tmp, path)
	} else if err = os.Link(tmp, path); errors.Is(err, fs.ErrExist) {
		return errExists
	} else if err != nil {
		// No hard links here: check, then rename (a file created in between is replaced).
		if _, serr := os.Lstat(path); serr == nil {
			return errExists
		}
		err = os.Rename(tmp, path)
	}
	if err != nil {
		return unwrapPath(err)
	}
	if d, derr := os.Open(dir); derr == nil {
		d.Sync()
		d.Close()
	}
	return nil
}
