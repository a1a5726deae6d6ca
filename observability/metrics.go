package observability

import (
	"context"
	"net/http"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"go.opentelemetry.io/otel/trace"
)

// ModelOther is the model label of any id outside the catalog: clients choose model names, so
// an unbounded label would let one client create unbounded series.
const ModelOther = "other"

// Metrics is the service's metric set on its own registry (never the default one).
type Metrics struct {
	registry *prometheus.Registry
	models   map[string]struct{}

	requests       *prometheus.CounterVec
	duration       *prometheus.HistogramVec
	inFlight       prometheus.Gauge
	chats          *prometheus.CounterVec
	tokens         *prometheus.CounterVec
	streamsActive  prometheus.Gauge
	streamEvents   *prometheus.CounterVec
	streamChunks   *prometheus.HistogramVec
	ttft           *prometheus.HistogramVec
	streamDuration *prometheus.HistogramVec
	faults         *prometheus.CounterVec
	retries        *prometheus.CounterVec
	fallbacks      *prometheus.CounterVec

	// The children every request touches, memoized by label values (see children).
	requestsBy children[requestLabels, prometheus.Counter]
	durationBy children[durationLabels, prometheus.Observer]
	chatsBy    children[chatLabels, prometheus.Counter]
	tokensBy   children[[2]string, prometheus.Counter]

	// One gate per metric family: see exemplarGate.
	gates struct {
		requests, duration, chats, tokens, ttft, chunks, streamDuration, faults exemplarGate
	}
}

// BuildInfo labels the mockgateway_build_info gauge.
type BuildInfo struct {
	Version string
	Release string
	// FaultKinds are the simulated fault kinds, for the fault series created up front.
	FaultKinds []string
}

// nativeHistogram adds a native (sparse) histogram to classic buckets: Prometheus v3 scrapes
// both when asked, and older scrapers still get the classic buckets.
func nativeHistogram(o prometheus.HistogramOpts) prometheus.HistogramOpts {
	o.NativeHistogramBucketFactor = 1.1
	o.NativeHistogramMaxBucketNumber = 160
	o.NativeHistogramMinResetDuration = 0
	return o
}

