package observability

import (
	"maps"
	"net/http"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// ModelOther is the model label of any id outside the catalog: clients choose model names, so
// an unbounded label would let one client create unbounded series.
const ModelOther = "other"

// Metrics is the service's metric set on its own registry (never the default one), or the
// no-op set of NewNoopMetrics. Either way every method works, so nothing that holds a Metrics
// checks which it is: the no-op set's instruments are discard.
//
// The series are reached through memo tables (children) keyed by their label values: the
// vectors behind them are only needed to register and to create series.
type Metrics struct {
	registry *prometheus.Registry
	models   map[string]struct{}

	inFlight      gauge
	streamsActive gauge

	requests       children[requestLabels, counter]
	duration       children[durationLabels, prometheus.Observer]
	chats          children[chatLabels, counter]
	tokens         children[[2]string, counter]             // model, type
	streamEvents   children[[2]string, counter]             // model, event
	streamChunks   children[[2]string, prometheus.Observer] // model, outcome
	ttft           children[string, prometheus.Observer]    // model
	streamDuration children[[2]string, prometheus.Observer] // model, outcome
	faults         children[[2]string, counter]             // model, fault
	retries        children[[2]string, counter]             // model, fault
	fallbacks      children[[2]string, counter]             // model, target
	quotaRefusals  children[[2]string, counter]             // model, limit
	modelRunning   children[string, gauge]                  // model
	modelQueued    children[string, gauge]                  // model
	fixtures       children[string, counter]                // fixture (a file fixture's name, or "runtime")
	reloads        children[string, counter]                // result

	// One gate per metric family: see exemplarGate.
	gates struct {
		requests, duration, chats, tokens, ttft, chunks, streamDuration, faults exemplarGate
	}
}

// counter and gauge are what the observations need of prometheus.Counter and prometheus.Gauge,
// so that discard can stand in for them.
type counter interface{ Add(float64) }

type gauge interface {
	Inc()
	Dec()
}

// discard is every instrument of the no-op Metrics.
type discard struct{}

func (discard) Add(float64)     {}
func (discard) Inc()            {}
func (discard) Dec()            {}
func (discard) Observe(float64) {}

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
	requests := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "mockgateway_http_requests_total",
		Help: "HTTP requests served, by route template, method, status code and normalized error code.",
	}, []string{"route", "method", "status_code", "error_code"})
	duration := prometheus.NewHistogramVec(nativeHistogram(prometheus.HistogramOpts{
		Name:    "mockgateway_http_request_duration_seconds",
		Help:    "Time from request start to the end of the response (for streams, the end of the stream).",
		Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 300},
	}), []string{"route", "method", "status_code"})
	inFlight := prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "mockgateway_http_requests_in_flight",
		Help: "Requests being served now, not counting the scrape that reads it.",
	})
	chats := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "mockgateway_chat_completions_total",
		Help: "Chat completion requests, by model, streaming, finish reason of the first choice, and error code.",
	}, []string{"model", "stream", "finish_reason", "error_code"})
	tokens := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "mockgateway_tokens_total",
		Help: "Estimated tokens, by model and type (input: prompt, output: completion, reasoning: the part of output a reasoning model spent reasoning).",
	}, []string{"model", "type"})
	streamsActive := prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "mockgateway_streams_active",
		Help: "Streams open now.",
	})
	streamEvents := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "mockgateway_stream_events_total",
		Help: "Stream lifecycle events: started, first_chunk, and one terminal outcome per stream.",
	}, []string{"model", "event"})
	streamChunks := prometheus.NewHistogramVec(nativeHistogram(prometheus.HistogramOpts{
		Name:    "mockgateway_stream_chunks",
		Help:    "Chunks (data frames other than [DONE] and error frames) sent per stream, by terminal outcome.",
		Buckets: prometheus.ExponentialBuckets(1, 2, 14),
	}), []string{"model", "outcome"})
	ttft := prometheus.NewHistogramVec(nativeHistogram(prometheus.HistogramOpts{
		Name:    "mockgateway_stream_time_to_first_chunk_seconds",
		Help:    "Time from request start to the first chunk of a stream.",
		Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10},
	}), []string{"model"})
	streamDuration := prometheus.NewHistogramVec(nativeHistogram(prometheus.HistogramOpts{
		Name:    "mockgateway_stream_duration_seconds",
		Help:    "Time from request start to the stream's terminal outcome.",
		Buckets: []float64{.001, .005, .01, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 120, 300},
	}), []string{"model", "outcome"})
	faults := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "mockgateway_simulated_faults_total",
		Help: "Simulated faults served, by model and fault kind. Nothing real failed.",
	}, []string{"model", "fault"})
	retries := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "mockgateway_simulated_retries_total",
		Help: "Retries the simulated gateway policy would make, by requested model and fault. None is executed.",
	}, []string{"model", "fault"})
	fallbacks := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "mockgateway_simulated_fallbacks_total",
		Help: "Fallback steps of the simulated gateway policy, by requested model and target (external targets are skipped, never called).",
	}, []string{"model", "target"})
	quotaRefusals := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "mockgateway_quota_refusals_total",
		Help: "Requests a simulated quota refused, by model and the limit hit (requests, tokens, daily, input_tokens, output_tokens; overloaded: past its capacity and queue). Nothing real was limited.",
	}, []string{"model", "limit"})
	modelRunning := prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "mockgateway_model_running",
		Help: "Requests a model with a simulated capacity is serving, by model.",
	}, []string{"model"})
	modelQueued := prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "mockgateway_model_queued",
		Help: "Requests waiting for a model's simulated capacity, by model.",
	}, []string{"model"})
	fixtureMatches := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "mockgateway_fixture_matches_total",
		Help: "Chat requests answered by a fixture, by fixture: a file fixture's name, or runtime for fixtures added through /_mock/fixtures.",
	}, []string{"fixture"})
	fixtureReloads := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "mockgateway_fixture_reloads_total",
		Help: "Reloads of the fixture files after a change, by result (ok, or error: the last good set stays).",
	}, []string{"result"})
	buildInfo := prometheus.NewGauge(prometheus.GaugeOpts{
		Name:        "mockgateway_build_info",
		Help:        "Always 1; the labels say which build is running.",
		ConstLabels: prometheus.Labels{"version": info.Version, "release": info.Release, "go_version": runtime.Version()},
	})
	buildInfo.Set(1)

	reg.MustRegister(requests, duration, inFlight, chats, tokens, streamsActive,
		streamEvents, streamChunks, ttft, streamDuration, faults, retries, fallbacks, quotaRefusals, modelRunning, modelQueued, fixtureMatches, fixtureReloads, buildInfo,
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))

	m.inFlight, m.streamsActive = inFlight, streamsActive
	m.requests.make = func(k requestLabels) counter {
		return requests.WithLabelValues(k.route, k.method, strconv.Itoa(k.status), k.code)
	}
	m.duration.make = func(k durationLabels) prometheus.Observer {
		return duration.WithLabelValues(k.route, k.method, strconv.Itoa(k.status))
	}
	m.chats.make = func(k chatLabels) counter {
		return chats.WithLabelValues(k.model, strconv.FormatBool(k.stream), k.finish, k.code)
	}
	m.tokens.make = func(k [2]string) counter { return tokens.WithLabelValues(k[0], k[1]) }
	m.streamEvents.make = func(k [2]string) counter { return streamEvents.WithLabelValues(k[0], k[1]) }
	m.streamChunks.make = func(k [2]string) prometheus.Observer { return streamChunks.WithLabelValues(k[0], k[1]) }
	m.ttft.make = func(model string) prometheus.Observer { return ttft.WithLabelValues(model) }
	m.streamDuration.make = func(k [2]string) prometheus.Observer { return streamDuration.WithLabelValues(k[0], k[1]) }
	m.faults.make = func(k [2]string) counter { return faults.WithLabelValues(k[0], k[1]) }
	m.retries.make = func(k [2]string) counter { return retries.WithLabelValues(k[0], k[1]) }
	m.fallbacks.make = func(k [2]string) counter { return fallbacks.WithLabelValues(k[0], k[1]) }
	m.quotaRefusals.make = func(k [2]string) counter { return quotaRefusals.WithLabelValues(k[0], k[1]) }
	m.modelRunning.make = func(model string) gauge { return modelRunning.WithLabelValues(model) }
	m.modelQueued.make = func(model string) gauge { return modelQueued.WithLabelValues(model) }
	m.fixtures.make = func(name string) counter { return fixtureMatches.WithLabelValues(name) }
	m.reloads.make = func(result string) counter { return fixtureReloads.WithLabelValues(result) }
	m.reloads.get("ok")
	m.reloads.get("error")

	// Pre-create the executable models' lifecycle and fault series, so that rate() has a zero
	// to start from and dashboards show every model before its first stream or fault.
	// Metadata-only models never execute, so they get none.
	for _, id := range executable {
		for _, ev := range []string{"started", "first_chunk", OutcomeCompleted, OutcomeClientDisconnected, OutcomeAborted, OutcomeTimedOut} {
			m.streamEvents.get([2]string{id, ev})
		}
		for _, f := range info.FaultKinds {
			m.faults.get([2]string{id, f})
		}
	}
	return m
}

