package cli

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"time"

	"github.com/fsmgen/fsmgen/preview"
)

func init() { authorVerbs = append(authorVerbs, previewVerb) }

func previewVerb() verb {
	return verb{
		name:    "preview",
		args:    "[--listen HOST:PORT] FILE...",
		summary: "serve a live page that draws, checks and simulates the specs",
		about: `Preview serves a page (package preview) that shows, for each spec, its diagram drawn by
the Mermaid library fsmgen carries (nothing is fetched from the network), its findings
with their positions, and a simulator: the reference interpreter, run by fsmgen as sim
runs it, with the active state(s) highlighted on the diagram, a button for each event
permitted now (and the others, to see why they are refused), toggles for hook guards,
roles, policies and failing actions, inputs for context and payload fields, the log of
steps with each refusal and why, undo and reset, and the fsmgen sim command that replays
the session. The page follows the files: within a second of a change it shows the new
findings and diagram and runs the session again on the new machine, keeping what the
spec still declares. It listens on 127.0.0.1 (--listen, port 0 by default: any free
port; only a loopback address is accepted) and prints its URL. It runs until
interrupted; 2 on a usage error or an unreadable spec.`,
		examples: []string{
			"fsmgen preview examples/review/review.fsm.yaml",
			"fsmgen preview --listen 127.0.0.1:8088 examples/*/*.fsm.yaml",
		},
		run: (*command).preview,
	}
}

func (c *command) preview(args []string) int {
	fs := c.flags("preview")
	listen := fs.String("listen", "127.0.0.1:0", "the loopback `address` to listen on")
	files, err := parse(fs, args)
	if err != nil {
		return ExitUsage
	}
	if len(files) == 0 {
		return c.usageErr("preview needs at least one spec file")
	}
	if err := checkLoopback(*listen, false); err != nil {
		return c.usageErr("--listen: %s is not a loopback address: the preview has no authentication; serve it on 127.0.0.1, [::1] or localhost", *listen)
	}
	srv, err := preview.New(files...)
	if err != nil {
		return c.usageErr("%v", unwrapPath(err))
	}
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		return c.usageErr("--listen: %v", err)
	}
	ctx, stop := signal.NotifyContext(c.ctx, os.Interrupt)
	defer stop()
	go srv.Watch(ctx, 200*time.Millisecond)
	hs := &http.Server{Handler: srv, ReadHeaderTimeout: 10 * time.Second}
	hs.RegisterOnShutdown(srv.Close) // the pages waiting for a change let go at once
	fmt.Fprintf(c.stdout, "fsmgen preview: serving %d spec(s) at http://%s/\n", len(files), ln.Addr())
	return c.serve(ctx, "preview", hs, ln)
}
