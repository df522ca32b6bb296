package otel_test

import (
	"context"
	"io"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/fsmgen/fsmgen/fsmrt"
	"github.com/fsmgen/fsmgen/generated/review"
	fsmotel "github.com/fsmgen/fsmgen/otel"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	promexporter "go.opentelemetry.io/otel/exporters/prometheus"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/trace/noop"
)

// TestPrometheusScrape: the metrics through the real Prometheus exporter, scraped over
// HTTP as a Prometheus server scrapes them: transitions and refusals by the spec's names,
// and the store's gauges (instances by state, outbox depth).
func TestPrometheusScrape(t *testing.T) {
	reg := prometheus.NewRegistry()
	exporter, err := promexporter.New(promexporter.WithRegisterer(reg))
	if err != nil {
		t.Fatal(err)
	}
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(exporter))
	obs, err := fsmotel.New(noop.NewTracerProvider(), mp)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	store := fsmrt.NewMemoryStore()
	for _, id := range []string{"T-1", "T-2", "T-3"} {
		m := review.NewTask()
		m.ID = id
		m.SetStore(store)
		fsmrt.SetObserver(&m.Machine, obs)
		if _, err := m.Fire(ctx, review.EventInProgress); err != nil {
			t.Fatal(err)
		}
		if id == "T-3" {
			m.Fire(ctx, review.EventPendingReview)
			m.Fire(ctx, review.EventCompleted) // refused
		}
	}
	if err := fsmotel.ObserveStore(mp, store, "review.Task", fsmotel.Names(review.States())); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	defer srv.Close()
	resp, err := srv.Client().Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	text := string(body)
	for _, want := range []string{
		`fsm_transitions_total{fsm_event="in_progress",fsm_from="not_started",fsm_machine="review.Task",fsm_to="in_progress",otel_scope_name="github.com/fsmgen/fsmgen/otel"`,
		`fsm_refusals_total{fsm_event="completed",fsm_from="pending_review",fsm_machine="review.Task",fsm_refusal="invalid"`,
		`fsm_instances{fsm_machine="review.Task",fsm_state="in_progress"`,
		`fsm_outbox_depth{fsm_machine="review.Task"`,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("no %s in the scrape:\n%s", want, text)
		}
	}
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(line, `fsm_instances{fsm_machine="review.Task",fsm_state="in_progress"`) && !strings.HasSuffix(line, " 2") {
			t.Errorf("in_progress: %s, want 2", line)
		}
	}
}
