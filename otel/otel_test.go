package otel_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/fsmgen/fsmgen/fsmrt"
	"github.com/fsmgen/fsmgen/generated/build"
	"github.com/fsmgen/fsmgen/generated/review"
	fsmotel "github.com/fsmgen/fsmgen/otel"
	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

// setup returns an observer on the real SDK with in-memory exporters.
func setup(t *testing.T) (*fsmotel.Observer, *tracetest.SpanRecorder, *sdkmetric.ManualReader, *sdktrace.TracerProvider) {
	t.Helper()
	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	obs, err := fsmotel.New(tp, mp)
	if err != nil {
		t.Fatal(err)
	}
	return obs, spans, reader, tp
}

// points returns the data points of metric name, each as its attribute set's encoding.
func points(t *testing.T, reader *sdkmetric.ManualReader, name string) map[string]int64 {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	out := map[string]int64{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name != name {
				continue
			}
			switch d := m.Data.(type) {
			case metricdata.Sum[int64]:
				for _, p := range d.DataPoints {
					out[p.Attributes.Encoded(attribute.DefaultEncoder())] += p.Value
				}
			case metricdata.Histogram[float64]:
				for _, p := range d.DataPoints {
					out[p.Attributes.Encoded(attribute.DefaultEncoder())] += int64(p.Count)
				}
			}
		}
	}
	return out
}

// TestFireSpansAndMetrics: a firing is a span, a child of the caller's, with its commit
// as a child of its own; accepted transitions and refusals are counted by the spec's
// names.
func TestFireSpansAndMetrics(t *testing.T) {
	obs, spans, reader, tp := setup(t)
	ctx, parent := tp.Tracer("app").Start(context.Background(), "request")
	m := review.NewTask()
	m.ID = "TASK-1"
	m.SetStore(fsmrt.NewMemoryStore())
	fsmrt.SetObserver(&m.Machine, obs)
	if _, err := m.Fire(ctx, review.EventInProgress); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Fire(ctx, review.EventCompleted); err == nil {
		t.Fatal("skipping phases was accepted")
	}
	parent.End()

	byName := map[string]sdktrace.ReadOnlySpan{}
	for _, s := range spans.Ended() {
		byName[s.Name()] = s
	}
	fire, commit := byName["fire in_progress"], byName["commit"]
	if fire == nil || commit == nil || byName["fire completed"] == nil {
		t.Fatalf("spans: %v", byName)
	}
	if fire.Parent().SpanID() != parent.SpanContext().SpanID() || commit.Parent().SpanID() != fire.SpanContext().SpanID() {
		t.Error("the firing's span is not the caller's child, or the commit's not the firing's")
	}
	attrs := map[attribute.Key]string{}
	for _, a := range byName["fire completed"].Attributes() {
		attrs[a.Key] = a.Value.Emit()
	}
	if attrs[fsmotel.AttrOutcome] != "refused" || attrs[fsmotel.AttrRefusal] != fsmrt.RefusalInvalid || attrs[fsmotel.AttrInstance] != "TASK-1" || attrs[fsmotel.AttrTo] != "in_progress" {
		t.Errorf("refused firing's attributes: %v", attrs)
	}
	tr := points(t, reader, "fsm.transitions")
	if len(tr) != 1 || tr["fsm.event=in_progress,fsm.from=not_started,fsm.machine=review.Task,fsm.to=in_progress"] != 1 {
		t.Errorf("transitions: %v", tr)
	}
	if rf := points(t, reader, "fsm.refusals"); rf["fsm.event=completed,fsm.from=in_progress,fsm.machine=review.Task,fsm.refusal=invalid"] != 1 {
		t.Errorf("refusals: %v", rf)
	}
	if c := points(t, reader, "fsm.commit.duration"); c["fsm.machine=review.Task"] != 1 {
		t.Errorf("commits: %v", c)
	}
}

// TestCardinalityBoundedBySpec: a thousand instances with hostile IDs, each firing the
// same events, make no more metric series than the spec has names for, and no ID appears
// in any metric.
func TestCardinalityBoundedBySpec(t *testing.T) {
	obs, _, reader, _ := setup(t)
	ctx := context.Background()
	store := fsmrt.NewMemoryStore()
	for i := range 1000 {
		m := review.NewTask()
		m.ID = fmt.Sprintf("<script>alert(%d)</script>\x00%c", i, rune(0x4e00+i))
		m.SetStore(store)
		fsmrt.SetObserver(&m.Machine, obs)
		m.Fire(ctx, review.EventInProgress)
		m.Fire(ctx, review.EventCompleted) // refused
	}
	for _, name := range []string{"fsm.transitions", "fsm.refusals", "fsm.commit.duration"} {
		ps := points(t, reader, name)
		if len(ps) != 1 {
			t.Errorf("%s: %d series, want 1: %v", name, len(ps), ps)
		}
		for k := range ps {
			if strings.Contains(k, "script") || strings.Contains(k, "instance") {
				t.Errorf("%s: an instance in a label: %s", name, k)
			}
		}
	}
}

// TestDefaultObserverAndTimers: SetDefaultObserver reaches the machines a scheduler loads,
// whose deadlines handled are spans with their lag measured.
func TestDefaultObserverAndTimers(t *testing.T) {
	obs, spans, reader, _ := setup(t)
	fsmrt.SetDefaultObserver(obs)
	defer fsmrt.SetDefaultObserver(nil)
	ctx := context.Background()
	store := fsmrt.NewMemoryStore()
	t0 := time.Date(2026, 6, 1, 8, 0, 0, 0, time.UTC)
	m := build.NewTask(build.TaskNopHooks{})
	m.ID = "TASK-7"
	m.SetStore(store)
	if err := m.Create(ctx, build.TaskInput{At: t0}); err != nil {
		t.Fatal(err)
	}
	n, err := build.FireDueTaskTimers(ctx, store, build.TaskNopHooks{}, t0.Add(2*time.Hour), 10)
	if err != nil || n == 0 {
		t.Fatalf("timers: %d, %v", n, err)
	}
	timers := 0
	for _, s := range spans.Ended() {
		if strings.HasPrefix(s.Name(), "timer ") {
			timers++
		}
	}
	if timers != n {
		t.Errorf("%d timer spans for %d deadlines handled", timers, n)
	}
	lag := points(t, reader, "fsm.timer.lag")
	total := int64(0)
	for k, v := range lag {
		if !strings.Contains(k, "fsm.deadline=level:") {
			t.Errorf("lag series %s", k)
		}
		total += v
	}
	if total != int64(n) {
		t.Errorf("lag recorded %d times for %d deadlines", total, n)
	}
}
