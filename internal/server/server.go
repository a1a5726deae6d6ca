// Package server owns the HTTP surface of mockgateway: the one routes file (which also chooses
// each request's dialect, internal/dialect), the handler makers, the one error writer, the one
// stream loop, and the limits and drain state that guard them. It builds an http.Handler from
// dependencies that cmd/mockgateway's run constructs and passes in; it holds no global state.
package server

import (
	"context"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/mux"
	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"mockgateway/internal/catalog"
	"mockgateway/internal/config"
	"mockgateway/internal/fixtures"
	"mockgateway/internal/journal"
	"mockgateway/internal/seal"
	"mockgateway/internal/state"
	"mockgateway/observability"
)

// Deps is everything the handlers need.
type Deps struct {
	Config     config.Config
	Catalog    *catalog.Catalog
	Logger     *slog.Logger
	Tracer     trace.Tracer
	Propagator propagation.TextMapPropagator
	Metrics    *observability.Metrics    // nil: metrics off (New puts a no-op set in its place)
	Spans      *observability.SpanBuffer // nil: /debug/traces answers 404
	Drain      *Drain
	// State is the runtime state (internal/state), built in run: in this process
	// (state.Memory: the file and runtime fixtures, the attempt counts, the journal) or shared
	// by the replicas (--state-store, state.Redis).
	State state.Store
	// Sealer seals what the dialects give a client to send back (reasoning items, thinking
	// blocks) and opens what comes back.
	Sealer  *seal.Sealer
	Version string
	Release string
	Started time.Time

	loads map[string]*loadGate // the models' simulated capacities, built by New
}

// New builds the router and wraps it in the middleware chain.
func New(d Deps) http.Handler {
	d, metricsOn := d.withDefaults()
	ds := newDialects(d.Sealer)
	r := newRouter(d, ds, metricsOn)
	return observability.Chain(newFrontGuard(d.Config, newDispatch(r, ds.shared)), observability.ChainConfig{
		Logger:             d.Logger,
		Tracer:             d.Tracer,
		Propagator:         d.Propagator,
		Metrics:            d.Metrics,
		WriteInternalError: writeInternalError,
		WriteTimeout:       d.Config.WriteTimeout,
		Draining:           d.Drain.Draining,
		UntracedPaths:      untracedPaths(d.Config.TraceProbes),
		Handling:           &d.Drain.handling,
	})
}

// withDefaults fills in what New builds when the caller leaves it out — the drain, and metrics
// that go nowhere — and reports whether metrics are on. The state and the sealer it never
// builds: run does.
func (d Deps) withDefaults() (Deps, bool) {
	if d.Drain == nil {
		d.Drain = NewDrain()
	}
	metricsOn := d.Metrics != nil
	if !metricsOn {
		d.Metrics = observability.NewNoopMetrics() // so that no handler checks for nil
	}
	d.loads = newLoadGates(d.Catalog, d.Metrics)
	return d, metricsOn
}

// newRouter is the router with every route of addRoutes.
func newRouter(d Deps, ds *dialects, metricsOn bool) *mux.Router {
	r := mux.NewRouter()
	// A cleaned-path redirect would turn a POST into a GET at the client; a plain 404 is honest.
	r.SkipClean(true)
	addRoutes(r, d, ds, metricsOn)
	return r
}

// untracedPaths are the routes that start no span: the health probe and the metrics scrape,
// unless --trace-probes.
func untracedPaths(traceProbes bool) []string {
	if traceProbes {
		return nil
	}
	return []string{"/health", "/metrics"}
}

// Drain is the shutdown state shared by run and the handlers: first the service stops taking
// new work (health says draining, /v1 answers 503, every response carries Connection: close so
// that clients leave their keep-alive connections), then, after the drain deadline, open
// streams are told to end with a shutting_down error frame.
//
// It also counts the requests being handled (the chain's Handling), hijacked ones included:
// http.Server's Shutdown forgets a connection once it is hijacked — as a simulated stream cut
// does — though its handler still has its access line and telemetry to write, so run waits for
// the count (Wait) before it closes the log.
type Drain struct {
	draining  atomic.Bool
	abort     chan struct{}
	abortOnce sync.Once
	handling  atomic.Int64
}

