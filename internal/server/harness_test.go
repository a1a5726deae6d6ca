package server

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"mockgateway/internal/catalog"
	"mockgateway/internal/config"
	"mockgateway/internal/quota"
	"mockgateway/internal/simulation"
	"mockgateway/internal/state"
	"mockgateway/internal/testutil"
	"mockgateway/observability"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// syncBuffer collects log output written from request goroutines.
type syncBuffer struct{ testutil.SyncBuffer }

// lines returns the JSON log records.
func (b *syncBuffer) records(t *testing.T) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(b.String()), "\n") {
		if l == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("log line is not JSON: %q", l)
		}
		out = append(out, m)
	}
	return out
}

// harness is the real handler with every signal captured: logs in a buffer, spans in an
// in-memory exporter behind the same redacting exporter the service uses, metrics in a fresh
// registry.
type harness struct {
	t       *testing.T
	handler http.Handler
	logs    *syncBuffer
	spans   *tracetest.InMemoryExporter
	tp      *sdktrace.TracerProvider
	metrics *observability.Metrics
	drain   *Drain
	deps    Deps
}

func testConfig() config.Config {
	cfg, err := config.Parse(nil, func(string) string { return "" }, io.Discard)
	if err != nil {
		panic(err)
	}
	// httptest.NewRequest's Host: a DNS name, answered only when allowed (front_test.go holds
	// the refusal).
	cfg.AllowedHosts = []string{"example.com"}
	return cfg
}

func newHarness(t *testing.T, opts ...func(*Deps)) *harness {
	t.Helper()
	logs := &syncBuffer{}
	logger, err := observability.NewLogger(logs, "debug", "json")
	if err != nil {
		t.Fatal(err)
	}
	spans := tracetest.NewInMemoryExporter()
	buffer := observability.NewSpanBuffer(256)
	// As NewTracing wires them: the buffer is its own processor (its allowlist is what the
	// canary test checks at /debug/traces), exported spans pass the redacting exporter.
	tp := sdktrace.NewTracerProvider(
		sdktrace.WithSampler(sdktrace.AlwaysSample()),
		sdktrace.WithSpanProcessor(buffer),
		sdktrace.WithSyncer(observability.NewRedactingExporter(spans)),
	)
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	cat := catalog.Builtin()
	d := Deps{
		Config:     testConfig(),
		Catalog:    cat,
		Logger:     logger,
		Tracer:     tp.Tracer("test"),
		Propagator: observability.Propagator(),
		Drain:      NewDrain(),
		Version:    "4.2.0",
		Release:    "Gateway Foundation",
		Started:    time.Now(),
		Spans:      buffer,
	}
	for _, o := range opts {
		o(&d)
	}
	if d.Metrics == nil {
		d.Metrics = observability.NewMetrics(prometheus.NewRegistry(), d.Catalog.IDs(), d.Catalog.ExecutableIDs(), observability.BuildInfo{Version: "4.2.0", Release: "Gateway Foundation", FaultKinds: simulation.Kinds()})
	}
	d = withState(d)
	return &harness{t: t, handler: New(d), logs: logs, spans: spans, tp: tp, metrics: d.Metrics, drain: d.Drain, deps: d}
}

// memoryState is the in-memory state run builds, with a journal when journaled.
func memoryState(cfg config.Config, journaled bool) *state.Memory {
	m := &state.Memory{Fixtures: NewFixtureStore(cfg), Attempts: simulation.NewAttemptCounter(cfg.AttemptKeys, cfg.AttemptTTL, time.Now), Quotas: quota.NewBuckets(cfg.QuotaKeys, time.Now)}
	if journaled {
		m.Calls = NewJournal(cfg)
	}
	return m
}

// sharedHarness is a harness on the shared state store (--state-store) at url, which journals.
func sharedHarness(t *testing.T, url string, opts ...func(*Deps)) *harness {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var wait func()
	h := newHarness(t, append(opts, func(d *Deps) {
		d.Config.StateStore = url
		s, err := NewSharedState(ctx, d.Config, NewFixtureStore(d.Config), nil, d.Logger)
		if err != nil {
			t.Fatal(err)
		}
		d.State, wait = s, s.Wait
	})...)
	t.Cleanup(func() { cancel(); wait() })
	return h
}

// withState gives d what run builds and New does not: the state (in memory, without a journal
// unless the test asks: journaled) and the sealer.
func withState(d Deps) Deps {
	if d.State == nil {
		d.State = memoryState(d.Config, false)
	}
	if d.Sealer == nil {
		d.Sealer = NewSealer(d.Config)
	}
	return d
}

// do sends one request through the whole chain.
func (h *harness) do(method, path, body string, header ...string) *httptest.ResponseRecorder {
	h.t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req := httptest.NewRequest(method, path, rd)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(header); i += 2 {
		if header[i] == "Host" {
			req.Host = header[i+1]
			continue
		}
		if header[i+1] == "" {
			req.Header.Del(header[i])
			continue
		}
		req.Header.Set(header[i], header[i+1])
	}
	rr := httptest.NewRecorder()
	h.handler.ServeHTTP(rr, req)
	return rr
}

// apiError decodes an error body, checking that all four keys are there.
type apiError struct {
	Message string  `json:"message"`
	Type    string  `json:"type"`
	Param   *string `json:"param"`
	Code    string  `json:"code"`
}

func decodeError(t *testing.T, body []byte) apiError {
	t.Helper()
	var raw struct {
		Error map[string]json.RawMessage `json:"error"`
	}
	if err := json.Unmarshal(body, &raw); err != nil {
		t.Fatalf("error body is not JSON: %q", body)
	}
	for _, k := range []string{"message", "type", "param", "code"} {
		if _, ok := raw.Error[k]; !ok {
			t.Fatalf("error body lacks %q: %s", k, body)
		}
	}
	var e struct {
		Error apiError `json:"error"`
	}
	_ = json.Unmarshal(body, &e)
	return e.Error
}

// golden compares got with testdata/name, or rewrites it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(want, got) {
		t.Errorf("%s differs from the golden file (go test -update rewrites it)\n--- want\n%s\n--- got\n%s", name, want, got)
	}
}

// metricValue sums the samples of a counter or gauge (or a histogram's count) whose labels
// include the given ones.
func metricValue(t *testing.T, m *observability.Metrics, name string, labels map[string]string) float64 {
	t.Helper()
	mfs, err := m.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	sum := 0.0
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
	metrics:
		for _, mt := range mf.GetMetric() {
			for k, v := range labels {
				found := false
				for _, lp := range mt.GetLabel() {
					if lp.GetName() == k && lp.GetValue() == v {
						found = true
					}
				}
				if !found {
					continue metrics
				}
			}
			switch {
			case mt.Counter != nil:
				sum += mt.GetCounter().GetValue()
			case mt.Gauge != nil:
				sum += mt.GetGauge().GetValue()
			case mt.Histogram != nil:
				sum += float64(mt.GetHistogram().GetSampleCount())
			}
		}
	}
	return sum
}