// NewMetrics registers the required metrics, the build info, and the Go and process collectors
// on reg. modelIDs is the closed set of model label values (the catalog's ids); executable, the
// mock models among them, whose series are created up front.
func NewMetrics(reg *prometheus.Registry, modelIDs, executable []string, info BuildInfo) *Metrics {
	m := &Metrics{registry: reg, models: make(map[string]struct{}, len(modelIDs))}
	for _, id := range modelIDs {
		m.models[id] = struct{}{}
	}
	m.requests = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "mockgateway_http_requests_total",
		Help: "HTTP requests served, by route template, method, status code and normalized error code.",
	}, []string{"route", "method", "status_code", "error_code"})
	m.duration = prometheus.NewHistogramVec(nativeHistogram(prometheus.HistogramOpts{
		Name:    "mockgateway_http_request_duration_seconds",
		Help:    "Time from request start to the end of the response (for streams, the end of the stream).",
		Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 300},
	}), []string{"route", "method", "status_code"})
	m.inFlight = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "mockgateway_http_requests_in_flight",
		Help: "Requests being served now.",
	})
	m.chats = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "mockgateway_chat_completions_total",
		Help: "Chat completion requests, by model, streaming, finish reason of the first choice, and error code.",
	}, []string{"model", "stream", "finish_reason", "error_code"})
	m.tokens = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "mockgateway_tokens_total",
		Help: "Estimated tokens, by model and type (input: prompt, output: completion).",
	}, []string{"model", "type"})
	m.streamsActive = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "mockgateway_streams_active",
		Help: "Streams open now.",
	})
	m.streamEvents = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "mockgateway_stream_events_total",
		Help: "Stream lifecycle events: started, first_chunk, and one terminal outcome per stream.",
	}, []string{"model", "event"})
	m.streamChunks = prometheus.NewHistogramVec(nativeHistogram(prometheus.HistogramOpts{
		Name:    "mockgateway_stream_chunks",
		Help:    "Chunks (data frames other than [DONE] and error frames) sent per stream, by terminal outcome.",
		Buckets: prometheus.ExponentialBuckets(1, 2, 14),
	}), []string{"model", "outcome"})
	m.ttft = prometheus.NewHistogramVec(nativeHistogram(prometheus.HistogramOpts{
		Name:    "mockgateway_stream_time_to_first_chunk_seconds",
		Help:    "Time from request start to the first chunk of a stream.",
		Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10},
	}), []string{"model"})
	m.streamDuration = prometheus.NewHistogramVec(nativeHistogram(prometheus.HistogramOpts{
		Name:    "mockgateway_stream_duration_seconds",
		Help:    "Time from request start to the stream's terminal outcome.",
		Buckets: []float64{.001, .005, .01, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 120, 300},
	}), []string{"model", "outcome"})
	m.faults = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "mockgateway_simulated_faults_total",
		Help: "Simulated faults served, by model and fault kind. Nothing real failed.",
	}, []string{"model", "fault"})
	m.retries = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "mockgateway_simulated_retries_total",
		Help: "Retries the simulated gateway policy would make, by requested model and fault. None is executed.",
	}, []string{"model", "fault"})
	m.fallbacks = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "mockgateway_simulated_fallbacks_total",
		Help: "Fallback steps of the simulated gateway policy, by requested model and target (external targets are skipped, never called).",
	}, []string{"model", "target"})
	buildInfo := prometheus.NewGauge(prometheus.GaugeOpts{
		Name:        "mockgateway_build_info",
		Help:        "Always 1; the labels say which build is running.",
		ConstLabels: prometheus.Labels{"version": info.Version, "release": info.Release, "go_version": runtime.Version()},
	})
	buildInfo.Set(1)

	reg.MustRegister(m.requests, m.duration, m.inFlight, m.chats, m.tokens, m.streamsActive,
		m.streamEvents, m.streamChunks, m.ttft, m.streamDuration, m.faults, m.retries, m.fallbacks, buildInfo,
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))

	m.requestsBy.make = func(k requestLabels) prometheus.Counter {
		return m.requests.WithLabelValues(k.route, k.method, strconv.Itoa(k.status), k.code)
	}
	m.durationBy.make = func(k durationLabels) prometheus.Observer {
		return m.duration.WithLabelValues(k.route, k.method, strconv.Itoa(k.status))
	}
	m.chatsBy.make = func(k chatLabels) prometheus.Counter {
		return m.chats.WithLabelValues(k.model, strconv.FormatBool(k.stream), k.finish, k.code)
	}
	m.tokensBy.make = func(k [2]string) prometheus.Counter { return m.tokens.WithLabelValues(k[0], k[1]) }

	// Pre-create the executable models' lifecycle and fault series, so that rate() has a zero
	// to start from and dashboards show every model before its first stream or fault.
	// Metadata-only models never execute, so they get none.
	for _, id := range executable {
		for _, ev := range []string{"started", "first_chunk", OutcomeCompleted, OutcomeClientDisconnected, OutcomeAborted, OutcomeTimedOut} {
			m.streamEvents.WithLabelValues(id, ev)
		}
		for _, f := range info.FaultKinds {
			m.faults.WithLabelValues(id, f)
		}
	}
	return m
}

// Registry is the registry the metrics live on.
func (m *Metrics) Registry() *prometheus.Registry { return m.registry }

// Handler serves the registry, in OpenMetrics when the scraper negotiates it: exemplars only
// travel in that format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.registry, promhttp.HandlerOpts{
		EnableOpenMetrics: true,
		Registry:          m.registry,
	})
}

// ModelLabel bounds a model id to the catalog's ids or "other".
func (m *Metrics) ModelLabel(id string) string {
	if _, ok := m.models[id]; ok {
		return id
	}
	return ModelOther
}

// observeChat counts one finished chat completion request and its tokens.
func (m *Metrics) observeChat(ctx context.Context, rec *Record, now int64) {
	if m == nil {
		return
	}
	model := m.ModelLabel(rec.Model)
	finish := rec.FinishReason
	if finish == "" {
		finish = "none"
	}
	addWithExemplar(ctx, now, &m.gates.chats, m.chatsBy.get(chatLabels{model, rec.Stream, finish, rec.ErrorLabel()}), 1)
	if rec.PromptTokens > 0 {
		addWithExemplar(ctx, now, &m.gates.tokens, m.tokensBy.get([2]string{model, "input"}), float64(rec.PromptTokens))
	}
	if rec.CompletionTokens > 0 {
		addWithExemplar(ctx, now, &m.gates.tokens, m.tokensBy.get([2]string{model, "output"}), float64(rec.CompletionTokens))
	}
}

