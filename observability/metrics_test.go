package observability

import (
	"bufio"
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel/trace/noop"
)

// testChain is the chain over a router with /metrics (m's handler) and /slow, which holds its
// request until release is closed.
func testChain(m *Metrics, release <-chan struct{}) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) {
		RecordFrom(r.Context()).SetRoute("/slow")
		<-release
	})
	if m != nil {
		mux.Handle("/metrics", m.Handler())
	}
	return Chain(mux, ChainConfig{
		Logger:             slog.New(slog.DiscardHandler),
		Tracer:             noop.NewTracerProvider().Tracer(""),
		Propagator:         Propagator(),
		Metrics:            m,
		WriteInternalError: func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusInternalServerError) },
	})
}

// scrapeInFlight scrapes /metrics through the chain and returns the in-flight gauge it shows.
func scrapeInFlight(t *testing.T, h http.Handler) string {
	t.Helper()
	rr := httptest.NewRecorder()
	h.ServeHTTP(rr, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	sc := bufio.NewScanner(rr.Body)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "mockgateway_http_requests_in_flight "); ok {
			return v
		}
	}
	t.Fatalf("no in-flight gauge in the scrape:\n%s", rr.Body.String())
	return ""
}

// gaugeValue reads a gauge from the registry directly, outside any request.
func gaugeValue(t *testing.T, reg *prometheus.Registry, name string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == name {
			return mf.GetMetric()[0].GetGauge().GetValue()
		}
	}
	t.Fatalf("no %s", name)
	return 0
}

// TestScrapeDoesNotCountItself: the in-flight gauge a scrape reads counts the requests being
// served, not the scrape; and the scrape, having left the gauge early, does not take it down
// again as it ends.
func TestScrapeDoesNotCountItself(t *testing.T) {
	reg := prometheus.NewRegistry()
	m := NewMetrics(reg, []string{"mock-chat"}, []string{"mock-chat"}, BuildInfo{Version: "test"})
	release := make(chan struct{})
	h := testChain(m, release)

	if got := scrapeInFlight(t, h); got != "0" {
		t.Errorf("idle scrape sees %s requests in flight, want 0", got)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/slow", nil))
	}()
	for deadline := time.Now().Add(5 * time.Second); gaugeValue(t, reg, "mockgateway_http_requests_in_flight") != 1; {
		if time.Now().After(deadline) {
			t.Fatal("the slow request never counted as in flight")
		}
		time.Sleep(time.Millisecond)
	}
	if got := scrapeInFlight(t, h); got != "1" {
		t.Errorf("scrape during one slow request sees %s in flight, want 1", got)
	}
	close(release)
	<-done
	if got := gaugeValue(t, reg, "mockgateway_http_requests_in_flight"); got != 0 {
		t.Errorf("in flight after everything ended = %v, want 0", got)
	}
	// The Handler outside the chain (no Record of its own) leaves the gauge alone.
	rr := httptest.NewRecorder()
	m.Handler().ServeHTTP(rr, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	if got := gaugeValue(t, reg, "mockgateway_http_requests_in_flight"); got != 0 {
		t.Errorf("in flight after a scrape outside the chain = %v, want 0", got)
	}
}

// TestNoopMetrics: without metrics — a nil Metrics in the chain, in StartStream and as the
// receiver of the Observe methods, or the no-op value itself — every call works and records
// nothing anywhere.
func TestNoopMetrics(t *testing.T) {
	release := make(chan struct{})
	close(release)
	h := testChain(nil, release)
	rr := httptest.NewRecorder()
	h.ServeHTTP(rr, httptest.NewRequest(http.MethodGet, "/slow", nil))
	if rr.Code != http.StatusOK {
		t.Errorf("status %d through a chain without metrics", rr.Code)
	}

	span := noop.Span{}
	for _, m := range []*Metrics{NewNoopMetrics()} {
		for _, ctx := range []context.Context{context.Background(), &request{parent: context.Background(), rec: Record{metrics: NewNoopMetrics()}}} {
			m.ObserveFault(ctx, "mock-chat", "server_error")
			m.ObserveRetries(ctx, "mock-chat", "server_error", 2)
			m.ObserveFallback(ctx, "mock-chat", "mock-echo")
			s := StartStreamTelemetry(ctx, m, span, "mock-chat", time.Now())
			s.Chunk()
			s.Chunk()
			if !s.End(OutcomeCompleted) || s.End(OutcomeAborted) || s.Chunks() != 2 {
				t.Error("the stream lifecycle does not count as it does with metrics")
			}
		}
	}

	noopM := NewNoopMetrics()
	if noopM.ModelLabel("mock-chat") != ModelOther {
		t.Error("the no-op metrics know a model")
	}
	rr = httptest.NewRecorder()
	noopM.Handler().ServeHTTP(rr, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	if rr.Code != http.StatusOK || strings.Contains(rr.Body.String(), "mockgateway_") {
		t.Errorf("no-op /metrics: %d %q", rr.Code, rr.Body.String())
	}
	mfs, err := noopM.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if strings.HasPrefix(mf.GetName(), "mockgateway_") {
			t.Errorf("the no-op registry holds %s", mf.GetName())
		}
	}
}

// BenchmarkObserveRequest is what a chat request observes into the metrics as it ends, from
// every processor at once: its series are found without a lock (children).
func BenchmarkObserveRequest(b *testing.B) {
	m := NewMetrics(prometheus.NewRegistry(), []string{"mock-chat"}, []string{"mock-chat"}, BuildInfo{})
	rec := &Record{Start: time.Now(), Method: "POST", Route: "/v1/chat/completions", Status: 200, Chat: true,
		Model: "mock-chat", FinishReason: "stop", PromptTokens: 9, CompletionTokens: 16, metrics: m}
	ctx := &request{parent: context.Background(), rec: *rec}
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			m.observeRequest(ctx, &ctx.rec, rec.Start.Add(time.Millisecond))
		}
	})
}