// NewNoopMetrics returns a Metrics that records nothing, for a chain or a stream without
// metrics: every instrument is discard, found without a map or a lock, so it costs an observer
// next to nothing. Its registry is empty, so Handler serves an empty exposition.
func NewNoopMetrics() *Metrics {
	m := &Metrics{registry: prometheus.NewRegistry(), inFlight: discard{}, streamsActive: discard{}}
	m.requests.fixed = discard{}
	m.duration.fixed = discard{}
	m.chats.fixed = discard{}
	m.tokens.fixed = discard{}
	m.streamEvents.fixed = discard{}
	m.streamChunks.fixed = discard{}
	m.ttft.fixed = discard{}
	m.streamDuration.fixed = discard{}
	m.faults.fixed = discard{}
	m.retries.fixed = discard{}
	m.fallbacks.fixed = discard{}
	m.quotaRefusals.fixed = discard{}
	m.modelRunning.fixed = discard{}
	m.modelQueued.fixed = discard{}
	m.fixtures.fixed = discard{}
	m.reloads.fixed = discard{}
	return m
}

// Registry is the registry the metrics live on.
func (m *Metrics) Registry() *prometheus.Registry { return m.registry }

// Handler serves the registry, in OpenMetrics when the scraper negotiates it: exemplars only
// travel in that format.
//
// A scrape served through the chain leaves the in-flight gauge before it gathers: it reports the
// requests being served, not itself (nor, while it writes, to a concurrent scrape).
func (m *Metrics) Handler() http.Handler {
	h := promhttp.HandlerFor(m.registry, promhttp.HandlerOpts{
		EnableOpenMetrics: true,
		Registry:          m.registry,
	})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if rec, ok := r.Context().Value(recordKey{}).(*Record); ok && rec.metrics == m {
			rec.leaveInFlight()
		}
		h.ServeHTTP(w, r)
	})
}