// NewDrain returns a Drain in the serving state.
func NewDrain() *Drain { return &Drain{abort: make(chan struct{})} }

// Begin starts draining.
func (d *Drain) Begin() { d.draining.Store(true) }

// Draining reports whether shutdown has begun.
func (d *Drain) Draining() bool { return d.draining.Load() }

// AbortStreams tells every open stream to end now.
func (d *Drain) AbortStreams() { d.abortOnce.Do(func() { close(d.abort) }) }

// Aborted is closed when open streams must end.
func (d *Drain) Aborted() <-chan struct{} { return d.abort }

// Handling is how many requests are being handled now.
func (d *Drain) Handling() int64 { return d.handling.Load() }

// Wait returns once no request is being handled, or with ctx's error when ctx ends first. Call
// it after the server has stopped accepting requests (it polls: shutdown is no hot path).
func (d *Drain) Wait(ctx context.Context) error {
	t := time.NewTicker(5 * time.Millisecond)
	defer t.Stop()
	for d.handling.Load() > 0 {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
	}
	return nil
}

// NewFixtureStore is the fixture store the configuration asks for, without file fixtures (run
// loads them, within FixtureLimits, and keeps them fresh).
func NewFixtureStore(cfg config.Config) *fixtures.Store {
	return fixtures.NewStore(fixtures.StoreConfig{MaxScopes: cfg.MaxScopes, MaxFixturesPerScope: cfg.MaxScopeFixtures, MaxBytes: cfg.MaxFixtureBytes,
		ScopeTTL: cfg.ScopeTTL, Strict: cfg.FixturesStrict, Regex: FixtureLimits(cfg)})
}

// FixtureLimits is what the configuration lets fixtures cost: their files' size, their regexes.
func FixtureLimits(cfg config.Config) fixtures.Limits {
	return fixtures.Limits{MaxFileBytes: cfg.MaxFixtureFileBytes, MaxRegexProgram: cfg.MaxRegexProgram, RegexBudget: int64(cfg.RegexBudget)}
}

// NewJournal is the journal the configuration asks for; nil when --journal-entries is 0.
func NewJournal(cfg config.Config) *journal.Journal {
	if cfg.JournalEntries <= 0 {
		return nil
	}
	return journal.New(journal.Config{EntriesPerScope: cfg.JournalEntries, MaxScopes: cfg.JournalScopes})
}

// NewSharedState is the shared state store --state-store names, over the file fixtures in
// files; nil when the flag is empty (the state stays in memory). Its background work ends with
// ctx. reg may be nil (no metrics).
func NewSharedState(ctx context.Context, cfg config.Config, files *fixtures.Store, reg prometheus.Registerer, logger *slog.Logger) (*state.Redis, error) {
	if cfg.StateStore == "" {
		return nil, nil
	}
	return state.NewRedis(ctx, state.RedisConfig{URL: cfg.StateStore, Fixtures: files,
		MaxScopes: cfg.MaxScopes, MaxFixturesPerScope: cfg.MaxScopeFixtures, MaxBytes: cfg.MaxFixtureBytes,
		ScopeTTL: cfg.ScopeTTL, TTL: cfg.StateTTL, AttemptKeys: cfg.AttemptKeys, AttemptTTL: cfg.AttemptTTL, QuotaKeys: cfg.QuotaKeys,
		JournalEntries: cfg.JournalEntries, JournalScopes: cfg.JournalScopes,
		MaxFlushReads: cfg.JournalFlushReads, Registerer: reg, Logger: logger})
}

// NewSealer is the sealer of --seal-key, or of a random key when it is unset: it seals what the
// dialects give a client to send back (reasoning items, thinking blocks) and opens what returns.
func NewSealer(cfg config.Config) *seal.Sealer {
	if cfg.SealKey == "" {
		return seal.Random()
	}
	return seal.New(cfg.SealKey)
}
