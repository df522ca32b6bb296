package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/fsmgen/fsmgen/fsmrt"
	"github.com/fsmgen/fsmgen/generated/build"
	"github.com/fsmgen/fsmgen/inspect"
	fsmotel "github.com/fsmgen/fsmgen/otel"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	promexporter "go.opentelemetry.io/otel/exporters/prometheus"
	"go.opentelemetry.io/otel/exporters/stdout/stdouttrace"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
)

// operate starts what an operator looks at, as the flags ask: with addr, the inspector of
// the store's tasks at / and their metrics for Prometheus at /metrics, served on addr, a
// loopback address; with traces, a file the spans of every firing, commit, timer and
// effect are written to, a JSON object each. It returns what stops them.
func operate(store fsmrt.Store, addr, traces string, stderr io.Writer) (func(), error) {
	if addr == "" && traces == "" {
		return func() {}, nil
	}
	var stops []func()
	stop := func() {
		for i := len(stops) - 1; i >= 0; i-- {
			stops[i]()
		}
	}
	var tp trace.TracerProvider = noop.NewTracerProvider()
	if traces != "" {
		f, err := os.Create(traces)
		if err != nil {
			return nil, err
		}
		exp, err := stdouttrace.New(stdouttrace.WithWriter(f))
		if err != nil {
			f.Close()
			return nil, err
		}
		sdk := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
		stops = append(stops, func() { sdk.Shutdown(context.Background()); f.Close() })
		tp = sdk
	}
	reg := prometheus.NewRegistry()
	exporter, err := promexporter.New(promexporter.WithRegisterer(reg))
	if err != nil {
		stop()
		return nil, err
	}
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(exporter))
	stops = append(stops, func() { mp.Shutdown(context.Background()) })
	obs, err := fsmotel.New(tp, mp)
	if err != nil {
		stop()
		return nil, err
	}
	fsmrt.SetDefaultObserver(obs)
	stops = append(stops, func() { fsmrt.SetDefaultObserver(nil) })
	if err := fsmotel.ObserveStore(mp, store, "build.Task", fsmotel.Names(build.States())); err != nil {
		stop()
		return nil, err
	}
	if addr == "" {
		return stop, nil
	}
	host, _, err := net.SplitHostPort(addr)
	if ip := net.ParseIP(host); err != nil || host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		stop()
		return nil, fmt.Errorf("-inspect %s: serve on a loopback address (127.0.0.1:PORT)", addr)
	}
	pages, err := inspect.New(store, build.NewTask(nil).Describe())
	if err != nil {
		stop()
		return nil, err
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	mux.Handle("/", pages)
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		stop()
		return nil, err
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			fmt.Fprintf(stderr, "worker: inspector: %v\n", err)
		}
	}()
	stops = append(stops, func() { srv.Close() })
	fmt.Fprintf(stderr, "worker: inspector on http://%s/, metrics on http://%s/metrics\n", ln.Addr(), ln.Addr())
	return stop, nil
}
