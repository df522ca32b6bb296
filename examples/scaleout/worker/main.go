// Command worker is a worker of the scale-out proof as a program of its own: it fires its
// share of the plan's events at the orders of a store, handles the timers that fall due and
// delivers the effects of the outbox, as the worker processes of the proof's test and
// benchmark do (see the package documentation of examples/scaleout).
//
//	go run ./worker -db orders.db -workers 2 -worker 0 &
//	go run ./worker -db orders.db -workers 2 -worker 1
//	go run ./worker -postgres 'postgres://user@localhost/orders' -instances 100 -events 2000
//
// Workers that share a store must share the plan's flags (-seed, -instances, -events,
// -workers) and the clock's (-epoch, -start, -speed: by default each starts its own).
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/fsmgen/fsmgen/examples/scaleout"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(scaleout.WorkerMain(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
