package observability

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// The observations: what the chain, the stream lifecycle and the simulation report to the
// metric set. Each works the same on the no-op set, whose instruments discard.

// enter counts the request as handled (in handling, when the chain has a count) and in flight,
// until leave. One call and one deferred call in the chain, rather than a wrapper: every frame
// on the way to a stream's pause stays on a parked stream's stack (TestParkedStreamStack).
func (r *Record) enter(handling *atomic.Int64) {
	if handling != nil {
		handling.Add(1)
		r.handling = handling
	}
	r.enterInFlight()
}

// leave ends what enter began, once the access line is written.
func (r *Record) leave() {
	r.leaveInFlight()
	if r.handling != nil {
		r.handling.Add(-1)
	}
}

// enterInFlight counts the request in its Metrics' in-flight gauge, until leaveInFlight.
func (r *Record) enterInFlight() {
	r.metrics.inFlight.Inc()
	r.inFlight = true
}

// leaveInFlight takes the request out of the in-flight gauge: when it ends, or, for a scrape,
// as it starts gathering (Metrics.Handler). Only the first call counts.
func (r *Record) leaveInFlight() {
	if r.inFlight {
		r.inFlight = false
		r.metrics.inFlight.Dec()
	}
}

// observeRequest counts the request and observes its duration, with the trace id as exemplar.
func (m *Metrics) observeRequest(ctx context.Context, rec *Record, end time.Time) {
	now := end.UnixNano()
	addWithExemplar(ctx, now, &m.gates.requests, m.requests.get(requestLabels{rec.Route, rec.Method, rec.Status, rec.ErrorLabel()}), 1)
	observeWithExemplar(ctx, now, &m.gates.duration, m.duration.get(durationLabels{rec.Route, rec.Method, rec.Status}), end.Sub(rec.Start).Seconds())
	if rec.Chat {
		m.observeChat(ctx, rec, now)
	}
}

// observeChat counts one finished chat completion request and its tokens.
func (m *Metrics) observeChat(ctx context.Context, rec *Record, now int64) {
	model := m.ModelLabel(rec.Model)
	finish := rec.FinishReason
	if finish == "" {
		finish = "none"
	}
	addWithExemplar(ctx, now, &m.gates.chats, m.chats.get(chatLabels{model, rec.Stream, finish, rec.ErrorLabel()}), 1)
	if rec.PromptTokens > 0 {
		addWithExemplar(ctx, now, &m.gates.tokens, m.tokens.get([2]string{model, "input"}), float64(rec.PromptTokens))
	}
	if rec.CompletionTokens > 0 {
		addWithExemplar(ctx, now, &m.gates.tokens, m.tokens.get([2]string{model, "output"}), float64(rec.CompletionTokens))
	}
	if rec.ReasoningTokens > 0 { // also counted in output, as usage counts them
		addWithExemplar(ctx, now, &m.gates.tokens, m.tokens.get([2]string{model, "reasoning"}), float64(rec.ReasoningTokens))
	}
}

// streamStarted counts a stream that opened; model is already a label (ModelLabel).
func (m *Metrics) streamStarted(model string) {
	m.streamsActive.Inc()
	m.streamEvents.get([2]string{model, "started"}).Add(1)
}

// streamFirstChunk counts a stream's first chunk and observes the time it took from start.
func (m *Metrics) streamFirstChunk(ctx context.Context, model string, start, now time.Time) {
	m.streamEvents.get([2]string{model, "first_chunk"}).Add(1)
	observeWithExemplar(ctx, now.UnixNano(), &m.gates.ttft, m.ttft.get(model), now.Sub(start).Seconds())
}

// streamEnded counts a stream's terminal outcome and observes its chunks and duration.
func (m *Metrics) streamEnded(ctx context.Context, model, outcome string, chunks int, start, now time.Time) {
	m.streamsActive.Dec()
	m.streamEvents.get([2]string{model, outcome}).Add(1)
	series := [2]string{model, outcome}
	observeWithExemplar(ctx, now.UnixNano(), &m.gates.chunks, m.streamChunks.get(series), float64(chunks))
	observeWithExemplar(ctx, now.UnixNano(), &m.gates.streamDuration, m.streamDuration.get(series), now.Sub(start).Seconds())
}

// ObserveQuotaRefusal counts one request a simulated quota refused, by the limit it hit (a
// closed set: internal/quota's kinds).
func (m *Metrics) ObserveQuotaRefusal(model, limit string) {
	m.quotaRefusals.get([2]string{m.ModelLabel(model), limit}).Add(1)
}

// ModelLoad are the gauges of a model's simulated capacity: the requests it serves and those
// that wait. The handler holds them for the model, found once.
func (m *Metrics) ModelLoad(model string) (running, queued interface {
	Inc()
	Dec()
}) {
	id := m.ModelLabel(model)
	return m.modelRunning.get(id), m.modelQueued.get(id)
}

// ObserveFault counts one simulated fault.
func (m *Metrics) ObserveFault(ctx context.Context, model, fault string) {
	addWithExemplar(ctx, time.Now().UnixNano(), &m.gates.faults, m.faults.get([2]string{m.ModelLabel(model), fault}), 1)
}

// ObserveRetries counts the retries a simulated gateway policy would make.
func (m *Metrics) ObserveRetries(ctx context.Context, model, fault string, n int) {
	if n <= 0 {
		return
	}
	addWithExemplar(ctx, time.Now().UnixNano(), &m.gates.faults, m.retries.get([2]string{m.ModelLabel(model), fault}), float64(n))
}

// ObserveFallback counts one step of a simulated fallback chain.
func (m *Metrics) ObserveFallback(ctx context.Context, model, target string) {
	addWithExemplar(ctx, time.Now().UnixNano(), &m.gates.faults, m.fallbacks.get([2]string{m.ModelLabel(model), m.ModelLabel(target)}), 1)
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

// ObserveFixture counts a chat request answered by a fixture. label is a file fixture's name or
// "runtime": never a name a client chose, so the label set stays as bounded as the files.
func (m *Metrics) ObserveFixture(label string) { m.fixtures.get(label).Add(1) }

// ObserveFixtureReload counts a reload of the fixture files: "ok", or "error" (the last good
// set stays).
func (m *Metrics) ObserveFixtureReload(result string) { m.reloads.get(result).Add(1) }

// WatchFixtureScopes exposes the number of fixture scopes as the gauge
// mockgateway_fixture_scopes, read from count at each scrape (the scopes are the fixture
// store's, bounded by --max-scopes).
func (m *Metrics) WatchFixtureScopes(count func() int) {
	m.registry.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "mockgateway_fixture_scopes",
		Help: "Scopes holding runtime fixtures or reply counters (x-mock-scope), at most --max-scopes.",
	}, func() float64 { return float64(count()) }))
}
