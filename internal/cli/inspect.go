package cli

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"slices"
	"time"

	"github.com/fsmgen/fsmgen/fsmrt"
	"github.com/fsmgen/fsmgen/inspect"
	"github.com/fsmgen/fsmgen/internal/diag"
	"github.com/fsmgen/fsmgen/internal/ir"
)

func inspectVerb() verb {
	return verb{
		name:    "inspect",
		args:    "--store DSN [--addr HOST:PORT] [--allow-remote] FILE...",
		summary: "serve a read-only web view of the machines stored in a store",
		about: `Inspect serves the inspector (package inspect) of the machines the specs FILE...
describe, stored in DSN, and prints its URL: for each machine its diagram with the number
of instances in each state, those past each timeout level and by counter, the instances
by state and level a page at a time, and one instance's state, context, log, armed
deadlines, pending effects and path. It only reads. It listens on 127.0.0.1 (--addr,
port 0 by default: any free port) and refuses any other address unless --allow-remote is
given: the pages have no authentication of their own (mount the handler in a program,
behind its own, to serve them further). Counters of one instance are shown by a program
that mounts the handler with its machines' Describe(), which replays them with the
generated code. The fsmgen of a store's module opens the store: store/postgres/cmd/fsmgen
for postgres:// DSNs, store/sqlite/cmd/fsmgen for SQLite files. It runs until
interrupted; 2 on a usage error, an unreadable spec or store, or a spec with errors.`,
		examples: []string{
			"go run github.com/fsmgen/fsmgen/store/sqlite/cmd/fsmgen inspect --store build.db examples/build/build.fsm.yaml",
			"go run github.com/fsmgen/fsmgen/store/postgres/cmd/fsmgen inspect --store postgres://app@db/app \\\n    --addr 127.0.0.1:8080 task.fsm.yaml",
		},
		run: (*command).inspect,
	}
}

func (c *command) inspect(args []string) int {
	fs := c.flags("inspect")
	storeDSN := fs.String("store", "", "the store `DSN` to read")
	addr := fs.String("addr", "127.0.0.1:0", "the `address` to listen on")
	remote := fs.Bool("allow-remote", false, "listen on an address other than loopback")
	files, err := parse(fs, args)
	if err != nil {
		return ExitUsage
	}
	if *storeDSN == "" || len(files) == 0 {
		return c.usageErr("inspect needs --store DSN and at least one spec")
	}
	if err := checkLoopback(*addr, *remote); err != nil {
		return c.usageErr("--addr: %v", err)
	}
	var machines []fsmrt.Description
	for _, f := range files {
		m, ds, err := loadFile(f)
		if err != nil {
			return c.usageErr("%v", unwrapPath(err))
		}
		if ds.HasErrors() {
			diag.Write(c.stderr, ds.Sorted(), diag.FormatText)
			return c.usageErr("%s has errors: fix them to inspect its machines", f)
		}
		machines = append(machines, describe(m))
	}
	o, ok := storeFor(*storeDSN)
	if !ok {
		return c.usageErr("--store: this fsmgen opens no store; the fsmgen of a store's module does: go run github.com/fsmgen/fsmgen/store/postgres/cmd/fsmgen (postgres:// DSNs) or github.com/fsmgen/fsmgen/store/sqlite/cmd/fsmgen (SQLite files)")
	}
	ctx, stop := signal.NotifyContext(c.ctx, os.Interrupt)
	defer stop()
	store, closeStore, err := o.Open(ctx, *storeDSN)
	if err != nil {
		return c.usageErr("--store: %s: %v", o.Name, err)
	}
	defer closeStore()
	h, err := inspect.New(store, machines...)
	if err != nil {
		return c.usageErr("%v", err)
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return c.usageErr("--addr: %v", err)
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	fmt.Fprintf(c.stdout, "fsmgen inspect: serving %d machine(s) of %s store at http://%s/\n", len(machines), o.Name, ln.Addr())
	return c.serve(ctx, "inspect", srv, ln)
}

// serve serves srv on ln until it fails or ctx is done, then shuts it down (giving its
// requests 5 seconds): a page server verb's exit code.
func (c *command) serve(ctx context.Context, verb string, srv *http.Server, ln net.Listener) int {
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	var err error
	select {
	case err = <-done:
	case <-ctx.Done():
		shut, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		err = srv.Shutdown(shut)
	}
	if err != nil && !errors.Is(err, http.ErrServerClosed) {
		fmt.Fprintf(c.stderr, "fsmgen: %s: %v\n", verb, err)
		return ExitUsage
	}
	return ExitOK
}

// checkLoopback refuses an address whose host is not a loopback address (or localhost),
// unless remote says so.
func checkLoopback(addr string, remote bool) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return err
	}
	if remote {
		return nil
	}
	if host == "localhost" {
		return nil
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return nil
	}
	return fmt.Errorf("%s is not a loopback address: the inspector has no authentication of its own; give --allow-remote to serve it there anyway", addr)
}

// describe is the machine as the inspector reads its store: what the generated package's
// Describe() returns, from the spec (the tests compare the two for every seed).
func describe(m *ir.Machine) fsmrt.Description {
	d := fsmrt.Description{Machine: m.Package + "." + m.Name, Spec: ir.Fingerprint(m), Chart: m.Chart != nil}
	for _, l := range m.Levels {
		d.Levels = append(d.Levels, l.Name)
	}
	for _, s := range m.States {
		sd := fsmrt.StateDescription{Name: s.Name, Initial: s == m.Initial, Terminal: s.Terminal}
		if t := s.Timeout; t != nil {
			sd.Timeout = t.After
			for _, l := range t.Levels {
				sd.Levels = append(sd.Levels, fsmrt.LevelDescription{Name: l.Name, Percent: l.Percent})
			}
			if t.OnExpiry != nil {
				sd.Expiry = t.OnExpiry.Name
			}
		}
		d.States = append(d.States, sd)
	}
	for _, e := range m.Events {
		d.Events = append(d.Events, e.Name)
	}
	for _, t := range m.Transitions {
		var td fsmrt.TransitionDescription
		for _, s := range t.From {
			td.From = append(td.From, s.Index)
			for _, x := range t.Targets(s) {
				if !slices.Contains(td.To, x.Index) {
					td.To = append(td.To, x.Index)
				}
			}
		}
		slices.Sort(td.To)
		for _, e := range t.Events {
			td.Events = append(td.Events, e.Index)
		}
		d.Transitions = append(d.Transitions, td)
	}
	for _, c := range m.Counters {
		cd := fsmrt.CounterDescription{Name: c.Name, PerState: c.PerState, Limit: c.Limit}
		if c.Then != nil {
			cd.Then = c.Then.Name
		}
		d.Counters = append(d.Counters, cd)
	}
	return d
}