// ModelLabel bounds a model id to the catalog's ids or "other".
func (m *Metrics) ModelLabel(id string) string {
	if _, ok := m.models[id]; ok {
		return id
	}
	return ModelOther
}

// children memoizes a vector's children by their label values. WithLabelValues hashes and
// checks every value and takes the vector's lock on each call, for each of the four or five
// series a request touches; the label values are closed sets (docs/telemetry.md), so each
// combination is made once and then found in a map that is never written again: a new
// combination replaces the map with a copy. Lookups take no lock — a read lock's reader count
// is one cache line that every core wrote on every lookup (BenchmarkObserveRequest).
//
// A table without make — the no-op Metrics' — returns fixed for every key.
type children[K comparable, M any] struct {
	m     atomic.Pointer[map[K]M] // read-only once stored
	mu    sync.Mutex              // held to make a child and store the map that holds it
	make  func(K) M
	fixed M
}

func (c *children[K, M]) get(k K) M {
	if c.make == nil {
		return c.fixed
	}
	if m := c.m.Load(); m != nil {
		if v, ok := (*m)[k]; ok {
			return v
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	var old map[K]M
	if p := c.m.Load(); p != nil {
		old = *p
	}
	if v, ok := old[k]; ok { // made while this call waited for the lock
		return v
	}
	v := c.make(k)
	m := make(map[K]M, len(old)+1)
	maps.Copy(m, old)
	m[k] = v
	c.m.Store(&m)
	return v
}