// ObserveFault counts one simulated fault.
func (m *Metrics) ObserveFault(ctx context.Context, model, fault string) {
	if m == nil {
		return
	}
	addWithExemplar(ctx, time.Now().UnixNano(), &m.gates.faults, m.faults.WithLabelValues(m.ModelLabel(model), fault), 1)
}

// ObserveRetries counts the retries a simulated gateway policy would make.
func (m *Metrics) ObserveRetries(ctx context.Context, model, fault string, n int) {
	if m == nil || n <= 0 {
		return
	}
	addWithExemplar(ctx, time.Now().UnixNano(), &m.gates.faults, m.retries.WithLabelValues(m.ModelLabel(model), fault), float64(n))
}

// ObserveFallback counts one step of a simulated fallback chain.
func (m *Metrics) ObserveFallback(ctx context.Context, model, target string) {
	if m == nil {
		return
	}
	addWithExemplar(ctx, time.Now().UnixNano(), &m.gates.faults, m.fallbacks.WithLabelValues(m.ModelLabel(model), m.ModelLabel(target)), 1)
}

// exemplarLabels returns the trace id of a sampled span in ctx, or nil. Only sampled spans are
// exported, so an exemplar never points at a trace that no backend has.
func exemplarLabels(ctx context.Context) prometheus.Labels {
	rec, _ := ctx.Value(recordKey{}).(*Record)
	if rec != nil && rec.exemplarChecked {
		return rec.exemplar
	}
	var labels prometheus.Labels
	if sc := trace.SpanContextFromContext(ctx); sc.IsValid() && sc.IsSampled() {
		labels = prometheus.Labels{"trace_id": sc.TraceID().String()}
	}
	if rec != nil {
		rec.exemplar, rec.exemplarChecked = labels, true
	}
	return labels
}

// exemplarGate samples exemplars: a family takes at most one every exemplarInterval. Prometheus
// keeps only the latest exemplar of a series per scrape, and building one costs several
// allocations, so at light traffic every request leaves its trace id and under load a steady
// sample does, without making telemetry the request's largest cost.
type exemplarGate struct{ last atomic.Int64 }

const exemplarInterval = int64(100 * time.Millisecond)

// open takes the slot if the interval has passed since the last exemplar at now (unix ns). The
// common answer under load, "no", costs one atomic load.
func (g *exemplarGate) open(now int64) bool {
	last := g.last.Load()
	return now-last >= exemplarInterval && g.last.CompareAndSwap(last, now)
}

// exemplarFor returns the exemplar to attach at now, or nil: the gate is looked at before the
// trace id is, so most observations under load cost neither a context walk nor labels. now is
// passed in: a request's observations share one clock reading.
func exemplarFor(ctx context.Context, now int64, g *exemplarGate) prometheus.Labels {
	if now-g.last.Load() < exemplarInterval {
		return nil
	}
	if ex := exemplarLabels(ctx); ex != nil && g.open(now) {
		return ex
	}
	return nil
}

func addWithExemplar(ctx context.Context, now int64, g *exemplarGate, c prometheus.Counter, v float64) {
	if ex := exemplarFor(ctx, now, g); ex != nil {
		if ea, ok := c.(prometheus.ExemplarAdder); ok {
			ea.AddWithExemplar(v, ex)
			return
		}
	}
	c.Add(v)
}

func observeWithExemplar(ctx context.Context, now int64, g *exemplarGate, o prometheus.Observer, v float64) {
	if ex := exemplarFor(ctx, now, g); ex != nil {
		if eo, ok := o.(prometheus.ExemplarObserver); ok {
			eo.ObserveWithExemplar(v, ex)
			return
		}
	}
	o.Observe(v)
}

// children memoizes a vector's children by their label values. WithLabelValues hashes and
// checks every value and takes the vector's lock on each call, for each of the four or five
// series a request touches; the label values are closed sets (docs/telemetry.md), so each
// combination is made once and then found under a read lock.
type children[K comparable, M any] struct {
	mu   sync.RWMutex
	m    map[K]M
	make func(K) M
}

func (c *children[K, M]) get(k K) M {
	c.mu.RLock()
	v, ok := c.m[k]
	c.mu.RUnlock()
	if ok {
		return v
	}
	v = c.make(k)
	c.mu.Lock()
	if c.m == nil {
		c.m = make(map[K]M)
	}
	c.m[k] = v
	c.mu.Unlock()
	return v
}

type requestLabels struct {
	route, method string
	status        int
	code          string
}

type durationLabels struct {
	route, method string
	status        int
}

type chatLabels struct {
	model  string
	stream bool
	finish string
	code   string
}
